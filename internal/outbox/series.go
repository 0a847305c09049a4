package outbox

// A series' messages: one about the whole series booked, and one about
// its sessions cancelled from one on, each written with the first change
// of the whole; every session keeps its own reminder.

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/letters"
)

// seriesPart is what one change of a whole series writes: a session
// booked, its reminder, and with the first session the series' message;
// a session cancelled, its pending messages cancelled, and with the
// first the message of them all.
func (o *Outbox) seriesPart(ctx context.Context, tx pgx.Tx, q *db.Queries, ch booking.Change) ([]message, error) {
	b := ch.Booking
	var msgs []message
	switch ch.Kind {
	case booking.ChangeConfirm:
		if ch.Series.First {
			msgs = append(msgs, o.about(b, KindSeries, b.CreatedAt, causeOf(ch.Actor)))
		}
		r, ok, err := o.reminder(ctx, q, b)
		if err != nil {
			return nil, err
		}
		if ok {
			msgs = append(msgs, r)
		}
	case booking.ChangeCancel:
		if err := o.cancelPending(ctx, tx, q, b.ID); err != nil {
			return nil, err
		}
		if ch.Series.First && !ch.Quiet {
			m := o.about(b, KindSeriesCancellation, o.now(), causeOf(ch.Actor))
			m.Reason = staffReason(ch)
			msgs = append(msgs, m)
		}
	default:
		return nil, fmt.Errorf("outbox: a series change %q", ch.Kind)
	}
	return msgs, nil
}

// seriesInput fills in a series message: the booking it names and, in
// List, the sessions it tells of, each with a link of its own while it
// stands: every session of a series booked that still stands, or the
// sessions cancelled from the named one on.
func (o *Outbox) seriesInput(ctx context.Context, m db.Message, in *letters.Input) error {
	a, clinic, err := o.appointment(ctx, m.BookingID.UUID)
	if err != nil {
		return err
	}
	in.Appointment, in.Clinic = a, clinic
	rows, err := db.New(o.pool).SeriesBookings(ctx, db.SeriesBookingsParams{SeriesID: uuid.NullUUID{UUID: a.Booking.SeriesID, Valid: true}, ClinicID: a.Booking.ClinicID})
	if err != nil {
		return fmt.Errorf("load series: %w", err)
	}
	for _, r := range rows {
		b := booking.FromRow(r.Booking)
		it := letters.Listed{Appointment: letters.Appointment{Booking: b, TypeName: r.TypeName, Specialist: r.SpecialistName,
			TypeTexts: a.TypeTexts}}
		switch {
		case m.Kind == KindSeries && b.Status == booking.StatusConfirmed:
			if it.ManageURL, err = o.manageLink(ctx, b.ID); err != nil {
				return err
			}
		case m.Kind == KindSeriesCancellation && b.Status == booking.StatusCancelled && b.SeriesPosition >= a.Booking.SeriesPosition:
		default:
			continue
		}
		in.List = append(in.List, it)
	}
	if len(in.List) == 0 {
		return errNothingToSend
	}
	return nil
}
