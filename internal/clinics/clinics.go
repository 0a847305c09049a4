// Package clinics holds the tenant: a clinic, its zone and its catalogue.
package clinics

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
)

// LoadZone resolves an IANA zone name. Go accepts "" and "Local" as zones of
// its own; a clinic must name a real place.
//
// Errors: INVALID_ARGUMENT naming the field "timezone".
func LoadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return nil, apperr.Invalidf("timezone", "%q is not an IANA time zone name such as Europe/Berlin.", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, apperr.Invalidf("timezone", "%q is not an IANA time zone name such as Europe/Berlin.", name)
	}
	return loc, nil
}

var slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Clinic is what a new clinic needs.
type Clinic struct {
	Slug, Name, Timezone, Address string
}

// Service creates and finds clinics.
type Service struct {
	pool *pgxpool.Pool
}

func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

// Upsert creates the clinic, or updates the one with that slug.
//
// Errors: INVALID_ARGUMENT naming slug, name or timezone.
func (s *Service) Upsert(ctx context.Context, c Clinic) (db.Clinic, error) {
	if !slugRe.MatchString(c.Slug) {
		return db.Clinic{}, apperr.Invalidf("slug", "A slug is lower-case letters, digits and dashes.")
	}
	if strings.TrimSpace(c.Name) == "" {
		return db.Clinic{}, apperr.Invalidf("name", "A clinic needs a name.")
	}
	if _, err := LoadZone(c.Timezone); err != nil {
		return db.Clinic{}, err
	}
	row, err := db.New(s.pool).ClinicUpsert(ctx, db.ClinicUpsertParams{
		Slug: c.Slug, Name: strings.TrimSpace(c.Name), Timezone: c.Timezone, Address: c.Address,
	})
	if err != nil {
		return db.Clinic{}, fmt.Errorf("upsert clinic: %w", err)
	}
	return row, nil
}

// BySlug finds a clinic.
//
// Errors: NOT_FOUND.
func (s *Service) BySlug(ctx context.Context, slug string) (db.Clinic, error) {
	row, err := db.New(s.pool).ClinicGetBySlug(ctx, slug)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Clinic{}, apperr.NotFoundf("slug", "No clinic %q.", slug)
	}
	if err != nil {
		return db.Clinic{}, fmt.Errorf("get clinic: %w", err)
	}
	return row, nil
}

// AppointmentType is a type as patients see it: what, how long, by whom.
type AppointmentType struct {
	ID          uuid.UUID    `json:"id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	DurationMin int32        `json:"durationMinutes"`
	Specialists []Specialist `json:"specialists"`
}

// Specialist is a specialist as patients see them.
type Specialist struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// AppointmentTypes lists a clinic's types with the active specialists who
// perform each: two queries, whatever the number of types.
func (s *Service) AppointmentTypes(ctx context.Context, clinicID uuid.UUID) ([]AppointmentType, error) {
	q := db.New(s.pool)
	types, err := q.AppointmentTypeListByClinic(ctx, clinicID)
	if err != nil {
		return nil, fmt.Errorf("list appointment types: %w", err)
	}
	links, err := q.AppointmentTypeSpecialistListByClinic(ctx, clinicID)
	if err != nil {
		return nil, fmt.Errorf("list type specialists: %w", err)
	}
	out := make([]AppointmentType, len(types))
	index := make(map[uuid.UUID]*AppointmentType, len(types))
	for i, t := range types {
		out[i] = AppointmentType{ID: t.ID, Name: t.Name, Description: t.Description, DurationMin: t.DurationMin, Specialists: []Specialist{}}
		index[t.ID] = &out[i]
	}
	for _, l := range links {
		if t := index[l.AppointmentTypeID]; t != nil && l.Active {
			t.Specialists = append(t.Specialists, Specialist{ID: l.ID, Name: l.Name})
		}
	}
	return out, nil
}

// ByID finds a clinic by id.
//
// Errors: NOT_FOUND.
func (s *Service) ByID(ctx context.Context, id uuid.UUID) (db.Clinic, error) {
	row, err := db.New(s.pool).ClinicGet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Clinic{}, apperr.NotFoundf("", "No such clinic.")
	}
	if err != nil {
		return db.Clinic{}, fmt.Errorf("get clinic: %w", err)
	}
	return row, nil
}
