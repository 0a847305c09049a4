package practice

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/textfield"
)

// Range is a weekly working range in minutes from local midnight.
type Range struct {
	Weekday  time.Weekday `json:"weekday"`
	StartMin int          `json:"start"`
	EndMin   int          `json:"end"`
}

// FormatMin is "09:30" for 570.
func FormatMin(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// ParseClock reads "09:30" (or "24:00") as minutes from midnight.
func ParseClock(field, s string) (int, error) {
	var h, m int
	if _, err := fmt.Sscanf(strings.TrimSpace(s), "%d:%d", &h, &m); err != nil || h < 0 || h > 24 || m < 0 || m > 59 || (h == 24 && m != 0) {
		return 0, apperr.Invalidf(field, "%q is not a time like 09:30.", s)
	}
	return h*60 + m, nil
}

// ValidateRanges checks a week of ranges: end after start, inside the day,
// no two overlapping on one weekday. The field names the first bad one.
func ValidateRanges(rs []Range) error {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b Range) int {
		if a.Weekday != b.Weekday {
			return int(a.Weekday) - int(b.Weekday)
		}
		return a.StartMin - b.StartMin
	})
	for i, r := range sorted {
		field := fmt.Sprintf("hours.%s", strings.ToLower(r.Weekday.String()))
		if r.StartMin < 0 || r.EndMin > 1440 {
			return apperr.Invalidf(field, "%s: times must be within the day.", r.Weekday)
		}
		if r.EndMin <= r.StartMin {
			return apperr.Invalidf(field, "%s: %s–%s ends before it starts.", r.Weekday, FormatMin(r.StartMin), FormatMin(r.EndMin))
		}
		if i > 0 && sorted[i-1].Weekday == r.Weekday && sorted[i-1].EndMin > r.StartMin {
			return apperr.Invalidf(field, "%s: %s–%s overlaps %s–%s.", r.Weekday,
				FormatMin(sorted[i-1].StartMin), FormatMin(sorted[i-1].EndMin), FormatMin(r.StartMin), FormatMin(r.EndMin))
		}
	}
	return nil
}

// WeeklyHours are a specialist's ranges.
//
// Errors: FORBIDDEN, NOT_FOUND.
func (s *Service) WeeklyHours(ctx context.Context, u staff.User, specialistID uuid.UUID) ([]Range, error) {
	if err := u.May(staff.ActHours); err != nil {
		return nil, err
	}
	if _, err := s.specialist(ctx, u.ClinicID, specialistID); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).WeeklyHoursListBySpecialist(ctx, specialistID)
	if err != nil {
		return nil, err
	}
	out := make([]Range, len(rows))
	for i, r := range rows {
		out[i] = Range{Weekday: time.Weekday(r.Weekday), StartMin: int(r.StartMin), EndMin: int(r.EndMin)}
	}
	return out, nil
}

type hoursAudit struct {
	Specialist uuid.UUID `json:"specialist"`
	Hours      []Range   `json:"hours"`
}

// SetWeeklyHours replaces a specialist's week, under the specialist's
// version: of two staff saving at once, one wins and the other is told.
//
// Errors: FORBIDDEN, NOT_FOUND, INVALID_ARGUMENT (naming the weekday), CONCURRENCY_CONFLICT.
func (s *Service) SetWeeklyHours(ctx context.Context, u staff.User, specialistID uuid.UUID, version int32, rs []Range) (Specialist, error) {
	if err := u.May(staff.ActHours); err != nil {
		return Specialist{}, err
	}
	if err := ValidateRanges(rs); err != nil {
		return Specialist{}, err
	}
	var sp db.Specialist
	err := s.tx(ctx, u, func(q *db.Queries) error {
		// Lock first: a save refused because another won reports the
		// winner's hours, not those read before it committed.
		_, err := q.SpecialistLockInClinic(ctx, db.SpecialistLockInClinicParams{ID: specialistID, ClinicID: u.ClinicID})
		if errors.Is(err, pgx.ErrNoRows) {
			return staff.NotFound("specialist")
		}
		if err != nil {
			return err
		}
		old, err := q.WeeklyHoursListBySpecialist(ctx, specialistID)
		if err != nil {
			return err
		}
		oldRanges := make([]Range, len(old))
		for i, r := range old {
			oldRanges[i] = Range{Weekday: time.Weekday(r.Weekday), StartMin: int(r.StartMin), EndMin: int(r.EndMin)}
		}
		sp, err = q.SpecialistBumpVersion(ctx, db.SpecialistBumpVersionParams{ID: specialistID, ClinicID: u.ClinicID, Version: version})
		if errors.Is(err, pgx.ErrNoRows) {
			return staff.Stale(hoursAudit{Specialist: specialistID, Hours: oldRanges})
		}
		if err != nil {
			return err
		}
		if err := q.WeeklyHoursDeleteBySpecialist(ctx, specialistID); err != nil {
			return err
		}
		for _, r := range rs {
			if err := q.WeeklyHoursInsert(ctx, db.WeeklyHoursInsertParams{
				ClinicID: u.ClinicID, SpecialistID: specialistID, Weekday: int16(r.Weekday), StartMin: int32(r.StartMin), EndMin: int32(r.EndMin),
			}); err != nil {
				return err
			}
		}
		return staff.WriteAudit(ctx, q, u, "hours.update", "specialist", specialistID.String(),
			hoursAudit{specialistID, oldRanges}, hoursAudit{specialistID, rs}, "")
	})
	return specialistFromRow(sp), err
}

// OverrideInput is a date override: closed, or replacement hours.
type OverrideInput struct {
	Day      time.Time // a date (UTC midnight)
	Closed   bool
	StartMin int
	EndMin   int
	Note     string
	Version  int32 // the specialist's
}

// AddOverride adds a closed day or replacement hours.
//
// Errors: FORBIDDEN, NOT_FOUND, INVALID_ARGUMENT (day, start, end, note),
// CONFLICT (overlaps an override of that day), CONCURRENCY_CONFLICT.
func (s *Service) AddOverride(ctx context.Context, u staff.User, specialistID uuid.UUID, in OverrideInput) error {
	if err := u.May(staff.ActOverrides); err != nil {
		return err
	}
	var noteErr error
	in.Note, noteErr = textfield.Note.Check(in.Note)
	switch {
	case in.Day.IsZero():
		return apperr.Invalidf("day", "Pick a date.")
	case noteErr != nil:
		return noteErr
	case !in.Closed && (in.StartMin < 0 || in.EndMin > 1440):
		return apperr.Invalidf("start", "Times must be within the day.")
	case !in.Closed && in.EndMin <= in.StartMin:
		return apperr.Invalidf("end", "The end must be after the start.")
	}
	return s.tx(ctx, u, func(q *db.Queries) error {
		if _, err := q.SpecialistGetInClinic(ctx, db.SpecialistGetInClinicParams{ID: specialistID, ClinicID: u.ClinicID}); errors.Is(err, pgx.ErrNoRows) {
			return staff.NotFound("specialist")
		} else if err != nil {
			return err
		}
		if _, err := q.SpecialistBumpVersion(ctx, db.SpecialistBumpVersionParams{ID: specialistID, ClinicID: u.ClinicID, Version: in.Version}); errors.Is(err, pgx.ErrNoRows) {
			return staff.Stale(nil)
		} else if err != nil {
			return err
		}
		id, err := q.OverrideInsert(ctx, db.OverrideInsertParams{
			ClinicID: u.ClinicID, SpecialistID: specialistID, Day: in.Day, Closed: in.Closed,
			StartMin: int32(in.StartMin), EndMin: int32(in.EndMin), Note: in.Note,
		})
		if isSQLState(err, "23P01") {
			return apperr.New(apperr.Conflict, apperr.CodeOverrideOverlap, "That overlaps an override this specialist already has on that day.")
		}
		if err != nil {
			return err
		}
		return staff.WriteAudit(ctx, q, u, "override.create", "override", fmt.Sprint(id), nil, map[string]any{
			"specialist": specialistID, "day": in.Day.Format(time.DateOnly), "closed": in.Closed,
			"start": FormatMin(in.StartMin), "end": FormatMin(in.EndMin), "note": in.Note,
		}, "")
	})
}

// DeleteOverride removes an override.
//
// Errors: FORBIDDEN, NOT_FOUND, CONCURRENCY_CONFLICT.
func (s *Service) DeleteOverride(ctx context.Context, u staff.User, id int64, version int32) error {
	if err := u.May(staff.ActOverrides); err != nil {
		return err
	}
	return s.tx(ctx, u, func(q *db.Queries) error {
		o, err := q.OverrideGet(ctx, db.OverrideGetParams{ID: id, ClinicID: u.ClinicID})
		if errors.Is(err, pgx.ErrNoRows) {
			return staff.NotFound("override")
		}
		if err != nil {
			return err
		}
		if _, err := q.SpecialistBumpVersion(ctx, db.SpecialistBumpVersionParams{ID: o.SpecialistID, ClinicID: u.ClinicID, Version: version}); errors.Is(err, pgx.ErrNoRows) {
			return staff.Stale(nil)
		} else if err != nil {
			return err
		}
		if _, err := q.OverrideDelete(ctx, db.OverrideDeleteParams{ID: id, ClinicID: u.ClinicID}); err != nil {
			return err
		}
		return staff.WriteAudit(ctx, q, u, "override.delete", "override", fmt.Sprint(id), o, nil, "")
	})
}
