package waitpage

import (
	"cmp"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// A patient's place on the waitlist, opened by the link its e-mails carry
// (or the page shown on joining): what they wait for, how many wait
// before them, where the place stands, and a way to leave; opened by an
// e-mailed link while the place is not confirmed, a button that confirms
// it. Confirming is a POST: mail scanners open the links of an e-mail,
// but press no buttons. The form carries no token of its own, as the
// other forms of a patient's link: the link's secret in its address is
// what a forged post could not know.

// placeNoticeKey keeps the outcome of leaving or passing a time on for
// the page of the place it redirects to.
const placeNoticeKey = "placeNotice"

// waitLink is a waitlist link opened: the clinic of its page, the entry,
// and for an offer's link the offer (else a zero Offer).
type waitLink struct {
	clinic clinics.Clinic
	tr     *i18n.Localizer
	loc    *time.Location
	token  string
	entry  waitlist.Entry
	offer  waitlist.Offer
}

func (w waitLink) placeURL() string { return "/c/" + w.clinic.Slug + "/waitlist/" + w.token }

func (w waitLink) offerURL() string { return "/c/" + w.clinic.Slug + "/offer/" + w.token }

// offerOpen says the link's offer stands: open and not run out (the job
// that ends it may not have run yet).
func (w waitLink) offerOpen() bool {
	return w.offer.State == waitlist.OfferOpen && time.Now().Before(w.offer.ExpiresAt)
}

// openLink reads the link of the page, after counting the request against
// the client address's allowance of waitlist links (a link is a secret
// worth guessing). Every answer is private: it carries the link.
func (s *WaitPages) openLink(c echo.Context) (waitLink, error) {
	privatePage(c)
	ctx := c.Request().Context()
	clinic, err := s.deps.Clinics.BySlug(ctx, c.Param("slug"))
	if err != nil {
		return waitLink{}, err
	}
	w := waitLink{clinic: clinic, tr: httpx.Speak(c, clinic.Language), token: c.Param("token")}
	if err := httpx.OverLimit(c, s.deps.OfferLimiter, "requests"); err != nil {
		return w, err
	}
	if w.entry, w.offer, err = s.deps.Waitlist.ByToken(ctx, clinic.ID, w.token); err != nil {
		return w, err
	}
	w.loc, err = s.deps.Slots.Zone(ctx, clinic.ID)
	return w, err
}

// placeVM is the page model of entry e, whose page token opens.
func placeVM(clinic clinics.Clinic, l *i18n.Localizer, e waitlist.Entry, token string) views.WaitPlaceVM {
	base := "/c/" + clinic.Slug
	days := l.DayMonthYear(e.From)
	if !e.To.Equal(e.From) {
		days = l.T("waitlist.place.days_range", map[string]any{"From": days, "To": l.DayMonthYear(e.To)})
	}
	live := e.State == waitlist.StateWaiting || e.State == waitlist.StateOffered
	vm := views.WaitPlaceVM{
		Clinic: httpx.ClinicVM(clinic), TypeName: e.TypeIn(l.Lang()), Specialist: cmp.Or(e.SpecialistName, l.T("booking.any", nil)),
		Days: days, Times: placeTimes(l, e.Times), State: e.State, Ahead: e.Ahead, Live: live, Confirmed: e.Confirmed(),
		PlaceURL: base + "/waitlist/" + token, LeaveURL: base + "/waitlist/" + token + "/leave",
		BookURL: base + "/book/" + e.AppointmentTypeID.String(),
	}
	if live && !e.Confirmed() && e.ByMail {
		vm.ConfirmURL = base + "/waitlist/" + token + "/confirm"
	}
	return vm
}

// placeTimes are the parts of the day a place asks for, in words.
func placeTimes(l *i18n.Localizer, times []string) string {
	if len(times) == 0 {
		return l.T("waitlist.any_time", nil)
	}
	words := make([]string, len(times))
	for i, t := range times {
		words[i] = t
		if key, ok := dayPartKeys[t]; ok {
			words[i] = l.T(key, nil)
		}
	}
	return strings.Join(words, ", ")
}

// WaitPlacePage answers GET /c/:slug/waitlist/:token: the place. Opened by
// a link of an offer that stands, it leads to the offer.
func (s *WaitPages) WaitPlacePage(c echo.Context) error {
	w, err := s.openLink(c)
	if err != nil {
		return err
	}
	vm := placeVM(w.clinic, w.tr, w.entry, w.token)
	vm.Notice = s.deps.Sessions.PopString(c.Request().Context(), placeNoticeKey)
	if w.offerOpen() {
		vm.OfferURL = w.offerURL()
	}
	return s.kit.Page(c, http.StatusOK, w.tr.T("waitlist.place.title", nil)+" · "+w.clinic.Name, views.WaitPlacePage(vm))
}

// ConfirmWaitPlace answers POST /c/:slug/waitlist/:token/confirm: the
// place is confirmed (from now on it is offered times), and its page
// shows it. Only a link that came by e-mail confirms (403 otherwise); a
// place that ended is 410; confirming twice is no error.
func (s *WaitPages) ConfirmWaitPlace(c echo.Context) error {
	w, err := s.openLink(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.deps.Waitlist.Confirm(ctx, w.clinic.ID, w.token); err != nil {
		return err
	}
	if !w.entry.Confirmed() {
		s.deps.Sessions.Put(ctx, placeNoticeKey, w.tr.T("waitlist.place.confirmed_notice", nil))
	}
	return httpx.Redirect(c, w.placeURL())
}

// LeaveWaitlist answers POST /c/:slug/waitlist/:token/leave: the place
// ends (a time offered to it goes to the next), and the page shows it
// left. Leaving twice is no error.
func (s *WaitPages) LeaveWaitlist(c echo.Context) error {
	w, err := s.openLink(c)
	if err != nil {
		return err
	}
	if err := s.deps.Waitlist.Leave(c.Request().Context(), w.clinic.ID, w.token); err != nil {
		return err
	}
	if w.entry.State == waitlist.StateWaiting || w.entry.State == waitlist.StateOffered {
		s.deps.Sessions.Put(c.Request().Context(), placeNoticeKey, w.tr.T("waitlist.place.left_notice", nil))
	}
	return httpx.Redirect(c, w.placeURL())
}
