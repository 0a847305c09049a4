package stream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
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
		check := func(context.Context) (bool, error) { <-release; return false, nil }
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
		if n := a.queries.Load(); n != 1 {
			t.Fatalf("100 asks made %d checks, want 1", n)
		}
		if a.Allowed(context.Background(), "k", check); a.queries.Load() != 1 {
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
		if !a.Allowed(context.Background(), "err", func(context.Context) (bool, error) { return false, errors.New("pool exhausted") }) {
			t.Error("a failed check ended the stream")
		}
		a.timeout = 20 * time.Millisecond
		stuck := make(chan struct{})
		defer close(stuck)
		slow := func(context.Context) (bool, error) { <-stuck; return false, nil } // ignores its context, as scs's Find does
		for range 3 {
			began := time.Now()
			if !a.Allowed(context.Background(), "slow", slow) {
				t.Error("a slow check ended the stream")
			}
			if d := time.Since(began); d > time.Second {
				t.Errorf("an ask waited %v for a stuck check", d)
			}
		}
		if n := a.queries.Load(); n != 2 {
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
