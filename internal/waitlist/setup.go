package waitlist

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/outbox"
)

// SetupChanged checks the clinic's standing offers after its set-up
// changed (a closure saved over their day, hours cut): an offer of a time
// that can no longer be booked is withdrawn, so its patient cannot book
// a closed day; they wait on in their place for the next time, and the
// freed time's opening closes (its job finds nothing to offer). It
// returns how many offers it withdrew.
func (s *Service) SetupChanged(ctx context.Context, clinicID uuid.UUID) (int, error) {
	if s.cfg.Bookable == nil {
		return 0, nil
	}
	rows, err := db.New(s.pool).WaitlistOffersOpenByClinic(ctx, clinicID)
	if err != nil {
		return 0, fmt.Errorf("list standing offers: %w", err)
	}
	n := 0
	for _, r := range rows {
		op := r.WaitlistOpening
		b := booking.Booking{ClinicID: op.ClinicID, AppointmentTypeID: op.AppointmentTypeID, SpecialistID: op.SpecialistID, Start: op.SlotStart, End: op.SlotEnd}
		ok, err := s.cfg.Bookable(ctx, b)
		if err != nil {
			return n, err
		}
		if ok {
			continue
		}
		if err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return s.withdrawClosed(ctx, tx, r.ID, r.EntryID) }); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// withdrawClosed withdraws the offer of a time no longer bookable: its
// entry waits again, and the offer's job runs now, closing the opening.
// A patient whose offer's e-mail went out is told, with the withdrawal.
func (s *Service) withdrawClosed(ctx context.Context, tx pgx.Tx, offerID, entryID uuid.UUID) error {
	q := db.New(tx)
	o, err := q.WaitlistOfferEnd(ctx, db.WaitlistOfferEndParams{ID: offerID, State: OfferWithdrawn, EndedAt: ptr(s.now())})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // answered or ended just now
	}
	if err != nil {
		return fmt.Errorf("withdraw offer: %w", err)
	}
	if err := q.WaitlistEntrySetState(ctx, db.WaitlistEntrySetStateParams{ID: entryID, State: StateWaiting}); err != nil {
		return fmt.Errorf("entry waits again: %w", err)
	}
	told, err := q.WaitlistOfferMailSent(ctx, uuid.NullUUID{UUID: offerID, Valid: true})
	if err != nil {
		return fmt.Errorf("was the offer sent: %w", err)
	}
	if told {
		e, err := q.WaitlistEntryGetForUpdate(ctx, entryID)
		if err != nil {
			return fmt.Errorf("read entry: %w", err)
		}
		if err := s.mail(ctx, tx, outbox.KindWaitlistWithdrawn, e, offerID); err != nil {
			return err
		}
	}
	return s.passOnNow(ctx, tx, o)
}
