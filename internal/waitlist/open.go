package waitlist

// Openings: a time freed by a booking change, held before the change
// commits when anyone waits for it.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
)

// Enqueue is the waitlist's part of every booking change, in its
// transaction, once the booking is written (booking.TxHook.After): a cancelled booking's time, or the time a
// moved booking left, becomes an opening if anyone waits for it; a booking
// that takes up an offer closes the offer, its entry and its opening, or
// is refused when the offer is over.
func (s *Openings) Enqueue(ctx context.Context, tx pgx.Tx, ch booking.Change) error {
	switch ch.Kind {
	case booking.ChangeCancel:
		_, err := s.open(ctx, tx, freed{booking: ch.Booking, cause: "cancel"})
		return err
	case booking.ChangeReschedule:
		if ch.Previous != nil {
			_, err := s.open(ctx, tx, freed{booking: *ch.Previous, cause: "move"})
			return err
		}
	case booking.ChangeConfirm:
		if ch.Offer != uuid.Nil {
			return s.taken(ctx, tx, ch.Offer, ch.Booking)
		}
		if ch.Series.First {
			return s.seriesBooked(ctx, tx, ch.Booking)
		}
	}
	return nil
}

// Queue is Enqueue's form for a new booking written in one batch
// (booking.TxHook.Queue): a booking that takes up no offer has nothing of
// the waitlist's to write. One that takes up an offer is ErrNotQueued:
// Enqueue closes the offer once the booking is written, under its lock.
func (s *Openings) Queue(_ context.Context, _ pgx.Tx, _ db.DBTX, ch booking.Change) error {
	if ch.Kind == booking.ChangeConfirm && ch.Offer == uuid.Nil {
		return nil
	}
	return booking.ErrNotQueued
}

// freed is a time that became free: the booking that had it (its type,
// specialist and time), and why.
type freed struct {
	booking booking.Booking
	cause   string // cancel, move, staff
	// entry, for an offer staff make by hand, is who gets it (else the
	// first in the list).
	entry uuid.UUID
	// rooms, for an offer staff make by hand of a type that needs a room,
	// are the rooms free then (see roomsOf).
	rooms []uuid.UUID
}

// open records an opening for the freed time, holds the time for it and
// writes its first job, in tx, if the time is free, ahead, and anyone
// waits for it (or staff chose who). It returns the opening's id
// (uuid.Nil if none was made).
//
// The hold is taken before tx commits, so the time is never free between
// the change and the offer. If tx is run again (a deadlock's victim), the
// run again finds the hold its first run took; if tx does not commit at
// all, the hold lives out its life on a time still booked, where it
// blocks nothing.
func (s *Openings) open(ctx context.Context, tx pgx.Tx, f freed) (uuid.UUID, error) {
	b := f.booking
	if s.outbox == nil || !b.Start.After(s.now()) {
		return uuid.Nil, nil
	}
	q := db.New(tx)
	// Most changes find nobody waiting: that is asked first.
	if f.entry == uuid.Nil {
		if _, ok, err := s.next(ctx, q, b, uuid.Nil); err != nil || !ok {
			return uuid.Nil, err
		}
	}
	before, after, booked, err := timeBooked(ctx, q, b)
	if err != nil || booked {
		return uuid.Nil, err // booked: a move onto an overlapping time of its own
	}
	id := openingID(b, f.cause)
	h, err := s.holds.Claim(ctx, holds.ClaimRequest{
		ClientID: holdOwner(id), ClinicID: b.ClinicID, AppointmentTypeID: b.AppointmentTypeID, SpecialistID: b.SpecialistID,
		Start: b.Start, End: b.End, BufferBefore: before, BufferAfter: after, Quota: 1, Life: s.cfg.OfferFor + grace,
		Rooms: roomsOf(f),
	})
	switch {
	case errors.Is(err, holds.ErrHeld) && f.cause == "staff":
		return uuid.Nil, apperr.New(apperr.Conflict, apperr.CodeSlotHeld, "Someone holds this time now. Pick another, or try again in a few minutes.")
	case err != nil:
		// Someone held the time already (a patient's hold on a booked time
		// can only lapse), or Redis is away: the opening's job takes the
		// hold when it can.
		s.log.Warn("waitlist: hold a freed time", "err", err)
	}
	n, err := q.WaitlistOpeningInsert(ctx, db.WaitlistOpeningInsertParams{
		ID: id, ClinicID: b.ClinicID, AppointmentTypeID: b.AppointmentTypeID, SpecialistID: b.SpecialistID,
		SlotStart: b.Start, SlotEnd: b.End, Cause: f.cause, FreedAt: s.now().UTC(), HoldID: h.HoldID,
	})
	if err != nil {
		return uuid.Nil, fmt.Errorf("record opening: %w", err)
	}
	if n == 0 {
		// An opening of this time is open already (it is being offered).
		if h.HoldID != "" {
			_, _ = s.holds.Release(context.WithoutCancel(ctx), h.HoldID, holdOwner(id))
		}
		if f.cause == "staff" {
			return uuid.Nil, apperr.New(apperr.Conflict, apperr.CodeSlotHeld, "This time is being offered from the waitlist already.")
		}
		return uuid.Nil, nil
	}
	if _, err := s.outbox.InsertJob(ctx, tx, stepArgs{OpeningID: id, Entry: f.entry}, river.InsertOpts{}); err != nil {
		return uuid.Nil, fmt.Errorf("enqueue offer: %w", err)
	}
	return id, nil
}

// openingSpace names the ids of openings made from a booking change.
var openingSpace = uuid.MustParse("5f0c6f55-2a43-4f5e-9b1e-6f1b0a7d2c11")

// openingID is the id of the opening a change of b makes: the same for
// every run of the change's transaction (one PostgreSQL aborted as a
// deadlock's victim is run again), so a run again claims the hold the
// first run took (its owner is the opening) rather than finding the time
// held by an opening that never was. A time staff offer by hand has no
// booking: its opening is new.
func openingID(b booking.Booking, cause string) uuid.UUID {
	if b.ID == uuid.Nil {
		return uuid.New()
	}
	return uuid.NewSHA1(openingSpace, fmt.Appendf(nil, "%s/%d/%s", b.ID, b.Version, cause))
}

func minutes(n int32) time.Duration { return time.Duration(n) * time.Minute }

// timeBooked says whether a confirmed booking of b's specialist overlaps
// b's time with its type's buffers around it (returned too), or a closure
// of the specialist or the clinic covers it (the bookings a closure leaves
// are cancelled into it): such a time is not free to offer.
func timeBooked(ctx context.Context, q *db.Queries, b booking.Booking) (before, after time.Duration, booked bool, err error) {
	t, err := q.AppointmentTypeGet(ctx, b.AppointmentTypeID)
	if err != nil {
		return 0, 0, false, fmt.Errorf("load appointment type: %w", err)
	}
	before, after = minutes(t.BufferBeforeMin), minutes(t.BufferAfterMin)
	booked, err = q.WaitlistTimeBooked(ctx, db.WaitlistTimeBookedParams{
		SpecialistID: b.SpecialistID, FromTime: b.Start.Add(-before), ToTime: b.End.Add(after),
	})
	if err != nil {
		return 0, 0, false, fmt.Errorf("is the time booked: %w", err)
	}
	if !booked {
		booked, err = q.ClosureCovers(ctx, db.ClosureCoversParams{
			ClinicID: b.ClinicID, SpecialistID: uuid.NullUUID{UUID: b.SpecialistID, Valid: true}, RangeStart: b.Start, RangeEnd: b.End,
		})
		if err != nil {
			return 0, 0, false, fmt.Errorf("is the time closed: %w", err)
		}
	}
	return before, after, booked, nil
}

// next is the first entry, in order of joining, that waits for the freed
// time and has not been offered this opening (openingID), locked for tx.
func (s *Openings) next(ctx context.Context, q *db.Queries, b booking.Booking, openingID uuid.UUID) (db.WaitlistEntry, bool, error) {
	e, err := q.WaitlistMatching(ctx, db.WaitlistMatchingParams{
		AppointmentTypeID: b.AppointmentTypeID, SpecialistID: uuid.NullUUID{UUID: b.SpecialistID, Valid: true},
		SlotStart: b.Start, OpeningID: uuid.NullUUID{UUID: openingID, Valid: openingID != uuid.Nil},
		AfternoonFromHour: afternoonFromHour, EveningFromHour: eveningFromHour,
		CancelKeepsSec: int32(booking.CancelKeepsCooldown / time.Second),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return db.WaitlistEntry{}, false, nil
	}
	if err != nil {
		return db.WaitlistEntry{}, false, fmt.Errorf("find a waiting patient: %w", err)
	}
	return e, true, nil
}

// cooling says whether e's patient booked e's type within the type's
// cooldown, by the booking gate's own test (booking.PatientCooldownUntil)
// at the database's time now: an Accept would be refused, so the time is
// not offered to them. The gate judges later, at the Accept, when a
// cooldown can only have run further: who passes now passes then, unless
// they book the type again meanwhile.
func (s *Openings) cooling(ctx context.Context, q *db.Queries, e db.WaitlistEntry) (bool, error) {
	until, err := booking.PatientCooldownUntil(ctx, q, e.ClinicID, e.AppointmentTypeID,
		booking.Patient{Email: e.PatientEmail, Phone: e.PatientPhone})
	if err != nil {
		return false, err
	}
	// Only a cooldown still running is found: none is the epoch.
	return until.After(time.Unix(0, 0)), nil
}

// taken closes the offer a booking takes up, with its entry and opening,
// in the booking's transaction; an offer that is over refuses the booking.
func (s *Openings) taken(ctx context.Context, tx pgx.Tx, offerID uuid.UUID, b booking.Booking) error {
	q := db.New(tx)
	now := s.now()
	// The opening is locked before the offer, in the order a step locks
	// them (Service.step): an Accept racing the step that runs the offer
	// out then waits for it instead of deadlocking with it. An offer's
	// opening never changes, so reading it unlocked first is safe.
	cur, err := q.WaitlistOfferGet(ctx, offerID)
	if err != nil {
		return fmt.Errorf("read offer: %w", err)
	}
	if _, err := q.WaitlistOpeningGetForUpdate(ctx, cur.WaitlistOpening.ID); err != nil {
		return fmt.Errorf("lock opening: %w", err)
	}
	r, err := q.WaitlistOfferGetForUpdate(ctx, offerID)
	if err != nil {
		return fmt.Errorf("lock offer: %w", err)
	}
	if r.WaitlistOffer.State != OfferOpen || !now.Before(r.WaitlistOffer.ExpiresAt) || !b.Start.After(now) {
		return offerOver()
	}
	o, err := q.WaitlistOfferEnd(ctx, db.WaitlistOfferEndParams{ID: offerID, State: OfferAccepted, EndedAt: ptr(now),
		BookingID: uuid.NullUUID{UUID: b.ID, Valid: true}})
	if err != nil {
		return fmt.Errorf("close offer: %w", err)
	}
	if _, err := q.WaitlistEntryEnd(ctx, db.WaitlistEntryEndParams{ID: o.EntryID, State: StateBooked, EndedAt: ptr(now),
		BookingID: uuid.NullUUID{UUID: b.ID, Valid: true}}); err != nil {
		return fmt.Errorf("close entry: %w", err)
	}
	if err := q.WaitlistOpeningClose(ctx, db.WaitlistOpeningCloseParams{ID: o.OpeningID, State: "booked", ClosedAt: ptr(now)}); err != nil {
		return fmt.Errorf("close opening: %w", err)
	}
	if o.NextJobID.Valid {
		if err := s.outbox.CancelJob(ctx, tx, o.NextJobID.Int64); err != nil {
			return err
		}
	}
	s.stats.Accepted.Add(1)
	s.stats.RebookedMillis.Add(now.Sub(r.WaitlistOpening.FreedAt).Milliseconds())
	return nil
}

func offerOver() error {
	return apperr.New(apperr.Gone, apperr.CodeOfferOver, "This offer is over: it ran out, or was declined. The time may have gone to someone else.")
}
