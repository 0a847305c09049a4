package checkout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/idempotency"
	"github.com/clinic/booking/internal/testkit"
)

// pauseScripts is a go-redis hook that, once armed, holds the next script
// call (EVAL/EVALSHA) naming a given argument until released: a server
// instance stalled on its way to Redis (a GC pause, a slow network) at a
// chosen moment.
type pauseScripts struct {
	mu      sync.Mutex
	armed   string        // the argument to wait for; "" when disarmed
	reached chan struct{} // closed when the held call arrives
	release chan struct{} // close to let it through
}

func newPause() *pauseScripts {
	return &pauseScripts{reached: make(chan struct{}), release: make(chan struct{})}
}

func (p *pauseScripts) arm(arg string) { p.mu.Lock(); p.armed = arg; p.mu.Unlock() }

func (p *pauseScripts) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (p *pauseScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			p.mu.Lock()
			hold := false
			for _, a := range cmd.Args() {
				if s, ok := a.(string); ok && p.armed != "" && s == p.armed {
					hold = true
				}
			}
			if hold {
				p.armed = ""
			}
			p.mu.Unlock()
			if hold {
				close(p.reached)
				select {
				case <-p.release:
				case <-time.After(10 * time.Second):
				}
			}
		}
		return next(ctx, cmd)
	}
}

func (p *pauseScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestIdempotentConfirm drives the interleaving of two confirms with one
// Idempotency-Key on two server instances, step by step and at once.
func TestIdempotentConfirm(t *testing.T) {
	t.Parallel()
	t.Run("ARetryOverlappingTheCommitIsReplayedNotRefused", testRetryOverlappingTheCommit)
	t.Run("TwoRequestsWithOneKeyAtOnceBookOnce", testOneKeyAtOnce)
	t.Run("ARetryAfterTheHoldIsSpentIsReplayed", testRetryAfterTheHoldIsSpent)
}

// confirmWithKey is a confirm of h under an Idempotency-Key, whose stored
// answer names the booking and its token.
func confirmWithKey(h holds.Hold, key string) checkout.ConfirmRequest {
	return checkout.ConfirmRequest{
		AppointmentTypeID: h.AppointmentTypeID, HoldID: h.HoldID, ClientID: h.ClientID, Patient: patientOf(h.ClientID),
		IdempotencyKey: key, RequestHash: idempotency.HashRequest([]byte("same request")),
		Encode: func(c booking.Confirmation) (int, []byte, error) {
			b, err := json.Marshal(answer(c))
			return http.StatusCreated, b, err
		},
	}
}

// answer is what confirmWithKey stores for a confirmation.
func answer(c booking.Confirmation) map[string]any {
	return map[string]any{"id": c.Booking.ID, "token": c.ManageToken}
}

// wantReplayOf asserts that got replays the 201 stored for first.
func wantReplayOf(t *testing.T, got checkout.Confirmed, first booking.Confirmation) {
	t.Helper()
	if got.Replay == nil || got.Replay.Status != http.StatusCreated {
		t.Fatalf("got %+v, want a replay of the 201", got)
	}
	want, err := json.Marshal(answer(first))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Replay.Body, want) {
		t.Fatalf("replayed %s, want %s", got.Replay.Body, want)
	}
}

// A retry (a browser's, after a timeout, routed to another instance) that
// pins the hold after the first request committed its booking but before
// that request spent the hold: the retry gets as far as the gate, loses
// the slot to its own first attempt, and is answered with the stored
// record.
//
// Mutation: Confirm without its look-up of the stored answer after a
// failed confirm (the "a retry that raced the request it repeats" block):
// the retry is answered SLOT_TAKEN. (A retry resuming only after the hold
// is spent would not notice: the pin's HOLD_EXPIRED path finds the record
// itself. Hence the observer between the cache and the checkout.)
func testRetryOverlappingTheCommit(t *testing.T) {
	t.Parallel()
	// Instance one answers the first request; instance two the retry.
	// Instance two's Redis client can be paused.
	e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
	pause := newPause()
	slow := testkit.Redis(t)
	slow.AddHook(pause)
	two := wire(e.pool, slow, 0)

	start := e.monday(10, 0)
	h := e.hold(e.typeID(0), start, uuid.Nil, newClient())
	req := confirmWithKey(h, uuid.NewString())

	// The first confirm, once committed, its slot cache and bitmap updated,
	// lets the stalled retry go on and waits for it before it spends the
	// hold (instance one's checkout observer runs after this one).
	retried := make(chan struct{})
	one := wire(e.pool, e.rdb, 0, func(ctx context.Context, ch booking.Change) {
		if ch.Kind == "confirm" && ch.HoldID == h.HoldID {
			if held, ok, err := e.holds.HeldBy(ctx, e.clinic.ID, h.AppointmentTypeID, h.SpecialistID, h.Start); err != nil || !ok || held.HoldID != h.HoldID {
				t.Errorf("the hold is not live when the retry resumes (%+v, %v, %v): the two do not overlap", held, ok, err)
			}
			close(pause.release)
			select {
			case <-retried:
			case <-time.After(10 * time.Second):
			}
		}
	})

	// The retry: it finds no answer yet (nothing is committed), then
	// stalls on its way to pin the hold.
	var retry checkout.Confirmed
	var retryErr error
	pause.arm(h.HoldID) // the pin's script names the hold
	go func() {
		defer close(retried)
		retry, retryErr = two.co.Confirm(context.Background(), req)
	}()
	select {
	case <-pause.reached:
	case <-time.After(5 * time.Second):
		t.Fatal("the retry never reached Redis")
	}

	first, err := one.co.Confirm(t.Context(), req)
	if err != nil || first.Replay != nil {
		t.Fatalf("first confirm: %+v %v", first, err)
	}
	<-retried

	if retryErr != nil {
		t.Fatalf("the retry of a request that succeeded got %v; want the stored answer replayed", retryErr)
	}
	wantReplayOf(t, retry, first.Confirmation)
	if n := e.confirmedAt(e.specialist(0), start); n != 1 {
		t.Fatalf("%d confirmed bookings, want 1", n)
	}
}

// Two requests with one key and one hold, on two instances, released at
// once, five times over: one books and the other replays its answer,
// never a second booking nor an error. Both usually pin the live hold
// before either books, so the loser loses the slot in the gate.
//
// Mutation: Confirm without its look-up of the stored answer after a
// failed confirm: the loser is answered SLOT_TAKEN.
func testOneKeyAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
	instances := []services{e.services, wire(e.pool, testkit.Redis(t), 0)}
	for round := range 5 {
		start := e.monday(9+round, 0)
		h := e.hold(e.typeID(0), start, uuid.Nil, newClient())
		req := confirmWithKey(h, uuid.NewString())
		got := make([]checkout.Confirmed, 2)
		errs := make([]error, 2)
		testkit.Together(2, func(i int) {
			got[i], errs[i] = instances[i].co.Confirm(context.Background(), req)
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: request %d got %v; want a booking or a replay", round, i, err)
			}
		}
		fresh := slices.IndexFunc(got, func(c checkout.Confirmed) bool { return c.Replay == nil })
		if fresh < 0 || got[1-fresh].Replay == nil {
			t.Fatalf("round %d: %+v, want one booking and one replay", round, got)
		}
		wantReplayOf(t, got[1-fresh], got[fresh].Confirmation)
		if n := e.confirmedAt(e.specialist(0), start); n != 1 {
			t.Fatalf("round %d: %d confirmed bookings, want 1", round, n)
		}
	}
}

func testRetryAfterTheHoldIsSpent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
	client := newClient()
	h := e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client)
	key := uuid.NewString()
	req := checkout.ConfirmRequest{
		AppointmentTypeID: e.typeID(0), HoldID: h.HoldID, ClientID: client, Patient: patient,
		IdempotencyKey: key, RequestHash: idempotency.HashRequest([]byte("r")),
		Encode: func(c booking.Confirmation) (int, []byte, error) {
			b, err := json.Marshal(c.Booking.ID)
			return http.StatusCreated, b, err
		},
	}
	first, err := e.co.Confirm(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.co.Confirm(t.Context(), req)
	if err != nil || again.Replay == nil {
		t.Fatalf("retry: %+v %v", again, err)
	}
	want, err := json.Marshal(first.Confirmation.Booking.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Replay.Body, want) {
		t.Fatalf("replayed %s, want %s", again.Replay.Body, want)
	}
	req.RequestHash = idempotency.HashRequest([]byte("different"))
	_, err = e.co.Confirm(t.Context(), req)
	wantCode(t, err, "IDEMPOTENCY_MISMATCH", apperr.Unprocessable)
}
