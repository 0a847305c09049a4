package patient

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/public"
)

// createClinicCommand is what the home page of a server without clinics
// tells its operator to run.
const createClinicCommand = "bin/clinic clinic create --slug my-clinic --name \"My Clinic\" --timezone Europe/Berlin --admin-email you@example.org --language en"

// Home answers GET /: the clinics, or straight to the only one, or, with
// none at all, how to create the first.
func (s *Pages) Home(c echo.Context) error {
	rows, err := s.deps.Clinics.List(c.Request().Context())
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return s.kit.Page(c, http.StatusOK, "No clinic yet", views.NoClinic(createClinicCommand))
	}
	l := httpx.Speak(c, i18n.English)
	if len(rows) == 1 {
		return c.Redirect(http.StatusFound, "/c/"+rows[0].Slug)
	}
	vms := make([]views.ClinicVM, len(rows))
	for i, r := range rows {
		vms[i] = httpx.ClinicVM(r)
	}
	return s.kit.Page(c, http.StatusOK, l.T("clinics.title", nil), views.ClinicList(vms))
}

// withContact puts the page's clinic in the request's context, so the
// frame shows how to reach it.
func withContact(c echo.Context, clinic clinics.Clinic) {
	c.SetRequest(c.Request().WithContext(views.WithContact(c.Request().Context(), httpx.ClinicVM(clinic))))
}

// bookingPageVM builds the week page around a panel.
func (s *Pages) bookingPageVM(c echo.Context, p pageView, panel views.HoldPanelVM) (views.BookingPageVM, error) {
	ctx := c.Request().Context()
	meta, sn, _, err := s.loadPage(ctx, p, false)
	if err != nil {
		return views.BookingPageVM{}, err
	}
	return p.bookingVM(ctx, meta, sn.Cells(s.kit.ExistingClientID(c)), panel), nil
}

// loadPage reads what a week page shows besides its panel: the clinic,
// the type, its specialists and the grid. With live, the grid is read fit
// to be kept as a live view (grid.LiveSnapshot); when it cannot be, it is
// read as always and live comes back false.
func (s *Pages) loadPage(ctx context.Context, p pageView, live bool) (*public.PageMeta, *grid.Snapshot, bool, error) {
	clinic, err := s.deps.Clinics.BySlug(ctx, p.slug)
	if err != nil {
		return nil, nil, false, err
	}
	t, err := s.deps.Clinics.AppointmentType(ctx, p.typeID)
	if err != nil {
		return nil, nil, false, err
	}
	specialists, err := s.deps.Clinics.ActiveSpecialists(ctx, p.typeID)
	if err != nil {
		return nil, nil, false, err
	}
	known := p.specialist == uuid.Nil
	for _, sp := range specialists {
		known = known || sp.ID == p.specialist
	}
	if !known {
		return nil, nil, false, apperr.Invalidf("specialist", "That specialist does not perform %s.", t.Name)
	}
	var sn *grid.Snapshot
	if live {
		sn, err = s.deps.Grid.LiveSnapshot(ctx, p.grid())
		live = err == nil
	}
	if sn == nil {
		if sn, err = s.deps.Grid.Snapshot(ctx, p.grid()); err != nil {
			return nil, nil, false, err
		}
	}
	meta := &public.PageMeta{Clinic: clinic, Typ: t, Specialists: specialists, Loc: p.loc, First: p.first, Last: p.last}
	return meta, sn, live, nil
}

// bookingVM is the week page of p with cells and panel.
func (p pageView) bookingVM(ctx context.Context, meta *public.PageMeta, cells []grid.Cell, panel views.HoldPanelVM) views.BookingPageVM {
	opts := []views.OptionVM{{Value: "", Label: p.tr.T("booking.any", nil), Selected: p.specialist == uuid.Nil}}
	for _, sp := range meta.Specialists {
		opts = append(opts, views.OptionVM{Value: sp.ID.String(), Label: sp.Name, Selected: sp.ID == p.specialist})
	}
	prev, next := p, p
	prev.monday, next.monday = p.monday.AddDays(-7), p.monday.AddDays(7)
	first := time.Date(p.monday.Year, p.monday.Month, p.monday.Day, 12, 0, 0, 0, p.loc)
	last := first.AddDate(0, 0, 6)
	vm := views.BookingPageVM{
		Clinic: httpx.ClinicVM(meta.Clinic), TypeName: meta.Typ.NameIn(p.tr.Lang()), DurationMin: int(meta.Typ.DurationMin),
		WeekLabel: p.tr.DayMonth(first) + " – " + p.tr.DayMonthYear(last),
		FilterURL: p.pageURL(), Week: p.monday.String(), Specialists: opts,
		Days:      p.weekDays(cells, true),
		StreamURL: p.streamURLFor(ctx, cells), Panel: panel, Heading: p.heading(),
		WaitlistURL: p.waitlistURL(cells),
	}
	if p.inWindow(prev.monday) {
		vm.PrevURL = p.pageURL() + prev.query()
	}
	if p.inWindow(next.monday) {
		vm.NextURL = p.pageURL() + next.query()
	}
	return vm
}

// BookingPage answers GET /c/:slug/book/:typeId?week=&specialist=: from
// the week's live view when this instance keeps one and the viewer holds
// nothing at the clinic, else from the source (keeping a view of it).
func (s *Pages) BookingPage(c echo.Context) error {
	if done, err := s.bookingPageFromView(c); done {
		return err
	}
	p, err := s.readPageView(c)
	if err != nil {
		return err
	}
	// The browser gets its client id (a signed cookie, nothing stored)
	// before its stream connects, so the stream can tell its own holds.
	s.kit.ClientID(c)
	ticket := s.deps.Views.Begin(p.clinicID)
	meta, sn, live, err := s.loadPage(c.Request().Context(), p, ticket != nil)
	if err != nil {
		return err
	}
	if live {
		s.keepPageView(ticket, p, meta, sn)
	}
	vm := p.bookingVM(c.Request().Context(), meta, sn.Cells(s.kit.ExistingClientID(c)), s.restorePanel(c, p))
	return s.pageAnswer(c, vm)
}

// restorePanel shows the hold this browser still has on the page's type,
// so a reload does not lose it.
func (s *Pages) restorePanel(c echo.Context, p pageView) views.HoldPanelVM {
	clientID := s.kit.ExistingClientID(c)
	if clientID == "" || p.token != "" {
		return views.HoldPanelVM{}
	}
	active, err := s.deps.Holds.Active(c.Request().Context(), p.clinicID)
	if err != nil {
		return views.HoldPanelVM{}
	}
	for _, h := range active {
		if h.ClientID == clientID && h.AppointmentTypeID == p.typeID {
			return s.heldPanel(c, p, h, draft{}, nil, "")
		}
	}
	return views.HoldPanelVM{}
}

// draft is what a patient typed, kept across a lost slot.
type draft struct{ Name, Email, Phone string }

func (s *Pages) saveDraft(c echo.Context, d draft) {
	ctx := c.Request().Context()
	s.deps.Sessions.Put(ctx, "draft.name", d.Name)
	s.deps.Sessions.Put(ctx, "draft.email", d.Email)
	s.deps.Sessions.Put(ctx, "draft.phone", d.Phone)
}

func (s *Pages) loadDraft(c echo.Context) draft {
	ctx := c.Request().Context()
	return draft{
		Name:  s.deps.Sessions.GetString(ctx, "draft.name"),
		Email: s.deps.Sessions.GetString(ctx, "draft.email"),
		Phone: s.deps.Sessions.GetString(ctx, "draft.phone"),
	}
}

func (s *Pages) heldPanel(c echo.Context, p pageView, h holds.Hold, d draft, errs map[string]string, msg string) views.HoldPanelVM {
	if d == (draft{}) {
		d = s.loadDraft(c)
	}
	name := ""
	if sp, err := s.deps.Clinics.Specialist(c.Request().Context(), h.SpecialistID); err == nil {
		name = sp.Name
	}
	return views.HoldPanelVM{
		State: "held", HoldID: h.HoldID, Message: msg,
		When:       httpx.LocalWhen(p.tr, h.Start, p.loc),
		Specialist: name,
		Until:      p.tr.Time(holdEnd(h).In(p.loc)),
		UntilUTC:   holdEnd(h).UTC().Format(msLayout),
		ConfirmURL: p.base() + "/confirm", ReleaseURL: p.base() + "/release", BeatURL: p.base() + "/heartbeat",
		HoldURL: p.base() + "/hold", Start: h.Start.UTC().Format(time.RFC3339), Filter: p.filter(),
		Name: d.Name, Email: d.Email, Phone: d.Phone, Errors: errs,
		IdempotencyKey: formKey(c),
	}
}

// msLayout is an instant for the page's script: RFC 3339 with milliseconds.
const msLayout = "2006-01-02T15:04:05.000Z07:00"

// holdEnd is the end of h's life while its page keeps it alive, or its
// expiry when it was kept longer (waiting for an e-mailed code): what the
// patient is told, which heartbeats do not move.
func holdEnd(h holds.Hold) time.Time {
	if h.KeepUntil.Before(h.ExpiresAt) {
		return h.ExpiresAt
	}
	return h.KeepUntil
}

// panel answers a panel action: the panel alone for htmx, the whole page
// around it otherwise (the flow works without JavaScript).
func (s *Pages) panel(c echo.Context, p pageView, status int, panel views.HoldPanelVM) error {
	if c.Request().Header.Get("HX-Request") == "true" {
		return httpx.Render(c, status, nil, views.HoldPanel(panel))
	}
	vm, err := s.bookingPageVM(c, p, panel)
	if err != nil {
		return err
	}
	return s.kit.Page(c, status, vm.TypeName+" · "+vm.Clinic.Name, views.BookingPage(vm))
}

// problem turns a domain error into the panel's message, or returns it
// when it is not one a patient can act on here.
func problemPanel(p pageView, err error, start string) (int, views.HoldPanelVM, bool) {
	ae := apperr.As(err)
	if ae == nil {
		return 0, views.HoldPanelVM{}, false
	}
	panel := views.HoldPanelVM{State: "problem", HoldURL: p.base() + "/hold", Start: start, Filter: p.filter()}
	status := http.StatusConflict
	own := httpx.LocalMessage(p.tr, ae.Code, ae.Message, ae.Details)
	switch ae.Code {
	case apperr.CodeSlotTaken:
		panel.Message = p.tr.T("panel.taken", nil)
	case apperr.CodeSlotUnavailable:
		panel.Message = own
	case apperr.CodeSlotHeld:
		status = http.StatusLocked
		panel.Message = p.tr.T("panel.held_by_other", nil)
	case apperr.CodeHoldExpired, apperr.CodeHoldGone:
		status = http.StatusGone
		panel.Message = p.tr.T("panel.expired", nil)
		panel.Retry = true
	case apperr.CodeHoldQuota, apperr.CodeAddressHoldQuota, apperr.CodeHoldReclaimTooSoon, apperr.CodeCooldown, apperr.CodeRateLimited,
		apperr.CodeBookingAllowance, apperr.CodeVerificationCodeQuota:
		status = http.StatusTooManyRequests
		panel.Message = own
	case apperr.CodeNotYourHold:
		status = http.StatusForbidden
		panel.Message = p.tr.T("panel.not_yours", nil)
	case apperr.CodeInvalidArgument:
		status = http.StatusBadRequest
		panel.Message = own
	case apperr.CodeIdempotencyMismatch:
		status = http.StatusUnprocessableEntity
		panel.Message = p.tr.T("panel.form_reused", nil)
	case apperr.CodeUnavailable:
		status = http.StatusServiceUnavailable
		panel.Message = own
	default:
		return 0, views.HoldPanelVM{}, false
	}
	return status, panel, true
}

// formSpecialist takes the specialist filter a panel form carries, so the
// answer shows the grid the patient was on.
func formSpecialist(c echo.Context, p pageView) pageView {
	if id, err := uuid.Parse(c.FormValue("specialist")); err == nil {
		p.specialist = id
	}
	return p
}

// HoldSlot answers POST /c/:slug/book/:typeId/hold (start, specialist).
func (s *Pages) HoldSlot(c echo.Context) error {
	p, err := s.readPageView(c)
	if err != nil {
		return err
	}
	if err := httpx.OverLimit(c, s.deps.HoldLimiter, "tries"); err != nil {
		httpx.SetRetryAfter(c, err)
		ae := apperr.As(err)
		return s.panel(c, p, http.StatusTooManyRequests, views.HoldPanelVM{State: "problem", Message: httpx.LocalMessage(p.tr, ae.Code, ae.Message, ae.Details)})
	}
	startStr := c.FormValue("start")
	start, err := httpx.ParseTime("start", startStr)
	if err != nil {
		return s.panel(c, p, http.StatusBadRequest, views.HoldPanelVM{State: "problem", Message: p.tr.T("panel.pick_time", nil)})
	}
	specialist := p.specialist
	if v := c.FormValue("specialist"); v != "" {
		if specialist, err = uuid.Parse(v); err != nil {
			return s.panel(c, p, http.StatusBadRequest, views.HoldPanelVM{State: "problem", Message: p.tr.T("panel.pick_time", nil)})
		}
		p.specialist = specialist // the answer shows the grid the patient was on
	}
	h, err := s.pub.Claim(c.Request().Context(), checkout.HoldRequest{
		AppointmentTypeID: p.typeID, Start: start, SpecialistID: specialist, ClientID: s.kit.ClientID(c),
		Address: c.RealIP(),
	})
	s.kit.Metrics.Outcome(c.Request().Context(), "hold", err)
	if err != nil {
		if status, panel, ok := problemPanel(p, err, startStr); ok {
			httpx.SetRetryAfter(c, err)
			return s.panel(c, p, status, panel)
		}
		return err
	}
	return s.panel(c, p, http.StatusOK, s.heldPanel(c, p, h, draft{}, nil, ""))
}

// Heartbeat answers POST /c/:slug/book/:typeId/heartbeat: 204 while the
// hold lives; the "expired" panel when it is gone.
func (s *Pages) Heartbeat(c echo.Context) error {
	p, err := s.readPageView(c)
	if err != nil {
		return err
	}
	p = formSpecialist(c, p)
	// The hold's count goes by the client id the request brought, not one
	// made for it now: a browser without one is one caller.
	countAs := s.kit.ExistingClientID(c)
	_, err = s.pub.Heartbeat(c, c.FormValue("holdId"), s.kit.ClientID(c), countAs)
	if err != nil {
		httpx.SetRetryAfter(c, err)
		status, panel, ok := problemPanel(p, err, c.FormValue("start"))
		if !ok {
			return err
		}
		return s.panel(c, p, status, panel)
	}
	return c.NoContent(http.StatusNoContent)
}

// Release answers POST /c/:slug/book/:typeId/release.
func (s *Pages) Release(c echo.Context) error {
	p, err := s.readPageView(c)
	if err != nil {
		return err
	}
	err = s.deps.Checkout.Release(c.Request().Context(), c.FormValue("holdId"), s.kit.ClientID(c))
	s.deps.Views.Changed(p.clinicID)
	if err != nil {
		if status, panel, ok := problemPanel(p, err, ""); ok {
			return s.panel(c, p, status, panel)
		}
		return err
	}
	return s.panel(c, p, http.StatusOK, views.HoldPanelVM{Message: p.tr.T("panel.released", nil)})
}

// Confirm answers POST /c/:slug/book/:typeId/confirm.
func (s *Pages) Confirm(c echo.Context) error {
	p, err := s.readPageView(c)
	if err != nil {
		return err
	}
	p = formSpecialist(c, p)
	ctx := c.Request().Context()
	d := draft{Name: c.FormValue("name"), Email: c.FormValue("email"), Phone: c.FormValue("phone")}
	holdID := c.FormValue("holdId")
	clientID := s.kit.ClientID(c)
	res, err := s.book(c, p, d, holdID, clientID)
	if err == nil {
		done, err := confirmed(res)
		if err != nil {
			return err
		}
		s.saveDraft(c, draft{})
		s.deps.Sessions.Put(ctx, "justBooked", done.BookingID.String())
		return httpx.Redirect(c, "/manage/"+done.ManageToken)
	}
	if answered, aerr := s.codeAnswer(c, p, holdID, clientID, d, err); answered {
		return aerr
	}
	ae := apperr.As(err)
	if ae != nil && ae.Kind == apperr.Invalid && strings.HasPrefix(ae.Field(), "patient.") {
		// Field errors in place, every wrong field at once, with what was
		// typed; the hold stays.
		if h, ok := s.ownHold(c, p, holdID, clientID); ok {
			return s.panel(c, p, http.StatusUnprocessableEntity, s.heldPanel(c, p, h, d, fieldErrors(p, ae, d), ""))
		}
	}
	if ae != nil && ae.Kind == apperr.Invalid && ae.Field() == formKeyField {
		// The form's own key, altered or cut short on its way: the form
		// again with a key of the server's, which sending once more books.
		if h, ok := s.ownHold(c, p, holdID, clientID); ok {
			return s.panel(c, p, http.StatusBadRequest, s.heldPanel(c, p, h, d, nil, p.tr.T("panel.form_key_bad", nil)))
		}
	}
	s.saveDraft(c, d) // a lost slot must not lose what was typed
	if status, panel, ok := problemPanel(p, err, c.FormValue("start")); ok {
		return s.panel(c, p, status, panel)
	}
	return err
}

// fieldErrors is the message of each wrong field of d, the refused one
// (ae) among them, in the page's language.
func fieldErrors(p pageView, ae *apperr.Error, d draft) map[string]string {
	out := map[string]string{ae.Field(): httpx.LocalMessage(p.tr, ae.Code, ae.Message, ae.Details)}
	for field, err := range booking.PatientFieldErrors(booking.Patient{Name: d.Name, Email: d.Email, Phone: d.Phone}) {
		if fe := apperr.As(err); fe != nil && out[field] == "" {
			out[field] = httpx.LocalMessage(p.tr, fe.Code, fe.Message, fe.Details)
		}
	}
	return out
}

// book books the client's hold for what the patient typed, with the token
// of their verified address (a code typed in the form redeemed first).
func (s *Pages) book(c echo.Context, p pageView, d draft, holdID, clientID string) (checkout.Confirmed, error) {
	ctx := c.Request().Context()
	req := checkout.ConfirmRequest{
		AppointmentTypeID: p.typeID, HoldID: holdID, ClientID: clientID,
		Patient:        booking.Patient{Name: d.Name, Email: d.Email, Phone: d.Phone},
		Language:       i18n.FromContext(ctx).Lang(), // the page's, for the e-mails
		Address:        c.RealIP(),
		IdempotencyKey: c.FormValue(formKeyField), RequestHash: formRequestHash(p, holdID, d),
		Encode: encodeFormAnswer,
	}
	token, err := s.verification(c, d.Email)
	if err != nil {
		// A retry of a request that booked: the code it carries is spent.
		if rec, ferr := s.deps.Checkout.Answered(ctx, req); ferr == nil && rec != nil {
			return checkout.Confirmed{Replay: rec}, nil
		}
		return checkout.Confirmed{}, err
	}
	req.VerificationToken = token
	res, err := s.deps.Checkout.Confirm(ctx, req)
	s.deps.Views.Changed(p.clinicID)
	s.kit.Metrics.Outcome(ctx, "booking", err)
	return res, err
}

// ownHold finds the client's hold by id.
func (s *Pages) ownHold(c echo.Context, p pageView, holdID, clientID string) (holds.Hold, bool) {
	active, err := s.deps.Holds.Active(c.Request().Context(), p.clinicID)
	if err != nil {
		return holds.Hold{}, false
	}
	for _, h := range active {
		if h.HoldID == holdID && h.ClientID == clientID {
			return h, true
		}
	}
	return holds.Hold{}, false
}
