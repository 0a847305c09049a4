package waitpage

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// A time offered from the waitlist, opened by the link of its e-mail: the
// time and how long it is kept, a button that books it and one that
// passes it on; once the offer is over, what became of it.

// openOffer is openLink for an offer's link; the link of a place alone
// is no offer's (404).
func (s *WaitPages) openOffer(c echo.Context) (waitLink, error) {
	w, err := s.openLink(c)
	if err == nil && w.offer.ID == uuid.Nil {
		err = apperr.NotFoundf("token", "No such offer.")
	}
	return w, err
}

// Where an offer stands, as its page tells it.
const (
	offerShown  = "open"   // it stands: take it or pass it on
	offerBooked = "booked" // taken
	offerDone   = "over"   // ran out, passed on, or withdrawn
)

// offerVM is the page model of the link's offer.
func (s *WaitPages) offerVM(c echo.Context, w waitLink) views.TimeOfferVM {
	o, l := w.offer, w.tr
	state := offerShown
	switch {
	case o.State == waitlist.OfferAccepted:
		state = offerBooked
	case !w.offerOpen():
		state = offerDone
	}
	specialist := ""
	if sp, err := s.deps.Clinics.Specialist(c.Request().Context(), o.SpecialistID); err == nil {
		specialist = sp.Name
	}
	return views.TimeOfferVM{
		Clinic: httpx.ClinicVM(w.clinic), TypeName: w.entry.TypeIn(l.Lang()), Specialist: specialist,
		When: httpx.LocalWhen(l, o.Start, w.loc), Ends: l.Time(o.End.In(w.loc)),
		Until:     l.Time(o.ExpiresAt.In(w.loc)) + " (" + l.Zone(w.loc.String()) + ")",
		ExpiresAt: o.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		State:     state, PlaceURL: w.placeURL(),
		AcceptURL: w.offerURL() + "/accept", DeclineURL: w.offerURL() + "/decline",
	}
}

func (s *WaitPages) offerPage(c echo.Context, status int, w waitLink, vm views.TimeOfferVM) error {
	return s.kit.Page(c, status, w.tr.T("waitlist.offer.title", nil)+" · "+w.clinic.Name, views.TimeOfferPage(vm))
}

// TimeOfferPage answers GET /c/:slug/offer/:token.
func (s *WaitPages) TimeOfferPage(c echo.Context) error {
	w, err := s.openOffer(c)
	if err != nil {
		return err
	}
	return s.offerPage(c, http.StatusOK, w, s.offerVM(c, w))
}

// AcceptOffer answers POST /c/:slug/offer/:token/accept: the time is
// booked through the booking gate, and the patient sees the booking's
// page as after any booking. A refusal the patient can act on, or wait
// out, is told on the offer's page (see offerRefused).
func (s *WaitPages) AcceptOffer(c echo.Context) error {
	w, err := s.openOffer(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	conf, err := s.deps.Waitlist.Accept(ctx, w.clinic.ID, w.token)
	s.kit.Metrics.Outcome(ctx, "booking", err)
	if err == nil {
		s.deps.Sessions.Put(ctx, "justBooked", conf.Booking.ID.String())
		return httpx.Redirect(c, "/manage/"+conf.ManageToken)
	}
	return s.offerRefused(c, w, err)
}

// offerRefused shows why taking the offer failed, on the offer's page
// with the error's status: a cooldown (with Retry-After), a time no
// longer offered, or a detail the booking refused, with the offer as it
// stands. A time taken, or an offer over, is told as the offer stands
// now (offerAfterRefusal). Anything else goes to the error page.
func (s *WaitPages) offerRefused(c echo.Context, w waitLink, err error) error {
	ae := apperr.As(err)
	if ae == nil {
		return err
	}
	switch ae.Code {
	case apperr.CodeCooldown, apperr.CodeSlotUnavailable, apperr.CodeInvalidArgument:
		vm := s.offerVM(c, w)
		vm.Notice = httpx.LocalMessage(w.tr, ae.Code, ae.Message, ae.Details)
		httpx.SetRetryAfter(c, err)
		return s.offerPage(c, httpx.StatusOf[ae.Kind], w, vm)
	case apperr.CodeSlotTaken, apperr.CodeOfferOver:
		return s.offerAfterRefusal(c, w, ae.Code, err)
	}
	return err
}

// offerAfterRefusal reads the offer again after the booking was refused
// with code (SLOT_TAKEN or OFFER_OVER) and shows it: booked by this very
// offer (a second click), over (410), or still open, its time booked by
// someone else (409; the offer stands as it is).
func (s *WaitPages) offerAfterRefusal(c echo.Context, w waitLink, code string, err error) error {
	_, o, rerr := s.deps.Waitlist.ByToken(c.Request().Context(), w.clinic.ID, w.token)
	if rerr != nil {
		return err
	}
	w.offer = o
	vm := s.offerVM(c, w)
	switch {
	case o.State == waitlist.OfferAccepted:
		vm.Notice = w.tr.T("waitlist.offer.already_booked", nil)
		return s.offerPage(c, http.StatusOK, w, vm)
	case code == apperr.CodeOfferOver || !w.offerOpen():
		vm.State = offerDone
		return s.offerPage(c, http.StatusGone, w, vm)
	}
	vm.Notice = w.tr.T("waitlist.offer.taken", nil)
	return s.offerPage(c, http.StatusConflict, w, vm)
}

// DeclineOffer answers POST /c/:slug/offer/:token/decline: the time goes
// to the next waiting patient, and this one keeps their place, which the
// page of the place then shows. Passing on an offer that is over changes
// nothing. The place's page then says what became of the offer, as read
// after the answer: passed on, taken already, or over.
func (s *WaitPages) DeclineOffer(c echo.Context) error {
	w, err := s.openOffer(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := s.deps.Waitlist.Decline(ctx, w.clinic.ID, w.token); err != nil {
		return err
	}
	e, o, err := s.deps.Waitlist.ByToken(ctx, w.clinic.ID, w.token)
	if err != nil {
		return err
	}
	if notice := declinedNotice(w.tr, e, o); notice != "" {
		s.deps.Sessions.Put(ctx, placeNoticeKey, notice)
	}
	return httpx.Redirect(c, w.placeURL())
}

// declinedNotice is what the place's page says of offer o after it was
// passed on: the place is kept (while entry e still waits), the time was
// taken already, or the offer is over.
func declinedNotice(l *i18n.Localizer, e waitlist.Entry, o waitlist.Offer) string {
	switch o.State {
	case waitlist.OfferDeclined:
		if e.State == waitlist.StateWaiting || e.State == waitlist.StateOffered {
			return l.T("waitlist.place.passed_notice", nil)
		}
	case waitlist.OfferAccepted:
		return l.T("waitlist.offer.already_booked", nil)
	case waitlist.OfferExpired, waitlist.OfferWithdrawn:
		return l.T("waitlist.offer.over", nil)
	}
	return ""
}
