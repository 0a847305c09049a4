package waitlist

// Answering an offer: taking the time, or passing it on.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/staff"
)

// pinFor keeps an offer's hold while its booking is written.
const pinFor = 30 * time.Second

// Accept books the offered time for the entry, through the booking gate
// (one transaction with its audit row, its e-mails and the offer's end),
// from the offer's hold, which the booking then spends. Errors: NOT_FOUND
// (no such offer link), OFFER_OVER (410: ran out, declined, withdrawn, or
// taken already: Offer's State says which), and the gate's own
// (SLOT_TAKEN, COOLDOWN, ...).
func (s *Service) Accept(ctx context.Context, clinicID uuid.UUID, token string) (booking.Confirmation, error) {
	e, o, err := s.ByToken(ctx, clinicID, token)
	if err != nil {
		return booking.Confirmation{}, err
	}
	if o.ID == uuid.Nil {
		return booking.Confirmation{}, apperr.NotFoundf("token", "No such offer.")
	}
	if o.State != OfferOpen || !s.now().Before(o.ExpiresAt) {
		return booking.Confirmation{}, offerOver()
	}
	holdID, room := o.HoldID, uuid.Nil
	if holdID != "" {
		// The hold stays ours while the booking is written. If Redis lost
		// it, the gate alone decides, and the booking still spends what is
		// left of it (its index entries), so the time is never announced
		// as released once booked.
		h, err := s.holds.Pin(ctx, holdID, holdOwner(o.OpeningID), pinFor)
		room = h.ResourceID // the room the hold holds: the booking takes it
		switch {
		case err == nil, errors.Is(err, holds.ErrExpired):
		case errors.Is(err, holds.ErrNotOwner):
			holdID = ""
		default:
			s.log.Warn("waitlist: pin an offer's hold", "err", err)
		}
	}
	clientID := "waitlist:" + e.ID.String()
	return s.bookings.Book(ctx, booking.BookRequest{
		ClinicID: o.ClinicID, AppointmentTypeID: o.AppointmentTypeID, SpecialistID: o.SpecialistID, ResourceID: room,
		Start: o.Start, End: o.End, Patient: e.Patient, ClientID: clientID, Actor: booking.ActorPatient,
		Language: e.Language, HoldID: holdID, WaitlistOffer: o.ID,
	})
}

// Decline passes the offered time on to the next waiting patient at once;
// the entry stays in the list for other times, at its end, so the next
// time goes to those who waited behind it rather than to it again.
// Declining an offer that is over already is no error.
func (s *Service) Decline(ctx context.Context, clinicID uuid.UUID, token string) error {
	_, o, err := s.ByToken(ctx, clinicID, token)
	if err != nil {
		return err
	}
	if o.ID == uuid.Nil {
		return apperr.NotFoundf("token", "No such offer.")
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		ended, err := q.WaitlistOfferEnd(ctx, db.WaitlistOfferEndParams{ID: o.ID, State: OfferDeclined, EndedAt: ptr(s.now())})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("decline offer: %w", err)
		}
		if err := q.WaitlistEntryRequeue(ctx, db.WaitlistEntryRequeueParams{ID: ended.EntryID, QueuedAt: s.now().UTC()}); err != nil {
			return fmt.Errorf("entry waits again: %w", err)
		}
		s.stats.Declined.Add(1)
		return s.passOnNow(ctx, tx, ended)
	})
}

// OfferByHand offers a time staff member u chose (free, ahead) to an
// entry they chose, ahead of the list's order, audited. Errors:
// FORBIDDEN, NOT_FOUND (entry or
// specialist not of the clinic), INVALID_ARGUMENT (a time not ahead, or
// a specialist who does not perform the type), SLOT_TAKEN (booked),
// SLOT_HELD (held, or offered from the list already),
// WAITLIST_ENTRY_OVER (the entry left the list or has an offer),
// WAITLIST_UNCONFIRMED (a conflict: the patient has not confirmed the
// place from its e-mail, so nothing proves the address is theirs), COOLDOWN
// (a conflict: the patient booked the type within its cooldown, so the
// booking would refuse their Accept).
func (s *Service) OfferByHand(ctx context.Context, u staff.User, entryID, specialistID uuid.UUID, start time.Time) error {
	if err := u.May(ActOffer); err != nil {
		return err
	}
	clinicID, actor := u.ClinicID, u.Actor()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		e, err := q.WaitlistEntryGetForUpdate(ctx, entryID)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && e.ClinicID != clinicID) {
			return apperr.NotFoundf("entryId", "No such waitlist entry.")
		}
		if err != nil {
			return fmt.Errorf("lock entry: %w", err)
		}
		if e.State != StateWaiting {
			return apperr.New(apperr.Conflict, apperr.CodeEntryOver, "This patient is no longer waiting, or has an offer already.")
		}
		if e.ConfirmedAt == nil {
			return apperr.New(apperr.Conflict, apperr.CodeWaitlistUnconfirmed,
				"This patient has not confirmed their place from the e-mail we sent them, so no time is offered to them yet.")
		}
		// The list passes such a patient over; so does an offer by hand,
		// rather than hold a time for an Accept the booking would refuse.
		if cooling, err := s.cooling(ctx, q, e); err != nil {
			return err
		} else if cooling {
			return apperr.New(apperr.Conflict, apperr.CodeCooldown,
				"This patient booked this type within its cooldown: they could not book this time. Offer it to someone else.")
		}
		target, err := q.BookingTargetGet(ctx, db.BookingTargetGetParams{AppointmentTypeID: e.AppointmentTypeID, SpecialistID: specialistID})
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("load specialist: %w", err)
		}
		if err != nil || !target.SpecialistFound || !target.SameClinic || !target.SpecialistActive || !target.Performs {
			return apperr.Invalidf("specialistId", "This specialist does not take bookings of this type.")
		}
		if !start.After(s.now()) {
			return apperr.Invalidf("start", "The time must be ahead.")
		}
		at := target.AppointmentType
		b := booking.Booking{ClinicID: clinicID, AppointmentTypeID: at.ID, SpecialistID: specialistID,
			Start: start.UTC(), End: start.UTC().Add(minutes(at.DurationMin))}
		_, _, booked, err := timeBooked(ctx, q, b)
		if err != nil {
			return err
		}
		rooms, needs, err := freeRooms(ctx, q, b)
		if err != nil {
			return err
		}
		if booked || (needs && len(rooms) == 0) {
			return apperr.New(apperr.Conflict, apperr.CodeSlotTaken, "This time is booked.")
		}
		id, err := s.open(ctx, tx, freed{booking: b, cause: "staff", entry: e.ID, rooms: rooms})
		if err != nil {
			return err
		}
		return audit.Write(ctx, q, audit.Entry{ClinicID: clinicID, Actor: actor, Action: "waitlist.offer",
			Entity: "waitlist_entry", EntityID: e.ID.String(),
			After: map[string]any{"openingId": id, "specialistId": specialistID, "start": b.Start}})
	})
}

// Entry is one entry of u's clinic's list, as List reads it (waiting, or
// with a time offered), wherever it stands in the list.
// Errors: FORBIDDEN, NOT_FOUND (not in the list, or another clinic's).
func (s *Service) Entry(ctx context.Context, u staff.User, id uuid.UUID) (Entry, error) {
	if err := u.May(ActOffer); err != nil {
		return Entry{}, err
	}
	return s.entry(ctx, u.ClinicID, id)
}

func (s *Service) entry(ctx context.Context, clinicID, id uuid.UUID) (Entry, error) {
	r, err := db.New(s.pool).WaitlistStaffEntry(ctx, db.WaitlistStaffEntryParams{ID: id, ClinicID: clinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Entry{}, apperr.NotFoundf("entryId", "No such waitlist entry.")
	}
	if err != nil {
		return Entry{}, fmt.Errorf("read waitlist entry: %w", err)
	}
	e := entryFromRow(r.WaitlistEntry)
	e.TypeName, e.SpecialistName, e.OfferID = r.TypeName, r.SpecialistName, r.OfferID
	if r.OfferExpiresAt != nil {
		e.OfferUntil = *r.OfferExpiresAt
	}
	if r.OfferStart != nil {
		e.OfferStart = *r.OfferStart
	}
	return e, nil
}

// List is u's clinic's waitlist, oldest first: everyone waiting (or with
// an offer), for one type if typeID is set, and whose days include day if
// it is not zero. Errors: FORBIDDEN.
func (s *Service) List(ctx context.Context, u staff.User, typeID uuid.UUID, day time.Time) ([]Entry, error) {
	if err := u.May(ActOffer); err != nil {
		return nil, err
	}
	p := db.WaitlistEntriesByClinicParams{ClinicID: u.ClinicID,
		AppointmentTypeID: uuid.NullUUID{UUID: typeID, Valid: typeID != uuid.Nil}}
	if !day.IsZero() {
		p.Day = pgtype.Date{Time: day, Valid: true}
	}
	rows, err := db.New(s.pool).WaitlistEntriesByClinic(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list waitlist: %w", err)
	}
	out := make([]Entry, len(rows))
	for i, r := range rows {
		e := entryFromRow(r.WaitlistEntry)
		e.TypeName, e.SpecialistName, e.OfferID = r.TypeName, r.SpecialistName, r.OfferID
		if r.OfferExpiresAt != nil {
			e.OfferUntil = *r.OfferExpiresAt
		}
		if r.OfferStart != nil {
			e.OfferStart = *r.OfferStart
		}
		out[i] = e
	}
	return out, nil
}

// CountByDay is how many wait (or have an offer) on each day from..to
// (dates) at u's clinic, for the staff calendar; days nobody waits for
// are left out. Errors: FORBIDDEN.
func (s *Service) CountByDay(ctx context.Context, u staff.User, from, to time.Time) (map[time.Time]int, error) {
	if err := u.May(ActOffer); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).WaitlistCountByDay(ctx, db.WaitlistCountByDayParams{ClinicID: u.ClinicID, FromDay: from, ToDay: to})
	if err != nil {
		return nil, fmt.Errorf("count waitlist: %w", err)
	}
	out := make(map[time.Time]int, len(rows))
	for _, r := range rows {
		out[r.Day] = int(r.Waiting)
	}
	return out, nil
}
