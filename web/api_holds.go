package web

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/checkout"
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
	if l := s.deps.APIHoldLimiter; l != nil {
		if err := overLimit(c, l, "holds"); err != nil {
			return err
		}
	}
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
	h, err := s.deps.Checkout.Hold(c.Request().Context(), checkout.HoldRequest{
		AppointmentTypeID: typeID, Start: start, SpecialistID: specialist, ClientID: body.ClientID,
		Address: c.RealIP(),
	})
	s.metrics.outcome(c.Request().Context(), "hold", err)
	if err != nil {
		return err
	}
	// A read on this instance right after the answer must see the hold,
	// even before its event comes back from Redis.
	s.deps.Views.Applied(holdEvent(h, body.ClientID))
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
