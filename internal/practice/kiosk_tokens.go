// Kiosk tokens: managed under ActKiosks (admins only); KioskAllowed is the boards' check.

package practice

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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
	Language     string // KioskEnglish, KioskGerman or KioskBoth
	CreatedAt    time.Time
	RevokedAt    *time.Time // nil while the token works
}

func kioskTokenFromRow(r db.KioskToken) KioskToken {
	return KioskToken{ID: r.ID, ClinicID: r.ClinicID, Name: r.Name, Language: r.Language, CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt}
}

// KioskTokens lists the clinic's kiosk tokens.
func (s *Service) KioskTokens(ctx context.Context, u staff.User) ([]KioskToken, error) {
	if err := u.May(staff.ActKiosks); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).KioskTokenListByClinic(ctx, u.ClinicID)
	return staff.FromRows(rows, err, kioskTokenFromRow)
}

// The languages a kiosk screen can speak: one of the two, or both taking
// turns (the clinic's first), for a waiting room of patients of either.
const (
	KioskEnglish = "en"
	KioskGerman  = "de"
	KioskBoth    = "both"
)

// KioskLanguages are the screen languages in the order a form offers them.
var KioskLanguages = []string{KioskGerman, KioskEnglish, KioskBoth}

// checkKioskLanguage refuses a screen language that is none of
// KioskLanguages; "" is the clinic's own language.
func checkKioskLanguage(lang string) error {
	if lang == "" || slices.Contains(KioskLanguages, lang) {
		return nil
	}
	return apperr.Invalidf("language", "Choose English, German or both for the screen.")
}

// CreateKioskToken makes a read-only device token for a screen that
// speaks the clinic's language (CreateKioskScreen).
func (s *Service) CreateKioskToken(ctx context.Context, u staff.User, name string) (string, error) {
	return s.CreateKioskScreen(ctx, u, name, "")
}

// CreateKioskScreen makes a read-only device token for a screen that
// speaks language (one of KioskLanguages; "" for the clinic's language);
// the token is returned once, only its hash is kept.
//
// Errors: FORBIDDEN, INVALID (name, language).
func (s *Service) CreateKioskScreen(ctx context.Context, u staff.User, name, language string) (string, error) {
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
	if err := checkKioskLanguage(language); err != nil {
		return "", err
	}
	random, err := secret.NewToken(24)
	if err != nil {
		return "", err
	}
	token := "k_" + random
	err = s.tx(ctx, u, func(q *db.Queries) error {
		if language == "" {
			c, err := q.ClinicGet(ctx, u.ClinicID)
			if err != nil {
				return err
			}
			language = c.Language
		}
		row, err := q.KioskTokenInsert(ctx, db.KioskTokenInsertParams{ClinicID: u.ClinicID, Name: name, TokenHash: booking.HashToken(token), Language: language})
		if err != nil {
			return err
		}
		return staff.WriteAudit(ctx, q, u, "kiosk_token.create", "kiosk_token", row.ID.String(), nil, map[string]string{"name": name, "language": language}, "")
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

// SetKioskLanguage changes the language of the screen whose token is id.
//
// Errors: FORBIDDEN, INVALID (language), NOT_FOUND.
func (s *Service) SetKioskLanguage(ctx context.Context, u staff.User, id uuid.UUID, language string) error {
	if err := u.May(staff.ActKiosks); err != nil {
		return err
	}
	if language == "" {
		return apperr.Invalidf("language", "Choose English, German or both for the screen.")
	}
	if err := checkKioskLanguage(language); err != nil {
		return err
	}
	return s.tx(ctx, u, func(q *db.Queries) error {
		n, err := q.KioskTokenSetLanguage(ctx, db.KioskTokenSetLanguageParams{ID: id, ClinicID: u.ClinicID, Language: language})
		if err != nil {
			return err
		}
		if n == 0 {
			return staff.NotFound("kiosk token")
		}
		return staff.WriteAudit(ctx, q, u, "kiosk_token.language", "kiosk_token", id.String(), nil, map[string]string{"language": language}, "")
	})
}

// KioskScreen says whether a board of the clinic opened with this device
// token ("" for none) may show its times (KioskAllowed), and in which
// language the token's screen speaks ("" without a token: the clinic's).
//
// Errors: none of its own (database failures are internal).
func (s *Service) KioskScreen(ctx context.Context, clinicID uuid.UUID, device string) (allowed bool, language string, err error) {
	if device == "" {
		allowed, err = s.KioskAllowed(ctx, clinicID, "")
		return allowed, "", err
	}
	language, err = db.New(s.pool).KioskTokenScreen(ctx, db.KioskTokenScreenParams{ClinicID: clinicID, TokenHash: booking.HashToken(device)})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, "", nil
	}
	return err == nil, language, err
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
