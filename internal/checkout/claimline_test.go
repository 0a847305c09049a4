package checkout

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
)

var errTaken = errors.New("taken")

func never() error { return nil }

func TestClaimLineLetsOneClaimOfATimeThroughAtOnce(t *testing.T) {
	l := NewClaimLine(time.Minute)
	ctx := t.Context()
	k := claimKey{typeID: uuid.New(), start: 1}
	leave, err := l.enter(ctx, k, never)
	if err != nil {
		t.Fatal(err)
	}
	other, err := l.enter(ctx, claimKey{typeID: k.typeID, start: 2}, func() error { t.Error("a claim of another time waited"); return nil })
	if err != nil {
		t.Fatal(err)
	}
	other()

	asked := make(chan struct{}, 1)
	entered := make(chan error)
	go func() {
		// The second claim leaves before it reports, so the check below
		// that the line is free again does not race its leave.
		leave2, err := l.enter(ctx, k, func() error { asked <- struct{}{}; return nil })
		if err == nil {
			leave2()
		}
		entered <- err
	}()
	select {
	case <-entered:
		t.Fatal("a second claim of the time went through while the first was under way")
	case <-time.After(50 * time.Millisecond):
	}
	leave()
	if err := <-entered; err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	default:
		t.Fatal("the second claim went through without asking whether it is refused now")
	}
	if leave, err := l.enter(ctx, k, func() error { t.Error("the line stayed taken after both left"); return nil }); err != nil {
		t.Fatal(err)
	} else {
		leave()
	}
}

// A claim behind another is refused as soon as the one before it ends and
// the view shows the time taken, without taking the line.
func TestClaimLineRefusesAWaiterWhenTheOneBeforeTookTheTime(t *testing.T) {
	l := NewClaimLine(time.Minute)
	k := claimKey{typeID: uuid.New(), start: 1}
	leave, _ := l.enter(t.Context(), k, never)
	done := make(chan error)
	go func() {
		_, err := l.enter(t.Context(), k, func() error { return errTaken })
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	leave()
	if err := <-done; !errors.Is(err, errTaken) {
		t.Fatalf("the waiter got %v, want the refusal", err)
	}
	if leave, err := l.enter(t.Context(), k, func() error { t.Error("a refused waiter kept the line"); return nil }); err != nil {
		t.Fatal(err)
	} else {
		leave()
	}
}

func TestClaimLineWaitsNoLongerThanItsBoundOrTheRequest(t *testing.T) {
	l := NewClaimLine(30 * time.Millisecond)
	k := claimKey{typeID: uuid.New(), start: 1}
	leave, _ := l.enter(t.Context(), k, never)
	defer leave()
	began := time.Now()
	if _, err := l.enter(t.Context(), k, never); err != nil || time.Since(began) > time.Second {
		t.Fatalf("%v after %s; want through after the 30ms bound", err, time.Since(began))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	l.wait = time.Hour
	if _, err := l.enter(ctx, k, never); err != nil {
		t.Fatalf("a claim whose request ended: %v", err)
	}
}
