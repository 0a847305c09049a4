package web_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/testkit"
)

// apiHold posts a hold of c's first type and specialist at start.
func apiHold(t *testing.T, a *app, c clinic, start time.Time, client string, hdr ...string) *response {
	t.Helper()
	return a.postHold(t, c.Types[0].ID, c.Specialists[0].ID, start, client, hdr...)
}

// freeStarts are n slot starts of a one-specialist testkit clinic (09:00
// to 17:00 on weekdays, 30-minute slots) from next Monday on.
func freeStarts(c clinic, n int) []time.Time {
	var out []time.Time
	for day := 0; len(out) < n; day++ {
		d := c.Monday(9, 0).AddDate(0, 0, day)
		if d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
			continue
		}
		for i := 0; i < 16 && len(out) < n; i++ {
			out = append(out, d.Add(time.Duration(i)*30*time.Minute))
		}
	}
	return out
}

func TestAddressHoldQuota(t *testing.T) {
	t.Parallel()

	t.Run("FiftyClientIdsFromOneAddressGetExactlyTheQuota", func(t *testing.T) {
		t.Parallel()
		a := newApp(t, withOptions(program.Options{HoldsPerAddress: 4}))
		c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
		const n = 50
		starts := freeStarts(c, n)
		replies := make([]*response, n)
		testkit.Together(n, func(i int) {
			replies[i] = apiHold(t, a, c, starts[i], fmt.Sprintf("made-up-%d-%s", i, uuid.NewString()[:8]))
		})
		held, refused := 0, 0
		for _, r := range replies {
			switch r.Status {
			case http.StatusCreated:
				held++
			case http.StatusTooManyRequests:
				wantError(t, r, http.StatusTooManyRequests, "ADDRESS_HOLD_QUOTA", "")
				retryAfter(t, r)
				refused++
			default:
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
		}
		if held != 4 || refused != n-4 {
			t.Fatalf("%d holds and %d ADDRESS_HOLD_QUOTA, want 4 and %d", held, refused, n-4)
		}
	})

	t.Run("EachForwardedAddressBehindATrustedProxyHasItsOwn", func(t *testing.T) {
		t.Parallel()
		a := newApp(t, withOptions(program.Options{HoldsPerAddress: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}))
		c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
		starts := freeStarts(c, 3)
		if r := apiHold(t, a, c, starts[0], "patient-1", "X-Forwarded-For", "198.51.100.1"); r.Status != http.StatusCreated {
			t.Fatalf("first address: %d %s", r.Status, r.Body)
		}
		r := apiHold(t, a, c, starts[1], "patient-1-again", "X-Forwarded-For", "198.51.100.1")
		e := wantError(t, r, http.StatusTooManyRequests, "ADDRESS_HOLD_QUOTA", "")
		if retryAfter(t, r) < 1 || e.Error.Details["maxHolds"] != 1.0 {
			t.Fatalf("refusal %s", r.Body)
		}
		if r := apiHold(t, a, c, starts[1], "patient-2", "X-Forwarded-For", "198.51.100.2"); r.Status != http.StatusCreated {
			t.Fatalf("second address: %d %s", r.Status, r.Body)
		}
		// Without the header the proxy itself is the client: a third allowance.
		if r := apiHold(t, a, c, starts[2], "patient-3"); r.Status != http.StatusCreated {
			t.Fatalf("the proxy's own address: %d %s", r.Status, r.Body)
		}
	})
}

func TestHeartbeatLimits(t *testing.T) {
	t.Parallel()

	hold := func(t *testing.T, a *app, c clinic, start time.Time, client string) string {
		t.Helper()
		r := apiHold(t, a, c, start, client)
		if r.Status != http.StatusCreated {
			t.Fatalf("hold: %d %s", r.Status, r.Body)
		}
		var h holdView
		r.Decode(&h)
		return h.HoldID
	}

	t.Run("PerHold", func(t *testing.T) {
		t.Parallel()
		a := newApp(t)
		c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
		id := hold(t, a, c, freeStarts(c, 1)[0], "beater")
		limited := false
		// 25 beats cross at most one minute boundary: some window gets 13.
		for i := range 25 {
			r := a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": id, "clientId": "beater"})
			if r.Status == http.StatusTooManyRequests {
				wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
				retryAfter(t, r)
				if i < 12 {
					t.Fatalf("beat %d refused: a page beating every 10 s must never be", i+1)
				}
				limited = true
				break
			}
			if r.Status != http.StatusOK {
				t.Fatalf("beat %d: %d %s", i+1, r.Status, r.Body)
			}
		}
		if !limited {
			t.Fatal("25 heartbeats at once, none refused")
		}
	})

	t.Run("AStrangerSpendsOnlyHisOwnAllowance", func(t *testing.T) {
		t.Parallel()
		a := newApp(t)
		c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
		id := hold(t, a, c, freeStarts(c, 1)[0], "owner")
		// Hold ids are public (the hold stream carries them): a stranger
		// beating someone's hold is refused, and spends his own allowance:
		// in one minute's window his first 12 beats are gone (410), the
		// rest limited (429), and the owner still beats. Fails if refused
		// beats stop being counted, or are counted against the hold alone.
		avoidWindowEdge(20 * time.Second)
		for i := range 15 {
			r := a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": id, "clientId": "stranger"})
			want := http.StatusGone
			if i >= 12 {
				want = http.StatusTooManyRequests
			}
			if r.Status != want {
				t.Fatalf("a stranger's beat %d: %d %s, want %d", i+1, r.Status, r.Body, want)
			}
		}
		if r := a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": id, "clientId": "owner"}); r.Status != http.StatusOK {
			t.Fatalf("the owner's beat after a stranger's 15: %d %s", r.Status, r.Body)
		}
	})

	t.Run("PerAddress", func(t *testing.T) {
		t.Parallel()
		a := newApp(t, withOptions(program.Options{HeartbeatsPerMinute: 3}))
		c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
		starts := freeStarts(c, 4)
		// In one minute's window: three beats of three holds pass, the
		// fourth (of a fourth hold) is refused. Fails if the address's
		// count is lost, or counts per hold.
		avoidWindowEdge(20 * time.Second)
		for i := range 4 {
			client := fmt.Sprintf("beater-%d", i)
			r := a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": hold(t, a, c, starts[i], client), "clientId": client})
			if i < 3 {
				if r.Status != http.StatusOK {
					t.Fatalf("beat %d of 3 allowed: %d %s", i+1, r.Status, r.Body)
				}
				continue
			}
			wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
			retryAfter(t, r)
		}
	})
}

// A hold kept by heartbeats is kept no longer than HoldMaxLife: then the
// heartbeat answers 410 and the hold lapses.
func TestHoldMaxLife(t *testing.T) {
	t.Parallel()
	// A 2 s TTL with heartbeats every 500 ms (one may come 1.5 s late on a
	// loaded machine), and a max life of 4 s. Fails if heartbeats stop
	// being capped at the max life, or if the cap comes early.
	a := newApp(t, withOptions(program.Options{HoldTTL: 2 * time.Second, HoldMaxLife: 4 * time.Second}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	start := freeStarts(c, 1)[0]
	began := time.Now()
	r := apiHold(t, a, c, start, "keeper")
	var h holdView
	r.Decode(&h)
	for {
		time.Sleep(500 * time.Millisecond)
		r := a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": "keeper"})
		if r.Status == http.StatusGone {
			break
		}
		if r.Status != http.StatusOK {
			t.Fatalf("heartbeat: %d %s", r.Status, r.Body)
		}
		if time.Since(began) > 10*time.Second {
			t.Fatal("heartbeats keep the hold past its max life")
		}
	}
	if d := time.Since(began); d < 3800*time.Millisecond {
		t.Fatalf("gone after %s, before its max life", d)
	}

	// Claiming the slot again from the same address, under another client
	// id, is no way around the max life: once the hold lapses, this
	// network waits out a cool-off (the max life) for that slot.
	var again *response
	for deadline := time.Now().Add(10 * time.Second); ; {
		again = apiHold(t, a, c, start, "keeper-again")
		if again.Status != http.StatusLocked || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	wantError(t, again, http.StatusTooManyRequests, "HOLD_RECLAIM_TOO_SOON", "")
	retryAfter(t, again)
}

func TestReleaseHoldWithAJSONBody(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	r := apiHold(t, a, c, freeStarts(c, 1)[0], "releaser")
	var h holdView
	r.Decode(&h)
	wantError(t, a.do(t, "DELETE", "/v1/holds/"+h.HoldID, map[string]string{"clientId": "someone-else"}), http.StatusForbidden, "NOT_YOUR_HOLD", "")
	if r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID, map[string]string{"clientId": "releaser"}); r.Status != http.StatusNoContent {
		t.Fatalf("release: %d %s", r.Status, r.Body)
	}
	active, err := a.Deps.Holds.Active(t.Context(), c.ID)
	if err != nil || len(active) != 0 {
		t.Fatalf("holds after the release: %v %v", active, err)
	}
	// The query string still works, and without either the clientId is missing.
	wantError(t, a.do(t, "DELETE", "/v1/holds/"+h.HoldID, nil), http.StatusBadRequest, "INVALID_ARGUMENT", "clientId")
}

// Letting a hold go and claiming it again is no way to renew its life:
// the releaser's network is refused the time until the released hold's
// life is over, while another network takes it at once. On the API and
// on the booking page, in both languages.
func TestReleaseBarsTheNetworkFromTheTime(t *testing.T) {
	t.Parallel()

	t.Run("API", func(t *testing.T) {
		t.Parallel()
		a := newApp(t, withOptions(program.Options{TrustedProxies: loopbackProxy}))
		c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
		start := freeStarts(c, 1)[0]
		h := a.holdFrom(t, c.Types[0].ID, uuid.Nil, start, "releaser", "198.51.100.40")
		if r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId=releaser", nil, "X-Forwarded-For", "198.51.100.40"); r.Status != http.StatusNoContent {
			t.Fatalf("release: %d %s", r.Status, r.Body)
		}
		for _, client := range []string{"releaser", "releaser-with-a-new-id"} {
			r := apiHold(t, a, c, start, client, "X-Forwarded-For", "198.51.100.40")
			e := wantError(t, r, http.StatusTooManyRequests, "HOLD_RECLAIM_TOO_SOON", "")
			// The rest of the released hold's ten minutes.
			if s := retryAfter(t, r); s < 590 || s > 600 || e.Error.Details["retryAfterSeconds"] != float64(s) {
				t.Fatalf("Retry-After %d (details %v), want the rest of the hold's 600 s", s, e.Error.Details)
			}
		}
		a.holdFrom(t, c.Types[0].ID, uuid.Nil, start, "competitor", "198.51.100.41")
	})

	for _, tc := range []struct{ lang, released, refused string }{
		{"en", "Released.", "This time was held from your network until a moment ago."},
		{"de", "Freigegeben.", "Diese Zeit war bis eben von Ihrem Netzwerk aus reserviert."},
	} {
		t.Run("Page-"+tc.lang, func(t *testing.T) {
			t.Parallel()
			a := newApp(t)
			c := a.speaking(t, a.patientClinic(t), tc.lang)
			typ, sp := c.Type0(), c.Specialists[0]
			start := c.At(3, 11, 0)
			cl := a.newClient(t)
			held := holdHX(t, cl, c, typ, sp.ID, start).Want(http.StatusOK)
			rel := formOf(t, held.Doc().Find(`[data-testid="held"] form`).Last(), "release form")
			if r := cl.HXPost(rel.Action, rel.Values).Want(http.StatusOK); !strings.Contains(text(r.Doc().Find("body")), tc.released) {
				t.Errorf("after the release: %q", text(r.Doc().Find("body")))
			}
			r := holdHX(t, cl, c, typ, sp.ID, start).Want(http.StatusTooManyRequests)
			if s := retryAfter(t, r); s < 590 || s > 600 {
				t.Errorf("Retry-After %d, want the rest of the hold's 600 s", s)
			}
			if p := text(r.Doc().Find(`[data-testid="problem"]`)); !strings.Contains(p, tc.refused) {
				t.Errorf("the problem panel says %q, want %q", p, tc.refused)
			}
			// Each test browser has a loopback address of its own: another network.
			if r := holdHX(t, a.newClient(t), c, typ, sp.ID, start).Want(http.StatusOK); r.Doc().Find(`[data-testid="held"]`).Length() != 1 {
				t.Errorf("another network's browser did not get the time: %s", clip(r.Body, 500))
			}
		})
	}
}

// A confirm refused for the patient's cooldown lets the time go as the
// owner's release does: the address network may not claim it again until
// the hold's life would have ended, so a refused confirm renews nothing;
// another network takes it at once.
func TestCooldownRefusalBarsTheNetworkFromTheTime(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{TrustedProxies: loopbackProxy}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID
	starts := freeStarts(c, 2)
	const from = "198.51.100.50"
	patient := map[string]string{"name": "Cora Cool", "email": uniqueEmail("cora")}
	h := a.holdFrom(t, typeID, uuid.Nil, starts[0], "first", from)
	if r := a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: "first", Patient: patient}, "X-Forwarded-For", from); r.Status != http.StatusCreated {
		t.Fatalf("the first booking: %d %s", r.Status, r.Body)
	}
	h = a.holdFrom(t, typeID, uuid.Nil, starts[1], "second", from)
	r := a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: "second", Patient: patient}, "X-Forwarded-For", from)
	wantError(t, r, http.StatusTooManyRequests, "COOLDOWN", "")
	r = apiHold(t, a, c, starts[1], "third", "X-Forwarded-For", from)
	wantError(t, r, http.StatusTooManyRequests, "HOLD_RECLAIM_TOO_SOON", "")
	a.holdFrom(t, typeID, uuid.Nil, starts[1], "rival", "198.51.100.51")
}
