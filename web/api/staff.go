package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/web/httpx"
)

// The staff JSON API: the same actions as the staff pages, with the row's
// version as ETag and If-Match required on every change (428 without it,
// 412 when stale). It uses the staff session and its CSRF token (header
// X-CSRF-Token).

func versionETag(v int32) string { return fmt.Sprintf(`"v%d"`, v) }

// idIfMatch reads the id in the path and the version the change is made on.
func idIfMatch(c echo.Context) (uuid.UUID, int32, error) {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return uuid.Nil, 0, err
	}
	version, err := ifMatch(c)
	return id, version, err
}

// ifMatch reads the version a change is made on.
func ifMatch(c echo.Context) (int32, error) {
	h := c.Request().Header.Get("If-Match")
	if h == "" {
		return 0, apperr.New(apperr.PreconditionRequired, apperr.CodePreconditionRequired,
			"Send If-Match with the ETag you read, so a change made meanwhile is not overwritten.")
	}
	v, ok := ParseETag(h)
	if !ok {
		return 0, staff.Stale(nil)
	}
	return v, nil
}

type specialistJSON struct {
	ID       string           `json:"id"`
	Name     string           `json:"name"`
	Priority int32            `json:"priority"`
	Active   bool             `json:"active"`
	Version  int32            `json:"version"`
	Hours    []practice.Range `json:"hours"`
}

func (s *Endpoints) specialistJSON(c echo.Context, sp practice.Specialist) error {
	hours, err := s.deps.Practice.WeeklyHours(c.Request().Context(), httpx.StaffUser(c), sp.ID)
	if err != nil {
		return err
	}
	if hours == nil {
		hours = []practice.Range{}
	}
	c.Response().Header().Set("ETag", versionETag(sp.Version))
	return c.JSON(http.StatusOK, specialistJSON{ID: sp.ID.String(), Name: sp.Name, Priority: sp.Priority, Active: sp.Active, Version: sp.Version, Hours: hours})
}

// apiSpecialist answers GET /v1/staff/specialists/:id
func (s *Endpoints) Specialist(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	sp, err := s.deps.Practice.Specialist(c.Request().Context(), httpx.StaffUser(c), id)
	if err != nil {
		return err
	}
	return s.specialistJSON(c, sp)
}

// apiSpecialistUpdate answers PATCH /v1/staff/specialists/:id {name, priority, active}
func (s *Endpoints) SpecialistUpdate(c echo.Context) error {
	id, version, err := idIfMatch(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	cur, err := s.deps.Practice.Specialist(ctx, u, id)
	if err != nil {
		return err
	}
	body := struct {
		Name     *string `json:"name"`
		Priority *int    `json:"priority"`
		Active   *bool   `json:"active"`
	}{}
	if err := httpx.BindJSON(c, &body); err != nil {
		return err
	}
	in := practice.SpecialistInput{Name: cur.Name, Priority: int(cur.Priority), Active: cur.Active, Version: version}
	if body.Name != nil {
		// A NUL ("\u0000" in JSON) is refused here as TextOnly refuses it in
		// a form: PostgreSQL would refuse the text with an error, a 500.
		if !httpx.PlainText(*body.Name) {
			return apperr.Invalidf("name", "The name holds characters that are not allowed.")
		}
		in.Name = *body.Name
	}
	if body.Priority != nil {
		in.Priority = *body.Priority
	}
	if body.Active != nil {
		in.Active = *body.Active
	}
	sp, err := s.deps.Practice.UpdateSpecialist(ctx, u, id, in)
	if err != nil {
		return err
	}
	return s.specialistJSON(c, sp)
}

// apiHours answers PUT /v1/staff/specialists/:id/hours [{weekday, start, end}]
// under the specialist's ETag.
func (s *Endpoints) Hours(c echo.Context) error {
	id, version, err := idIfMatch(c)
	if err != nil {
		return err
	}
	var body struct {
		Hours []struct {
			Weekday int    `json:"weekday"`
			Start   string `json:"start"`
			End     string `json:"end"`
		} `json:"hours"`
	}
	if err := httpx.BindJSON(c, &body); err != nil {
		return err
	}
	var rs []practice.Range
	for i, h := range body.Hours {
		field := fmt.Sprintf("hours[%d]", i)
		if h.Weekday < 0 || h.Weekday > 6 {
			return apperr.Invalidf(field+".weekday", "weekday is 0 (Sunday) to 6 (Saturday).")
		}
		start, err := practice.ParseClock(field+".start", h.Start)
		if err != nil {
			return err
		}
		end, err := practice.ParseClock(field+".end", h.End)
		if err != nil {
			return err
		}
		rs = append(rs, practice.Range{Weekday: time.Weekday(h.Weekday), StartMin: start, EndMin: end})
	}
	sp, err := s.deps.Practice.SetWeeklyHours(c.Request().Context(), httpx.StaffUser(c), id, version, rs)
	if err != nil {
		return err
	}
	return s.specialistJSON(c, sp)
}
