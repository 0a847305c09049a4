// Kiosk tokens: managed under ActKiosks (admins only); KioskAllowed is the boards' check.

package practice

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/textfield"
)

// KioskToken is a board's device token as admins see it: its name and
// state, never the token or its hash.
type KioskToken struct {
	ID, ClinicID uuid.UUID
	Name         string
	CreatedAt    time.Time
	RevokedAt    *time.Time // nil while the token works
}

func kioskTokenFromRow(r db.KioskToken) KioskToken {
	return KioskToken{ID: r.ID, ClinicID: r.ClinicID, Name: r.Name, CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt}
}

// KioskTokens lists the clinic's kiosk tokens.
func (s *Service) KioskTokens(ctx context.Context, u staff.User) ([]KioskToken, error) {
	if err := u.May(staff.ActKiosks); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).KioskTokenListByClinic(ctx, u.ClinicID)
	return staff.FromRows(rows, err, kioskTokenFromRow)
}

// CreateKioskToken makes a read-only device token; the token is returned
// once, only its hash is kept.
func (s *Service) CreateKioskToken(ctx context.Context, u staff.User, name string) (string, error) {
	if err := u.May(staff.ActKiosks); err != nil {
		return "", err
	}
	name, err := textfield.KioskName.Check(name)
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", apperr.Invalidf("name", "Name the screen (for example \"Waiting room 1\").")
	}
	random, err := secret.NewToken(24)
	if err != nil {
		return "", err
	}
	token := "k_" + random
	err = s.tx(ctx, u, func(q *db.Queries) error {
		row, err := q.KioskTokenInsert(ctx, db.KioskTokenInsertParams{ClinicID: u.ClinicID, Name: name, TokenHash: booking.HashToken(token)})
		if err != nil {
			return err
		}
		return staff.WriteAudit(ctx, q, u, "kiosk_token.create", "kiosk_token", row.ID.String(), nil, map[string]string{"name": name}, "")
	})
	return token, err
}

// RevokeKioskToken stops a token working.
func (s *Service) RevokeKioskToken(ctx context.Context, u staff.User, id uuid.UUID) error {
	if err := u.May(staff.ActKiosks); err != nil {
		return err
	}
	return s.tx(ctx, u, func(q *db.Queries) error {
		n, err := q.KioskTokenRevoke(ctx, db.KioskTokenRevokeParams{ID: id, ClinicID: u.ClinicID})
		if err != nil {
			return err
		}
		if n == 0 {
			return staff.NotFound("kiosk token")
		}
		return staff.WriteAudit(ctx, q, u, "kiosk_token.revoke", "kiosk_token", id.String(), nil, nil, "")
	})
}

// KioskTokenValid checks a board's token.
//
// Errors: none of its own (database failures are internal).
func (s *Service) KioskTokenValid(ctx context.Context, clinicID uuid.UUID, token string) (bool, error) {
	return db.New(s.pool).KioskTokenValid(ctx, db.KioskTokenValidParams{ClinicID: clinicID, TokenHash: booking.HashToken(token)})
}

// KioskAllowed says whether a board showing the clinic with this device
// token ("" for none) may show its times: a clinic with no unrevoked token
// has a public board; one with tokens shows it only to a valid token of its
// own.
//
// Errors: none of its own (database failures are internal).
func (s *Service) KioskAllowed(ctx context.Context, clinicID uuid.UUID, device string) (bool, error) {
	if device != "" {
		return s.KioskTokenValid(ctx, clinicID, device)
	}
	n, err := db.New(s.pool).KioskTokenActiveCount(ctx, clinicID)
	return n == 0, err
}
