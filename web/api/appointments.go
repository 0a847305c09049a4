package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/idempotency"
	"github.com/clinic/booking/web/httpx"
)

type bookBody struct {
	HoldID   string          `json:"holdId"`
	ClientID string          `json:"clientId"`
	Patient  booking.Patient `json:"patient"`
}

type bookAnswer struct {
	Appointment booking.Booking `json:"appointment"`
	ManageToken string          `json:"manageToken"`
}

// Book answers POST /v1/appointment-types/:id/book, honouring Idempotency-Key.
func (s *Endpoints) Book(c echo.Context) error {
	typeID, err := httpx.UUIDParam(c.Param("id"), "id")
	if err != nil {
		return err
	}
	var body bookBody
	if err := httpx.BindJSON(c, &body); err != nil {
		return err
	}
	canonical, _ := json.Marshal(body)
	res, err := s.deps.Checkout.Confirm(c.Request().Context(), checkout.ConfirmRequest{
		AppointmentTypeID: typeID,
		HoldID:            body.HoldID,
		ClientID:          body.ClientID,
		Patient:           body.Patient,
		Language:          apiLanguage(c.Request()),
		IdempotencyKey:    c.Request().Header.Get("Idempotency-Key"),
		RequestHash:       idempotency.HashRequest([]byte(typeID.String()), canonical),
		Address:           c.RealIP(),
		VerificationToken: c.Request().Header.Get(VerificationTokenHeader),
		Encode: func(conf booking.Confirmation) (int, []byte, error) {
			b, err := json.Marshal(bookAnswer{Appointment: conf.Booking, ManageToken: conf.ManageToken})
			return http.StatusCreated, b, err
		},
	})
	s.kit.Metrics.Outcome(c.Request().Context(), "booking", err)
	if err != nil {
		return err
	}
	if res.Replay != nil {
		c.Response().Header().Set("Idempotent-Replayed", "true")
		var stored bookAnswer
		if json.Unmarshal(res.Replay.Body, &stored) == nil && stored.Appointment.Version > 0 {
			setETag(c, stored.Appointment)
		}
		return c.JSONBlob(res.Replay.Status, res.Replay.Body)
	}
	// The same bytes as the stored answer: a replay is byte-identical.
	conf := res.Confirmation
	setETag(c, conf.Booking)
	b, err := json.Marshal(bookAnswer{Appointment: conf.Booking, ManageToken: conf.ManageToken})
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusCreated, b)
}

// manageToken reads the token of a manage link: Authorization: Bearer, or ?token=.
func manageToken(c echo.Context) string {
	if h := c.Request().Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimSpace(strings.TrimPrefix(h, "Bearer "))
	}
	return c.QueryParam("token")
}

func setETag(c echo.Context, b booking.Booking) {
	c.Response().Header().Set("ETag", fmt.Sprintf(`"v%d"`, b.Version))
}

// GetAppointment answers GET /v1/appointments/:id
func (s *Endpoints) GetAppointment(c echo.Context) error {
	id, err := httpx.UUIDParam(c.Param("id"), "id")
	if err != nil {
		return err
	}
	b, err := s.deps.Checkout.Appointment(c.Request().Context(), id, manageToken(c))
	if err != nil {
		return err
	}
	setETag(c, b)
	return c.JSON(http.StatusOK, map[string]any{"appointment": b})
}

// CancelAppointment answers DELETE /v1/appointments/:id
func (s *Endpoints) CancelAppointment(c echo.Context) error {
	id, err := httpx.UUIDParam(c.Param("id"), "id")
	if err != nil {
		return err
	}
	b, err := s.deps.Checkout.CancelAppointment(c.Request().Context(), id, manageToken(c), c.QueryParam("reason"))
	if err != nil {
		return err
	}
	setETag(c, b)
	return c.JSON(http.StatusOK, map[string]any{"appointment": b})
}

type rescheduleBody struct {
	SlotStartDate string `json:"slotStartDate"`
}

// RescheduleAppointment answers PATCH /v1/appointments/:id; If-Match is required.
func (s *Endpoints) RescheduleAppointment(c echo.Context) error {
	if err := httpx.OverLimit(c, s.deps.MoveLimiter, "moves"); err != nil {
		return err
	}
	id, err := httpx.UUIDParam(c.Param("id"), "id")
	if err != nil {
		return err
	}
	ifMatch := c.Request().Header.Get("If-Match")
	if ifMatch == "" {
		return apperr.New(apperr.PreconditionRequired, apperr.CodePreconditionRequired,
			"Send If-Match with the ETag from GET /v1/appointments/{id}, so a change made meanwhile is not overwritten.")
	}
	version, ok := ParseETag(ifMatch)
	if !ok {
		return booking.ErrVersionMismatch(0)
	}
	var body rescheduleBody
	if err := httpx.BindJSON(c, &body); err != nil {
		return err
	}
	start, err := httpx.ParseTime("slotStartDate", body.SlotStartDate)
	if err != nil {
		return err
	}
	token := manageToken(c)
	if err := s.pub.LinkMovesSpent(c, token); err != nil {
		return err
	}
	b, err := s.deps.Checkout.RescheduleAppointment(c.Request().Context(), id, token, version, start)
	if err != nil {
		return err
	}
	s.pub.CountLinkMove(c, token)
	setETag(c, b)
	return c.JSON(http.StatusOK, map[string]any{"appointment": b})
}

// ParseETag reads the version out of an appointment's ETag (W/"v<n>" or "v<n>").
func ParseETag(v string) (int32, bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "W/")
	v = strings.Trim(v, `"`)
	if !strings.HasPrefix(v, "v") {
		return 0, false
	}
	n, err := strconv.ParseInt(v[1:], 10, 32)
	if err != nil || n <= 0 {
		return 0, false
	}
	return int32(n), true
}

// apiLanguage is the language an API client asks the patient's e-mails
// in (Accept-Language); "" leaves it to the clinic's.
func apiLanguage(r *http.Request) string {
	lang, _ := i18n.FromAcceptLanguage(r.Header.Get("Accept-Language"))
	return lang
}
