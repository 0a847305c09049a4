package web

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/views"
)

// kioskDays is how many days the board shows, today included.
const kioskDays = 3

// kioskSource is a clinic's board as a live source: one block per
// appointment type and specialist, with the free times of the next days.
// It has nothing personal: a kiosk shows no patient data and no holds of
// its own.
type kioskSource struct {
	srv    *Server
	clinic clinics.Clinic
}

func (k kioskSource) Key() string         { return "kiosk|" + k.clinic.ID.String() }
func (k kioskSource) ClinicID() uuid.UUID { return k.clinic.ID }

func (k kioskSource) blocks(ctx context.Context) ([]views.KioskBlockVM, error) {
	loc, err := k.srv.deps.Slots.Zone(ctx, k.clinic.ID)
	if err != nil {
		return nil, err
	}
	types, err := k.srv.deps.Clinics.AppointmentTypes(ctx, k.clinic.ID)
	if err != nil {
		return nil, err
	}
	today := availability.DateOf(time.Now(), loc)
	var out []views.KioskBlockVM
	for _, t := range types {
		for _, sp := range t.Specialists {
			b, err := k.block(ctx, loc, today, t, sp)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

func (k kioskSource) block(ctx context.Context, loc *time.Location, today availability.Date, t clinics.AppointmentType, sp clinics.Specialist) (views.KioskBlockVM, error) {
	res, err := k.srv.deps.Slots.Free(ctx, slots.Request{
		AppointmentTypeID: t.ID, SpecialistID: sp.ID, From: today, To: today.AddDays(kioskDays - 1),
	})
	if err != nil {
		return views.KioskBlockVM{}, err
	}
	b := views.KioskBlockVM{
		ID: "kiosk-" + t.ID.String()[:8] + "-" + sp.ID.String()[:8], TypeName: t.Name, Specialist: sp.Name,
		Days: make([]views.KioskDayVM, kioskDays),
	}
	for i := range b.Days {
		d := today.AddDays(i)
		label := time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, loc).Format("Mon 2 Jan")
		if i == 0 {
			label = "Today"
		}
		b.Days[i].Label = label
	}
	for _, sl := range res.Slots {
		i := availability.DaysBetween(today, availability.DateOf(sl.Start, loc))
		if i >= 0 && i < kioskDays {
			b.Days[i].Times = append(b.Days[i].Times, sl.Start.In(loc).Format("15:04"))
		}
	}
	return b, nil
}

func (k kioskSource) Snapshot(ctx context.Context) ([]fragment, func(string) ([]fragment, bool), error) {
	blocks, err := k.blocks(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := make([]fragment, len(blocks))
	for i, b := range blocks {
		var buf bytes.Buffer
		if err := views.KioskBlock(b, true).Render(ctx, &buf); err != nil {
			return nil, nil, err
		}
		out[i] = fragment{ID: b.ID, HTML: buf.String()}
	}
	return out, func(string) ([]fragment, bool) { return nil, false }, nil
}

// kioskClinic is the board's clinic. Once an admin has made device tokens
// for a clinic, its board opens only with one of them (?device=); before
// that it is public, having nothing private on it.
func (s *Server) kioskClinic(c echo.Context) (clinics.Clinic, error) {
	ctx := c.Request().Context()
	clinic, err := s.deps.Clinics.BySlug(ctx, c.Param("slug"))
	if err != nil {
		return clinics.Clinic{}, err
	}
	if ok, err := s.deps.Staff.KioskAllowed(ctx, clinic.ID, c.QueryParam("device")); err != nil {
		return clinics.Clinic{}, err
	} else if !ok {
		return clinics.Clinic{}, apperr.New(apperr.Forbidden, apperr.CodeKioskToken, "This screen needs a valid device link from the clinic's staff.")
	}
	return clinic, nil
}

// kiosk answers GET /kiosk/:slug: the read-only board for a waiting room.
func (s *Server) kiosk(c echo.Context) error {
	ctx := c.Request().Context()
	clinic, err := s.kioskClinic(c)
	if err != nil {
		return err
	}
	src := kioskSource{srv: s, clinic: clinic}
	blocks, err := src.blocks(ctx)
	if err != nil {
		return err
	}
	loc, _ := s.deps.Slots.Zone(ctx, clinic.ID)
	now := time.Now().In(loc)
	vm := views.KioskVM{
		Clinic: clinicVM(clinic), Clock: now.Format("15:04"), Today: now.Format("Monday 2 January"),
		StreamURL: "/kiosk/" + clinic.Slug + "/live" + deviceQuery(c.QueryParam("device")), Blocks: blocks,
	}
	// No session, no cookies: a kiosk is nobody.
	return render(c, http.StatusOK, views.Page(clinic.Name+" · free appointments", s.deps.Assets), views.Kiosk(vm))
}

// kioskStream answers GET /kiosk/:slug/live.
func (s *Server) kioskStream(c echo.Context) error {
	clinic, err := s.kioskClinic(c)
	if err != nil {
		return err
	}
	// A revoked token (or a first token made for a board that was public)
	// ends the board's stream; the board then shows why on reload. Boards
	// are public: the boards of one clinic and token share one check.
	device := c.QueryParam("device")
	key := accessKey("kiosk", clinic.ID.String(), device)
	check := func(ctx context.Context) (bool, error) { return s.deps.Staff.KioskAllowed(ctx, clinic.ID, device) }
	access := func(ctx context.Context) bool { return s.access.allowed(ctx, key, check) }
	return s.serveHTMLStream(c, kioskSource{srv: s, clinic: clinic}, "kiosk:"+clinic.ID.String(), viewer{access: access})
}

func deviceQuery(token string) string {
	if token == "" {
		return ""
	}
	return "?device=" + url.QueryEscape(token)
}
