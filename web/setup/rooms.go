package setup

// The rooms pages: the clinic's rooms and devices, adding one, one room's
// details, weekly hours and closures, and what each appointment type
// needs.

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// roomsVM is the rooms page, with the errors of a refused form.
func (s *Admin) roomsVM(c echo.Context, errs map[string]string) (views.RoomsVM, error) {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	l := httpx.Tr(c)
	rooms, err := s.deps.Practice.Rooms(ctx, u)
	if err != nil {
		return views.RoomsVM{}, err
	}
	vm := views.RoomsVM{Nav: s.kit.Nav(c, "rooms"), Errors: errs}
	if vm.Errors == nil {
		vm.Errors = map[string]string{}
	}
	var kinds []string
	for _, r := range rooms {
		vm.Rooms = append(vm.Rooms, views.RoomRowVM{ID: r.ID.String(), Name: r.Name, Kind: r.Kind, AlwaysOpen: r.AlwaysOpen, Active: r.Active})
		if !slices.Contains(kinds, r.Kind) {
			kinds = append(kinds, r.Kind)
		}
	}
	if u.May(staff.ActTypes) != nil || len(rooms) == 0 {
		return vm, nil
	}
	types, err := s.deps.Practice.Types(ctx, u)
	if err != nil {
		return views.RoomsVM{}, err
	}
	needs, err := s.deps.Practice.TypeNeeds(ctx, u)
	if err != nil {
		return views.RoomsVM{}, err
	}
	for _, t := range types {
		n := needs[t.ID]
		opts := []views.OptionVM{{Value: "", Label: l.T("rooms.need_none", nil), Selected: n.None()}}
		for _, k := range kinds {
			opts = append(opts, views.OptionVM{Value: "kind:" + k, Label: l.T("rooms.need_kind", map[string]any{"Kind": k}), Selected: n.Kind == k})
		}
		for _, r := range rooms {
			opts = append(opts, views.OptionVM{Value: "room:" + r.ID.String(), Label: l.T("rooms.need_room", map[string]any{"Name": r.Name}), Selected: n.RoomID == r.ID})
		}
		vm.Needs = append(vm.Needs, views.TypeNeedVM{TypeID: t.ID.String(), TypeName: t.Translations.Name(l.Lang(), t.Name), Options: opts})
	}
	return vm, nil
}

func (s *Admin) renderRooms(c echo.Context, status int, errs map[string]string) error {
	vm, err := s.roomsVM(c, errs)
	if err != nil {
		return err
	}
	if status == http.StatusOK {
		vm.Notice = s.deps.Sessions.PopString(c.Request().Context(), "notice")
	}
	return s.kit.Page(c, status, httpx.Tr(c).T("rooms.title", nil), views.Rooms(vm))
}

// RoomsPage answers GET /staff/rooms.
func (s *Admin) RoomsPage(c echo.Context) error {
	return s.renderRooms(c, http.StatusOK, nil)
}

func roomInput(c echo.Context) practice.RoomInput {
	return practice.RoomInput{
		Name: c.FormValue("name"), Kind: strings.TrimSpace(c.FormValue("kind")),
		AlwaysOpen: c.FormValue("always") != "", Active: c.FormValue("active") != "",
		Version: httpx.Atoi32(c.FormValue("version")),
	}
}

// RoomCreate answers POST /staff/rooms.
func (s *Admin) RoomCreate(c echo.Context) error {
	r, err := s.deps.Practice.CreateRoom(c.Request().Context(), httpx.StaffUser(c), roomInput(c))
	if err != nil {
		errs, err := fieldErrors(c, err)
		if err != nil {
			return err
		}
		return s.renderRooms(c, http.StatusUnprocessableEntity, errs)
	}
	return c.Redirect(http.StatusSeeOther, "/staff/rooms/"+r.ID.String())
}

// RoomNeed answers POST /staff/rooms/needs: what one type needs.
func (s *Admin) RoomNeed(c echo.Context) error {
	typeID, err := uuid.Parse(c.FormValue("type"))
	if err != nil {
		return apperr.NotFoundf("type", "No such appointment type.")
	}
	var n practice.Need
	switch v := c.FormValue("need"); {
	case v == "":
	case strings.HasPrefix(v, "kind:"):
		n.Kind = strings.TrimPrefix(v, "kind:")
	case strings.HasPrefix(v, "room:"):
		if n.RoomID, err = uuid.Parse(strings.TrimPrefix(v, "room:")); err != nil {
			return apperr.Invalidf("need", "Pick what the type needs.")
		}
	default:
		return apperr.Invalidf("need", "Pick what the type needs.")
	}
	left, err := s.deps.Practice.SetTypeNeed(c.Request().Context(), httpx.StaffUser(c), typeID, n)
	if err != nil {
		errs, err := fieldErrors(c, err)
		if err != nil {
			return err
		}
		return s.renderRooms(c, http.StatusUnprocessableEntity, errs)
	}
	tr := httpx.Tr(c)
	if len(left) == 0 {
		s.deps.Sessions.Put(c.Request().Context(), "notice", tr.T("rooms.need_saved", nil))
		return c.Redirect(http.StatusSeeOther, "/staff/rooms")
	}
	// The bookings left without a room are shown now, once: the page lists
	// them to move, by date, time and specialist (no patient).
	vm, err := s.roomsVM(c, nil)
	if err != nil {
		return err
	}
	vm.Notice = tr.T("rooms.need_saved", nil)
	_, loc := s.today(c)
	for _, b := range left {
		local := b.Start.In(loc)
		vm.Roomless = append(vm.Roomless, views.RoomlessVM{ID: b.ID.String(), Day: tr.LongDay(local), Time: tr.Time(local), Specialist: b.SpecialistName})
	}
	return s.kit.Page(c, http.StatusOK, tr.T("rooms.title", nil), views.Rooms(vm))
}

// roomVM is one room's page, with the errors of a refused form.
func (s *Admin) roomVM(c echo.Context, id uuid.UUID, errs map[string]string) (views.RoomVM, error) {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	l := httpx.Tr(c)
	r, err := s.deps.Practice.Room(ctx, u, id)
	if err != nil {
		return views.RoomVM{}, err
	}
	hours, err := s.deps.Practice.RoomHours(ctx, u, id)
	if err != nil {
		return views.RoomVM{}, err
	}
	vm := views.RoomVM{Nav: s.kit.Nav(c, "rooms"), ID: r.ID.String(), Name: r.Name, Kind: r.Kind,
		AlwaysOpen: r.AlwaysOpen, Active: r.Active, Version: r.Version, Errors: errs}
	if vm.Errors == nil {
		vm.Errors = map[string]string{}
	}
	vm.Hours = hoursDays(l, hours)
	if u.May(staff.ActClosures) == nil {
		today, _ := s.today(c)
		cs, err := s.deps.Practice.RoomClosures(ctx, u, id, today)
		if err != nil {
			return views.RoomVM{}, err
		}
		held, err := s.deps.Practice.RoomClosureBookings(ctx, u, id, today)
		if err != nil {
			return views.RoomVM{}, err
		}
		_, loc := s.today(c)
		var shown []views.AffectedVM
		for _, cl := range cs {
			bs := affectedVMs(held[cl.ID], loc)
			shown = append(shown, bs...)
			vm.Closures = append(vm.Closures, views.RoomClosureVM{ID: strconv.FormatInt(cl.ID, 10), First: cl.First, Last: cl.Last, Note: cl.Note, Bookings: bs})
		}
		// The page shows the patients of those bookings.
		if err := s.recordLook(c, "room closure", shown); err != nil {
			return views.RoomVM{}, err
		}
	}
	return vm, nil
}

func (s *Admin) renderRoom(c echo.Context, id uuid.UUID, status int, errs map[string]string) error {
	vm, err := s.roomVM(c, id, errs)
	if err != nil {
		return err
	}
	if status == http.StatusOK {
		vm.Notice = s.deps.Sessions.PopString(c.Request().Context(), "notice")
	} else if _, typed := c.Request().PostForm["hours.monday"]; typed {
		for i := range vm.Hours {
			vm.Hours[i].Value = c.FormValue(vm.Hours[i].Key)
		}
	}
	return s.kit.Page(c, status, vm.Name, views.Room(vm))
}

// roomDone re-renders the room's page with a refused field (422) or, when
// someone else saved the room first, with its current values and saying
// so (409); else it goes back to it with notice after a change.
func (s *Admin) roomDone(c echo.Context, id uuid.UUID, err error, notice string) error {
	if isStale(err) {
		vm, verr := s.roomVM(c, id, nil)
		if verr != nil {
			return verr
		}
		vm.Stale = staleMessage(c, err)
		return s.kit.Page(c, http.StatusConflict, vm.Name, views.Room(vm))
	}
	if err != nil {
		errs, err := fieldErrors(c, err)
		if err != nil {
			return err
		}
		return s.renderRoom(c, id, http.StatusUnprocessableEntity, errs)
	}
	s.deps.Sessions.Put(c.Request().Context(), "notice", httpx.Tr(c).T(notice, nil))
	return c.Redirect(http.StatusSeeOther, "/staff/rooms/"+id.String())
}

// RoomPage answers GET /staff/rooms/:id.
func (s *Admin) RoomPage(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	return s.renderRoom(c, id, http.StatusOK, nil)
}

// RoomUpdate answers POST /staff/rooms/:id.
func (s *Admin) RoomUpdate(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	_, err = s.deps.Practice.UpdateRoom(c.Request().Context(), httpx.StaffUser(c), id, roomInput(c))
	return s.roomDone(c, id, err, "rooms.saved")
}

// RoomHours answers POST /staff/rooms/:id/hours.
func (s *Admin) RoomHours(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	rs, err := parseHours(c)
	if err == nil {
		err = s.deps.Practice.SetRoomHours(c.Request().Context(), httpx.StaffUser(c), id, httpx.Atoi32(c.FormValue("version")), rs)
	}
	return s.roomDone(c, id, err, "rooms.hours_saved")
}

// RoomClosureCreate answers POST /staff/rooms/:id/closures.
func (s *Admin) RoomClosureCreate(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	in := practice.RoomClosure{Note: c.FormValue("note")}
	if in.First, err = parseDay(c, "first"); err == nil {
		if in.Last, err = parseDay(c, "last"); err == nil {
			err = s.deps.Practice.AddRoomClosure(c.Request().Context(), httpx.StaffUser(c), id, in)
		}
	}
	return s.roomDone(c, id, err, "rooms.closure_saved")
}

// RoomClosureDelete answers POST /staff/rooms/:id/closures/:closure/delete.
func (s *Admin) RoomClosureDelete(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	cid, err := strconv.ParseInt(c.Param("closure"), 10, 64)
	if err != nil {
		return apperr.NotFoundf("closure", "Not found.")
	}
	err = s.deps.Practice.DeleteRoomClosure(c.Request().Context(), httpx.StaffUser(c), id, cid)
	if apperr.As(err) != nil && apperr.As(err).Kind == apperr.NotFound {
		return err
	}
	return s.roomDone(c, id, err, "rooms.closure_removed")
}
