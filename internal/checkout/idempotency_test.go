package checkout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
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
// Idempotency-Key on two server instances step by step.
func TestIdempotentConfirm(t *testing.T) {
	t.Parallel()

	t.Run("ARetryOverlappingTheCommitIsReplayedNotRefused", func(t *testing.T) {
		t.Parallel()
		// Instance one answers the first request; instance two the retry
		// (a browser retry after a timeout, routed elsewhere). Instance
		// two's Redis client can be paused.
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
		pause := newPause()
		slow := testkit.Redis(t)
		slow.AddHook(pause)
		two := wire(e.pool, slow, 0)

		client := newClient()
		start := e.monday(10, 0)
		h := e.hold(e.typeID(0), start, uuid.Nil, client)
		key := uuid.NewString()
		req := func() checkout.ConfirmRequest {
			return checkout.ConfirmRequest{
				AppointmentTypeID: e.typeID(0), HoldID: h.HoldID, ClientID: client, Patient: patient,
				IdempotencyKey: key, RequestHash: idempotency.HashRequest([]byte("same request")),
				Encode: func(c booking.Confirmation) (int, []byte, error) {
					b, err := json.Marshal(map[string]any{"id": c.Booking.ID, "token": c.ManageToken})
					return http.StatusCreated, b, err
				},
			}
		}

		// The first confirm, once committed and published (its observers
		// have run: the bitmap is marked), lets the stalled retry go on and
		// waits for it before it spends the hold.
		retried := make(chan struct{})
		e.bookings.Observe(func(ctx context.Context, ch booking.Change) {
			if ch.Kind == "confirm" && ch.HoldID == h.HoldID {
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
			retry, retryErr = two.co.Confirm(context.Background(), req())
		}()
		select {
		case <-pause.reached:
		case <-time.After(5 * time.Second):
			t.Fatal("the retry never reached Redis")
		}

		first, err := e.co.Confirm(t.Context(), req())
		if err != nil || first.Replay != nil {
			t.Fatalf("first confirm: %+v %v", first, err)
		}
		<-retried

		if retryErr != nil {
			t.Fatalf("the retry of a request that succeeded got %v; want the stored answer replayed", retryErr)
		}
		if retry.Replay == nil || retry.Replay.Status != http.StatusCreated {
			t.Fatalf("retry got %+v, want a replay of the 201", retry)
		}
		want, _ := json.Marshal(map[string]any{"id": first.Confirmation.Booking.ID, "token": first.Confirmation.ManageToken})
		if !bytes.Equal(retry.Replay.Body, want) {
			t.Fatalf("replayed %s, want %s", retry.Replay.Body, want)
		}
		if n := e.confirmedAt(e.specialist(0), start); n != 1 {
			t.Fatalf("%d confirmed bookings, want 1", n)
		}
	})

	t.Run("ARetryAfterTheHoldIsSpentIsReplayed", func(t *testing.T) {
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
		if want, _ := json.Marshal(first.Confirmation.Booking.ID); !bytes.Equal(again.Replay.Body, want) {
			t.Fatalf("replayed %s, want %s", again.Replay.Body, want)
		}
		req.RequestHash = idempotency.HashRequest([]byte("different"))
		_, err = e.co.Confirm(t.Context(), req)
		wantCode(t, err, "IDEMPOTENCY_MISMATCH", apperr.Unprocessable)
	})
}
