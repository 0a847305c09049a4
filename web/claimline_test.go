package web

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestClaimLineLetsOneClaimOfATimeThroughAtOnce(t *testing.T) {
	l := newClaimLine(time.Minute)
	ctx := t.Context()
	k := claimKey{typeID: uuid.New(), start: 1}
	leave, waited := l.enter(ctx, k)
	if waited {
		t.Fatal("the first claim waited")
	}
	other, waited := l.enter(ctx, claimKey{typeID: k.typeID, start: 2})
	if waited {
		t.Fatal("a claim of another time waited")
	}
	other()

	entered := make(chan bool)
	go func() {
		leave2, waited := l.enter(ctx, k)
		entered <- waited
		leave2()
	}()
	select {
	case <-entered:
		t.Fatal("a second claim of the time went through while the first was under way")
	case <-time.After(50 * time.Millisecond):
	}
	leave()
	if !<-entered {
		t.Fatal("the second claim does not say it waited")
	}
	if leave, waited := l.enter(ctx, k); waited {
		t.Fatal("the line stayed taken after both left")
	} else {
		leave()
	}
}

func TestClaimLineWaitsNoLongerThanItsBoundOrTheRequest(t *testing.T) {
	l := newClaimLine(30 * time.Millisecond)
	k := claimKey{typeID: uuid.New(), start: 1}
	leave, _ := l.enter(t.Context(), k)
	defer leave()
	began := time.Now()
	if _, waited := l.enter(t.Context(), k); !waited || time.Since(began) > time.Second {
		t.Fatalf("waited %v for %s; want through after the 30ms bound", waited, time.Since(began))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	l.wait = time.Hour
	if _, waited := l.enter(ctx, k); !waited {
		t.Fatal("a claim whose request ended does not say it waited")
	}
}
