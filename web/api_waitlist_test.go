package web_test

// Tests of POST /v1/appointment-types/{id}/waitlist: the place and its
// token, the refusals in the API's error shape, and the limits.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/waitlist"
)

// apiEntry is the answer's entry.
type apiEntry struct {
	ID                uuid.UUID  `json:"id"`
	AppointmentTypeID uuid.UUID  `json:"appointmentTypeId"`
	SpecialistID      *uuid.UUID `json:"specialistId"`
	From              string     `json:"from"`
	To                string     `json:"to"`
	Times             []string   `json:"times"`
	State             string     `json:"state"`
	JoinedAt          string     `json:"joinedAt"`
	Ahead             int        `json:"ahead"`
	URL               string     `json:"url"`
}

// pwBody is a join's body for email, waiting on day.
func pwBody(c clinic, email string, day time.Time) map[string]any {
	return map[string]any{
		"clientId": clientID(), "from": pwDay(c, day), "to": pwDay(c, day),
		"patient": map[string]any{"name": "Api Waiting", "email": email},
	}
}

func pwAPIPath(typ db.AppointmentType) string {
	return "/v1/appointment-types/" + typ.ID.String() + "/waitlist"
}

// The answer is 201 with the place (its fields as documented) and the
// token of its page; the url opens that page.
func TestWaitlistAPIJoin(t *testing.T) {
	t.Parallel()
	a := queueApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[1]
	day := c.At(5, 12, 0)
	email := uniqueEmail("api")
	body := pwBody(c, email, day)
	body["to"] = pwDay(c, day.AddDate(0, 0, 2))
	before := time.Now()
	r := a.newClient(t).send(http.MethodPost, pwAPIPath(typ), body).Want(http.StatusCreated)
	var got struct {
		Entry apiEntry `json:"entry"`
		Token string   `json:"token"`
	}
	r.Decode(&got)
	e := got.Entry
	joined, err := time.Parse(time.RFC3339Nano, e.JoinedAt)
	if e.ID == uuid.Nil || e.AppointmentTypeID != typ.ID || e.SpecialistID != nil || e.From != pwDay(c, day) ||
		e.To != pwDay(c, day.AddDate(0, 0, 2)) || e.Times == nil || len(e.Times) != 0 || e.State != waitlist.StateWaiting ||
		e.Ahead != 0 || err != nil || joined.Before(before.Add(-time.Second)) {
		t.Errorf("the entry is %+v (%s)", e, r.Body)
	}
	if !strings.Contains(r.Body, `"specialistId":null`) || !strings.Contains(r.Body, `"times":[]`) {
		t.Errorf("no specialist and any time must read null and []: %s", r.Body)
	}
	if len(got.Token) != 43 || strings.ContainsAny(got.Token, "+/=") {
		t.Errorf("token %q, want 43 URL-safe characters", got.Token)
	}
	path := "/c/" + c.Slug + "/waitlist/" + got.Token
	if !strings.HasPrefix(e.URL, "http") || pathOf(t, e.URL) != path {
		t.Errorf("url %q, want the page %s", e.URL, path)
	}
	page := a.newClient(t).Get(pathOf(t, e.URL)).Want(http.StatusOK)
	if s, state := pwPlace(t, page); s["What"] != typ.Name || state != waitlist.StateWaiting {
		t.Errorf("the url opens %q (%s)", s, state)
	}
	if n := messageRows(t, a, email, outbox.KindWaitlistJoined); n != 1 {
		t.Errorf("%d e-mails of the place, want 1", n)
	}
	pwConfirm(t, a, c, e.ID) // from the e-mail: the place counts

	// With a specialist and parts of the day; the second waits behind the first.
	body = pwBody(c, uniqueEmail("api2"), day)
	body["specialistId"], body["times"] = sp.ID.String(), []string{"evening", "morning"}
	r = a.newClient(t).send(http.MethodPost, pwAPIPath(typ), body, "Accept-Language", "de").Want(http.StatusCreated)
	r.Decode(&got)
	if e := got.Entry; e.SpecialistID == nil || *e.SpecialistID != sp.ID || strings.Join(e.Times, ",") != "evening,morning" || e.Ahead != 1 {
		t.Errorf("the second entry is %+v", e)
	}
	var lang string
	if err := a.Pool.QueryRow(t.Context(), `SELECT language FROM waitlist_entries WHERE id = $1`, got.Entry.ID).Scan(&lang); err != nil || lang != "de" {
		t.Errorf("the entry's language is %q (%v), want the Accept-Language's", lang, err)
	}
}

// Refusals have the API's error shape and name the field.
func TestWaitlistAPIRefusals(t *testing.T) {
	t.Parallel()
	a := queueApp(t)
	c := a.patientClinic(t)
	typ := c.Type0()
	day := c.At(5, 12, 0)
	with := func(edit func(map[string]any)) map[string]any {
		b := pwBody(c, uniqueEmail("refused"), day)
		edit(b)
		return b
	}
	cases := []struct {
		name   string
		path   string
		body   any
		status int
		code   string
		field  string
	}{
		{"no name", pwAPIPath(typ), with(func(b map[string]any) { b["patient"] = map[string]any{"email": uniqueEmail("x")} }), 400, "INVALID_ARGUMENT", "patient.name"},
		{"to before from", pwAPIPath(typ), with(func(b map[string]any) { b["to"] = pwDay(c, day.AddDate(0, 0, -1)) }), 400, "INVALID_ARGUMENT", "to"},
		{"no such part", pwAPIPath(typ), with(func(b map[string]any) { b["times"] = []string{"night"} }), 400, "INVALID_ARGUMENT", "times"},
		{"specialist no id", pwAPIPath(typ), with(func(b map[string]any) { b["specialistId"] = "Dr No" }), 400, "INVALID_ARGUMENT", "specialistId"},
		{"specialist unknown", pwAPIPath(typ), with(func(b map[string]any) { b["specialistId"] = uuid.NewString() }), 400, "INVALID_ARGUMENT", "specialistId"},
		{"no client id", pwAPIPath(typ), with(func(b map[string]any) { delete(b, "clientId") }), 400, "INVALID_ARGUMENT", "clientId"},
		{"client id with spaces", pwAPIPath(typ), with(func(b map[string]any) { b["clientId"] = "a b" }), 400, "INVALID_ARGUMENT", "clientId"},
		{"unknown field", pwAPIPath(typ), with(func(b map[string]any) { b["speciallistId"] = uuid.NewString() }), 400, "INVALID_ARGUMENT", "speciallistId"},
		{"times not a list", pwAPIPath(typ), with(func(b map[string]any) { b["times"] = "morning" }), 400, "INVALID_ARGUMENT", "times"},
		{"not JSON", pwAPIPath(typ), `{"clientId": `, 400, "INVALID_ARGUMENT", "body"},
		{"no body", pwAPIPath(typ), "", 400, "INVALID_ARGUMENT", "body"},
		{"type no id", "/v1/appointment-types/nope/waitlist", with(func(map[string]any) {}), 400, "INVALID_ARGUMENT", "id"},
		{"unknown type", "/v1/appointment-types/" + uuid.NewString() + "/waitlist", with(func(map[string]any) {}), 404, "NOT_FOUND", "id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, a.newClient(t).send(http.MethodPost, tc.path, tc.body), tc.status, tc.code, tc.field)
		})
	}
	b := pwBody(c, uniqueEmail("twice"), day)
	a.newClient(t).send(http.MethodPost, pwAPIPath(typ), b).Want(http.StatusCreated)
	b["clientId"] = clientID()
	e := wantError(t, a.newClient(t).send(http.MethodPost, pwAPIPath(typ), b), http.StatusConflict, "WAITLIST_DUPLICATE", "")
	if !strings.Contains(e.Error.Message, typ.Name) {
		t.Errorf("the duplicate's message: %q", e.Error.Message)
	}
}

// The API counts with the form: three joins an hour per e-mail address
// and clinic, ten per client address; over, 429 with Retry-After.
func TestWaitlistAPILimits(t *testing.T) {
	t.Parallel()
	avoidHourEdge(time.Minute)
	a := queueApp(t)
	c := a.patientClinic(t)
	day := c.At(6, 12, 0)
	email := uniqueEmail("limited")
	first := a.newClient(t).send(http.MethodPost, pwAPIPath(c.Types[0]), pwBody(c, email, day)).Want(http.StatusCreated)
	a.newClient(t).Post(pwJoinPath(c, c.Types[1]), pwValues(c, "Page Too", email, day, day)).Want(http.StatusOK)
	// Refused joins send nothing and do not count.
	a.newClient(t).send(http.MethodPost, pwAPIPath(c.Types[1]), pwBody(c, strings.ToUpper(email), day)).Want(http.StatusConflict)
	past := pwBody(c, email, day)
	past["to"] = pwDay(c, day.AddDate(0, 0, -1))
	wantError(t, a.newClient(t).send(http.MethodPost, pwAPIPath(c.Types[0]), past), http.StatusBadRequest, "INVALID_ARGUMENT", "to")
	var joined struct {
		Token string `json:"token"`
	}
	first.Decode(&joined)
	if err := a.Deps.Waitlist.Leave(context.Background(), c.ID, joined.Token); err != nil {
		t.Fatal(err)
	}
	a.newClient(t).send(http.MethodPost, pwAPIPath(c.Types[0]), pwBody(c, email, day)).Want(http.StatusCreated) // the third place
	r := a.newClient(t).send(http.MethodPost, pwAPIPath(c.Types[1]), pwBody(c, email, day))
	wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
	if secs := retryAfter(t, r); secs > 3600 {
		t.Errorf("Retry-After %d", secs)
	}

	cl := a.newClient(t)
	for i := range 10 {
		if r := cl.send(http.MethodPost, pwAPIPath(c.Types[0]), pwBody(c, uniqueEmail("many"), day)); r.Status != http.StatusCreated {
			t.Fatalf("join %d from one address: %d %s", i+1, r.Status, r.Body)
		}
	}
	r = cl.send(http.MethodPost, pwAPIPath(c.Types[0]), pwBody(c, uniqueEmail("eleventh"), day))
	wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
	retryAfter(t, r)
}
