package web_test

// Tests of booking through the JSON API: POST
// /v1/appointment-types/:id/book, its refusals and its Idempotency-Key.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

func TestBookAPI(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30, SlotStepMin: 30, CooldownMin: 1440, MaxHoldsPerClient: 20},
		{Name: "Follow-up", DurationMin: 30, SlotStepMin: 30, MaxHoldsPerClient: 20},
	}})
	typeID := c.Types[0].ID
	slot := slotsFrom(c.Monday(9, 0))

	t.Run("BooksTheHeldSlot", func(t *testing.T) {
		client := clientID()
		start := slot()
		h := a.hold(t, typeID, start, client)
		r := a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: map[string]string{
			"name": "  Grace Hopper ", "email": "grace@example.com", "phone": "",
		}})
		var b bookedView
		r.Decode(&b)
		ap := b.Appointment
		if r.Status != http.StatusCreated || ap.Status != "confirmed" || ap.SlotStartDate != rfc(start) || ap.SlotEndDate != rfc(start.Add(30*time.Minute)) ||
			ap.SpecialistID != c.Specialists[0].ID || ap.TypeID != typeID || ap.Patient.Name != "Grace Hopper" || len(b.ManageToken) < 32 {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		if r.Header.Get("ETag") != `"v1"` {
			t.Fatalf("ETag %q", r.Header.Get("ETag"))
		}
		if strings.Contains(r.Body, client) {
			t.Fatal("the answer must not echo the client id")
		}
		if n := a.confirmedAt(t, c.Specialists[0].ID, start); n != 1 {
			t.Fatalf("%d confirmed bookings", n)
		}
	})

	for _, tc := range bookRefusals(a, c, slot) {
		t.Run(tc.name, func(t *testing.T) {
			path, body, hdr := tc.setup(t)
			wantError(t, a.do(t, "POST", path, body, hdr...), tc.status, tc.code, tc.field)
		})
	}

	t.Run("AnExpiredHoldIsExpired", func(t *testing.T) {
		t.Parallel()
		short := newApp(t, withOptions(program.Options{HoldTTL: 400 * time.Millisecond}))
		sc := short.clinic(t, testkit.ClinicOptions{Specialists: 1})
		client := clientID()
		h := short.hold(t, sc.Types[0].ID, sc.Monday(10, 0), client)
		time.Sleep(700 * time.Millisecond)
		wantError(t, short.do(t, "POST", bookPath(sc.Types[0].ID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}),
			410, "HOLD_EXPIRED", "")
		if n := short.confirmedAt(t, sc.Specialists[0].ID, sc.Monday(10, 0)); n != 0 {
			t.Fatalf("%d bookings from an expired hold", n)
		}
	})
}

// slotsFrom hands out a slot of its own to each caller: first, then every
// half hour to 16:30, then the next days from 09:00.
func slotsFrom(first time.Time) func() time.Time {
	next := first
	return func() time.Time {
		s := next
		next = next.Add(30 * time.Minute)
		if next.Hour() >= 17 {
			next = time.Date(next.Year(), next.Month(), next.Day()+1, 9, 0, 0, 0, next.Location())
		}
		return s.UTC()
	}
}

// bookRefusal is a booking the API refuses: setup makes its request.
type bookRefusal struct {
	name   string
	setup  func(t *testing.T) (path string, body any, hdr []string)
	status int
	code   string
	field  string
}

// bookRefusals are the bookings of c's first type that are refused, each
// on a slot of its own.
func bookRefusals(a *app, c clinic, slot func() time.Time) []bookRefusal {
	typeID := c.Types[0].ID
	held := func(t *testing.T) (holdView, string) {
		client := clientID()
		return a.hold(t, typeID, slot(), client), client
	}
	// withHold books a fresh hold of its own client with the request mk makes.
	withHold := func(mk func(t *testing.T, h holdView, client string) (string, any, []string)) func(t *testing.T) (string, any, []string) {
		return func(t *testing.T) (string, any, []string) {
			h, client := held(t)
			return mk(t, h, client)
		}
	}
	withPatient := func(p any) func(t *testing.T) (string, any, []string) {
		return withHold(func(t *testing.T, h holdView, client string) (string, any, []string) {
			return bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: p}, nil
		})
	}
	return append(bookInputRefusals(typeID, withHold, withPatient), bookStateRefusals(a, c, withHold)...)
}

// bookInputRefusals are bookings refused for what the request says.
func bookInputRefusals(typeID uuid.UUID,
	withHold func(func(*testing.T, holdView, string) (string, any, []string)) func(*testing.T) (string, any, []string),
	withPatient func(any) func(*testing.T) (string, any, []string)) []bookRefusal {
	fixed := func(path string, body any) func(*testing.T) (string, any, []string) {
		return func(*testing.T) (string, any, []string) { return path, body, nil }
	}
	return []bookRefusal{
		{"MalformedTypeInPath", fixed("/v1/appointment-types/nope/book", bookBody{}), 400, "INVALID_ARGUMENT", "id"},
		{"BadJSON", fixed(bookPath(typeID), `{"holdId": }`), 400, "INVALID_ARGUMENT", "body"},
		{"NoBody", fixed(bookPath(typeID), ""), 400, "INVALID_ARGUMENT", "body"},
		{"MissingHoldId", fixed(bookPath(typeID), bookBody{ClientID: clientID(), Patient: patientOK}), 400, "INVALID_ARGUMENT", "holdId"},
		{"MalformedHoldId", fixed(bookPath(typeID), bookBody{HoldID: "h-nope", ClientID: clientID(), Patient: patientOK}), 400, "INVALID_ARGUMENT", "holdId"},
		{"MissingClient", withHold(func(_ *testing.T, h holdView, _ string) (string, any, []string) {
			return bookPath(typeID), bookBody{HoldID: h.HoldID, Patient: patientOK}, nil
		}), 400, "INVALID_ARGUMENT", "clientId"},
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
		{"BadIdempotencyKey", withHold(func(_ *testing.T, h holdView, client string) (string, any, []string) {
			return bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, []string{"Idempotency-Key", "has spaces"}
		}), 400, "INVALID_ARGUMENT", "Idempotency-Key"},
	}
}

// bookStateRefusals are bookings refused for the state of their hold or slot.
func bookStateRefusals(a *app, c clinic,
	withHold func(func(*testing.T, holdView, string) (string, any, []string)) func(*testing.T) (string, any, []string)) []bookRefusal {
	typeID := c.Types[0].ID
	// takenMeanwhile books the hold's slot at the desk first.
	takenMeanwhile := func(hdr []string) func(*testing.T) (string, any, []string) {
		return withHold(func(t *testing.T, h holdView, client string) (string, any, []string) {
			start, _ := time.Parse(time.RFC3339, h.SlotStartDate)
			a.bookDirect(t, c, c.Type0(), c.Specialists[0].ID, start, "Desk Patient")
			return bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, hdr
		})
	}
	return []bookRefusal{
		{"HoldReleased", withHold(func(t *testing.T, h holdView, client string) (string, any, []string) {
			if r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId="+client, nil); r.Status != 204 {
				t.Fatalf("release: %d", r.Status)
			}
			return bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, nil
		}), 410, "HOLD_EXPIRED", ""},
		{"HoldNeverExisted", func(*testing.T) (string, any, []string) {
			id := "h" + strings.ReplaceAll(c.ID.String(), "-", "") + strings.Repeat("0", 20)
			return bookPath(typeID), bookBody{HoldID: id, ClientID: clientID(), Patient: patientOK}, nil
		}, 410, "HOLD_EXPIRED", ""},
		{"NotYourHold", withHold(func(_ *testing.T, h holdView, _ string) (string, any, []string) {
			return bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: clientID(), Patient: patientOK}, nil
		}), 403, "NOT_YOUR_HOLD", ""},
		{"HoldOfAnotherType", withHold(func(_ *testing.T, h holdView, client string) (string, any, []string) {
			return bookPath(c.Types[1].ID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, nil
		}), 400, "INVALID_ARGUMENT", "holdId"},
		{"UnknownTypeInPath", withHold(func(_ *testing.T, h holdView, client string) (string, any, []string) {
			return bookPath(uuid.New()), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, nil
		}), 400, "INVALID_ARGUMENT", "holdId"},
		{"SlotTakenMeanwhile", takenMeanwhile(nil), 409, "SLOT_TAKEN", ""},
		{"SlotTakenMeanwhileWithIdempotencyKey", takenMeanwhile([]string{"Idempotency-Key", uuid.NewString()}), 409, "SLOT_TAKEN", ""},
	}
}

func TestBookIdempotency(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID

	t.Run("TenConcurrentRetriesBookOnceAndAnswerAlike", func(t *testing.T) {
		client := clientID()
		start := c.Monday(10, 0)
		h := a.hold(t, typeID, start, client)
		key := uuid.NewString()
		body := bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}

		replies := make([]*response, 10)
		testkit.Together(len(replies), func(i int) {
			replies[i] = a.do(t, "POST", bookPath(typeID), body, "Idempotency-Key", key)
		})
		wantOneBookingAnsweredAlike(t, replies)
		if n := a.confirmedAt(t, c.Specialists[0].ID, start); n != 1 {
			t.Fatalf("%d confirmed bookings, want exactly 1", n)
		}
	})

	t.Run("ALaterRetryReplaysTheAnswer", func(t *testing.T) {
		client := clientID()
		h := a.hold(t, typeID, c.Monday(11, 0), client)
		key := uuid.NewString()
		body := bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientFor(client)}
		first := a.do(t, "POST", bookPath(typeID), body, "Idempotency-Key", key)
		again := a.do(t, "POST", bookPath(typeID), body, "Idempotency-Key", key)
		if first.Status != 201 || again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("first %d, retry %d %v", first.Status, again.Status, again.Header)
		}
		var f, g bookedView
		first.Decode(&f)
		again.Decode(&g)
		if f != g {
			t.Fatalf("retry answered %+v, want %+v", g, f)
		}
		if strings.TrimSpace(first.Body) != strings.TrimSpace(again.Body) {
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
		a.book(t, ntype, a.hold(t, ntype, nc.Monday(12, 0), client), client, "Idempotency-Key", key)

		h := a.hold(t, ntype, nc.Monday(13, 0), client)
		wantError(t, a.do(t, "POST", bookPath(ntype), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}, "Idempotency-Key", key),
			422, "IDEMPOTENCY_MISMATCH", "")
		if n := a.confirmedAt(t, nc.Specialists[0].ID, nc.Monday(13, 0)); n != 0 {
			t.Fatalf("%d bookings at 13:00 after a mismatch", n)
		}

		t.Run("KeysArePerClient", func(t *testing.T) {
			other := clientID()
			b := a.book(t, ntype, a.hold(t, ntype, nc.Monday(14, 0), other), other, "Idempotency-Key", key)
			if b.Appointment.SlotStartDate != rfc(nc.Monday(14, 0)) {
				t.Fatalf("got %+v", b.Appointment)
			}
		})
	})
}

// wantOneBookingAnsweredAlike checks the answers to concurrent retries of
// one booking: exactly one booked afresh, and every one is that answer.
func wantOneBookingAnsweredAlike(t *testing.T, replies []*response) {
	t.Helper()
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
	replies[fresh].Decode(&first)
	for i, r := range replies {
		if r.Status != http.StatusCreated {
			t.Errorf("request %d: %d %s", i, r.Status, r.Body)
			continue
		}
		var b bookedView
		r.Decode(&b)
		if b.Appointment.ID != first.Appointment.ID || b.ManageToken != first.ManageToken {
			t.Errorf("request %d answered booking %s / token %s, want %s / %s", i, b.Appointment.ID, b.ManageToken, first.Appointment.ID, first.ManageToken)
		}
		if r.Body != replies[fresh].Body {
			t.Errorf("request %d body differs from the original answer (request %d):\n%q\n%q", i, fresh, r.Body, replies[fresh].Body)
		}
	}
}
