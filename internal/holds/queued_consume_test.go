package holds

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

// A booked hold's consume queued on a pipeline after another command
// runs after it, in the pipeline's round trip, and spends the hold and
// starts the cooldown as ConsumeBookedCooling does; on a Redis that no
// longer knows the script (its scripts flushed), done runs it again.
func TestQueueConsumeBookedCoolingSpendsTheHoldAfterWhatCameFirst(t *testing.T) {
	t.Parallel()
	for _, flushed := range []bool{false, true} {
		f := newFixture(t, 30*time.Second)
		if flushed {
			// A Redis of the test's own: flushing the scripts of the shared
			// one would reach other tests' pipelines.
			f.rdb = testkit.PrivateRedis(t)
			f.s = NewStore(f.rdb, 30*time.Second, nil)
		}
		ctx := t.Context()
		booking := uuid.New()
		first := "queued-first:" + uuid.NewString()
		t.Cleanup(func() {
			f.rdb.Del(ctx, first, cooldownKey(f.clinic, "client-a", f.atid), cooldownReverseKey(f.clinic, booking))
		})
		h := f.claim("client-a", f.slot(0))
		if flushed {
			if err := f.rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		pipe := f.rdb.Pipeline()
		pipe.Set(ctx, first, "1", time.Minute)
		done := f.s.QueueConsumeBookedCooling(ctx, pipe, h, booking, time.Hour)
		_, _ = pipe.Exec(ctx)
		if err := done(); err != nil {
			t.Fatalf("flushed %v: %v", flushed, err)
		}
		if f.rdb.Exists(ctx, first).Val() != 1 {
			t.Fatal("the command queued first did not run")
		}
		if _, ok := f.heldBy(f.slot(0)); ok {
			t.Fatalf("flushed %v: spent hold still held", flushed)
		}
		if d, err := f.s.CooldownRemaining(ctx, f.clinic, "client-a", f.atid); err != nil || d <= 59*time.Minute {
			t.Fatalf("flushed %v: cooldown %s (%v), want ~1h", flushed, d, err)
		}
	}
}
