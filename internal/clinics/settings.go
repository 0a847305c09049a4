package clinics

// The settings page of a clinic: what patients see of it (name, address,
// how to reach it, language), its zone, and the rules a new appointment
// type starts with. A save carries the version the admin saw; a change of
// zone while bookings lie ahead waits for the admin to confirm it.

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	auditlog "github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/identity"
	"github.com/clinic/booking/internal/textfield"
)

// The free-text fields of the settings form, named as the form names them.
var (
	nameField    = textfield.Field{Name: "name", Label: "The clinic's name", Max: 200}
	addressField = textfield.Field{Name: "address", Label: "The address", Max: 500}
	phoneField   = textfield.Field{Name: "contactPhone", Label: "The phone number", Max: 40}
	emailField   = textfield.Field{Name: "contactEmail", Label: "The e-mail address", Max: 254}
)

// TypeDefaults are the rules a new appointment type starts with; the type
// keeps its own copy.
type TypeDefaults struct {
	SlotStepMin    int32 `json:"slotStepMin"`
	MinNoticeMin   int32 `json:"minNoticeMin"`
	MaxAdvanceDays int32 `json:"maxAdvanceDays"`
	CooldownMin    int32 `json:"cooldownMin"`
}

// Settings are what the settings page shows and saves. Version is the one
// the editor saw.
type Settings struct {
	Name         string `json:"name"`
	Address      string `json:"address"`
	ContactPhone string `json:"contactPhone"`
	ContactEmail string `json:"contactEmail"`
	Language     string `json:"language"`
	Timezone     string `json:"timezone"`
	// Country is the ISO 3166 region patients' phone numbers are read in
	// when written without a country code, for telling one patient's
	// spellings of a number apart from another patient's.
	Country  string       `json:"country"`
	Defaults TypeDefaults `json:"defaults"`
	// Verification is when online bookings must prove their e-mail
	// address with a code: one of Verifications.
	Verification string `json:"verification"`
	// Privacy: how long patients' details are kept, who answers for them.
	Privacy Privacy `json:"privacy"`
	// ChangeDeadlineHours: until how many hours before its start a patient
	// may move a booking online, for every type without a deadline of its
	// own (0: no deadline); KeepChangeDeadline keeps the clinic's.
	ChangeDeadlineHours int32 `json:"changeDeadlineHours"`
	Version             int32 `json:"-"`
}

// KeepChangeDeadline as Settings.ChangeDeadlineHours keeps the clinic's
// (a form from before the field); MaxChangeDeadlineHours is the longest
// deadline, thirty days.
const (
	KeepChangeDeadline     = -1
	MaxChangeDeadlineHours = 720
)

// When a clinic asks a patient booking online for an e-mailed code.
const (
	// VerifyNever confirms online bookings at once; past an address's
	// allowance of unverified bookings they are refused.
	VerifyNever = "never"
	// VerifyPastAllowance asks for a code only past the allowance (the
	// default).
	VerifyPastAllowance = "past_allowance"
	// VerifyAlways asks every online booking without a verified contact.
	VerifyAlways = "always"
)

// Verifications are the values of Settings.Verification, as the settings
// page offers them.
var Verifications = []string{VerifyNever, VerifyPastAllowance, VerifyAlways}

func settingsFromRow(r db.Clinic) Settings {
	return Settings{
		Name: r.Name, Address: r.Address, ContactPhone: r.ContactPhone, ContactEmail: r.ContactEmail,
		Language: r.Language, Timezone: r.Timezone, Country: r.Country, Version: r.Version, Verification: r.Verification,
		Defaults: TypeDefaults{SlotStepMin: r.DefaultSlotStepMin, MinNoticeMin: r.DefaultMinNoticeMin,
			MaxAdvanceDays: r.DefaultMaxAdvanceDays, CooldownMin: r.DefaultCooldownMin},
		Privacy: privacyFromRow(r), ChangeDeadlineHours: r.DefaultChangeDeadlineHours,
	}
}

// Settings are a clinic's current settings.
//
// Errors: NOT_FOUND.
func (s *Service) Settings(ctx context.Context, clinicID uuid.UUID) (Settings, error) {
	row, err := db.New(s.pool).ClinicGet(ctx, clinicID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Settings{}, apperr.NotFoundf("", "No such clinic.")
	}
	if err != nil {
		return Settings{}, fmt.Errorf("get clinic: %w", err)
	}
	return settingsFromRow(row), nil
}

// check cleans in's free text and validates every field, in the order the
// form shows them.
//
// Errors: INVALID_ARGUMENT naming the first bad field.
func (in *Settings) check() error {
	var err error
	if in.Name, err = nameField.Check(in.Name); err != nil {
		return err
	}
	if in.Name == "" {
		return apperr.Invalidf("name", "A clinic needs a name.")
	}
	if in.Address, err = addressField.Check(in.Address); err != nil {
		return err
	}
	if in.ContactPhone, err = phoneField.Check(in.ContactPhone); err != nil {
		return err
	}
	if !phoneShape(in.ContactPhone) {
		return apperr.Invalidf("contactPhone", "A phone number is digits, spaces and a leading +, with at least 5 digits (e.g. +49 30 1234567).")
	}
	if in.ContactEmail, err = emailField.Check(in.ContactEmail); err != nil {
		return err
	}
	if !emailShape(in.ContactEmail) {
		return apperr.Invalidf("contactEmail", "%q is not an e-mail address such as desk@clinic.example.", in.ContactEmail)
	}
	if !slices.Contains(Languages, in.Language) {
		return apperr.Invalidf("language", "%q is not a language of the pages: want one of %s.", in.Language, strings.Join(Languages, ", "))
	}
	in.Timezone = strings.TrimSpace(in.Timezone)
	if _, err := LoadZone(in.Timezone); err != nil {
		return err
	}
	// An empty country (a form from before the field) keeps the clinic's.
	in.Country = strings.ToUpper(strings.TrimSpace(in.Country))
	if in.Country != "" && !identity.ValidRegion(in.Country) {
		return apperr.Invalidf("country", "%q is not a country code whose phone numbers are known: want two letters such as DE, AT or CH.", in.Country)
	}
	// An empty verification (a form from before the field) keeps the
	// clinic's too.
	if in.Verification != "" && !slices.Contains(Verifications, in.Verification) {
		return apperr.Invalidf("verification", "%q is not a verification setting: want one of %s.", in.Verification, strings.Join(Verifications, ", "))
	}
	if err := in.Defaults.check(); err != nil {
		return err
	}
	if h := in.ChangeDeadlineHours; h != KeepChangeDeadline && (h < 0 || h > MaxChangeDeadlineHours) {
		return apperr.Invalidf("changeDeadlineHours", "The change deadline must be from 0 to %d hours.", MaxChangeDeadlineHours)
	}
	return in.Privacy.check()
}

// check validates the defaults against the ranges the types page accepts.
func (d TypeDefaults) check() error {
	for _, r := range []struct {
		field, what string
		v, lo, hi   int32
	}{
		{"defaultSlotStepMin", "Slot step (minutes)", d.SlotStepMin, 5, 480},
		{"defaultMinNoticeMin", "Minimum notice (minutes)", d.MinNoticeMin, 0, 60 * 24 * 30},
		{"defaultMaxAdvanceDays", "Booking window (days)", d.MaxAdvanceDays, 1, 730},
		{"defaultCooldownMin", "Cooldown (minutes)", d.CooldownMin, 0, 60 * 24 * 365},
	} {
		if r.v < r.lo || r.v > r.hi {
			return apperr.Invalidf(r.field, "%s must be from %d to %d.", r.what, r.lo, r.hi)
		}
	}
	return nil
}

// phoneShape is an empty number, or digits and spaces with at most a
// leading +, holding at least 5 digits.
func phoneShape(s string) bool {
	if s == "" {
		return true
	}
	digits := 0
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == ' ':
		case r == '+' && i == 0:
		default:
			return false
		}
	}
	return digits >= 5
}

// emailShape is an empty address, or one bare address with a dot in its
// domain.
func emailShape(s string) bool {
	if s == "" {
		return true
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && strings.Contains(s[strings.LastIndex(s, "@"):], ".")
}

// ZoneMove is one booking ahead as patients saw it and as it will read
// after a change of zone: the same instant in two zones.
type ZoneMove struct {
	Was, Becomes time.Time
}

// ZoneChange is what a change of zone does to the bookings ahead: how many
// there are and how the first few read afterwards.
type ZoneChange struct {
	From, To string
	Count    int
	Examples []ZoneMove
}

// zoneExamples is how many bookings a confirmation shows.
const zoneExamples = 3

// Span is a confirmed booking's time with its specialist: what caches
// kept under the old zone's dates need to forget.
type Span struct {
	SpecialistID uuid.UUID
	Start, End   time.Time
}

// SaveResult is what SaveSettings did. Pending is set when nothing was
// stored because the zone change waits for confirmation. ZoneChanged
// reports a stored change of zone, with the old zone and the bookings
// whose cached days it leaves wrong (Spans).
type SaveResult struct {
	Settings    Settings
	Pending     *ZoneChange
	ZoneChanged bool
	OldZone     string
	Spans       []Span
}

// SaveSettings stores in for the clinic with its audit row, when
// in.Version is current. A new zone while confirmed bookings lie ahead is
// stored only with confirmZone; without it nothing is stored and the
// result's Pending says what the change would move. A save that changes
// nothing writes nothing.
//
// Errors: INVALID_ARGUMENT naming the field, CONCURRENCY_CONFLICT (412)
// with the current settings, NOT_FOUND.
func (s *Service) SaveSettings(ctx context.Context, clinicID uuid.UUID, actor string, in Settings, confirmZone bool) (SaveResult, error) {
	if err := in.check(); err != nil {
		return SaveResult{}, err
	}
	var res SaveResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.ClinicGetForUpdate(ctx, clinicID)
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.NotFoundf("", "No such clinic.")
		}
		if err != nil {
			return fmt.Errorf("lock clinic: %w", err)
		}
		before := settingsFromRow(row)
		if before.Version != in.Version {
			return staleSettings(before)
		}
		in.Version = before.Version
		if in.Country == "" {
			in.Country = before.Country
		}
		if in.Verification == "" {
			in.Verification = before.Verification
		}
		in.Privacy.keepUnset(before.Privacy)
		if in.ChangeDeadlineHours == KeepChangeDeadline {
			in.ChangeDeadlineHours = before.ChangeDeadlineHours
		}
		if in == before {
			res.Settings = before
			return nil
		}
		if before.Timezone != in.Timezone {
			if res, err = zoneChange(ctx, q, clinicID, before.Timezone, in.Timezone); err != nil || (res.Pending != nil && !confirmZone) {
				return err
			}
			res.Pending = nil
		}
		row, err = q.ClinicSettingsUpdate(ctx, db.ClinicSettingsUpdateParams{
			ID: clinicID, Version: in.Version,
			Name: in.Name, Address: in.Address, ContactPhone: in.ContactPhone, ContactEmail: in.ContactEmail,
			Language: in.Language, Timezone: in.Timezone, Country: in.Country,
			DefaultSlotStepMin: in.Defaults.SlotStepMin, DefaultMinNoticeMin: in.Defaults.MinNoticeMin,
			DefaultMaxAdvanceDays: in.Defaults.MaxAdvanceDays, DefaultCooldownMin: in.Defaults.CooldownMin,
			Verification:    in.Verification,
			RetentionMonths: in.Privacy.RetentionMonths, MailRetentionDays: in.Privacy.MailRetentionDays,
			ControllerName: in.Privacy.ControllerName, PrivacyContact: in.Privacy.Contact,
			DefaultChangeDeadlineHours: in.ChangeDeadlineHours,
		})
		if err != nil {
			return fmt.Errorf("save clinic settings: %w", err)
		}
		res.Settings = settingsFromRow(row)
		return auditlog.Write(ctx, q, auditlog.Entry{
			ClinicID: clinicID, Actor: actor, Action: "clinic.settings", Entity: "clinic", EntityID: clinicID.String(),
			Before: before, After: res.Settings,
		})
	})
	if err != nil {
		return SaveResult{}, err
	}
	return res, nil
}

// zoneChange reads the clinic's confirmed bookings that have not ended a
// day ago: the ones not started yet make the confirmation (Pending, when
// there are any), all of them the spans whose cached days move.
func zoneChange(ctx context.Context, q *db.Queries, clinicID uuid.UUID, from, to string) (SaveResult, error) {
	oldLoc, err := LoadZone(from)
	if err != nil {
		return SaveResult{}, err
	}
	newLoc, err := LoadZone(to)
	if err != nil {
		return SaveResult{}, err
	}
	now := time.Now()
	rows, err := q.ClinicConfirmedBookingsEndingAfter(ctx, db.ClinicConfirmedBookingsEndingAfterParams{
		ClinicID: clinicID, Since: now.Add(-24 * time.Hour),
	})
	if err != nil {
		return SaveResult{}, fmt.Errorf("list bookings ahead: %w", err)
	}
	res := SaveResult{ZoneChanged: true, OldZone: from}
	ch := &ZoneChange{From: from, To: to}
	for _, r := range rows {
		res.Spans = append(res.Spans, Span{SpecialistID: r.SpecialistID, Start: r.SlotStart, End: r.SlotEnd})
		if !r.SlotStart.After(now) {
			continue
		}
		ch.Count++
		if len(ch.Examples) < zoneExamples {
			ch.Examples = append(ch.Examples, ZoneMove{Was: r.SlotStart.In(oldLoc), Becomes: r.SlotStart.In(newLoc)})
		}
	}
	if ch.Count > 0 {
		res.Pending = ch
	}
	return res, nil
}

// staleSettings refuses a save made on an older version, carrying the
// current settings.
func staleSettings(current Settings) *apperr.Error {
	return &apperr.Error{
		Kind: apperr.PreconditionFailed, Code: apperr.CodeConcurrencyConflict,
		Message: "These settings were changed by someone else since you opened them. Here are the current values; make your change again.",
		Details: map[string]any{"current": current},
	}
}

// TypeDefaults are the rules the clinic's new appointment types start with.
//
// Errors: NOT_FOUND.
func (s *Service) TypeDefaults(ctx context.Context, clinicID uuid.UUID) (TypeDefaults, error) {
	st, err := s.Settings(ctx, clinicID)
	return st.Defaults, err
}
