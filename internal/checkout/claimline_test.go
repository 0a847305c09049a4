package checkout

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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

// A claim still waiting at its bound asks the view once more: refused
// when the view now shows the time taken (the claims ahead were answered
// and no leave has woken it yet), through to Redis otherwise. Without
// that, every claim of a time whose claims ahead are slow went to Redis
// at once, when Redis was slowest.
func TestClaimLineAsksTheViewAtItsBound(t *testing.T) {
	l := NewClaimLine(20 * time.Millisecond)
	k := claimKey{typeID: uuid.New(), start: 1}
	leave, _ := l.enter(t.Context(), k, never)
	defer leave()
	asked := 0
	if _, err := l.enter(t.Context(), k, func() error { asked++; return errTaken }); err != errTaken || asked != 1 {
		t.Fatalf("past the bound with the view refusing: %v after %d asks, want refused after one", err, asked)
	}
	asked = 0
	if _, err := l.enter(t.Context(), k, func() error { asked++; return nil }); err != nil || asked != 1 {
		t.Fatalf("past the bound with the view showing room: %v after %d asks, want through after one", err, asked)
	}
}

// A time the view shows free with three specialists lets three claims
// through at once; a fourth waits until one leaves, then asks the view
// again, and is refused once the view shows the time taken.
func TestClaimLineLetsTheViewsRoomThroughAtOnce(t *testing.T) {
	l := NewClaimLine(time.Minute)
	k := claimKey{typeID: uuid.New(), start: 1}
	// A claim that had to wait would give up at once on this context,
	// without getting in.
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	var leaves []func()
	for range 3 {
		leave, err := l.enterRoom(ended, k, 3, func() (int, error) { return 3, nil })
		if err != nil {
			t.Fatal(err)
		}
		leaves = append(leaves, leave)
	}
	if in := l.busy[k].inside; in != 3 {
		t.Fatalf("%d of three claims got in at once with room for three", in)
	}
	room := make(chan int, 4)
	done := make(chan error)
	go func() {
		leave, err := l.enterRoom(t.Context(), k, 3, func() (int, error) {
			n := <-room
			if n == 0 {
				return 0, errTaken
			}
			return n, nil
		})
		if err == nil {
			leave()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a fourth claim went through beside three with room for three (%v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	room <- 3 // the first one left without taking the time: room again
	leaves[0]()
	if err := <-done; err != nil {
		t.Fatalf("the fourth claim, with room again: %v", err)
	}

	// Room for one while one is inside: it waits for that one, and the
	// view then shows the time taken.
	leaves[1]()
	go func() {
		_, err := l.enterRoom(t.Context(), k, 1, func() (int, error) {
			if <-room == 0 {
				return 0, errTaken
			}
			return 1, nil
		})
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	room <- 0
	leaves[2]()
	if err := <-done; !errors.Is(err, errTaken) {
		t.Fatalf("a claim behind a full time got %v, want the refusal", err)
	}
	if len(l.busy) != 0 {
		t.Fatalf("the line kept %d times after every claim left", len(l.busy))
	}
}

// BenchmarkClaimLineRush: 100 claims of one time that five specialists
// offer, each claim that gets in taking a simulated 200µs round trip to
// Redis and one specialist; the rest are refused once the view shows all
// five taken. "one at a time" is the line letting one claim of a time in
// at once; "the view's room" lets in as many as the view shows free. The
// time per op is how long until the last of the 100 is answered.
func BenchmarkClaimLineRush(b *testing.B) {
	const claims, specialists = 100, 5
	const roundTrip = 200 * time.Microsecond
	for _, tc := range []struct {
		name     string
		fromView bool
	}{{"one at a time", false}, {"the view's room", true}} {
		b.Run(tc.name, func(b *testing.B) {
			var rechecks atomic.Int64
			for b.Loop() {
				l := NewClaimLine(time.Minute)
				k := claimKey{typeID: uuid.New(), start: 1}
				var mu sync.Mutex
				taken := 0
				room := func() (int, error) {
					mu.Lock()
					defer mu.Unlock()
					if taken == specialists {
						return 0, errTaken
					}
					if !tc.fromView {
						return 1, nil
					}
					return specialists - taken, nil
				}
				var wg sync.WaitGroup
				for range claims {
					wg.Go(func() {
						n, err := room()
						if err != nil {
							return
						}
						leave, err := l.enterRoom(b.Context(), k, n, func() (int, error) {
							rechecks.Add(1)
							return room()
						})
						if err != nil {
							return
						}
						defer leave()
						time.Sleep(roundTrip)
						mu.Lock()
						if taken < specialists {
							taken++
						}
						mu.Unlock()
					})
				}
				wg.Wait()
			}
			// How often waiting claims asked the view again: each ask is a
			// scan of the clinic's holds in a rush.
			b.ReportMetric(float64(rechecks.Load())/float64(b.N), "rechecks/op")
		})
	}
}

// While the time stays free, a claim that leaves makes room for one more:
// only the first claim waiting asks the view again, and takes the room;
// once the view refuses the time, every claim waiting asks it and is
// refused. Fails if every leave wakes every waiting claim (ten asks at
// the first leave).
func TestClaimLineWakesOneWaiterPerLeave(t *testing.T) {
	l := NewClaimLine(time.Minute)
	k := claimKey{typeID: uuid.New(), start: 1}
	leave, _ := l.enterRoom(t.Context(), k, 1, nil)
	var asks atomic.Int64
	var taken atomic.Bool
	recheck := func() (int, error) {
		asks.Add(1)
		if taken.Load() {
			return 0, errTaken
		}
		return 1, nil
	}
	const waiting = 10
	entered := make(chan func(), waiting)
	refused := make(chan error, waiting)
	for range waiting {
		go func() {
			leave, err := l.enterRoom(t.Context(), k, 1, recheck)
			if err != nil {
				refused <- err
				return
			}
			entered <- leave
		}()
	}
	queued := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.busy[k].queue)
	}
	for queued() < waiting {
		time.Sleep(time.Millisecond)
	}
	leave() // the time is still free: its specialist's claim failed in Redis
	next := <-entered
	for queued() < waiting-1 {
		time.Sleep(time.Millisecond)
	}
	if n := asks.Load(); n != 1 {
		t.Fatalf("one leave: the view asked %d times, want once", n)
	}
	taken.Store(true)
	next()
	for range waiting - 1 {
		if err := <-refused; !errors.Is(err, errTaken) {
			t.Fatalf("a waiting claim got %v, want the refusal", err)
		}
	}
	if n := asks.Load(); n != waiting {
		t.Fatalf("the view asked %d times in all, want %d (once per claim)", n, waiting)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.busy) != 0 {
		t.Fatalf("lanes left behind: %v", l.busy)
	}
}
