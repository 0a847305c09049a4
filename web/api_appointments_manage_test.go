package web_test

// Tests of an appointment after its booking, through the JSON API: the
// cooldown a booking sets and the patient's cancel cuts to an hour, and GET, PATCH (move) and
// DELETE (cancel) of /v1/appointments/:id with the manage token.

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

func TestCooldownAPI(t *testing.T) {
	t.Parallel()
	a := newApp(t)

	// The patient's own cancel keeps the cooldown for an hour (not the
	// type's day): booking and cancelling in a loop renews nothing.
	t.Run("SetAfterBookingAndKeptForAnHourByTheCancel", func(t *testing.T) {
		t.Parallel()
		c := a.clinic(t, testkit.ClinicOptions{})
		typeID := c.Types[0].ID
		client := clientID()
		b := a.book(t, typeID, a.hold(t, typeID, c.Monday(10, 0), client), client)

		r := a.do(t, "POST", "/v1/holds", holdBody(typeID, c.Monday(11, 0), client))
		wantError(t, r, 429, "COOLDOWN", "")
		if secs := retryAfter(t, r); secs < 1439*60 || secs > 1440*60 {
			t.Fatalf("Retry-After %d, want about a day", secs)
		}

		if r := a.do(t, "DELETE", "/v1/appointments/"+b.Appointment.ID.String(), nil, bearer(b.ManageToken)...); r.Status != 200 {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		r = a.do(t, "POST", "/v1/holds", holdBody(typeID, c.Monday(11, 0), client))
		wantError(t, r, 429, "COOLDOWN", "")
		if secs := retryAfter(t, r); secs < 3500 || secs > 3600 {
			t.Fatalf("Retry-After %d after the cancel, want the hour it keeps", secs)
		}
	})

	t.Run("NotSetWhenTheSlotWasTakenMeanwhile", func(t *testing.T) {
		t.Parallel()
		c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
		typeID := c.Types[0].ID
		client := clientID()
		start := c.Monday(10, 0)
		h := a.hold(t, typeID, start, client)
		a.bookDirect(t, c, c.Type0(), c.Specialists[0].ID, start, "Desk Patient")
		wantError(t, a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientOK}), 409, "SLOT_TAKEN", "")
		if r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId="+client, nil); r.Status != 204 {
			t.Fatalf("release: %d", r.Status)
		}
		a.hold(t, typeID, c.Monday(11, 0), client)
	})

	t.Run("NotSetWhenThePatientIsInvalid", func(t *testing.T) {
		t.Parallel()
		c := a.clinic(t, testkit.ClinicOptions{})
		typeID := c.Types[0].ID
		client := clientID()
		h := a.hold(t, typeID, c.Monday(10, 0), client)
		wantError(t, a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: map[string]string{"name": "Ada"}}),
			400, "INVALID_ARGUMENT", "patient.email")
		if r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId="+client, nil); r.Status != 204 {
			t.Fatalf("release: %d", r.Status)
		}
		a.hold(t, typeID, c.Monday(11, 0), client)
	})

	t.Run("KeptForAnHourByTheCancelAfterReschedule", func(t *testing.T) {
		t.Parallel()
		c := a.clinic(t, testkit.ClinicOptions{})
		typeID := c.Types[0].ID
		client := clientID()
		b := a.book(t, typeID, a.hold(t, typeID, c.Monday(10, 0), client), client)
		r := a.do(t, "PATCH", "/v1/appointments/"+b.Appointment.ID.String(), map[string]string{"slotStartDate": rfc(c.Monday(12, 0))},
			append(bearer(b.ManageToken), "If-Match", `"v1"`)...)
		var moved appointmentAnswer
		r.Decode(&moved)
		if r.Status != 200 {
			t.Fatalf("reschedule: %d %s", r.Status, r.Body)
		}
		wantError(t, a.do(t, "POST", "/v1/holds", holdBody(typeID, c.Monday(11, 0), client)), 429, "COOLDOWN", "")
		if r := a.do(t, "DELETE", "/v1/appointments/"+moved.Appointment.ID.String(), nil, bearer(b.ManageToken)...); r.Status != 200 {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		r = a.do(t, "POST", "/v1/holds", holdBody(typeID, c.Monday(11, 0), client))
		wantError(t, r, 429, "COOLDOWN", "")
		if secs := retryAfter(t, r); secs < 3500 || secs > 3600 {
			t.Fatalf("Retry-After %d after cancelling the (rescheduled) booking, want the hour a cancel keeps", secs)
		}
	})
}

// manageCase is an appointment booked through the API and the requests
// its manage token makes.
type manageCase struct {
	a      *app
	c      clinic
	typeID uuid.UUID
	mine   string     // the client that booked it
	b      bookedView // the appointment under test, at 10:00
	other  bookedView // another client's, at 11:00
	path   string
	auth   []string
}

// at is the test's Monday at hh:00.
func (m *manageCase) at(hh int) time.Time { return m.c.Monday(hh, 0) }

// move is the body of a move to hh:00.
func (m *manageCase) move(hh int) any { return map[string]string{"slotStartDate": rfc(m.at(hh))} }

// ifMatch is the token and an If-Match of etag.
func (m *manageCase) ifMatch(etag string) []string { return append(m.auth, "If-Match", etag) }

// get reads the appointment and its ETag.
func (m *manageCase) get(t *testing.T) (appointmentView, string) {
	t.Helper()
	r := m.a.do(t, "GET", m.path, nil, m.auth...)
	var body appointmentAnswer
	r.Decode(&body)
	if r.Status != 200 {
		t.Fatalf("GET: %d %s", r.Status, r.Body)
	}
	return body.Appointment, r.Header.Get("ETag")
}

// unchanged checks the appointment is as booked.
func (m *manageCase) unchanged(t *testing.T) {
	t.Helper()
	ap, etag := m.get(t)
	if ap.ID != m.b.Appointment.ID || ap.SlotStartDate != rfc(m.at(10)) || ap.Status != "confirmed" || ap.Version != 1 || etag != `"v1"` {
		t.Fatalf("appointment changed: %+v %s", ap, etag)
	}
	if n := m.a.confirmedAt(t, m.c.Specialists[0].ID, m.at(10)); n != 1 {
		t.Fatalf("%d confirmed bookings at 10:00", n)
	}
}

func TestManageAppointmentAPI(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	m := &manageCase{a: a, c: c, typeID: c.Types[0].ID, mine: clientID()}
	m.b = a.book(t, m.typeID, a.hold(t, m.typeID, m.at(10), m.mine), m.mine)
	theirs := clientID()
	m.other = a.book(t, m.typeID, a.hold(t, m.typeID, m.at(11), theirs), theirs)
	a.hold(t, m.typeID, m.at(12), clientID()) // 12:00 is held by someone
	m.path = "/v1/appointments/" + m.b.Appointment.ID.String()
	m.auth = bearer(m.b.ManageToken)

	t.Run("GetGivesTheAppointmentAndAnETag", func(t *testing.T) {
		ap, etag := m.get(t)
		if ap.SlotStartDate != rfc(m.at(10)) || ap.Status != "confirmed" || ap.Patient != patientFor(m.mine) || etag != `"v1"` {
			t.Fatalf("got %+v %s", ap, etag)
		}
		if r := a.do(t, "GET", m.path+"?token="+m.b.ManageToken, nil); r.Status != 200 {
			t.Fatalf("token in the query: %d %s", r.Status, r.Body)
		}
	})
	m.refusedWithoutItsToken(t)
	m.unchanged(t)
	m.refusedMoves(t)

	moved := m.reschedule(t)
	if moved.ID == uuid.Nil {
		t.FailNow()
	}
	m.afterTheMove(t, moved)
}

// refusedWithoutItsToken: every method wants the appointment's own token.
func (m *manageCase) refusedWithoutItsToken(t *testing.T) {
	a := m.a
	for _, r := range []struct {
		method string
		body   any
		hdr    []string
	}{
		{"GET", nil, nil},
		{"DELETE", nil, nil},
		{"PATCH", m.move(13), []string{"If-Match", `"v1"`}},
	} {
		t.Run(r.method+"WithoutTokenIs401", func(t *testing.T) {
			wantError(t, a.do(t, r.method, m.path, r.body, r.hdr...), 401, "TOKEN_REQUIRED", "")
		})
		t.Run(r.method+"WithAWrongTokenIs404", func(t *testing.T) {
			wantError(t, a.do(t, r.method, m.path, r.body, append(r.hdr, bearer("not-the-token")...)...), 404, "NOT_FOUND", "")
		})
		t.Run(r.method+"WithAnotherBookingsTokenIs404", func(t *testing.T) {
			wantError(t, a.do(t, r.method, m.path, r.body, append(r.hdr, bearer(m.other.ManageToken)...)...), 404, "NOT_FOUND", "")
		})
		t.Run(r.method+"WithAMalformedIdIs400", func(t *testing.T) {
			wantError(t, a.do(t, r.method, "/v1/appointments/nope", r.body, append(r.hdr, m.auth...)...), 400, "INVALID_ARGUMENT", "id")
		})
	}
}

// refusedMoves are moves refused for their version or their target, each
// changing nothing.
func (m *manageCase) refusedMoves(t *testing.T) {
	a, path := m.a, m.path
	t.Run("PatchWithoutIfMatchIs428", func(t *testing.T) {
		wantError(t, a.do(t, "PATCH", path, m.move(13), m.auth...), 428, "PRECONDITION_REQUIRED", "")
		m.unchanged(t)
	})
	t.Run("PatchWithAStaleIfMatchIs412AndChangesNothing", func(t *testing.T) {
		e := wantError(t, a.do(t, "PATCH", path, m.move(13), m.ifMatch(`"v2"`)...), 412, "CONCURRENCY_CONFLICT", "")
		if e.Error.Details["currentVersion"] != float64(1) {
			t.Fatalf("details %v", e.Error.Details)
		}
		wantError(t, a.do(t, "PATCH", path, m.move(13), m.ifMatch("whatever")...), 412, "CONCURRENCY_CONFLICT", "")
		m.unchanged(t)
	})
	t.Run("PatchOntoATakenSlotIs409AndChangesNothing", func(t *testing.T) {
		wantError(t, a.do(t, "PATCH", path, m.move(11), m.ifMatch(`"v1"`)...), 409, "SLOT_TAKEN", "")
		m.unchanged(t)
		if n := a.confirmedAt(t, m.c.Specialists[0].ID, m.at(11)); n != 1 {
			t.Fatalf("%d bookings at 11:00", n)
		}
	})
	t.Run("PatchOntoAHeldSlotIs423AndChangesNothing", func(t *testing.T) {
		r := a.do(t, "PATCH", path, m.move(12), m.ifMatch(`"v1"`)...)
		wantError(t, r, 423, "SLOT_HELD", "")
		retryAfter(t, r)
		m.unchanged(t)
	})
	t.Run("PatchOntoANonSlotIs400", func(t *testing.T) {
		wantError(t, a.do(t, "PATCH", path, map[string]string{"slotStartDate": rfc(m.at(10).Add(10 * time.Minute))}, m.ifMatch(`"v1"`)...),
			400, "INVALID_ARGUMENT", "slotStartDate")
		wantError(t, a.do(t, "PATCH", path, map[string]string{}, m.ifMatch(`"v1"`)...), 400, "INVALID_ARGUMENT", "slotStartDate")
		wantError(t, a.do(t, "PATCH", path, `{"slotStartDate":`, m.ifMatch(`"v1"`)...), 400, "INVALID_ARGUMENT", "body")
		m.unchanged(t)
	})
}

// reschedule moves the appointment to 13:00 with its ETag.
func (m *manageCase) reschedule(t *testing.T) appointmentView {
	var moved appointmentView
	t.Run("PatchWithTheETagReschedules", func(t *testing.T) {
		_, etag := m.get(t)
		r := m.a.do(t, "PATCH", m.path, m.move(13), m.ifMatch(etag)...)
		var body appointmentAnswer
		r.Decode(&body)
		moved = body.Appointment
		if r.Status != 200 || moved.SlotStartDate != rfc(m.at(13)) || moved.Status != "confirmed" || moved.RescheduledFrom != m.b.Appointment.ID ||
			moved.ID == m.b.Appointment.ID || moved.Patient != patientFor(m.mine) || r.Header.Get("ETag") == "" {
			t.Fatalf("reschedule: %d %s", r.Status, r.Body)
		}
	})
	return moved
}

// afterTheMove: the token follows the booking, the slots follow the move,
// and the moved booking cancels once.
func (m *manageCase) afterTheMove(t *testing.T, moved appointmentView) {
	a, at, auth := m.a, m.at, m.auth
	newPath := "/v1/appointments/" + moved.ID.String()
	t.Run("TheTokenNowOpensTheNewBooking", func(t *testing.T) {
		r := a.do(t, "GET", newPath, nil, auth...)
		if r.Status != 200 || !strings.Contains(r.Body, rfc(at(13))) {
			t.Fatalf("new booking: %d %s", r.Status, r.Body)
		}
		wantError(t, a.do(t, "GET", m.path, nil, auth...), 404, "NOT_FOUND", "")
	})
	t.Run("TheOldSlotIsFreeAndTheNewOneTaken", func(t *testing.T) {
		free := a.free(t, m.c, m.typeID, at(10))
		if _, ok := free[rfc(at(10))]; !ok {
			t.Fatalf("10:00 not offered after the reschedule: %v", free)
		}
		if _, ok := free[rfc(at(13))]; ok {
			t.Fatal("13:00 still offered after the reschedule")
		}
		someone := clientID()
		got := a.book(t, m.typeID, a.hold(t, m.typeID, at(10), someone), someone)
		if got.Appointment.SlotStartDate != rfc(at(10)) {
			t.Fatalf("booking the old slot: %+v", got)
		}
		if n := a.confirmedAt(t, m.c.Specialists[0].ID, at(13)); n != 1 {
			t.Fatalf("%d bookings at 13:00", n)
		}
	})
	t.Run("DeleteCancelsAndFreesTheSlot", func(t *testing.T) {
		r := a.do(t, "DELETE", newPath+"?reason=ill", nil, auth...)
		var body appointmentAnswer
		r.Decode(&body)
		if r.Status != 200 || body.Appointment.Status != "cancelled" || body.Appointment.ID != moved.ID {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		if _, ok := a.free(t, m.c, m.typeID, at(13))[rfc(at(13))]; !ok {
			t.Fatal("13:00 not offered again after the cancel")
		}
		if n := a.confirmedAt(t, m.c.Specialists[0].ID, at(13)); n != 0 {
			t.Fatalf("%d confirmed bookings at 13:00 after the cancel", n)
		}
		r = a.do(t, "DELETE", newPath, nil, auth...)
		if r.Status != 200 || !strings.Contains(r.Body, `"cancelled"`) {
			t.Fatalf("cancelling again: %d %s", r.Status, r.Body)
		}
	})
	t.Run("ACancelledBookingCannotBeRescheduled", func(t *testing.T) {
		r := a.do(t, "GET", newPath, nil, auth...)
		if r.Status != 200 {
			t.Fatalf("GET cancelled: %d %s", r.Status, r.Body)
		}
		wantError(t, a.do(t, "PATCH", newPath, m.move(14), m.ifMatch(r.Header.Get("ETag"))...), 409, "BOOKING_NOT_ACTIVE", "")
		wantError(t, a.do(t, "PATCH", newPath, m.move(14), m.ifMatch(`"v1"`)...), 412, "CONCURRENCY_CONFLICT", "")
	})
}
