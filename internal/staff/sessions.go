// An account's signed-in sessions: listed on Your account and ended from
// there, by an admin's reset or by the command line.
//
// The web layer's session store keeps each session under its token in
// the sessions table. Beside it, staff_sessions keeps one row per staff
// session, keyed by the SHA-256 of the token (never the token): the
// browser, the address, when it signed in and when it was last seen. An
// index on the store's table by the same hash finds the session to end.

package staff

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
)

// SeenEvery is how often a session's "last seen" is written at most.
const SeenEvery = time.Minute

// endedKept is how long an ended session's row stays marked after the
// store's row is gone: longer than any session lives, in case a request
// under way when it ended writes it back.
const endedKept = 24 * time.Hour

// SessionHash is what is stored of a session token.
func SessionHash(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// Session is one signed-in browser of an account.
type Session struct {
	ID                 uuid.UUID
	Browser, Address   string
	SignedIn, LastSeen time.Time
	Current            bool // the browser asking
}

// SessionSeen records a request of a signed-in session (its row is made
// when it has none: sessions signed in before the list existed). Callers
// write it at most every SeenEvery per session.
func (s *Service) SessionSeen(ctx context.Context, userID uuid.UUID, tokenHash []byte, browser, address string, now time.Time) error {
	return db.New(s.pool).StaffSessionSeen(ctx, db.StaffSessionSeenParams{
		TokenHash: tokenHash, StaffUserID: userID, Browser: browser, Address: address, Now: now,
	})
}

// SessionStarted records a new sign-in under the session token's hash,
// and forgets the account's sessions that ended, so the rows of an
// account never outnumber its sessions since its last sign-in.
func (s *Service) SessionStarted(ctx context.Context, userID uuid.UUID, tokenHash []byte, browser, address string, now time.Time) error {
	q := db.New(s.pool)
	if err := q.StaffSessionPrune(ctx, db.StaffSessionPruneParams{StaffUserID: userID, EndedBefore: ptr(now.Add(-endedKept))}); err != nil {
		return fmt.Errorf("prune sessions: %w", err)
	}
	return q.StaffSessionStart(ctx, db.StaffSessionStartParams{
		TokenHash: tokenHash, StaffUserID: userID, Browser: browser, Address: address, Now: now,
	})
}

// SessionSignedOut forgets the row of a session that signed out.
func (s *Service) SessionSignedOut(ctx context.Context, tokenHash []byte) error {
	return db.New(s.pool).StaffSessionForget(ctx, tokenHash)
}

// Sessions lists u's sessions that are signed in now, the most recently
// seen first; current is the hash of the asking session's token.
//
// Errors: FORBIDDEN.
func (s *Service) Sessions(ctx context.Context, u User, current []byte, now time.Time) ([]Session, error) {
	if err := u.May(ActSecondFactor); err != nil {
		return nil, err
	}
	q := db.New(s.pool)
	if err := q.StaffSessionPrune(ctx, db.StaffSessionPruneParams{StaffUserID: u.ID, EndedBefore: ptr(now.Add(-endedKept))}); err != nil {
		return nil, fmt.Errorf("prune sessions: %w", err)
	}
	rows, err := q.StaffSessionList(ctx, db.StaffSessionListParams{StaffUserID: u.ID, Now: now})
	return FromRows(rows, err, func(r db.StaffSessionListRow) Session {
		return Session{ID: r.ID, Browser: r.Browser, Address: r.Address, SignedIn: r.SignedInAt, LastSeen: r.LastSeenAt,
			Current: string(r.TokenHash) == string(current)}
	})
}

// EndSession ends one of u's sessions: its next request is signed out.
//
// Errors: FORBIDDEN, NOT_FOUND (no such session of u's).
func (s *Service) EndSession(ctx context.Context, u User, id uuid.UUID, now time.Time) error {
	if err := u.May(ActSecondFactor); err != nil {
		return err
	}
	n, err := endSessions(ctx, db.New(s.pool), u.ID, id, false, nil, now)
	if err != nil {
		return err
	}
	if n == 0 {
		return apperr.NotFoundf("id", "No such session of yours; it may have ended already.")
	}
	return nil
}

// EndOtherSessions ends every session of u's but the asking one (the
// hash of its token) and says how many ended.
//
// Errors: FORBIDDEN.
func (s *Service) EndOtherSessions(ctx context.Context, u User, current []byte, now time.Time) (int, error) {
	if err := u.May(ActSecondFactor); err != nil {
		return 0, err
	}
	if len(current) == 0 {
		return 0, errors.New("staff: end other sessions without the current one")
	}
	return endSessions(ctx, db.New(s.pool), u.ID, uuid.Nil, true, current, now)
}

// endSessions marks the account's sessions ended and deletes them from
// the session store: the one of id, or with others every one but keep's.
func endSessions(ctx context.Context, q *db.Queries, userID, id uuid.UUID, others bool, keep []byte, now time.Time) (int, error) {
	if len(keep) == 0 {
		keep = []byte{0} // no token hash is one byte
	}
	rows, err := q.StaffSessionEnd(ctx, db.StaffSessionEndParams{Now: &now, StaffUserID: userID, ID: id, EveryOther: others, Keep: keep})
	if err != nil {
		return 0, fmt.Errorf("end sessions: %w", err)
	}
	return len(rows), nil
}

// SignedIn loads the account of a signed-in session again on each
// request (roles change, accounts are disabled, sessions are ended, the
// clinic may come to require a second factor); tokenHash is the session
// token's hash.
//
// Errors: SIGNED_OUT (401) when the account is gone or disabled or the
// session was ended.
func (s *Service) SignedIn(ctx context.Context, id uuid.UUID, tokenHash []byte) (User, error) {
	row, err := db.New(s.pool).StaffUserSignedIn(ctx, db.StaffUserSignedInParams{ID: id, TokenHash: tokenHash})
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && (row.DisabledAt != nil || row.SessionEnded)) {
		return User{}, apperr.New(apperr.Unauthorized, apperr.CodeSignedOut, "This session has ended; sign in again.")
	}
	if err != nil {
		return User{}, fmt.Errorf("load staff user: %w", err)
	}
	return User{ID: row.ID, ClinicID: row.ClinicID, Email: row.Email, Name: row.Name, Role: row.Role,
		SecondFactor: row.HasSecondFactor, SecondFactorRequired: row.RequireSecondFactor}, nil
}

func ptr[T any](v T) *T { return &v }
