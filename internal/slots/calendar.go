package slots

// Reading one type's calendar from PostgreSQL: the skeleton that only
// set-up changes alter, kept in memory, and the overrides and bookings of
// the requested range.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
)

// calendar is one type's data for one request.
type calendar struct {
	clinicID   uuid.UUID
	zoneName   string
	typeRow    db.AppointmentType
	q          availability.Query
	rangeStart time.Time
	rangeEnd   time.Time
}

// skeleton is the part of a type's calendar that only set-up changes
// alter: the type, its clinic's zone, its specialists and their weekly
// hours. It is kept in memory under the clinic's set-up generation, so a
// recomputation after a booking reads only overrides and bookings.
type skeleton struct {
	gen         string    // the set-up generation it was read under; "" never matches
	expires     time.Time // like the memo's entries: a Redis that lost its counters cannot make it live on
	row         db.AppointmentTypeGetWithClinicRow
	loc         *time.Location
	specialists []availability.Specialist // Weekly filled, Overrides empty
	rooms       []availability.Resource   // a type that needs a room: those that can serve it, Closed empty
}

// loadSkeleton reads a skeleton: three queries (five for a type that
// needs a room).
func (s *Service) loadSkeleton(ctx context.Context, typeID uuid.UUID) (*skeleton, error) {
	q := db.New(s.pool)
	row, err := q.AppointmentTypeGetWithClinic(ctx, typeID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apperr.NotFoundf("id", "No such appointment type.")
	}
	if err != nil {
		return nil, fmt.Errorf("load appointment type: %w", err)
	}
	loc, err := loadZone(row.Timezone)
	if err != nil {
		return nil, fmt.Errorf("clinic zone %q: %w", row.Timezone, err)
	}
	s.rememberZone(row.AppointmentType.ClinicID, loc)
	sk := &skeleton{row: row, loc: loc}
	specialists, err := q.SpecialistListByType(ctx, typeID)
	if err != nil {
		return nil, fmt.Errorf("load specialists: %w", err)
	}
	index := make(map[uuid.UUID]int, len(specialists))
	sk.specialists = make([]availability.Specialist, len(specialists))
	for i, sp := range specialists {
		sk.specialists[i] = availability.Specialist{ID: sp.ID, Priority: int(sp.Priority), Active: sp.Active}
		index[sp.ID] = i
	}
	hours, err := q.WeeklyHoursListByType(ctx, typeID)
	if err != nil {
		return nil, fmt.Errorf("load weekly hours: %w", err)
	}
	for _, h := range hours {
		if i, ok := index[h.SpecialistID]; ok {
			sk.specialists[i].Weekly = append(sk.specialists[i].Weekly, availability.WeeklyRange{
				Weekday: time.Weekday(h.Weekday),
				Range:   availability.Range{Start: int(h.StartMin), End: int(h.EndMin)},
			})
		}
	}
	if err := loadRooms(ctx, q, sk); err != nil {
		return nil, err
	}
	return sk, nil
}

// skeletonOf is the type's skeleton from memory when it was read under
// gen, else from PostgreSQL (and remembered when gen is known).
func (s *Service) skeletonOf(ctx context.Context, typeID uuid.UUID, gen string) (*skeleton, error) {
	if gen != "" {
		if v, ok := s.skeletons.Load(typeID); ok && v.(*skeleton).gen == gen && s.now().Before(v.(*skeleton).expires) {
			return v.(*skeleton), nil
		}
	}
	sk, err := s.loadSkeleton(ctx, typeID)
	if err != nil {
		return nil, err
	}
	if gen != "" {
		sk.gen, sk.expires = gen, s.now().Add(s.ttl)
		s.skeletons.Store(typeID, sk)
	}
	return sk, nil
}

// load builds one request's calendar: the skeleton (see skeletonOf; gen is
// the clinic's set-up generation, "" when unknown) and the range's
// overrides.
func (s *Service) load(ctx context.Context, req Request, gen string) (*calendar, error) {
	sk, err := s.skeletonOf(ctx, req.AppointmentTypeID, gen)
	if err != nil {
		return nil, err
	}
	q := db.New(s.pool)
	row, loc := sk.row, sk.loc
	t := row.AppointmentType
	cal := &calendar{
		clinicID: t.ClinicID,
		zoneName: row.Timezone,
		typeRow:  t,
		q: availability.Query{
			Zone:         loc,
			Type:         TypeOf(clinics.TypeFromRow(t)),
			From:         req.From,
			To:           req.To,
			SpecialistID: req.SpecialistID,
		},
	}
	// The skeleton is shared: copy the specialists (their weekly hours
	// are only read) so this request's overrides go on its own copy.
	cal.q.Specialists = slices.Clone(sk.specialists)
	byID := make(map[uuid.UUID]*availability.Specialist, len(cal.q.Specialists))
	for i := range cal.q.Specialists {
		byID[cal.q.Specialists[i].ID] = &cal.q.Specialists[i]
	}
	if req.SpecialistID != uuid.Nil {
		if _, ok := byID[req.SpecialistID]; !ok {
			return nil, apperr.Invalidf("specialistId", "That specialist does not perform %s.", t.Name)
		}
	}

	overrides, err := q.OverrideListByType(ctx, db.OverrideListByTypeParams{
		AppointmentTypeID: t.ID, FromDay: dateTime(req.From), ToDay: dateTime(req.To),
	})
	if err != nil {
		return nil, fmt.Errorf("load overrides: %w", err)
	}
	for _, o := range overrides {
		sp := byID[o.SpecialistID]
		if sp == nil {
			continue
		}
		d := availability.Date{Year: o.Day.Year(), Month: o.Day.Month(), Day: o.Day.Day()}
		n := len(sp.Overrides)
		if n == 0 || sp.Overrides[n-1].Date != d {
			sp.Overrides = append(sp.Overrides, availability.Override{Date: d})
			n++
		}
		ov := &sp.Overrides[n-1]
		if o.Closed {
			ov.Closed = true
		} else {
			ov.Ranges = append(ov.Ranges, availability.Range{Start: int(o.StartMin), End: int(o.EndMin)})
		}
	}

	if err := roomsOfRange(ctx, q, cal, sk, req); err != nil {
		return nil, err
	}

	// Bookings are read for the range with a day of margin on each side:
	// buffers and long appointments reach across midnight.
	cal.rangeStart = time.Date(req.From.Year, req.From.Month, req.From.Day, 0, 0, 0, 0, loc).AddDate(0, 0, -1)
	cal.rangeEnd = time.Date(req.To.Year, req.To.Month, req.To.Day, 0, 0, 0, 0, loc).AddDate(0, 0, 2)
	return cal, nil
}

// loadBusy reads the confirmed bookings, only when the cache missed.
func (s *Service) loadBusy(ctx context.Context, cal *calendar, ignore *Interval) error {
	rows, err := db.New(s.pool).BookingListConfirmedByType(ctx, db.BookingListConfirmedByTypeParams{
		AppointmentTypeID: cal.typeRow.ID, RangeStart: cal.rangeStart, RangeEnd: cal.rangeEnd,
	})
	if err != nil {
		return fmt.Errorf("load bookings: %w", err)
	}
	cal.q.Bookings = make([]availability.Busy, 0, len(rows))
	for _, r := range rows {
		if ignore != nil && r.SpecialistID == ignore.SpecialistID && r.SlotStart.Equal(ignore.Start) && r.SlotEnd.Equal(ignore.End) {
			continue
		}
		cal.q.Bookings = append(cal.q.Bookings, availability.Busy{
			SpecialistID: r.SpecialistID,
			Start:        r.SlotStart,
			End:          r.SlotEnd,
			BufferBefore: time.Duration(r.BufferBeforeMin) * time.Minute,
			BufferAfter:  time.Duration(r.BufferAfterMin) * time.Minute,
		})
	}
	return loadRoomBusy(ctx, db.New(s.pool), cal, ignore)
}

func dateTime(d availability.Date) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
}
