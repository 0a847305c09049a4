package waitlist

// The offer job: offers an opening to the next waiting patient, or frees
// the time when nobody (more) waits.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/outbox"
)

// stepArgs is one step of an opening: the first (After nil), or the one
// that follows offer After up at its expiry or when it ends sooner. The
// queue keeps one job per step (unique by its arguments), so a step is
// never queued twice, whoever asks.
type stepArgs struct {
	OpeningID uuid.UUID `json:"opening_id"`
	After     uuid.UUID `json:"after,omitzero"`
	// Entry, on a first step staff asked for, is who the time is offered to.
	Entry uuid.UUID `json:"entry,omitzero"`
}

func (stepArgs) Kind() string { return "waitlist_offer" }

// InsertOpts: one job per step.
func (stepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type stepWorker struct {
	river.WorkerDefaults[stepArgs]
	s *Service
}

// Jobs are the waitlist's jobs, for the outbox's queue to work
// (outbox.Outbox.Start): the offers' steps, and the sweep, which one
// process of all inserts every SweepEvery.
func (s *Service) Jobs() outbox.Jobs {
	return outbox.Jobs{
		Register: s.register,
		Periodic: []outbox.Periodic{{Every: SweepEvery, Args: func() river.JobArgs { return sweepArgs{} }}},
	}
}

// register adds the workers of the offer's job and of the sweep.
func (s *Service) register(w *river.Workers) error {
	if err := river.AddWorkerSafely(w, &stepWorker{s: s}); err != nil {
		return err
	}
	return river.AddWorkerSafely(w, &sweepWorker{s: s})
}

func (w *stepWorker) Work(ctx context.Context, job *river.Job[stepArgs]) error {
	live, err := w.s.step(ctx, job.Args.OpeningID, job.Args.Entry)
	if err != nil || live.ID == uuid.Nil || live.ID != job.Args.After {
		return err
	}
	// The job that follows an offer up ran before the offer's end (clocks
	// of the queue and of this process differ a little): it comes back
	// then, or nothing would ever step the opening on.
	return river.JobSnooze(live.ExpiresAt.Sub(w.s.now()) + time.Second)
}

// errHeldElsewhere: the time is held by someone else; the step waits.
type errHeldElsewhere struct{ until time.Duration }

func (e errHeldElsewhere) Error() string { return "waitlist: the freed time is held by someone else" }

// Step moves an opening on, once: an offer that ran out ends (its entry
// lapses), and the time is offered to the next waiting patient (to entry,
// if staff chose one) under the opening's hold, or, when nobody waits, the
// opening closes and the hold is released. A live offer is left alone.
// Several processes stepping one opening at once make one offer: the
// opening's row is locked for the step.
func (s *Service) Step(ctx context.Context, openingID, entry uuid.UUID) error {
	_, err := s.step(ctx, openingID, entry)
	return err
}

// step is Step that returns the offer that still stands, if one does.
func (s *Service) step(ctx context.Context, openingID, entry uuid.UUID) (live db.WaitlistOffer, err error) {
	var release *db.WaitlistOpening
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		release, live = nil, db.WaitlistOffer{}
		q := db.New(tx)
		op, err := q.WaitlistOpeningGetForUpdate(ctx, openingID)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && op.State != "open") {
			return nil
		}
		if err != nil {
			return fmt.Errorf("lock opening: %w", err)
		}
		if live, err = s.endExpired(ctx, q, op); err != nil || live.ID != uuid.Nil {
			return err
		}
		b := booking.Booking{ClinicID: op.ClinicID, AppointmentTypeID: op.AppointmentTypeID, SpecialistID: op.SpecialistID, Start: op.SlotStart, End: op.SlotEnd}
		e, ok, err := s.pick(ctx, q, b, op.ID, entry)
		if err != nil {
			return err
		}
		// The opening's hold keeps the time from everyone else; a time
		// booked all the same (the hold was lost, and someone booked it
		// before it was taken again) has nothing left to offer.
		if ok {
			if ok, err = s.stillFree(ctx, q, b); err != nil {
				return err
			}
		}
		if !ok || !op.SlotStart.After(s.now()) {
			if err := q.WaitlistOpeningClose(ctx, db.WaitlistOpeningCloseParams{ID: op.ID, State: "released", ClosedAt: ptr(s.now())}); err != nil {
				return fmt.Errorf("close opening: %w", err)
			}
			release = &op
			return nil
		}
		return s.offerTo(ctx, tx, q, op, e)
	})
	var held errHeldElsewhere
	if errors.As(err, &held) {
		return db.WaitlistOffer{}, river.JobSnooze(held.until)
	}
	if err != nil {
		return db.WaitlistOffer{}, err
	}
	if release != nil {
		s.stats.Released.Add(1)
		if release.HoldID != "" {
			if _, err := s.holds.Release(ctx, release.HoldID, holdOwner(release.ID)); err != nil && !errors.Is(err, holds.ErrGone) {
				s.log.Warn("waitlist: release a freed time", "err", err)
			}
		}
	}
	return live, nil
}

// stillFree says whether b's time may still be offered: nobody booked it
// (its hold was lost, and someone booked it before it was taken again),
// and, when the service can ask, it is still among the type's bookable
// times (hours, closures, notice: a day closed after the cancellation,
// or a time now too close to book, is not offered).
func (s *Service) stillFree(ctx context.Context, q *db.Queries, b booking.Booking) (bool, error) {
	_, _, booked, err := timeBooked(ctx, q, b)
	if err != nil || booked {
		return false, err
	}
	if s.cfg.Bookable == nil {
		return true, nil
	}
	return s.cfg.Bookable(ctx, b)
}

// endExpired ends the opening's offer if it ran out, and returns the one
// that still stands (zero if none). The entry of an offer that ran out
// leaves the list, unless its e-mail never went out (the mail server was
// away): a patient who was never told waits on.
func (s *Service) endExpired(ctx context.Context, q *db.Queries, op db.WaitlistOpening) (db.WaitlistOffer, error) {
	cur, err := q.WaitlistOfferOpen(ctx, op.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.WaitlistOffer{}, nil
	}
	if err != nil {
		return db.WaitlistOffer{}, fmt.Errorf("read offer: %w", err)
	}
	now := s.now()
	if now.Before(cur.ExpiresAt) {
		return cur, nil
	}
	if _, err := q.WaitlistOfferEnd(ctx, db.WaitlistOfferEndParams{ID: cur.ID, State: OfferExpired, EndedAt: ptr(now)}); errors.Is(err, pgx.ErrNoRows) {
		return db.WaitlistOffer{}, nil // answered (or withdrawn) just now
	} else if err != nil {
		return db.WaitlistOffer{}, fmt.Errorf("expire offer: %w", err)
	}
	told, err := q.WaitlistOfferMailSent(ctx, uuid.NullUUID{UUID: cur.ID, Valid: true})
	if err != nil {
		return db.WaitlistOffer{}, fmt.Errorf("was the offer sent: %w", err)
	}
	if !told {
		err = q.WaitlistEntrySetState(ctx, db.WaitlistEntrySetStateParams{ID: cur.EntryID, State: StateWaiting})
	} else {
		_, err = q.WaitlistEntryEnd(ctx, db.WaitlistEntryEndParams{ID: cur.EntryID, State: StateLapsed, EndedAt: ptr(now)})
	}
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return db.WaitlistOffer{}, fmt.Errorf("end the entry's offer: %w", err)
	}
	s.stats.Expired.Add(1)
	return db.WaitlistOffer{}, nil
}

// pick is who gets the time: the entry staff chose, if it still waits and
// has not booked the type within its cooldown since, or the first in the
// list.
func (s *Service) pick(ctx context.Context, q *db.Queries, b booking.Booking, openingID, chosen uuid.UUID) (db.WaitlistEntry, bool, error) {
	if chosen == uuid.Nil {
		return s.next(ctx, q, b, openingID)
	}
	// The time staff chose is for that patient alone: if they no longer
	// wait, it goes back to everyone rather than down the list. A place
	// not confirmed is never offered, whoever asks.
	e, err := q.WaitlistEntryGetForUpdate(ctx, chosen)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && (e.State != StateWaiting || e.ConfirmedAt == nil)) {
		return db.WaitlistEntry{}, false, nil
	}
	if err != nil {
		return db.WaitlistEntry{}, false, fmt.Errorf("lock entry: %w", err)
	}
	if cooling, err := s.cooling(ctx, q, e); err != nil || cooling {
		return db.WaitlistEntry{}, false, err
	}
	return e, true, nil
}

// offerTo offers the opening's time to entry e: the hold is kept for the
// offer (taken anew if it was lost), the offer and its e-mail are written,
// and the step that follows it up is scheduled at its expiry.
func (s *Service) offerTo(ctx context.Context, tx pgx.Tx, q *db.Queries, op db.WaitlistOpening, e db.WaitlistEntry) error {
	now := s.now()
	// An offer never outlives the time it offers.
	expires := now.Add(s.cfg.OfferFor)
	if op.SlotStart.Before(expires) {
		expires = op.SlotStart
	}
	holdID, err := s.keepHold(ctx, op, expires.Add(grace))
	if err != nil {
		return err
	}
	if holdID != op.HoldID {
		if err := q.WaitlistOpeningSetHold(ctx, db.WaitlistOpeningSetHoldParams{ID: op.ID, HoldID: holdID}); err != nil {
			return fmt.Errorf("record hold: %w", err)
		}
	}
	if s.cfg.AfterHold != nil {
		if err := s.cfg.AfterHold(ctx); err != nil {
			return err
		}
	}
	offerID := uuid.New()
	if err := q.WaitlistOfferInsert(ctx, db.WaitlistOfferInsertParams{ID: offerID, OpeningID: op.ID, EntryID: e.ID, OfferedAt: now, ExpiresAt: expires}); err != nil {
		return fmt.Errorf("record offer: %w", err)
	}
	if err := q.WaitlistEntrySetState(ctx, db.WaitlistEntrySetStateParams{ID: e.ID, State: StateOffered}); err != nil {
		return fmt.Errorf("mark entry offered: %w", err)
	}
	if err := s.mail(ctx, tx, outbox.KindWaitlistOffer, e, offerID); err != nil {
		return err
	}
	res, err := s.outbox.InsertJob(ctx, tx, stepArgs{OpeningID: op.ID, After: offerID}, river.InsertOpts{ScheduledAt: expires})
	if err != nil {
		return fmt.Errorf("schedule the offer's end: %w", err)
	}
	if err := q.WaitlistOfferSetNextJob(ctx, db.WaitlistOfferSetNextJobParams{ID: offerID, NextJobID: pgtype.Int8{Int64: res.Job.ID, Valid: true}}); err != nil {
		return fmt.Errorf("record the offer's job: %w", err)
	}
	s.stats.Offered.Add(1)
	return nil
}

// keepHold makes the opening's hold last until until, taking it anew if
// it was lost (Redis restarted, or the first claim failed). A time another
// client holds is waited for (errHeldElsewhere).
func (s *Service) keepHold(ctx context.Context, op db.WaitlistOpening, until time.Time) (string, error) {
	owner := holdOwner(op.ID)
	if op.HoldID != "" {
		_, err := s.holds.Keep(ctx, op.HoldID, owner, until)
		if err == nil {
			return op.HoldID, nil
		}
		if !errors.Is(err, holds.ErrExpired) {
			return "", fmt.Errorf("keep the hold: %w", err)
		}
	}
	q := db.New(s.pool)
	t, err := q.AppointmentTypeGet(ctx, op.AppointmentTypeID)
	if err != nil {
		return "", fmt.Errorf("load appointment type: %w", err)
	}
	// The hold taken anew holds a room that is free now, if the type needs one.
	rooms, _, err := freeRooms(ctx, q, booking.Booking{ClinicID: op.ClinicID, AppointmentTypeID: op.AppointmentTypeID, Start: op.SlotStart, End: op.SlotEnd})
	if err != nil {
		return "", err
	}
	h, err := s.holds.Claim(ctx, holds.ClaimRequest{
		ClientID: owner, ClinicID: op.ClinicID, AppointmentTypeID: op.AppointmentTypeID, SpecialistID: op.SpecialistID,
		Start: op.SlotStart, End: op.SlotEnd, BufferBefore: minutes(t.BufferBeforeMin), BufferAfter: minutes(t.BufferAfterMin),
		Quota: 1, Life: until.Sub(s.now()), Rooms: rooms,
	})
	var held *holds.HeldError
	if errors.As(err, &held) {
		return "", errHeldElsewhere{until: held.RetryAfter + time.Second}
	}
	if err != nil {
		return "", fmt.Errorf("hold the time: %w", err)
	}
	if _, err := s.holds.Keep(ctx, h.HoldID, owner, until); err != nil {
		return "", fmt.Errorf("keep the hold: %w", err)
	}
	return h.HoldID, nil
}
