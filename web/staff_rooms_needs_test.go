package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/testkit"
)

// roomOf is the room a booking holds (uuid.Nil: none).
func (a *app) roomOf(t *testing.T, id uuid.UUID) uuid.UUID {
	t.Helper()
	var room uuid.NullUUID
	if err := a.Pool.QueryRow(context.Background(), `SELECT resource_id FROM bookings WHERE id = $1`, id).Scan(&room); err != nil {
		t.Fatal(err)
	}
	return room.UUID
}

// roomClinic is a clinic of two specialists with a consultation and an
// ultrasound (needing nothing yet) and one ultrasound room.
func (a *app) roomClinic(t *testing.T) (clinic, practice.Room) {
	t.Helper()
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
		{Name: "Ultrasound", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
	}})
	room, err := a.Deps.Practice.CreateRoom(t.Context(), c.Admin.User(c.ID), practice.RoomInput{Name: "Sono 1", Kind: "ultrasound", AlwaysOpen: true, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	return c, room
}

// A type that starts needing a room: its bookings to come are given the
// free room in the same step, and the page lists, in the viewer's
// language, those that could not get it (two bookings at one time, one
// room), by date, time and specialist, each with a link; when the need
// is removed, the rooms of its bookings to come are released.
func TestStaffRoomNeedGivesBookingsARoom(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	for _, lang := range []string{"en", "de"} {
		t.Run(lang, func(t *testing.T) {
			c, room := a.roomClinic(t)
			ultra := c.Types[1]
			at := c.Next(time.Thursday, 10, 0)
			first := a.bookAs(t, c, ultra, c.Specialists[0].ID, at, booking.Patient{Name: "First Patient", Email: uniqueEmail("first")}).Booking
			second := a.bookAs(t, c, ultra, c.Specialists[1].ID, at, booking.Patient{Name: "Second Patient", Email: uniqueEmail("second")}).Booking
			later := a.bookAs(t, c, ultra, c.Specialists[0].ID, at.Add(time.Hour), booking.Patient{Name: "Later Patient", Email: uniqueEmail("later")}).Booking
			if a.roomOf(t, first.ID) != uuid.Nil {
				t.Fatal("a booking of a type that needs nothing holds a room")
			}

			admin := a.signIn(t, c.Admin)
			switchTo(t, admin, "/staff/rooms", lang)
			r := admin.Post("/staff/rooms/needs", url.Values{"type": {ultra.ID.String()}, "need": {"kind:ultrasound"}}).Want(http.StatusOK)
			held := map[uuid.UUID]bool{}
			for _, b := range []booking.Booking{first, second, later} {
				held[b.ID] = a.roomOf(t, b.ID) == room.ID
			}
			if !held[later.ID] || held[first.ID] == held[second.ID] {
				t.Fatalf("rooms after the need: %v, want the later booking and one of the two at 10:00 in the room", held)
			}
			roomless := first
			if held[first.ID] {
				roomless = second
			}
			rows := r.Doc().Find(`[data-testid="roomless-booking"]`)
			if rows.Length() != 1 || rows.AttrOr("data-booking", "") != roomless.ID.String() {
				t.Fatalf("the page lists %d bookings without a room (%q), want %s\n%s", rows.Length(), rows.AttrOr("data-booking", ""), roomless.ID, clip(r.Body, 2000))
			}
			row := rows.Text()
			sp := c.Specialists[0].Name
			if roomless.SpecialistID == c.Specialists[1].ID {
				sp = c.Specialists[1].Name
			}
			if !strings.Contains(row, "10:00") || !strings.Contains(row, sp) || strings.Contains(row, roomless.Patient.Name) {
				t.Errorf("the row reads %q, want the time and %s, no patient", row, sp)
			}
			if href := rows.Find("a").AttrOr("href", ""); href != "/staff/bookings/"+roomless.ID.String() {
				t.Errorf("the row links to %q", href)
			}
			want := map[string]string{"en": "without a room: 1", "de": "ohne Raum: 1"}[lang]
			if got := r.Text(`[data-testid="roomless"]`); !strings.Contains(got, want) {
				t.Errorf("the list says %q, want %q", got, want)
			}

			// Without the need, the rooms of the bookings to come are free again.
			admin.Post("/staff/rooms/needs", url.Values{"type": {ultra.ID.String()}, "need": {""}}).Want(http.StatusSeeOther)
			for _, b := range []booking.Booking{first, second, later} {
				if a.roomOf(t, b.ID) != uuid.Nil {
					t.Errorf("booking %s still holds the room after the need was removed", b.ID)
				}
			}
			// Again, with no booking left out: a redirect with the notice.
			if _, err := a.Pool.Exec(t.Context(), `UPDATE bookings SET status = 'cancelled' WHERE id = $1`, second.ID); err != nil {
				t.Fatal(err)
			}
			admin.Post("/staff/rooms/needs", url.Values{"type": {ultra.ID.String()}, "need": {"room:" + room.ID.String()}}).Want(http.StatusSeeOther)
			if a.roomOf(t, first.ID) != room.ID || a.roomOf(t, later.ID) != room.ID {
				t.Error("the bookings did not get the named room")
			}
		})
	}
}

// A room's closure lists, in the viewer's language, the bookings holding
// the room on its dates with their patients, each with a link, to move.
func TestStaffRoomClosureListsItsBookings(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	for _, lang := range []string{"en", "de"} {
		t.Run(lang, func(t *testing.T) {
			c, room := a.roomClinic(t)
			ultra := c.Types[1]
			if _, err := a.Deps.Practice.SetTypeNeed(t.Context(), c.Admin.User(c.ID), ultra.ID, practice.Need{Kind: "ultrasound"}); err != nil {
				t.Fatal(err)
			}
			at := c.Next(time.Thursday, 10, 0)
			held := a.bookAs(t, c, ultra, c.Specialists[0].ID, at, booking.Patient{Name: "Held Patient", Email: uniqueEmail("held")}).Booking
			a.bookAs(t, c, ultra, c.Specialists[0].ID, at.AddDate(0, 0, 1), booking.Patient{Name: "Friday Patient", Email: uniqueEmail("friday")})
			a.bookAs(t, c, c.Types[0], c.Specialists[1].ID, at, booking.Patient{Name: "Consult Patient", Email: uniqueEmail("consult")})

			admin := a.signIn(t, c.Admin)
			page := "/staff/rooms/" + room.ID.String()
			switchTo(t, admin, page, lang)
			day := at.In(c.Loc).Format(time.DateOnly)
			admin.Post(page+"/closures", url.Values{"first": {day}, "last": {day}, "note": {"Repair"}}).Want(http.StatusSeeOther)
			r := admin.Get(page).Want(http.StatusOK)
			rows := r.Doc().Find(`[data-testid="room-closure-bookings"] [data-testid="affected-booking"]`)
			if rows.Length() != 1 || rows.AttrOr("data-booking", "") != held.ID.String() {
				t.Fatalf("the closure lists %d bookings (%q), want only %s", rows.Length(), rows.AttrOr("data-booking", ""), held.ID)
			}
			if got := rows.Text(); !strings.Contains(got, "Held Patient") || !strings.Contains(got, c.Specialists[0].Name) {
				t.Errorf("the row reads %q", got)
			}
			if href := rows.Find("a").AttrOr("href", ""); href != "/staff/bookings/"+held.ID.String() {
				t.Errorf("the row links to %q", href)
			}
			want := map[string]string{"en": "holding the room on these dates: 1", "de": "an diesen Tagen belegen: 1"}[lang]
			if got := r.Text(`[data-testid="room-closure-bookings-intro"]`); !strings.Contains(got, want) {
				t.Errorf("the closure says %q, want %q", got, want)
			}
		})
	}
}
