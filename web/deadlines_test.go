package web_test

// Change deadlines: a patient may move a booking online until its type's
// deadline (the clinic's default when the type has none). Inside it the
// manage page and the API refuse a move (409 CHANGE_DEADLINE) and give the
// clinic's phone; a cancel still goes through, marked late, and staff see
// it on the booking, beside the no-shows at the desk and on the patients
// page. Staff move such a booking as ever.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

const deadlinePhone = "+49 30 1234567"

// deadlineClinic is a clinic with one specialist and one type whose own
// change deadline is typeHours (NULL: none of its own), with defaultHours
// as the clinic's default and a phone.
func (a *app) deadlineClinic(t *testing.T, typeHours pgtype.Int4, defaultHours int32) clinic {
	t.Helper()
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1, ChangeDeadlineHours: typeHours},
	}})
	if _, err := a.Pool.Exec(context.Background(),
		"UPDATE clinics SET contact_phone = $2, default_change_deadline_hours = $3 WHERE id = $1", c.ID, deadlinePhone, defaultHours); err != nil {
		t.Fatal(err)
	}
	return c
}

func hours(n int32) pgtype.Int4 { return pgtype.Int4{Int32: n, Valid: true} }

// A month's deadline: next week's booking is inside it.
const insideHours = 24 * 30

func TestChangeDeadlineRefusesMovesInsideIt(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deadlineClinic(t, hours(insideHours), 0)
	typeID := c.Types[0].ID
	client := clientID()
	b := a.book(t, typeID, a.hold(t, typeID, c.Monday(10, 0), client), client)
	m := moveCase{a: a, c: c, token: b.ManageToken, cl: a.newClient(t)}

	t.Run("ManagePageSaysSoWithThePhone", func(t *testing.T) {
		r := m.cl.send("GET", "/manage/"+b.ManageToken, nil, "Accept", browserAccept)
		if r.Status != http.StatusOK {
			t.Fatalf("manage page: %d", r.Status)
		}
		doc := r.Doc()
		notice := text(doc.Find(`[data-testid="deadline-passed"]`))
		if !strings.Contains(notice, "can no longer be moved online") || !strings.Contains(notice, deadlinePhone) {
			t.Errorf("the deadline notice reads %q", notice)
		}
		if href, _ := doc.Find(`[data-testid="deadline-phone"]`).Attr("href"); href != "tel:+49301234567" {
			t.Errorf("the phone links to %q", href)
		}
		if doc.Find(`[data-testid="move-link"]`).Length() != 0 {
			t.Error("the page still offers a move")
		}
		if doc.Find(`[data-testid="cancel-link"]`).Length() != 1 {
			t.Error("the page no longer offers a cancel")
		}
	})
	t.Run("ReschedulePageIs409", func(t *testing.T) {
		r := m.cl.send("GET", "/manage/"+b.ManageToken+"/reschedule", nil, "Accept", browserAccept)
		if r.Status != http.StatusConflict || !strings.Contains(r.Body, "can no longer be moved online") || !strings.Contains(r.Body, deadlinePhone) {
			t.Errorf("reschedule page: %d %s", r.Status, clip(r.Body, 1500))
		}
		r = m.cl.send("GET", "/manage/"+b.ManageToken+"/reschedule", nil, "Accept", browserAccept, "Accept-Language", "de")
		if r.Status != http.StatusConflict || !strings.Contains(r.Body, "Dieser Termin kann nicht mehr online verschoben werden.") {
			t.Errorf("reschedule page in German: %d %s", r.Status, clip(r.Body, 1500))
		}
	})
	t.Run("PagePostIs409", func(t *testing.T) {
		if r := m.page(t, 11); r.Status != http.StatusConflict || !strings.Contains(r.Body, "can no longer be moved online") {
			t.Errorf("page move: %d %s", r.Status, clip(r.Body, 1500))
		}
	})
	t.Run("APIIs409WithTheCode", func(t *testing.T) {
		r := m.api(t, 11)
		var body struct {
			Error struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		r.Decode(&body)
		if r.Status != http.StatusConflict || body.Error.Code != "CHANGE_DEADLINE" {
			t.Fatalf("API move: %d %s", r.Status, r.Body)
		}
		if body.Error.Details["phone"] != deadlinePhone {
			t.Errorf("details %v carry no phone", body.Error.Details)
		}
		want := c.Monday(10, 0).Add(-insideHours * time.Hour).UTC().Format(time.RFC3339)
		if body.Error.Details["deadline"] != want {
			t.Errorf("deadline %v, want %s", body.Error.Details["deadline"], want)
		}
	})
	if got := a.booking(t, b.Appointment.ID); got.Status != "confirmed" || !got.Start.Equal(c.Monday(10, 0)) {
		t.Errorf("the booking is %s at %s after refused moves", got.Status, got.Start)
	}
}

func TestChangeDeadlineAllowsMovesOutsideIt(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	for name, c := range map[string]clinic{
		"ClinicDefault":        a.deadlineClinic(t, pgtype.Int4{}, 1),
		"TypeOwnOverDefault":   a.deadlineClinic(t, hours(0), insideHours),
		"TypeOwnInsideDefault": a.deadlineClinic(t, hours(2), 0),
	} {
		t.Run(name, func(t *testing.T) {
			typeID := c.Types[0].ID
			client := clientID()
			b := a.book(t, typeID, a.hold(t, typeID, c.Monday(10, 0), client), client)
			m := moveCase{a: a, c: c, token: b.ManageToken, cl: a.newClient(t)}
			doc := m.cl.send("GET", "/manage/"+b.ManageToken, nil, "Accept", browserAccept).Doc()
			if doc.Find(`[data-testid="move-link"]`).Length() != 1 || doc.Find(`[data-testid="deadline-passed"]`).Length() != 0 {
				t.Error("the manage page refuses a move outside the deadline")
			}
			if r := m.page(t, 11); r.Status != http.StatusSeeOther {
				t.Fatalf("page move: %d %s", r.Status, clip(r.Body, 1500))
			}
			if r := m.api(t, 12); r.Status != http.StatusOK {
				t.Fatalf("API move: %d %s", r.Status, r.Body)
			}
		})
	}
}

func TestLateCancelIsMarkedForStaff(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deadlineClinic(t, pgtype.Int4{}, insideHours)
	typeID := c.Types[0].ID
	client, early := clientID(), clientID()
	b := a.book(t, typeID, a.hold(t, typeID, c.Monday(10, 0), client), client)
	cl := a.newClient(t)

	// The cancel page says it is late; the cancel goes through.
	r := cl.send("GET", "/manage/"+b.ManageToken+"/cancel", nil, "Accept", browserAccept)
	if r.Status != http.StatusOK || r.Doc().Find(`[data-testid="cancel-late"]`).Length() != 1 {
		t.Errorf("cancel page: %d, late notice missing", r.Status)
	}
	r = cl.send("POST", "/manage/"+b.ManageToken+"/cancel", url.Values{"confirm": {"yes"}}, "Accept", browserAccept)
	if r.Status != http.StatusSeeOther {
		t.Fatalf("cancel: %d %s", r.Status, clip(r.Body, 1500))
	}
	if got := a.booking(t, b.Appointment.ID); got.Status != "cancelled" || !got.LateCancel {
		t.Fatalf("after the cancel: %s, late %v", got.Status, got.LateCancel)
	}
	if n := a.confirmedAt(t, c.Specialists[0].ID, c.Monday(10, 0)); n != 0 {
		t.Errorf("%d bookings still hold the cancelled time", n)
	}

	// A second late cancel by the API; a cancel outside the deadline (none
	// for that booking's clinic) is not late.
	b2 := a.book(t, typeID, a.hold(t, typeID, c.Monday(11, 0), client), client)
	a.cancelBooking(t, b2)
	other := a.deadlineClinic(t, pgtype.Int4{}, 0)
	b3 := a.book(t, other.Types[0].ID, a.hold(t, other.Types[0].ID, other.Monday(10, 0), early), early)
	a.cancelBooking(t, b3)
	if a.booking(t, b3.Appointment.ID).LateCancel {
		t.Error("a cancel without a deadline is marked late")
	}

	admin := a.signIn(t, c.Admin)
	doc := admin.Get("/staff/bookings/" + b.Appointment.ID.String()).Want(http.StatusOK).Doc()
	if got := text(doc.Find(`[data-testid="late-cancel"]`)); got != "Late cancellation" {
		t.Errorf("the staff booking page marks it %q", got)
	}
	email := patientFor(client).Email
	if got := admin.Get("/staff/desk/noshows?email=" + url.QueryEscape(email)).Want(http.StatusOK).Text(`[data-testid="desk-late"]`); got != "2 late cancellations" {
		t.Errorf("the desk says %q", got)
	}
	doc = admin.Get("/staff/patients?email=" + url.QueryEscape(email)).Want(http.StatusOK).Doc()
	if got := text(doc.Find(`[data-testid="patients-counts"]`)); got != "No-shows: 0 · Late cancellations: 2" {
		t.Errorf("the patients page counts %q", got)
	}
	if n := doc.Find(`[data-testid="patients-bookings"] [data-testid="late-cancel"]`).Length(); n != 2 {
		t.Errorf("the patients page marks %d bookings late, want 2", n)
	}
}

// Staff are not bound by the deadline: the desk moves a booking inside it.
func TestStaffMoveInsideTheDeadline(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deadlineClinic(t, hours(insideHours), 0)
	client := clientID()
	b := a.book(t, c.Types[0].ID, a.hold(t, c.Types[0].ID, c.Monday(10, 0), client), client)
	admin := a.signIn(t, c.Admin)
	r := admin.Get("/staff/bookings/" + b.Appointment.ID.String() + "/move").Want(http.StatusOK)
	buttons := moveButtons(t, r.Doc())
	if len(buttons) == 0 {
		t.Fatal("the move dialog offers no time")
	}
	f := r.Form(`[data-testid="move-form"]`).Values
	for k, v := range buttons[0].Vals {
		f.Set(k, v)
	}
	admin.HXPost(buttons[0].URL, withCSRF(admin, f)).Want(http.StatusOK)
	if got := a.booking(t, b.Appointment.ID); got.Status != "rescheduled" {
		t.Errorf("the booking is %s after the staff move", got.Status)
	}
}

// The settings page sets the clinic's default; the type form a type's
// own (empty: the default), and a form without the field keeps it.
func TestChangeDeadlineForms(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	read := func(sql string, args ...any) (v pgtype.Int4) {
		t.Helper()
		if err := a.Pool.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	f := admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm)
	if got := f.Values.Get("changeDeadlineHours"); got != "0" {
		t.Errorf("the settings form shows the deadline %q", got)
	}
	v := cloneValues(f.Values)
	v.Set("changeDeadlineHours", "721")
	if r := admin.Post("/staff/settings", v).Want(http.StatusBadRequest); !strings.Contains(r.Body, "The change deadline must be from 0 to 720 hours.") {
		t.Errorf("a deadline out of range: %s", clip(r.Body, 1500))
	}
	v.Set("changeDeadlineHours", "48")
	admin.Post("/staff/settings", v).WantRedirect("/staff/settings?saved=1")
	if got := read("SELECT default_change_deadline_hours FROM clinics WHERE id = $1", c.ID); got.Int32 != 48 {
		t.Errorf("the clinic's default is %v after the save", got)
	}
	v = cloneValues(admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values)
	v.Del("changeDeadlineHours")
	v.Set("name", "Renamed")
	admin.Post("/staff/settings", v).WantRedirect("/staff/settings?saved=1")
	if got := read("SELECT default_change_deadline_hours FROM clinics WHERE id = $1", c.ID); got.Int32 != 48 {
		t.Errorf("a form without the field changed the default to %v", got)
	}

	typeID := c.Types[0].ID
	path := "/staff/types/" + typeID.String()
	page := admin.Get(path).Want(http.StatusOK)
	if got := page.Form(`[data-testid="type-form"]`).Values.Get("changeDeadlineHours"); got != "" {
		t.Errorf("a type without its own deadline shows %q", got)
	}
	if hint := page.Text(`[data-testid="change-deadline-field"] .muted`); !strings.Contains(hint, "(48 h)") {
		t.Errorf("the hint reads %q", hint)
	}
	tv := cloneValues(page.Form(`[data-testid="type-form"]`).Values)
	tv.Set("changeDeadlineHours", "6")
	admin.Post(path, tv).WantRedirect(path)
	if got := read("SELECT change_deadline_hours FROM appointment_types WHERE id = $1", typeID); !got.Valid || got.Int32 != 6 {
		t.Errorf("the type's deadline is %v after the save", got)
	}
	tv = cloneValues(admin.Get(path).Want(http.StatusOK).Form(`[data-testid="type-form"]`).Values)
	tv.Del("changeDeadlineHours")
	admin.Post(path, tv).WantRedirect(path)
	if got := read("SELECT change_deadline_hours FROM appointment_types WHERE id = $1", typeID); !got.Valid || got.Int32 != 6 {
		t.Errorf("a form without the field changed the type's deadline to %v", got)
	}
	tv = cloneValues(admin.Get(path).Want(http.StatusOK).Form(`[data-testid="type-form"]`).Values)
	tv.Set("changeDeadlineHours", "")
	admin.Post(path, tv).WantRedirect(path)
	if got := read("SELECT change_deadline_hours FROM appointment_types WHERE id = $1", typeID); got.Valid {
		t.Errorf("an empty deadline stored %v, want the clinic's default (NULL)", got)
	}
}
