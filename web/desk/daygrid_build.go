package desk

import (
	"context"
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/views"
)

// The day grid's and the week view's columns: bookings and holds as
// blocks placed by their rows, free times as buttons, the rest greyed.

// gridColumn is what one column shows before it is laid out: its rows
// (a zero instant for a wall time the clock skips), when it is open, and
// its bookings, holds and free starts.
type gridColumn struct {
	id, heading, note, who string
	specialist             uuid.UUID
	// byRoom: a room's column, whose bookings name their specialists.
	byRoom    bool
	tr        *i18n.Localizer
	typeNames map[uuid.UUID]string
	day       availability.Date
	rows      desk.DayRows
	open      []desk.Span
	bookings  []desk.CalendarBooking
	holds     []holds.Hold
	free      map[int64]bool
}

// gridParts are a view's data, loaded once per computation.
type gridParts struct {
	data  desk.GridData
	holds []holds.Hold
	free  map[uuid.UUID]map[int64]bool // specialist -> free starts (Unix seconds)
	now   time.Time
	// typeNames are the types' names in the view's language.
	typeNames map[uuid.UUID]string
	// rooms and roomClosures are the active rooms and their closures, for
	// the day with a column per room.
	rooms        []desk.GridRoom
	roomClosures []desk.RoomClosure
}

func (g dayGridSource) load(ctx context.Context) (gridParts, error) {
	v := g.v
	p := gridParts{free: map[uuid.UUID]map[int64]bool{}, now: time.Now(), typeNames: map[uuid.UUID]string{}}
	var err error
	if p.data, err = g.srv.deps.StaffBookings.GridData(ctx, v.clinicID, v.loc, v.from, v.days()); err != nil {
		return gridParts{}, err
	}
	// Holds come and go in Redis: without it the grid shows none, as the
	// list calendar does.
	p.holds, _ = g.srv.deps.Holds.Active(ctx, v.clinicID)
	types, err := g.srv.deps.Clinics.AppointmentTypes(ctx, v.clinicID)
	if err != nil {
		return gridParts{}, err
	}
	if v.rooms {
		p.rooms, p.roomClosures, err = g.srv.deps.StaffBookings.GridRooms(ctx, v.clinicID, v.from, v.days(), desk.ClinicClosedOn(p.data.Closures))
		if err != nil {
			return gridParts{}, err
		}
	}
	for _, t := range types {
		p.typeNames[t.ID] = t.NameIn(v.tr.Lang())
		if v.rooms {
			continue // a room's column offers no times: they are a specialist's
		}
		res, err := g.srv.deps.Slots.Free(ctx, slots.Request{AppointmentTypeID: t.ID, From: v.from, To: v.from.AddDays(v.days() - 1)})
		if err != nil {
			return gridParts{}, err
		}
		for _, sl := range res.Slots {
			for _, sp := range sl.SpecialistIDs {
				if p.free[sp] == nil {
					p.free[sp] = map[int64]bool{}
				}
				p.free[sp][sl.Start.Unix()] = true
			}
		}
	}
	return p, nil
}

// body is the view's grid as the page and the stream show it.
func (g dayGridSource) body(ctx context.Context) (views.GridBodyVM, error) {
	p, err := g.load(ctx)
	if err != nil {
		return views.GridBodyVM{}, err
	}
	switch {
	case g.v.week:
		return g.weekBody(p), nil
	case g.v.rooms:
		return g.roomsBody(p), nil
	}
	return g.dayBody(p), nil
}

// chosen are the specialists of the view, in the clinic's order.
func chosen(sps []desk.GridSpecialist, only []uuid.UUID) []desk.GridSpecialist {
	if len(only) == 0 {
		return sps
	}
	var out []desk.GridSpecialist
	for _, sp := range sps {
		for _, id := range only {
			if sp.ID == id {
				out = append(out, sp)
				break
			}
		}
	}
	return out
}

func (g dayGridSource) dayBody(p gridParts) views.GridBodyVM {
	v, tr := g.v, g.v.tr
	noon := time.Date(v.from.Year, v.from.Month, v.from.Day, 12, 0, 0, 0, v.loc)
	body := views.GridBodyVM{Caption: tr.T("desk.grid.day_caption", map[string]any{"Day": longDate(tr, noon)})}
	sps := chosen(p.data.Specialists, v.only)
	body.Closures = gridClosures(p.data.Closures, sps)
	if len(sps) == 0 {
		body.Empty = tr.T("desk.grid.no_specialists", nil)
		return body
	}
	cols := make([]gridColumn, len(sps))
	for i, sp := range sps {
		cols[i] = newGridColumn(p, sp, 0, v)
		cols[i].id, cols[i].heading, cols[i].who = "col-"+sp.ID.String(), sp.Name, sp.Name
	}
	return dayColumns(body, cols, p, v)
}

// dayColumns lays a day's columns (specialists' or rooms') out in the
// rows their open and busy times need.
func dayColumns(body views.GridBodyVM, cols []gridColumn, p gridParts, v gridView) views.GridBodyVM {
	var open, busy []desk.Span
	for _, col := range cols {
		open = append(open, col.open...)
		busy = append(busy, col.busy()...)
	}
	rows := desk.RowsOf(p.data.Step, open, busy)
	if len(rows.Start) == 0 {
		body.Empty = v.tr.T("desk.grid.nobody_works", nil)
		return body
	}
	for i := range rows.Start {
		body.Rows = append(body.Rows, views.GridRowVM{Row: i + 2, Label: rows.Label(i, v.loc)})
	}
	for i := range cols {
		cols[i].rows = rows
		body.Columns = append(body.Columns, cols[i].layout(i+2, v.loc, p.now, false))
	}
	return body
}

// weekBody is a specialist's week, in the rows desk.WeekRowsOf gives.
func (g dayGridSource) weekBody(p gridParts) views.GridBodyVM {
	v, tr := g.v, g.v.tr
	sps := chosen(p.data.Specialists, v.only)
	body := views.GridBodyVM{Caption: tr.T("desk.grid.week_title", nil)}
	if len(sps) == 0 {
		body.Empty = tr.T("desk.grid.no_specialists", nil)
		return body
	}
	sp := sps[0]
	body.Closures = gridClosures(p.data.Closures, sps[:1])
	first := time.Date(v.from.Year, v.from.Month, v.from.Day, 12, 0, 0, 0, v.loc)
	body.Caption = tr.T("desk.grid.week_caption", map[string]any{"Specialist": sp.Name, "Day": tr.DayMonthYear(first)})
	cols := make([]gridColumn, 7)
	busy := make([][]desk.Span, len(cols))
	for i := range cols {
		day := v.from.AddDays(i)
		cols[i] = newGridColumn(p, sp, i, v)
		cols[i].id = "col-" + day.String()
		cols[i].heading = tr.Day(time.Date(day.Year, day.Month, day.Day, 12, 0, 0, 0, v.loc))
		cols[i].who = sp.Name
		busy[i] = cols[i].busy()
	}
	rows := desk.WeekRowsOf(v.loc, v.from, p.data.Step, sp.Days[:len(cols)], busy)
	if len(rows.Minutes) == 0 {
		body.Empty = tr.T("desk.grid.not_working", map[string]any{"Specialist": sp.Name})
		return body
	}
	for i := range rows.Minutes {
		body.Rows = append(body.Rows, views.GridRowVM{Row: i + 2, Label: rows.Label(i)})
	}
	for i := range cols {
		cols[i].rows = rows.Days[i]
		body.Columns = append(body.Columns, cols[i].layout(i+2, v.loc, p.now, true))
	}
	return body
}

// newGridColumn is sp's column of the view's day index i, with their
// bookings, holds and free starts of that day.
func newGridColumn(p gridParts, sp desk.GridSpecialist, i int, v gridView) gridColumn {
	day := v.from.AddDays(i)
	h := sp.Days[i]
	c := gridColumn{specialist: sp.ID, day: day, open: desk.OpenSpans(v.loc, day, h.Ranges), free: map[int64]bool{}, tr: v.tr, typeNames: p.typeNames}
	switch {
	case h.Closed:
		c.note = v.tr.T("desk.grid.closed", nil)
	case h.Override:
		c.note = v.tr.T("desk.grid.changed_hours", nil)
	}
	if h.Note != "" {
		c.note += ": " + h.Note
	}
	for _, b := range p.data.Bookings {
		if b.SpecialistID == sp.ID && availability.DateOf(b.Start, v.loc) == day {
			c.bookings = append(c.bookings, b)
		}
	}
	for _, hd := range p.holds {
		if hd.SpecialistID == sp.ID && availability.DateOf(hd.Start, v.loc) == day {
			c.holds = append(c.holds, hd)
		}
	}
	for t := range p.free[sp.ID] {
		if availability.DateOf(time.Unix(t, 0), v.loc) == day {
			c.free[t] = true
		}
	}
	return c
}

func (c gridColumn) busy() []desk.Span {
	out := make([]desk.Span, 0, len(c.bookings)+len(c.holds))
	for _, b := range c.bookings {
		out = append(out, desk.Span{Start: b.Start, End: b.End})
	}
	for _, h := range c.holds {
		out = append(out, desk.Span{Start: h.Start, End: h.End})
	}
	return out
}

func fmtRange(a, b time.Time, loc *time.Location) (string, string) {
	return a.In(loc).Format("15:04"), b.In(loc).Format("15:04")
}

func heldLeft(tr *i18n.Localizer, h holds.Hold, now time.Time) string {
	left := int(math.Ceil(h.ExpiresAt.Sub(now).Minutes()))
	return tr.T("desk.grid.held_left", map[string]any{"N": max(left, 1)})
}

// layout is the column as the page shows it, at grid column col: blocks
// first, then each other row free (a button), open but not bookable, or
// closed, runs of the last two merged.
func (c gridColumn) layout(col int, loc *time.Location, now time.Time, week bool) views.GridColumnVM {
	vm := views.GridColumnVM{ID: c.id, Col: col, Heading: c.heading, Note: c.note}
	covered := make([]bool, len(c.rows.Start))
	cover := func(row, n int) {
		for i := row; i < row+n && i < len(covered); i++ {
			covered[i] = true
		}
	}
	for _, b := range c.bookings {
		row, n, ok := c.rows.Place(desk.Span{Start: b.Start, End: b.End})
		if !ok {
			continue
		}
		cover(row, n)
		from, to := fmtRange(b.Start, b.End, loc)
		att, status, typ := "", statusWord(c.tr, booking.StatusConfirmed), typeName(c.typeNames, b.AppointmentTypeID, b.TypeName)
		// A session's badge stands beside the time, which is all a short
		// block shows: its name says the badge there too, then in words.
		mark, until := seriesMark(b.Series), to
		if mark != "" {
			until += " " + mark + " (" + c.tr.T("series.mark", map[string]any{"N": b.Series.N, "Total": b.Series.Total}) + ")"
		}
		// "No room" and a room column's specialist stand after the patient,
		// as the block shows them.
		who, shown := b.PatientName, ""
		noRoom := b.NeedsRoom && b.RoomID == uuid.Nil
		if noRoom {
			who += ", " + c.tr.T("rooms.grid.no_room", nil)
		}
		if c.byRoom {
			shown = b.SpecialistName
			who += ", " + shown
		}
		label := c.tr.T("desk.grid.booking_label", map[string]any{"From": from, "To": until, "Patient": who, "Type": typ, "Status": status})
		if b.Attendance != desk.NotMarked {
			att = markWord(c.tr, b.Attendance)
			label += ", " + att
		}
		if !c.byRoom {
			label = c.tr.T("desk.grid.with", map[string]any{"What": label, "Specialist": c.who})
		}
		vm.Items = append(vm.Items, views.GridItemVM{
			Kind: "booking", Row: row + 2, Span: n, Col: col, Label: label,
			Time: from, End: to, BookingID: b.ID.String(), Patient: b.PatientName, TypeName: typ,
			Status: status, Attendance: att, Series: mark, NoRoom: noRoom, Specialist: shown,
		})
	}
	for _, h := range c.holds {
		row, n, ok := c.rows.Place(desk.Span{Start: h.Start, End: h.End})
		if !ok {
			continue
		}
		cover(row, n)
		from, to := fmtRange(h.Start, h.End, loc)
		left := heldLeft(c.tr, h, now)
		vm.Items = append(vm.Items, views.GridItemVM{
			Kind: "held", Row: row + 2, Span: n, Col: col, Time: from, End: to, Note: left,
			Label: left + ", " + from + "–" + to + ", " + c.who,
		})
	}
	noteShown := false
	for i, t := range c.rows.Start {
		if covered[i] {
			continue
		}
		kind := c.kindAt(t)
		if kind == "free" {
			when := c.tr.Time(t.In(loc))
			if week {
				when = c.tr.LongDay(t.In(loc)) + " " + when
			}
			vm.Items = append(vm.Items, views.GridItemVM{
				Kind: "free", Row: i + 2, Span: 1, Col: col, Label: c.tr.T("desk.grid.book_label", map[string]any{"When": when, "Specialist": c.who}),
				SpecialistID: c.specialist.String(), StartUTC: t.UTC().Format(time.RFC3339),
			})
			continue
		}
		if n := len(vm.Items); n > 0 && vm.Items[n-1].Kind == kind && vm.Items[n-1].Row+vm.Items[n-1].Span == i+2 {
			vm.Items[n-1].Span++
			continue
		}
		it := views.GridItemVM{Kind: kind, Row: i + 2, Span: 1, Col: col}
		if kind == "closed" && !noteShown && c.note != "" {
			it.Note, noteShown = c.note, true
		}
		vm.Items = append(vm.Items, it)
	}
	return vm
}

// kindAt is what the column shows at a row starting at t that no block
// covers.
func (c gridColumn) kindAt(t time.Time) string {
	if t.IsZero() {
		return "closed"
	}
	if c.free[t.Unix()] {
		return "free"
	}
	for _, s := range c.open {
		if s.Contains(t) {
			return "open"
		}
	}
	return "closed"
}
