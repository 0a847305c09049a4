package desk

// The day grid with a column per room (?by=rooms): each room's bookings,
// whoever their specialists, its closed times greyed as a specialist's
// are, and a column of the bookings that need a room and hold none.

import (
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/views"
)

// roomlessColumn is the id of the column of bookings without a room.
const roomlessColumn = "col-room-none"

// roomsToggle gives the day's page its choice of columns when the clinic
// has rooms: specialists or rooms, each a link keeping the date.
func (s *FrontDesk) roomsToggle(c echo.Context, v gridView, vm *views.GridPageVM) error {
	rooms, err := s.deps.StaffBookings.RoomCount(c.Request().Context(), v.clinicID)
	if err != nil || rooms == 0 {
		return err
	}
	bySpecialist := v
	bySpecialist.rooms = false
	byRoom := v
	byRoom.rooms, byRoom.only = true, nil
	vm.ByRooms = v.rooms
	vm.SpecialistsURL, vm.RoomsURL = bySpecialist.path(v.from), byRoom.path(v.from)
	return nil
}

// roomsBody is the day with a column per active room.
func (g dayGridSource) roomsBody(p gridParts) views.GridBodyVM {
	v, tr := g.v, g.v.tr
	noon := time.Date(v.from.Year, v.from.Month, v.from.Day, 12, 0, 0, 0, v.loc)
	body := views.GridBodyVM{Caption: tr.T("rooms.grid.caption", map[string]any{"Day": longDate(tr, noon)})}
	body.Closures = gridClosures(p.data.Closures, nil)
	for _, rc := range p.roomClosures {
		body.Closures = append(body.Closures, views.GridClosureVM{First: rc.First, Last: rc.Last, Who: rc.RoomName, Note: rc.Note, Room: true})
	}
	if len(p.rooms) == 0 {
		body.Empty = tr.T("rooms.grid.no_rooms", nil)
		return body
	}
	// Open whenever the clinic is: whenever one of its specialists works.
	var clinicOpen []desk.Span
	for _, sp := range p.data.Specialists {
		clinicOpen = append(clinicOpen, desk.OpenSpans(v.loc, v.from, sp.Days[0].Ranges)...)
	}
	cols := make([]gridColumn, 0, len(p.rooms)+1)
	for _, r := range p.rooms {
		col := roomColumn(p, v, r.ID, r.Name)
		if r.Inactive && len(col.bookings) == 0 {
			continue
		}
		h := r.Days[0]
		switch {
		case h.Closed:
			col.note = tr.T("desk.grid.closed", nil)
			if h.Note != "" {
				col.note += ": " + h.Note
			}
		case r.AlwaysOpen:
			col.open = clinicOpen
		default:
			col.open = desk.OpenSpans(v.loc, v.from, h.Ranges)
		}
		cols = append(cols, col)
	}
	// The bookings of a type that needs a room and hold none (their type
	// gained the need after they were made): a column of their own.
	if none := roomColumn(p, v, uuid.Nil, tr.T("rooms.grid.no_room_column", nil)); len(none.bookings) > 0 {
		none.id = roomlessColumn
		cols = append(cols, none)
	}
	return dayColumns(body, cols, p, v)
}

// roomColumn is room's column of the view's day with the bookings holding
// it; room uuid.Nil gathers those that need a room and hold none.
func roomColumn(p gridParts, v gridView, room uuid.UUID, name string) gridColumn {
	c := gridColumn{id: "col-room-" + room.String(), heading: name, who: name, byRoom: true,
		day: v.from, free: map[int64]bool{}, tr: v.tr, typeNames: p.typeNames}
	for _, b := range p.data.Bookings {
		if availability.DateOf(b.Start, v.loc) != v.from {
			continue
		}
		if (room != uuid.Nil && b.RoomID == room) || (room == uuid.Nil && b.RoomID == uuid.Nil && b.NeedsRoom) {
			c.bookings = append(c.bookings, b)
		}
	}
	return c
}
