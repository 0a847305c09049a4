package desk

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
)

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
	// Series is the booking's place in its series, if it is a session of one.
	Series SeriesMark
	// RoomID is the room the booking holds (uuid.Nil: none); NeedsRoom,
	// whether its type needs one now: such a booking without one was
	// left so when its type gained the need, and staff move it.
	RoomID    uuid.UUID
	NeedsRoom bool
}

func calendarBookingFromRow(r db.BookingCalendarRow) CalendarBooking {
	return CalendarBooking{
		ID: r.ID, SpecialistID: r.SpecialistID, AppointmentTypeID: r.AppointmentTypeID,
		Start: r.SlotStart, End: r.SlotEnd,
		PatientName: r.PatientName, PatientEmail: r.PatientEmail, PatientPhone: r.PatientPhone,
		TypeName: r.TypeName, SpecialistName: r.SpecialistName, Version: r.Version, Attendance: r.Attendance,
		RoomID: r.ResourceID.UUID, NeedsRoom: r.NeedsRoom,
	}
}

// Calendar is what a staff calendar shows of a clinic over some days.
type Calendar struct {
	Bookings  []CalendarBooking
	Overrides []practice.Override
	// Closures are the clinic's closures over any of the days.
	Closures []practice.Closure
	// Names are the clinic's specialists' names, active or not.
	Names map[uuid.UUID]string
}

// ClinicCalendar is a clinic's confirmed bookings from start to end, the
// overrides and closures of the local days fromDay to toDay (midnight
// UTC, both included), and its specialists' names. It takes a clinic, not a user:
// the live calendar is one source shared by the clinic's viewers, and each
// viewer's access is checked apart.
//
// Errors: none of its own (database failures are internal).
func (b *Bookings) ClinicCalendar(ctx context.Context, clinicID uuid.UUID, start, end, fromDay, toDay time.Time) (Calendar, error) {
	q := db.New(b.pool)
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
	cal.Overrides = make([]practice.Override, len(rows))
	for i, o := range rows {
		cal.Overrides[i] = practice.Override{ID: o.ID, SpecialistID: o.SpecialistID, Day: o.Day, Closed: o.Closed, StartMin: int(o.StartMin), EndMin: int(o.EndMin), Note: o.Note}
	}
	if cal.Closures, err = closuresOver(ctx, q, clinicID, dateOf(fromDay), dateOf(toDay)); err != nil {
		return Calendar{}, err
	}
	return cal, nil
}

func (b *Bookings) calendar(ctx context.Context, clinicID uuid.UUID, from, to time.Time) ([]CalendarBooking, error) {
	rows, err := db.New(b.pool).BookingCalendar(ctx, db.BookingCalendarParams{ClinicID: clinicID, RangeStart: from, RangeEnd: to})
	out, err := staff.FromRows(rows, err, calendarBookingFromRow)
	if err != nil {
		return nil, err
	}
	return out, b.markCalendar(ctx, clinicID, out)
}

// CalendarChoices are what the calendar offers to pick: the clinic's
// specialists (its filter and phone bookings) and appointment types (phone
// bookings). Anyone who may see the calendar sees them, whether or not
// they may open the specialists' or types' own pages.
type CalendarChoices struct {
	Specialists []practice.Specialist
	Types       []practice.AppointmentType
}

// Specialist is the clinic's specialist id among the choices.
func (c CalendarChoices) Specialist(id uuid.UUID) (practice.Specialist, bool) {
	for _, sp := range c.Specialists {
		if sp.ID == id {
			return sp, true
		}
	}
	return practice.Specialist{}, false
}

// CalendarChoices lists the clinic's specialists and appointment types for
// the calendar.
//
// Errors: FORBIDDEN.
func (b *Bookings) CalendarChoices(ctx context.Context, u staff.User) (CalendarChoices, error) {
	if err := u.May(staff.ActCalendar); err != nil {
		return CalendarChoices{}, err
	}
	q := db.New(b.pool)
	sps, err := practice.ClinicSpecialists(ctx, q, u.ClinicID)
	if err != nil {
		return CalendarChoices{}, err
	}
	types, err := practice.ClinicTypes(ctx, q, u.ClinicID)
	if err != nil {
		return CalendarChoices{}, err
	}
	return CalendarChoices{Specialists: sps, Types: types}, nil
}

// dateOf is the date of a midnight UTC.
func dateOf(t time.Time) availability.Date {
	return availability.Date{Year: t.Year(), Month: t.Month(), Day: t.Day()}
}
