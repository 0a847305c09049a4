package liveview

import (
	"context"
	"testing"
	"time"

	"github.com/clinic/booking/internal/holds"
)

// A kept answer of the clinic's set-up lives until the set-up changes: a
// calendar event heard (another instance's change), a change made here, a
// lost subscription or its age; a reading overtaken by a change is not
// kept; a hold or booking leaves it be.
func TestKeptGoesWithEveryChangeOfTheSetUp(t *testing.T) {
	t.Parallel()
	r := newRig(t, 10)
	ctx := context.Background()
	keep := func() *Kept {
		t.Helper()
		k := r.s.Keep(r.s.Begin(r.clinic.ID), "clinic:x", "listing")
		if k == nil || r.s.Kept("clinic:x") != k {
			t.Fatal("a quiet reading was not kept")
		}
		return k
	}
	publish := func(ev holds.Event) {
		t.Helper()
		r.s.mu.Lock()
		seq := r.s.feeds[r.clinic.ID].seq
		r.s.mu.Unlock()
		if err := r.holds.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
		r.waitSeq(t, seq+1)
	}

	k := keep()
	renders := 0
	render := func() ([]byte, error) { renders++; return []byte("page"), nil }
	for range 3 {
		if a, err := k.Answer("en", render); err != nil || string(a.Body) != "page" || a.ETag != ETag([]byte("page")) {
			t.Fatalf("answer %q %q, %v", a.Body, a.ETag, err)
		}
	}
	if renders != 1 {
		t.Fatalf("rendered %d times for one variant, want once", renders)
	}
	publish(holds.Event{Type: holds.EventHold, ClientHash: "someone", Hold: holds.Hold{HoldID: "h1", ClinicID: r.clinic.ID}})
	r.s.Changed(r.clinic.ID)
	if r.s.Kept("clinic:x") != k {
		t.Fatal("a hold or booking dropped the kept answer of the set-up")
	}

	publish(holds.Event{Type: holds.EventCalendar, Hold: holds.Hold{ClinicID: r.clinic.ID}})
	if r.s.Kept("clinic:x") != nil {
		t.Fatal("a calendar event did not drop the kept answer")
	}
	keep()
	r.s.SetupChanged(r.clinic.ID)
	if r.s.Kept("clinic:x") != nil {
		t.Fatal("a change made here did not drop the kept answer")
	}

	tk := r.s.Begin(r.clinic.ID)
	publish(holds.Event{Type: holds.EventCalendar, Hold: holds.Hold{ClinicID: r.clinic.ID}})
	if r.s.Keep(tk, "clinic:x", "listing") != nil {
		t.Fatal("a reading overtaken by a calendar event was kept")
	}
	tk = r.s.Begin(r.clinic.ID)
	r.s.SetupChanged(r.clinic.ID)
	if r.s.Keep(tk, "clinic:x", "listing") != nil {
		t.Fatal("a reading overtaken by a change made here was kept")
	}

	keep()
	r.advance(2 * time.Minute)
	if r.s.Kept("clinic:x") != nil {
		t.Fatal("a kept answer past its age is still read")
	}
	keep()
	tk = r.s.Begin(r.clinic.ID)
	r.s.connected(false)
	if r.s.Kept("clinic:x") != nil {
		t.Fatal("a kept answer outlived the subscription")
	}
	r.s.connected(true)
	r.s.connected(true)
	if r.s.Keep(tk, "clinic:x", "listing") != nil {
		t.Fatal("a reading begun before the loss was kept")
	}
	keep()
	r.s.DropAll(DropFailover)
	if r.s.Kept("clinic:x") != nil {
		t.Fatal("a kept answer outlived DropAll")
	}
}
