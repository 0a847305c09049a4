package stream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestStreamAccessCache(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	t.Run("ConcurrentAsksOfOneKeyMakeOneCheck", func(t *testing.T) {
		t.Parallel()
		a := newAccessCache(time.Minute, quiet)
		release := make(chan struct{})
		var checks atomic.Int64
		check := counted(&checks, func(context.Context) (bool, error) { <-release; return false, nil })
		var wg sync.WaitGroup
		answers := make(chan bool, 100)
		for range 100 {
			wg.Add(1)
			go func() { defer wg.Done(); answers <- a.Allowed(context.Background(), "k", check) }()
		}
		time.Sleep(50 * time.Millisecond)
		close(release)
		wg.Wait()
		close(answers)
		for ok := range answers {
			if ok {
				t.Fatal("an ask got yes from a check that said no")
			}
		}
		if n := checks.Load(); n != 1 {
			t.Fatalf("100 asks made %d checks, want 1", n)
		}
		if a.Allowed(context.Background(), "k", check); checks.Load() != 1 {
			t.Fatal("a fresh answer was checked again")
		}
	})

	t.Run("AStaleAnswerIsCheckedAgain", func(t *testing.T) {
		t.Parallel()
		a := newAccessCache(20*time.Millisecond, quiet)
		ok := true
		check := func(context.Context) (bool, error) { return ok, nil }
		if !a.Allowed(context.Background(), "k", check) {
			t.Fatal("no at first")
		}
		ok = false
		time.Sleep(30 * time.Millisecond)
		if a.Allowed(context.Background(), "k", check) {
			t.Fatal("a stale yes was kept")
		}
	})

	t.Run("AFailedOrSlowCheckKeepsTheStream", func(t *testing.T) {
		t.Parallel()
		a := newAccessCache(time.Minute, quiet)
		var checks atomic.Int64
		if !a.Allowed(context.Background(), "err", counted(&checks, func(context.Context) (bool, error) { return false, errors.New("pool exhausted") })) {
			t.Error("a failed check ended the stream")
		}
		a.timeout = 20 * time.Millisecond
		stuck := make(chan struct{})
		defer close(stuck)
		slow := counted(&checks, func(context.Context) (bool, error) { <-stuck; return false, nil }) // ignores its context, as scs's Find does
		for range 3 {
			began := time.Now()
			if !a.Allowed(context.Background(), "slow", slow) {
				t.Error("a slow check ended the stream")
			}
			if d := time.Since(began); d > time.Second {
				t.Errorf("an ask waited %v for a stuck check", d)
			}
		}
		if n := checks.Load(); n != 2 {
			t.Errorf("%d checks, want 2: asks of a key whose check is stuck must not start more", n)
		}
	})

	t.Run("OldKeysAreDropped", func(t *testing.T) {
		t.Parallel()
		a := newAccessCache(10*time.Millisecond, quiet)
		yes := func(context.Context) (bool, error) { return true, nil }
		for _, k := range []string{"a", "b", "c"} {
			a.Allowed(context.Background(), k, yes)
		}
		time.Sleep(50 * time.Millisecond)
		a.Allowed(context.Background(), "d", yes)
		a.mu.Lock()
		defer a.mu.Unlock()
		if len(a.entries) != 1 {
			t.Fatalf("%d entries after the others went quiet, want 1", len(a.entries))
		}
	})
}

// counted is check, counting its calls in n.
func counted(n *atomic.Int64, check func(context.Context) (bool, error)) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		n.Add(1)
		return check(ctx)
	}
}
