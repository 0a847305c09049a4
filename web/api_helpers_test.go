package web_test

// The JSON API as the tests call it: holds, bookings, timeslots, and the
// error shape every refusal has.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
)

// errorShape is the API's error answer.
type errorShape struct {
	Error struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

// wantError asserts the status and the error shape
// {"error":{"code","message","details"}} with the code, and for a 400
// details.field == field.
func wantError(t testing.TB, r *response, status int, code, field string) errorShape {
	t.Helper()
	var top map[string]json.RawMessage
	r.Decode(&top)
	var e errorShape
	r.Decode(&e)
	if r.Status != status || e.Error.Code != code {
		t.Fatalf("got %d %s, want %d %s: %s", r.Status, e.Error.Code, status, code, r.Body)
	}
	if _, ok := top["error"]; !ok || e.Error.Message == "" || e.Error.Details == nil {
		t.Fatalf("not the error shape: %s", r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q", ct)
	}
	if status == http.StatusBadRequest || field != "" {
		if got, _ := e.Error.Details["field"].(string); got != field {
			t.Fatalf("details.field %q, want %q: %s", got, field, r.Body)
		}
	}
	return e
}

// clientID is a fresh API client id.
func clientID() string { return "c-" + uuid.NewString() }

// rfc is t in UTC as the API writes it.
func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// bearer is the header pair that carries a manage token.
func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// holdView is the answer to POST /v1/holds.
type holdView struct {
	HoldID        string    `json:"holdId"`
	SpecialistID  uuid.UUID `json:"specialistId"`
	SlotStartDate string    `json:"slotStartDate"`
	SlotEndDate   string    `json:"slotEndDate"`
	HoldExpiresAt string    `json:"holdExpiresAt"`
}

func holdBody(typeID uuid.UUID, start time.Time, client string) map[string]string {
	return map[string]string{
		"appointmentTypeId": typeID.String(), "slotStartDate": rfc(start), "clientId": client,
	}
}

// postHold asks for a hold of sp (uuid.Nil: any specialist) at start.
func (a *app) postHold(t testing.TB, typeID, sp uuid.UUID, start time.Time, client string, hdr ...string) *response {
	t.Helper()
	body := holdBody(typeID, start, client)
	if sp != uuid.Nil {
		body["specialistId"] = sp.String()
	}
	return a.do(t, "POST", "/v1/holds", body, hdr...)
}

// hold holds start with any specialist; it must give 201.
func (a *app) hold(t testing.TB, typeID uuid.UUID, start time.Time, client string) holdView {
	t.Helper()
	return a.holdOf(t, typeID, uuid.Nil, start, client)
}

// holdOf holds start with sp; it must give 201.
func (a *app) holdOf(t testing.TB, typeID, sp uuid.UUID, start time.Time, client string) holdView {
	t.Helper()
	r := a.postHold(t, typeID, sp, start, client)
	if r.Status != http.StatusCreated {
		t.Fatalf("hold %s for %s: %d %s", start, client, r.Status, r.Body)
	}
	var h holdView
	r.Decode(&h)
	return h
}

// loopbackProxy trusts the test's own address as a load balancer: a
// request's X-Forwarded-For then names the client address it comes from
// (holdFrom), and one without comes from 127.0.0.1.
var loopbackProxy = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// holdFrom is holdOf from the client address addr, for an app that
// trusts loopbackProxy: a patient on another network than the test's.
func (a *app) holdFrom(t testing.TB, typeID, sp uuid.UUID, start time.Time, client, addr string) holdView {
	t.Helper()
	r := a.postHold(t, typeID, sp, start, client, "X-Forwarded-For", addr)
	if r.Status != http.StatusCreated {
		t.Fatalf("hold %s for %s from %s: %d %s", start, client, addr, r.Status, r.Body)
	}
	var h holdView
	r.Decode(&h)
	return h
}

// release releases the client's hold; it must give 204.
func (a *app) release(t testing.TB, h holdView, client string) {
	t.Helper()
	if r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId="+url.QueryEscape(client), nil); r.Status != http.StatusNoContent {
		t.Fatalf("release %s: %d %s", h.HoldID, r.Status, r.Body)
	}
}

var patientOK = booking.Patient{Name: "Grace Hopper", Email: "grace@example.com", Phone: "+1 (555) 010-9999"}

// patientFor is a patient of the client's own: the cooldown binds a
// patient's e-mail and phone, so clients that book one type are different
// patients.
func patientFor(client string) booking.Patient {
	return booking.Patient{Name: patientOK.Name, Email: "grace." + client + "@example.com"}
}

type bookBody struct {
	HoldID   string `json:"holdId"`
	ClientID string `json:"clientId"`
	Patient  any    `json:"patient"`
}

type appointmentView struct {
	ID              uuid.UUID       `json:"id"`
	ClinicID        uuid.UUID       `json:"clinicId"`
	TypeID          uuid.UUID       `json:"appointmentTypeId"`
	SpecialistID    uuid.UUID       `json:"specialistId"`
	SlotStartDate   string          `json:"slotStartDate"`
	SlotEndDate     string          `json:"slotEndDate"`
	Status          string          `json:"status"`
	Patient         booking.Patient `json:"patient"`
	RescheduledFrom uuid.UUID       `json:"rescheduledFrom"`
	Version         int             `json:"version"`
}

// appointmentAnswer is the answer to GET, PATCH and DELETE of an appointment.
type appointmentAnswer struct {
	Appointment appointmentView `json:"appointment"`
}

type bookedView struct {
	Appointment appointmentView `json:"appointment"`
	ManageToken string          `json:"manageToken"`
}

func bookPath(typeID uuid.UUID) string { return "/v1/appointment-types/" + typeID.String() + "/book" }

// book books the hold for patientFor(client); it must give 201.
func (a *app) book(t testing.TB, typeID uuid.UUID, h holdView, client string, hdr ...string) bookedView {
	t.Helper()
	return a.bookFor(t, typeID, h, client, patientFor(client), hdr...)
}

// bookFor books the hold for patient; it must give 201.
func (a *app) bookFor(t testing.TB, typeID uuid.UUID, h holdView, client string, patient any, hdr ...string) bookedView {
	t.Helper()
	r := a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patient}, hdr...)
	if r.Status != http.StatusCreated {
		t.Fatalf("book %s: %d %s", h.HoldID, r.Status, r.Body)
	}
	var b bookedView
	r.Decode(&b)
	return b
}

// cancelBooking cancels the booking with its token; it must give 200.
func (a *app) cancelBooking(t testing.TB, b bookedView) {
	t.Helper()
	if r := a.do(t, "DELETE", "/v1/appointments/"+b.Appointment.ID.String(), nil, bearer(b.ManageToken)...); r.Status != http.StatusOK {
		t.Fatalf("cancel %s: %d %s", b.Appointment.ID, r.Status, r.Body)
	}
}

// confirmedAt counts confirmed bookings of a specialist at a start.
func (a *app) confirmedAt(t testing.TB, specialist uuid.UUID, start time.Time) int64 {
	t.Helper()
	n, err := db.New(a.Pool).BookingCountConfirmedAt(context.Background(), db.BookingCountConfirmedAtParams{
		SpecialistID: specialist, SlotStart: start,
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// timeslot is one free start of the timeslots API.
type timeslot struct {
	Start         time.Time   `json:"start"`
	SpecialistIDs []uuid.UUID `json:"specialistIds"`
}

// dayTimeslots is the API's free starts of typeID on day (in c's zone),
// of sp (uuid.Nil: any specialist).
func (a *app) dayTimeslots(t testing.TB, c clinic, typeID, sp uuid.UUID, day time.Time) []timeslot {
	t.Helper()
	d := day.In(c.Loc).Format(time.DateOnly)
	path := "/v1/appointment-types/" + typeID.String() + "/timeslots?from=" + d + "&to=" + d
	if sp != uuid.Nil {
		path += "&specialistId=" + sp.String()
	}
	r := a.do(t, "GET", path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("timeslots: %d %s", r.Status, r.Body)
	}
	var body struct {
		Timeslots []timeslot `json:"timeslots"`
	}
	r.Decode(&body)
	return body.Timeslots
}

// free lists a day's free starts (RFC 3339) with their specialists.
func (a *app) free(t testing.TB, c clinic, typeID uuid.UUID, day time.Time) map[string][]uuid.UUID {
	t.Helper()
	out := map[string][]uuid.UUID{}
	for _, s := range a.dayTimeslots(t, c, typeID, uuid.Nil, day) {
		out[rfc(s.Start)] = s.SpecialistIDs
	}
	return out
}

// timeslots is the API's free starts of typ for sp on day, as local hh:mm.
func (a *app) timeslots(t testing.TB, c clinic, typ, sp uuid.UUID, day time.Time) []string {
	t.Helper()
	slots := a.dayTimeslots(t, c, typ, sp, day)
	out := make([]string, len(slots))
	for i, s := range slots {
		out[i] = s.Start.In(c.Loc).Format("15:04")
	}
	return out
}

// metricsText is the app's /metrics page.
func (a *app) metricsText(t testing.TB) string {
	t.Helper()
	r := a.do(t, "GET", "/metrics", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("/metrics: %d", r.Status)
	}
	return r.Body
}

// metricSum sums a counter of /metrics over the label sets matching re.
func (a *app) metricSum(t testing.TB, re string) float64 {
	t.Helper()
	var sum float64
	for _, m := range regexp.MustCompile(`(?m)^`+re+` ([0-9.e+]+)$`).FindAllStringSubmatch(a.metricsText(t), -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		sum += v
	}
	return sum
}
