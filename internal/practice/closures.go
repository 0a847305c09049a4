package practice

// Closures: runs of local dates on which one specialist or the whole
// clinic takes no bookings, public holidays among them. A specialist's day
// with other hours stays an override (overrides.go); a closure is read by
// the slot engine as a closed override of every specialist it covers
// (queries/hours.sql), so patients are offered no time on its dates, and
// saving or removing one goes through tx, whose notifier retires the
// clinic's cached slots, live views and kept pages as an hours change does.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/textfield"
)

// MaxClosureDays is the longest closure: a year. Longer absences are a
// specialist made inactive.
const MaxClosureDays = 366

// Closure is a run of local dates (First to Last, each midnight UTC) on
// which one specialist (SpecialistID) or the whole clinic (uuid.Nil) takes
// no bookings. A public holiday is a clinic-wide closure of one date.
type Closure struct {
	ID             int64
	SpecialistID   uuid.UUID
	SpecialistName string
	First, Last    time.Time
	Holiday        bool
	Note           string
}

// ClinicWide says whether the closure closes every specialist.
func (c Closure) ClinicWide() bool { return c.SpecialistID == uuid.Nil }

// Covers says whether the closure closes specialist sp on the local date d.
func (c Closure) Covers(sp uuid.UUID, d availability.Date) bool {
	day := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
	return (c.ClinicWide() || c.SpecialistID == sp) && !day.Before(c.First) && !day.After(c.Last)
}

// ClosureInput is a closure to add: SpecialistID uuid.Nil closes the
// whole clinic (AddClinicClosure).
type ClosureInput struct {
	SpecialistID uuid.UUID
	First, Last  time.Time // local dates, midnight UTC
	Note         string
}

// Days are the input's local dates, in order.
func (in ClosureInput) Days() []time.Time {
	var out []time.Time
	for d := in.First; !d.After(in.Last) && len(out) <= MaxClosureDays; d = d.AddDate(0, 0, 1) {
		out = append(out, d)
	}
	return out
}

// check validates the input and returns its trimmed note.
func (in ClosureInput) check() (ClosureInput, error) {
	switch {
	case in.First.IsZero():
		return in, apperr.Invalidf("first", "Pick the first closed date.")
	case in.Last.IsZero():
		return in, apperr.Invalidf("last", "Pick the last closed date.")
	case in.Last.Before(in.First):
		return in, apperr.Invalidf("last", "The last date must not be before the first.")
	case in.Last.Sub(in.First) >= MaxClosureDays*24*time.Hour:
		return in, apperr.Invalidf("last", "A closure can be at most a year long.")
	}
	note, err := textfield.Note.Check(in.Note)
	in.Note = note
	return in, err
}

func closureFromRow(id int64, sp uuid.NullUUID, first, last time.Time, holiday bool, note, name string) Closure {
	return Closure{ID: id, SpecialistID: sp.UUID, SpecialistName: name, First: first, Last: last, Holiday: holiday, Note: note}
}

// Closures are the clinic's closures that end on or after fromDay, soonest
// first.
//
// Errors: FORBIDDEN.
func (s *Service) Closures(ctx context.Context, u staff.User, fromDay time.Time) ([]Closure, error) {
	if err := u.May(staff.ActClosures); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).ClosureList(ctx, db.ClosureListParams{ClinicID: u.ClinicID, FromDay: fromDay})
	return staff.FromRows(rows, err, func(r db.ClosureListRow) Closure {
		return closureFromRow(r.ID, r.SpecialistID, r.FirstDay, r.LastDay, r.Holiday, r.Note, r.SpecialistName)
	})
}

// Closure is one closure of the user's clinic.
//
// Errors: FORBIDDEN, NOT_FOUND (also for another clinic's).
func (s *Service) Closure(ctx context.Context, u staff.User, id int64) (Closure, error) {
	if err := u.May(staff.ActClosures); err != nil {
		return Closure{}, err
	}
	return closureGet(ctx, db.New(s.pool), u.ClinicID, id)
}

func closureGet(ctx context.Context, q *db.Queries, clinicID uuid.UUID, id int64) (Closure, error) {
	r, err := q.ClosureGet(ctx, db.ClosureGetParams{ID: id, ClinicID: clinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Closure{}, staff.NotFound("closure")
	}
	if err != nil {
		return Closure{}, fmt.Errorf("get closure: %w", err)
	}
	return closureFromRow(r.ID, r.SpecialistID, r.FirstDay, r.LastDay, r.Holiday, r.Note, r.SpecialistName), nil
}

// AddClosure closes one specialist (in.SpecialistID) over in's dates.
// The bookings already on those dates stay: ClosureBookings lists them for
// the staff to move or cancel.
//
// Errors: FORBIDDEN, NOT_FOUND (the specialist), INVALID_ARGUMENT
// (specialist, first, last, note).
func (s *Service) AddClosure(ctx context.Context, u staff.User, in ClosureInput) (int64, error) {
	if err := u.May(staff.ActClosures); err != nil {
		return 0, err
	}
	if in.SpecialistID == uuid.Nil {
		return 0, apperr.Invalidf("specialist", "Pick a specialist.")
	}
	return s.addClosure(ctx, u, in, false)
}

// AddClinicClosure closes the whole clinic over in's dates (in.SpecialistID
// is ignored).
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (first, last, note).
func (s *Service) AddClinicClosure(ctx context.Context, u staff.User, in ClosureInput) (int64, error) {
	if err := u.May(staff.ActClinicClosures); err != nil {
		return 0, err
	}
	in.SpecialistID = uuid.Nil
	return s.addClosure(ctx, u, in, false)
}

func (s *Service) addClosure(ctx context.Context, u staff.User, in ClosureInput, holiday bool) (int64, error) {
	in, err := in.check()
	if err != nil {
		return 0, err
	}
	var id int64
	err = s.tx(ctx, u, func(q *db.Queries) error {
		sp := uuid.NullUUID{UUID: in.SpecialistID, Valid: in.SpecialistID != uuid.Nil}
		if sp.Valid {
			if _, err := ClinicSpecialist(ctx, q, u.ClinicID, sp.UUID); err != nil {
				return err
			}
		}
		var err error
		id, err = q.ClosureInsert(ctx, db.ClosureInsertParams{
			ClinicID: u.ClinicID, SpecialistID: sp, FirstDay: in.First, LastDay: in.Last, Holiday: holiday, Note: in.Note,
		})
		if err != nil {
			return fmt.Errorf("insert closure: %w", err)
		}
		return staff.WriteAudit(ctx, q, u, "closure.create", "closure", fmt.Sprint(id), nil, closureAudit(in, holiday), "")
	})
	return id, err
}

func closureAudit(in ClosureInput, holiday bool) map[string]any {
	who := "clinic"
	if in.SpecialistID != uuid.Nil {
		who = in.SpecialistID.String()
	}
	return map[string]any{
		"specialist": who, "first": in.First.Format(time.DateOnly), "last": in.Last.Format(time.DateOnly),
		"holiday": holiday, "note": in.Note,
	}
}

// DeleteClosure reopens a closure's dates. A clinic-wide closure or a
// holiday needs the clinic's action too.
//
// Errors: FORBIDDEN, NOT_FOUND.
func (s *Service) DeleteClosure(ctx context.Context, u staff.User, id int64) error {
	if err := u.May(staff.ActClosures); err != nil {
		return err
	}
	return s.tx(ctx, u, func(q *db.Queries) error {
		c, err := closureGet(ctx, q, u.ClinicID, id)
		if err != nil {
			return err
		}
		if c.ClinicWide() {
			if err := u.May(staff.ActClinicClosures); err != nil {
				return err
			}
		}
		if _, err := q.ClosureDelete(ctx, db.ClosureDeleteParams{ID: id, ClinicID: u.ClinicID}); err != nil {
			return fmt.Errorf("delete closure: %w", err)
		}
		before := closureAudit(ClosureInput{SpecialistID: c.SpecialistID, First: c.First, Last: c.Last, Note: c.Note}, c.Holiday)
		return staff.WriteAudit(ctx, q, u, "closure.delete", "closure", fmt.Sprint(id), before, nil, "")
	})
}

// AffectedBooking is a confirmed booking on a closed date, as the staff
// see it to move or cancel it: with the patient's e-mail address (told by
// e-mail when it is cancelled) or phone (to be called).
type AffectedBooking struct {
	ID             uuid.UUID
	SpecialistID   uuid.UUID
	SpecialistName string
	TypeName       string
	PatientName    string
	Email, Phone   string
	Start, End     time.Time
	Version        int32
}

// ClosureBookings are the confirmed bookings that start on in's dates (of
// in.SpecialistID, or of every specialist for uuid.Nil), in the clinic's
// zone, soonest first: what a closure over those dates would leave to move
// or cancel.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (as AddClosure).
func (s *Service) ClosureBookings(ctx context.Context, u staff.User, in ClosureInput) ([]AffectedBooking, error) {
	if err := u.May(staff.ActClosures); err != nil {
		return nil, err
	}
	if _, err := in.check(); err != nil {
		return nil, err
	}
	return s.bookingsOn(ctx, u.ClinicID, in.SpecialistID, in.Days())
}

// bookingsOn are the confirmed bookings of sp (uuid.Nil: any) that start
// on one of the local dates days.
func (s *Service) bookingsOn(ctx context.Context, clinicID, sp uuid.UUID, days []time.Time) ([]AffectedBooking, error) {
	if len(days) == 0 {
		return nil, nil
	}
	q := db.New(s.pool)
	tz, err := q.ClinicTimezone(ctx, clinicID)
	if err != nil {
		return nil, fmt.Errorf("clinic zone: %w", err)
	}
	loc, err := clinics.LoadZone(tz)
	if err != nil {
		return nil, err
	}
	first, last := days[0], days[len(days)-1]
	rows, err := q.BookingListOnDays(ctx, db.BookingListOnDaysParams{
		ClinicID: clinicID, SpecialistID: uuid.NullUUID{UUID: sp, Valid: sp != uuid.Nil},
		// A day of margin on each side: the zone's offset moves the dates'
		// instants by less than that.
		FromTime: time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, -1),
		ToTime:   time.Date(last.Year(), last.Month(), last.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, 2),
		Days:     days,
	})
	return staff.FromRows(rows, err, func(r db.BookingListOnDaysRow) AffectedBooking {
		return AffectedBooking{
			ID: r.ID, SpecialistID: r.SpecialistID, SpecialistName: r.SpecialistName, TypeName: r.TypeName,
			PatientName: r.PatientName, Email: r.PatientEmail, Phone: r.PatientPhone,
			Start: r.SlotStart, End: r.SlotEnd, Version: r.Version,
		}
	})
}
