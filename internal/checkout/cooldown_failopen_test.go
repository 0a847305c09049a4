package checkout_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/testkit"
)

// failCooldownReads makes the cooldown read (PTTL) fail while it is on;
// every other command reaches the real Redis.
type failCooldownReads struct{ on *atomic.Bool }

var errInjected = errors.New("injected: cooldown read failed")

func (f failCooldownReads) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f failCooldownReads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (f failCooldownReads) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if f.on.Load() && cmd.Name() == "pttl" {
			cmd.SetErr(errInjected)
			return errInjected
		}
		return next(ctx, cmd)
	}
}

// The cooldown is checked by the hold's claim, in its own script: no read
// of it can fail on its own there. A request that gets no claim (a time
// that is not a slot) is told about a cooldown first all the same, from a
// read of its own; that read fails open: a Redis hiccup answers the
// request as if there were no cooldown, never refuses it for one.
func TestCooldownCheckFailsOpen(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	rdb := testkit.Redis(t)
	var fail atomic.Bool
	rdb.AddHook(failCooldownReads{on: &fail})
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, services: wire(pool, rdb, 0), pool: pool, rdb: rdb, clinic: c, loc: loc}
	t.Cleanup(func() { forgetHolds(rdb, c.ID) })

	client := newClient()
	e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client))
	offGrid := e.monday(11, 7)
	// Readable, the cooldown refuses the next hold, and comes first for a
	// time that is not a slot...
	_, err = e.tryHold(e.typeID(0), e.monday(11, 0), client)
	wantCode(t, err, "COOLDOWN", apperr.TooMany)
	_, err = e.tryHold(e.typeID(0), offGrid, client)
	wantCode(t, err, "COOLDOWN", apperr.TooMany)
	// ...unreadable on its own, the claim still refuses (its script reads
	// it), and the time that is not a slot gets its own answer.
	fail.Store(true)
	_, err = e.tryHold(e.typeID(0), e.monday(11, 0), client)
	wantCode(t, err, "COOLDOWN", apperr.TooMany)
	_, err = e.tryHold(e.typeID(0), offGrid, client)
	wantCode(t, err, "INVALID_ARGUMENT", apperr.Invalid)
}
