package web_test

// The staff side of rooms in headless Chromium (see browser_test.go): the
// day grid's toggle to a column per room, by keyboard, with a booking in
// its room's column and one made meanwhile appearing there live; a
// room's booking opened from the grid by keyboard, its move dialog naming
// the room; the rooms page listing the bookings a need left without a
// room; a room's closure listing the bookings holding it; a room saved
// from a page someone else saved since. axe finds nothing serious or
// critical on any of them, in English and in German.

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/practice"
)

func TestStaffRoomsGridBrowser(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	d := a.roomDay(t)
	c := d.c
	s := startBrowser(t, "roomsgrid", 1280, 1000)
	defer s.Report()
	s.RecordLive()
	signInBrowser(s, a, c.Admin)
	openGrid(t, s, a, c, "/staff/day?date="+d.date)
	if !evalJS[bool](s, `!!document.querySelector('[data-booking="`+d.roomless.ID.String()+`"] [data-testid="no-room"]')`) {
		t.Errorf("the specialists' grid does not mark the booking without a room\n%s", s.snapshot())
	}

	// The toggle, by keyboard.
	s.Do(stafferWait, "to the rooms by keyboard",
		chromedp.Focus(chromedp.CSS(`[data-testid="grid-by-rooms"]`)),
		chromedp.KeyEvent(kb.Enter))
	if !s.Until(stafferWait, `location.search.includes("by=rooms") && !!document.querySelector("#col-room-`+d.sono1.ID.String()+`")`) {
		t.Fatalf("Enter on the toggle did not show the rooms\n%s", s.snapshot())
	}
	openGrid(t, s, a, c, "/staff/day?date="+d.date+"&by=rooms")
	if !evalJS[bool](s, blockAt(d.inRoom.ID, "10:00", "Sono 1")) {
		t.Errorf("the booking in Sono 1 is not on its row in Sono 1's column\n%s", s.snapshot())
	}
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the rooms' day: %s", strings.Join(v, "; "))
	}
	// Live: a booking of the room made meanwhile appears in its column.
	evalJS[bool](s, `(window.__noReload = true)`)
	at, _ := time.ParseInLocation("2006-01-02 15:04", d.date+" 14:00", c.Loc)
	late := a.bookAs(t, c, c.Types[1], c.Specialists[0].ID, at, booking.Patient{Name: "Late Patient", Email: uniqueEmail("late")}).Booking
	if !s.Until(stafferWait, blockAt(late.ID, "14:00", "Sono 1")) {
		t.Errorf("the new booking of Sono 1 never appeared in its column\n%s", s.snapshot())
	}
	if !evalJS[bool](s, `window.__noReload === true`) {
		t.Error("the page was reloaded")
	}

	// The booking opened by keyboard, and its move dialog.
	s.Do(stafferWait, "open the booking by keyboard",
		chromedp.Focus(chromedp.CSS(`#col-room-`+d.sono1.ID.String()+` [data-booking="`+d.inRoom.ID.String()+`"]`)),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#desk-dialog [data-testid="move"]`)),
		chromedp.Click(chromedp.CSS(`#desk-dialog [data-testid="move"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="move-room"]`)))
	if got := evalJS[string](s, `document.querySelector('[data-testid="move-room"]').innerText`); !strings.Contains(got, "Sono 1") {
		t.Errorf("the move dialog says %q", got)
	}
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the move dialog: %s", strings.Join(v, "; "))
	}

	// The rooms page after a need that leaves a booking without a room.
	typ := c.Types[1].ID.String()
	s.Do(stafferWait, "save the need again",
		chromedp.Navigate(a.URL+"/staff/rooms"),
		chromedp.WaitVisible(chromedp.CSS(`#need-`+typ)),
		chromedp.SetValue(chromedp.CSS(`#need-`+typ), "room:"+d.sono1.ID.String()),
		chromedp.Click(chromedp.CSS(`#need-`+typ+` ~ button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="roomless"]`)))
	if !evalJS[bool](s, `!!document.querySelector('[data-testid="roomless-booking"][data-booking="`+d.roomless.ID.String()+`"] a')`) {
		t.Errorf("the rooms page does not list the booking without a room\n%s", s.snapshot())
	}
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the rooms page with bookings without a room: %s", strings.Join(v, "; "))
	}

	roomPageBrowser(t, s, a, d)
}

// roomPageBrowser: Sono 1 closed on the day lists the booking holding it;
// a save from the page after someone else saved the room is refused
// saying so; then the rooms' day again, in each language.
func roomPageBrowser(t *testing.T, s *browserTab, a *app, d roomDay) {
	t.Helper()
	c := d.c
	u := c.Admin.User(c.ID)
	day, _ := time.Parse(time.DateOnly, d.date)
	if err := a.Deps.Practice.AddRoomClosure(t.Context(), u, d.sono1.ID, practice.RoomClosure{First: day, Last: day, Note: "Repair"}); err != nil {
		t.Fatal(err)
	}
	page := "/staff/rooms/" + d.sono1.ID.String()
	for _, lang := range []string{"en", "de"} {
		s.Do(stafferWait, "the room in "+lang,
			chromedp.Navigate(a.URL+page+"?lang="+lang),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="room-closure-bookings"]`)))
		if got := evalJS[string](s, `document.querySelector('[data-testid="room-closure-bookings"]').innerText`); !strings.Contains(got, "Late Patient") {
			t.Errorf("%s: the closure lists %q", lang, got)
		}
		if v := axeSerious(t, s); len(v) > 0 {
			t.Errorf("%s: axe on the room with a closure over bookings: %s", lang, strings.Join(v, "; "))
		}
		room, err := a.Deps.Practice.Room(t.Context(), u, d.sono1.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Deps.Practice.UpdateRoom(t.Context(), u, room.ID, practice.RoomInput{Name: room.Name, Kind: room.Kind, AlwaysOpen: room.AlwaysOpen, Active: true, Version: room.Version}); err != nil {
			t.Fatal(err)
		}
		s.Do(stafferWait, "save the stale page in "+lang,
			chromedp.Click(chromedp.CSS(`[data-testid="room-form"] button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="room-stale"]`)))
		if v := axeSerious(t, s); len(v) > 0 {
			t.Errorf("%s: axe on the room saved from a stale page: %s", lang, strings.Join(v, "; "))
		}
		openGrid(t, s, a, c, "/staff/day?date="+d.date+"&by=rooms")
		if v := axeSerious(t, s); len(v) > 0 {
			t.Errorf("%s: axe on the rooms' day: %s", lang, strings.Join(v, "; "))
		}
	}
	if got := evalJS[string](s, `document.querySelector('[data-testid="grid-by-rooms"]').innerText`); got != "Räume" {
		t.Errorf("the German toggle reads %q", got)
	}
}
