package web

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
)

type holdJSON struct {
	HoldID        string    `json:"holdId"`
	SpecialistID  uuid.UUID `json:"specialistId"`
	SlotStartDate string    `json:"slotStartDate"`
	SlotEndDate   string    `json:"slotEndDate"`
	HoldExpiresAt string    `json:"holdExpiresAt"`
}

func holdView(h holds.Hold) holdJSON {
	return holdJSON{
		HoldID:        h.HoldID,
		SpecialistID:  h.SpecialistID,
		SlotStartDate: h.Start.UTC().Format(time.RFC3339),
		SlotEndDate:   h.End.UTC().Format(time.RFC3339),
		HoldExpiresAt: h.ExpiresAt.UTC().Format(time.RFC3339Nano),
	}
}

type createHoldBody struct {
	AppointmentTypeID string `json:"appointmentTypeId"`
	SlotStartDate     string `json:"slotStartDate"`
	SpecialistID      string `json:"specialistId"`
	ClientID          string `json:"clientId"`
}

// createHold answers POST /v1/holds.
func (s *Server) createHold(c echo.Context) error {
	var body createHoldBody
	if err := bindJSON(c, &body); err != nil {
		return err
	}
	typeID, err := uuidParam(body.AppointmentTypeID, "appointmentTypeId")
	if err != nil {
		return err
	}
	start, err := parseTime("slotStartDate", body.SlotStartDate)
	if err != nil {
		return err
	}
	var specialist uuid.UUID
	if body.SpecialistID != "" {
		if specialist, err = uuidParam(body.SpecialistID, "specialistId"); err != nil {
			return err
		}
	}
	// The per-address limit counts the claims that reach Redis: a claim
	// the live view refuses costs what a page view does, and is answered
	// without counting (or a round trip to count it).
	limit := func() error {
		if l := s.deps.APIHoldLimiter; l != nil {
			return overLimit(c, l, "holds")
		}
		return nil
	}
	h, err := s.claim(c.Request().Context(), checkout.HoldRequest{
		AppointmentTypeID: typeID, Start: start, SpecialistID: specialist, ClientID: body.ClientID,
		Address: c.RealIP(),
	}, limit)
	s.metrics.outcome(c.Request().Context(), "hold", err)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, holdView(h))
}

type heartbeatBody struct {
	HoldID   string `json:"holdId"`
	ClientID string `json:"clientId"`
}

// heartbeatHold answers PATCH /v1/holds.
func (s *Server) heartbeatHold(c echo.Context) error {
	if err := s.overHeartbeatLimit(c, "", ""); err != nil {
		return err
	}
	var body heartbeatBody
	if err := bindJSON(c, &body); err != nil {
		return err
	}
	if err := s.overHeartbeatLimit(c, body.HoldID, body.ClientID); err != nil {
		return err
	}
	h, err := s.deps.Checkout.Heartbeat(c.Request().Context(), body.HoldID, body.ClientID)
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Gone {
		return c.JSON(http.StatusGone, map[string]any{
			"ok":    false,
			"error": errorDetail{Code: ae.Code, Message: ae.Message, Details: map[string]any{}},
		})
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"ok": true, "holdExpiresAt": h.ExpiresAt.UTC().Format(time.RFC3339Nano)})
}

// overHeartbeatLimit counts a heartbeat: with holdID "" against the
// client's address, otherwise against the hold as beaten by this client id
// (ids that are not hold ids are refused later, uncounted). Hold ids are
// public (every page's stream carries them), so the count is the hold's
// and the caller's together: a stranger beating someone's hold spends
// only his own allowance, never the owner's. A page beats every 10 s;
// these limits are for clients that beat in a loop.
func (s *Server) overHeartbeatLimit(c echo.Context, holdID, clientID string) error {
	if holdID == "" {
		if l := s.deps.HeartbeatIPLimiter; l != nil {
			return overLimit(c, l, "heartbeats")
		}
		return nil
	}
	if l := s.deps.HeartbeatHoldLimiter; l != nil {
		if _, ok := holds.ParseHoldID(holdID); ok {
			return overLimitFor(c, l, holdID+":"+holds.ClientHash(clientID), "heartbeats", "hold")
		}
	}
	return nil
}

type releaseBody struct {
	ClientID string `json:"clientId"`
}

// releaseHold answers DELETE /v1/holds/:holdId, with the clientId in the
// query (?clientId=) or a JSON body {"clientId": ...}.
func (s *Server) releaseHold(c echo.Context) error {
	clientID := c.QueryParam("clientId")
	if clientID == "" && c.Request().ContentLength != 0 {
		var body releaseBody
		if err := bindJSON(c, &body); err != nil {
			return err
		}
		clientID = body.ClientID
	}
	if err := s.deps.Checkout.Release(c.Request().Context(), c.Param("holdId"), clientID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// holdEvent is the event of a hold this process claimed for clientID, as
// the claim publishes it.
func holdEvent(h holds.Hold, clientID string) holds.Event {
	return holds.Event{Type: holds.EventHold, Hold: h, ClientHash: holds.ClientHash(clientID)}
}

// claim takes a hold for a patient, from the API or a page. A claim of a
// time the live view of its week shows held by others is refused from the
// view; a claim of a time another claim from this instance is under way
// for waits for that one's answer first, and is then refused from the view
// if that one took the time. Any other claim goes to Redis, and a hold it
// gets is in this instance's views before the answer leaves. A claim
// refused from the view is told SLOT_HELD even when the client is also in
// its booking cooldown or at its quota of holds: the time is held either
// way, and a claim of a free time still meets both in Redis. limit, when
// not nil, is the caller's rate limit, asked once the view has not
// refused the claim.
func (s *Server) claim(ctx context.Context, req checkout.HoldRequest, limit func() error) (holds.Hold, error) {
	if err := checkout.ValidateClientID(req.ClientID); err != nil {
		return holds.Hold{}, err
	}
	viewed, err := s.heldInView(ctx, req)
	if err != nil {
		return holds.Hold{}, err
	}
	if limit != nil {
		if err := limit(); err != nil {
			return holds.Hold{}, err
		}
	}
	if viewed {
		leave, err := s.claims.Enter(ctx, req, func() error { _, err := s.heldInView(ctx, req); return err })
		if err != nil {
			return holds.Hold{}, err
		}
		defer leave() // after the hold is in the views
	}
	h, err := s.deps.Checkout.Hold(ctx, req)
	if err == nil {
		s.deps.Views.Applied(holdEvent(h, req.ClientID))
	}
	return h, err
}

// claimLineWait is the longest a claim waits behind another of its time.
const claimLineWait = 250 * time.Millisecond

// heldInView refuses a claim (SLOT_HELD) from the live view of its week,
// when this instance keeps one and it shows every specialist who could
// take the time held by another client: the claim would be refused, and
// is, without a round trip to Redis (in a rush most claims are of times
// just taken). A nil error: the claim is to be asked of Redis; viewed
// says whether there was a view to ask.
func (s *Server) heldInView(ctx context.Context, req checkout.HoldRequest) (viewed bool, err error) {
	// From memory only: this runs before the rate limit, so an unknown
	// type must not cost a query.
	clinicID, known := s.deps.Slots.KnownClinicOfType(req.AppointmentTypeID)
	if !known {
		return false, nil
	}
	loc, err := s.deps.Slots.Zone(ctx, clinicID)
	if err != nil {
		return false, nil
	}
	monday := availability.DateOf(req.Start, loc).WeekStart()
	v := s.deps.Views.Get(grid.View{AppointmentTypeID: req.AppointmentTypeID, SpecialistID: req.SpecialistID, From: monday, To: monday.AddDays(6)})
	if v == nil {
		return false, nil
	}
	if retry, held := v.HeldByOthers(req.Start.UTC(), holds.ClientHash(req.ClientID), time.Now()); held {
		return true, apperr.SlotHeld(retry)
	}
	return true, nil
}
