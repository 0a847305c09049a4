package web_test

// Tests of the roles through the web: every staff route (the list of
// staff_routes_test.go) with each role signed in is refused with 403 or
// let through as the role table says, the header links and the page forms
// are those the role may use, and an admin makes a reception account on
// the Staff accounts page that then works the desk.

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// routeActions is the action of the role table each staff route needs; ""
// is any signed-in account.
var routeActions = map[string]staff.Action{
	"GET ":                              staff.ActCalendar,
	"GET /live":                         staff.ActCalendar,
	"GET /day":                          staff.ActCalendar,
	"GET /day/live":                     staff.ActCalendar,
	"GET /week":                         staff.ActCalendar,
	"GET /week/live":                    staff.ActCalendar,
	"GET /bookings/search":              staff.ActSearch,
	"GET /specialists":                  staff.ActSpecialists,
	"GET /specialists/:id":              staff.ActSpecialists,
	"GET /types":                        staff.ActTypes,
	"GET /types/new":                    staff.ActTypes,
	"GET /types/:id":                    staff.ActTypes,
	"GET /audit":                        staff.ActAudit,
	"GET /patients/export":              staff.ActPatientExport,
	"GET /users":                        staff.ActAccounts,
	"GET /kiosks":                       staff.ActKiosks,
	"GET /settings":                     staff.ActSettings,
	"GET /bookings/:id":                 staff.ActSearch,
	"GET /outbox":                       staff.ActSearch,
	"GET /waitlist":                     staff.ActBook,
	"GET /waitlist/:id/offer":           staff.ActBook,
	"POST /waitlist/:id/offer":          staff.ActBook,
	"POST /waitlist/:id/remove":         staff.ActCancel,
	"GET /outbox/:id":                   staff.ActSearch,
	"GET /outbox/:id/message.html":      staff.ActSearch,
	"GET /outbox/:id/message.eml":       staff.ActSearch,
	"GET /outbox/:id/calendar.ics":      staff.ActSearch,
	"POST /outbox/held/:id/send":        staff.ActSettings,
	"POST /logout":                      "",
	"POST /bookings":                    staff.ActBook,
	"POST /bookings/:id/cancel":         staff.ActCancel,
	"POST /bookings/:id/reschedule":     staff.ActMove,
	"GET /bookings/:id/move":            staff.ActMove,
	"GET /bookings/:id/dialog":          staff.ActCalendar,
	"POST /bookings/:id/attendance":     staff.ActAttendance,
	"GET /day/sheet":                    staff.ActCalendar,
	"POST /desk/new":                    staff.ActBook,
	"POST /desk/heartbeat":              staff.ActBook,
	"POST /desk/release":                staff.ActBook,
	"POST /desk/book":                   staff.ActBook,
	"GET /desk/noshows":                 staff.ActBook,
	"GET /desk/patients":                staff.ActBook,
	"POST /specialists":                 staff.ActSpecialistsEdit,
	"POST /specialists/:id":             staff.ActSpecialistsEdit,
	"POST /specialists/:id/hours":       staff.ActHours,
	"POST /specialists/:id/overrides":   staff.ActOverrides,
	"POST /overrides/:id/delete":        staff.ActOverrides,
	"GET /closures":                     staff.ActClosures,
	"POST /closures":                    staff.ActClosures,
	"GET /closures/:id":                 staff.ActClosures,
	"POST /closures/:id/delete":         staff.ActClosures,
	"POST /closures/:id/cancel":         staff.ActClosures,
	"GET /holidays":                     staff.ActClosures,
	"POST /holidays":                    staff.ActClinicClosures,
	"POST /types":                       staff.ActTypes,
	"POST /types/:id":                   staff.ActTypes,
	"POST /users":                       staff.ActAccounts,
	"POST /users/access":                staff.ActAccounts,
	"POST /users/link":                  staff.ActAccounts,
	"POST /users/role":                  staff.ActAccounts,
	"GET /account":                      staff.ActPassword,
	"POST /account":                     staff.ActPassword,
	"POST /kiosks":                      staff.ActKiosks,
	"POST /kiosks/revoke":               staff.ActKiosks,
	"POST /settings":                    staff.ActSettings,
	"POST /settings/feeds":              staff.ActSettings,
	"POST /kiosks/language":             staff.ActKiosks,
	"POST /specialists/:id/feed":        staff.ActSpecialistsEdit,
	"POST /specialists/:id/feed/link":   staff.ActSpecialistsEdit,
	"POST /account/feed":                staff.ActCalendar,
	"POST /users/second-factor/reset":   staff.ActSecondFactorAdmin,
	"POST /users/second-factor/require": staff.ActSecondFactorAdmin,
	"GET /account/second-factor":        staff.ActSecondFactor,
	"POST /account/second-factor":       staff.ActSecondFactor,
	"POST /account/sessions/end":        staff.ActSecondFactor,
	"POST /account/sessions/end-others": staff.ActSecondFactor,
	"GET /patients":                     staff.ActPatients,
	"POST /patients/erase":              staff.ActErase,
	"GET /users/:id/access":             staff.ActAudit,
	"GET /access":                       staff.ActAudit,

	// The rooms pages.
	"GET /rooms":                               staff.ActSpecialists,
	"POST /rooms":                              staff.ActSpecialistsEdit,
	"POST /rooms/needs":                        staff.ActTypes,
	"GET /rooms/:id":                           staff.ActSpecialists,
	"POST /rooms/:id":                          staff.ActSpecialistsEdit,
	"POST /rooms/:id/hours":                    staff.ActHours,
	"POST /rooms/:id/closures":                 staff.ActClosures,
	"POST /rooms/:id/closures/:closure/delete": staff.ActClosures,
}

// routeAllowed is what each staff route answers a role that may use it,
// with the fixtures of routeFixtures and the forms of staffRoutes: the
// first such role's call, then the later ones' (which differ where the
// first changed something: the time it booked is taken, the hours it
// saved are a newer version). Many are refusals of the fixture (a 404 of
// an id that is not the route's kind, a 409 or 422 of a form left short):
// what counts is that the call got past the role check to the handler's
// own answer, and that answer is pinned.
var routeAllowed = map[string][2]int{
	"GET ":                              {200, 200},
	"GET /live":                         {200, 200},
	"GET /day":                          {200, 200},
	"GET /day/live":                     {200, 200},
	"GET /week":                         {200, 200},
	"GET /week/live":                    {200, 200},
	"GET /bookings/search":              {200, 200},
	"GET /specialists":                  {200, 200},
	"GET /specialists/:id":              {200, 200},
	"GET /types":                        {200, 200},
	"GET /types/new":                    {200, 200},
	"GET /types/:id":                    {200, 200},
	"GET /audit":                        {200, 200},
	"GET /patients/export":              {303, 303},
	"GET /users":                        {200, 200},
	"GET /kiosks":                       {200, 200},
	"GET /settings":                     {200, 200},
	"GET /bookings/:id":                 {200, 200},
	"GET /outbox":                       {200, 200},
	"GET /waitlist":                     {200, 200},
	"GET /waitlist/:id/offer":           {404, 404},
	"POST /waitlist/:id/offer":          {404, 404},
	"POST /waitlist/:id/remove":         {404, 404},
	"GET /outbox/:id":                   {404, 404},
	"GET /outbox/:id/message.html":      {404, 404},
	"GET /outbox/:id/message.eml":       {404, 404},
	"GET /outbox/:id/calendar.ics":      {404, 404},
	"POST /outbox/held/:id/send":        {404, 404},
	"POST /bookings":                    {201, 409},
	"POST /bookings/:id/cancel":         {200, 200},
	"POST /bookings/:id/reschedule":     {412, 412},
	"GET /bookings/:id/move":            {409, 409},
	"GET /bookings/:id/dialog":          {200, 200},
	"POST /bookings/:id/attendance":     {409, 409},
	"GET /day/sheet":                    {200, 200},
	"POST /desk/new":                    {409, 409},
	"POST /desk/heartbeat":              {200, 200},
	"POST /desk/release":                {200, 200},
	"POST /desk/book":                   {422, 422},
	"GET /desk/noshows":                 {200, 200},
	"GET /desk/patients":                {200, 200},
	"POST /specialists":                 {303, 303},
	"POST /specialists/:id":             {409, 409},
	"POST /specialists/:id/hours":       {303, 409},
	"POST /specialists/:id/overrides":   {409, 409},
	"POST /overrides/:id/delete":        {409, 409},
	"GET /closures":                     {200, 200},
	"POST /closures":                    {303, 303},
	"GET /closures/:id":                 {404, 404},
	"POST /closures/:id/delete":         {404, 404},
	"POST /closures/:id/cancel":         {404, 404},
	"GET /holidays":                     {200, 200},
	"POST /holidays":                    {303, 303},
	"POST /types":                       {303, 303},
	"POST /types/:id":                   {303, 303},
	"POST /users":                       {201, 201},
	"POST /users/access":                {404, 404},
	"POST /users/link":                  {404, 404},
	"POST /users/role":                  {404, 404},
	"GET /account":                      {200, 200},
	"POST /account":                     {400, 400},
	"POST /kiosks":                      {201, 201},
	"POST /kiosks/revoke":               {404, 404},
	"POST /settings":                    {400, 400},
	"POST /settings/feeds":              {303, 303},
	"POST /kiosks/language":             {404, 404},
	"POST /specialists/:id/feed":        {200, 200},
	"POST /specialists/:id/feed/link":   {422, 422},
	"POST /account/feed":                {200, 200},
	"POST /users/second-factor/reset":   {404, 404},
	"POST /users/second-factor/require": {200, 200},
	"GET /account/second-factor":        {200, 200},
	"POST /account/second-factor":       {400, 400},
	"POST /account/sessions/end":        {404, 404},
	"POST /account/sessions/end-others": {200, 200},
	"GET /patients":                     {200, 200},
	"POST /patients/erase":              {404, 404},
	"GET /users/:id/access":             {404, 404},
	"GET /access":                       {200, 200},

	// The rooms pages: a room added once (its name then taken), the
	// others refused as rooms that do not exist.
	"GET /rooms":                               {200, 200},
	"POST /rooms":                              {303, 422},
	"POST /rooms/needs":                        {303, 303},
	"GET /rooms/:id":                           {404, 404},
	"POST /rooms/:id":                          {404, 404},
	"POST /rooms/:id/hours":                    {404, 404},
	"POST /rooms/:id/closures":                 {404, 404},
	"POST /rooms/:id/closures/:closure/delete": {404, 404},
}

// navLinks are the header's links and the action each opens.
var navLinks = map[string]staff.Action{
	"/staff":                 staff.ActCalendar,
	"/staff/day":             staff.ActCalendar,
	"/staff/week":            staff.ActCalendar,
	"/staff/waitlist":        staff.ActBook,
	"/staff/bookings/search": staff.ActSearch,
	"/staff/specialists":     staff.ActSpecialists,
	"/staff/types":           staff.ActTypes,
	"/staff/closures":        staff.ActClosures,
	"/staff/rooms":           staff.ActSpecialists,
	"/staff/audit":           staff.ActAudit,
	"/staff/users":           staff.ActAccounts,
	"/staff/kiosks":          staff.ActKiosks,
	"/staff/settings":        staff.ActSettings,
	"/staff/patients":        staff.ActPatients,
	"/staff/outbox":          staff.ActSearch, // while no mail server is configured, as in these tests
}

// allows says whether role may use a route that needs action.
func allows(role string, action staff.Action) bool {
	return action == "" || slices.Contains(staff.RolesFor(action), role)
}

// Every staff route, with every role signed in: 403 with the role table's
// message (and nothing written) where the role may not, the handler's own
// answer (routeAllowed) where it may. The live calendar's stream is opened
// and dropped.
func TestStaffRolesEveryRoute(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	ov, bk := routeFixtures(t, a, c)
	routes := staffRoutes(c.Specialists[0].ID, c.Types[0].ID, ov, bk.ID)
	checkRouteList(t, routes)
	accounts := map[string]account{staff.RoleAdmin: c.Admin, staff.RoleStaff: c.Staff, staff.RoleReception: a.newAccount(t, c.ID, staff.RoleReception)}

	called := map[string]bool{} // routes an allowed role has called
	for _, role := range staff.Roles {
		cl := a.signIn(t, accounts[role])
		for _, r := range routes {
			action, known := routeActions[r.Method+" "+r.Pattern]
			if !known {
				t.Errorf("%s /staff%s has no action in routeActions", r.Method, r.Pattern)
				continue
			}
			if r.Pattern == "/logout" {
				continue // last, below
			}
			before := a.auditCount(t, c.ID)
			status, page := routeAs(t, a, cl, r)
			key := r.Method + " " + r.Pattern
			want := routeAllowed[key][0]
			if called[key] {
				want = routeAllowed[key][1]
			}
			if allows(role, action) {
				called[key] = true
			}
			switch {
			// Fails if a role check refuses a role the table allows (403),
			// or answers it otherwise than the handler does (a redirect, a
			// 404 in place of the page).
			case allows(role, action) && status != want:
				t.Errorf("%s %s %s: %d, want %d (%s may %s)\n%s", role, r.Method, r.Path, status, want, role, action, clip(page, 300))
			case !allows(role, action) && status != http.StatusForbidden:
				t.Errorf("%s %s %s: %d, want 403 (%s is for %v)", role, r.Method, r.Path, status, action, staff.RolesFor(action))
			case !allows(role, action):
				if !strings.Contains(page, "Only ") || !strings.Contains(page, "of this clinic can") {
					t.Errorf("%s %s %s: the refusal does not say who may: %s", role, r.Method, r.Path, clip(page, 300))
				}
				if n := a.auditCount(t, c.ID); n != before {
					t.Errorf("%s %s %s was refused but wrote %d audit rows", role, r.Method, r.Path, n-before)
				}
			}
		}
		cl.Post("/staff/logout", url.Values{}).WantRedirect("/staff/login")
	}
}

// routeAs sends r as cl and returns the status and the error page's text
// (the whole body when there is none); the stream is dropped once it
// answers.
func routeAs(t *testing.T, a *app, cl *client, r staffRoute) (int, string) {
	t.Helper()
	if strings.HasSuffix(r.Pattern, "/live") {
		res, cancel := getStream(t, cl.hc, a.URL+r.Path)
		defer cancel()
		return res.StatusCode, ""
	}
	var res *response
	if r.Method == "GET" {
		res = cl.Get(r.Path)
	} else {
		res = cl.Post(r.Path, r.Form)
	}
	if msg := res.Text(`[data-testid="error-page"]`); msg != "" {
		return res.Status, msg
	}
	return res.Status, res.Body
}

// The staff JSON API follows the same table: reading a specialist needs
// the specialists' pages and their hours, editing one an admin, setting
// hours the hours.
func TestStaffRolesAPI(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	path := "/v1/staff/specialists/" + c.Specialists[0].ID.String()
	accounts := map[string]account{staff.RoleAdmin: c.Admin, staff.RoleStaff: c.Staff, staff.RoleReception: a.newAccount(t, c.ID, staff.RoleReception)}
	// allowed is the status a role that may gets: a read answers, a change
	// on a stale version is refused as stale (412).
	calls := []struct {
		method, path, body string
		actions            []staff.Action
		allowed            int
	}{
		{http.MethodGet, path, "", []staff.Action{staff.ActSpecialists, staff.ActHours}, http.StatusOK},
		{http.MethodPatch, path, `{"priority":5}`, []staff.Action{staff.ActSpecialistsEdit}, http.StatusPreconditionFailed},
		{http.MethodPut, path + "/hours", `{"hours":[]}`, []staff.Action{staff.ActHours}, http.StatusPreconditionFailed},
	}
	for _, role := range staff.Roles {
		cl := a.signIn(t, accounts[role])
		for _, call := range calls {
			want := true
			for _, act := range call.actions {
				want = want && allows(role, act)
			}
			// A stale version: an allowed change is refused as stale, never
			// as forbidden, and changes nothing. Fails if a role check
			// refuses an allowed role, or if the version check stops
			// refusing a stale change (an allowed one would answer 200).
			res, _ := staffJSON(cl, call.method, call.path, call.body, "If-Match", `"v999999"`)
			if want && res.Status != call.allowed {
				t.Errorf("%s %s %s: %d, want %d\n%s", role, call.method, call.path, res.Status, call.allowed, clip(res.Body, 300))
			}
			if !want && res.Status != http.StatusForbidden {
				t.Errorf("%s %s %s: %d, want 403\n%s", role, call.method, call.path, res.Status, clip(res.Body, 300))
			}
			if !want && !strings.Contains(res.Body, `"FORBIDDEN"`) {
				t.Errorf("%s %s %s: %s, want code FORBIDDEN", role, call.method, call.path, clip(res.Body, 300))
			}
		}
	}
}

// The header shows each role exactly the links it may open, and the pages
// only the forms it may use.
func TestStaffRolesNavAndForms(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	sp := c.Specialists[0].ID.String()
	accounts := map[string]account{staff.RoleAdmin: c.Admin, staff.RoleStaff: c.Staff, staff.RoleReception: a.newAccount(t, c.ID, staff.RoleReception)}
	for _, role := range staff.Roles {
		cl := a.signIn(t, accounts[role])
		for _, p := range []string{"/staff", "/staff/bookings/search"} {
			var shown []string
			cl.Get(p).Want(http.StatusOK).Doc().Find(`nav[aria-label="Staff"] a`).Each(func(_ int, s *goquery.Selection) {
				href, _ := s.Attr("href")
				shown = append(shown, href)
			})
			for href, action := range navLinks {
				if got, want := slices.Contains(shown, href), allows(role, action); got != want {
					t.Errorf("%s on %s: link %s shown=%v, want %v (%s)", role, p, href, got, want, action)
				}
			}
			if len(shown) > len(navLinks) {
				t.Errorf("%s on %s: links %v", role, p, shown)
			}
		}
		if n := cl.Get("/staff").Doc().Find(`[data-testid="phone-booking"]`).Length(); (n == 1) != allows(role, staff.ActBook) {
			t.Errorf("%s: the calendar shows the phone booking form %d times", role, n)
		}
		if !allows(role, staff.ActSpecialists) {
			continue
		}
		page := cl.Get("/staff/specialists/" + sp).Want(http.StatusOK).Doc()
		for sel, action := range map[string]staff.Action{
			`[data-testid="specialist-form"]`: staff.ActSpecialistsEdit,
			`[data-testid="hours-form"]`:      staff.ActHours,
			`[data-testid="override-form"]`:   staff.ActOverrides,
		} {
			if n := page.Find(sel).Length(); (n == 1) != allows(role, action) {
				t.Errorf("%s: the specialist page shows %s %d times", role, sel, n)
			}
		}
		list := cl.Get("/staff/specialists").Doc().Find(`form[action="/staff/specialists"]`).Length()
		if (list == 1) != allows(role, staff.ActSpecialistsEdit) {
			t.Errorf("%s: the specialist list shows the add form %d times", role, list)
		}
	}
}

// An admin makes a reception account on the Staff accounts page (the role
// select offers every role; an unknown role is refused naming the field),
// and it signs in, books for a patient, finds and cancels the booking, and
// is refused the hours.
func TestStaffRolesReceptionAccountWorksTheDesk(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	var offered []string
	admin.Get("/staff/users").Want(http.StatusOK).Doc().Find(`select[name="role"] option`).Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr("value")
		offered = append(offered, v)
	})
	if !slices.Equal(offered, staff.Roles) {
		t.Errorf("the role select offers %v, want %v", offered, staff.Roles)
	}
	const pw = "desk-lantern-orchid-47"
	email := "desk-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "@example.org"
	bad := admin.Post("/staff/users", url.Values{"email": {email}, "name": {"Desk"}, "password": {pw}, "role": {"superuser"}}).Want(http.StatusBadRequest)
	if !strings.Contains(bad.Body, "The role is one of: reception, staff, admin.") {
		t.Errorf("an unknown role: %s", clip(bad.Body, 500))
	}
	admin.Post("/staff/users", url.Values{"email": {email}, "name": {"Desk"}, "password": {pw}, "role": {"reception"}}).Want(http.StatusCreated)
	if row := a.lastAudit(t, c.ID); row.Action != "staff.create" || !strings.Contains(string(row.After), `"reception"`) {
		t.Errorf("the account's audit row: %+v", row)
	}

	desk := a.newClient(t)
	desk.Get("/staff/login").Want(http.StatusOK)
	desk.Post("/staff/login", url.Values{"email": {email}, "password": {pw}}).WantRedirect("/staff/day")
	desk.Get("/staff").Want(http.StatusOK)
	start := c.Next(time.Wednesday, 10, 0)
	bk := a.phoneBook(t, desk, c, c.Specialists[0].ID, start, "Desk Patient", "desk-patient@example.org", "")
	found := desk.Get("/staff/bookings/search?q=Desk+Patient").Want(http.StatusOK)
	if !strings.Contains(found.Text(`[data-testid="table"]`), "desk-patient@example.org") {
		t.Fatalf("search does not find the booking: %s", clip(found.Body, 500))
	}
	date := start.In(c.Loc).Format(time.DateOnly)
	desk.Post("/staff/bookings/"+bk.ID.String()+"/cancel?date="+date, url.Values{"reason": {"patient called"}}).Want(http.StatusOK)
	if row := a.lastAudit(t, c.ID); row.Actor != "staff:"+email {
		t.Errorf("the cancel's audit row names %q", row.Actor)
	}
	desk.Post("/staff/specialists/"+c.Specialists[0].ID.String()+"/hours", url.Values{"hours.monday": {"08:00-12:00"}, "version": {"1"}}).Want(http.StatusForbidden)
	desk.Get("/staff/audit").Want(http.StatusForbidden)
}
