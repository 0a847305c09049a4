package web_test

// Tests of who may reach the staff routes: every route of the staff group
// wants a session (routes.go is read to check none is missed), every
// change wants the session's CSRF token, admin pages want an admin, and
// another clinic's ids are not found. And the headers every staff page
// carries.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// staffRoute is a staff route with its path filled in.
type staffRoute struct {
	Method, Pattern, Path string
	Form                  url.Values
}

// staffRequest is a page a browser opens or a form it posts.
type staffRequest struct {
	method, path string
	form         url.Values
}

// sendAs opens the page or posts the form as cl.
func (r staffRequest) sendAs(cl *client) *response {
	cl.t.Helper()
	if r.method == "GET" {
		return cl.Get(r.path)
	}
	return cl.Post(r.path, r.form)
}

// staffRoutes are every route of the staff group, with c's ids (or the
// given ones) filled in. checkRouteList proves no route is missing.
func staffRoutes(sp, typ uuid.UUID, override int64, bk uuid.UUID) []staffRoute {
	spS, typS, ovS, bkS := sp.String(), typ.String(), strconv.FormatInt(override, 10), bk.String()
	return append(roomRoutes(typS, bkS), []staffRoute{
		{"GET", "", "/staff", nil},
		{"GET", "/live", "/staff/live", nil},
		{"GET", "/day", "/staff/day?date=2030-01-07", nil},
		{"GET", "/day/live", "/staff/day/live?date=2030-01-07", nil},
		{"GET", "/week", "/staff/week?date=2030-01-07", nil},
		{"GET", "/week/live", "/staff/week/live?date=2030-01-07", nil},
		{"GET", "/bookings/search", "/staff/bookings/search?q=x", nil},
		{"GET", "/specialists", "/staff/specialists", nil},
		{"GET", "/specialists/:id", "/staff/specialists/" + spS, nil},
		{"GET", "/types", "/staff/types", nil},
		{"GET", "/types/new", "/staff/types/new", nil},
		{"GET", "/types/:id", "/staff/types/" + typS, nil},
		{"GET", "/audit", "/staff/audit", nil},
		{"GET", "/patients/export", "/staff/patients/export", nil},
		{"GET", "/users", "/staff/users", nil},
		{"GET", "/kiosks", "/staff/kiosks", nil},
		{"GET", "/settings", "/staff/settings", nil},
		{"GET", "/patients", "/staff/patients?email=nobody@example.org", nil},
		{"GET", "/bookings/:id", "/staff/bookings/" + bkS, nil},
		{"GET", "/outbox", "/staff/outbox", nil},
		{"GET", "/waitlist", "/staff/waitlist", nil},
		{"GET", "/waitlist/:id/offer", "/staff/waitlist/" + bkS + "/offer", nil},
		{"POST", "/waitlist/:id/offer", "/staff/waitlist/" + bkS + "/offer", url.Values{"specialist": {spS}, "start": {"2030-01-07T09:00:00Z"}}},
		{"POST", "/waitlist/:id/remove", "/staff/waitlist/" + bkS + "/remove", url.Values{"confirm": {"yes"}}},
		{"GET", "/outbox/:id", "/staff/outbox/" + bkS, nil},
		{"GET", "/outbox/:id/message.html", "/staff/outbox/" + bkS + "/message.html", nil},
		{"GET", "/outbox/:id/message.eml", "/staff/outbox/" + bkS + "/message.eml", nil},
		{"GET", "/outbox/:id/calendar.ics", "/staff/outbox/" + bkS + "/calendar.ics", nil},
		{"POST", "/outbox/held/:id/send", "/staff/outbox/held/" + bkS + "/send", url.Values{}},
		{"POST", "/logout", "/staff/logout", url.Values{}},
		{"POST", "/bookings", "/staff/bookings", url.Values{"type": {typS}, "specialist": {spS}, "date": {"2030-01-07"}, "time": {"10:00"}, "name": {"X"}, "email": {"x@example.org"}}},
		{"POST", "/bookings/:id/cancel", "/staff/bookings/" + bkS + "/cancel", url.Values{"reason": {"r"}}},
		{"POST", "/bookings/:id/reschedule", "/staff/bookings/" + bkS + "/reschedule", url.Values{"start": {"2030-01-07T10:00"}, "version": {"1"}, "reason": {"r"}}},
		{"GET", "/bookings/:id/move", "/staff/bookings/" + bkS + "/move", nil},
		{"GET", "/bookings/:id/dialog", "/staff/bookings/" + bkS + "/dialog", nil},
		{"POST", "/bookings/:id/attendance", "/staff/bookings/" + bkS + "/attendance", url.Values{"mark": {"arrived"}}},
		{"GET", "/day/sheet", "/staff/day/sheet?date=2030-01-07", nil},
		{"POST", "/desk/new", "/staff/desk/new?specialist=" + spS + "&start=2030-01-07T09:00:00Z", nil},
		{"POST", "/desk/heartbeat", "/staff/desk/heartbeat", url.Values{"specialist": {spS}, "start": {"2030-01-07T09:00:00Z"}, "type": {typS}, "client": {"desk:x"}}},
		{"POST", "/desk/release", "/staff/desk/release", url.Values{}},
		{"POST", "/desk/book", "/staff/desk/book", url.Values{"specialist": {spS}, "start": {"2030-01-07T09:00:00Z"}, "type": {typS}, "name": {"X"}, "email": {"x@example.org"}, "Idempotency-Key": {"k"}}},
		{"GET", "/desk/noshows", "/staff/desk/noshows?email=x@example.org", nil},
		{"GET", "/desk/patients", "/staff/desk/patients?name=Patient", nil},
		{"POST", "/specialists", "/staff/specialists", url.Values{"name": {"Intruder"}, "priority": {"1"}, "active": {"on"}}},
		{"POST", "/specialists/:id", "/staff/specialists/" + spS, url.Values{"name": {"Intruder"}, "priority": {"1"}, "active": {"on"}, "version": {"1"}}},
		{"POST", "/specialists/:id/hours", "/staff/specialists/" + spS + "/hours", url.Values{"hours.monday": {"01:00-02:00"}, "version": {"1"}}},
		{"POST", "/specialists/:id/overrides", "/staff/specialists/" + spS + "/overrides", url.Values{"day": {"2030-01-07"}, "closed": {"on"}, "version": {"1"}}},
		{"POST", "/overrides/:id/delete", "/staff/overrides/" + ovS + "/delete", url.Values{"version": {"1"}}},
		{"GET", "/closures", "/staff/closures", nil},
		{"POST", "/closures", "/staff/closures", url.Values{"specialist": {spS}, "first": {"2031-03-03"}, "last": {"2031-03-04"}, "note": {"Course"}}},
		{"GET", "/closures/:id", "/staff/closures/999999999", nil},
		{"POST", "/closures/:id/delete", "/staff/closures/999999999/delete", url.Values{}},
		{"POST", "/closures/:id/cancel", "/staff/closures/999999999/cancel", url.Values{"reason": {"r"}}},
		{"GET", "/holidays", "/staff/holidays?year=2031", nil},
		{"POST", "/holidays", "/staff/holidays", url.Values{"year": {"2031"}, "holidays": {"2031-12-25 Christmas Day"}}},
		{"POST", "/types", "/staff/types", url.Values{"name": {"Intruder"}, "durationMin": {"30"}, "slotStepMin": {"30"}, "maxAdvanceDays": {"30"}, "maxHoldsPerClient": {"1"}}},
		{"POST", "/types/:id", "/staff/types/" + typS, url.Values{"name": {"Intruder"}, "durationMin": {"30"}, "slotStepMin": {"30"}, "maxAdvanceDays": {"30"}, "maxHoldsPerClient": {"1"}, "version": {"1"}}},
		{"POST", "/users", "/staff/users", url.Values{"email": {"intruder@example.org"}, "name": {"I"}, "password": {"long enough password"}, "role": {"admin"}}},
		{"POST", "/users/access", "/staff/users/access", url.Values{"id": {uuid.NewString()}, "action": {"disable"}}},
		{"POST", "/users/link", "/staff/users/link", url.Values{"id": {uuid.NewString()}}},
		{"POST", "/users/role", "/staff/users/role", url.Values{"id": {uuid.NewString()}, "role": {"staff"}}},
		{"GET", "/users/:id/access", "/staff/users/" + uuid.NewString() + "/access", nil},
		{"GET", "/access", "/staff/access?email=fixture@example.org", nil},
		{"GET", "/account", "/staff/account", nil},
		{"POST", "/account", "/staff/account", url.Values{"current": {"not the password"}, "password": {"x"}, "confirm": {"y"}}},
		{"POST", "/users/second-factor/reset", "/staff/users/second-factor/reset", url.Values{"id": {uuid.NewString()}}},
		{"POST", "/users/second-factor/require", "/staff/users/second-factor/require", url.Values{"required": {"off"}}},
		{"GET", "/account/second-factor", "/staff/account/second-factor", nil},
		{"POST", "/account/second-factor", "/staff/account/second-factor", url.Values{"code": {"not a code"}}},
		{"POST", "/account/sessions/end", "/staff/account/sessions/end", url.Values{"id": {uuid.NewString()}}},
		{"POST", "/account/sessions/end-others", "/staff/account/sessions/end-others", url.Values{}},
		{"POST", "/kiosks", "/staff/kiosks", url.Values{"name": {"Intruder"}}},
		{"POST", "/kiosks/revoke", "/staff/kiosks/revoke", url.Values{"id": {uuid.NewString()}}},
		{"POST", "/kiosks/language", "/staff/kiosks/language", url.Values{"id": {uuid.NewString()}, "language": {"de"}}},
		{"POST", "/settings", "/staff/settings", url.Values{"name": {"Intruder"}, "version": {"1"}}},
		{"POST", "/settings/feeds", "/staff/settings/feeds", url.Values{"names": {"off"}}},
		{"POST", "/specialists/:id/feed", "/staff/specialists/" + spS + "/feed", url.Values{"action": {"revoke"}}},
		{"POST", "/specialists/:id/feed/link", "/staff/specialists/" + spS + "/feed/link", url.Values{"account": {uuid.NewString()}}},
		{"POST", "/account/feed", "/staff/account/feed", url.Values{"action": {"revoke"}}},
		{"POST", "/patients/erase", "/staff/patients/erase", url.Values{"email": {"nobody@example.org"}, "confirm": {"nobody@example.org"}}},
	}...)
}

var routeDecl = regexp.MustCompile(`\bst\.(GET|POST|PUT|PATCH|DELETE)\("([^"]*)"`)

// checkRouteList fails when routes.go has a signed-in staff route the
// list does not cover.
func checkRouteList(t *testing.T, routes []staffRoute) {
	t.Helper()
	src, err := staffRouteSources()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, r := range routes {
		have[r.Method+" "+r.Pattern] = true
	}
	decls := routeDecl.FindAllStringSubmatch(string(src), -1)
	if len(decls) < 20 {
		t.Fatalf("found only %d staff routes in the package: the pattern is out of date", len(decls))
	}
	for _, m := range decls {
		if !have[m[1]+" "+m[2]] {
			t.Errorf("staff route %s /staff%s is not covered by the route list of these tests", m[1], m[2])
		}
	}
}

// staffRouteSources is the code (not the tests) of web and of its
// audiences' packages, wherever a staff route might be declared: routes.go
// lists them all, and a route a package added on its own is read too.
func staffRouteSources() ([]byte, error) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		return nil, err
	}
	sub, err := filepath.Glob(filepath.Join("*", "*.go"))
	if err != nil {
		return nil, err
	}
	files = append(files, sub...)
	var src []byte
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		src = append(src, b...)
	}
	return src, nil
}

// routeFixtures gives a clinic an override and a booking, for the routes
// that name one.
func routeFixtures(t testing.TB, a *app, c clinic) (overrideID int64, bk booking.Booking) {
	t.Helper()
	ctx := context.Background()
	sp := c.Specialists[0]
	day := c.Next(time.Wednesday, 0, 0)
	overrideID, err := db.New(a.Pool).OverrideInsert(ctx, db.OverrideInsertParams{
		ClinicID: c.ID, SpecialistID: sp.ID, Day: time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC), Closed: true, Note: "fixture",
	})
	if err != nil {
		t.Fatal(err)
	}
	conf := a.bookAs(t, c, c.Type0(), sp.ID, c.Next(time.Tuesday, 14, 0), booking.Patient{Name: "Fixture Patient", Email: "fixture@example.org"})
	return overrideID, conf.Booking
}

func TestStaffSecurityHeaders(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	anon := a.newClient(t)
	anon.Get("/staff/login")
	for _, r := range []*response{
		anon.Get("/staff/login"),
		anon.Get("/staff"), // redirect
		anon.Post("/staff/login", url.Values{"email": {"x@example.org"}, "password": {"x"}}),
		anon.PostRaw("/staff/login", url.Values{}, nil), // 403
		admin.Get("/staff"),
		admin.Get("/staff/specialists/" + uuid.NewString()), // 404 page
		admin.Get("/staff/audit"),
	} {
		h := r.Header
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s (%d): Content-Security-Policy %q", r.what, r.Status, csp)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") == "" {
			t.Errorf("%s (%d): X-Frame-Options %q, X-Content-Type-Options %q, Referrer-Policy %q", r.what, r.Status,
				h.Get("X-Frame-Options"), h.Get("X-Content-Type-Options"), h.Get("Referrer-Policy"))
		}
	}
	if cc := admin.Get("/staff/specialists").Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("a signed-in staff page may be cached: Cache-Control %q", cc)
	}
}

// Not signed in, every staff route sends the browser to the sign-in page
// (sign-in is checked before the session's CSRF token, which a browser
// that is not signed in does not have); htmx requests get HX-Redirect.
func TestStaffNotSignedInRedirectsToSignIn(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	ov, bk := routeFixtures(t, a, c)
	routes := staffRoutes(c.Specialists[0].ID, c.Types[0].ID, ov, bk.ID)
	checkRouteList(t, routes)
	before := a.auditCount(t, c.ID)

	anon := a.newClient(t)
	for _, r := range routes {
		var res *response
		if r.Method == "GET" {
			res = a.newClient(t).Get(r.Path) // no cookie at all
		} else {
			anon.Get("/staff/login").Want(http.StatusOK) // the sign-in form's token, worth nothing here
			res = anon.Post(r.Path, r.Form)
		}
		if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/staff/login" {
			t.Errorf("%s %s not signed in: %d to %q, want 303 to /staff/login", r.Method, r.Path, res.Status, res.Header.Get("Location"))
		}
	}
	hx := a.newClient(t).do("GET", "/staff/specialists", nil, http.Header{"Hx-Request": {"true"}})
	if hx.Status != http.StatusUnauthorized || hx.Header.Get("HX-Redirect") != "/staff/login" {
		t.Errorf("htmx request not signed in: %d, HX-Redirect %q", hx.Status, hx.Header.Get("HX-Redirect"))
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("requests that were not signed in wrote %d audit rows", n-before)
	}
}

// Signed in, every POST without the session's CSRF token (or with a wrong
// one) is refused with 403 and changes nothing; the token as a header, as
// htmx sends it, works.
func TestStaffCSRF(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	ov, bk := routeFixtures(t, a, c)
	admin := a.signIn(t, c.Admin)
	sp := a.specialist(t, c, c.Specialists[0].ID)
	before := a.auditCount(t, c.ID)
	gen := a.generation(t, c.ID)

	for _, r := range staffRoutes(sp.ID, c.Types[0].ID, ov, bk.ID) {
		if r.Method != "POST" {
			continue
		}
		for _, tok := range []string{"", "0000" + admin.CSRF[4:]} {
			form := cloneValues(r.Form)
			if tok != "" {
				form.Set("_csrf", tok)
			}
			res := admin.PostRaw(r.Path, form, nil)
			if res.Status != http.StatusForbidden {
				t.Errorf("%s with CSRF token %q: %d, want 403", r.Path, tok, res.Status)
				continue
			}
			if msg := res.Text(`[data-testid="error-page"]`); !strings.Contains(msg, "expired or came from another site") {
				t.Errorf("%s without CSRF: page says %q", r.Path, msg)
			}
		}
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Fatalf("requests without a CSRF token wrote %d audit rows", n-before)
	}
	if now := a.specialist(t, c, sp.ID); now.Name != sp.Name || now.Version != sp.Version {
		t.Fatalf("the specialist changed: %+v", now)
	}
	if g := a.generation(t, c.ID); g != gen {
		t.Errorf("refused requests bumped the slot generation %d -> %d", gen, g)
	}
	// Sign-out without the token did not sign out.
	admin.Get("/staff").Want(http.StatusOK)

	// The header htmx sends.
	res := admin.PostRaw("/staff/specialists", url.Values{"name": {"Via header"}, "priority": {"1"}, "active": {"on"}},
		http.Header{"X-Csrf-Token": {admin.CSRF}, "Hx-Request": {"true"}})
	if res.Status != http.StatusSeeOther {
		t.Fatalf("POST with X-CSRF-Token: %d", res.Status)
	}
	// A token of another session is not this session's.
	other := a.signIn(t, c.Staff)
	if other.CSRF == admin.CSRF {
		t.Fatal("two sessions share a CSRF token")
	}
	admin.Post("/staff/specialists", url.Values{"name": {"Cross"}, "priority": {"1"}, "_csrf": {other.CSRF}}).Want(http.StatusForbidden)
}

// A staff member (not admin) runs the calendar and keeps specialists'
// hours and overrides, but cannot manage specialists, types, accounts or
// kiosk tokens, nor read the audit log.
func TestStaffRoleIsForbiddenAdminPages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	s := a.signIn(t, c.Staff)
	sp, typ := c.Specialists[0], c.Types[0]
	before := a.auditCount(t, c.ID)

	forbidden := []staffRequest{
		{"POST", "/staff/specialists", url.Values{"name": {"Dr. Staff"}, "priority": {"1"}, "active": {"on"}}},
		{"POST", "/staff/specialists/" + sp.ID.String(), url.Values{"name": {"Renamed"}, "priority": {"1"}, "active": {"on"}, "version": {strconv.Itoa(int(sp.Version))}}},
		{"GET", "/staff/types", nil},
		{"GET", "/staff/types/new", nil},
		{"GET", "/staff/types/" + typ.ID.String(), nil},
		{"GET", "/staff/audit", nil},
		{"POST", "/staff/types", url.Values{"name": {"Staff type"}, "durationMin": {"30"}, "slotStepMin": {"30"}, "maxAdvanceDays": {"30"}, "maxHoldsPerClient": {"1"}}},
		{"POST", "/staff/types/" + typ.ID.String(), url.Values{"name": {"Renamed"}, "durationMin": {"30"}, "slotStepMin": {"30"}, "maxAdvanceDays": {"30"}, "maxHoldsPerClient": {"1"}, "version": {strconv.Itoa(int(typ.Version))}}},
		{"GET", "/staff/users", nil},
		{"POST", "/staff/users", url.Values{"email": {"promoted@example.org"}, "name": {"P"}, "password": {"long enough password"}, "role": {"admin"}}},
		{"GET", "/staff/kiosks", nil},
		{"POST", "/staff/kiosks", url.Values{"name": {"Lobby"}}},
		{"POST", "/staff/kiosks/revoke", url.Values{"id": {uuid.NewString()}}},
	}
	for _, f := range forbidden {
		r := f.sendAs(s)
		if r.Status != http.StatusForbidden {
			t.Errorf("staff %s %s: %d, want 403", f.method, f.path, r.Status)
		} else if msg := r.Text(`[data-testid="error-page"]`); !strings.Contains(msg, "Only an admin") {
			t.Errorf("staff %s %s: page says %q", f.method, f.path, msg)
		}
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Fatalf("forbidden requests wrote %d audit rows", n-before)
	}
	if now := a.specialist(t, c, sp.ID); now.Name != sp.Name {
		t.Fatalf("the specialist was renamed to %q", now.Name)
	}
	for _, p := range []string{"/staff", "/staff/specialists", "/staff/specialists/" + sp.ID.String(), "/staff/bookings/search"} {
		r := s.Get(p).Want(http.StatusOK)
		if r.Doc().Find(`a[href="/staff/users"], a[href="/staff/kiosks"], a[href="/staff/types"], a[href="/staff/audit"]`).Length() != 0 {
			t.Errorf("%s shows a staff member the admin links", p)
		}
	}
	if s.Get("/staff/specialists").Doc().Find(`form[action="/staff/specialists"]`).Length() != 0 {
		t.Error("the specialist list offers a staff member the add form")
	}
	page := s.Get("/staff/specialists/" + sp.ID.String())
	if page.Doc().Find(`[data-testid="specialist-form"]`).Length() != 0 {
		t.Error("the specialist page offers a staff member the edit form")
	}
	if s.Get("/staff/types/"+typ.ID.String()).Want(http.StatusForbidden).Doc().Find(`[data-testid="type-form"]`).Length() != 0 {
		t.Error("the type page shows a staff member the type form")
	}
}

// Another clinic's ids are not found through any staff route, and nothing
// of that clinic changes.
func TestStaffOtherClinicsIDsAreNotFound(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	mine := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	other := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	ov, bk := routeFixtures(t, a, other)
	osp := a.specialist(t, other, other.Specialists[0].ID)
	otyp := other.Types[0]
	token, err := a.Deps.Practice.CreateKioskToken(context.Background(), other.Admin.User(other.ID), "Their lobby")
	if err != nil {
		t.Fatal(err)
	}
	tokens, _ := db.New(a.Pool).KioskTokenListByClinic(context.Background(), other.ID)
	admin := a.signIn(t, mine.Admin)
	otherAudit, myAudit := a.auditCount(t, other.ID), a.auditCount(t, mine.ID)

	for _, tc := range otherClinicRequests(other, osp, ov, bk, tokens[0].ID) {
		r := tc.sendAs(admin)
		if r.Status != http.StatusNotFound {
			t.Errorf("%s %s (other clinic's id): %d, want 404\n%s", tc.method, tc.path, r.Status, clip(r.Body, 500))
		}
		if strings.Contains(r.Body, osp.Name+"<") || strings.Contains(r.Body, "Fixture Patient") {
			t.Errorf("%s %s shows the other clinic's data", tc.method, tc.path)
		}
	}
	// Phone-booking their specialist or type from my calendar.
	r := admin.Post("/staff/bookings", url.Values{"type": {otyp.ID.String()}, "specialist": {osp.ID.String()}, "date": {other.Next(time.Thursday, 0, 0).Format(time.DateOnly)}, "time": {"10:00"}, "name": {"X"}, "email": {"x@example.org"}})
	if r.Status < 400 || r.Status >= 500 {
		t.Errorf("phone booking with the other clinic's type: %d", r.Status)
	}
	r = admin.Post("/staff/bookings", url.Values{"type": {mine.Types[0].ID.String()}, "specialist": {osp.ID.String()}, "date": {mine.Next(time.Thursday, 0, 0).Format(time.DateOnly)}, "time": {"10:00"}, "name": {"X"}, "email": {"x@example.org"}})
	if r.Status < 400 || r.Status >= 500 {
		t.Errorf("phone booking with the other clinic's specialist: %d", r.Status)
	}
	// A type of mine performed by their specialist.
	r = admin.Post("/staff/types", url.Values{"name": {"Mine"}, "durationMin": {"30"}, "slotStepMin": {"30"}, "maxAdvanceDays": {"30"}, "maxHoldsPerClient": {"1"}, "specialists": {osp.ID.String()}})
	if r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a type performed by the other clinic's specialist: %d, want 422", r.Status)
	}
	// Lists, search, audit and calendar show none of theirs.
	for _, p := range []string{"/staff/specialists", "/staff/types", "/staff/audit", "/staff/bookings/search?q=Fixture", "/staff?date=" + bk.Start.In(other.Loc).Format(time.DateOnly), "/staff/kiosks"} {
		body := admin.Get(p).Want(http.StatusOK).Body
		for _, leak := range []string{osp.ID.String(), otyp.ID.String(), "Fixture Patient", "fixture@example.org", other.Admin.Email, "Their lobby"} {
			if strings.Contains(body, leak) {
				t.Errorf("%s shows the other clinic's %q", p, leak)
			}
		}
	}

	// Nothing of theirs changed.
	wantOtherClinicUnchanged(t, a, other, osp, ov, bk, token)
	if n := a.auditCount(t, other.ID); n != otherAudit {
		t.Errorf("%d audit rows written to the other clinic", n-otherAudit)
	}
	if n := a.auditCount(t, mine.ID); n != myAudit {
		t.Errorf("%d audit rows written to my clinic by refused requests", n-myAudit)
	}
}

// otherClinicRequests are requests that name ids of the clinic other: its
// specialist, type, override, booking and kiosk token.
func otherClinicRequests(other clinic, osp db.Specialist, ov int64, bk booking.Booking, tokenID uuid.UUID) []staffRequest {
	otyp := other.Types[0]
	ver := strconv.Itoa(int(osp.Version))
	return []staffRequest{
		{"GET", "/staff/specialists/" + osp.ID.String(), nil},
		{"POST", "/staff/specialists/" + osp.ID.String(), url.Values{"name": {"Hijacked"}, "priority": {"1"}, "version": {ver}}},
		{"POST", "/staff/specialists/" + osp.ID.String() + "/hours", url.Values{"hours.monday": {"01:00-02:00"}, "version": {ver}}},
		{"POST", "/staff/specialists/" + osp.ID.String() + "/overrides", url.Values{"day": {"2030-01-07"}, "closed": {"on"}, "version": {ver}}},
		{"POST", "/staff/overrides/" + strconv.FormatInt(ov, 10) + "/delete", url.Values{"version": {ver}}},
		{"GET", "/staff/types/" + otyp.ID.String(), nil},
		{"GET", "/staff/bookings/" + bk.ID.String(), nil},
		{"POST", "/staff/types/" + otyp.ID.String(), url.Values{"name": {"Hijacked"}, "durationMin": {"30"}, "slotStepMin": {"30"}, "maxAdvanceDays": {"30"}, "maxHoldsPerClient": {"1"}, "version": {strconv.Itoa(int(otyp.Version))}}},
		{"POST", "/staff/bookings/" + bk.ID.String() + "/cancel", url.Values{"reason": {"not mine"}}},
		{"POST", "/staff/bookings/" + bk.ID.String() + "/reschedule", url.Values{"start": {bk.Start.In(other.Loc).Add(time.Hour).Format("2006-01-02T15:04")}, "version": {strconv.Itoa(int(bk.Version))}, "reason": {"not mine"}}},
		{"GET", "/staff/bookings/" + bk.ID.String() + "/move", nil},
		{"GET", "/staff/bookings/" + bk.ID.String() + "/dialog", nil},
		{"POST", "/staff/bookings/" + bk.ID.String() + "/attendance", url.Values{"mark": {"arrived"}}},
		{"POST", "/staff/desk/new?specialist=" + osp.ID.String() + "&start=" + url.QueryEscape(bk.Start.Add(time.Hour).UTC().Format(time.RFC3339)), nil},
		{"POST", "/staff/desk/book", url.Values{"specialist": {osp.ID.String()}, "start": {bk.Start.Add(time.Hour).UTC().Format(time.RFC3339)}, "type": {otyp.ID.String()}, "name": {"X"}, "email": {"x@example.org"}, "Idempotency-Key": {"k"}}},
		{"GET", "/staff?specialist=" + osp.ID.String(), nil},
		{"GET", "/staff/live?specialist=" + osp.ID.String(), nil},
		{"GET", "/staff/day?specialists=" + osp.ID.String(), nil},
		{"GET", "/staff/day/live?specialists=" + osp.ID.String(), nil},
		{"GET", "/staff/week?specialist=" + osp.ID.String(), nil},
		{"GET", "/staff/week/live?specialist=" + osp.ID.String(), nil},
		{"POST", "/staff/kiosks/revoke", url.Values{"id": {tokenID.String()}}},
	}
}

// wantOtherClinicUnchanged checks the specialist, override, booking and
// kiosk token of the clinic other are as they were.
func wantOtherClinicUnchanged(t *testing.T, a *app, other clinic, osp db.Specialist, ov int64, bk booking.Booking, token string) {
	t.Helper()
	if now := a.specialist(t, other, osp.ID); now.Name != osp.Name || now.Version != osp.Version || !now.Active {
		t.Errorf("their specialist changed: %+v", now)
	}
	if got, err := db.New(a.Pool).OverrideGet(context.Background(), db.OverrideGetParams{ID: ov, ClinicID: other.ID}); err != nil || got.Note != "fixture" {
		t.Errorf("their override: %+v %v", got, err)
	}
	if b := a.booking(t, bk.ID); b.Status != booking.StatusConfirmed || !b.Start.Equal(bk.Start) {
		t.Errorf("their booking changed: %+v", b)
	}
	if ok, _ := a.Deps.Practice.KioskTokenValid(context.Background(), other.ID, token); !ok {
		t.Error("their kiosk token was revoked")
	}
}
