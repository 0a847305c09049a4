package web_test

// Handler tests of the staff side through the real router: sign-in and
// sessions, CSRF, roles, clinic scoping, every page and action with its
// success, validation errors and stale versions, the audit trail, the slot
// cache generation, phone bookings, search, and kiosk tokens. Real
// PostgreSQL and Redis; each test makes its own clinic and staff accounts.
// Every top-level identifier starts with stf.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// ---------------------------------------------------------------- helpers

const stfPassword = "correct horse battery"

var (
	stfHashOnce sync.Once
	stfHash     string
)

// stfPasswordHash is stfPassword hashed at bcrypt's lowest cost: sign-ins
// compare at the stored cost, so they stay quick.
func stfPasswordHash() string {
	stfHashOnce.Do(func() {
		h, err := bcrypt.GenerateFromPassword([]byte(stfPassword), bcrypt.MinCost)
		if err != nil {
			panic(err)
		}
		stfHash = string(h)
	})
	return stfHash
}

// stfApp is the whole app on an httptest server, with its services.
type stfApp struct {
	TS   *httptest.Server
	Deps web.Deps
	Pool *pgxpool.Pool
	RDB  redis.UniversalClient
}

// stfNewApp wires the app as main does. Unless the test sets them, the
// sign-in and hold limits are lifted: the limiters count in the shared
// Redis, and many tests sign in.
func stfNewApp(t testing.TB, o web.Options) *stfApp {
	t.Helper()
	if o.LoginsPerMinute == 0 {
		o.LoginsPerMinute = 100000
	}
	if o.HoldsPerMinute == 0 {
		o.HoldsPerMinute = 100000
	}
	pool, rdb := testkit.DB(t), testkit.Redis(t)
	// Warnings reach the test's log: a failure then shows what the server saw.
	deps := web.Wire(pool, rdb, slog.New(slog.NewTextHandler(stfTestLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn})), scoped(o))
	ctx, cancel := context.WithCancel(context.Background())
	deps.RunBackground(ctx)
	ts := httptest.NewServer(web.New(deps, "127.0.0.1:0").Handler())
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		cancel()
	})
	return &stfApp{TS: ts, Deps: deps, Pool: pool, RDB: rdb}
}

// stfAccount is a staff account.
type stfAccount struct {
	ID    uuid.UUID
	Email string
	Role  string
}

func (a stfAccount) Actor() string { return "staff:" + a.Email }

func stfNewAccount(t testing.TB, pool *pgxpool.Pool, clinicID uuid.UUID, role string) stfAccount {
	t.Helper()
	email := "stf-" + role + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16] + "@example.org"
	row, err := db.New(pool).StaffUserUpsert(context.Background(), db.StaffUserUpsertParams{
		ClinicID: clinicID, Email: email, Name: "Test " + role, PasswordHash: stfPasswordHash(), Role: role,
	})
	if err != nil {
		t.Fatalf("create staff account: %v", err)
	}
	return stfAccount{ID: row.ID, Email: email, Role: role}
}

// stfClinic is a test clinic (Europe/Berlin, one 30-minute type, Monday to
// Friday 09:00-17:00) with an admin and a staff account.
type stfClinic struct {
	testkit.Clinic
	Loc   *time.Location
	Admin stfAccount
	Staff stfAccount
}

func stfNewClinic(t testing.TB, pool *pgxpool.Pool, specialists int) stfClinic {
	t.Helper()
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: specialists})
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	return stfClinic{Clinic: c, Loc: loc,
		Admin: stfNewAccount(t, pool, c.ID, "admin"), Staff: stfNewAccount(t, pool, c.ID, "staff")}
}

// Next is the next date (at least tomorrow) on wd at hh:mm, clinic time.
func (c stfClinic) Next(wd time.Weekday, hh, mm int) time.Time {
	return testkit.NextWeekday(time.Now(), c.Loc, wd, hh, mm)
}

// stfClient is a browser without JavaScript: a cookie jar, no automatic
// redirects, an address of its own (it connects from a random 127.x.y.z,
// so the per-address sign-in limit, counted in the shared Redis, does not
// count other tests' attempts), and the CSRF token of the last page it saw.
type stfClient struct {
	t    testing.TB
	base string
	jar  http.CookieJar
	hc   *http.Client
	IP   string
	CSRF string
	// Header is added to every request.
	Header http.Header
}

func stfNewClient(t testing.TB, base string) *stfClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ip := fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254))
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: 4}
	t.Cleanup(tr.CloseIdleConnections)
	return &stfClient{t: t, base: base, jar: jar, IP: ip, Header: http.Header{},
		hc: &http.Client{Jar: jar, Timeout: 60 * time.Second, Transport: tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// WantRedirect fails unless the answer is 303 to loc.
func (r *pgResp) WantRedirect(loc string) *pgResp {
	r.t.Helper()
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != loc {
		r.t.Fatalf("%s: %d to %q, want 303 to %q; body:\n%s", r.what, r.Status, r.Header.Get("Location"), loc, pgClip(r.Body, 1500))
	}
	return r
}

// Text is the collapsed text of what sel finds.
func (r *pgResp) Text(sel string) string {
	r.t.Helper()
	return strings.Join(strings.Fields(r.Doc().Find(sel).Text()), " ")
}

// Cookie is the value of the session cookie the answer sets ("" if none).
func (r *pgResp) SessionCookie() *http.Cookie {
	for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
		if ck.Name == "clinic_session" {
			return ck
		}
	}
	return nil
}

var stfCSRFField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

func (c *stfClient) do(method, path string, body io.Reader, hdr http.Header) *pgResp {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	if m := stfCSRFField.FindSubmatch(b); m != nil {
		c.CSRF = string(m[1])
	}
	return &pgResp{t: c.t, what: method + " " + path, Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

func (c *stfClient) Get(path string) *pgResp {
	c.t.Helper()
	return c.do(http.MethodGet, path, nil, nil)
}

// Post posts a form with the client's CSRF token (unless the form has one).
func (c *stfClient) Post(path string, form url.Values) *pgResp {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if !form.Has("_csrf") {
		form = stfCloneValues(form)
		form.Set("_csrf", c.CSRF)
	}
	return c.PostRaw(path, form, nil)
}

// PostRaw posts the form as given.
func (c *stfClient) PostRaw(path string, form url.Values, hdr http.Header) *pgResp {
	c.t.Helper()
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	for k, vs := range hdr {
		h[k] = vs
	}
	return c.do(http.MethodPost, path, strings.NewReader(form.Encode()), h)
}

// Cookie is the client's session cookie value.
func (c *stfClient) Cookie() string {
	u, _ := url.Parse(c.base)
	for _, ck := range c.jar.Cookies(u) {
		if ck.Name == "clinic_session" {
			return ck.Value
		}
	}
	return ""
}

// stfWithCookie is a fresh client that carries only the session cookie value.
func stfWithCookie(t testing.TB, base, value string) *stfClient {
	t.Helper()
	c := stfNewClient(t, base)
	u, _ := url.Parse(base)
	c.jar.SetCookies(u, []*http.Cookie{{Name: "clinic_session", Value: value, Path: "/"}})
	return c
}

func stfCloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// stfSignIn signs a in through the sign-in form and opens the calendar,
// so the client has the session's CSRF token.
func stfSignIn(t testing.TB, app *stfApp, a stfAccount) *stfClient {
	t.Helper()
	c := stfNewClient(t, app.TS.URL)
	c.Get("/staff/login").Want(http.StatusOK)
	c.Post("/staff/login", url.Values{"email": {a.Email}, "password": {stfPassword}}).WantRedirect("/staff")
	c.Get("/staff").Want(http.StatusOK)
	if c.CSRF == "" {
		t.Fatal("the calendar has no CSRF token in its forms")
	}
	return c
}

// stfForm is a form as a browser would send it.
type stfForm struct {
	Action string
	Values url.Values
}

// stfFormOf reads the form sel finds (or the form around it).
func stfFormOf(t testing.TB, doc *goquery.Document, sel string) stfForm {
	t.Helper()
	f := doc.Find(sel).First()
	if f.Length() == 0 {
		t.Fatalf("no form %s", sel)
	}
	if !f.Is("form") {
		f = f.Closest("form")
	}
	action, _ := f.Attr("action")
	v := url.Values{}
	f.Find("input[name], select[name], textarea[name]").Each(func(_ int, in *goquery.Selection) {
		name, _ := in.Attr("name")
		typ, _ := in.Attr("type")
		switch {
		case in.Is("select"):
			opt := in.Find("option[selected]").First()
			if opt.Length() == 0 {
				opt = in.Find("option").First()
			}
			val, _ := opt.Attr("value")
			v.Add(name, val)
		case in.Is("textarea"):
			v.Add(name, in.Text())
		case typ == "checkbox" || typ == "radio":
			if _, on := in.Attr("checked"); on {
				val, ok := in.Attr("value")
				if !ok {
					val = "on"
				}
				v.Add(name, val)
			}
		case typ == "submit" || typ == "button":
		default:
			val, _ := in.Attr("value")
			v.Add(name, val)
		}
	})
	return stfForm{Action: action, Values: v}
}

func stfAuditCount(t testing.TB, pool *pgxpool.Pool, clinicID uuid.UUID) int64 {
	t.Helper()
	n, err := db.New(pool).AuditCountByClinic(context.Background(), clinicID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// stfLastAudit is the clinic's newest audit row.
func stfLastAudit(t testing.TB, pool *pgxpool.Pool, clinicID uuid.UUID) db.AuditLog {
	t.Helper()
	rows, err := db.New(pool).AuditList(context.Background(), db.AuditListParams{
		ClinicID: clinicID, FromAt: time.Unix(0, 0), ToAt: time.Now().Add(time.Hour), PageSize: 1,
	})
	if err != nil || len(rows) == 0 {
		t.Fatalf("newest audit row: %v (%d rows)", err, len(rows))
	}
	return rows[0]
}

// stfGeneration sums the clinic's slot cache generations: its set-up's and
// its days' (bookings bump only the days they touch).
func stfGeneration(t testing.TB, app *stfApp, clinicID uuid.UUID) int64 {
	t.Helper()
	ctx := context.Background()
	keys, err := app.RDB.Keys(ctx, slots.GenerationKey(clinicID)+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, k := range keys {
		n, err := app.RDB.Get(ctx, k).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		sum += n
	}
	return sum
}

func stfSpecialist(t testing.TB, pool *pgxpool.Pool, c stfClinic, id uuid.UUID) db.Specialist {
	t.Helper()
	sp, err := db.New(pool).SpecialistGetInClinic(context.Background(), db.SpecialistGetInClinicParams{ID: id, ClinicID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func stfBooking(t testing.TB, app *stfApp, id uuid.UUID) booking.Booking {
	t.Helper()
	b, err := app.Deps.Bookings.Get(context.Background(), id, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stfTimeslots is the API's free starts of typ for sp on day (local hh:mm).
func stfTimeslots(t testing.TB, app *stfApp, c stfClinic, typ, sp uuid.UUID, day time.Time) []string {
	t.Helper()
	d := day.In(c.Loc).Format(time.DateOnly)
	res, err := http.Get(app.TS.URL + "/v1/appointment-types/" + typ.String() + "/timeslots?from=" + d + "&to=" + d + "&specialistId=" + sp.String())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Timeslots []struct {
			Start time.Time `json:"start"`
		} `json:"timeslots"`
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("timeslots: %d %s", res.StatusCode, b)
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(body.Timeslots))
	for i, s := range body.Timeslots {
		out[i] = s.Start.In(c.Loc).Format("15:04")
	}
	return out
}

// stfPhoneBook books through the calendar's phone form and returns the booking.
func stfPhoneBook(t testing.TB, app *stfApp, cl *stfClient, c stfClinic, sp uuid.UUID, start time.Time, name, email, phone string) booking.Booking {
	t.Helper()
	r := cl.Post("/staff/bookings", stfPhoneForm(c, sp, start, name, email, phone)).Want(http.StatusCreated)
	if !strings.Contains(r.Text(`p.notice`), "Booked "+name) {
		t.Fatalf("phone booking notice: %q", r.Text(`p.notice`))
	}
	var id uuid.UUID
	err := app.Pool.QueryRow(context.Background(),
		`SELECT id FROM bookings WHERE clinic_id = $1 AND specialist_id = $2 AND slot_start = $3 AND status = 'confirmed'`, c.ID, sp, start).Scan(&id)
	if err != nil {
		t.Fatalf("the phone booking is not in the database: %v", err)
	}
	return stfBooking(t, app, id)
}

func stfPhoneForm(c stfClinic, sp uuid.UUID, start time.Time, name, email, phone string) url.Values {
	l := start.In(c.Loc)
	return url.Values{
		"type": {c.Types[0].ID.String()}, "specialist": {sp.String()},
		"date": {l.Format(time.DateOnly)}, "time": {l.Format("15:04")},
		"name": {name}, "email": {email}, "phone": {phone},
	}
}

// stfHold holds a slot through the API for clientID.
func stfHold(t testing.TB, app *stfApp, typ, sp uuid.UUID, start time.Time, clientID string) (holdID string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{
		"appointmentTypeId": typ.String(), "slotStartDate": start.UTC().Format(time.RFC3339),
		"specialistId": sp.String(), "clientId": clientID,
	})
	res, err := http.Post(app.TS.URL+"/v1/holds", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("hold: %d %s", res.StatusCode, b)
	}
	var h struct {
		HoldID string `json:"holdId"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h.HoldID
}

// stfAvoidWindowEdge waits for the next rate-limit minute when less than
// need is left of this one, so a test's attempts fall in one window.
func stfAvoidWindowEdge(need time.Duration) {
	now := time.Now()
	next := now.Truncate(time.Minute).Add(time.Minute)
	if next.Sub(now) < need {
		time.Sleep(next.Sub(now) + 100*time.Millisecond)
	}
}

// stfRoute is a staff route with its path filled in.
type stfRoute struct {
	Method, Pattern, Path string
	Form                  url.Values
}

// stfStaffRoutes are every route of the staff group, with c's ids (or the
// given ones) filled in. stfCheckRouteList proves no route is missing.
func stfStaffRoutes(sp, typ uuid.UUID, override int64, bk uuid.UUID) []stfRoute {
	spS, typS, ovS, bkS := sp.String(), typ.String(), strconv.FormatInt(override, 10), bk.String()
	return []stfRoute{
		{"GET", "", "/staff", nil},
		{"GET", "/live", "/staff/live", nil},
		{"GET", "/bookings/search", "/staff/bookings/search?q=x", nil},
		{"GET", "/specialists", "/staff/specialists", nil},
		{"GET", "/specialists/:id", "/staff/specialists/" + spS, nil},
		{"GET", "/types", "/staff/types", nil},
		{"GET", "/types/new", "/staff/types/new", nil},
		{"GET", "/types/:id", "/staff/types/" + typS, nil},
		{"GET", "/audit", "/staff/audit", nil},
		{"GET", "/users", "/staff/users", nil},
		{"GET", "/kiosks", "/staff/kiosks", nil},
		{"POST", "/logout", "/staff/logout", url.Values{}},
		{"POST", "/bookings", "/staff/bookings", url.Values{"type": {typS}, "specialist": {spS}, "date": {"2030-01-07"}, "time": {"10:00"}, "name": {"X"}, "email": {"x@example.org"}}},
		{"POST", "/bookings/:id/cancel", "/staff/bookings/" + bkS + "/cancel", url.Values{"reason": {"r"}}},
		{"POST", "/bookings/:id/reschedule", "/staff/bookings/" + bkS + "/reschedule", url.Values{"start": {"2030-01-07T10:00"}, "version": {"1"}, "reason": {"r"}}},
		{"POST", "/specialists", "/staff/specialists", url.Values{"name": {"Intruder"}, "priority": {"1"}, "active": {"on"}}},
		{"POST", "/specialists/:id", "/staff/specialists/" + spS, url.Values{"name": {"Intruder"}, "priority": {"1"}, "active": {"on"}, "version": {"1"}}},
		{"POST", "/specialists/:id/hours", "/staff/specialists/" + spS + "/hours", url.Values{"hours.monday": {"01:00-02:00"}, "version": {"1"}}},
		{"POST", "/specialists/:id/overrides", "/staff/specialists/" + spS + "/overrides", url.Values{"day": {"2030-01-07"}, "closed": {"on"}, "version": {"1"}}},
		{"POST", "/overrides/:id/delete", "/staff/overrides/" + ovS + "/delete", url.Values{"version": {"1"}}},
		{"POST", "/types", "/staff/types", url.Values{"name": {"Intruder"}, "durationMin": {"30"}, "slotStepMin": {"30"}, "maxAdvanceDays": {"30"}, "maxHoldsPerClient": {"1"}}},
		{"POST", "/types/:id", "/staff/types/" + typS, url.Values{"name": {"Intruder"}, "durationMin": {"30"}, "slotStepMin": {"30"}, "maxAdvanceDays": {"30"}, "maxHoldsPerClient": {"1"}, "version": {"1"}}},
		{"POST", "/users", "/staff/users", url.Values{"email": {"intruder@example.org"}, "name": {"I"}, "password": {"long enough password"}, "role": {"admin"}}},
		{"POST", "/users/access", "/staff/users/access", url.Values{"id": {uuid.NewString()}, "action": {"disable"}}},
		{"POST", "/kiosks", "/staff/kiosks", url.Values{"name": {"Intruder"}}},
		{"POST", "/kiosks/revoke", "/staff/kiosks/revoke", url.Values{"id": {uuid.NewString()}}},
	}
}

var stfRouteDecl = regexp.MustCompile(`\bst\.(GET|POST|PUT|PATCH|DELETE)\("([^"]*)"`)

// stfCheckRouteList fails when routes.go has a signed-in staff route the
// list does not cover.
func stfCheckRouteList(t *testing.T, routes []stfRoute) {
	t.Helper()
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatalf("read routes.go: %v", err)
	}
	have := map[string]bool{}
	for _, r := range routes {
		have[r.Method+" "+r.Pattern] = true
	}
	decls := stfRouteDecl.FindAllStringSubmatch(string(src), -1)
	if len(decls) < 20 {
		t.Fatalf("found only %d staff routes in routes.go: the pattern is out of date", len(decls))
	}
	for _, m := range decls {
		if !have[m[1]+" "+m[2]] {
			t.Errorf("staff route %s /staff%s is not covered by the route list of these tests", m[1], m[2])
		}
	}
}

// stfFixtures gives a clinic an override and a booking, for the routes
// that name one.
func stfFixtures(t testing.TB, app *stfApp, c stfClinic) (overrideID int64, bk booking.Booking) {
	t.Helper()
	ctx := context.Background()
	sp := c.Specialists[0]
	day := c.Next(time.Wednesday, 0, 0)
	overrideID, err := db.New(app.Pool).OverrideInsert(ctx, db.OverrideInsertParams{
		ClinicID: c.ID, SpecialistID: sp.ID, Day: time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC), Closed: true, Note: "fixture",
	})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := app.Deps.Bookings.Book(ctx, booking.BookRequest{
		AppointmentTypeID: c.Types[0].ID, SpecialistID: sp.ID, Start: c.Next(time.Tuesday, 14, 0),
		Patient: booking.Patient{Name: "Fixture Patient", Email: "fixture@example.org"}, ClientID: "fixture", Actor: "patient", ClinicID: c.ID,
	})
	if err != nil {
		t.Fatal(err)
	}
	return overrideID, conf.Booking
}

// ---------------------------------------------------------------- sign-in

func TestStaffSignIn(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)

	t.Run("WrongEmailAndWrongPasswordReadTheSame", func(t *testing.T) {
		t.Parallel()
		cl := stfNewClient(t, app.TS.URL)
		cl.Get("/staff/login").Want(http.StatusOK)
		wrongPw := cl.Post("/staff/login", url.Values{"email": {c.Admin.Email}, "password": {"not the password"}})
		wrongMail := cl.Post("/staff/login", url.Values{"email": {"nobody-" + uuid.NewString()[:8] + "@example.org"}, "password": {stfPassword}})
		if wrongPw.Status != http.StatusUnauthorized || wrongMail.Status != wrongPw.Status {
			t.Fatalf("wrong password: %d, wrong e-mail: %d; want 401 for both", wrongPw.Status, wrongMail.Status)
		}
		a, b := wrongPw.Text(`[data-testid="login-error"]`), wrongMail.Text(`[data-testid="login-error"]`)
		if a == "" || a != b {
			t.Fatalf("wrong password says %q, wrong e-mail says %q: they must read the same", a, b)
		}
		if v, _ := wrongPw.Doc().Find(`input#email`).Attr("value"); v != c.Admin.Email {
			t.Errorf("the form lost the e-mail typed: %q", v)
		}
		if strings.Contains(wrongPw.Body, "not the password") {
			t.Error("the page echoes the password")
		}
		cl.Get("/staff").WantRedirect("/staff/login")
	})

	t.Run("SessionIsRenewedAndCookieIsHttpOnlyLax", func(t *testing.T) {
		t.Parallel()
		// A browser with a session from before (a patient's, say: the
		// sign-in form makes none).
		sm := app.Deps.Sessions
		ctx, err := sm.Load(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		sm.Put(ctx, "clientId", "b_before")
		token, _, err := sm.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before := &http.Cookie{Name: "clinic_session", Value: token, Path: "/"}
		cl := stfWithCookie(t, app.TS.URL, token)
		cl.Get("/staff/login").Want(http.StatusOK)
		if cl.CSRF == "" {
			t.Fatal("the sign-in page has no CSRF token")
		}
		res := cl.Post("/staff/login", url.Values{"email": {c.Admin.Email}, "password": {stfPassword}}).WantRedirect("/staff")
		after := res.SessionCookie()
		if after == nil {
			t.Fatal("sign-in sets no session cookie")
		}
		if after.Value == before.Value {
			t.Fatal("the session token is the same before and after sign-in: it must be renewed (session fixation)")
		}
		if !after.HttpOnly || after.SameSite != http.SameSiteLaxMode || after.Path != "/" {
			t.Errorf("cookie flags: HttpOnly=%v SameSite=%v Path=%q; want HttpOnly, Lax, /", after.HttpOnly, after.SameSite, after.Path)
		}
		if after.Secure {
			t.Error("Secure cookie over plain HTTP without SecureCookies")
		}
		cl.Get("/staff").Want(http.StatusOK)
		// The token seen before sign-in opens nothing; the new one does.
		stfWithCookie(t, app.TS.URL, before.Value).Get("/staff").WantRedirect("/staff/login")
		stfWithCookie(t, app.TS.URL, after.Value).Get("/staff").Want(http.StatusOK)
	})

	t.Run("SecureCookiesWhenConfigured", func(t *testing.T) {
		t.Parallel()
		secure := stfNewApp(t, web.Options{SecureCookies: true})
		res, err := http.Get(secure.TS.URL + "/staff/login")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if len(res.Cookies()) == 0 {
			t.Fatal("the sign-in form sets no cookie")
		}
		for _, ck := range res.Cookies() {
			if !ck.Secure {
				t.Fatalf("SecureCookies: the cookie %s is not Secure", ck.Name)
			}
		}
	})

	t.Run("SignOutDestroysTheSession", func(t *testing.T) {
		t.Parallel()
		cl := stfSignIn(t, app, c.Admin)
		token := cl.Cookie()
		cl.Post("/staff/logout", nil).WantRedirect("/staff/login")
		cl.Get("/staff").WantRedirect("/staff/login")
		// Replaying the old cookie from another browser opens nothing.
		stfWithCookie(t, app.TS.URL, token).Get("/staff").WantRedirect("/staff/login")
		var n int
		if err := app.Pool.QueryRow(context.Background(), `SELECT count(*) FROM sessions WHERE token = $1`, token).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatal("the session is still in the store after sign-out")
		}
	})

	t.Run("SignInWithoutCSRFTokenIsRefused", func(t *testing.T) {
		t.Parallel()
		cl := stfNewClient(t, app.TS.URL)
		cl.Get("/staff/login").Want(http.StatusOK)
		cl.PostRaw("/staff/login", url.Values{"email": {c.Admin.Email}, "password": {stfPassword}}, nil).Want(http.StatusForbidden)
		cl.Get("/staff").WantRedirect("/staff/login")
		// Nor from a browser that never opened the form.
		stfNewClient(t, app.TS.URL).PostRaw("/staff/login", url.Values{"email": {c.Admin.Email}, "password": {stfPassword}, "_csrf": {"forged"}}, nil).Want(http.StatusForbidden)
	})
}

func TestStaffLoginRateLimits(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{LoginsPerMinute: 2}) // per account 2, per address 8
	c := stfNewClinic(t, app.Pool, 1)

	// isLimited checks a 429 answer: Retry-After and the message in place.
	isLimited := func(r *pgResp, what string) string {
		if r.Status != http.StatusTooManyRequests {
			return fmt.Sprintf("%s: status %d, want 429", what, r.Status)
		}
		ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || ra < 1 || ra > 61 {
			return fmt.Sprintf("%s: Retry-After %q, want the seconds until the window ends", what, r.Header.Get("Retry-After"))
		}
		if msg := r.Text(`[data-testid="login-error"]`); !strings.Contains(msg, "Too many sign-in attempts") {
			return fmt.Sprintf("%s: message in place %q", what, msg)
		}
		return ""
	}
	// accounts makes n accounts (quick to check: their hashes are cheap).
	accounts := func(n int) []stfAccount {
		out := make([]stfAccount, n)
		for i := range out {
			out[i] = stfNewAccount(t, app.Pool, c.ID, "staff")
		}
		return out
	}

	t.Run("PerAccount", func(t *testing.T) {
		t.Parallel()
		// The limits count in fixed one-minute windows: a run that crosses
		// into the next window is repeated with fresh accounts.
		for try := 0; ; try++ {
			stfAvoidWindowEdge(10 * time.Second)
			window := time.Now().Unix() / 60
			acc := accounts(2)
			var problems []string
			check := func(r *pgResp, want int, what string) {
				if want == http.StatusTooManyRequests {
					if p := isLimited(r, what); p != "" {
						problems = append(problems, p)
					}
				} else if r.Status != want {
					problems = append(problems, fmt.Sprintf("%s: status %d, want %d", what, r.Status, want))
				}
			}
			cl := stfNewClient(t, app.TS.URL)
			cl.Get("/staff/login").Want(http.StatusOK)
			for i := range 2 {
				check(cl.Post("/staff/login", url.Values{"email": {acc[0].Email}, "password": {"wrong " + strconv.Itoa(i)}}), http.StatusUnauthorized, fmt.Sprintf("attempt %d", i+1))
			}
			check(cl.Post("/staff/login", url.Values{"email": {acc[0].Email}, "password": {"wrong again"}}), http.StatusTooManyRequests, "third attempt")
			// Even the right password waits, and from another address too.
			check(cl.Post("/staff/login", url.Values{"email": {acc[0].Email}, "password": {stfPassword}}), http.StatusTooManyRequests, "right password while limited")
			other := stfNewClient(t, app.TS.URL)
			other.Get("/staff/login").Want(http.StatusOK)
			check(other.Post("/staff/login", url.Values{"email": {strings.ToUpper(acc[0].Email)}, "password": {stfPassword}}), http.StatusTooManyRequests, "same account (upper case) from another address")
			check(cl.Get("/staff"), http.StatusSeeOther, "the calendar after the refused sign-ins")
			// Another account from the first address is not limited by this one.
			check(cl.Post("/staff/login", url.Values{"email": {acc[1].Email}, "password": {stfPassword}}), http.StatusSeeOther, "another account from the same address")
			if time.Now().Unix()/60 != window && try < 2 {
				continue
			}
			for _, p := range problems {
				t.Error(p)
			}
			return
		}
	})

	t.Run("PerAddress", func(t *testing.T) {
		t.Parallel()
		for try := 0; ; try++ {
			stfAvoidWindowEdge(10 * time.Second)
			window := time.Now().Unix() / 60
			acc := accounts(9)
			cl := stfNewClient(t, app.TS.URL)
			cl.Get("/staff/login").Want(http.StatusOK)
			var statuses []int
			var last *pgResp
			for _, a := range acc {
				last = cl.Post("/staff/login", url.Values{"email": {a.Email}, "password": {"wrong"}})
				statuses = append(statuses, last.Status)
			}
			if time.Now().Unix()/60 != window && try < 2 {
				continue
			}
			for i, st := range statuses[:8] {
				if st != http.StatusUnauthorized {
					t.Errorf("attempt %d from one address (each on another account): %d, want 401", i+1, st)
				}
			}
			if p := isLimited(last, "ninth attempt from one address"); p != "" {
				t.Error(p)
			}
			return
		}
	})

	// A client that connects directly cannot choose the address it is
	// counted under by sending X-Forwarded-For: otherwise the per-address
	// limit is no limit for anyone guessing passwords across accounts.
	t.Run("PerAddressIgnoresAForwardedForHeaderTheClientMadeUp", func(t *testing.T) {
		t.Parallel()
		for try := 0; ; try++ {
			stfAvoidWindowEdge(10 * time.Second)
			window := time.Now().Unix() / 60
			acc := accounts(10)
			cl := stfNewClient(t, app.TS.URL)
			cl.Get("/staff/login").Want(http.StatusOK)
			limited := 0
			for i, a := range acc {
				cl.Header.Set("X-Forwarded-For", fmt.Sprintf("203.0.113.%d", 10+i))
				if cl.Post("/staff/login", url.Values{"email": {a.Email}, "password": {"wrong"}}).Status == http.StatusTooManyRequests {
					limited++
				}
			}
			if time.Now().Unix()/60 != window && try < 2 {
				continue
			}
			if limited == 0 {
				t.Errorf("10 attempts from one connection (%s), each claiming another X-Forwarded-For, were all let through; the per-address limit is 8: "+
					"the limiter must key on the peer's address (echo's c.RealIP() trusts X-Forwarded-For unless an IPExtractor is set)", cl.IP)
			}
			return
		}
	})
}

func TestStaffSecurityHeaders(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	anon := stfNewClient(t, app.TS.URL)
	anon.Get("/staff/login")
	for _, r := range []*pgResp{
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

// ---------------------------------------------------------------- access

// Not signed in, every staff route sends the browser to the sign-in page
// (sign-in is checked before the session's CSRF token, which a browser
// that is not signed in does not have); htmx requests get HX-Redirect.
func TestStaffNotSignedInRedirectsToSignIn(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	ov, bk := stfFixtures(t, app, c)
	routes := stfStaffRoutes(c.Specialists[0].ID, c.Types[0].ID, ov, bk.ID)
	stfCheckRouteList(t, routes)
	before := stfAuditCount(t, app.Pool, c.ID)

	anon := stfNewClient(t, app.TS.URL)
	for _, r := range routes {
		var res *pgResp
		if r.Method == "GET" {
			res = stfNewClient(t, app.TS.URL).Get(r.Path) // no cookie at all
		} else {
			anon.Get("/staff/login").Want(http.StatusOK) // the sign-in form's token, worth nothing here
			res = anon.Post(r.Path, r.Form)
		}
		if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/staff/login" {
			t.Errorf("%s %s not signed in: %d to %q, want 303 to /staff/login", r.Method, r.Path, res.Status, res.Header.Get("Location"))
		}
	}
	hx := stfNewClient(t, app.TS.URL).do("GET", "/staff/specialists", nil, http.Header{"Hx-Request": {"true"}})
	if hx.Status != http.StatusUnauthorized || hx.Header.Get("HX-Redirect") != "/staff/login" {
		t.Errorf("htmx request not signed in: %d, HX-Redirect %q", hx.Status, hx.Header.Get("HX-Redirect"))
	}
	if n := stfAuditCount(t, app.Pool, c.ID); n != before {
		t.Errorf("requests that were not signed in wrote %d audit rows", n-before)
	}
}

// Signed in, every POST without the session's CSRF token (or with a wrong
// one) is refused with 403 and changes nothing; the token as a header, as
// htmx sends it, works.
func TestStaffCSRF(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	ov, bk := stfFixtures(t, app, c)
	admin := stfSignIn(t, app, c.Admin)
	sp := stfSpecialist(t, app.Pool, c, c.Specialists[0].ID)
	before := stfAuditCount(t, app.Pool, c.ID)
	gen := stfGeneration(t, app, c.ID)

	for _, r := range stfStaffRoutes(sp.ID, c.Types[0].ID, ov, bk.ID) {
		if r.Method != "POST" {
			continue
		}
		for _, tok := range []string{"", "0000" + admin.CSRF[4:]} {
			form := stfCloneValues(r.Form)
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
	if n := stfAuditCount(t, app.Pool, c.ID); n != before {
		t.Fatalf("requests without a CSRF token wrote %d audit rows", n-before)
	}
	if now := stfSpecialist(t, app.Pool, c, sp.ID); now.Name != sp.Name || now.Version != sp.Version {
		t.Fatalf("the specialist changed: %+v", now)
	}
	if g := stfGeneration(t, app, c.ID); g != gen {
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
	other := stfSignIn(t, app, c.Staff)
	if other.CSRF == admin.CSRF {
		t.Fatal("two sessions share a CSRF token")
	}
	admin.Post("/staff/specialists", url.Values{"name": {"Cross"}, "priority": {"1"}, "_csrf": {other.CSRF}}).Want(http.StatusForbidden)
}

// A staff member (not admin) runs the calendar but cannot manage
// specialists, types, accounts or kiosk tokens.
func TestStaffRoleIsForbiddenAdminPages(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	s := stfSignIn(t, app, c.Staff)
	sp, typ := c.Specialists[0], c.Types[0]
	before := stfAuditCount(t, app.Pool, c.ID)

	forbidden := []struct {
		method, path string
		form         url.Values
	}{
		{"POST", "/staff/specialists", url.Values{"name": {"Dr. Staff"}, "priority": {"1"}, "active": {"on"}}},
		{"POST", "/staff/specialists/" + sp.ID.String(), url.Values{"name": {"Renamed"}, "priority": {"1"}, "active": {"on"}, "version": {strconv.Itoa(int(sp.Version))}}},
		{"GET", "/staff/types/new", nil},
		{"POST", "/staff/types", url.Values{"name": {"Staff type"}, "durationMin": {"30"}, "slotStepMin": {"30"}, "maxAdvanceDays": {"30"}, "maxHoldsPerClient": {"1"}}},
		{"POST", "/staff/types/" + typ.ID.String(), url.Values{"name": {"Renamed"}, "durationMin": {"30"}, "slotStepMin": {"30"}, "maxAdvanceDays": {"30"}, "maxHoldsPerClient": {"1"}, "version": {strconv.Itoa(int(typ.Version))}}},
		{"GET", "/staff/users", nil},
		{"POST", "/staff/users", url.Values{"email": {"promoted@example.org"}, "name": {"P"}, "password": {"long enough password"}, "role": {"admin"}}},
		{"GET", "/staff/kiosks", nil},
		{"POST", "/staff/kiosks", url.Values{"name": {"Lobby"}}},
		{"POST", "/staff/kiosks/revoke", url.Values{"id": {uuid.NewString()}}},
	}
	for _, f := range forbidden {
		var r *pgResp
		if f.method == "GET" {
			r = s.Get(f.path)
		} else {
			r = s.Post(f.path, f.form)
		}
		if r.Status != http.StatusForbidden {
			t.Errorf("staff %s %s: %d, want 403", f.method, f.path, r.Status)
		} else if msg := r.Text(`[data-testid="error-page"]`); !strings.Contains(msg, "Only an admin") {
			t.Errorf("staff %s %s: page says %q", f.method, f.path, msg)
		}
	}
	if n := stfAuditCount(t, app.Pool, c.ID); n != before {
		t.Fatalf("forbidden requests wrote %d audit rows", n-before)
	}
	if now := stfSpecialist(t, app.Pool, c, sp.ID); now.Name != sp.Name {
		t.Fatalf("the specialist was renamed to %q", now.Name)
	}
	for _, p := range []string{"/staff", "/staff/specialists", "/staff/specialists/" + sp.ID.String(), "/staff/types", "/staff/types/" + typ.ID.String(), "/staff/audit", "/staff/bookings/search"} {
		r := s.Get(p).Want(http.StatusOK)
		if r.Doc().Find(`a[href="/staff/users"], a[href="/staff/kiosks"]`).Length() != 0 {
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
	if s.Get("/staff/types/"+typ.ID.String()).Doc().Find(`[data-testid="type-form"] button[type="submit"]`).Length() != 0 {
		t.Error("the type page offers a staff member a Save button")
	}
}

// Another clinic's ids are not found through any staff route, and nothing
// of that clinic changes.
func TestStaffOtherClinicsIDsAreNotFound(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	mine := stfNewClinic(t, app.Pool, 1)
	other := stfNewClinic(t, app.Pool, 1)
	ov, bk := stfFixtures(t, app, other)
	osp := stfSpecialist(t, app.Pool, other, other.Specialists[0].ID)
	otyp := other.Types[0]
	token, err := app.Deps.Staff.CreateKioskToken(context.Background(), stfUserOf(other.Admin, other.ID), "Their lobby")
	if err != nil {
		t.Fatal(err)
	}
	tokens, _ := db.New(app.Pool).KioskTokenListByClinic(context.Background(), other.ID)
	admin := stfSignIn(t, app, mine.Admin)
	otherAudit, myAudit := stfAuditCount(t, app.Pool, other.ID), stfAuditCount(t, app.Pool, mine.ID)
	ver := strconv.Itoa(int(osp.Version))

	cases := []struct {
		method, path string
		form         url.Values
	}{
		{"GET", "/staff/specialists/" + osp.ID.String(), nil},
		{"POST", "/staff/specialists/" + osp.ID.String(), url.Values{"name": {"Hijacked"}, "priority": {"1"}, "version": {ver}}},
		{"POST", "/staff/specialists/" + osp.ID.String() + "/hours", url.Values{"hours.monday": {"01:00-02:00"}, "version": {ver}}},
		{"POST", "/staff/specialists/" + osp.ID.String() + "/overrides", url.Values{"day": {"2030-01-07"}, "closed": {"on"}, "version": {ver}}},
		{"POST", "/staff/overrides/" + strconv.FormatInt(ov, 10) + "/delete", url.Values{"version": {ver}}},
		{"GET", "/staff/types/" + otyp.ID.String(), nil},
		{"POST", "/staff/types/" + otyp.ID.String(), url.Values{"name": {"Hijacked"}, "durationMin": {"30"}, "slotStepMin": {"30"}, "maxAdvanceDays": {"30"}, "maxHoldsPerClient": {"1"}, "version": {strconv.Itoa(int(otyp.Version))}}},
		{"POST", "/staff/bookings/" + bk.ID.String() + "/cancel", url.Values{"reason": {"not mine"}}},
		{"POST", "/staff/bookings/" + bk.ID.String() + "/reschedule", url.Values{"start": {bk.Start.In(other.Loc).Add(time.Hour).Format("2006-01-02T15:04")}, "version": {strconv.Itoa(int(bk.Version))}, "reason": {"not mine"}}},
		{"GET", "/staff?specialist=" + osp.ID.String(), nil},
		{"GET", "/staff/live?specialist=" + osp.ID.String(), nil},
		{"POST", "/staff/kiosks/revoke", url.Values{"id": {tokens[0].ID.String()}}},
	}
	for _, tc := range cases {
		var r *pgResp
		if tc.method == "GET" {
			r = admin.Get(tc.path)
		} else {
			r = admin.Post(tc.path, tc.form)
		}
		if r.Status != http.StatusNotFound {
			t.Errorf("%s %s (other clinic's id): %d, want 404\n%s", tc.method, tc.path, r.Status, pgClip(r.Body, 500))
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
	if now := stfSpecialist(t, app.Pool, other, osp.ID); now.Name != osp.Name || now.Version != osp.Version || !now.Active {
		t.Errorf("their specialist changed: %+v", now)
	}
	if got, err := db.New(app.Pool).OverrideGet(context.Background(), db.OverrideGetParams{ID: ov, ClinicID: other.ID}); err != nil || got.Note != "fixture" {
		t.Errorf("their override: %+v %v", got, err)
	}
	if b := stfBooking(t, app, bk.ID); b.Status != booking.StatusConfirmed || !b.Start.Equal(bk.Start) {
		t.Errorf("their booking changed: %+v", b)
	}
	if ok, _ := app.Deps.Staff.KioskTokenValid(context.Background(), other.ID, token); !ok {
		t.Error("their kiosk token was revoked")
	}
	if n := stfAuditCount(t, app.Pool, other.ID); n != otherAudit {
		t.Errorf("%d audit rows written to the other clinic", n-otherAudit)
	}
	if n := stfAuditCount(t, app.Pool, mine.ID); n != myAudit {
		t.Errorf("%d audit rows written to my clinic by refused requests", n-myAudit)
	}
}

// ---------------------------------------------------------------- specialists

func TestStaffSpecialistPages(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)

	t.Run("CreateAndList", func(t *testing.T) {
		r := admin.Post("/staff/specialists", url.Values{"name": {"  Dr. Zhivago  "}, "priority": {"42"}, "active": {"on"}})
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/staff/specialists/") {
			t.Fatalf("create: %d %q", r.Status, r.Header.Get("Location"))
		}
		id := uuid.MustParse(strings.TrimPrefix(r.Header.Get("Location"), "/staff/specialists/"))
		sp := stfSpecialist(t, app.Pool, c, id)
		if sp.Name != "Dr. Zhivago" || sp.Priority != 42 || !sp.Active {
			t.Fatalf("stored: %+v", sp)
		}
		page := admin.Get("/staff/specialists/" + id.String()).Want(http.StatusOK)
		if h := page.Text("h1"); h != "Dr. Zhivago" {
			t.Errorf("page heading %q", h)
		}
		list := admin.Get("/staff/specialists").Want(http.StatusOK)
		if list.Doc().Find(`a[href="/staff/specialists/`+id.String()+`"]`).Length() != 1 {
			t.Error("the list does not link the new specialist")
		}
	})

	t.Run("ValidationInPlace", func(t *testing.T) {
		before := stfAuditCount(t, app.Pool, c.ID)
		r := admin.Post("/staff/specialists", url.Values{"name": {"   "}, "priority": {"1"}, "active": {"on"}}).Want(http.StatusUnprocessableEntity)
		if msg := r.Text(`[data-testid="name-error"]`); msg != "A specialist needs a name." {
			t.Errorf("name error %q", msg)
		}
		r = admin.Post("/staff/specialists", url.Values{"name": {"Dr. Big"}, "priority": {"5000"}}).Want(http.StatusUnprocessableEntity)
		if msg := r.Text(`[data-testid="priority-error"]`); !strings.Contains(msg, "-1000 to 1000") {
			t.Errorf("priority error %q", msg)
		}
		sp := stfSpecialist(t, app.Pool, c, c.Specialists[0].ID)
		r = admin.Post("/staff/specialists/"+sp.ID.String(), url.Values{"name": {"Dr. X"}, "priority": {"high"}, "version": {strconv.Itoa(int(sp.Version))}}).Want(http.StatusUnprocessableEntity)
		if msg := r.Text(`[data-testid="priority-error"]`); msg == "" {
			t.Error("a priority that is not a number has no message in place")
		}
		if n := stfAuditCount(t, app.Pool, c.ID); n != before {
			t.Errorf("refused forms wrote %d audit rows", n-before)
		}
	})

	t.Run("EditAndStaleVersion", func(t *testing.T) {
		sp := stfSpecialist(t, app.Pool, c, c.Specialists[0].ID)
		path := "/staff/specialists/" + sp.ID.String()
		// Two editors open the form at the same version.
		f1 := stfFormOf(t, admin.Get(path).Want(http.StatusOK).Doc(), `[data-testid="specialist-form"]`)
		f2 := stfFormOf(t, admin.Get(path).Want(http.StatusOK).Doc(), `[data-testid="specialist-form"]`)
		if f1.Values.Get("version") != strconv.Itoa(int(sp.Version)) || f1.Action != path {
			t.Fatalf("form: %+v", f1)
		}
		f1.Values.Set("name", "Dr. First")
		f1.Values.Set("priority", "11")
		admin.Post(f1.Action, f1.Values).WantRedirect(path)
		if notice := admin.Get(path).Text(`p.notice`); notice != "Saved." {
			t.Errorf("after saving: notice %q", notice)
		}
		f2.Values.Set("name", "Dr. Second")
		f2.Values.Set("priority", "22")
		before := stfAuditCount(t, app.Pool, c.ID)
		r := admin.Post(f2.Action, f2.Values).Want(http.StatusConflict)
		if msg := r.Text(`[data-testid="stale"]`); !strings.Contains(msg, "changed by someone else since you opened it") {
			t.Errorf("stale message %q", msg)
		}
		cur := stfFormOf(t, r.Doc(), `[data-testid="specialist-form"]`)
		if cur.Values.Get("name") != "Dr. First" || cur.Values.Get("priority") != "11" || cur.Values.Get("version") != strconv.Itoa(int(sp.Version)+1) {
			t.Errorf("the stale page shows %v, want the current values (Dr. First, 11, version %d)", cur.Values, sp.Version+1)
		}
		if now := stfSpecialist(t, app.Pool, c, sp.ID); now.Name != "Dr. First" || now.Priority != 11 {
			t.Errorf("the stale save overwrote: %+v", now)
		}
		if n := stfAuditCount(t, app.Pool, c.ID); n != before {
			t.Errorf("the stale save wrote %d audit rows", n-before)
		}
		// Saving again from the refreshed form works.
		cur.Values.Set("name", "Dr. Second")
		admin.Post(cur.Action, cur.Values).WantRedirect(path)
	})

	t.Run("DeactivatingListsFutureBookings", func(t *testing.T) {
		sp := stfSpecialist(t, app.Pool, c, c.Specialists[0].ID)
		start := c.Next(time.Thursday, 15, 30)
		stfPhoneBook(t, app, admin, c, sp.ID, start, "Future Person", "future@example.org", "")
		path := "/staff/specialists/" + sp.ID.String()
		f := stfFormOf(t, admin.Get(path).Doc(), `[data-testid="specialist-form"]`)
		f.Values.Del("active")
		admin.Post(f.Action, f.Values).WantRedirect(path)
		if now := stfSpecialist(t, app.Pool, c, sp.ID); now.Active {
			t.Fatal("still active")
		}
		page := admin.Get(path).Want(http.StatusOK)
		if txt := page.Text(`[data-testid="future-bookings"]`); !strings.Contains(txt, "Future Person") || !strings.Contains(txt, start.Format("15:04")) {
			t.Errorf("the deactivated specialist's future bookings: %q", txt)
		}
		var status string
		if err := app.Pool.QueryRow(context.Background(), `SELECT status FROM bookings WHERE specialist_id = $1 AND slot_start = $2`, sp.ID, start).Scan(&status); err != nil || status != "confirmed" {
			t.Errorf("the booking was dropped: %q %v", status, err)
		}
		f = stfFormOf(t, page.Doc(), `[data-testid="specialist-form"]`)
		f.Values.Set("active", "on")
		admin.Post(f.Action, f.Values).WantRedirect(path)
	})
}

// ---------------------------------------------------------------- hours

func TestStaffWeeklyHours(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	sp := c.Specialists[0]
	typ := c.Types[0]
	path := "/staff/specialists/" + sp.ID.String()
	monday := c.Next(time.Monday, 0, 0)

	t.Run("SaveShowsAtOnceInTheTimeslotsAPI", func(t *testing.T) {
		if got := stfTimeslots(t, app, c, typ.ID, sp.ID, monday); len(got) != 16 || got[0] != "09:00" {
			t.Fatalf("before: %v", got) // also warms the cache
		}
		page := admin.Get(path).Want(http.StatusOK)
		f := stfFormOf(t, page.Doc(), `[data-testid="hours-form"]`)
		if f.Values.Get("hours.monday") != "09:00-17:00" || f.Values.Get("hours.sunday") != "" {
			t.Fatalf("hours form: %v", f.Values)
		}
		gen := stfGeneration(t, app, c.ID)
		f.Values.Set("hours.monday", "10:00-11:00, 14:00-15:30")
		f.Values.Set("hours.sunday", "08:00-09:00")
		admin.Post(f.Action, f.Values).WantRedirect(path)
		if g := stfGeneration(t, app, c.ID); g <= gen {
			t.Errorf("saving hours did not bump the slot cache generation (%d -> %d)", gen, g)
		}
		want := []string{"10:00", "10:30", "14:00", "14:30", "15:00"}
		if got := stfTimeslots(t, app, c, typ.ID, sp.ID, monday); !slices.Equal(got, want) {
			t.Fatalf("timeslots right after the save: %v, want %v", got, want)
		}
		page = admin.Get(path).Want(http.StatusOK)
		if n := page.Text(`p.notice`); n != "Hours saved." {
			t.Errorf("notice %q", n)
		}
		f = stfFormOf(t, page.Doc(), `[data-testid="hours-form"]`)
		if f.Values.Get("hours.monday") != "10:00-11:00, 14:00-15:30" {
			t.Errorf("monday reads %q", f.Values.Get("hours.monday"))
		}
		if f.Values.Get("hours.sunday") != "08:00-09:00" {
			t.Errorf("sunday reads %q", f.Values.Get("hours.sunday"))
		}
	})

	invalid := []struct {
		name, day, value, msg string
	}{
		{"Overlap", "monday", "09:00-12:00, 11:00-13:00", "Monday: 09:00–12:00 overlaps 11:00–13:00."},
		{"EndBeforeStart", "tuesday", "12:00-09:00", "Tuesday: 12:00–09:00 ends before it starts."},
		{"NotATime", "wednesday", "9am-5pm", "is not a time like 09:30"},
		{"NoDash", "thursday", "09:00", "write ranges like 08:30-12:30"},
	}
	for _, tc := range invalid {
		t.Run("Invalid"+tc.name, func(t *testing.T) {
			f := stfFormOf(t, admin.Get(path).Doc(), `[data-testid="hours-form"]`)
			before, gen := stfAuditCount(t, app.Pool, c.ID), stfGeneration(t, app, c.ID)
			stored := stfSpecialist(t, app.Pool, c, sp.ID)
			f.Values.Set("hours."+tc.day, tc.value)
			r := admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
			if msg := r.Text(`[data-testid="hours.` + tc.day + `-error"]`); !strings.Contains(msg, tc.msg) {
				t.Errorf("message in place for %s: %q, want %q", tc.day, msg, tc.msg)
			}
			if inv, _ := r.Doc().Find(`input#hours\.` + tc.day).Attr("aria-invalid"); inv != "true" {
				t.Errorf("the %s field is not marked invalid", tc.day)
			}
			if n := stfAuditCount(t, app.Pool, c.ID); n != before {
				t.Errorf("wrote %d audit rows", n-before)
			}
			if g := stfGeneration(t, app, c.ID); g != gen {
				t.Errorf("a refused save bumped the generation")
			}
			if now := stfSpecialist(t, app.Pool, c, sp.ID); now.Version != stored.Version {
				t.Errorf("a refused save bumped the version")
			}
		})
	}

	// What the person typed stays in the field next to its message, so they
	// can correct it rather than type the week again.
	t.Run("InvalidKeepsWhatWasTyped", func(t *testing.T) {
		f := stfFormOf(t, admin.Get(path).Doc(), `[data-testid="hours-form"]`)
		f.Values.Set("hours.monday", "09:00-12:00, 11:00-13:00")
		f.Values.Set("hours.friday", "07:00-08:00")
		r := admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
		back := stfFormOf(t, r.Doc(), `[data-testid="hours-form"]`)
		if back.Values.Get("hours.monday") != "09:00-12:00, 11:00-13:00" || back.Values.Get("hours.friday") != "07:00-08:00" {
			t.Errorf("after the error the form shows monday %q and friday %q: what was typed is lost (the page re-renders the stored hours, so the message names ranges the field no longer shows)",
				back.Values.Get("hours.monday"), back.Values.Get("hours.friday"))
		}
	})

	t.Run("StaleVersion", func(t *testing.T) {
		f1 := stfFormOf(t, admin.Get(path).Doc(), `[data-testid="hours-form"]`)
		f2 := stfFormOf(t, admin.Get(path).Doc(), `[data-testid="hours-form"]`)
		f1.Values.Set("hours.tuesday", "08:00-12:00")
		admin.Post(f1.Action, f1.Values).WantRedirect(path)
		before := stfAuditCount(t, app.Pool, c.ID)
		f2.Values.Set("hours.tuesday", "13:00-18:00")
		r := admin.Post(f2.Action, f2.Values).Want(http.StatusConflict)
		if msg := r.Text(`[data-testid="stale"]`); !strings.Contains(msg, "changed by someone else since you opened it") {
			t.Errorf("stale message %q", msg)
		}
		cur := stfFormOf(t, r.Doc(), `[data-testid="hours-form"]`)
		if cur.Values.Get("hours.tuesday") != "08:00-12:00" {
			t.Errorf("the stale page shows tuesday %q, want the current 08:00-12:00", cur.Values.Get("hours.tuesday"))
		}
		if n := stfAuditCount(t, app.Pool, c.ID); n != before {
			t.Errorf("the stale save wrote %d audit rows", n-before)
		}
		tuesday := c.Next(time.Tuesday, 0, 0)
		if got := stfTimeslots(t, app, c, typ.ID, sp.ID, tuesday); len(got) != 8 || got[0] != "08:00" {
			t.Errorf("tuesday's slots after the stale save: %v", got)
		}
	})

	t.Run("StaffMayEditHours", func(t *testing.T) {
		s := stfSignIn(t, app, c.Staff)
		f := stfFormOf(t, s.Get(path).Want(http.StatusOK).Doc(), `[data-testid="hours-form"]`)
		f.Values.Set("hours.saturday", "09:00-10:00")
		s.Post(f.Action, f.Values).WantRedirect(path)
		if a := stfLastAudit(t, app.Pool, c.ID); a.Action != "hours.update" || a.Actor != c.Staff.Actor() {
			t.Errorf("audit row %s by %s", a.Action, a.Actor)
		}
	})
}

// ---------------------------------------------------------------- overrides

func TestStaffOverrides(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	sp, typ := c.Specialists[0], c.Types[0]
	path := "/staff/specialists/" + sp.ID.String()
	day := c.Next(time.Monday, 0, 0)
	dayS := day.Format(time.DateOnly)

	if got := stfTimeslots(t, app, c, typ.ID, sp.ID, day); len(got) != 16 {
		t.Fatalf("before: %v", got)
	}
	// Closed all day.
	f := stfFormOf(t, admin.Get(path).Doc(), `[data-testid="override-form"]`)
	if f.Values.Get("closed") != "on" {
		t.Fatalf("the override form is not 'closed' by default: %v", f.Values)
	}
	f.Values.Set("day", dayS)
	f.Values.Set("note", "Training")
	admin.Post(f.Action, f.Values).WantRedirect(path)
	if got := stfTimeslots(t, app, c, typ.ID, sp.ID, day); len(got) != 0 {
		t.Fatalf("the closed day still has slots in the API: %v", got)
	}
	page := admin.Get(path).Want(http.StatusOK)
	if txt := page.Text(`[data-testid="overrides"]`); !strings.Contains(txt, day.Format("Mon 2 Jan 2006")+": closed") || !strings.Contains(txt, "(Training)") {
		t.Fatalf("overrides list: %q", txt)
	}
	if n := page.Text(`p.notice`); n != "Override added." {
		t.Errorf("notice %q", n)
	}
	// The calendar shows it on that day.
	cal := admin.Get("/staff?date=" + dayS + "&view=day").Want(http.StatusOK)
	if txt := cal.Text(`section#cal-` + dayS + ` .override`); !strings.Contains(txt, sp.Name+": closed (Training)") {
		t.Errorf("calendar override: %q", txt)
	}

	t.Run("OverlapIsAConflictInPlace", func(t *testing.T) {
		f := stfFormOf(t, admin.Get(path).Doc(), `[data-testid="override-form"]`)
		f.Values.Set("day", dayS)
		before := stfAuditCount(t, app.Pool, c.ID)
		r := admin.Post(f.Action, f.Values).Want(http.StatusConflict)
		if msg := r.Text(`[role="alert"]`); !strings.Contains(msg, "overlaps an override") {
			t.Errorf("message %q", msg)
		}
		if n := stfAuditCount(t, app.Pool, c.ID); n != before {
			t.Errorf("wrote %d audit rows", n-before)
		}
	})

	t.Run("ReplacementHoursValidated", func(t *testing.T) {
		f := stfFormOf(t, admin.Get(path).Doc(), `[data-testid="override-form"]`)
		f.Values.Del("closed")
		f.Values.Set("day", day.AddDate(0, 0, 1).Format(time.DateOnly))
		f.Values.Set("start", "12:00")
		f.Values.Set("end", "10:00")
		r := admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
		if msg := r.Text(`[data-testid="end-error"]`); msg != "The end must be after the start." {
			t.Errorf("end error %q", msg)
		}
		f.Values.Set("start", "")
		r = admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
		if msg := r.Text(`[data-testid="start-error"]`); msg == "" {
			t.Error("no message for a missing start")
		}
		f.Values.Set("start", "10:00")
		f.Values.Set("end", "12:00")
		f.Values.Set("day", "")
		r = admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
		if msg := r.Text(`[data-testid="day-error"]`); msg != "Pick a date." {
			t.Errorf("day error %q", msg)
		}
		// And valid replacement hours apply.
		tuesday := day.AddDate(0, 0, 1)
		f.Values.Set("day", tuesday.Format(time.DateOnly))
		admin.Post(f.Action, f.Values).WantRedirect(path)
		if got := stfTimeslots(t, app, c, typ.ID, sp.ID, tuesday); !slices.Equal(got, []string{"10:00", "10:30", "11:00", "11:30"}) {
			t.Errorf("replacement hours 10:00-12:00 give %v", got)
		}
	})

	t.Run("StaleVersion", func(t *testing.T) {
		f := stfFormOf(t, admin.Get(path).Doc(), `[data-testid="override-form"]`)
		f.Values.Set("version", strconv.Itoa(int(stfSpecialist(t, app.Pool, c, sp.ID).Version)-1))
		f.Values.Set("day", day.AddDate(0, 0, 3).Format(time.DateOnly))
		r := admin.Post(f.Action, f.Values).Want(http.StatusConflict)
		if r.Doc().Find(`[data-testid="stale"]`).Length() != 1 {
			t.Error("no stale message")
		}
	})

	t.Run("Delete", func(t *testing.T) {
		page := admin.Get(path)
		var del stfForm
		page.Doc().Find(`[data-testid="overrides"] li`).Each(func(_ int, li *goquery.Selection) {
			if strings.Contains(li.Text(), "Training") {
				a, _ := li.Find("form").Attr("action")
				del = stfForm{Action: a}
				v, _ := li.Find(`input[name="version"]`).Attr("value")
				del.Values = url.Values{"version": {v}}
			}
		})
		if !strings.HasPrefix(del.Action, "/staff/overrides/") {
			t.Fatalf("no remove form for the closed day")
		}
		gen := stfGeneration(t, app, c.ID)
		admin.Post(del.Action, del.Values).WantRedirect(path)
		if g := stfGeneration(t, app, c.ID); g <= gen {
			t.Error("deleting an override did not bump the generation")
		}
		if got := stfTimeslots(t, app, c, typ.ID, sp.ID, day); len(got) != 16 {
			t.Errorf("after removing the closed day: %v", got)
		}
		if txt := admin.Get(path).Text(`[data-testid="overrides"]`); strings.Contains(txt, "Training") {
			t.Errorf("still listed: %q", txt)
		}
		admin.Post(del.Action, del.Values).Want(http.StatusNotFound)
	})
}

// ---------------------------------------------------------------- types

func TestStaffAppointmentTypes(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 2)
	admin := stfSignIn(t, app, c.Admin)

	newForm := stfFormOf(t, admin.Get("/staff/types/new").Want(http.StatusOK).Doc(), `[data-testid="type-form"]`)
	if newForm.Action != "/staff/types" {
		t.Fatalf("new type form posts to %q", newForm.Action)
	}
	fill := func(v url.Values) {
		v.Set("name", "Long visit")
		v.Set("description", "A long one.")
		v.Set("durationMin", "45")
		v.Set("slotStepMin", "15")
		v.Set("bufferBeforeMin", "5")
		v.Set("bufferAfterMin", "10")
		v.Set("minNoticeMin", "120")
		v.Set("maxAdvanceDays", "30")
		v.Set("cooldownMin", "60")
		v.Set("maxHoldsPerClient", "2")
		v["specialists"] = []string{c.Specialists[1].ID.String()}
	}

	t.Run("DurationZeroIsRefusedInPlace", func(t *testing.T) {
		v := stfCloneValues(newForm.Values)
		fill(v)
		v.Set("durationMin", "0")
		before := stfAuditCount(t, app.Pool, c.ID)
		r := admin.Post("/staff/types", v).Want(http.StatusUnprocessableEntity)
		if msg := r.Text(`[data-testid="durationMin-error"]`); msg != "Duration (minutes) must be from 5 to 480." {
			t.Errorf("durationMin error %q", msg)
		}
		back := stfFormOf(t, r.Doc(), `[data-testid="type-form"]`)
		if back.Values.Get("name") != "Long visit" || back.Values.Get("slotStepMin") != "15" || !slices.Contains(back.Values["specialists"], c.Specialists[1].ID.String()) {
			t.Errorf("the form lost what was typed: %v", back.Values)
		}
		for field, val := range map[string]string{"slotStepMin": "1", "bufferBeforeMin": "-1", "maxAdvanceDays": "0", "maxHoldsPerClient": "11", "name": " "} {
			v := stfCloneValues(newForm.Values)
			fill(v)
			v.Set(field, val)
			r := admin.Post("/staff/types", v).Want(http.StatusUnprocessableEntity)
			if r.Text(`[data-testid="`+field+`-error"]`) == "" {
				t.Errorf("%s=%q: no message in place", field, val)
			}
		}
		if n := stfAuditCount(t, app.Pool, c.ID); n != before {
			t.Errorf("refused forms wrote %d audit rows", n-before)
		}
	})

	var id uuid.UUID
	t.Run("CreateStoresEveryField", func(t *testing.T) {
		v := stfCloneValues(newForm.Values)
		fill(v)
		r := admin.Post("/staff/types", v)
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/staff/types/") {
			t.Fatalf("create: %d %q\n%s", r.Status, r.Header.Get("Location"), pgClip(r.Body, 1000))
		}
		id = uuid.MustParse(strings.TrimPrefix(r.Header.Get("Location"), "/staff/types/"))
		got, err := db.New(app.Pool).AppointmentTypeGetInClinic(context.Background(), db.AppointmentTypeGetInClinicParams{ID: id, ClinicID: c.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Long visit" || got.Description != "A long one." || got.DurationMin != 45 || got.SlotStepMin != 15 || got.BufferBeforeMin != 5 ||
			got.BufferAfterMin != 10 || got.MinNoticeMin != 120 || got.MaxAdvanceDays != 30 || got.CooldownMin != 60 || got.MaxHoldsPerClient != 2 {
			t.Errorf("stored: %+v", got)
		}
		ids, _ := db.New(app.Pool).AppointmentTypeSpecialistIDs(context.Background(), id)
		if len(ids) != 1 || ids[0] != c.Specialists[1].ID {
			t.Errorf("performed by %v", ids)
		}
		page := stfFormOf(t, admin.Get("/staff/types/"+id.String()).Want(http.StatusOK).Doc(), `[data-testid="type-form"]`)
		if page.Values.Get("durationMin") != "45" || page.Values.Get("cooldownMin") != "60" || !slices.Equal(page.Values["specialists"], []string{c.Specialists[1].ID.String()}) {
			t.Errorf("the type page reads %v", page.Values)
		}
		if admin.Get("/staff/types").Doc().Find(`a[href="/staff/types/`+id.String()+`"]`).Length() != 1 {
			t.Error("not in the list")
		}
	})

	t.Run("EditAndStaleVersion", func(t *testing.T) {
		if id == uuid.Nil {
			t.Skip("no type")
		}
		p := "/staff/types/" + id.String()
		f1 := stfFormOf(t, admin.Get(p).Doc(), `[data-testid="type-form"]`)
		f2 := stfFormOf(t, admin.Get(p).Doc(), `[data-testid="type-form"]`)
		f1.Values.Set("name", "Longer visit")
		f1.Values.Set("durationMin", "60")
		f1.Values["specialists"] = []string{c.Specialists[0].ID.String(), c.Specialists[1].ID.String()}
		admin.Post(f1.Action, f1.Values).WantRedirect(p)
		f2.Values.Set("name", "Short visit")
		f2.Values.Set("durationMin", "15")
		before := stfAuditCount(t, app.Pool, c.ID)
		r := admin.Post(f2.Action, f2.Values).Want(http.StatusConflict)
		if msg := r.Text(`[data-testid="stale"]`); !strings.Contains(msg, "changed by someone else since you opened it") {
			t.Errorf("stale message %q", msg)
		}
		cur := stfFormOf(t, r.Doc(), `[data-testid="type-form"]`)
		if cur.Values.Get("name") != "Longer visit" || cur.Values.Get("durationMin") != "60" || len(cur.Values["specialists"]) != 2 {
			t.Errorf("the stale page shows %v, want the current values", cur.Values)
		}
		if n := stfAuditCount(t, app.Pool, c.ID); n != before {
			t.Errorf("the stale save wrote %d rows", n-before)
		}
		got, _ := db.New(app.Pool).AppointmentTypeGetInClinic(context.Background(), db.AppointmentTypeGetInClinicParams{ID: id, ClinicID: c.ID})
		if got.Name != "Longer visit" || got.DurationMin != 60 {
			t.Errorf("stored after the stale save: %+v", got)
		}
	})
}

// ---------------------------------------------------------------- audit trail and cache

// Every change through the staff pages writes exactly one audit row, by
// staff:<email>, and bumps the slot cache generation.
func TestStaffEveryChangeWritesOneAuditRowAndBumpsTheGeneration(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	sp := c.Specialists[0]
	var newSpPath, typePath string
	var bk booking.Booking

	steps := []struct {
		name, action string
		do           func()
	}{
		{"create specialist", "specialist.create", func() {
			r := admin.Post("/staff/specialists", url.Values{"name": {"Dr. Audit"}, "priority": {"3"}, "active": {"on"}}).Want(http.StatusSeeOther)
			newSpPath = r.Header.Get("Location")
		}},
		{"update specialist", "specialist.update", func() {
			f := stfFormOf(t, admin.Get(newSpPath).Doc(), `[data-testid="specialist-form"]`)
			f.Values.Set("name", "Dr. Audited")
			admin.Post(f.Action, f.Values).WantRedirect(newSpPath)
		}},
		{"set hours", "hours.update", func() {
			f := stfFormOf(t, admin.Get("/staff/specialists/"+sp.ID.String()).Doc(), `[data-testid="hours-form"]`)
			f.Values.Set("hours.saturday", "09:00-13:00")
			admin.Post(f.Action, f.Values).Want(http.StatusSeeOther)
		}},
		{"add override", "override.create", func() {
			f := stfFormOf(t, admin.Get("/staff/specialists/"+sp.ID.String()).Doc(), `[data-testid="override-form"]`)
			f.Values.Set("day", c.Next(time.Friday, 0, 0).Format(time.DateOnly))
			admin.Post(f.Action, f.Values).Want(http.StatusSeeOther)
		}},
		{"delete override", "override.delete", func() {
			f := stfFormOf(t, admin.Get("/staff/specialists/"+sp.ID.String()).Doc(), `[data-testid="overrides"] form`)
			admin.Post(f.Action, f.Values).Want(http.StatusSeeOther)
		}},
		{"create type", "type.create", func() {
			f := stfFormOf(t, admin.Get("/staff/types/new").Doc(), `[data-testid="type-form"]`)
			f.Values.Set("name", "Audit type")
			f.Values["specialists"] = []string{sp.ID.String()}
			r := admin.Post("/staff/types", f.Values).Want(http.StatusSeeOther)
			typePath = r.Header.Get("Location")
		}},
		{"update type", "type.update", func() {
			f := stfFormOf(t, admin.Get(typePath).Doc(), `[data-testid="type-form"]`)
			f.Values.Set("durationMin", "20")
			admin.Post(f.Action, f.Values).WantRedirect(typePath)
		}},
		{"phone booking", "booking.create", func() {
			bk = stfPhoneBook(t, app, admin, c, sp.ID, c.Next(time.Tuesday, 9, 0), "Audit Patient", "audit@example.org", "")
		}},
		{"reschedule", "booking.reschedule", func() {
			to := bk.Start.Add(2 * time.Hour).In(c.Loc)
			admin.Post("/staff/bookings/"+bk.ID.String()+"/reschedule", url.Values{
				"start": {to.Format("2006-01-02T15:04")}, "version": {strconv.Itoa(int(bk.Version))}, "reason": {"patient asked"},
			}).Want(http.StatusOK)
			var id uuid.UUID
			if err := app.Pool.QueryRow(context.Background(), `SELECT id FROM bookings WHERE rescheduled_from = $1`, bk.ID).Scan(&id); err != nil {
				t.Fatal(err)
			}
			bk = stfBooking(t, app, id)
		}},
		{"cancel", "booking.cancel", func() {
			admin.Post("/staff/bookings/"+bk.ID.String()+"/cancel", url.Values{"reason": {"patient is ill"}}).Want(http.StatusOK)
		}},
		{"create kiosk token", "kiosk_token.create", func() {
			admin.Post("/staff/kiosks", url.Values{"name": {"Lobby"}}).Want(http.StatusCreated)
		}},
		{"create staff account", "staff.create", func() {
			admin.Post("/staff/users", url.Values{"email": {"new-" + uuid.NewString()[:8] + "@example.org"}, "name": {"New"}, "password": {"long enough password"}, "role": {"staff"}}).Want(http.StatusCreated)
		}},
	}
	for _, st := range steps {
		before, gen := stfAuditCount(t, app.Pool, c.ID), stfGeneration(t, app, c.ID)
		st.do()
		if n := stfAuditCount(t, app.Pool, c.ID) - before; n != 1 {
			t.Errorf("%s: %d audit rows, want exactly 1", st.name, n)
		}
		last := stfLastAudit(t, app.Pool, c.ID)
		if last.Action != st.action || last.Actor != c.Admin.Actor() {
			t.Errorf("%s: newest audit row %s by %s, want %s by %s", st.name, last.Action, last.Actor, st.action, c.Admin.Actor())
		}
		if g := stfGeneration(t, app, c.ID); g <= gen {
			t.Errorf("%s: the slot cache generation did not increase (%d -> %d)", st.name, gen, g)
		}
	}
}

func TestStaffAuditPage(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	other := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	ctx := context.Background()
	q := db.New(app.Pool)
	ins := func(clinic uuid.UUID, actor, action, entity, id string) {
		t.Helper()
		if err := q.AuditInsert(ctx, db.AuditInsertParams{ClinicID: clinic, Actor: actor, Action: action, Entity: entity, EntityID: id,
			After: json.RawMessage(`{"n":"` + id + `"}`), Reason: "because " + id}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 55 {
		ins(c.ID, "staff:bulk@example.org", "specialist.update", "specialist", fmt.Sprintf("sp-%02d", i))
	}
	for i := range 3 {
		ins(c.ID, "patient", "booking.create", "booking", fmt.Sprintf("bk-%d", i))
	}
	ins(other.ID, "staff:bulk@example.org", "specialist.update", "specialist", "theirs")
	ins(other.ID, "patient", "booking.create", "booking", "their-booking")

	rowsOf := func(r *pgResp) *goquery.Selection { return r.Doc().Find(`[data-testid="audit"] tbody tr`) }
	older := func(r *pgResp) string {
		href, _ := r.Doc().Find(`a:contains("Older")`).Attr("href")
		return href
	}

	p1 := admin.Get("/staff/audit").Want(http.StatusOK)
	if n := rowsOf(p1).Length(); n != 50 {
		t.Fatalf("page 1 has %d rows, want 50", n)
	}
	if txt := rowsOf(p1).First().Text(); !strings.Contains(txt, "patient") || !strings.Contains(txt, "booking.create") || !strings.Contains(txt, "bk-2") || !strings.Contains(txt, "because bk-2") {
		t.Errorf("newest row: %q (who, what, entity, reason)", txt)
	}
	next := older(p1)
	if next == "" {
		t.Fatal("58 rows and no Older link")
	}
	p2 := admin.Get(next).Want(http.StatusOK)
	if n := rowsOf(p2).Length(); n != 8 {
		t.Errorf("page 2 has %d rows, want 8", n)
	}
	if older(p2) != "" || p2.Doc().Find(`a:contains("Newer")`).Length() != 1 {
		t.Error("page 2: want a Newer link and no Older link")
	}
	if strings.Contains(p1.Body+p2.Body, "theirs") || strings.Contains(p1.Body+p2.Body, "their-booking") {
		t.Error("the audit page shows the other clinic's rows")
	}

	byEntity := admin.Get("/staff/audit?entity=booking").Want(http.StatusOK)
	if n := rowsOf(byEntity).Length(); n != 3 {
		t.Errorf("entity=booking: %d rows, want 3", n)
	}
	if v, _ := byEntity.Doc().Find(`input#a-entity`).Attr("value"); v != "booking" {
		t.Errorf("the filter form forgot the entity: %q", v)
	}
	byActor := admin.Get("/staff/audit?actor=" + url.QueryEscape("staff:bulk@example.org")).Want(http.StatusOK)
	if n := rowsOf(byActor).Length(); n != 50 {
		t.Errorf("actor filter: %d rows on page 1, want 50", n)
	}
	rowsOf(byActor).Each(func(_ int, tr *goquery.Selection) {
		if !strings.Contains(tr.Text(), "staff:bulk@example.org") {
			t.Errorf("actor filter shows %q", strings.Join(strings.Fields(tr.Text()), " "))
		}
	})
	next = older(byActor)
	if !strings.Contains(next, "actor=staff") {
		t.Fatalf("the Older link drops the filter: %q", next)
	}
	if n := rowsOf(admin.Get(next)).Length(); n != 5 {
		t.Errorf("actor filter page 2: %d rows, want 5", n)
	}
	if n := rowsOf(admin.Get("/staff/audit?actor=patient&entity=specialist")).Length(); n != 0 {
		t.Errorf("actor=patient&entity=specialist: %d rows", n)
	}
	tomorrow := time.Now().In(c.Loc).AddDate(0, 0, 1).Format(time.DateOnly)
	if n := rowsOf(admin.Get("/staff/audit?from=" + tomorrow)).Length(); n != 0 {
		t.Errorf("from=tomorrow: %d rows", n)
	}
	today := time.Now().In(c.Loc).Format(time.DateOnly)
	if n := rowsOf(admin.Get("/staff/audit?entity=booking&from=" + today + "&to=" + today)).Length(); n != 3 {
		t.Errorf("today's booking rows: %d", n)
	}
	admin.Get("/staff/audit?from=yesterday").Want(http.StatusBadRequest)
}

// ---------------------------------------------------------------- bookings

func TestStaffPhoneBookingCancelReschedule(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	sp := c.Specialists[0]
	start := c.Next(time.Tuesday, 10, 0)
	date := start.Format(time.DateOnly)

	bk := stfPhoneBook(t, app, admin, c, sp.ID, start, "Phone Patient", "phone@example.org", "+49 30 1234567")
	if a := stfLastAudit(t, app.Pool, c.ID); a.Action != "booking.create" || a.Actor != c.Admin.Actor() || a.EntityID != bk.ID.String() {
		t.Errorf("audit row %s by %s for %s", a.Action, a.Actor, a.EntityID)
	}
	if bk.Patient.Phone != "+49 30 1234567" || bk.Status != booking.StatusConfirmed {
		t.Errorf("booking: %+v", bk)
	}

	t.Run("ShowsOnTheCalendarDay", func(t *testing.T) {
		cal := admin.Get("/staff?date=" + date + "&view=day").Want(http.StatusOK)
		entry := cal.Doc().Find(`section#cal-` + date + ` [data-testid="entry-booking"]`)
		if entry.Length() != 1 || !strings.Contains(entry.Text(), "Phone Patient") || !strings.Contains(entry.Text(), "10:00") || !strings.Contains(entry.Text(), c.Types[0].Name) {
			t.Fatalf("calendar entry: %q", entry.Text())
		}
		week := admin.Get("/staff?date=" + date + "&specialist=" + sp.ID.String()).Want(http.StatusOK)
		if week.Doc().Find(`[data-testid="cal-day"]`).Length() != 7 {
			t.Error("the week view does not have 7 days")
		}
		if !strings.Contains(week.Text(`section#cal-`+date), "Phone Patient") {
			t.Error("the week view lacks the booking")
		}
	})

	t.Run("TakenSlotIs409InPlace", func(t *testing.T) {
		before := stfAuditCount(t, app.Pool, c.ID)
		r := admin.Post("/staff/bookings", stfPhoneForm(c, sp.ID, start, "Second Caller", "second@example.org", "")).Want(http.StatusConflict)
		if msg := r.Text(`[data-testid="calendar-error"]`); msg != "That slot is no longer available. Please pick another time." {
			t.Errorf("taken: %q", msg)
		}
		if n := stfAuditCount(t, app.Pool, c.ID); n != before {
			t.Errorf("wrote %d rows", n-before)
		}
	})

	t.Run("HeldOnlineIs423InPlace", func(t *testing.T) {
		held := c.Next(time.Tuesday, 11, 0)
		stfHold(t, app, c.Types[0].ID, sp.ID, held, "online-patient-"+uuid.NewString()[:8])
		cal := admin.Get("/staff?date=" + held.Format(time.DateOnly) + "&view=day").Want(http.StatusOK)
		h := cal.Doc().Find(`[data-testid="entry-held"]`)
		if h.Length() != 1 || !strings.Contains(h.Text(), "11:00") || strings.Contains(h.Text(), "online-patient") {
			t.Errorf("the calendar's held entry: %q", h.Text())
		}
		before := stfAuditCount(t, app.Pool, c.ID)
		r := admin.Post("/staff/bookings", stfPhoneForm(c, sp.ID, held.Add(-15*time.Minute), "Overlapping Caller", "o@example.org", "")).Want(http.StatusLocked)
		if msg := r.Text(`[data-testid="calendar-error"]`); !strings.Contains(msg, "Someone is booking this slot right now") {
			t.Errorf("held: %q", msg)
		}
		if n := stfAuditCount(t, app.Pool, c.ID); n != before {
			t.Errorf("wrote %d rows", n-before)
		}
	})

	t.Run("BadInputIs400InPlace", func(t *testing.T) {
		f := stfPhoneForm(c, sp.ID, c.Next(time.Tuesday, 12, 0), "No Email", "", "")
		r := admin.Post("/staff/bookings", f)
		if r.Status != http.StatusBadRequest || r.Text(`[data-testid="calendar-error"]`) == "" {
			t.Errorf("no e-mail: %d %q", r.Status, r.Text(`[data-testid="calendar-error"]`))
		}
		f = stfPhoneForm(c, sp.ID, c.Next(time.Tuesday, 12, 0), "No Time", "t@example.org", "")
		f.Set("time", "")
		if r := admin.Post("/staff/bookings", f); r.Status != http.StatusBadRequest || r.Text(`[data-testid="calendar-error"]`) == "" {
			t.Errorf("no time: %d", r.Status)
		}
	})

	t.Run("CancelNeedsAReason", func(t *testing.T) {
		other := stfPhoneBook(t, app, admin, c, sp.ID, c.Next(time.Wednesday, 9, 30), "Cancel Me", "cancel@example.org", "")
		before := stfAuditCount(t, app.Pool, c.ID)
		r := admin.Post("/staff/bookings/"+other.ID.String()+"/cancel", url.Values{"reason": {"  "}}).Want(http.StatusBadRequest)
		if msg := r.Text(`[data-testid="calendar-error"]`); msg != "Give a reason: it goes into the audit log." {
			t.Errorf("no reason: %q", msg)
		}
		if b := stfBooking(t, app, other.ID); b.Status != booking.StatusConfirmed {
			t.Fatalf("cancelled without a reason: %s", b.Status)
		}
		if n := stfAuditCount(t, app.Pool, c.ID); n != before {
			t.Errorf("wrote %d rows", n-before)
		}
		r = admin.Post("/staff/bookings/"+other.ID.String()+"/cancel", url.Values{"reason": {"Patient called to cancel"}}).Want(http.StatusOK)
		if n := r.Text(`p.notice`); n != "Cancelled the booking of Cancel Me." {
			t.Errorf("notice %q", n)
		}
		if b := stfBooking(t, app, other.ID); b.Status != booking.StatusCancelled {
			t.Fatalf("status %s", b.Status)
		}
		a := stfLastAudit(t, app.Pool, c.ID)
		if a.Action != "booking.cancel" || a.Reason != "Patient called to cancel" || a.Actor != c.Admin.Actor() || a.EntityID != other.ID.String() {
			t.Errorf("audit row: %s %q by %s", a.Action, a.Reason, a.Actor)
		}
		admin.Post("/staff/bookings/"+uuid.NewString()+"/cancel", url.Values{"reason": {"x"}}).Want(http.StatusNotFound)
		admin.Post("/staff/bookings/not-an-id/cancel", url.Values{"reason": {"x"}}).Want(http.StatusNotFound)
	})

	// A move without the version the form was opened at is refused, like a
	// stale one: "every edit carries the row's version ... never a silent
	// overwrite".
	t.Run("RescheduleWithoutVersionIsRefused", func(t *testing.T) {
		mv := stfPhoneBook(t, app, admin, c, sp.ID, c.Next(time.Thursday, 10, 0), "No Version", "nv@example.org", "")
		to := mv.Start.Add(4 * time.Hour).In(c.Loc).Format("2006-01-02T15:04")
		before := stfAuditCount(t, app.Pool, c.ID)
		r := admin.Post("/staff/bookings/"+mv.ID.String()+"/reschedule", url.Values{"start": {to}, "reason": {"no version given"}})
		if r.Status < 400 {
			t.Errorf("a reschedule without a version: %d, want a refusal (the form's version is ignored when missing: staffReschedule passes 0, and booking.Reschedule skips the check for ExpectVersion 0)", r.Status)
		}
		if b := stfBooking(t, app, mv.ID); b.Status != booking.StatusConfirmed || !b.Start.Equal(mv.Start) {
			t.Errorf("the booking was moved without a version check: status %s", b.Status)
		}
		if n := stfAuditCount(t, app.Pool, c.ID); n != before && r.Status < 400 {
			t.Logf("it wrote %d audit rows", n-before)
		}
	})

	t.Run("RescheduleStaleVersionChangesNothing", func(t *testing.T) {
		mv := stfPhoneBook(t, app, admin, c, sp.ID, c.Next(time.Thursday, 9, 0), "Move Me", "move@example.org", "")
		to := mv.Start.Add(3 * time.Hour).In(c.Loc).Format("2006-01-02T15:04")
		before := stfAuditCount(t, app.Pool, c.ID)
		r := admin.Post("/staff/bookings/"+mv.ID.String()+"/reschedule", url.Values{"start": {to}, "version": {strconv.Itoa(int(mv.Version) + 1)}, "reason": {"x"}})
		if r.Status != http.StatusPreconditionFailed && r.Status != http.StatusConflict {
			t.Fatalf("stale reschedule: %d", r.Status)
		}
		if msg := r.Text(`[data-testid="calendar-error"]`); !strings.Contains(msg, "changed since you loaded it") {
			t.Errorf("stale reschedule message %q", msg)
		}
		if b := stfBooking(t, app, mv.ID); b.Status != booking.StatusConfirmed || !b.Start.Equal(mv.Start) || b.Version != mv.Version {
			t.Errorf("the stale reschedule changed the booking: %+v", b)
		}
		if n := stfAuditCount(t, app.Pool, c.ID); n != before {
			t.Errorf("wrote %d rows", n-before)
		}
		// Without a reason: refused too.
		admin.Post("/staff/bookings/"+mv.ID.String()+"/reschedule", url.Values{"start": {to}, "version": {strconv.Itoa(int(mv.Version))}}).Want(http.StatusBadRequest)
		// Onto a taken time: refused, nothing changes.
		r = admin.Post("/staff/bookings/"+mv.ID.String()+"/reschedule", url.Values{"start": {start.Format("2006-01-02T15:04")}, "version": {strconv.Itoa(int(mv.Version))}, "reason": {"x"}}).Want(http.StatusConflict)
		if b := stfBooking(t, app, mv.ID); b.Status != booking.StatusConfirmed {
			t.Errorf("a refused move changed the booking: %+v", b)
		}
		// With the current version it moves.
		r = admin.Post("/staff/bookings/"+mv.ID.String()+"/reschedule", url.Values{"start": {to}, "version": {strconv.Itoa(int(mv.Version))}, "reason": {"doctor is late"}}).Want(http.StatusOK)
		if !strings.Contains(r.Text(`p.notice`), "Moved to") {
			t.Errorf("notice %q", r.Text(`p.notice`))
		}
		if b := stfBooking(t, app, mv.ID); b.Status != booking.StatusRescheduled {
			t.Errorf("old booking status %s", b.Status)
		}
		a := stfLastAudit(t, app.Pool, c.ID)
		if a.Action != "booking.reschedule" || a.Reason != "doctor is late" || a.Actor != c.Admin.Actor() {
			t.Errorf("audit: %s %q %s", a.Action, a.Reason, a.Actor)
		}
	})
}

func TestStaffBookingSearch(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	other := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	start := c.Next(time.Friday, 13, 0)
	stfPhoneBook(t, app, admin, c, c.Specialists[0].ID, start, "Zelda Quartermain", "zelda.q@example.org", "+49 30 5550199")
	otherAdmin := stfSignIn(t, app, other.Admin)
	stfPhoneBook(t, app, otherAdmin, other, other.Specialists[0].ID, start, "Zelda Otherclinic", "zelda.o@example.org", "")

	for _, q := range []string{"quarterm", "ZELDA", "zelda.q@example", "5550199"} {
		r := admin.Get("/staff/bookings/search?q=" + url.QueryEscape(q)).Want(http.StatusOK)
		rows := r.Doc().Find(`[data-testid="table"] tbody tr`)
		if rows.Length() != 1 || !strings.Contains(rows.Text(), "Zelda Quartermain") || !strings.Contains(rows.Text(), start.Format("Mon 2 Jan 2006 15:04")) {
			t.Errorf("search %q: %d rows %q", q, rows.Length(), rows.Text())
		}
		if strings.Contains(r.Body, "Otherclinic") {
			t.Errorf("search %q shows the other clinic's booking", q)
		}
		if v, _ := r.Doc().Find(`input#s-q`).Attr("value"); v != q {
			t.Errorf("the search box forgot %q", q)
		}
	}
	d := start.Format(time.DateOnly)
	if r := admin.Get("/staff/bookings/search?q=zelda&from=" + d + "&to=" + d); r.Doc().Find(`[data-testid="table"] tbody tr`).Length() != 1 {
		t.Error("the date range around the booking does not find it")
	}
	after := start.AddDate(0, 0, 1).Format(time.DateOnly)
	r := admin.Get("/staff/bookings/search?q=zelda&from=" + after).Want(http.StatusOK)
	if r.Doc().Find(`[data-testid="table"] tbody tr`).Length() != 0 || r.Text(`[data-testid="notice"]`) != "No bookings match." {
		t.Errorf("a range after the booking: %q", r.Text(`[data-testid="notice"]`))
	}
	if r := admin.Get("/staff/bookings/search?q=nobody-like-this"); r.Text(`[data-testid="notice"]`) != "No bookings match." {
		t.Errorf("no match: %q", r.Text(`[data-testid="notice"]`))
	}
	admin.Get("/staff/bookings/search?q=x&from=soon").Want(http.StatusBadRequest)
}

// The calendar's stream sends whole day blocks, and a booking made
// elsewhere arrives in its day without a reload.
func TestStaffCalendarStream(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	start := c.Next(time.Wednesday, 15, 0)
	date := start.Format(time.DateOnly)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", app.TS.URL+"/staff/live?date="+date+"&view=day", nil)
	res, err := admin.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	events := make(chan [2]string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var name string
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			case line == "":
				if name != "" {
					events <- [2]string{name, strings.Join(data, "\n")}
				}
				name, data = "", nil
			}
		}
	}()
	next := func(what string) [2]string {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended waiting for %s", what)
			}
			return ev
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
		return [2]string{}
	}
	first := next("the first day block")
	if first[0] != "cal-"+date || !strings.Contains(first[1], `id="cal-`+date+`"`) || strings.Contains(first[1], "Stream Patient") {
		t.Fatalf("first event %q: %s", first[0], pgClip(first[1], 300))
	}
	// A patient books through the API.
	holdID := stfHold(t, app, c.Types[0].ID, c.Specialists[0].ID, start, "stream-client")
	body, _ := json.Marshal(map[string]any{"holdId": holdID, "clientId": "stream-client", "patient": map[string]string{"name": "Stream Patient", "email": "stream@example.org"}})
	bres, err := http.Post(app.TS.URL+"/v1/appointment-types/"+c.Types[0].ID.String()+"/book", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	bres.Body.Close()
	if bres.StatusCode != http.StatusCreated {
		t.Fatalf("book: %d", bres.StatusCode)
	}
	for {
		ev := next("the day block with the booking")
		if ev[0] == "cal-"+date && strings.Contains(ev[1], "Stream Patient") {
			if !strings.Contains(ev[1], `data-testid="entry-booking"`) {
				t.Errorf("the booking arrives but not as an entry: %s", pgClip(ev[1], 400))
			}
			stfCheckLiveForms(t, ev[1])
			break
		}
	}
}

// ---------------------------------------------------------------- accounts and kiosks

func TestStaffAccounts(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	page := admin.Get("/staff/users").Want(http.StatusOK)
	if !strings.Contains(page.Text(`[data-testid="table"]`), c.Staff.Email) {
		t.Error("the accounts list lacks the staff account")
	}
	email := "Nurse-" + uuid.NewString()[:8] + "@Example.org"
	r := admin.Post("/staff/users", url.Values{"email": {email}, "name": {"Nurse"}, "password": {"a long password"}, "role": {"staff"}}).Want(http.StatusCreated)
	if r.Text(`[data-testid="notice"]`) != "Account created." || !strings.Contains(r.Text(`[data-testid="table"]`), strings.ToLower(email)) {
		t.Errorf("after creating: %q", r.Text(`[data-testid="notice"]`))
	}
	if strings.Contains(r.Body, "a long password") {
		t.Error("the page shows the password")
	}
	nurse := stfNewClient(t, app.TS.URL)
	nurse.Get("/staff/login")
	nurse.Post("/staff/login", url.Values{"email": {email}, "password": {"a long password"}}).WantRedirect("/staff")
	nurse.Get("/staff/users").Want(http.StatusForbidden)

	before := stfAuditCount(t, app.Pool, c.ID)
	if r := admin.Post("/staff/users", url.Values{"email": {email}, "name": {"Again"}, "password": {"a long password"}, "role": {"staff"}}); r.Status != http.StatusConflict || !strings.Contains(r.Text(`[role="alert"]`), "already an account") {
		t.Errorf("duplicate e-mail: %d %q", r.Status, r.Text(`[role="alert"]`))
	}
	if r := admin.Post("/staff/users", url.Values{"email": {"short@example.org"}, "name": {"S"}, "password": {"short"}, "role": {"staff"}}); r.Status != http.StatusBadRequest || !strings.Contains(r.Text(`[role="alert"]`), "at least 10 characters") {
		t.Errorf("short password: %d %q", r.Status, r.Text(`[role="alert"]`))
	}
	if r := admin.Post("/staff/users", url.Values{"email": {"boss@example.org"}, "name": {"B"}, "password": {"a long password"}, "role": {"owner"}}); r.Status != http.StatusBadRequest {
		t.Errorf("unknown role: %d", r.Status)
	}
	if n := stfAuditCount(t, app.Pool, c.ID); n != before {
		t.Errorf("refused accounts wrote %d rows", n-before)
	}
}

var stfKioskLink = regexp.MustCompile(`/kiosk/([a-z0-9-]+)\?device=([A-Za-z0-9_%-]+)`)

func TestStaffKioskTokens(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	board := func(query string) int {
		t.Helper()
		res, err := http.Get(app.TS.URL + "/kiosk/" + c.Slug + query)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if s := board(""); s != http.StatusOK {
		t.Fatalf("before any token the board is public: %d", s)
	}

	create := func(name string) string {
		t.Helper()
		r := admin.Post("/staff/kiosks", url.Values{"name": {name}}).Want(http.StatusCreated)
		m := stfKioskLink.FindStringSubmatch(r.Text(`[data-testid="notice"]`))
		if m == nil || m[1] != c.Slug {
			t.Fatalf("the page does not show the device link: %q", r.Text(`[data-testid="notice"]`))
		}
		tok, _ := url.QueryUnescape(m[2])
		if strings.Contains(admin.Get("/staff/kiosks").Body, m[2]) {
			t.Error("the device link is shown again: it must be shown once")
		}
		return tok
	}
	tok1 := create("Waiting room 1")
	if s := board(""); s != http.StatusForbidden {
		t.Errorf("with a token made, the board without it: %d, want 403", s)
	}
	if s := board("?device=" + url.QueryEscape(tok1)); s != http.StatusOK {
		t.Errorf("the board with its token: %d", s)
	}
	if s := board("?device=k_madeup"); s != http.StatusForbidden {
		t.Errorf("the board with a made-up token: %d", s)
	}
	// The board's stream needs the token too.
	res, err := http.Get(app.TS.URL + "/kiosk/" + c.Slug + "/live")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("the board's stream without the token: %d", res.StatusCode)
	}
	tok2 := create("Waiting room 2")

	page := admin.Get("/staff/kiosks").Want(http.StatusOK)
	var id1 string
	page.Doc().Find(`select#revoke-id option`).Each(func(_ int, o *goquery.Selection) {
		if o.Text() == "Waiting room 1" {
			id1, _ = o.Attr("value")
		}
	})
	if id1 == "" {
		t.Fatal("no revoke option for Waiting room 1")
	}
	admin.Post("/staff/kiosks/revoke", url.Values{"id": {id1}}).Want(http.StatusOK)
	if s := board("?device=" + url.QueryEscape(tok1)); s != http.StatusForbidden {
		t.Errorf("the revoked token still opens the board: %d", s)
	}
	if s := board("?device=" + url.QueryEscape(tok2)); s != http.StatusOK {
		t.Errorf("the other token stopped working: %d", s)
	}
	if s := board(""); s != http.StatusForbidden {
		t.Errorf("with one token still active, the board without a token: %d", s)
	}
	if txt := admin.Get("/staff/kiosks").Text(`[data-testid="table"]`); !strings.Contains(txt, "revoked") {
		t.Errorf("the list does not show the revoked token: %q", txt)
	}
	admin.Post("/staff/kiosks/revoke", url.Values{"id": {id1}}).Want(http.StatusNotFound)
	if r := admin.Post("/staff/kiosks", url.Values{"name": {"  "}}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a token without a name: %d", r.Status)
	}
}

// stfUserOf is the service's view of an account.
func stfUserOf(a stfAccount, clinicID uuid.UUID) staff.User {
	return staff.User{ID: a.ID, ClinicID: clinicID, Email: a.Email, Role: a.Role}
}

// stfCheckLiveForms fails for a form in a live calendar fragment that
// would post without the session's CSRF token: a plain form (not hx-post)
// sends only its fields, so its _csrf field must hold the token.
func stfCheckLiveForms(t *testing.T, fragment string) {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(fragment))
	if err != nil {
		t.Fatal(err)
	}
	doc.Find("form").Each(func(_ int, f *goquery.Selection) {
		method, _ := f.Attr("method")
		if !strings.EqualFold(method, "post") {
			return
		}
		if _, hx := f.Attr("hx-post"); hx {
			return
		}
		if _, boosted := f.Attr("hx-boost"); boosted {
			return
		}
		action, _ := f.Attr("action")
		tok, _ := f.Find(`input[name="_csrf"]`).Attr("value")
		if tok == "" {
			t.Errorf("the live calendar block's form %s posts as a plain form with an empty _csrf field: after the stream swaps the block in, "+
				"submitting it is refused with 403 (hx-headers on the frame only applies to htmx requests)", action)
		}
	})
}

// stfTestLog writes a server's log lines into the test's log.
type stfTestLog struct{ t testing.TB }

func (w stfTestLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
