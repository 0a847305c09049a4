package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/testkit"
)

// The desk with a type that needs the clinic's one room: the booking's
// dialog names the room; a phone booking of the room's time by the other
// specialist is refused, and so is a move onto it; what needs no room is
// booked at that time as before.
func TestStaffDeskWithARoom(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
		{Name: "Ultrasound", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
	}})
	ctx := t.Context()
	u := c.Admin.User(c.ID)
	if _, err := a.Deps.Practice.CreateRoom(ctx, u, practice.RoomInput{Name: "Sono 1", Kind: "ultrasound", AlwaysOpen: true, Active: true}); err != nil {
		t.Fatal(err)
	}
	// A kind no room of the clinic has would make the type unbookable.
	if _, err := a.Deps.Practice.SetTypeNeed(ctx, u, c.Types[1].ID, practice.Need{Kind: "ultrasonud"}); apperr.CodeOf(err) != apperr.CodeInvalidArgument {
		t.Errorf("a need of a kind no room has: %v, want INVALID_ARGUMENT", err)
	}
	if _, err := a.Deps.Practice.SetTypeNeed(ctx, u, c.Types[1].ID, practice.Need{Kind: "ultrasound"}); err != nil {
		t.Fatal(err)
	}
	at := c.Next(time.Thursday, 10, 0)
	bk := a.bookAs(t, c, c.Types[1], c.Specialists[0].ID, at, booking.Patient{Name: "Room Patient", Email: uniqueEmail("room")}).Booking
	admin := a.signIn(t, c.Admin)

	r := admin.Get("/staff/bookings/" + bk.ID.String() + "/dialog").Want(http.StatusOK)
	if got := strings.TrimSpace(r.Text(`[data-testid="room"]`)); got != "Sono 1" {
		t.Errorf("the dialog names room %q, want Sono 1", got)
	}

	phone := func(typ int, hhmm string) *response {
		return admin.Post("/staff/bookings", url.Values{
			"type": {c.Types[typ].ID.String()}, "specialist": {c.Specialists[1].ID.String()},
			"date": {at.Format(time.DateOnly)}, "time": {hhmm}, "name": {"Phone Patient"}, "email": {uniqueEmail("phone")},
		})
	}
	if r := phone(1, "10:00"); r.Status != http.StatusConflict {
		t.Errorf("phone booking of the room's time by the other specialist: %d %s", r.Status, clip(r.Body, 300))
	}

	other := a.bookAs(t, c, c.Types[1], c.Specialists[1].ID, at.Add(2*time.Hour), booking.Patient{Name: "Mover", Email: uniqueEmail("mover")}).Booking
	r = admin.Post("/staff/bookings/"+other.ID.String()+"/reschedule", url.Values{
		"start": {at.In(c.Loc).Format("2006-01-02T15:04")}, "version": {strconv.Itoa(int(other.Version))}, "reason": {"earlier"},
	})
	if r.Status != http.StatusConflict {
		t.Errorf("move onto the room's time: %d %s", r.Status, clip(r.Body, 300))
	}
	if got, err := a.Deps.Bookings.Get(ctx, other.ID, c.ID); err != nil || got.Status != booking.StatusConfirmed || !got.Start.Equal(other.Start) {
		t.Errorf("the refused move changed the booking: %+v %v", got, err)
	}

	if r := phone(0, "10:00"); r.Status != http.StatusCreated {
		t.Errorf("a consultation at the room's time: %d %s", r.Status, clip(r.Body, 300))
	}
}

// roomRoutes are the rooms pages' staff routes, for the route list of
// staff_routes_test.go (bk is an id no room has).
func roomRoutes(typ, bk string) []staffRoute {
	return []staffRoute{
		{"GET", "/rooms", "/staff/rooms", nil},
		{"POST", "/rooms", "/staff/rooms", url.Values{"name": {"Intruder room"}, "kind": {"intruder"}, "always": {"on"}, "active": {"on"}}},
		{"POST", "/rooms/needs", "/staff/rooms/needs", url.Values{"type": {typ}, "need": {""}}},
		{"GET", "/rooms/:id", "/staff/rooms/" + bk, nil},
		{"POST", "/rooms/:id", "/staff/rooms/" + bk, url.Values{"name": {"Intruder room"}, "kind": {"intruder"}}},
		{"POST", "/rooms/:id/hours", "/staff/rooms/" + bk + "/hours", url.Values{"hours.monday": {"01:00-02:00"}}},
		{"POST", "/rooms/:id/closures", "/staff/rooms/" + bk + "/closures", url.Values{"first": {"2031-03-03"}}},
		{"POST", "/rooms/:id/closures/:closure/delete", "/staff/rooms/" + bk + "/closures/999999999/delete", url.Values{}},
	}
}
