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
	"github.com/jackc/pgx/v5/pgtype"
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

// Input is what a new clinic needs. Language is one of Languages; empty
// means the default, "en" (Upsert leaves a clinic's language as it is).
type Input struct {
	Slug, Name, Timezone, Address, Language string
	// How long a new clinic keeps patients' details (the server's
	// RETENTION_MONTHS, MAIL_RETENTION_DAYS); zero: the defaults. Upsert
	// leaves them as they are.
	RetentionMonths, MailRetentionDays int32
}

// Clinic is a tenant as the pages show it.
type Clinic struct {
	ID                            uuid.UUID
	Slug, Name, Timezone, Address string
	Language                      string // "en" or "de"
	// How patients reach the clinic; either may be empty.
	ContactPhone, ContactEmail string
	// Privacy: how long it keeps patients' details, who answers for them.
	Privacy Privacy
}

// FromRow is a clinic as stored, for a package that read it in a query of
// its own.
func FromRow(r db.Clinic) Clinic { return clinicFromRow(r) }

func clinicFromRow(r db.Clinic) Clinic {
	return Clinic{ID: r.ID, Slug: r.Slug, Name: r.Name, Timezone: r.Timezone, Address: r.Address, Language: r.Language,
		ContactPhone: r.ContactPhone, ContactEmail: r.ContactEmail, Privacy: privacyFromRow(r)}
}

// Service creates and finds clinics.
type Service struct {
	pool *pgxpool.Pool
}

func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

// Upsert creates the clinic, or updates the one with that slug.
//
// Errors: INVALID_ARGUMENT naming slug, name or timezone.
func (s *Service) Upsert(ctx context.Context, c Input) (Clinic, error) {
	if err := c.check(); err != nil {
		return Clinic{}, err
	}
	row, err := db.New(s.pool).ClinicUpsert(ctx, db.ClinicUpsertParams{
		Slug: c.Slug, Name: strings.TrimSpace(c.Name), Timezone: c.Timezone, Address: c.Address,
	})
	if err != nil {
		return Clinic{}, fmt.Errorf("upsert clinic: %w", err)
	}
	return clinicFromRow(row), nil
}

// BySlug finds a clinic.
//
// Errors: NOT_FOUND.
func (s *Service) BySlug(ctx context.Context, slug string) (Clinic, error) {
	row, err := db.New(s.pool).ClinicGetBySlug(ctx, slug)
	if errors.Is(err, pgx.ErrNoRows) {
		return Clinic{}, apperr.NotFoundf("slug", "No clinic %q.", slug)
	}
	if err != nil {
		return Clinic{}, fmt.Errorf("get clinic: %w", err)
	}
	return clinicFromRow(row), nil
}

// List is every clinic, in the order the home page shows them.
//
// Errors: none of its own (database failures are internal).
func (s *Service) List(ctx context.Context) ([]Clinic, error) {
	rows, err := db.New(s.pool).ClinicList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list clinics: %w", err)
	}
	out := make([]Clinic, len(rows))
	for i, r := range rows {
		out[i] = clinicFromRow(r)
	}
	return out, nil
}

// AppointmentType is a type as patients see it: what, how long, by whom.
type AppointmentType struct {
	ID          uuid.UUID    `json:"id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	DurationMin int32        `json:"durationMinutes"`
	Specialists []Specialist `json:"specialists"`
	// Translations are its name and description in other languages.
	Translations Translations `json:"-"`
}

// NameIn is the type's name in lang.
func (t AppointmentType) NameIn(lang string) string { return t.Translations.Name(lang, t.Name) }

// DescriptionIn is the type's description in lang.
func (t AppointmentType) DescriptionIn(lang string) string {
	return t.Translations.Description(lang, t.Description)
}

// Type is one of a clinic's appointment types as the clinic keeps it: its
// name and every rule staff set; durations, notices and the reminder's
// lead (0: no reminder) are in minutes. AppointmentType is what patients
// see of one; the slot engine takes the rules as availability's
// AppointmentType.
type Type struct {
	ID, ClinicID                                   uuid.UUID
	Name, Description                              string
	DurationMin, SlotStepMin                       int32
	BufferBeforeMin, BufferAfterMin, MinNoticeMin  int32
	MaxAdvanceDays, CooldownMin, MaxHoldsPerClient int32
	ReminderMin                                    int32
	// ChangeDeadlineHours is the type's own change deadline; NULL: the
	// clinic's default.
	ChangeDeadlineHours pgtype.Int4
	Version             int32
	Translations        Translations
}

// TypeFromRow is the type a stored row holds.
func TypeFromRow(t db.AppointmentType) Type {
	return Type{
		ID: t.ID, ClinicID: t.ClinicID, Name: t.Name, Description: t.Description,
		DurationMin: t.DurationMin, SlotStepMin: t.SlotStepMin,
		BufferBeforeMin: t.BufferBeforeMin, BufferAfterMin: t.BufferAfterMin, MinNoticeMin: t.MinNoticeMin,
		MaxAdvanceDays: t.MaxAdvanceDays, CooldownMin: t.CooldownMin, MaxHoldsPerClient: t.MaxHoldsPerClient,
		ReminderMin: t.ReminderMin, Version: t.Version, Translations: ParseTranslations(t.Translations),
		ChangeDeadlineHours: t.ChangeDeadlineHours,
	}
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
		out[i] = AppointmentType{ID: t.ID, Name: t.Name, Description: t.Description, DurationMin: t.DurationMin, Specialists: []Specialist{},
			Translations: ParseTranslations(t.Translations)}
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
func (s *Service) ByID(ctx context.Context, id uuid.UUID) (Clinic, error) {
	row, err := db.New(s.pool).ClinicGet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Clinic{}, apperr.NotFoundf("", "No such clinic.")
	}
	if err != nil {
		return Clinic{}, fmt.Errorf("get clinic: %w", err)
	}
	return clinicFromRow(row), nil
}

// AppointmentType is one type by id, whatever its clinic (a booking or a
// page already named the clinic); Specialists is left empty.
//
// Errors: NOT_FOUND (apperr.CodeNotFound).
func (s *Service) AppointmentType(ctx context.Context, id uuid.UUID) (AppointmentType, error) {
	t, err := db.New(s.pool).AppointmentTypeGet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return AppointmentType{}, apperr.NotFoundf("", "No such appointment type.")
	}
	if err != nil {
		return AppointmentType{}, fmt.Errorf("get appointment type: %w", err)
	}
	return AppointmentType{ID: t.ID, Name: t.Name, Description: t.Description, DurationMin: t.DurationMin,
		Translations: ParseTranslations(t.Translations)}, nil
}

// Specialist is one specialist by id, active or not.
//
// Errors: NOT_FOUND (apperr.CodeNotFound).
func (s *Service) Specialist(ctx context.Context, id uuid.UUID) (Specialist, error) {
	sp, err := db.New(s.pool).SpecialistGet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Specialist{}, apperr.NotFoundf("", "No such specialist.")
	}
	if err != nil {
		return Specialist{}, fmt.Errorf("get specialist: %w", err)
	}
	return Specialist{ID: sp.ID, Name: sp.Name}, nil
}

// ActiveSpecialists are the active specialists who perform a type, in the
// order patients are offered them.
//
// Errors: none of its own (database failures are internal).
func (s *Service) ActiveSpecialists(ctx context.Context, typeID uuid.UUID) ([]Specialist, error) {
	rows, err := db.New(s.pool).SpecialistListByType(ctx, typeID)
	if err != nil {
		return nil, fmt.Errorf("list specialists of type: %w", err)
	}
	out := []Specialist{}
	for _, r := range rows {
		if r.Active {
			out = append(out, Specialist{ID: r.ID, Name: r.Name})
		}
	}
	return out, nil
}
