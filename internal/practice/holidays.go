package practice

// Public holidays: a year's list of clinic-wide closures of one date each,
// entered as lines of a date and a name and replaced as one.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/textfield"
)

// Holiday is one public holiday: a local date (midnight UTC) and its name.
type Holiday struct {
	Day  time.Time
	Name string
}

// maxHolidays bounds one year's list: more lines are a pasted mistake.
const maxHolidays = 60

// holidayLayouts are the ways a line may write its date: ISO, and the
// German day.month.year.
var holidayLayouts = []string{time.DateOnly, "2.1.2006"}

// LineError is a mistake on one line of a holidays list: Line counts from
// 1; Err is the INVALID_ARGUMENT saying what is wrong.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return e.Err.Error() }
func (e *LineError) Unwrap() error { return e.Err }

// ParseHolidays reads a year's list: one holiday a line, a date
// (2026-12-25 or 25.12.2026) then its name; blank lines are skipped.
// Every date must be in year and appear once.
//
// Errors: INVALID_ARGUMENT (holidays, naming the line), as a *LineError.
func ParseHolidays(year int, text string) ([]Holiday, error) {
	hs, line, err := parseHolidays(year, text)
	if err != nil {
		return nil, &LineError{Line: line, Err: err}
	}
	return hs, nil
}

func parseHolidays(year int, text string) ([]Holiday, int, error) {
	var out []Holiday
	seen := map[time.Time]bool{}
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		date, name, _ := strings.Cut(line, " ")
		var day time.Time
		var err error
		for _, layout := range holidayLayouts {
			if day, err = time.Parse(layout, date); err == nil {
				break
			}
		}
		switch {
		case err != nil:
			return nil, i + 1, apperr.Invalidf("holidays", "Line %d: %q is not a date like %d-12-25.", i+1, date, year)
		case day.Year() != year:
			return nil, i + 1, apperr.Invalidf("holidays", "Line %d: %s is not in %d.", i+1, date, year)
		case seen[day]:
			return nil, i + 1, apperr.Invalidf("holidays", "Line %d: %s is listed twice.", i+1, date)
		}
		name, err = textfield.Note.Check(name)
		if err != nil {
			return nil, i + 1, apperr.Invalidf("holidays", "Line %d: %s", i+1, apperr.As(err).Message)
		}
		seen[day] = true
		out = append(out, Holiday{Day: day, Name: name})
		if len(out) > maxHolidays {
			return nil, i + 1, apperr.Invalidf("holidays", "At most %d holidays a year.", maxHolidays)
		}
	}
	return out, 0, nil
}

// FormatHolidays is a list as ParseHolidays reads it.
func FormatHolidays(hs []Holiday) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "%s %s\n", h.Day.Format(time.DateOnly), h.Name)
	}
	return b.String()
}

func yearBounds(year int) (time.Time, time.Time) {
	return time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(year, 12, 31, 0, 0, 0, 0, time.UTC)
}

// Holidays are the clinic's public holidays of year, in order.
//
// Errors: FORBIDDEN.
func (s *Service) Holidays(ctx context.Context, u staff.User, year int) ([]Holiday, error) {
	if err := u.May(staff.ActClosures); err != nil {
		return nil, err
	}
	from, to := yearBounds(year)
	rows, err := db.New(s.pool).HolidayListByRange(ctx, db.HolidayListByRangeParams{ClinicID: u.ClinicID, FromDay: from, ToDay: to})
	return staff.FromRows(rows, err, func(r db.HolidayListByRangeRow) Holiday { return Holiday{Day: r.FirstDay, Name: r.Note} })
}

// HolidayBookings are the confirmed bookings on the dates of hs, as
// ClosureBookings lists them.
//
// Errors: FORBIDDEN.
func (s *Service) HolidayBookings(ctx context.Context, u staff.User, hs []Holiday) ([]AffectedBooking, error) {
	if err := u.May(staff.ActClinicClosures); err != nil {
		return nil, err
	}
	days := make([]time.Time, len(hs))
	for i, h := range hs {
		days[i] = h.Day
	}
	// bookingsOn bounds its search by the first and last of days.
	slices.SortFunc(days, time.Time.Compare)
	return s.bookingsOn(ctx, u.ClinicID, uuid.Nil, days)
}

// SetHolidays replaces the clinic's public holidays of year with hs (as
// ParseHolidays read them), in one transaction with one audit row.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (holidays: a date outside year).
func (s *Service) SetHolidays(ctx context.Context, u staff.User, year int, hs []Holiday) error {
	if err := u.May(staff.ActClinicClosures); err != nil {
		return err
	}
	for _, h := range hs {
		if h.Day.Year() != year {
			return apperr.Invalidf("holidays", "%s is not in %d.", h.Day.Format(time.DateOnly), year)
		}
	}
	from, to := yearBounds(year)
	return s.tx(ctx, u, func(q *db.Queries) error {
		old, err := q.HolidayListByRange(ctx, db.HolidayListByRangeParams{ClinicID: u.ClinicID, FromDay: from, ToDay: to})
		if err != nil {
			return err
		}
		before := make([]Holiday, len(old))
		for i, r := range old {
			before[i] = Holiday{Day: r.FirstDay, Name: r.Note}
		}
		if slices.EqualFunc(before, hs, func(a, b Holiday) bool { return a.Day.Equal(b.Day) && a.Name == b.Name }) {
			return nil // saved as it was: nothing to write or audit
		}
		if _, err := q.HolidayDeleteByRange(ctx, db.HolidayDeleteByRangeParams{ClinicID: u.ClinicID, FromDay: from, ToDay: to}); err != nil {
			return err
		}
		for _, h := range hs {
			if _, err := q.ClosureInsert(ctx, db.ClosureInsertParams{
				ClinicID: u.ClinicID, FirstDay: h.Day, LastDay: h.Day, Holiday: true, Note: h.Name,
			}); err != nil {
				return fmt.Errorf("insert holiday: %w", err)
			}
		}
		return staff.WriteAudit(ctx, q, u, "holidays.update", "holidays", fmt.Sprint(year), before, hs, "")
	})
}
