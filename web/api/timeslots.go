package api

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/liveview"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/public"
)

// Timeslots answers GET /v1/appointment-types/:id/timeslots?from=&to=&specialistId=
func (s *Endpoints) Timeslots(c echo.Context) error {
	typeID, err := httpx.UUIDParam(c.Param("id"), "id")
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
		if specialist, err = httpx.UUIDParam(v, "specialistId"); err != nil {
			return err
		}
	}
	key := grid.View{AppointmentTypeID: typeID, SpecialistID: specialist, From: from, To: to}
	if v := s.deps.Views.Get(key); v != nil && viewChecked(v, from, to) {
		s.deps.Views.Count("timeslots", true)
		return s.timeslotsAnswer(c, v)
	}
	if vs, ok := s.weekViewsOf(key); ok {
		s.deps.Views.Count("timeslots", true)
		if len(vs) == 1 {
			return s.rangeAnswer(c, vs[0], from, to)
		}
		return weeksAnswer(c, vs, from, to)
	}
	s.deps.Views.Count("timeslots", false)
	ctx := c.Request().Context()
	// A range nobody can book in would be computed and cached for nobody.
	if err := s.deps.Slots.CheckRange(ctx, typeID, from, to); err != nil {
		return err
	}
	if v, sn := s.timeslotsView(ctx, key); v != nil {
		return s.timeslotsAnswer(c, v)
	} else if sn != nil {
		body := appendTimeslots(nil, sn.Timezone, sn.Bookable())
		return public.WriteAnswer(c, echo.MIMEApplicationJSON, liveview.Answer{Body: body, ETag: liveview.ETag(body)})
	}
	res, err := s.deps.Slots.Free(ctx, slots.Request{
		AppointmentTypeID: typeID, From: from, To: to, SpecialistID: specialist,
	})
	if err != nil {
		return err
	}
	body := appendTimeslots(nil, res.Timezone, res.Slots)
	return public.WriteAnswer(c, echo.MIMEApplicationJSON, liveview.Answer{Body: body, ETag: liveview.ETag(body)})
}

// viewChecked reports whether the range of a live view is one CheckRange
// passes: a view kept for a timeslots read was checked before it was
// read; one kept for a page covers its week, which may reach past the
// booking window.
func viewChecked(v *liveview.View, from, to availability.Date) bool {
	meta := public.PageMetaOf(v)
	return meta == nil || (!from.Before(meta.First) && !meta.Last.Before(to))
}

// weekViewsOf are the live views of the weeks (Monday to Sunday) that
// hold key's range, one a week, when each is kept and its window holds
// its part of the range: their slots of those days are the range's.
func (s *Endpoints) weekViewsOf(key grid.View) ([]*liveview.View, bool) {
	if key.To.Before(key.From) || availability.DaysBetween(key.From, key.To) >= slots.MaxRangeDays {
		return nil, false
	}
	var out []*liveview.View
	for monday := key.From.WeekStart(); !key.To.Before(monday); monday = monday.AddDays(7) {
		week := key
		week.From, week.To = monday, monday.AddDays(6)
		if week == key {
			return nil, false // the view itself, had it been kept
		}
		from, to := maxDate(key.From, week.From), minDate(key.To, week.To)
		v := s.deps.Views.Get(week)
		if v == nil || !viewChecked(v, from, to) {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

func maxDate(a, b availability.Date) availability.Date {
	if a.Before(b) {
		return b
	}
	return a
}

func minDate(a, b availability.Date) availability.Date {
	if b.Before(a) {
		return b
	}
	return a
}

// weeksAnswer is the answer for the days from to to of several weeks'
// views, each view's slots in its turn (the weeks follow each other, so
// the slots stay in order). It is encoded on each read: no one view's
// memo can tell when the others change.
func weeksAnswer(c echo.Context, vs []*liveview.View, from, to availability.Date) error {
	var in []availability.Slot
	zone := ""
	for _, v := range vs {
		sn, _ := v.Snapshot()
		zone = sn.Timezone
		in = appendDays(in, sn, from, to)
	}
	body := appendTimeslots(nil, zone, in)
	return public.WriteAnswer(c, echo.MIMEApplicationJSON, liveview.Answer{Body: body, ETag: liveview.ETag(body)})
}

// appendDays appends sn's bookable slots that start on the days from to
// to.
func appendDays(in []availability.Slot, sn *grid.Snapshot, from, to availability.Date) []availability.Slot {
	for _, sl := range sn.Bookable() {
		if d := availability.DateOf(sl.Start, sn.Zone); !d.Before(from) && !to.Before(d) {
			in = append(in, sl)
		}
	}
	return in
}

// rangeAnswer is the answer for the days from to to of a week's view,
// encoded once per change.
func (s *Endpoints) rangeAnswer(c echo.Context, v *liveview.View, from, to availability.Date) error {
	a, err := v.Answer("json|"+from.String()+"|"+to.String(), func(sn *grid.Snapshot) ([]byte, error) {
		return appendTimeslots(nil, sn.Timezone, appendDays(nil, sn, from, to)), nil
	})
	if err != nil {
		return err
	}
	return public.WriteAnswer(c, echo.MIMEApplicationJSON, a)
}

// timeslotsView reads key's grid fit to be kept as a live view, and keeps
// it. Without a view, sn is the reading when there was one (events got in
// the way of keeping it: it is as good an answer as any reading); both are
// nil when this instance keeps no view now.
func (s *Endpoints) timeslotsView(ctx context.Context, key grid.View) (*liveview.View, *grid.Snapshot) {
	clinicID, err := s.deps.Slots.ClinicOfType(ctx, key.AppointmentTypeID)
	if err != nil {
		return nil, nil
	}
	t := s.deps.Views.Begin(clinicID)
	if t == nil {
		return nil, nil
	}
	sn, err := s.deps.Grid.LiveSnapshot(ctx, key)
	if err != nil {
		return nil, nil
	}
	return s.deps.Views.Install(t, sn, nil, time.Time{}), sn
}

// timeslotsAnswer is the answer of a live view, encoded once per change.
func (s *Endpoints) timeslotsAnswer(c echo.Context, v *liveview.View) error {
	a, err := v.Answer("json", func(sn *grid.Snapshot) ([]byte, error) {
		return appendTimeslots(nil, sn.Timezone, sn.Bookable()), nil
	})
	if err != nil {
		return err
	}
	return public.WriteAnswer(c, echo.MIMEApplicationJSON, a)
}

// appendTimeslots writes the timeslots answer,
//
//	{"timezone":"Europe/Berlin","timeslots":[{"start":"2026-11-23T08:00:00Z",
//	 "end":"2026-11-23T08:30:00Z","specialistIds":["…"]}]}
//
// by hand: with reflection, encoding it took a tenth of the server's CPU
// under booking load (a pooled day lists each specialist in every slot).
func appendTimeslots(b []byte, timezone string, list []availability.Slot) []byte {
	size := 64
	for _, sl := range list {
		size += 80 + 39*len(sl.SpecialistIDs)
	}
	b = slices.Grow(b, size)
	tz, _ := json.Marshal(timezone) // an IANA name; Marshal still escapes it properly
	b = append(b, `{"timezone":`...)
	b = append(b, tz...)
	b = append(b, `,"timeslots":[`...)
	// Neighbouring slots mostly list the same specialists in the same
	// order: each position keeps the id it last wrote, encoded.
	var seen []encodedUUID
	for i, sl := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"start":"`...)
		b = sl.Start.UTC().AppendFormat(b, time.RFC3339)
		b = append(b, `","end":"`...)
		b = sl.End.UTC().AppendFormat(b, time.RFC3339)
		b = append(b, `","specialistIds":[`...)
		for j, id := range sl.SpecialistIDs {
			if j > 0 {
				b = append(b, ',')
			}
			if j == len(seen) {
				seen = append(seen, encodedUUID{})
			}
			if e := &seen[j]; !e.ok || e.id != id {
				e.id, e.ok = id, true
				encodeUUID(&e.enc, id)
			}
			b = append(b, '"')
			b = append(b, seen[j].enc[:]...)
			b = append(b, '"')
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}\n"...)
}

type encodedUUID struct {
	id  uuid.UUID
	enc [36]byte
	ok  bool
}

// encodeUUID writes id in its canonical form, as id.String() gives it.
func encodeUUID(buf *[36]byte, id uuid.UUID) {
	hex.Encode(buf[0:8], id[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], id[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], id[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], id[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:], id[10:])
}

// ClinicAppointmentTypes answers GET /v1/clinics/:slug/appointment-types
func (s *Endpoints) ClinicAppointmentTypes(c echo.Context) error {
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
