package web_test

// Free text from the public booking path and the staff pages: what a
// field refuses (control characters, line breaks, text-direction
// controls, too much of it), that a refusal is a 400 naming the field and
// never a 500, and that text stored before these rules cannot break the
// staff's live calendar.

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/testkit"
)

// badText is what no text field takes: a NUL (PostgreSQL refuses it in
// text), a bare carriage return (a line end to an event stream) and a
// right-to-left override (it reverses what an e-mail or a name shows).
var badText = map[string]string{"NUL": "\x00", "CarriageReturn": "\r", "RightToLeftOverride": "\u202e"}

// withBad is a good value of a patient field with bad inside it.
func withBad(field, bad string) string {
	switch field {
	case "email":
		return "eve" + bad + "@example.org"
	case "phone":
		return "+49 30" + bad + "1234567"
	}
	return "Eve" + bad + "Smith"
}

func patientWith(field, value string) map[string]string {
	p := map[string]string{"name": "Eve Smith", "email": "eve@example.org", "phone": "+49 30 1234567"}
	p[field] = value
	return p
}

func clinicBookings(t *testing.T, a *app, clinicID uuid.UUID) int {
	t.Helper()
	var n int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings WHERE clinic_id = $1`, clinicID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPatientFieldsRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	a := newApp(t)

	t.Run("API", func(t *testing.T) {
		c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
		client := "text-" + uuid.NewString()[:8]
		holdID := a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, c.Next(time.Wednesday, 10, 0), client).HoldID
		for _, field := range []string{"name", "email", "phone"} {
			for what, bad := range badText {
				t.Run(field+"/"+what, func(t *testing.T) {
					r := a.do(t, http.MethodPost, bookPath(c.Types[0].ID),
						bookBody{HoldID: holdID, ClientID: client, Patient: patientWith(field, withBad(field, bad))})
					wantError(t, r, http.StatusBadRequest, "INVALID_ARGUMENT", "patient."+field)
				})
			}
		}
		if n := clinicBookings(t, a, c.ID); n != 0 {
			t.Fatalf("refused bookings wrote %d rows", n)
		}
		// The hold is untouched: it still books.
		r := a.do(t, http.MethodPost, bookPath(c.Types[0].ID), bookBody{HoldID: holdID, ClientID: client, Patient: patientWith("name", "Eve Smith")})
		if r.Status != http.StatusCreated {
			t.Fatalf("a good booking after the refusals: %d %s", r.Status, r.Body)
		}
	})

	// The booking page keeps its form convention: a field error next to
	// the field (422), with the hold kept. A NUL never reaches the
	// handler: the form is refused as a whole (400) and names the field.
	t.Run("PageForm", func(t *testing.T) {
		c := a.patientClinic(t)
		typ, sp := c.Type0(), c.Specialists[0]
		cl := a.newClient(t)
		held := holdNoJS(t, cl, c, typ, sp.ID, c.At(2, 9, 30)).Want(http.StatusOK)
		for _, field := range []string{"name", "email", "phone"} {
			for what, bad := range badText {
				t.Run(field+"/"+what, func(t *testing.T) {
					p := patientWith(field, withBad(field, bad))
					f := detailsForm(t, held.Doc(), p["name"], p["email"], p["phone"])
					r := cl.Post(f.Action, f.Values)
					if what == "NUL" {
						if msg := text(r.Doc().Find("main")); r.Status != http.StatusBadRequest || !strings.Contains(msg, field) {
							t.Errorf("%d %q, want 400 naming %s", r.Status, msg, field)
						}
						return
					}
					if msg := text(r.Doc().Find(`[data-testid="` + field + `-error"]`)); r.Status != http.StatusUnprocessableEntity || msg == "" {
						t.Errorf("%d, want 422 with a %s-error:\n%s", r.Status, field, clip(r.Body, 2000))
					}
				})
			}
		}
		if n := clinicBookings(t, a, c.ID); n != 0 {
			t.Fatalf("refused bookings wrote %d rows", n)
		}
	})
}

func TestStaffPasswordsOver72BytesAreRefusedNot500(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	newUser := func(password string) *response {
		email := "pw-" + uuid.NewString()[:8] + "@example.org"
		return admin.Post("/staff/users", url.Values{"email": {email}, "name": {"Nurse"}, "password": {password}, "role": {"staff"}})
	}
	before := a.auditCount(t, c.ID)
	for name, pw := range map[string]string{
		"73Bytes":            strings.Repeat("p", 73),
		"40CharsOf80Bytes":   strings.Repeat("é", 40),
		"100KB":              strings.Repeat("p", 100<<10),
		"72BytesAndOneEmoji": strings.Repeat("p", 71) + "☃",
	} {
		r := newUser(pw)
		if msg := r.Text(`[role="alert"]`); r.Status != http.StatusBadRequest || !strings.Contains(msg, "password") || !strings.Contains(msg, "72") {
			t.Errorf("create with a password of %s: %d %q, want 400 saying what is wrong", name, r.Status, msg)
		}
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("refused accounts wrote %d rows", n-before)
	}

	// 72 bytes is the longest a password can be, and all of it counts:
	// bcrypt would read the first 72 bytes of a longer one, so the same
	// password with a byte more must not open the account.
	pw := strings.Repeat("0123456789abcdef", 4) + "ghijklmn"
	email := "pw72-" + uuid.NewString()[:8] + "@example.org"
	admin.Post("/staff/users", url.Values{"email": {email}, "name": {"Nurse"}, "password": {pw}, "role": {"staff"}}).Want(http.StatusCreated)
	signIn := func(password string) *response {
		cl := a.newClient(t)
		cl.Get("/staff/login").Want(http.StatusOK)
		return cl.Post("/staff/login", url.Values{"email": {email}, "password": {password}})
	}
	for name, pw := range map[string]string{"72PlusOne": pw + "x", "100KB": pw + strings.Repeat("x", 100<<10)} {
		if r := signIn(pw); r.Status != http.StatusUnauthorized {
			t.Errorf("sign-in with the password %s: %d, want 401", name, r.Status)
		}
	}
	signIn(pw).WantRedirect("/staff/day")
}

// Every way a booking is cancelled or moved with a reason refuses a reason
// that is too long (a 100 KB one would be stored three times: the booking
// and two audit copies) or holds a control character, and changes nothing.
func TestReasonsAreLimited(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	patient := a.newClient(t)
	hour := 9
	newBooking := func(t *testing.T) booking.Confirmation {
		t.Helper()
		conf := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Thursday, hour, 0),
			booking.Patient{Name: "Reason Patient", Email: "reason@example.org"})
		hour++
		return conf
	}
	// Each path answers with its status and the text the user sees.
	paths := map[string]func(t *testing.T, conf booking.Confirmation, reason string) (int, string){
		"PatientPage": func(t *testing.T, conf booking.Confirmation, reason string) (int, string) {
			r := patient.Post("/manage/"+conf.ManageToken+"/cancel", url.Values{"confirm": {"yes"}, "reason": {reason}})
			return r.Status, text(r.Doc().Find("main"))
		},
		"API": func(t *testing.T, conf booking.Confirmation, reason string) (int, string) {
			r := a.do(t, http.MethodDelete, "/v1/appointments/"+conf.Booking.ID.String()+"?reason="+url.QueryEscape(reason), nil, bearer(conf.ManageToken)...)
			var e errorShape
			r.Decode(&e)
			if f, _ := e.Error.Details["field"].(string); f != "reason" {
				return r.Status, "details.field " + f
			}
			return r.Status, e.Error.Message + " (reason)"
		},
		"StaffCancel": func(t *testing.T, conf booking.Confirmation, reason string) (int, string) {
			r := admin.Post("/staff/bookings/"+conf.Booking.ID.String()+"/cancel", url.Values{"reason": {reason}})
			return r.Status, text(r.Doc().Find("main"))
		},
		"StaffReschedule": func(t *testing.T, conf booking.Confirmation, reason string) (int, string) {
			to := conf.Booking.Start.Add(5 * time.Hour).In(c.Loc).Format("2006-01-02T15:04")
			r := admin.Post("/staff/bookings/"+conf.Booking.ID.String()+"/reschedule",
				url.Values{"start": {to}, "version": {strconv.Itoa(int(conf.Booking.Version))}, "reason": {reason}})
			return r.Status, text(r.Doc().Find("main"))
		},
	}
	reasons := map[string]string{
		"100KB":               strings.Repeat("r", 100<<10),
		"CarriageReturn":      "running late\rretry: 86400000",
		"NUL":                 "late\x00",
		"RightToLeftOverride": "late \u202e",
	}
	for name, do := range paths {
		t.Run(name, func(t *testing.T) {
			conf := newBooking(t)
			before := a.auditCount(t, c.ID)
			for what, reason := range reasons {
				status, text := do(t, conf, reason)
				if status != http.StatusBadRequest || !strings.Contains(strings.ToLower(text), "reason") {
					t.Errorf("%s: %d %q, want 400 naming the reason", what, status, clip(text, 300))
				}
			}
			if b := a.booking(t, conf.Booking.ID); b.Status != booking.StatusConfirmed || b.Version != conf.Booking.Version || b.CancelReason != "" {
				t.Errorf("a refused reason changed the booking: %s v%d reason %q", b.Status, b.Version, clip(b.CancelReason, 40))
			}
			if n := a.auditCount(t, c.ID); n != before {
				t.Errorf("refused reasons wrote %d audit rows", n-before)
			}
		})
	}
}

// A patient name stored before names were checked, holding carriage
// returns that spell event-stream fields, reaches the staff's live
// calendar as text: the day block keeps its event name, the reconnect
// delay stays the server's, and the next booking still arrives.
func TestStaffLiveCalendarCarriesOldNamesAsText(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	day := c.Next(time.Wednesday, 9, 0)
	date := day.Format(time.DateOnly)
	event := "cal-" + date
	const evil = "Eve\rretry: 86400000\revent: nowhere\rdata: x"

	// The API refuses such a name now: write it as old data would be.
	conf := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, day, booking.Patient{Name: "Placeholder", Email: "eve@example.org"})
	if _, err := a.Pool.Exec(context.Background(), `UPDATE bookings SET patient_name = $1 WHERE id = $2`, evil, conf.Booking.ID); err != nil {
		t.Fatal(err)
	}

	admin := a.signIn(t, c.Admin)
	stream := dialSSE(t, admin.hc, a.URL+"/staff/live?date="+date+"&view=day")
	asText := strings.ReplaceAll(evil, "\r", "\n") // as EventSource joins data lines
	first, seen := stream.until(10*time.Second, "the day block with the old booking", func(ev sseEvent) bool {
		return strings.Contains(ev.Data(), "Eve")
	})
	seen = append(seen, first)
	if first.Name != event || first.Retry != "" || !strings.Contains(first.Data(), asText) {
		t.Errorf("the old name left its data: event %q, retry %q, data %s", first.Name, first.Retry, clip(first.Data(), 600))
	}

	holdID := a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, c.Next(time.Wednesday, 14, 0), "later-client").HoldID
	r := a.do(t, http.MethodPost, bookPath(c.Types[0].ID), bookBody{HoldID: holdID, ClientID: "later-client",
		Patient: map[string]string{"name": "Later Patient", "email": "later@example.org"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("book: %d %s", r.Status, r.Body)
	}
	later, between := stream.until(10*time.Second, "the day block with the later booking", func(ev sseEvent) bool {
		return strings.Contains(ev.Data(), "Later Patient")
	})
	seen = append(append(seen, between...), later)
	if later.Name != event || !strings.Contains(later.Data(), asText) {
		t.Errorf("the later booking's block: event %q, data %s", later.Name, clip(later.Data(), 600))
	}
	for _, ev := range seen {
		if ev.Name == "nowhere" {
			t.Errorf("an event was renamed: %s", describeEvents([]sseEvent{ev}))
		}
		if ev.Retry != "" {
			if ms, err := strconv.Atoi(ev.Retry); err != nil || ms > 2000 {
				t.Errorf("retry %q, more than the server's own 2000", ev.Retry)
			}
		}
	}
}
