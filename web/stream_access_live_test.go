package web_test

// Tests of the end of a live stream when its access ends: a staff
// member's stream at sign-out, a deleted or expired session or a disabled
// account; a kiosk board's when its device token is revoked. The boards of
// one clinic share their access checks.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
)

// accessEndWait is how long a stream may take to notice that its access
// ended (it checks every 2 s).
const accessEndWait = 8 * time.Second

// openStaffLive opens the staff calendar's stream of cl.
func openStaffLive(t *testing.T, a *app, cl *client, query string) *sseConn {
	t.Helper()
	s := dialSSE(t, cl.hc, a.URL+"/staff/live"+query)
	s.must(evWait, "the first day block")
	return s
}

// wantStreamEnd waits for the stream's end event and checks its reason.
func wantStreamEnd(t *testing.T, s *sseConn, reason string) {
	t.Helper()
	end, _ := s.until(accessEndWait, "the end event", func(e sseEvent) bool { return e.Name == "end" })
	if end.Data() != reason {
		t.Fatalf("the stream ended with %q, want %q", end.Data(), reason)
	}
	s.closes(evWait)
}

func TestStaffStreamsEndWhenAccessEnds(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})

	t.Run("SignOut", func(t *testing.T) {
		t.Parallel()
		cl := a.signIn(t, a.newAccount(t, c.ID, "staff"))
		s := openStaffLive(t, a, cl, "?view=day")
		cl.Post("/staff/logout", nil).WantRedirect("/staff/login")
		wantStreamEnd(t, s, "access-ended")
	})

	t.Run("SessionDeletedFromTheStore", func(t *testing.T) {
		t.Parallel()
		cl := a.signIn(t, a.newAccount(t, c.ID, "staff"))
		s := openStaffLive(t, a, cl, "?view=day")
		if _, err := a.Pool.Exec(context.Background(), `DELETE FROM sessions WHERE token = $1`, cl.Cookie()); err != nil {
			t.Fatal(err)
		}
		wantStreamEnd(t, s, "access-ended")
	})

	t.Run("SessionExpired", func(t *testing.T) {
		t.Parallel()
		cl := a.signIn(t, a.newAccount(t, c.ID, "staff"))
		s := openStaffLive(t, a, cl, "?view=day")
		if _, err := a.Pool.Exec(context.Background(), `UPDATE sessions SET expiry = now() - interval '1 second' WHERE token = $1`, cl.Cookie()); err != nil {
			t.Fatal(err)
		}
		wantStreamEnd(t, s, "access-ended")
	})

	t.Run("AccountDisabled", func(t *testing.T) {
		t.Parallel()
		acc := a.newAccount(t, c.ID, "staff")
		cl := a.signIn(t, acc)
		s := openStaffLive(t, a, cl, "?view=day")
		quiet := a.signIn(t, a.newAccount(t, c.ID, "staff"))
		other := openStaffLive(t, a, quiet, "?view=day") // the same live view, another viewer

		admin := a.signIn(t, c.Admin)
		page := admin.Get("/staff/users").Want(http.StatusOK)
		if page.Doc().Find(`[data-testid="user-access-form"] input[name="id"][value="`+c.Admin.ID.String()+`"]`).Length() != 0 {
			t.Error("the admin is offered to disable their own account")
		}
		before := a.auditCount(t, c.ID)
		r := admin.Post("/staff/users/access", url.Values{"id": {acc.ID.String()}, "action": {"disable"}}).Want(http.StatusOK)
		if !strings.Contains(r.Text(`[data-testid="table"]`), "disabled") {
			t.Errorf("the list does not show the account disabled: %q", r.Text(`[data-testid="table"]`))
		}
		if got := a.lastAudit(t, c.ID); got.Action != "staff.disable" || got.EntityID != acc.ID.String() || a.auditCount(t, c.ID) != before+1 {
			t.Errorf("audit: %s %s", got.Action, got.EntityID)
		}
		wantStreamEnd(t, s, "access-ended")
		// Only the disabled account's stream ends.
		for deadline := time.Now().Add(2500 * time.Millisecond); time.Now().Before(deadline); {
			if ev, ok, closed := other.next(time.Until(deadline)); closed || (ok && ev.Name == "end") {
				t.Fatalf("another account's stream on the same view ended too (%q)", ev.Data())
			}
		}

		cl.Get("/staff").WantRedirect("/staff/login")
		again := a.newClient(t)
		again.Get("/staff/login")
		r = again.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {password}}).Want(http.StatusUnauthorized)
		if msg := r.Text(`[data-testid="login-error"]`); msg != "The e-mail address or the password is not right." {
			t.Errorf("a disabled account's sign-in says %q; it must read as wrong credentials", msg)
		}

		admin.Post("/staff/users/access", url.Values{"id": {acc.ID.String()}, "action": {"enable"}}).Want(http.StatusOK)
		again.Get("/staff/login")
		again.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {password}}).WantRedirect("/staff/day")
	})

	t.Run("AnAdminCannotDisableThemselvesAndStaffCannotDisableAnyone", func(t *testing.T) {
		t.Parallel()
		admin := a.signIn(t, c.Admin)
		r := admin.Post("/staff/users/access", url.Values{"id": {c.Admin.ID.String()}, "action": {"disable"}}).Want(http.StatusBadRequest)
		if !strings.Contains(r.Text(`[role="alert"]`), "your own account") {
			t.Errorf("disabling oneself says %q", r.Text(`[role="alert"]`))
		}
		admin.Get("/staff").Want(http.StatusOK)
		nurse := a.signIn(t, c.Staff)
		nurse.Post("/staff/users/access", url.Values{"id": {c.Admin.ID.String()}, "action": {"disable"}}).Want(http.StatusForbidden)
		admin.Get("/staff").Want(http.StatusOK)
	})
}

func TestKioskStreamEndsWhenItsTokenIsRevoked(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	_, device := createKioskToken(t, admin, "Waiting room")
	board := dialSSE(t, nil, a.URL+"/kiosk/"+c.Slug+"/live?device="+device)
	board.must(evWait, "the board's first block")

	id := kioskTokenID(admin.Get("/staff/kiosks"), "Waiting room")
	admin.Post("/staff/kiosks/revoke", url.Values{"id": {id}}).Want(http.StatusOK)
	wantStreamEnd(t, board, "access-ended")
}

// Kiosk boards are public, so there may be thousands: the boards of one
// clinic and token share one access check per instance, not one each.
func TestKioskStreamsOfOneClinicShareTheirAccessCheck(t *testing.T) {
	t.Parallel()
	pool, queries := testkit.CountedPool(t, testkit.DB(t))
	a := newApp(t, withPool(pool))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	_, device := createKioskToken(t, admin, "Waiting room")

	const boards = 50
	var open []*sseConn
	for range boards {
		b := dialSSE(t, nil, a.URL+"/kiosk/"+c.Slug+"/live?device="+device)
		b.must(evWait, "the board's first block")
		open = append(open, b)
	}
	// Nothing changes on the board now: what the pool runs is the boards'
	// access checks (and the app's own background work).
	const window = 5 * time.Second
	before := queries.Load()
	time.Sleep(window)
	ran := queries.Load() - before
	// One check per 1.5-2 s is 3 or 4 in the window; one per board would be
	// about boards*window/2s = 125.
	if ran > 12 {
		t.Fatalf("%d boards of one clinic ran %d queries in %v; want their access checks shared (a few)", boards, ran, window)
	}
	t.Logf("%d boards of one clinic: %d queries in %v", boards, ran, window)

	// A shared no still reaches every board.
	id := kioskTokenID(admin.Get("/staff/kiosks"), "Waiting room")
	admin.Post("/staff/kiosks/revoke", url.Values{"id": {id}}).Want(http.StatusOK)
	for _, b := range open {
		wantStreamEnd(t, b, "access-ended")
	}
}
