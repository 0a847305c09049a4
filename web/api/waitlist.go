package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/web/httpx"
)

// POST /v1/appointment-types/{id}/waitlist: a patient joins the waitlist
// of a type through the API, within the pages' limits.

type joinBody struct {
	ClientID     string          `json:"clientId"`
	From         string          `json:"from"`
	To           string          `json:"to"`
	SpecialistID string          `json:"specialistId"`
	Times        []string        `json:"times"`
	Patient      booking.Patient `json:"patient"`
}

// entryJSON is a place on the waitlist as the API tells it.
type entryJSON struct {
	ID                uuid.UUID  `json:"id"`
	AppointmentTypeID uuid.UUID  `json:"appointmentTypeId"`
	SpecialistID      *uuid.UUID `json:"specialistId"` // null: any specialist
	From              string     `json:"from"`
	To                string     `json:"to"`
	Times             []string   `json:"times"`
	State             string     `json:"state"`
	JoinedAt          string     `json:"joinedAt"`
	Ahead             int        `json:"ahead"`
	URL               string     `json:"url"` // the place's page
	// Confirmed: the patient confirmed the place from the link e-mailed to
	// them; until then it is offered nothing. The token of the answer
	// opens the place but cannot confirm it.
	Confirmed bool `json:"confirmed"`
}

type joinAnswer struct {
	Entry entryJSON `json:"entry"`
	Token string    `json:"token"`
}

func entryView(e waitlist.Entry, url string) entryJSON {
	v := entryJSON{
		ID: e.ID, AppointmentTypeID: e.AppointmentTypeID,
		From: e.From.Format(time.DateOnly), To: e.To.Format(time.DateOnly), Times: e.Times,
		State: e.State, Confirmed: e.Confirmed(), JoinedAt: e.JoinedAt.UTC().Format(time.RFC3339Nano), Ahead: e.Ahead, URL: url,
	}
	if e.SpecialistID != uuid.Nil {
		id := e.SpecialistID
		v.SpecialistID = &id
	}
	if v.Times == nil {
		v.Times = []string{}
	}
	return v
}

// apiJoinWaitlist answers POST /v1/appointment-types/:id/waitlist: 201
// with the place, not confirmed, and the token of its page (shown once).
// The patient confirms it from the e-mail the join sends, as a page's
// patient does: a client that could confirm with the token would confirm
// any address it typed. The limits are
// the form's: per client address first, then per clinic and e-mail
// address.
func (s *Endpoints) JoinWaitlist(c echo.Context) error {
	ctx := c.Request().Context()
	typeID, err := httpx.UUIDParam(c.Param("id"), "id")
	if err != nil {
		return err
	}
	var body joinBody
	if err := bindStrictJSON(c, &body); err != nil {
		return err
	}
	if err := checkout.ValidateClientID(body.ClientID); err != nil {
		return err
	}
	var specialist uuid.UUID
	if body.SpecialistID != "" {
		if specialist, err = httpx.UUIDParam(body.SpecialistID, "specialistId"); err != nil {
			return err
		}
	}
	clinicID, err := s.deps.Slots.ClinicOfType(ctx, typeID)
	if err != nil {
		return err
	}
	clinic, err := s.deps.Clinics.ByID(ctx, clinicID)
	if err != nil {
		return err
	}
	if err := s.pub.JoinLimits(c, clinic, body.Patient.Email); err != nil {
		return err
	}
	e, token, err := s.deps.Waitlist.Join(ctx, waitlist.JoinRequest{
		ClinicID: clinic.ID, AppointmentTypeID: typeID, SpecialistID: specialist,
		From: body.From, To: body.To, Times: body.Times, Patient: body.Patient,
		ClientID: body.ClientID, Language: apiLanguage(c.Request()),
	})
	if err != nil {
		return err
	}
	s.pub.CountJoin(c, clinic, body.Patient.Email)
	if read, _, err := s.deps.Waitlist.ByToken(ctx, clinic.ID, token); err == nil {
		e = read // with its place in the list
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	url := s.kit.PublicBase(c) + "/c/" + clinic.Slug + "/waitlist/" + token
	return c.JSON(http.StatusCreated, joinAnswer{Entry: entryView(e, url), Token: token})
}

// bindStrictJSON is BindJSON that also refuses a field the body's type
// does not have (a misspelt "speciallistId" must not silently mean any
// specialist), naming it.
func bindStrictJSON(c echo.Context, dst any) error {
	req := c.Request()
	raw, err := io.ReadAll(io.LimitReader(req.Body, httpx.MaxBody+1))
	if err != nil {
		return apperr.Invalidf("body", "The request body could not be read.")
	}
	req.Body = io.NopCloser(bytes.NewReader(raw))
	if err := httpx.BindJSON(c, dst); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			name = strings.Trim(name, `"`)
			return apperr.Invalidf(name, "%s is not a field of this request.", name)
		}
		return apperr.Invalidf("body", "The body is not valid JSON: %s.", err.Error())
	}
	return nil
}
