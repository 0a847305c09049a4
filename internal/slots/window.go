package slots

// What a request is checked against before any slot is computed: a type's
// clinic and row, the clinic's zone, and the window of dates it can be
// booked in, each kept in memory for as long as it may be.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// KnownClinicOfType is ClinicOfType from memory only: false when this
// process has not looked the type up yet (or it does not exist).
func (s *Service) KnownClinicOfType(typeID uuid.UUID) (uuid.UUID, bool) {
	id, ok := s.typeClinic.Load(typeID)
	if !ok {
		return uuid.Nil, false
	}
	return id.(uuid.UUID), true
}

// ClinicOfType maps a type to its clinic, which never changes, from memory.
//
// Errors: NOT_FOUND naming "id".
func (s *Service) ClinicOfType(ctx context.Context, typeID uuid.UUID) (uuid.UUID, error) {
	if id, ok := s.typeClinic.Load(typeID); ok {
		return id.(uuid.UUID), nil
	}
	t, err := db.New(s.pool).AppointmentTypeGet(ctx, typeID)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, apperr.NotFoundf("id", "No such appointment type.")
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("load appointment type: %w", err)
	}
	s.typeClinic.Store(typeID, t.ClinicID)
	return t.ClinicID, nil
}

type typeRowAt struct {
	row clinics.Type
	at  time.Time
}

// typeRowMaxAge bounds how old a remembered type may be for StoredType.
const typeRowMaxAge = 10 * time.Second

// StoredType is a type from memory when it was read in the last few
// seconds (every computation refreshes it), else from PostgreSQL. Only for
// what tolerates a few seconds of staleness: which days' generations a
// cache key reads and a booking bumps (covered catches a list computed
// with newer buffers), a cooldown's length.
func (s *Service) StoredType(ctx context.Context, typeID uuid.UUID) (clinics.Type, error) {
	if v, ok := s.typeRows.Load(typeID); ok && s.now().Sub(v.(typeRowAt).at) < typeRowMaxAge {
		return v.(typeRowAt).row, nil
	}
	r, err := db.New(s.pool).AppointmentTypeGet(ctx, typeID)
	if err != nil {
		return clinics.Type{}, err
	}
	t := clinics.TypeFromRow(r)
	s.typeRows.Store(typeID, typeRowAt{row: t, at: s.now()})
	return t, nil
}

// trim applies the minimum notice and window to a list computed earlier.
func trim(slots []availability.Slot, now time.Time, t availability.AppointmentType) []availability.Slot {
	earliest := now.Add(t.MinNotice)
	out := make([]availability.Slot, 0, len(slots))
	for _, sl := range slots {
		if sl.Start.Before(earliest) {
			continue
		}
		if t.MaxAdvance > 0 && sl.Start.After(now.Add(t.MaxAdvance)) {
			continue
		}
		out = append(out, sl)
	}
	return out
}

// TypeOf is the engine's view of an appointment type.
func TypeOf(t clinics.Type) availability.AppointmentType {
	return availability.AppointmentType{
		Duration:     time.Duration(t.DurationMin) * time.Minute,
		Step:         time.Duration(t.SlotStepMin) * time.Minute,
		BufferBefore: time.Duration(t.BufferBeforeMin) * time.Minute,
		BufferAfter:  time.Duration(t.BufferAfterMin) * time.Minute,
		MinNotice:    time.Duration(t.MinNoticeMin) * time.Minute,
		MaxAdvance:   time.Duration(t.MaxAdvanceDays) * 24 * time.Hour,
	}
}

// zoneMemory is how long a clinic's zone is taken from memory: an admin
// may change it, and every instance must follow within this long.
const zoneMemory = 5 * time.Second

// zoneEntry is a clinic's zone as read at a moment.
type zoneEntry struct {
	loc *time.Location
	at  time.Time
}

// rememberZone keeps a clinic's zone for zoneMemory.
func (s *Service) rememberZone(clinicID uuid.UUID, loc *time.Location) {
	s.zones.Store(clinicID, zoneEntry{loc: loc, at: time.Now()})
}

// Zone is a clinic's location, from memory when read less than zoneMemory
// ago (Invalidate forgets it on this instance at once).
func (s *Service) Zone(ctx context.Context, clinicID uuid.UUID) (*time.Location, error) {
	if e, ok := s.zones.Load(clinicID); ok && time.Since(e.(zoneEntry).at) < zoneMemory {
		return e.(zoneEntry).loc, nil
	}
	name, err := db.New(s.pool).ClinicTimezone(ctx, clinicID)
	if err != nil {
		return nil, fmt.Errorf("clinic zone: %w", err)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	s.rememberZone(clinicID, loc)
	return loc, nil
}

// Window is the range of local dates a type can be booked in now: from
// yesterday (a client west of the clinic may still be on it) to the last
// day of the type's booking window.
//
// Errors: NOT_FOUND naming "id".
func (s *Service) Window(ctx context.Context, typeID uuid.UUID) (first, last availability.Date, err error) {
	clinicID, err := s.ClinicOfType(ctx, typeID)
	if err != nil {
		return first, last, err
	}
	loc, err := s.Zone(ctx, clinicID)
	if err != nil {
		return first, last, err
	}
	row, err := s.StoredType(ctx, typeID)
	if err != nil {
		return first, last, fmt.Errorf("load appointment type: %w", err)
	}
	today := availability.DateOf(s.now(), loc)
	return today.AddDays(-1), today.AddDays(int(row.MaxAdvanceDays)), nil
}

// CheckRange refuses, before any slot is computed or cached, a range no
// patient can book in: backwards, longer than MaxRangeDays, or reaching
// outside the type's Window. Free itself accepts any range up to
// MaxRangeDays, for the staff calendar's past and far weeks.
//
// Errors: NOT_FOUND naming "id", INVALID_ARGUMENT naming from or to.
func (s *Service) CheckRange(ctx context.Context, typeID uuid.UUID, from, to availability.Date) error {
	if to.Before(from) {
		return apperr.Invalidf("to", "to (%s) is before from (%s).", to, from)
	}
	if n := availability.DaysBetween(from, to) + 1; n > MaxRangeDays {
		return apperr.Invalidf("to", "The range is %d days; at most %d days can be asked for at once.", n, MaxRangeDays)
	}
	first, last, err := s.Window(ctx, typeID)
	if err != nil {
		return err
	}
	if from.Before(first) {
		return apperr.Invalidf("from", "from (%s) is in the past; the earliest is %s.", from, first)
	}
	if last.Before(to) {
		return apperr.Invalidf("to", "to (%s) is past the booking window; the latest is %s.", to, last)
	}
	return nil
}

var zoneCache sync.Map // name -> *time.Location

// loadZone is time.LoadLocation without reading the zone database on every
// request.
func loadZone(name string) (*time.Location, error) {
	if loc, ok := zoneCache.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zoneCache.Store(name, loc)
	return loc, nil
}
