package desk

import (
	"bytes"
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// The record of who looked, for the front desk's pages: each page that
// shows patients' names or contacts records the bookings and waitlist
// places it shows before it answers, so a page whose record fails is not
// shown.

// record writes the record of a page showing bookings and waitlist places
// to the signed-in account.
func (s *FrontDesk) record(c echo.Context, page string, bookings, waitlist []uuid.UUID) error {
	u := httpx.StaffUser(c)
	return s.deps.Access.Record(c.Request().Context(), privacy.Access{
		ClinicID: u.ClinicID, StaffID: u.ID, Page: page, Bookings: bookings, Waitlist: waitlist,
	})
}

// recordTimeout bounds a live stream's record: the stream's own request
// is over once it is hijacked.
const recordTimeout = 5 * time.Second

// streamRecord records what one live stream shows its viewer: the
// bookings on its first state, then each booking a change shows it for the
// first time. A live view is shared by everyone watching it and changes
// with every hold and booking of the clinic, so a record per event would
// repeat the same bookings many times a minute; a booking appearing on an
// open grid is still a view of it, so it is recorded once per stream.
type streamRecord struct {
	log    *slog.Logger
	rec    *privacy.Recorder
	access privacy.Access
	seen   map[uuid.UUID]bool
}

func (s *FrontDesk) streamRecord(c echo.Context, page string) *streamRecord {
	u := httpx.StaffUser(c)
	return &streamRecord{
		log:    httpx.LoggerFrom(c),
		rec:    s.deps.Access,
		access: privacy.Access{ClinicID: u.ClinicID, StaffID: u.ID, Page: page},
		seen:   map[uuid.UUID]bool{},
	}
}

// shown is the stream's Viewer.Shown: it records the bookings of events
// that show any not yet recorded. An error withholds the events (the
// stream ends and the page reconnects).
func (r *streamRecord) shown(events [][]byte) error {
	var fresh []uuid.UUID
	for _, e := range events {
		for _, id := range bookingIDsIn(e) {
			if !r.seen[id] {
				r.seen[id] = true
				fresh = append(fresh, id)
			}
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	a := r.access
	a.Bookings = fresh
	if err := r.rec.Record(ctx, a); err != nil {
		for _, id := range fresh {
			delete(r.seen, id)
		}
		r.log.Error("record a live view", "page", r.access.Page, "err", err)
		return err
	}
	return nil
}

// bookingPath is how the desk's fragments link a booking: its page, its
// dialog and its forms are all under it.
var bookingPath = []byte("/staff/bookings/")

// bookingIDsIn are the bookings an HTML fragment links to.
func bookingIDsIn(b []byte) []uuid.UUID {
	var out []uuid.UUID
	for {
		i := bytes.Index(b, bookingPath)
		if i < 0 {
			return out
		}
		b = b[i+len(bookingPath):]
		if len(b) < 36 {
			return out
		}
		if id, err := uuid.ParseBytes(b[:36]); err == nil {
			out = append(out, id)
			b = b[36:]
		}
	}
}

// gridBookings are the bookings a day grid or week view shows.
func gridBookings(body views.GridBodyVM) []uuid.UUID {
	var out []uuid.UUID
	for _, col := range body.Columns {
		for _, it := range col.Items {
			if it.Kind == "booking" {
				if id, err := uuid.Parse(it.BookingID); err == nil {
					out = append(out, id)
				}
			}
		}
	}
	return out
}

// calendarBookings are the bookings a calendar's days show.
func calendarBookings(days []views.CalendarDayVM) []uuid.UUID {
	var out []uuid.UUID
	for _, d := range days {
		for _, e := range d.Entries {
			if e.Kind == "booking" {
				if id, err := uuid.Parse(e.ID); err == nil {
					out = append(out, id)
				}
			}
		}
	}
	return out
}

// gridPage is the record's name of a grid view.
func gridPage(week bool) string {
	if week {
		return privacy.PageWeekView
	}
	return privacy.PageDayGrid
}
