package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/practice"
)

// Moving a booking that holds a room, in the viewer's language: the move
// dialog names the room it holds; a move onto a time whose only room is
// taken is refused saying so (not as a taken time); a move onto a free
// time says which room the booking has there.
func TestStaffMoveSaysTheRoom(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	words := map[string][3]string{
		"en": {"The booking holds the room Sono 1", "No room this appointment needs is free at that time", "Room: Sono 1."},
		"de": {"Der Termin belegt den Raum Sono 1", "kein Raum frei, den dieser Termin braucht", "Raum: Sono 1."},
	}
	for _, lang := range []string{"en", "de"} {
		t.Run(lang, func(t *testing.T) {
			c, _ := a.roomClinic(t)
			ultra := c.Types[1]
			if _, err := a.Deps.Practice.SetTypeNeed(t.Context(), c.Admin.User(c.ID), ultra.ID, practice.Need{Kind: "ultrasound"}); err != nil {
				t.Fatal(err)
			}
			at := c.Next(time.Thursday, 10, 0)
			a.bookAs(t, c, ultra, c.Specialists[0].ID, at, booking.Patient{Name: "Room Patient", Email: uniqueEmail("room")})
			mover := a.bookAs(t, c, ultra, c.Specialists[1].ID, at.Add(2*time.Hour), booking.Patient{Name: "Mover", Email: uniqueEmail("mover")}).Booking
			admin := a.signIn(t, c.Admin)
			switchTo(t, admin, "/staff", lang)
			w := words[lang]

			d := admin.Get("/staff/bookings/" + mover.ID.String() + "/move").Want(http.StatusOK)
			if got := d.Text(`[data-testid="move-room"]`); !strings.Contains(got, w[0]) {
				t.Errorf("the move dialog says %q, want %q", got, w[0])
			}
			move := func(to time.Time) *response {
				return admin.Post("/staff/bookings/"+mover.ID.String()+"/reschedule", url.Values{
					"start": {to.In(c.Loc).Format("2006-01-02T15:04")}, "version": {strconv.Itoa(int(mover.Version))}, "reason": {"earlier"},
				})
			}
			if r := move(at); r.Status != http.StatusConflict || !strings.Contains(r.Body, w[1]) {
				t.Errorf("a move onto the room's taken time: %d, want 409 saying %q\n%s", r.Status, w[1], clip(r.Body, 500))
			}
			r := move(at.Add(time.Hour))
			if r.Status != http.StatusOK || !strings.Contains(r.Body, w[2]) {
				t.Errorf("a move onto a free time: %d, want 200 saying %q\n%s", r.Status, w[2], clip(r.Body, 500))
			}
			if moved, err := a.Deps.Bookings.Get(t.Context(), mover.ID, c.ID); err != nil || moved.Status != booking.StatusRescheduled {
				t.Fatalf("the booking was not moved: %+v %v", moved, err)
			}
		})
	}
}
