package patient

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/ics"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/stream"
)

// manageData is a booking opened by its manage token, with what its pages show.
type manageData struct {
	b      booking.Booking
	clinic clinics.Clinic
	typ    clinics.AppointmentType
	sp     clinics.Specialist
	loc    *time.Location
	token  string
	tr     *i18n.Localizer
	// deadline is when the booking stops being movable online (zero: never).
	deadline time.Time
	// series are the sessions of the booking's series, if it is one's.
	series []booking.Booking
}

func (s *Pages) loadManage(c echo.Context) (manageData, error) {
	ctx := c.Request().Context()
	token := c.Param("token")
	b, err := s.deps.Bookings.ByManageToken(ctx, token)
	if err != nil {
		return manageData{}, err
	}
	clinic, err := s.deps.Clinics.ByID(ctx, b.ClinicID)
	if err != nil {
		return manageData{}, err
	}
	tr := httpx.Speak(c, clinic.Language)
	httpx.PrivacyFor(c, clinic.Slug)
	withContact(c, clinic)
	typ, err := s.deps.Clinics.AppointmentType(ctx, b.AppointmentTypeID)
	if err != nil {
		return manageData{}, err
	}
	sp, err := s.deps.Clinics.Specialist(ctx, b.SpecialistID)
	if err != nil {
		return manageData{}, err
	}
	loc, err := s.deps.Slots.Zone(ctx, b.ClinicID)
	if err != nil {
		return manageData{}, err
	}
	deadline, err := s.deps.Checkout.ChangeDeadline(ctx, b)
	if err != nil {
		return manageData{}, err
	}
	m := manageData{b: b, clinic: clinic, typ: typ, sp: sp, loc: loc, token: token, tr: tr, deadline: deadline}
	if b.SeriesID != uuid.Nil {
		if m.series, err = s.deps.Bookings.SeriesSessions(ctx, b.SeriesID, b.ClinicID); err != nil {
			return manageData{}, err
		}
	}
	return m, nil
}

// movable refuses a move once the change deadline has passed, with the
// clinic's phone for a call instead.
func (m manageData) movable() error {
	if checkout.InsideDeadline(m.deadline, time.Now()) {
		return checkout.ErrChangeDeadline(m.deadline, m.clinic.ContactPhone)
	}
	return nil
}

func (m manageData) vm() views.ManageVM {
	base := "/manage/" + m.token
	return views.ManageVM{
		Clinic: httpx.ClinicVM(m.clinic), Token: m.token, Status: m.b.Status, TypeName: m.typ.NameIn(m.tr.Lang()),
		When: httpx.LocalWhen(m.tr, m.b.Start, m.loc), Ends: m.tr.Time(m.b.End.In(m.loc)),
		Specialist: m.sp.Name, Patient: m.b.Patient.Name,
		ManageURL: base, ICSURL: base + "/calendar.ics", CancelURL: base + "/cancel",
		RescheduleURL: base + "/reschedule", Version: m.b.Version,
		BookAgainURL: "/c/" + m.clinic.Slug + "/book/" + m.typ.ID.String(),
		Deadline:     m.deadlineVM(),
		Series:       m.seriesVM(),
	}
}

func (m manageData) deadlineVM() views.DeadlineVM {
	if m.deadline.IsZero() {
		return views.DeadlineVM{}
	}
	return views.DeadlineVM{
		When: httpx.LocalWhen(m.tr, m.deadline, m.loc), Passed: checkout.InsideDeadline(m.deadline, time.Now()),
		Phone: m.clinic.ContactPhone,
	}
}

// ManagePage answers GET /manage/:token: the booking, and the confirmation
// right after booking.
func (s *Pages) ManagePage(c echo.Context) error {
	m, err := s.loadManage(c)
	if err != nil {
		return err
	}
	vm := m.vm()
	vm.ManageLink = s.kit.PublicBase(c) + vm.ManageURL
	ctx := c.Request().Context()
	if s.deps.Sessions.PopString(ctx, "justBooked") == m.b.ID.String() {
		// The booking's e-mails were written with it, to the address it has.
		vm.JustBooked, vm.MailedTo = true, m.b.Patient.Email
	}
	vm.Notice = s.deps.Sessions.PopString(ctx, "notice")
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Referrer-Policy", "no-referrer") // the token is in the URL
	return s.kit.Page(c, http.StatusOK, m.tr.T("manage.title", nil), views.ManagePage(vm))
}

// ManageCancelPage answers GET /manage/:token/cancel, the page that asks
// before cancelling, which a reload or a link reaches too: the question
// while the booking stands, the booking's own page once it does not.
func (s *Pages) ManageCancelPage(c echo.Context) error {
	m, err := s.loadManage(c)
	if err != nil {
		return err
	}
	if m.b.Status != booking.StatusConfirmed {
		return c.Redirect(http.StatusSeeOther, "/manage/"+m.token)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return s.kit.Page(c, http.StatusOK, m.tr.T("cancel.page_title", nil), views.CancelConfirm(m.vm()))
}

// ManageCancel answers POST /manage/:token/cancel: first a confirmation,
// then the cancel.
func (s *Pages) ManageCancel(c echo.Context) error {
	m, err := s.loadManage(c)
	if err != nil {
		return err
	}
	if c.FormValue("confirm") != "yes" {
		return s.kit.Page(c, http.StatusOK, m.tr.T("cancel.page_title", nil), views.CancelConfirm(m.vm()))
	}
	if _, err := s.deps.Checkout.CancelAppointment(c.Request().Context(), m.b.ID, m.token, c.FormValue("reason")); err != nil {
		return err
	}
	s.deps.Sessions.Put(c.Request().Context(), "notice", m.tr.T("manage.cancelled_notice", nil))
	return httpx.Redirect(c, "/manage/"+m.token)
}

// ManageReschedulePage answers GET /manage/:token/reschedule?week=: the live
// grid of the booking's type; a click moves the booking there.
func (s *Pages) ManageReschedulePage(c echo.Context) error {
	m, p, err := s.manageView(c)
	if err != nil {
		return err
	}
	vm, err := s.bookingPageVM(c, p, views.HoldPanelVM{Message: m.tr.T("manage.pick_new", nil)})
	if err != nil {
		return err
	}
	vm.Specialists = nil // the booking keeps its type; any specialist free then will do
	vm.Current = m.tr.T("manage.current_time", map[string]any{"When": httpx.LocalWhen(m.tr, m.b.Start, m.loc)})
	return s.kit.Page(c, http.StatusOK, m.tr.T("booking.heading.move", nil), views.BookingPage(vm))
}

func (s *Pages) manageView(c echo.Context) (manageData, pageView, error) {
	m, err := s.loadManage(c)
	if err != nil {
		return m, pageView{}, err
	}
	if m.b.Status != booking.StatusConfirmed {
		return m, pageView{}, apperr.New(apperr.Conflict, apperr.CodeBookingNotActive, "This booking was cancelled or moved and cannot be moved again.")
	}
	if err := m.movable(); err != nil {
		return m, pageView{}, err
	}
	p := pageView{slug: m.clinic.Slug, clinicID: m.clinic.ID, typeID: m.typ.ID, loc: m.loc, token: m.token, tr: m.tr,
		current: m.b.Start}
	w := c.QueryParam("week")
	if w == "" {
		// The page opens on the appointment's own week, unless no day of
		// it can be booked any more (then on today's).
		p.monday = availability.DateOf(m.b.Start, m.loc).WeekStart()
		if err := s.boundWeek(c.Request().Context(), &p); err == nil {
			return m, p, nil
		}
	}
	day := availability.DateOf(time.Now(), m.loc)
	if w != "" {
		if day, err = availability.ParseDate(w); err != nil {
			return m, pageView{}, apperr.Invalidf("week", "week must be a date, YYYY-MM-DD.")
		}
	}
	p.monday = day.WeekStart()
	if err := s.boundWeek(c.Request().Context(), &p); err != nil {
		return m, pageView{}, err
	}
	return m, p, nil
}

// ManageRescheduleStream answers GET /manage/:token/reschedule/live.
func (s *Pages) ManageRescheduleStream(c echo.Context) error {
	_, p, err := s.manageView(c)
	if err != nil {
		return err
	}
	return s.live.ServeHTMLStream(c, p.source(s), p.typeID.String(), stream.Viewer{})
}

// ManageReschedule answers POST /manage/:token/reschedule (start).
func (s *Pages) ManageReschedule(c echo.Context) error {
	m, p, err := s.manageView(c)
	if err != nil {
		return err
	}
	start, err := httpx.ParseTime("start", c.FormValue("start"))
	if err != nil {
		return s.panel(c, p, http.StatusBadRequest, views.HoldPanelVM{State: "problem", Message: m.tr.T("panel.pick_time", nil)})
	}
	if c.FormValue("confirm") != "yes" {
		// Asking moves nothing, so it spends none of the link's moves.
		return s.panel(c, p, http.StatusOK, m.movePanel(p, start))
	}
	if err := httpx.OverLimit(c, s.deps.MoveLimiter, "moves"); err != nil {
		httpx.SetRetryAfter(c, err)
		status, panel, _ := problemPanel(p, err, "")
		return s.panel(c, p, status, panel)
	}
	if err := s.pub.LinkMovesSpent(c, m.token); err != nil {
		httpx.SetRetryAfter(c, err)
		status, panel, _ := problemPanel(p, err, "")
		panel.Message = m.tr.T("manage.too_many_moves", map[string]any{"Minutes": httpx.MinutesOf(apperr.As(err).RetryAfter)})
		return s.panel(c, p, status, panel)
	}
	nb, err := s.deps.Checkout.RescheduleAppointment(c.Request().Context(), m.b.ID, m.token, m.b.Version, start)
	if err != nil {
		if status, panel, ok := problemPanel(p, err, ""); ok {
			panel.Retry = false
			return s.panel(c, p, status, panel)
		}
		return err
	}
	s.pub.CountLinkMove(c, m.token)
	s.deps.Sessions.Put(c.Request().Context(), "notice", m.tr.T("manage.moved_notice", map[string]any{"When": httpx.LocalWhen(m.tr, nb.Start, m.loc)}))
	return httpx.Redirect(c, "/manage/"+m.token)
}

// movePanel asks before a move: the old time, the new one, and the two
// answers.
func (m manageData) movePanel(p pageView, start time.Time) views.HoldPanelVM {
	return views.HoldPanelVM{
		State: "move", When: httpx.LocalWhen(m.tr, start, m.loc), MoveFrom: httpx.LocalWhen(m.tr, m.b.Start, m.loc),
		ConfirmURL: p.pageURL(), Start: start.UTC().Format(time.RFC3339), Week: p.monday.String(),
		BackURL: p.pageURL() + p.query(),
	}
}

// ManageICS answers GET /manage/:token/calendar.ics: one VEVENT with its
// instants in UTC, which every calendar reads right across DST.
func (s *Pages) ManageICS(c echo.Context) error {
	m, err := s.loadManage(c)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Content-Disposition", `attachment; filename="appointment.ics"`)
	return c.Blob(http.StatusOK, "text/calendar; charset=utf-8", []byte(ics.Calendar(m.b, m.typ.NameIn(m.clinic.Language), m.sp.Name, m.clinic, time.Now())))
}
