package waitlist

// Confirming a place from the link its e-mail carries, and ending the
// places nobody confirms.

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
)

// Confirm confirms the place whose e-mailed link token is, so that it is
// offered times from now on, audited; it returns the place as it stands
// then. Confirming twice is no error. Only a link that came in an e-mail
// confirms: the one shown on joining proves nothing of the address.
// Errors: NOT_FOUND (no such link), FORBIDDEN (a link that was not
// e-mailed), WAITLIST_ENTRY_OVER (410: the place ended, for one because
// nobody confirmed it in time).
func (s *Service) Confirm(ctx context.Context, clinicID uuid.UUID, token string) (Entry, error) {
	e, _, err := s.ByToken(ctx, clinicID, token)
	if err != nil {
		return Entry{}, err
	}
	if !e.ByMail {
		return Entry{}, apperr.New(apperr.Forbidden, apperr.CodeForbidden,
			"Confirm your place with the link in the e-mail we sent you.")
	}
	if e.State != StateWaiting && e.State != StateOffered {
		return Entry{}, apperr.New(apperr.Gone, apperr.CodeEntryOver, "This place on the waitlist has ended.")
	}
	if !e.Confirmed() {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			q := db.New(tx)
			row, err := q.WaitlistEntryConfirm(ctx, db.WaitlistEntryConfirmParams{ID: e.ID, ConfirmedAt: ptr(s.now().UTC())})
			if errors.Is(err, pgx.ErrNoRows) {
				return nil // confirmed just now, or ended: read again below
			}
			if err != nil {
				return fmt.Errorf("confirm entry: %w", err)
			}
			return audit.Write(ctx, q, audit.Entry{ClinicID: row.ClinicID, Actor: booking.ActorPatient,
				Action: "waitlist.confirm", Entity: "waitlist_entry", EntityID: row.ID.String()})
		})
		if err != nil {
			return Entry{}, err
		}
	}
	if e, _, err = s.ByToken(ctx, clinicID, token); err != nil {
		return Entry{}, err
	}
	if e.State != StateWaiting && e.State != StateOffered {
		return Entry{}, apperr.New(apperr.Gone, apperr.CodeEntryOver, "This place on the waitlist has ended.")
	}
	return e, nil
}

// lapseUnconfirmed ends the places not confirmed within ConfirmWithin of
// joining, of one clinic or (clinic null) of every clinic.
func (s *Service) lapseUnconfirmed(ctx context.Context, q *db.Queries, clinic uuid.NullUUID) error {
	now := s.now()
	_, err := q.WaitlistLapseUnconfirmed(ctx, db.WaitlistLapseUnconfirmedParams{
		Now: now, JoinedBefore: now.Add(-ConfirmWithin), ClinicID: clinic,
	})
	if err != nil {
		return fmt.Errorf("lapse places never confirmed: %w", err)
	}
	return nil
}
