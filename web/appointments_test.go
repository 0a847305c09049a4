package web_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

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

type bookedView struct {
	Appointment appointmentView `json:"appointment"`
	ManageToken string          `json:"manageToken"`
}

func bookPath(typeID uuid.UUID) string { return "/v1/appointment-types/" + typeID.String() + "/book" }

// book must give 201.
func (a *api) book(t testing.TB, typeID uuid.UUID, h holdView, client string, hdr ...string) bookedView {
	t.Helper()
	r := a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientFor(client)}, hdr...)
	if r.Status != http.StatusCreated {
		t.Fatalf("book %s: %d %s", h.HoldID, r.Status, r.Body)
	}
	var b bookedView
	r.into(t, &b)
	return b
}

// staffBook books a specialist directly through the booking service, as
// the staff calendar does.
func (a *api) staffBook(t *testing.T, c testkit.Clinic, specialist int, start time.Time) booking.Booking {
	t.Helper()
	conf, err := a.deps.Bookings.Book(context.Background(), booking.BookRequest{
		AppointmentTypeID: c.Types[0].ID, SpecialistID: c.Specialists[specialist].ID, Start: start,
		Patient: patientOK, Actor: "staff:test",
	})
	if err != nil {
		t.Fatalf("staff booking at %s: %v", start, err)
	}
	return conf.Booking
}

// confirmedAt counts confirmed bookings of a specialist at a start.
func (a *api) confirmedAt(t *testing.T, specialist uuid.UUID, start time.Time) int64 {
	t.Helper()
	n, err := db.New(a.pool).BookingCountConfirmedAt(context.Background(), db.BookingCountConfirmedAtParams{
		SpecialistID: specialist, SlotStart: start,
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// free lists a day's free starts (RFC 3339) with their specialists.
func (a *api) free(t *testing.T, typeID uuid.UUID, day time.Time) map[string][]uuid.UUID {
	t.Helper()
	loc, _ := time.LoadLocation("Europe/Berlin")
	d := day.In(loc).Format("2006-01-02")
	r := a.do(t, "GET", "/v1/appointment-types/"+typeID.String()+"/timeslots?from="+d+"&to="+d, nil)
	var body struct {
		Timeslots []struct {
			Start         string      `json:"start"`
			SpecialistIDs []uuid.UUID `json:"specialistIds"`
		} `json:"timeslots"`
	}
	r.into(t, &body)
	if r.Status != http.StatusOK {
		t.Fatalf("timeslots: %d %s", r.Status, r.Body)
	}
	out := map[string][]uuid.UUID{}
	for _, s := range body.Timeslots {
		out[s.Start] = s.SpecialistIDs
	}
	return out
}

func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

func TestBookAPI(t *testing.T) {
	t.Parallel()
	a := bootAPI(t, nil, web.Options{})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30, SlotStepMin: 30, CooldownMin: 1440, MaxHoldsPerClient: 20},
		{Name: "Follow-up", DurationMin: 30, SlotStepMin: 30, MaxHoldsPerClient: 20},
	}})
	typeID := c.Types[0].ID
	// Each case its own slot: Monday 09:00 to 16:30, then the next days.
	loc, _ := time.LoadLocation("Europe/Berlin")
	next := slotAt(t, 9, 0).In(loc)
	slot := func() time.Time {
		s := next
		next = next.Add(30 * time.Minute)
		if next.Hour() >= 17 {
			next = time.Date(next.Year(), next.Month(), next.Day()+1, 9, 0, 0, 0, loc)
		}
		return s.UTC()
	}

	t.Run("BooksTheHeldSlot", func(t *testing.T) {
		client := clientID()
		start := slot()
		h := a.hold(t, typeID, start, client)
		r := a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: map[string]string{
			"name": "  Grace Hopper ", "email": "grace@example.com", "phone": "",
		}})
		var b bookedView
		r.into(t, &b)
		ap := b.Appointment
		if r.Status != http.StatusCreated || ap.Status != "confirmed" || ap.SlotStartDate != rfc(start) || ap.SlotEndDate != rfc(start.Add(30*time.Minute)) ||
			ap.SpecialistID != c.Specialists[0].ID || ap.TypeID != typeID || ap.Patient.Name != "Grace Hopper" || len(b.ManageToken) < 32 {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		if r.Header.Get("ETag") != `"v1"` {
			t.Fatalf("ETag %q", r.Header.Get("ETag"))
		}
		if strings.Contains(string(r.Body), client) {
			t.Fatal("the answer must not echo the client id")
		}
		if n := a.confirmedAt(t, c.Specialists[0].ID, start); n != 1 {
			t.Fatalf("%d confirmed bookings", n)
		}
	})

	type tc struct {
		name   string
		setup  func(t *testing.T) (path string, body any, hdr []string)
		status int
		code   string
		field  string
	}
	held := func(t *testing.T) (holdView, string) {
		client := clientID()
		return a.hold(t, typeID, slot(), client), client
	}
	withPatient := func(p any) func(t *testing.T) (string, any, []string) {
		return func(t *testing.T) (string, any, []string) {
			h, client := held(t)
			return bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: p}, nil
		}
	}
	cases := []tc{
		{"MalformedTypeInPath", func(t *testing.T) (string, any, []string) {
			return "/v1/appointment-types/nope/book", bookBody{}, nil
		}, 400, "INVALID_ARGUMENT", "id"},
		{"BadJSON", func(t *testing.T) (string, any, []string) { return bookPath(typeID), `{"holdId": }`, nil }, 400, "INVALID_ARGUMENT", "body"},
		{"NoBody", func(t *testing.T) (string, any, []string) { return bookPath(typeID), "", nil }, 400, "INVALID_ARGUMENT", "body"},
		{"MissingHoldId", func(t *testing.T) (string, any, []string) {
			return bookPath(typeID), bookBody{ClientID: clientID(), Patient: patientOK}, nil
		}, 400, "INVALID_ARGUMENT", "holdId"},
		{"MalformedHoldId", func(t *testing.T) (string, any, []string) {
			return bookPath(typeID), bookBody{HoldID: "h-nope", ClientID: clientID(), Patient: patientOK}, nil
		}, 400, "INVALID_ARGUMENT", "holdId"},
		{"MissingClient", func(t *testing.T) (string, any, []string) {
			h, _ := held(t)
			return bookPath(typeID), bookBody{HoldID: h.HoldID, Patient: patientOK}, nil
		}, 400, "INVALID_ARGUMENT", "clientId"},
		{"PatientNameMissing", withPatient(map[string]string{"email": "a@example.com"}), 400, "INVALID_ARGUMENT", "patient.name"},
		{"PatientNameBlank", withPatient(map[string]string{"name": "   ", "email": "a@example.com"}), 400, "INVALID_ARGUMENT", "patient.name"},
		{"PatientNameTooLong", withPatient(map[string]string{"name": strings.Repeat("n", 201), "email": "a@example.com"}), 400, "INVALID_ARGUMENT", "patient.name"},
		{"PatientEmailMissing", withPatient(map[string]string{"name": "Ada"}), 400, "INVALID_ARGUMENT", "patient.email"},
		{"PatientEmailInvalid", withPatient(map[string]string{"name": "Ada", "email": "ada@localhost"}), 400, "INVALID_ARGUMENT", "patient.email"},
		{"PatientEmailWithDisplayName", withPatient(map[string]string{"name": "Ada", "email": "Ada <ada@example.com>"}), 400, "INVALID_ARGUMENT", "patient.email"},
		{"PatientPhoneInvalid", withPatient(map[string]string{"name": "Ada", "email": "ada@example.com", "phone": "call me"}), 400, "INVALID_ARGUMENT", "patient.phone"},
		{"PatientPhoneTooShort", withPatient(map[string]string{"name": "Ada", "email": "ada@example.com", "phone": "123"}), 400, "INVALID_ARGUMENT", "patient.phone"},
		{"PatientNotAnObject", withPatient("Ada"), 400, "INVALID_ARGUMENT", "patient"},
		{"PatientNameNotAString", withPatient(map[string]any{"name": 7, "email": "ada@example.com"}), 400, "INVALID_ARGUMENT", "patient.name"},
		{"BadIdempotencyKey", func(t *testing.T) (string, any, []string) {
			h, client := held(t)
			return bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, []string{"Idempotency-Key", "has spaces"}
		}, 400, "INVALID_ARGUMENT", "Idempotency-Key"},
		{"HoldReleased", func(t *testing.T) (string, any, []string) {
			h, client := held(t)
			if r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId="+client, nil); r.Status != 204 {
				t.Fatalf("release: %d", r.Status)
			}
			return bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, nil
		}, 410, "HOLD_EXPIRED", ""},
		{"HoldNeverExisted", func(t *testing.T) (string, any, []string) {
			id := "h" + strings.ReplaceAll(c.ID.String(), "-", "") + strings.Repeat("0", 20)
			return bookPath(typeID), bookBody{HoldID: id, ClientID: clientID(), Patient: patientOK}, nil
		}, 410, "HOLD_EXPIRED", ""},
		{"NotYourHold", func(t *testing.T) (string, any, []string) {
			h, _ := held(t)
			return bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: clientID(), Patient: patientOK}, nil
		}, 403, "NOT_YOUR_HOLD", ""},
		{"HoldOfAnotherType", func(t *testing.T) (string, any, []string) {
			h, client := held(t)
			return bookPath(c.Types[1].ID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, nil
		}, 400, "INVALID_ARGUMENT", "holdId"},
		{"UnknownTypeInPath", func(t *testing.T) (string, any, []string) {
			h, client := held(t)
			return bookPath(uuid.New()), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, nil
		}, 400, "INVALID_ARGUMENT", "holdId"},
		{"SlotTakenMeanwhile", func(t *testing.T) (string, any, []string) {
			h, client := held(t)
			start, _ := time.Parse(time.RFC3339, h.SlotStartDate)
			a.staffBook(t, c, 0, start)
			return bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, nil
		}, 409, "SLOT_TAKEN", ""},
		{"SlotTakenMeanwhileWithIdempotencyKey", func(t *testing.T) (string, any, []string) {
			h, client := held(t)
			start, _ := time.Parse(time.RFC3339, h.SlotStartDate)
			a.staffBook(t, c, 0, start)
			return bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, []string{"Idempotency-Key", uuid.NewString()}
		}, 409, "SLOT_TAKEN", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, body, hdr := tc.setup(t)
			wantError(t, a.do(t, "POST", path, body, hdr...), tc.status, tc.code, tc.field)
		})
	}

	t.Run("AnExpiredHoldIsExpired", func(t *testing.T) {
		t.Parallel()
		short := bootAPI(t, nil, web.Options{HoldTTL: 400 * time.Millisecond})
		sc := short.clinic(t, testkit.ClinicOptions{Specialists: 1})
		client := clientID()
		h := short.hold(t, sc.Types[0].ID, slotAt(t, 10, 0), client)
		time.Sleep(700 * time.Millisecond)
		wantError(t, short.do(t, "POST", bookPath(sc.Types[0].ID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}),
			410, "HOLD_EXPIRED", "")
		if n := short.confirmedAt(t, sc.Specialists[0].ID, slotAt(t, 10, 0)); n != 0 {
			t.Fatalf("%d bookings from an expired hold", n)
		}
	})
}

func TestBookIdempotency(t *testing.T) {
	t.Parallel()
	a := bootAPI(t, nil, web.Options{})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID

	t.Run("TenConcurrentRetriesBookOnceAndAnswerAlike", func(t *testing.T) {
		client := clientID()
		start := slotAt(t, 10, 0)
		h := a.hold(t, typeID, start, client)
		key := uuid.NewString()
		body := bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}

		replies := make([]reply, 10)
		testkit.Together(len(replies), func(i int) {
			replies[i] = a.do(t, "POST", bookPath(typeID), body, "Idempotency-Key", key)
		})

		// The one answer that is not a replay is the reference.
		fresh := -1
		for i, r := range replies {
			if r.Status == http.StatusCreated && r.Header.Get("Idempotent-Replayed") == "" {
				if fresh >= 0 {
					t.Errorf("requests %d and %d both booked afresh", fresh, i)
				}
				fresh = i
			}
		}
		if fresh < 0 {
			t.Fatal("no request booked")
		}
		var first bookedView
		replies[fresh].into(t, &first)
		for i, r := range replies {
			if r.Status != http.StatusCreated {
				t.Errorf("request %d: %d %s", i, r.Status, r.Body)
				continue
			}
			var b bookedView
			r.into(t, &b)
			if b.Appointment.ID != first.Appointment.ID || b.ManageToken != first.ManageToken {
				t.Errorf("request %d answered booking %s / token %s, want %s / %s", i, b.Appointment.ID, b.ManageToken, first.Appointment.ID, first.ManageToken)
			}
			if !bytes.Equal(r.Body, replies[fresh].Body) {
				t.Errorf("request %d body differs from the original answer (request %d):\n%q\n%q", i, fresh, r.Body, replies[fresh].Body)
			}
		}
		if n := a.confirmedAt(t, c.Specialists[0].ID, start); n != 1 {
			t.Fatalf("%d confirmed bookings, want exactly 1", n)
		}
	})

	t.Run("ALaterRetryReplaysTheAnswer", func(t *testing.T) {
		client := clientID()
		h := a.hold(t, typeID, slotAt(t, 11, 0), client)
		key := uuid.NewString()
		body := bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientFor(client)}
		first := a.do(t, "POST", bookPath(typeID), body, "Idempotency-Key", key)
		again := a.do(t, "POST", bookPath(typeID), body, "Idempotency-Key", key)
		if first.Status != 201 || again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("first %d, retry %d %v", first.Status, again.Status, again.Header)
		}
		var f, g bookedView
		first.into(t, &f)
		again.into(t, &g)
		if f != g {
			t.Fatalf("retry answered %+v, want %+v", g, f)
		}
		if !bytes.Equal(bytes.TrimSpace(first.Body), bytes.TrimSpace(again.Body)) {
			t.Fatalf("retry body differs:\n%s\n%s", first.Body, again.Body)
		}

		t.Run("SameKeyDifferentBodyIsAMismatch", func(t *testing.T) {
			other := body
			other.Patient = booking.Patient{Name: "Someone Else", Email: "else@example.com"}
			wantError(t, a.do(t, "POST", bookPath(typeID), other, "Idempotency-Key", key), 422, "IDEMPOTENCY_MISMATCH", "")
		})
		t.Run("WithoutTheKeyTheSpentHoldIsExpired", func(t *testing.T) {
			wantError(t, a.do(t, "POST", bookPath(typeID), body), 410, "HOLD_EXPIRED", "")
		})
	})

	t.Run("SameKeyForAnotherHoldIsAMismatchAndBooksNothing", func(t *testing.T) {
		nc := a.clinic(t, testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{{
			Name: "No cooldown", DurationMin: 30, SlotStepMin: 30, CooldownMin: 0,
		}}})
		ntype := nc.Types[0].ID
		client := clientID()
		key := uuid.NewString()
		a.book(t, ntype, a.hold(t, ntype, slotAt(t, 12, 0), client), client, "Idempotency-Key", key)

		h := a.hold(t, ntype, slotAt(t, 13, 0), client)
		wantError(t, a.do(t, "POST", bookPath(ntype), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, "Idempotency-Key", key),
			422, "IDEMPOTENCY_MISMATCH", "")
		if n := a.confirmedAt(t, nc.Specialists[0].ID, slotAt(t, 13, 0)); n != 0 {
			t.Fatalf("%d bookings at 13:00 after a mismatch", n)
		}

		t.Run("KeysArePerClient", func(t *testing.T) {
			other := clientID()
			b := a.book(t, ntype, a.hold(t, ntype, slotAt(t, 14, 0), other), other, "Idempotency-Key", key)
			if b.Appointment.SlotStartDate != rfc(slotAt(t, 14, 0)) {
				t.Fatalf("got %+v", b.Appointment)
			}
		})
	})
}

func TestCooldownAPI(t *testing.T) {
	t.Parallel()
	a := bootAPI(t, nil, web.Options{})

	t.Run("SetAfterBookingAndClearedByCancel", func(t *testing.T) {
		t.Parallel()
		c := a.clinic(t, testkit.ClinicOptions{})
		typeID := c.Types[0].ID
		client := clientID()
		b := a.book(t, typeID, a.hold(t, typeID, slotAt(t, 10, 0), client), client)

		r := a.do(t, "POST", "/v1/holds", holdBody(typeID, slotAt(t, 11, 0), client))
		wantError(t, r, 429, "COOLDOWN", "")
		if secs := retryAfter(t, r); secs < 1439*60 || secs > 1440*60 {
			t.Fatalf("Retry-After %d, want about a day", secs)
		}

		if r := a.do(t, "DELETE", "/v1/appointments/"+b.Appointment.ID.String(), nil, bearer(b.ManageToken)...); r.Status != 200 {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		a.hold(t, typeID, slotAt(t, 11, 0), client)
	})

	t.Run("NotSetWhenTheSlotWasTakenMeanwhile", func(t *testing.T) {
		t.Parallel()
		c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
		typeID := c.Types[0].ID
		client := clientID()
		start := slotAt(t, 10, 0)
		h := a.hold(t, typeID, start, client)
		a.staffBook(t, c, 0, start)
		wantError(t, a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}), 409, "SLOT_TAKEN", "")
		if r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId="+client, nil); r.Status != 204 {
			t.Fatalf("release: %d", r.Status)
		}
		a.hold(t, typeID, slotAt(t, 11, 0), client)
	})

	t.Run("NotSetWhenThePatientIsInvalid", func(t *testing.T) {
		t.Parallel()
		c := a.clinic(t, testkit.ClinicOptions{})
		typeID := c.Types[0].ID
		client := clientID()
		h := a.hold(t, typeID, slotAt(t, 10, 0), client)
		wantError(t, a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: map[string]string{"name": "Ada"}}),
			400, "INVALID_ARGUMENT", "patient.email")
		if r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId="+client, nil); r.Status != 204 {
			t.Fatalf("release: %d", r.Status)
		}
		a.hold(t, typeID, slotAt(t, 11, 0), client)
	})

	t.Run("ClearedByCancelAfterReschedule", func(t *testing.T) {
		t.Parallel()
		c := a.clinic(t, testkit.ClinicOptions{})
		typeID := c.Types[0].ID
		client := clientID()
		b := a.book(t, typeID, a.hold(t, typeID, slotAt(t, 10, 0), client), client)
		r := a.do(t, "PATCH", "/v1/appointments/"+b.Appointment.ID.String(), map[string]string{"slotStartDate": rfc(slotAt(t, 12, 0))},
			append(bearer(b.ManageToken), "If-Match", `"v1"`)...)
		var moved struct {
			Appointment appointmentView `json:"appointment"`
		}
		r.into(t, &moved)
		if r.Status != 200 {
			t.Fatalf("reschedule: %d %s", r.Status, r.Body)
		}
		wantError(t, a.do(t, "POST", "/v1/holds", holdBody(typeID, slotAt(t, 11, 0), client)), 429, "COOLDOWN", "")
		if r := a.do(t, "DELETE", "/v1/appointments/"+moved.Appointment.ID.String(), nil, bearer(b.ManageToken)...); r.Status != 200 {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		if r := a.do(t, "POST", "/v1/holds", holdBody(typeID, slotAt(t, 11, 0), client)); r.Status != http.StatusCreated {
			t.Fatalf("hold after cancelling the (rescheduled) booking: %d %s, want 201", r.Status, r.Body)
		}
	})
}

func TestManageAppointmentAPI(t *testing.T) {
	t.Parallel()
	a := bootAPI(t, nil, web.Options{})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID
	at := func(hh int) time.Time { return slotAt(t, hh, 0) }

	mine := clientID()
	b := a.book(t, typeID, a.hold(t, typeID, at(10), mine), mine) // the appointment under test
	theirs := clientID()
	other := a.book(t, typeID, a.hold(t, typeID, at(11), theirs), theirs)
	a.hold(t, typeID, at(12), clientID()) // 12:00 is held by someone

	path := "/v1/appointments/" + b.Appointment.ID.String()
	auth := bearer(b.ManageToken)
	get := func(t *testing.T) (appointmentView, string) {
		t.Helper()
		r := a.do(t, "GET", path, nil, auth...)
		var body struct {
			Appointment appointmentView `json:"appointment"`
		}
		r.into(t, &body)
		if r.Status != 200 {
			t.Fatalf("GET: %d %s", r.Status, r.Body)
		}
		return body.Appointment, r.Header.Get("ETag")
	}
	unchanged := func(t *testing.T) {
		t.Helper()
		ap, etag := get(t)
		if ap.ID != b.Appointment.ID || ap.SlotStartDate != rfc(at(10)) || ap.Status != "confirmed" || ap.Version != 1 || etag != `"v1"` {
			t.Fatalf("appointment changed: %+v %s", ap, etag)
		}
		if n := a.confirmedAt(t, c.Specialists[0].ID, at(10)); n != 1 {
			t.Fatalf("%d confirmed bookings at 10:00", n)
		}
	}
	move := func(hh int) any { return map[string]string{"slotStartDate": rfc(at(hh))} }

	t.Run("GetGivesTheAppointmentAndAnETag", func(t *testing.T) {
		ap, etag := get(t)
		if ap.SlotStartDate != rfc(at(10)) || ap.Status != "confirmed" || ap.Patient != patientFor(mine) || etag != `"v1"` {
			t.Fatalf("got %+v %s", ap, etag)
		}
		if r := a.do(t, "GET", path+"?token="+b.ManageToken, nil); r.Status != 200 {
			t.Fatalf("token in the query: %d %s", r.Status, r.Body)
		}
	})

	for _, m := range []struct {
		method string
		body   any
		hdr    []string
	}{
		{"GET", nil, nil},
		{"DELETE", nil, nil},
		{"PATCH", move(13), []string{"If-Match", `"v1"`}},
	} {
		t.Run(m.method+"WithoutTokenIs401", func(t *testing.T) {
			wantError(t, a.do(t, m.method, path, m.body, m.hdr...), 401, "TOKEN_REQUIRED", "")
		})
		t.Run(m.method+"WithAWrongTokenIs404", func(t *testing.T) {
			wantError(t, a.do(t, m.method, path, m.body, append(m.hdr, bearer("not-the-token")...)...), 404, "NOT_FOUND", "")
		})
		t.Run(m.method+"WithAnotherBookingsTokenIs404", func(t *testing.T) {
			wantError(t, a.do(t, m.method, path, m.body, append(m.hdr, bearer(other.ManageToken)...)...), 404, "NOT_FOUND", "")
		})
		t.Run(m.method+"WithAMalformedIdIs400", func(t *testing.T) {
			wantError(t, a.do(t, m.method, "/v1/appointments/nope", m.body, append(m.hdr, auth...)...), 400, "INVALID_ARGUMENT", "id")
		})
	}
	unchanged(t)

	t.Run("PatchWithoutIfMatchIs428", func(t *testing.T) {
		wantError(t, a.do(t, "PATCH", path, move(13), auth...), 428, "PRECONDITION_REQUIRED", "")
		unchanged(t)
	})
	t.Run("PatchWithAStaleIfMatchIs412AndChangesNothing", func(t *testing.T) {
		e := wantError(t, a.do(t, "PATCH", path, move(13), append(auth, "If-Match", `"v2"`)...), 412, "CONCURRENCY_CONFLICT", "")
		if e.Error.Details["currentVersion"] != float64(1) {
			t.Fatalf("details %v", e.Error.Details)
		}
		wantError(t, a.do(t, "PATCH", path, move(13), append(auth, "If-Match", "whatever")...), 412, "CONCURRENCY_CONFLICT", "")
		unchanged(t)
	})
	t.Run("PatchOntoATakenSlotIs409AndChangesNothing", func(t *testing.T) {
		wantError(t, a.do(t, "PATCH", path, move(11), append(auth, "If-Match", `"v1"`)...), 409, "SLOT_TAKEN", "")
		unchanged(t)
		if n := a.confirmedAt(t, c.Specialists[0].ID, at(11)); n != 1 {
			t.Fatalf("%d bookings at 11:00", n)
		}
	})
	t.Run("PatchOntoAHeldSlotIs423AndChangesNothing", func(t *testing.T) {
		r := a.do(t, "PATCH", path, move(12), append(auth, "If-Match", `"v1"`)...)
		wantError(t, r, 423, "SLOT_HELD", "")
		retryAfter(t, r)
		unchanged(t)
	})
	t.Run("PatchOntoANonSlotIs400", func(t *testing.T) {
		wantError(t, a.do(t, "PATCH", path, map[string]string{"slotStartDate": rfc(at(10).Add(10 * time.Minute))}, append(auth, "If-Match", `"v1"`)...),
			400, "INVALID_ARGUMENT", "slotStartDate")
		wantError(t, a.do(t, "PATCH", path, map[string]string{}, append(auth, "If-Match", `"v1"`)...), 400, "INVALID_ARGUMENT", "slotStartDate")
		wantError(t, a.do(t, "PATCH", path, `{"slotStartDate":`, append(auth, "If-Match", `"v1"`)...), 400, "INVALID_ARGUMENT", "body")
		unchanged(t)
	})

	var moved appointmentView
	t.Run("PatchWithTheETagReschedules", func(t *testing.T) {
		_, etag := get(t)
		r := a.do(t, "PATCH", path, move(13), append(auth, "If-Match", etag)...)
		var body struct {
			Appointment appointmentView `json:"appointment"`
		}
		r.into(t, &body)
		moved = body.Appointment
		if r.Status != 200 || moved.SlotStartDate != rfc(at(13)) || moved.Status != "confirmed" || moved.RescheduledFrom != b.Appointment.ID ||
			moved.ID == b.Appointment.ID || moved.Patient != patientFor(mine) || r.Header.Get("ETag") == "" {
			t.Fatalf("reschedule: %d %s", r.Status, r.Body)
		}
	})
	if moved.ID == uuid.Nil {
		t.FailNow()
	}
	newPath := "/v1/appointments/" + moved.ID.String()

	t.Run("TheTokenNowOpensTheNewBooking", func(t *testing.T) {
		r := a.do(t, "GET", newPath, nil, auth...)
		if r.Status != 200 || !strings.Contains(string(r.Body), rfc(at(13))) {
			t.Fatalf("new booking: %d %s", r.Status, r.Body)
		}
		wantError(t, a.do(t, "GET", path, nil, auth...), 404, "NOT_FOUND", "")
	})
	t.Run("TheOldSlotIsFreeAndTheNewOneTaken", func(t *testing.T) {
		free := a.free(t, typeID, at(10))
		if _, ok := free[rfc(at(10))]; !ok {
			t.Fatalf("10:00 not offered after the reschedule: %v", free)
		}
		if _, ok := free[rfc(at(13))]; ok {
			t.Fatal("13:00 still offered after the reschedule")
		}
		someone := clientID()
		got := a.book(t, typeID, a.hold(t, typeID, at(10), someone), someone)
		if got.Appointment.SlotStartDate != rfc(at(10)) {
			t.Fatalf("booking the old slot: %+v", got)
		}
		if n := a.confirmedAt(t, c.Specialists[0].ID, at(13)); n != 1 {
			t.Fatalf("%d bookings at 13:00", n)
		}
	})

	t.Run("DeleteCancelsAndFreesTheSlot", func(t *testing.T) {
		r := a.do(t, "DELETE", newPath+"?reason=ill", nil, auth...)
		var body struct {
			Appointment appointmentView `json:"appointment"`
		}
		r.into(t, &body)
		if r.Status != 200 || body.Appointment.Status != "cancelled" || body.Appointment.ID != moved.ID {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		if _, ok := a.free(t, typeID, at(13))[rfc(at(13))]; !ok {
			t.Fatal("13:00 not offered again after the cancel")
		}
		if n := a.confirmedAt(t, c.Specialists[0].ID, at(13)); n != 0 {
			t.Fatalf("%d confirmed bookings at 13:00 after the cancel", n)
		}
		r = a.do(t, "DELETE", newPath, nil, auth...)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"cancelled"`) {
			t.Fatalf("cancelling again: %d %s", r.Status, r.Body)
		}
	})
	t.Run("ACancelledBookingCannotBeRescheduled", func(t *testing.T) {
		r := a.do(t, "GET", newPath, nil, auth...)
		if r.Status != 200 {
			t.Fatalf("GET cancelled: %d %s", r.Status, r.Body)
		}
		wantError(t, a.do(t, "PATCH", newPath, move(14), append(auth, "If-Match", r.Header.Get("ETag"))...), 409, "BOOKING_NOT_ACTIVE", "")
		wantError(t, a.do(t, "PATCH", newPath, move(14), append(auth, "If-Match", `"v1"`)...), 412, "CONCURRENCY_CONFLICT", "")
	})
}
