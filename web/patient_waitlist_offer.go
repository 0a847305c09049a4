package web

// A time offered from the waitlist, opened by the link of its e-mail: the
// time and how long it is kept, a button that books it and one that
// passes it on; once the offer is over, what became of it.

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/views"
)

// openOffer is openLink for an offer's link; the link of a place alone
// is no offer's (404).
func (s *Server) openOffer(c echo.Context) (waitLink, error) {
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
func (s *Server) offerVM(c echo.Context, w waitLink) views.TimeOfferVM {
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
		Clinic: clinicVM(w.clinic), TypeName: w.entry.TypeName, Specialist: specialist,
		When: localWhen(l, o.Start, w.loc), Ends: l.Time(o.End.In(w.loc)),
		Until:     l.Time(o.ExpiresAt.In(w.loc)) + " (" + w.loc.String() + ")",
		ExpiresAt: o.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		State:     state, PlaceURL: w.placeURL(),
		AcceptURL: w.offerURL() + "/accept", DeclineURL: w.offerURL() + "/decline",
	}
}

func (s *Server) offerPage(c echo.Context, status int, w waitLink, vm views.TimeOfferVM) error {
	return s.page(c, status, w.tr.T("waitlist.offer.title", nil)+" · "+w.clinic.Name, views.TimeOfferPage(vm))
}

// timeOfferPage answers GET /c/:slug/offer/:token.
func (s *Server) timeOfferPage(c echo.Context) error {
	w, err := s.openOffer(c)
	if err != nil {
		return err
	}
	return s.offerPage(c, http.StatusOK, w, s.offerVM(c, w))
}

// acceptOffer answers POST /c/:slug/offer/:token/accept: the time is
// booked through the booking gate, and the patient sees the booking's
// page as after any booking. A second click, or one after the offer
// ended, gets the offer's page: booked, or over (410).
func (s *Server) acceptOffer(c echo.Context) error {
	w, err := s.openOffer(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	conf, err := s.deps.Waitlist.Accept(ctx, w.clinic.ID, w.token)
	s.metrics.outcome(ctx, "booking", err)
	if err == nil {
		s.deps.Sessions.Put(ctx, "justBooked", conf.Booking.ID.String())
		return redirect(c, "/manage/"+conf.ManageToken)
	}
	code := apperr.CodeOf(err)
	if code != apperr.CodeSlotTaken && code != apperr.CodeOfferOver {
		return err
	}
	// Taken by this very offer (a second click), or over: the offer says.
	_, o, rerr := s.deps.Waitlist.ByToken(ctx, w.clinic.ID, w.token)
	if rerr != nil {
		return err
	}
	w.offer = o
	vm := s.offerVM(c, w)
	switch {
	case o.State == waitlist.OfferAccepted:
		vm.Notice = w.tr.T("waitlist.offer.already_booked", nil)
		return s.offerPage(c, http.StatusOK, w, vm)
	case code == apperr.CodeOfferOver:
		vm.State = offerDone
		return s.offerPage(c, http.StatusGone, w, vm)
	}
	return err
}

// declineOffer answers POST /c/:slug/offer/:token/decline: the time goes
// to the next waiting patient, and this one keeps their place, which the
// page of the place then shows. Passing on an offer that is over changes
// nothing.
func (s *Server) declineOffer(c echo.Context) error {
	w, err := s.openOffer(c)
	if err != nil {
		return err
	}
	if err := s.deps.Waitlist.Decline(c.Request().Context(), w.clinic.ID, w.token); err != nil {
		return err
	}
	if w.offerOpen() {
		s.deps.Sessions.Put(c.Request().Context(), placeNoticeKey, w.tr.T("waitlist.place.passed_notice", nil))
	}
	return redirect(c, w.placeURL())
}
