package practice

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/textfield"
)

// DefaultReminderHours is how long before the appointment a new type's
// reminder e-mail goes out unless staff choose otherwise (the column's
// default too); MaxReminderHours is the longest lead the schema allows.
const (
	DefaultReminderHours = 24
	MaxReminderHours     = 14 * 24
)

// TypeInput is the appointment type form: every field of the schema, and
// who performs the type. The reminder is in whole hours (0: none) and is
// stored in minutes. Translations are the name and description in other
// languages (a language without a name is removed); nil keeps the type's.
type TypeInput struct {
	Name, Description string
	DurationMin       int
	SlotStepMin       int
	BufferBeforeMin   int
	BufferAfterMin    int
	MinNoticeMin      int
	MaxAdvanceDays    int
	CooldownMin       int
	MaxHoldsPerClient int
	ReminderHours     int
	// ChangeDeadline is the type's own change deadline in hours as typed:
	// empty for the clinic's default; KeepChangeDeadline (a form from
	// before the field) keeps the type's.
	ChangeDeadline string
	SpecialistIDs  []uuid.UUID
	Version        int32
	Translations   clinics.Translations
}

// KeepChangeDeadline as TypeInput.ChangeDeadline keeps the type's own.
const KeepChangeDeadline = "keep"

// changeDeadline reads in.ChangeDeadline: NULL for the clinic's default,
// keep when the type's own stays.
//
// Errors: INVALID_ARGUMENT naming changeDeadlineHours.
func (in *TypeInput) changeDeadline() (hours pgtype.Int4, keep bool, err error) {
	v := strings.TrimSpace(in.ChangeDeadline)
	switch v {
	case KeepChangeDeadline:
		return pgtype.Int4{}, true, nil
	case "":
		return pgtype.Int4{}, false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > clinics.MaxChangeDeadlineHours {
		return pgtype.Int4{}, false, apperr.Invalidf("changeDeadlineHours",
			"The change deadline must be from 0 to %d hours, or empty for the clinic's default.", clinics.MaxChangeDeadlineHours)
	}
	return pgtype.Int4{Int32: int32(n), Valid: true}, false, nil
}

// translatedName and translatedDescription are the limits of a type's
// name and description in another language, the form's fields named by
// the language ("nameDe", "descriptionDe").
func translatedName(lang string) textfield.Field {
	return textfield.Field{Name: "name" + langSuffix(lang), Label: "The name", Max: textfield.TypeName.Max}
}

func translatedDescription(lang string) textfield.Field {
	return textfield.Field{Name: "description" + langSuffix(lang), Label: "The description", Max: textfield.Description.Max}
}

// langSuffix is "De" for "de": how the form names a language's fields.
func langSuffix(lang string) string {
	if lang == "" {
		return ""
	}
	return strings.ToUpper(lang[:1]) + lang[1:]
}

// validateTranslations checks each language's texts like the type's own;
// a description needs its name, or it would be dropped unseen.
func (in *TypeInput) validateTranslations() error {
	for _, lang := range slices.Sorted(maps.Keys(in.Translations)) {
		tx := in.Translations[lang]
		var err error
		if tx.Name, err = translatedName(lang).Check(tx.Name); err != nil {
			return err
		}
		if tx.Description, err = translatedDescription(lang).Check(tx.Description); err != nil {
			return err
		}
		if tx.Name == "" && tx.Description != "" {
			return apperr.Invalidf("name"+langSuffix(lang), "A description in another language needs the name in that language too.")
		}
		in.Translations[lang] = tx
	}
	return nil
}

// translationsJSON is the translations as stored, or nil to keep the
// type's.
func (in *TypeInput) translationsJSON() []byte {
	if in.Translations == nil {
		return nil
	}
	return in.Translations.JSON()
}

func (in *TypeInput) validate() error {
	var nameErr, descErr error
	in.Name, nameErr = textfield.TypeName.Check(in.Name)
	in.Description, descErr = textfield.Description.Check(in.Description)
	between := func(field string, v, lo, hi int, what string) error {
		if v < lo || v > hi {
			return apperr.Invalidf(field, "%s must be from %d to %d.", what, lo, hi)
		}
		return nil
	}
	if nameErr != nil {
		return nameErr
	}
	if in.Name == "" {
		return apperr.Invalidf("name", "An appointment type needs a name.")
	}
	for _, err := range []error{
		descErr,
		in.validateTranslations(),
		between("durationMin", in.DurationMin, 5, 480, "Duration (minutes)"),
		between("slotStepMin", in.SlotStepMin, 5, 480, "Slot step (minutes)"),
		between("bufferBeforeMin", in.BufferBeforeMin, 0, 240, "Buffer before (minutes)"),
		between("bufferAfterMin", in.BufferAfterMin, 0, 240, "Buffer after (minutes)"),
		between("minNoticeMin", in.MinNoticeMin, 0, 60*24*30, "Minimum notice (minutes)"),
		between("maxAdvanceDays", in.MaxAdvanceDays, 1, 730, "Booking window (days)"),
		between("cooldownMin", in.CooldownMin, 0, 60*24*365, "Cooldown (minutes)"),
		between("maxHoldsPerClient", in.MaxHoldsPerClient, 1, 10, "Holds per patient"),
		between("reminderHours", in.ReminderHours, 0, MaxReminderHours, "Reminder e-mail (hours before)"),
		deadlineErr(in),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func deadlineErr(in *TypeInput) error {
	_, _, err := in.changeDeadline()
	return err
}

// reminderMin is the reminder's lead as stored, in minutes.
func (in *TypeInput) reminderMin() int32 { return int32(in.ReminderHours) * 60 }

// AppointmentType is one of a clinic's types with the rules staff set.
type AppointmentType = clinics.Type

func typeFromRow(t db.AppointmentType) AppointmentType { return clinics.TypeFromRow(t) }

// ClinicTypes are the clinic's appointment types, read in q, for callers
// that checked their own action.
func ClinicTypes(ctx context.Context, q *db.Queries, clinicID uuid.UUID) ([]AppointmentType, error) {
	rows, err := q.AppointmentTypeListByClinic(ctx, clinicID)
	return staff.FromRows(rows, err, typeFromRow)
}

// Types lists the clinic's appointment types.
//
// Errors: FORBIDDEN.
func (s *Service) Types(ctx context.Context, u staff.User) ([]AppointmentType, error) {
	if err := u.May(staff.ActTypes); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).AppointmentTypeListByClinic(ctx, u.ClinicID)
	return staff.FromRows(rows, err, typeFromRow)
}

// Type is one of the clinic's types with who performs it.
//
// Errors: FORBIDDEN, NOT_FOUND (also for another clinic's).
func (s *Service) Type(ctx context.Context, u staff.User, id uuid.UUID) (AppointmentType, []uuid.UUID, error) {
	if err := u.May(staff.ActTypes); err != nil {
		return AppointmentType{}, nil, err
	}
	q := db.New(s.pool)
	t, err := q.AppointmentTypeGetInClinic(ctx, db.AppointmentTypeGetInClinicParams{ID: id, ClinicID: u.ClinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return AppointmentType{}, nil, staff.NotFound("appointment type")
	}
	if err != nil {
		return AppointmentType{}, nil, err
	}
	ids, err := q.AppointmentTypeSpecialistIDs(ctx, id)
	return typeFromRow(t), ids, err
}

type typeAudit struct {
	Type        db.AppointmentType `json:"type"`
	Specialists []uuid.UUID        `json:"specialists"`
}

// SaveType creates (id Nil) or edits an appointment type (admin).
//
// Errors: FORBIDDEN, NOT_FOUND, INVALID_ARGUMENT (naming the field), CONCURRENCY_CONFLICT.
func (s *Service) SaveType(ctx context.Context, u staff.User, id uuid.UUID, in TypeInput) (AppointmentType, error) {
	if err := u.May(staff.ActTypes); err != nil {
		return AppointmentType{}, err
	}
	if err := in.validate(); err != nil {
		return AppointmentType{}, err
	}
	var t db.AppointmentType
	deadline, keepDeadline, _ := in.changeDeadline() // validated above
	err := s.tx(ctx, u, func(q *db.Queries) error {
		for _, sp := range in.SpecialistIDs {
			if _, err := q.SpecialistGetInClinic(ctx, db.SpecialistGetInClinicParams{ID: sp, ClinicID: u.ClinicID}); err != nil {
				return apperr.Invalidf("specialists", "One of the chosen specialists is not at this clinic.")
			}
		}
		var before *typeAudit
		var err error
		if id == uuid.Nil {
			t, err = q.AppointmentTypeInsert(ctx, db.AppointmentTypeInsertParams{
				ClinicID: u.ClinicID, Name: in.Name, Description: in.Description,
				DurationMin: int32(in.DurationMin), SlotStepMin: int32(in.SlotStepMin),
				BufferBeforeMin: int32(in.BufferBeforeMin), BufferAfterMin: int32(in.BufferAfterMin),
				MinNoticeMin: int32(in.MinNoticeMin), MaxAdvanceDays: int32(in.MaxAdvanceDays),
				CooldownMin: int32(in.CooldownMin), MaxHoldsPerClient: int32(in.MaxHoldsPerClient),
				ReminderMin:         pgtype.Int4{Int32: in.reminderMin(), Valid: true},
				Translations:        in.translationsJSON(),
				ChangeDeadlineHours: deadline,
			})
			if err != nil {
				return err
			}
		} else {
			old, err := q.AppointmentTypeLockInClinic(ctx, db.AppointmentTypeLockInClinicParams{ID: id, ClinicID: u.ClinicID})
			if errors.Is(err, pgx.ErrNoRows) {
				return staff.NotFound("appointment type")
			}
			if err != nil {
				return err
			}
			oldIDs, err := q.AppointmentTypeSpecialistIDs(ctx, id)
			if err != nil {
				return err
			}
			before = &typeAudit{Type: old, Specialists: oldIDs}
			if keepDeadline {
				deadline = old.ChangeDeadlineHours
			}
			t, err = q.AppointmentTypeUpdate(ctx, db.AppointmentTypeUpdateParams{
				ID: id, ClinicID: u.ClinicID, Version: in.Version, Name: in.Name, Description: in.Description,
				DurationMin: int32(in.DurationMin), SlotStepMin: int32(in.SlotStepMin),
				BufferBeforeMin: int32(in.BufferBeforeMin), BufferAfterMin: int32(in.BufferAfterMin),
				MinNoticeMin: int32(in.MinNoticeMin), MaxAdvanceDays: int32(in.MaxAdvanceDays),
				CooldownMin: int32(in.CooldownMin), MaxHoldsPerClient: int32(in.MaxHoldsPerClient),
				ReminderMin: in.reminderMin(), Translations: in.translationsJSON(), ChangeDeadlineHours: deadline,
			})
			if errors.Is(err, pgx.ErrNoRows) {
				return staff.Stale(typeFromRow(old))
			}
			if err != nil {
				return err
			}
			if err := q.AppointmentTypeSpecialistDeleteAll(ctx, id); err != nil {
				return err
			}
		}
		for _, sp := range in.SpecialistIDs {
			if err := q.AppointmentTypeSpecialistAdd(ctx, db.AppointmentTypeSpecialistAddParams{ClinicID: u.ClinicID, AppointmentTypeID: t.ID, SpecialistID: sp}); err != nil {
				return err
			}
		}
		action := "type.update"
		if before == nil {
			action = "type.create"
		}
		var b any
		if before != nil {
			b = before
		}
		return staff.WriteAudit(ctx, q, u, action, "appointment_type", t.ID.String(), b, typeAudit{Type: t, Specialists: in.SpecialistIDs}, "")
	})
	return typeFromRow(t), err
}
