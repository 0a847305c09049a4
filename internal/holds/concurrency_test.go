package holds

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
)

func TestFiftyClientsClaimingOneSlotExactlyOneWins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()

	errs := testkit.Race(50, func(i int) error {
		_, err := f.s.Claim(ctx, f.req(fmt.Sprintf("client-%d", i), f.start))
		return err
	})

	wins, held := 0, 0
	for _, err := range errs {
		var he *HeldError
		switch {
		case err == nil:
			wins++
		case errors.As(err, &he):
			held++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if wins != 1 || held != 49 {
		t.Fatalf("%d wins and %d *HeldError, want 1 and 49", wins, held)
	}
	if n := f.rdb.HLen(ctx, metaKey(f.clinic)).Val(); n != 1 {
		t.Fatalf("%d meta entries, want 1", n)
	}
}

func TestQuotaIsExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	for _, quota := range []int{1, 3} {
		t.Run(fmt.Sprintf("quota %d", quota), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 30*time.Second)
			ctx := t.Context()

			// One client, twenty different slots at once.
			errs := testkit.Race(20, func(i int) error {
				r := f.req("client-a", f.slot(i))
				r.Quota = quota
				_, err := f.s.Claim(ctx, r)
				return err
			})

			wins, over := 0, 0
			for _, err := range errs {
				switch {
				case err == nil:
					wins++
				case errors.Is(err, ErrQuota):
					over++
				default:
					t.Errorf("unexpected error: %v", err)
				}
			}
			if wins != quota || over != 20-quota {
				t.Fatalf("%d wins and %d ErrQuota, want %d and %d", wins, over, quota, 20-quota)
			}
			if n := f.rdb.SCard(ctx, clientKey(f.clinic, "client-a")).Val(); n != int64(quota) {
				t.Fatalf("client set has %d holds, want %d", n, quota)
			}
			if active, err := f.s.Active(ctx, f.clinic); err != nil || len(active) != quota {
				t.Fatalf("%d active holds (%v), want %d", len(active), err, quota)
			}
		})
	}
}
