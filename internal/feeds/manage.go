// The staff's side: making, replacing and revoking addresses, linking an
// account to its specialist, and the clinic's choice of names.

package feeds

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/staff"
)

// tokenPrefix starts every feed token, so that one found in a log or a
// paste is known for what it is.
const tokenPrefix = "f_"

// State is an owner's feed as staff see it: whether an address works, and
// since when. The address itself is shown once, when made.
type State struct {
	Since *time.Time // nil: no address works
}

// SpecialistFeed is the state of a specialist's feed.
//
// Errors: FORBIDDEN for those who may not open specialists' pages.
func (s *Service) SpecialistFeed(ctx context.Context, u staff.User, specialistID uuid.UUID) (State, error) {
	if err := u.May(staff.ActSpecialists); err != nil {
		return State{}, err
	}
	rows, err := db.New(s.pool).CalendarFeedSpecialistSince(ctx, db.CalendarFeedSpecialistSinceParams{ClinicID: u.ClinicID, SpecialistID: uuid.NullUUID{UUID: specialistID, Valid: true}})
	return stateOf(rows, err)
}

// OwnFeed is the state of u's own feed.
//
// Errors: FORBIDDEN for a role that may not see the calendar.
func (s *Service) OwnFeed(ctx context.Context, u staff.User) (State, error) {
	if err := u.May(staff.ActCalendar); err != nil {
		return State{}, err
	}
	rows, err := db.New(s.pool).CalendarFeedAccountSince(ctx, db.CalendarFeedAccountSinceParams{ClinicID: u.ClinicID, StaffUserID: uuid.NullUUID{UUID: u.ID, Valid: true}})
	return stateOf(rows, err)
}

func stateOf(rows []time.Time, err error) (State, error) {
	if err != nil || len(rows) == 0 {
		return State{}, err
	}
	return State{Since: &rows[0]}, nil
}

// NewSpecialistFeed makes a new address for a specialist's feed, ending
// the one before it at once, and returns its token (shown this once).
//
// Errors: FORBIDDEN for those who may not edit specialists (admins may);
// NOT_FOUND for a specialist of another clinic.
func (s *Service) NewSpecialistFeed(ctx context.Context, u staff.User, specialistID uuid.UUID) (string, error) {
	if err := u.May(staff.ActSpecialistsEdit); err != nil {
		return "", err
	}
	return s.newFeed(ctx, u, uuid.NullUUID{UUID: specialistID, Valid: true}, uuid.NullUUID{})
}

// NewOwnFeed makes a new address for u's own feed, ending the one before
// it at once, and returns its token (shown this once).
//
// Errors: FORBIDDEN for a role that may not see the calendar.
func (s *Service) NewOwnFeed(ctx context.Context, u staff.User) (string, error) {
	if err := u.May(staff.ActCalendar); err != nil {
		return "", err
	}
	return s.newFeed(ctx, u, uuid.NullUUID{}, uuid.NullUUID{UUID: u.ID, Valid: true})
}

func (s *Service) newFeed(ctx context.Context, u staff.User, specialist, account uuid.NullUUID) (string, error) {
	random, err := secret.NewToken(32)
	if err != nil {
		return "", err
	}
	token := tokenPrefix + random
	err = s.tx(ctx, func(q *db.Queries) error {
		if err := s.revoke(ctx, q, u, specialist, account); err != nil {
			return err
		}
		row, err := q.CalendarFeedInsert(ctx, db.CalendarFeedInsertParams{ClinicID: u.ClinicID, SpecialistID: specialist, StaffUserID: account, TokenHash: secret.Hash(token)})
		if err != nil {
			if isForeignKey(err) {
				return staff.NotFound("specialist")
			}
			return err
		}
		return staff.WriteAudit(ctx, q, u, "calendar_feed.create", "calendar_feed", row.ID.String(), nil, owner(specialist, account), "")
	})
	return token, err
}

// RevokeSpecialistFeed stops a specialist's address working.
//
// Errors: FORBIDDEN for those who may not edit specialists; NOT_FOUND when
// no address works.
func (s *Service) RevokeSpecialistFeed(ctx context.Context, u staff.User, specialistID uuid.UUID) error {
	if err := u.May(staff.ActSpecialistsEdit); err != nil {
		return err
	}
	return s.revokeOne(ctx, u, uuid.NullUUID{UUID: specialistID, Valid: true}, uuid.NullUUID{})
}

// RevokeOwnFeed stops u's own address working.
//
// Errors: FORBIDDEN for a role that may not see the calendar; NOT_FOUND
// when no address works.
func (s *Service) RevokeOwnFeed(ctx context.Context, u staff.User) error {
	if err := u.May(staff.ActCalendar); err != nil {
		return err
	}
	return s.revokeOne(ctx, u, uuid.NullUUID{}, uuid.NullUUID{UUID: u.ID, Valid: true})
}

func (s *Service) revokeOne(ctx context.Context, u staff.User, specialist, account uuid.NullUUID) error {
	return s.tx(ctx, func(q *db.Queries) error {
		n, err := s.revokeCount(ctx, q, u, specialist, account)
		if err != nil {
			return err
		}
		if n == 0 {
			return apperr.NotFoundf("", "No calendar address works now.")
		}
		return staff.WriteAudit(ctx, q, u, "calendar_feed.revoke", "calendar_feed", "", nil, owner(specialist, account), "")
	})
}

func (s *Service) revoke(ctx context.Context, q *db.Queries, u staff.User, specialist, account uuid.NullUUID) error {
	_, err := s.revokeCount(ctx, q, u, specialist, account)
	return err
}

func (s *Service) revokeCount(ctx context.Context, q *db.Queries, u staff.User, specialist, account uuid.NullUUID) (int64, error) {
	if specialist.Valid {
		return q.CalendarFeedRevokeSpecialist(ctx, db.CalendarFeedRevokeSpecialistParams{ClinicID: u.ClinicID, SpecialistID: specialist})
	}
	return q.CalendarFeedRevokeAccount(ctx, db.CalendarFeedRevokeAccountParams{ClinicID: u.ClinicID, StaffUserID: account})
}

// owner is the audit entry's account of whose feed it is.
func owner(specialist, account uuid.NullUUID) map[string]string {
	if specialist.Valid {
		return map[string]string{"specialist": specialist.UUID.String()}
	}
	return map[string]string{"account": account.UUID.String()}
}

// Account is a staff account as the link to a specialist shows it.
type Account struct {
	ID    uuid.UUID
	Email string
}

// LinkedAccounts are the accounts linked to a specialist.
//
// Errors: FORBIDDEN for those who may not open specialists' pages.
func (s *Service) LinkedAccounts(ctx context.Context, u staff.User, specialistID uuid.UUID) ([]Account, error) {
	if err := u.May(staff.ActSpecialists); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).StaffUsersOfSpecialist(ctx, db.StaffUsersOfSpecialistParams{ClinicID: u.ClinicID, SpecialistID: uuid.NullUUID{UUID: specialistID, Valid: true}})
	return staff.FromRows(rows, err, func(r db.StaffUsersOfSpecialistRow) Account { return Account{ID: r.ID, Email: r.Email} })
}

// LinkAccount makes account the specialist's (uuid.Nil: unlinks it): the
// account's own feed then carries the specialist's bookings. The feed's
// cached bodies are the specialist's, so nothing is dropped.
//
// Errors: FORBIDDEN for those who may not edit specialists; NOT_FOUND for
// an account or specialist of another clinic.
func (s *Service) LinkAccount(ctx context.Context, u staff.User, specialistID, account uuid.UUID) error {
	if err := u.May(staff.ActSpecialistsEdit); err != nil {
		return err
	}
	return s.tx(ctx, func(q *db.Queries) error {
		n, err := q.StaffUserSpecialistSet(ctx, db.StaffUserSpecialistSetParams{ClinicID: u.ClinicID, ID: account, SpecialistID: uuid.NullUUID{UUID: specialistID, Valid: true}})
		if isForeignKey(err) {
			return staff.NotFound("specialist")
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return staff.NotFound("account")
		}
		return staff.WriteAudit(ctx, q, u, "staff_user.specialist", "staff_user", account.String(), nil, map[string]string{"specialist": specialistID.String()}, "")
	})
}

// UnlinkAccount ends account's link to the specialist.
//
// Errors: FORBIDDEN for those who may not edit specialists; NOT_FOUND for
// an account of another clinic.
func (s *Service) UnlinkAccount(ctx context.Context, u staff.User, account uuid.UUID) error {
	if err := u.May(staff.ActSpecialistsEdit); err != nil {
		return err
	}
	return s.tx(ctx, func(q *db.Queries) error {
		n, err := q.StaffUserSpecialistSet(ctx, db.StaffUserSpecialistSetParams{ClinicID: u.ClinicID, ID: account})
		if err != nil {
			return err
		}
		if n == 0 {
			return staff.NotFound("account")
		}
		return staff.WriteAudit(ctx, q, u, "staff_user.specialist", "staff_user", account.String(), nil, map[string]string{"specialist": ""}, "")
	})
}

// OwnSpecialist is the name of the specialist u is linked to ("": none).
//
// Errors: none of its own.
func (s *Service) OwnSpecialist(ctx context.Context, u staff.User) (string, error) {
	row, err := db.New(s.pool).StaffUserSpecialistName(ctx, u.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return row.Name, err
}

// SetNames turns patients' names in the clinic's feeds on or off; the
// feeds show it at their next request.
//
// Errors: FORBIDDEN for those who may not change the clinic's settings.
func (s *Service) SetNames(ctx context.Context, u staff.User, on bool) error {
	if err := u.May(staff.ActSettings); err != nil {
		return err
	}
	return s.tx(ctx, func(q *db.Queries) error {
		if err := q.ClinicFeedNamesSet(ctx, db.ClinicFeedNamesSetParams{ID: u.ClinicID, FeedPatientNames: on}); err != nil {
			return err
		}
		return staff.WriteAudit(ctx, q, u, "clinic.feed_names", "clinic", u.ClinicID.String(), nil, map[string]bool{"feed_patient_names": on}, "")
	})
}

// Names says whether the clinic's feeds carry patients' names.
//
// Errors: FORBIDDEN for those who may not see the clinic's settings.
func (s *Service) Names(ctx context.Context, u staff.User) (bool, error) {
	if err := u.May(staff.ActSettings); err != nil {
		return false, err
	}
	c, err := db.New(s.pool).ClinicGet(ctx, u.ClinicID)
	return c.FeedPatientNames, err
}

// isForeignKey is whether err is PostgreSQL refusing a reference to a row
// that is not there (here: a specialist of another clinic).
func isForeignKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}
