package clinics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	auditlog "github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/db"
)

// Languages a clinic's pages can speak; the first is the default.
var Languages = []string{"en", "de"}

// CodeSlugTaken is a new clinic whose slug another clinic has.
const CodeSlugTaken = "SLUG_TAKEN"

// check validates a clinic's fields; Language may be empty (the default).
func (c Input) check() error {
	if !slugRe.MatchString(c.Slug) {
		return apperr.Invalidf("slug", "%q is not a slug: a slug is 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit (e.g. city-clinic).", c.Slug)
	}
	if strings.TrimSpace(c.Name) == "" {
		return apperr.Invalidf("name", "A clinic needs a name.")
	}
	if _, err := LoadZone(c.Timezone); err != nil {
		return err
	}
	if c.Language != "" && !slices.Contains(Languages, c.Language) {
		return apperr.Invalidf("language", "%q is not a language of the pages: want one of %s.", c.Language, strings.Join(Languages, ", "))
	}
	p := Privacy{RetentionMonths: c.RetentionMonths, MailRetentionDays: c.MailRetentionDays}
	return p.check()
}

// Create makes a new clinic with its audit row and, in the same
// transaction, whatever then runs with q (the clinic's first admin):
// either all of it is stored or none.
//
// Errors: INVALID_ARGUMENT naming slug, name, timezone or language,
// CONFLICT SLUG_TAKEN, and whatever then returns.
func (s *Service) Create(ctx context.Context, in Input, actor string, then func(q *db.Queries, c Clinic) error) (Clinic, error) {
	if err := in.check(); err != nil {
		return Clinic{}, err
	}
	if in.Language == "" {
		in.Language = Languages[0]
	}
	if in.RetentionMonths == 0 {
		in.RetentionMonths = DefaultRetentionMonths
	}
	if in.MailRetentionDays == 0 {
		in.MailRetentionDays = DefaultMailRetentionDays
	}
	var c Clinic
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.ClinicCreate(ctx, db.ClinicCreateParams{
			Slug: in.Slug, Name: strings.TrimSpace(in.Name), Timezone: in.Timezone,
			Address: strings.TrimSpace(in.Address), Language: in.Language,
			RetentionMonths: in.RetentionMonths, MailRetentionDays: in.MailRetentionDays,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.New(apperr.Conflict, CodeSlugTaken, fmt.Sprintf("The slug %q is taken by another clinic; choose another.", in.Slug))
		}
		if err != nil {
			return fmt.Errorf("create clinic: %w", err)
		}
		c = clinicFromRow(row)
		if err := auditlog.Write(ctx, q, auditlog.Entry{
			ClinicID: c.ID, Actor: actor, Action: "clinic.create", Entity: "clinic", EntityID: c.ID.String(),
			After: map[string]string{"slug": c.Slug, "name": c.Name, "timezone": c.Timezone, "language": c.Language},
		}); err != nil {
			return err
		}
		if then != nil {
			return then(q, c)
		}
		return nil
	})
	return c, err
}

// Summary is a clinic with the number of its staff accounts.
type Summary struct {
	Clinic
	Staff int64
}

// Summaries lists every clinic by slug, with its number of staff accounts.
//
// Errors: none of its own (database failures are internal).
func (s *Service) Summaries(ctx context.Context) ([]Summary, error) {
	rows, err := db.New(s.pool).ClinicListWithStaffCount(ctx)
	if err != nil {
		return nil, fmt.Errorf("list clinics: %w", err)
	}
	out := make([]Summary, len(rows))
	for i, r := range rows {
		out[i] = Summary{Staff: r.StaffCount, Clinic: Clinic{
			ID: r.ID, Slug: r.Slug, Name: r.Name, Timezone: r.Timezone, Address: r.Address, Language: r.Language,
		}}
	}
	return out, nil
}
