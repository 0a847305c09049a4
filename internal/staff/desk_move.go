package staff

// Moving a booking by choosing one of the free times that fit it.

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/slots"
)

// MoveDays is how many days after the booking's own the move dialog
// offers times on.
const MoveDays = 7

// MoveChoices are the free times a booking can move to: its type, over
// its day and the MoveDays after it (from now on), with its specialist
// first and then the others who perform the type.
type MoveChoices struct {
	Booking  booking.Booking
	TypeName string
	Location *time.Location
	Options  []MoveOption
}

// MoveOption is one specialist's free times for the booking.
type MoveOption struct {
	Specialist Specialist
	Same       bool // the booking's own specialist
	Starts     []time.Time
}

// MoveChoices lists where a booking can move. Its own time counts as
// free, so a move by a few minutes is offered; the time it has now is not.
//
// Errors: FORBIDDEN, NOT_FOUND (also another clinic's booking),
// BOOKING_NOT_ACTIVE (409: cancelled or moved already).
func (d *Desk) MoveChoices(ctx context.Context, u User, bookingID uuid.UUID) (MoveChoices, error) {
	if err := u.May(ActMove); err != nil {
		return MoveChoices{}, err
	}
	b, err := d.bookings.bookings.Get(ctx, bookingID, u.ClinicID)
	if err != nil {
		return MoveChoices{}, err
	}
	if b.Status != booking.StatusConfirmed {
		return MoveChoices{}, apperr.New(apperr.Conflict, apperr.CodeBookingNotActive, "This booking was cancelled or moved and cannot be moved.")
	}
	loc, err := d.slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return MoveChoices{}, err
	}
	day := availability.DateOf(b.Start, loc)
	res, err := d.slots.Free(ctx, slots.Request{
		AppointmentTypeID: b.AppointmentTypeID, From: day, To: day.AddDays(MoveDays),
		Ignore: &slots.Interval{SpecialistID: b.SpecialistID, Start: b.Start, End: b.End},
	})
	if err != nil {
		return MoveChoices{}, err
	}
	rows, err := db.New(d.bookings.svc.pool).SpecialistListByClinic(ctx, u.ClinicID)
	sps, err := fromRows(rows, err, specialistFromRow)
	if err != nil {
		return MoveChoices{}, err
	}
	out := MoveChoices{Booking: b, TypeName: res.Stored.Name, Location: loc}
	for _, sp := range sps {
		if _, performs := res.Priority[sp.ID]; !performs && sp.ID != b.SpecialistID {
			continue
		}
		opt := MoveOption{Specialist: sp, Same: sp.ID == b.SpecialistID}
		for _, sl := range res.Slots {
			if slices.Contains(sl.SpecialistIDs, sp.ID) && !(opt.Same && sl.Start.Equal(b.Start)) {
				opt.Starts = append(opt.Starts, sl.Start)
			}
		}
		out.Options = append(out.Options, opt)
	}
	// The booking's specialist first, then by the priority patients are
	// assigned by, then by name.
	slices.SortStableFunc(out.Options, func(a, b MoveOption) int {
		if a.Same != b.Same {
			if a.Same {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.Specialist.Priority, a.Specialist.Priority), cmp.Compare(a.Specialist.Name, b.Specialist.Name))
	})
	return out, nil
}
