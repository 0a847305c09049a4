package web

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/slots"
)

type timeslotJSON struct {
	Start         string      `json:"start"`
	End           string      `json:"end"`
	SpecialistIDs []uuid.UUID `json:"specialistIds"`
}

// timeslots answers GET /v1/appointment-types/:id/timeslots?from=&to=&specialistId=
func (s *Server) timeslots(c echo.Context) error {
	typeID, err := uuidParam(c.Param("id"), "id")
	if err != nil {
		return err
	}
	from, err := dateQuery(c, "from")
	if err != nil {
		return err
	}
	to, err := dateQuery(c, "to")
	if err != nil {
		return err
	}
	var specialist uuid.UUID
	if v := c.QueryParam("specialistId"); v != "" {
		if specialist, err = uuidParam(v, "specialistId"); err != nil {
			return err
		}
	}
	res, err := s.deps.Slots.Free(c.Request().Context(), slots.Request{
		AppointmentTypeID: typeID, From: from, To: to, SpecialistID: specialist,
	})
	if err != nil {
		return err
	}
	out := make([]timeslotJSON, len(res.Slots))
	for i, sl := range res.Slots {
		out[i] = timeslotJSON{
			Start:         sl.Start.UTC().Format(time.RFC3339),
			End:           sl.End.UTC().Format(time.RFC3339),
			SpecialistIDs: sl.SpecialistIDs,
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"timezone": res.Timezone, "timeslots": out})
}

// clinicAppointmentTypes answers GET /v1/clinics/:slug/appointment-types
func (s *Server) clinicAppointmentTypes(c echo.Context) error {
	ctx := c.Request().Context()
	clinic, err := s.deps.Clinics.BySlug(ctx, c.Param("slug"))
	if err != nil {
		return err
	}
	types, err := s.deps.Clinics.AppointmentTypes(ctx, clinic.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{
		"clinic":           map[string]any{"id": clinic.ID, "slug": clinic.Slug, "name": clinic.Name, "timezone": clinic.Timezone},
		"appointmentTypes": types,
	})
}

func uuidParam(v, field string) (uuid.UUID, error) {
	if v == "" {
		return uuid.Nil, apperr.Invalidf(field, "%s is required.", field)
	}
	id, err := uuid.Parse(v)
	if err != nil {
		return uuid.Nil, apperr.Invalidf(field, "%s must be a UUID.", field)
	}
	return id, nil
}

func dateQuery(c echo.Context, name string) (availability.Date, error) {
	v := c.QueryParam(name)
	if v == "" {
		return availability.Date{}, apperr.Invalidf(name, "%s is required (a date, YYYY-MM-DD).", name)
	}
	d, err := availability.ParseDate(v)
	if err != nil {
		return availability.Date{}, apperr.Invalidf(name, "%s must be a date, YYYY-MM-DD; got %q.", name, v)
	}
	return d, nil
}
