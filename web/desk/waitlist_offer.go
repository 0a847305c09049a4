package desk

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// Offering a waiting patient a time by hand: the free times of their type
// on one of their days, per specialist who performs it, each a button
// that offers it (the patient gets the offer's e-mail, ahead of the
// list's order).

// WaitlistOfferPage answers GET /staff/waitlist/:id/offer?day=: the free
// times of the entry's type on day (by default the first of its days
// still ahead).
func (s *FrontDesk) WaitlistOfferPage(c echo.Context) error {
	u, e, err := s.waitlistEntry(c, waitlistAction)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	vm, err := s.waitlistOfferVM(ctx, c, u, e, c.QueryParam("day"))
	if err != nil {
		return err
	}
	return s.kit.Page(c, http.StatusOK, httpx.Tr(c).T("records.waitlist.offer", nil), views.WaitlistOffer(vm))
}

// WaitlistOffer answers POST /staff/waitlist/:id/offer (specialist,
// start): the time is offered to the entry. A refusal shows the day's
// times again with the reason, with its status (400 naming the field,
// 409 for a time taken or held, an entry that left the list, or a
// patient who booked the type within its cooldown).
func (s *FrontDesk) WaitlistOffer(c echo.Context) error {
	// An entry not in the list (gone from it, or another clinic's) is
	// refused before anything is checked or offered.
	u, e, err := s.waitlistEntry(c, waitlistAction)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	l := httpx.Tr(c)
	spID, start, err := readOfferTime(l, c.FormValue("specialist"), c.FormValue("start"))
	if err == nil {
		err = s.checkOfferTime(ctx, l, u, e, spID, start)
	}
	if err == nil {
		err = localRefusal(l, s.deps.Waitlist.OfferByHand(ctx, u, e.ID, spID, start))
	}
	if err != nil {
		return s.offerRefusal(c, u, e, err)
	}
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	data := map[string]any{"When": httpx.StaffWhen(l, start, loc), "Name": cmp.Or(e.Patient.Name, l.T("records.waitlist.the_patient", nil)),
		"For": offerMinutes(l, s.deps.Waitlist.OfferFor())}
	key := "records.waitlist.offered_notice"
	if sp, err := s.deps.Clinics.Specialist(ctx, spID); err == nil {
		key, data["Specialist"] = "records.waitlist.offered_notice_with", sp.Name
	}
	s.deps.Sessions.Put(ctx, waitlistNoticeKey, l.T(key, data))
	return httpx.Redirect(c, "/staff/waitlist")
}

// localRefusal is the waitlist service's refusal said in l's language (its
// own messages are English); other errors go on as they are.
func localRefusal(l *i18n.Localizer, err error) error {
	ae := apperr.As(err)
	if ae == nil || ae.Kind == apperr.Internal {
		return err
	}
	local := *ae
	local.Message = httpx.LocalMessage(l, ae.Code, ae.Message, ae.Details)
	return &local
}

// readOfferTime reads the specialist and the start an offer form names.
func readOfferTime(l *i18n.Localizer, sp, start string) (uuid.UUID, time.Time, error) {
	id, err := uuid.Parse(sp)
	if err != nil {
		return uuid.Nil, time.Time{}, apperr.Invalidf("specialistId", "%s", l.T("records.waitlist.choose_time", nil))
	}
	t, err := time.Parse(time.RFC3339, start)
	if err != nil {
		return uuid.Nil, time.Time{}, apperr.Invalidf("start", "start must be a time in RFC 3339 (2026-03-15T09:00:00Z).")
	}
	return id, t, nil
}

// checkOfferTime refuses a time that is not one of the entry's free
// times: past, outside its days, or not a free time of the specialist
// that its type fits (booked: SLOT_TAKEN). A time someone holds is the
// service's to refuse (SLOT_HELD).
func (s *FrontDesk) checkOfferTime(ctx context.Context, l *i18n.Localizer, u staff.User, e waitlist.Entry, spID uuid.UUID, start time.Time) error {
	if !start.After(time.Now()) {
		return apperr.Invalidf("start", "%s", l.T("records.waitlist.ahead", nil))
	}
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	first, last := availability.DateOf(e.From, time.UTC), availability.DateOf(e.To, time.UTC)
	if d := availability.DateOf(start, loc); d.Before(first) || last.Before(d) {
		return apperr.Invalidf("start", "%s", l.T("records.waitlist.only", map[string]any{"Days": entryDays(l, e)}))
	}
	slot, err := s.desk().Slot(ctx, u, spID, start)
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.NotFound {
		return apperr.Invalidf("specialistId", "%s", l.T("records.waitlist.no_specialist", nil))
	}
	if err != nil {
		return err
	}
	if !slot.Fits(e.AppointmentTypeID) {
		return apperr.New(apperr.Conflict, apperr.CodeSlotUnavailable, l.T("records.waitlist.no_fit", map[string]any{
			"Type": entryType(s.typeNamesOf(ctx, u.ClinicID, l), e), "When": httpx.StaffWhen(l, start, loc), "Specialist": slot.Specialist.Name}))
	}
	return nil
}

// offerRefusal shows why an offer to entry e was refused on its page of
// times; an internal error or a refusal to the viewer goes to the error
// page.
func (s *FrontDesk) offerRefusal(c echo.Context, u staff.User, e waitlist.Entry, err error) error {
	ae := apperr.As(err)
	if ae == nil || ae.Kind == apperr.Internal || ae.Kind == apperr.Forbidden {
		return err
	}
	ctx := c.Request().Context()
	vm, vmErr := s.waitlistOfferVM(ctx, c, u, e, c.FormValue("day"))
	if vmErr != nil {
		if vm, vmErr = s.waitlistOfferVM(ctx, c, u, e, ""); vmErr != nil {
			return vmErr
		}
	}
	vm.Error, vm.ErrorField = ae.Message, ae.Field()
	httpx.SetRetryAfter(c, err)
	return httpx.Render(c, httpx.StatusOf[ae.Kind], views.Page(httpx.Tr(c).T("records.waitlist.offer", nil), s.deps.Assets), views.WaitlistOffer(vm))
}

// waitlistOfferVM is the page of the entry's free times on dayParam
// (YYYY-MM-DD; "": the first of its days still ahead).
func (s *FrontDesk) waitlistOfferVM(ctx context.Context, c echo.Context, u staff.User, e waitlist.Entry, dayParam string) (views.WaitlistOfferVM, error) {
	if err := s.record(c, privacy.PageWaitlistOffer, nil, []uuid.UUID{e.ID}); err != nil {
		return views.WaitlistOfferVM{}, err
	}
	l := httpx.Tr(c)
	vm := views.WaitlistOfferVM{
		Nav: s.kit.Nav(c, "waitlist"), Name: e.Patient.Name, TypeName: entryType(s.typeNamesOf(ctx, u.ClinicID, l), e),
		Days: entryDays(l, e), Times: entryTimes(l, e), Asked: cmp.Or(e.SpecialistName, l.T("records.any", nil)),
		ActionURL: "/staff/waitlist/" + e.ID.String() + "/offer", BackURL: "/staff/waitlist", OfferFor: offerMinutes(l, s.deps.Waitlist.OfferFor()),
	}
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return vm, err
	}
	if !e.Confirmed() {
		vm.Offered = l.T("records.waitlist.not_confirmed", map[string]any{"Name": e.Patient.Name})
		return vm, nil
	}
	if e.OfferID != uuid.Nil {
		vm.Offered = l.T("records.waitlist.already", map[string]any{"Name": e.Patient.Name,
			"Start": httpx.StaffWhen(l, e.OfferStart, loc), "Until": l.Time(e.OfferUntil.In(loc))})
		return vm, nil
	}
	first, last := availability.DateOf(e.From, time.UTC), availability.DateOf(e.To, time.UTC)
	if today := availability.DateOf(time.Now(), loc); first.Before(today) {
		first = today
	}
	vm.Min, vm.Max = first.String(), last.String()
	if last.Before(first) {
		vm.Offered = l.T("records.waitlist.over", map[string]any{"Name": e.Patient.Name})
		return vm, nil
	}
	day := first
	if dayParam != "" {
		if day, err = availability.ParseDate(dayParam); err != nil || day.Before(first) || last.Before(day) {
			return vm, apperr.Invalidf("day", "%s", l.T("records.waitlist.choose_day", map[string]any{"From": first.String(), "To": last.String()}))
		}
	}
	vm.Day = day.String()
	base := vm.ActionURL + "?day="
	if first.Before(day) {
		vm.PrevURL = base + day.AddDays(-1).String()
	}
	if day.Before(last) {
		vm.NextURL = base + day.AddDays(1).String()
	}
	vm.Groups, err = s.offerGroups(ctx, l, u.ClinicID, e, day, loc)
	return vm, err
}

// offerGroups are the free times of the entry's type on day, per active
// specialist who performs it: the one the patient asked for first.
func (s *FrontDesk) offerGroups(ctx context.Context, l *i18n.Localizer, clinicID uuid.UUID, e waitlist.Entry, day availability.Date, loc *time.Location) ([]views.WaitlistOfferGroupVM, error) {
	types, err := s.deps.Clinics.AppointmentTypes(ctx, clinicID)
	if err != nil {
		return nil, err
	}
	t, _ := typeOf(types, e.AppointmentTypeID)
	if len(t.Specialists) == 0 {
		return nil, nil
	}
	res, err := s.deps.Slots.Free(ctx, slots.Request{AppointmentTypeID: e.AppointmentTypeID, From: day, To: day})
	if err != nil {
		return nil, err
	}
	sps := slices.Clone(t.Specialists)
	slices.SortStableFunc(sps, func(a, b clinics.Specialist) int {
		return boolOrder(b.ID == e.SpecialistID) - boolOrder(a.ID == e.SpecialistID)
	})
	out := make([]views.WaitlistOfferGroupVM, 0, len(sps))
	for _, sp := range sps {
		g := views.WaitlistOfferGroupVM{Specialist: sp.Name, SpecialistID: sp.ID.String(), Asked: sp.ID == e.SpecialistID}
		for _, sl := range res.Slots {
			if !slices.Contains(sl.SpecialistIDs, sp.ID) {
				continue
			}
			local := sl.Start.In(loc)
			g.Times = append(g.Times, views.WaitlistTimeVM{
				Label: l.Time(local), Start: sl.Start.UTC().Format(time.RFC3339), Outside: !waitlist.InParts(local, e.Times),
				AriaLabel: l.T("records.waitlist.offer_aria", map[string]any{"Time": l.Time(local), "Day": l.LongDay(local), "Specialist": sp.Name}),
			})
		}
		out = append(out, g)
	}
	return out, nil
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// offerMinutes is how long an offer stands, in words.
func offerMinutes(l *i18n.Localizer, d time.Duration) string {
	n := int(d.Round(time.Minute) / time.Minute)
	if n == 1 {
		return l.T("records.waitlist.minute", nil)
	}
	return l.T("records.waitlist.minutes", map[string]any{"Count": strconv.Itoa(n)})
}
