package api

import (
	"cmp"
	"net/http"
	"runtime/trace"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/web/httpx"
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

// CreateHold answers POST /v1/holds.
func (s *Endpoints) CreateHold(c echo.Context) error {
	var body createHoldBody
	if err := httpx.BindJSON(c, &body); err != nil {
		return err
	}
	typeID, err := httpx.UUIDParam(body.AppointmentTypeID, "appointmentTypeId")
	if err != nil {
		return err
	}
	start, err := httpx.ParseTime("slotStartDate", body.SlotStartDate)
	if err != nil {
		return err
	}
	var specialist uuid.UUID
	if body.SpecialistID != "" {
		if specialist, err = httpx.UUIDParam(body.SpecialistID, "specialistId"); err != nil {
			return err
		}
	}
	// One task of the runtime trace per claim: a trace taken during a rush
	// (the server's DEBUG_ADDR) gives each claim's steps and waits.
	ctx, task := trace.NewTask(c.Request().Context(), "hold")
	defer task.End()
	// The per-address limit counts the claims that reach Redis, in the
	// claim's own step: a claim the live view refuses costs what a page
	// view does, and is answered without counting.
	h, err := s.pub.Claim(ctx, checkout.HoldRequest{
		AppointmentTypeID: typeID, Start: start, SpecialistID: specialist, ClientID: body.ClientID,
		Address: c.RealIP(), Limit: s.deps.APIHoldLimiter, LimitKey: httpx.ClientNetwork(c),
	})
	s.kit.Metrics.Outcome(ctx, "hold", err)
	if err != nil {
		return err
	}
	defer trace.StartRegion(ctx, "hold.answer").End()
	return c.JSON(http.StatusCreated, holdView(h))
}

type heartbeatBody struct {
	HoldID   string `json:"holdId"`
	ClientID string `json:"clientId"`
}

// HeartbeatHold answers PATCH /v1/holds.
func (s *Endpoints) HeartbeatHold(c echo.Context) error {
	var body heartbeatBody
	if err := httpx.BindJSON(c, &body); err != nil {
		return cmp.Or(s.pub.OverHeartbeatLimit(c), err)
	}
	h, err := s.pub.Heartbeat(c, body.HoldID, body.ClientID, body.ClientID)
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Gone {
		return c.JSON(http.StatusGone, map[string]any{
			"ok":    false,
			"error": httpx.ErrorDetail{Code: ae.Code, Message: ae.Message, Details: map[string]any{}},
		})
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"ok": true, "holdExpiresAt": h.ExpiresAt.UTC().Format(time.RFC3339Nano)})
}

type releaseBody struct {
	ClientID string `json:"clientId"`
}

// ReleaseHold answers DELETE /v1/holds/:holdId, with the clientId in the
// query (?clientId=) or a JSON body {"clientId": ...}.
func (s *Endpoints) ReleaseHold(c echo.Context) error {
	clientID := c.QueryParam("clientId")
	if clientID == "" && c.Request().ContentLength != 0 {
		var body releaseBody
		if err := httpx.BindJSON(c, &body); err != nil {
			return err
		}
		clientID = body.ClientID
	}
	if err := s.deps.Checkout.Release(c.Request().Context(), c.Param("holdId"), clientID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
