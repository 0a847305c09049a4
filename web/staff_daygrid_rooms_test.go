package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/practice"
)

// roomDay is a clinic whose Thursday has, at 10:00, two ultrasounds (one
// in Sono 1, the other left without a room when the type came to need
// Sono 1) and a consultation; Sono 2 opens only in the afternoon.
type roomDay struct {
	c                clinic
	sono1, sono2     practice.Room
	inRoom, roomless booking.Booking
	consult          booking.Booking
	date             string
}

func (a *app) roomDay(t *testing.T) roomDay {
	t.Helper()
	c, sono1 := a.roomClinic(t)
	u := c.Admin.User(c.ID)
	ultra := c.Types[1]
	at := c.Next(time.Thursday, 10, 0)
	d := roomDay{c: c, sono1: sono1, date: at.In(c.Loc).Format(time.DateOnly)}
	first := a.bookAs(t, c, ultra, c.Specialists[0].ID, at, booking.Patient{Name: "First Patient", Email: uniqueEmail("first")}).Booking
	second := a.bookAs(t, c, ultra, c.Specialists[1].ID, at, booking.Patient{Name: "Second Patient", Email: uniqueEmail("second")}).Booking
	left, err := a.Deps.Practice.SetTypeNeed(t.Context(), u, ultra.ID, practice.Need{RoomID: sono1.ID})
	if err != nil || len(left) != 1 {
		t.Fatalf("set the need: %v, %v; want one booking left without the room", left, err)
	}
	d.inRoom, d.roomless = first, second
	if left[0].ID == first.ID {
		d.inRoom, d.roomless = second, first
	}
	d.consult = a.bookAs(t, c, c.Types[0], c.Specialists[0].ID, at.Add(time.Hour), booking.Patient{Name: "Consult Patient", Email: uniqueEmail("consult")}).Booking
	if d.sono2, err = a.Deps.Practice.CreateRoom(t.Context(), u, practice.RoomInput{Name: "Sono 2", Kind: "ultrasound", Active: true}); err != nil {
		t.Fatal(err)
	}
	if err := a.Deps.Practice.SetRoomHours(t.Context(), u, d.sono2.ID, d.sono2.Version, []practice.Range{{Weekday: time.Thursday, StartMin: 13 * 60, EndMin: 17 * 60}}); err != nil {
		t.Fatal(err)
	}
	return d
}

// The day grid with a column per room, in both languages: a toggle
// between specialists and rooms kept in the address (and in the live
// stream's); each room's column holds the bookings holding it, naming
// their specialists; a room closed in the morning is greyed there; the
// booking of a room type without a room has a column of its own and is
// marked in the specialists' grid too; a consultation is in no room's
// column.
func TestStaffDayGridByRooms(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	words := map[string][4]string{
		"en": {"Rooms", "Specialists", "No room", "Without a room"},
		"de": {"Räume", "Behandler/innen", "Kein Raum", "Ohne Raum"},
	}
	for _, lang := range []string{"en", "de"} {
		t.Run(lang, func(t *testing.T) {
			d := a.roomDay(t)
			c := d.c
			w := words[lang]
			admin := a.signIn(t, c.Admin)
			day := "/staff/day?date=" + d.date
			switchTo(t, admin, day, lang)

			r := admin.Get(day).Want(http.StatusOK)
			toRooms, _ := r.Doc().Find(`[data-testid="grid-by-rooms"]`).Attr("href")
			if toRooms != day+"&by=rooms" || strings.TrimSpace(r.Text(`[data-testid="grid-by-rooms"]`)) != w[0] {
				t.Fatalf("the specialists' day links to the rooms' as %q %q", toRooms, r.Text(`[data-testid="grid-by-rooms"]`))
			}
			if cur, _ := r.Doc().Find(`[data-testid="grid-by-specialists"]`).Attr("aria-current"); cur != "page" {
				t.Errorf("the specialists' toggle is not marked current: %q", cur)
			}
			marked := r.Doc().Find(`[data-testid="grid-booking"][data-booking="` + d.roomless.ID.String() + `"] [data-testid="no-room"]`)
			if marked.Length() != 1 || strings.TrimSpace(marked.Text()) != w[2] {
				t.Errorf("the specialists' grid marks the roomless booking %d times (%q)", marked.Length(), marked.Text())
			}
			if n := r.Doc().Find(`[data-testid="no-room"]`).Length(); n != 1 {
				t.Errorf("%d bookings marked without a room, want 1", n)
			}

			r = admin.Get(toRooms).Want(http.StatusOK)
			doc := r.Doc()
			if cur, _ := doc.Find(`[data-testid="grid-by-rooms"]`).Attr("aria-current"); cur != "page" {
				t.Errorf("the rooms' toggle is not marked current: %q", cur)
			}
			if doc.Find(`[sse-connect="/staff/day/live?date=`+d.date+`&by=rooms"]`).Length() != 1 {
				t.Errorf("the live stream does not keep the rooms: %s", doc.Find(`[sse-connect]`).AttrOr("sse-connect", ""))
			}
			if v, _ := doc.Find(`[data-testid="grid-picks"] input[name="by"]`).Attr("value"); v != "rooms" {
				t.Errorf("the date form drops the rooms: %q", v)
			}
			col := func(id string) *goquery.Selection { return doc.Find(`#col-room-` + id) }
			one := col(d.sono1.ID.String())
			if got := one.Find(`[data-testid="grid-booking"]`); got.Length() != 1 || got.AttrOr("data-booking", "") != d.inRoom.ID.String() {
				t.Fatalf("Sono 1's column holds %d bookings, want %s\n%s", got.Length(), d.inRoom.ID, clip(r.Body, 3000))
			}
			if got := one.Find(`[data-testid="grid-specialist"]`).Text(); got != specialistName(c, d.inRoom) {
				t.Errorf("Sono 1's booking names the specialist %q, want %q", got, specialistName(c, d.inRoom))
			}
			if label := one.Find(`[data-testid="grid-booking"]`).AttrOr("aria-label", ""); !strings.Contains(label, specialistName(c, d.inRoom)) {
				t.Errorf("the booking's name %q does not say its specialist", label)
			}
			two := col(d.sono2.ID.String())
			if two.Length() != 1 || two.Find(`[data-testid="grid-closed"]`).Length() == 0 || two.Find(`[data-testid="grid-booking"]`).Length() != 0 {
				t.Errorf("Sono 2's column: %d, closed cells %d, bookings %d", two.Length(), two.Find(`[data-testid="grid-closed"]`).Length(), two.Find(`[data-testid="grid-booking"]`).Length())
			}
			none := doc.Find(`#col-room-none`)
			if strings.TrimSpace(none.Find(`.grid-head strong`).Text()) != w[3] || none.Find(`[data-booking="`+d.roomless.ID.String()+`"] [data-testid="no-room"]`).Length() != 1 {
				t.Errorf("the column without a room: %q\n%s", none.Text(), clip(r.Body, 3000))
			}
			if doc.Find(`[data-booking="`+d.consult.ID.String()+`"]`).Length() != 0 {
				t.Error("the consultation, which holds no room, is in a room's column")
			}
			if doc.Find(`button.free`).Length() != 0 {
				t.Error("a room's column offers times to book")
			}
			// Back to the specialists: the toggle's link.
			back, _ := doc.Find(`[data-testid="grid-by-specialists"]`).Attr("href")
			if back != day {
				t.Errorf("the rooms' day links back as %q", back)
			}
		})
	}
}

// specialistName is the name of b's specialist in c.
func specialistName(c clinic, b booking.Booking) string {
	for _, sp := range c.Specialists {
		if sp.ID == b.SpecialistID {
			return sp.Name
		}
	}
	return ""
}

// A room taken out of use keeps the bookings it holds: its column stays
// in the rooms' day while it holds some, and goes on a day it holds none.
func TestStaffDayGridByRoomsShowsAnInactiveRoomWhileItHoldsBookings(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	d := a.roomDay(t)
	if _, err := a.Pool.Exec(t.Context(), `UPDATE resources SET active = false WHERE id = $1`, d.sono1.ID); err != nil {
		t.Fatal(err)
	}
	admin := a.signIn(t, d.c.Admin)
	doc := admin.Get("/staff/day?date=" + d.date + "&by=rooms").Want(http.StatusOK).Doc()
	if got := doc.Find(`#col-room-` + d.sono1.ID.String() + ` [data-testid="grid-booking"]`); got.Length() != 1 || got.AttrOr("data-booking", "") != d.inRoom.ID.String() {
		t.Errorf("the inactive room's column shows %d bookings, want its one", got.Length())
	}
	next, _ := time.Parse(time.DateOnly, d.date)
	other := admin.Get("/staff/day?date=" + next.AddDate(0, 0, 7).Format(time.DateOnly) + "&by=rooms").Want(http.StatusOK).Doc()
	if other.Find(`#col-room-`+d.sono1.ID.String()).Length() != 0 {
		t.Error("the inactive room has a column on a day it holds nothing")
	}
}
