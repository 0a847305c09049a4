package staff

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/clinic/booking/internal/db"
)

// Override is a day on which a specialist departs from their week: closed,
// or working only from StartMin to EndMin (minutes from local midnight).
type Override struct {
	ID               int64
	SpecialistID     uuid.UUID
	Day              time.Time // the local day, as midnight UTC
	Closed           bool
	StartMin, EndMin int
	Note             string
}

// CalendarBooking is a confirmed booking as the staff calendar shows it.
type CalendarBooking struct {
	ID                                      uuid.UUID
	SpecialistID, AppointmentTypeID         uuid.UUID
	Start, End                              time.Time
	PatientName, PatientEmail, PatientPhone string
	TypeName, SpecialistName                string
	Version                                 int32
	// Attendance is whether the patient came: "" (not marked), or one of
	// Arrived, NoShow, Completed.
	Attendance string
}

func calendarBookingFromRow(r db.BookingCalendarRow) CalendarBooking {
	return CalendarBooking{
		ID: r.ID, SpecialistID: r.SpecialistID, AppointmentTypeID: r.AppointmentTypeID,
		Start: r.SlotStart, End: r.SlotEnd,
		PatientName: r.PatientName, PatientEmail: r.PatientEmail, PatientPhone: r.PatientPhone,
		TypeName: r.TypeName, SpecialistName: r.SpecialistName, Version: r.Version, Attendance: r.Attendance,
	}
}

func minutesOf(t pgtype.Time) int { return int(t.Microseconds / int64(time.Minute/time.Microsecond)) }

// Calendar is what a staff calendar shows of a clinic over some days.
type Calendar struct {
	Bookings  []CalendarBooking
	Overrides []Override
	// Names are the clinic's specialists' names, active or not.
	Names map[uuid.UUID]string
}

// ClinicCalendar is a clinic's confirmed bookings from start to end, the
// overrides of the local days fromDay to toDay (midnight UTC, both
// included), and its specialists' names. It takes a clinic, not a user:
// the live calendar is one source shared by the clinic's viewers, and each
// viewer's access is checked apart.
//
// Errors: none of its own (database failures are internal).
func (b *Bookings) ClinicCalendar(ctx context.Context, clinicID uuid.UUID, start, end, fromDay, toDay time.Time) (Calendar, error) {
	q := db.New(b.svc.pool)
	specialists, err := q.SpecialistListByClinic(ctx, clinicID)
	if err != nil {
		return Calendar{}, err
	}
	cal := Calendar{Names: make(map[uuid.UUID]string, len(specialists))}
	for _, sp := range specialists {
		cal.Names[sp.ID] = sp.Name
	}
	if cal.Bookings, err = b.calendar(ctx, clinicID, start, end); err != nil {
		return Calendar{}, err
	}
	rows, err := q.OverrideListByClinicRange(ctx, db.OverrideListByClinicRangeParams{ClinicID: clinicID, FromDay: fromDay, ToDay: toDay})
	if err != nil {
		return Calendar{}, err
	}
	cal.Overrides = make([]Override, len(rows))
	for i, o := range rows {
		cal.Overrides[i] = Override{ID: o.ID, SpecialistID: o.SpecialistID, Day: o.Day, Closed: o.Closed, StartMin: int(o.StartMin), EndMin: int(o.EndMin), Note: o.Note}
	}
	return cal, nil
}

func (b *Bookings) calendar(ctx context.Context, clinicID uuid.UUID, from, to time.Time) ([]CalendarBooking, error) {
	rows, err := db.New(b.svc.pool).BookingCalendar(ctx, db.BookingCalendarParams{ClinicID: clinicID, RangeStart: from, RangeEnd: to})
	return fromRows(rows, err, calendarBookingFromRow)
}

// Overrides are a specialist's overrides from the local day fromDay
// (midnight UTC) on, in order.
//
// Errors: FORBIDDEN, NOT_FOUND (apperr.CodeNotFound; also for another
// clinic's specialist).
func (s *Service) Overrides(ctx context.Context, u User, specialistID uuid.UUID, fromDay time.Time) ([]Override, error) {
	if err := u.May(ActOverrides); err != nil {
		return nil, err
	}
	if _, err := s.specialist(ctx, u.ClinicID, specialistID); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).OverrideListBySpecialist(ctx, db.OverrideListBySpecialistParams{SpecialistID: specialistID, FromDay: fromDay})
	if err != nil {
		return nil, fmt.Errorf("list overrides: %w", err)
	}
	out := make([]Override, len(rows))
	for i, o := range rows {
		out[i] = Override{ID: o.ID, SpecialistID: specialistID, Day: o.Day, Closed: o.Closed, StartMin: int(o.StartMin), EndMin: int(o.EndMin), Note: o.Note}
	}
	return out, nil
}

// Override is one override of the user's clinic.
//
// Errors: FORBIDDEN, NOT_FOUND (apperr.CodeNotFound; also for another
// clinic's).
func (s *Service) Override(ctx context.Context, u User, id int64) (Override, error) {
	if err := u.May(ActOverrides); err != nil {
		return Override{}, err
	}
	o, err := db.New(s.pool).OverrideGet(ctx, db.OverrideGetParams{ID: id, ClinicID: u.ClinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Override{}, notFound("override")
	}
	if err != nil {
		return Override{}, fmt.Errorf("get override: %w", err)
	}
	return Override{ID: o.ID, SpecialistID: o.SpecialistID, Day: o.Day, Closed: o.Closed, StartMin: minutesOf(o.StartLocal), EndMin: minutesOf(o.EndLocal), Note: o.Note}, nil
}

// CalendarChoices are what the calendar offers to pick: the clinic's
// specialists (its filter and phone bookings) and appointment types (phone
// bookings). Anyone who may see the calendar sees them, whether or not
// they may open the specialists' or types' own pages.
type CalendarChoices struct {
	Specialists []Specialist
	Types       []AppointmentType
}

// Specialist is the clinic's specialist id among the choices.
func (c CalendarChoices) Specialist(id uuid.UUID) (Specialist, bool) {
	for _, sp := range c.Specialists {
		if sp.ID == id {
			return sp, true
		}
	}
	return Specialist{}, false
}

// CalendarChoices lists the clinic's specialists and appointment types for
// the calendar.
//
// Errors: FORBIDDEN.
func (s *Service) CalendarChoices(ctx context.Context, u User) (CalendarChoices, error) {
	if err := u.May(ActCalendar); err != nil {
		return CalendarChoices{}, err
	}
	q := db.New(s.pool)
	spRows, err := q.SpecialistListByClinic(ctx, u.ClinicID)
	sps, err := fromRows(spRows, err, specialistFromRow)
	if err != nil {
		return CalendarChoices{}, err
	}
	typeRows, err := q.AppointmentTypeListByClinic(ctx, u.ClinicID)
	types, err := fromRows(typeRows, err, typeFromRow)
	if err != nil {
		return CalendarChoices{}, err
	}
	return CalendarChoices{Specialists: sps, Types: types}, nil
}
