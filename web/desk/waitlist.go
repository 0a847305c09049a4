package desk

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// The staff's waitlist: everyone waiting for a fully booked type, oldest
// first, with a way to take a patient off the list and to offer one a
// time by hand (waitlist_offer.go).

// The waitlist holds patients' names and addresses and leads to offers,
// which are bookings in waiting: the desk's actions decide who may see it
// and act on it.
const (
	waitlistAction       = staff.ActBook
	waitlistRemoveAction = staff.ActCancel
)

// waitlistNoticeKey keeps the outcome of a change for the list it
// redirects to.
const waitlistNoticeKey = "waitlistNotice"

// waitlistListCap is the most entries the list reads at once (the LIMIT
// of WaitlistEntriesByClinic): a list that long says it is cut.
const waitlistListCap = 500

// waitlistFilter is what the list shows: one type (uuid.Nil: every
// type), and the entries whose days include day (zero: any day).
type waitlistFilter struct {
	typeID uuid.UUID
	day    time.Time // a date at midnight UTC
}

// readWaitlistFilter reads ?type= and ?day= (or the same form fields).
func readWaitlistFilter(typ, day string) (waitlistFilter, error) {
	var f waitlistFilter
	if typ = strings.TrimSpace(typ); typ != "" {
		id, err := uuid.Parse(typ)
		if err != nil {
			return f, apperr.Invalidf("type", "Choose an appointment type from the list.")
		}
		f.typeID = id
	}
	if day = strings.TrimSpace(day); day != "" {
		d, err := time.Parse(time.DateOnly, day)
		if err != nil {
			return f, apperr.Invalidf("day", "day must be a date like 2027-03-28.")
		}
		f.day = d
	}
	return f, nil
}

func (f waitlistFilter) typeValue() string {
	if f.typeID == uuid.Nil {
		return ""
	}
	return f.typeID.String()
}

func (f waitlistFilter) dayValue() string {
	if f.day.IsZero() {
		return ""
	}
	return f.day.Format(time.DateOnly)
}

// path is the list with the filter.
func (f waitlistFilter) path() string {
	q := url.Values{}
	if v := f.typeValue(); v != "" {
		q.Set("type", v)
	}
	if v := f.dayValue(); v != "" {
		q.Set("day", v)
	}
	if len(q) == 0 {
		return "/staff/waitlist"
	}
	return "/staff/waitlist?" + q.Encode()
}

// WaitlistPage answers GET /staff/waitlist?type=&day=.
func (s *FrontDesk) WaitlistPage(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(waitlistAction); err != nil {
		return err
	}
	ctx := c.Request().Context()
	f, err := readWaitlistFilter(c.QueryParam("type"), c.QueryParam("day"))
	if err != nil {
		return err
	}
	types, err := s.deps.Clinics.AppointmentTypes(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	l := httpx.Tr(c)
	vm := views.WaitlistVM{Nav: s.kit.Nav(c, "waitlist"), Type: f.typeValue(), Day: f.dayValue(),
		Types: []views.OptionVM{{Value: "", Label: l.T("records.waitlist.every_type", nil)}}}
	found := f.typeID == uuid.Nil
	for _, t := range types {
		vm.Types = append(vm.Types, views.OptionVM{Value: t.ID.String(), Label: t.NameIn(l.Lang()), Selected: t.ID == f.typeID})
		found = found || t.ID == f.typeID
	}
	if !found {
		return apperr.Invalidf("type", "No such appointment type at this clinic.")
	}
	entries, err := s.deps.Waitlist.List(ctx, u, f.typeID, f.day)
	if err != nil {
		return err
	}
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	if err := s.record(c, privacy.PageWaitlist, nil, ids); err != nil {
		return err
	}
	vm.Rows = waitlistRows(l, typeNames(types, l.Lang()), entries, loc)
	vm.Notice = s.deps.Sessions.PopString(ctx, waitlistNoticeKey)
	if len(entries) >= waitlistListCap {
		vm.Notice = strings.TrimSpace(vm.Notice + " " + l.T("records.waitlist.long", map[string]any{"Count": httpx.ItoaInt(waitlistListCap)}))
	}
	return s.kit.Page(c, http.StatusOK, l.T("records.waitlist.title", nil), views.Waitlist(vm))
}

// typeNames are the clinic's types' names in lang, by id.
func typeNames(types []clinics.AppointmentType, lang string) map[uuid.UUID]string {
	names := make(map[uuid.UUID]string, len(types))
	for _, t := range types {
		names[t.ID] = t.NameIn(lang)
	}
	return names
}

// entryType is the name of e's type in the reader's language, or as the
// entry names it when the type is not among names.
func entryType(names map[uuid.UUID]string, e waitlist.Entry) string {
	if n, ok := names[e.AppointmentTypeID]; ok {
		return n
	}
	return e.TypeName
}

// typeNamesOf are the names of clinicID's types in l's language; none
// when they cannot be read (the entries' own names stand in).
func (s *FrontDesk) typeNamesOf(ctx context.Context, clinicID uuid.UUID, l *i18n.Localizer) map[uuid.UUID]string {
	types, err := s.deps.Clinics.AppointmentTypes(ctx, clinicID)
	if err != nil {
		s.deps.Logger.Warn("read the types' names", "err", err)
	}
	return typeNames(types, l.Lang())
}

// waitlistRows are the list's rows; each one's place counts the
// confirmed places shown for the same type, in the list's order. A place
// not confirmed has none: it is offered nothing until it is.
func waitlistRows(l *i18n.Localizer, names map[uuid.UUID]string, entries []waitlist.Entry, loc *time.Location) []views.WaitlistRowVM {
	rows := make([]views.WaitlistRowVM, len(entries))
	places := map[uuid.UUID]int{}
	for i, e := range entries {
		position := "–"
		if e.Confirmed() {
			places[e.AppointmentTypeID]++
			position = httpx.ItoaInt(places[e.AppointmentTypeID])
		}
		r := views.WaitlistRowVM{
			ID: e.ID.String(), Position: position, Confirmed: e.Confirmed(),
			Name: e.Patient.Name, Email: e.Patient.Email, Phone: e.Patient.Phone,
			TypeName: entryType(names, e), Specialist: cmp.Or(e.SpecialistName, l.T("records.any", nil)),
			Days: entryDays(l, e), Times: entryTimes(l, e), Joined: httpx.StaffWhen(l, e.JoinedAt, loc),
			OfferURL: "/staff/waitlist/" + e.ID.String() + "/offer", RemoveURL: "/staff/waitlist/" + e.ID.String() + "/remove",
		}
		if e.OfferID != uuid.Nil {
			r.Offered = true
			r.OfferStart = httpx.StaffWhen(l, e.OfferStart, loc)
			r.OfferUntil = l.Time(e.OfferUntil.In(loc))
		}
		rows[i] = r
	}
	return rows
}

// entryDays are the days an entry waits for, as the list shows them:
// "Tue 24 Nov 2026 – Fri 27 Nov 2026".
func entryDays(l *i18n.Localizer, e waitlist.Entry) string {
	day := func(t time.Time) string { return l.Day(t) + " " + strconv.Itoa(t.Year()) }
	if e.From.Equal(e.To) {
		return day(e.From)
	}
	return day(e.From) + " – " + day(e.To)
}

// entryTimes are the parts of the day an entry asked for.
func entryTimes(l *i18n.Localizer, e waitlist.Entry) string {
	if len(e.Times) == 0 {
		return l.T("records.any_time", nil)
	}
	parts := make([]string, len(e.Times))
	for i, p := range e.Times {
		key := "records.part." + p
		if parts[i] = l.T(key, nil); parts[i] == key {
			parts[i] = p
		}
	}
	return strings.Join(parts, ", ")
}

// waitlistEntry is the entry the route's :id names, for a staff member
// who may act: the user and one entry of their clinic's list (waiting, or
// with a time offered), wherever it stands in the list. Errors: FORBIDDEN,
// NOT_FOUND (no such id, not in the list, or another clinic's).
func (s *FrontDesk) waitlistEntry(c echo.Context, act staff.Action) (staff.User, waitlist.Entry, error) {
	u := httpx.StaffUser(c)
	if err := u.May(act); err != nil {
		return u, waitlist.Entry{}, err
	}
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return u, waitlist.Entry{}, apperr.NotFoundf("id", "No such waitlist entry.")
	}
	e, err := s.deps.Waitlist.Entry(c.Request().Context(), u, id)
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.NotFound {
		return u, waitlist.Entry{}, errNotOnWaitlist()
	}
	return u, e, err
}

func errNotOnWaitlist() error {
	return apperr.NotFoundf("id", "This patient is not on the waitlist (any more): they may have left it or taken a time.")
}

// WaitlistRemove answers POST /staff/waitlist/:id/remove: without
// confirm=yes it asks first; with it, the patient leaves the list (any
// time offered to them goes to the next), audited, and the list shows
// again with its filters.
func (s *FrontDesk) WaitlistRemove(c echo.Context) error {
	// Only a patient still on the list can be taken off it; one removed
	// already, or gone, is not found (the service would quietly accept a
	// second removal).
	u, e, err := s.waitlistEntry(c, waitlistRemoveAction)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	id := e.ID
	// A filter that does not read leads back to the whole list.
	f, _ := readWaitlistFilter(c.FormValue("type"), c.FormValue("day"))
	l := httpx.Tr(c)
	typeName := entryType(s.typeNamesOf(ctx, u.ClinicID, l), e)
	if c.FormValue("confirm") != "yes" {
		vm := views.WaitlistRemoveVM{
			Nav: s.kit.Nav(c, "waitlist"), Name: e.Patient.Name, TypeName: typeName, Days: entryDays(l, e),
			RemoveURL: "/staff/waitlist/" + id.String() + "/remove", BackURL: f.path(), Type: f.typeValue(), Day: f.dayValue(),
		}
		return s.kit.Page(c, http.StatusOK, l.T("records.waitlist.remove_page", nil), views.WaitlistRemove(vm))
	}
	if err := s.deps.Waitlist.Remove(ctx, u, id); err != nil {
		return err
	}
	s.deps.Sessions.Put(ctx, waitlistNoticeKey, l.T("records.waitlist.removed", map[string]any{"Name": e.Patient.Name, "Type": typeName}))
	return httpx.Redirect(c, f.path())
}

// typeOf is the clinic's type id with its active specialists.
func typeOf(types []clinics.AppointmentType, id uuid.UUID) (clinics.AppointmentType, bool) {
	for _, t := range types {
		if t.ID == id {
			return t, true
		}
	}
	return clinics.AppointmentType{}, false
}

// waitingOn is how many wait for day on the waitlist, and their list, for
// the day grid's header; 0 when the viewer may not see the list or the
// count fails (it is a hint, never a reason to fail the grid).
func (s *FrontDesk) waitingOn(c echo.Context, day availability.Date) (int, string) {
	u := httpx.StaffUser(c)
	if u.May(waitlistAction) != nil {
		return 0, ""
	}
	d := dateUTC(day)
	counts, err := s.deps.Waitlist.CountByDay(c.Request().Context(), u, d, d)
	if err != nil {
		s.deps.Logger.Warn("count the waitlist of a day", "err", err)
		return 0, ""
	}
	n := 0
	for _, v := range counts {
		n += v
	}
	return n, "/staff/waitlist?day=" + day.String()
}
