// Package seed creates the demo clinic. Running it again finds what exists
// and adds nothing twice.
package seed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
)

// Demo is what the seed made, for the message main prints and for tests.
type Demo struct {
	Clinic        clinics.Clinic
	Specialists   []db.Specialist
	Types         []db.AppointmentType
	AdminEmail    string
	AdminPassword string
	AdminCreated  bool
	ClosedDay     time.Time
	// Room is the clinic's one ultrasound room, which the type
	// "Ultrasound" needs.
	Room db.Resource
}

type specialistSeed struct {
	name     string
	priority int32
}

type typeSeed struct {
	name, description string
	german            clinics.TypeText
	minutes           int32
	specialists       []int // indexes into specialists
}

var (
	demoSpecialists = []specialistSeed{
		{"Dr. Anna Weber", 30},
		{"Dr. Jonas Keller", 20},
		{"Dr. Lea Fischer", 10},
	}
	demoTypes = []typeSeed{
		{"Quick check-up", "A short follow-up or prescription renewal.",
			clinics.TypeText{Name: "Kurztermin", Description: "Eine kurze Nachkontrolle oder ein Folgerezept."}, 15, []int{0, 1}},
		{"Consultation", "A standard appointment with a doctor.",
			clinics.TypeText{Name: "Sprechstunde", Description: "Ein gewöhnlicher Termin bei einer Ärztin oder einem Arzt."}, 30, []int{0, 1, 2}},
		{"Extended examination", "A full examination with time for questions.",
			clinics.TypeText{Name: "Ausführliche Untersuchung", Description: "Eine gründliche Untersuchung mit Zeit für Ihre Fragen."}, 60, []int{0, 2}},
		{"Ultrasound", "An ultrasound examination in our ultrasound room.",
			clinics.TypeText{Name: "Ultraschall", Description: "Eine Ultraschalluntersuchung in unserem Ultraschallraum."}, 30, []int{0, 1, 2}},
	}
)

// The demo clinic's phone and e-mail, which every patient page and
// e-mail shows.
const (
	demoPhone = "+49 30 1234 5678"
	demoEmail = "praxis@demo.clinic"
)

// Run seeds the demo clinic (slug "demo", Europe/Berlin, with a phone and
// an e-mail): three specialists of different priorities, four appointment
// types named in English and German (the ultrasound needs the clinic's one
// ultrasound room), weekday hours with a lunch break, one closed day and
// one admin. now picks the closed day.
func Run(ctx context.Context, pool *pgxpool.Pool, adminPassword string, now time.Time) (Demo, error) {
	var d Demo
	clinic, err := clinics.NewService(pool).Upsert(ctx, clinics.Input{
		Slug: "demo", Name: "Demo Health Clinic", Timezone: "Europe/Berlin",
		Address: "Torstraße 1, 10119 Berlin",
	})
	if err != nil {
		return d, err
	}
	d.Clinic = clinic
	loc, err := clinics.LoadZone(clinic.Timezone)
	if err != nil {
		return d, err
	}

	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		if err := q.ClinicContactSeed(ctx, db.ClinicContactSeedParams{ID: clinic.ID, ContactPhone: demoPhone, ContactEmail: demoEmail}); err != nil {
			return fmt.Errorf("clinic contact: %w", err)
		}
		for _, s := range demoSpecialists {
			sp, err := q.SpecialistGetByName(ctx, db.SpecialistGetByNameParams{ClinicID: clinic.ID, Name: s.name})
			if errors.Is(err, pgx.ErrNoRows) {
				sp, err = q.SpecialistInsert(ctx, db.SpecialistInsertParams{
					ClinicID: clinic.ID, Name: s.name, Priority: s.priority, Active: true,
				})
			}
			if err != nil {
				return fmt.Errorf("specialist %s: %w", s.name, err)
			}
			d.Specialists = append(d.Specialists, sp)
			if err := seedHours(ctx, q, clinic.ID, sp.ID); err != nil {
				return err
			}
		}
		if d.Types, err = seedTypes(ctx, q, clinic.ID, d.Specialists); err != nil {
			return err
		}
		if d.Room, err = seedRoom(ctx, q, clinic.ID, d.Types); err != nil {
			return err
		}

		// One closed day for the first specialist: the next Wednesday.
		first := d.Specialists[0]
		n, err := q.OverrideCountBySpecialist(ctx, first.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			local := now.In(loc)
			day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC)
			for day = day.AddDate(0, 0, 1); day.Weekday() != time.Wednesday; day = day.AddDate(0, 0, 1) {
			}
			d.ClosedDay = day
			if err := q.OverrideInsertClosed(ctx, db.OverrideInsertClosedParams{
				ClinicID: clinic.ID, SpecialistID: first.ID, Day: day, Note: "Training day",
			}); err != nil {
				return fmt.Errorf("closed day: %w", err)
			}
		}

		hash, err := bcrypt.GenerateFromPassword([]byte(adminPassword), bcrypt.DefaultCost)
		if err != nil {
			return err
		}
		d.AdminEmail, d.AdminPassword = "admin@demo.clinic", adminPassword
		_, err = q.StaffUserUpsert(ctx, db.StaffUserUpsertParams{
			ClinicID: clinic.ID, Email: d.AdminEmail, Name: "Demo Admin", PasswordHash: string(hash), Role: "admin",
		})
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			// Already there; its password is whatever it was set to.
		case err != nil:
			return fmt.Errorf("admin: %w", err)
		default:
			d.AdminCreated = true
		}
		return nil
	})
	if err != nil {
		return d, err
	}
	d.Clinic, err = clinics.NewService(pool).ByID(ctx, clinic.ID) // with its contact
	return d, err
}

// seedTypes adds the demo's appointment types with their German names,
// unless they are there, and links each to the specialists who perform it.
func seedTypes(ctx context.Context, q *db.Queries, clinicID uuid.UUID, specialists []db.Specialist) ([]db.AppointmentType, error) {
	var types []db.AppointmentType
	for _, t := range demoTypes {
		at, err := q.AppointmentTypeGetByName(ctx, db.AppointmentTypeGetByNameParams{ClinicID: clinicID, Name: t.name})
		if errors.Is(err, pgx.ErrNoRows) {
			at, err = q.AppointmentTypeInsert(ctx, db.AppointmentTypeInsertParams{
				ClinicID: clinicID, Name: t.name, Description: t.description,
				DurationMin: t.minutes, SlotStepMin: t.minutes,
				BufferBeforeMin: 0, BufferAfterMin: 0, MinNoticeMin: 60,
				MaxAdvanceDays: 60, CooldownMin: 1440, MaxHoldsPerClient: 1,
			})
		}
		if err != nil {
			return nil, fmt.Errorf("appointment type %s: %w", t.name, err)
		}
		if err := q.AppointmentTypeSeedTranslations(ctx, db.AppointmentTypeSeedTranslationsParams{
			ID: at.ID, ClinicID: clinicID, Translations: clinics.Translations{"de": t.german}.JSON(),
		}); err != nil {
			return nil, fmt.Errorf("appointment type %s in German: %w", t.name, err)
		}
		types = append(types, at)
		for _, i := range t.specialists {
			err := q.AppointmentTypeSpecialistAdd(ctx, db.AppointmentTypeSpecialistAddParams{
				ClinicID: clinicID, AppointmentTypeID: at.ID, SpecialistID: specialists[i].ID,
			})
			if err != nil {
				return nil, fmt.Errorf("link %s to %s: %w", t.name, specialists[i].Name, err)
			}
		}
	}
	return types, nil
}

// seedHours gives a specialist Monday to Friday, 08:30-12:30 and 13:30-17:00,
// unless they already have hours.
func seedHours(ctx context.Context, q *db.Queries, clinicID, specialistID uuid.UUID) error {
	n, err := q.WeeklyHoursCountBySpecialist(ctx, specialistID)
	if err != nil || n > 0 {
		return err
	}
	for wd := time.Monday; wd <= time.Friday; wd++ {
		for _, r := range [][2]int32{{8*60 + 30, 12*60 + 30}, {13*60 + 30, 17 * 60}} {
			if err := q.WeeklyHoursInsert(ctx, db.WeeklyHoursInsertParams{
				ClinicID: clinicID, SpecialistID: specialistID, Weekday: int16(wd), StartMin: r[0], EndMin: r[1],
			}); err != nil {
				return fmt.Errorf("weekly hours: %w", err)
			}
		}
	}
	return nil
}

// seedRoom adds the ultrasound room, unless it is there, and makes the
// type "Ultrasound" need a room of its kind.
func seedRoom(ctx context.Context, q *db.Queries, clinicID uuid.UUID, types []db.AppointmentType) (db.Resource, error) {
	const name, kind = "Ultrasound room", "ultrasound"
	room, err := q.ResourceGetByName(ctx, db.ResourceGetByNameParams{ClinicID: clinicID, Name: name})
	if errors.Is(err, pgx.ErrNoRows) {
		room, err = q.ResourceInsert(ctx, db.ResourceInsertParams{ClinicID: clinicID, Name: name, Kind: kind, AlwaysOpen: true, Active: true})
	}
	if err != nil {
		return room, fmt.Errorf("room %s: %w", name, err)
	}
	for _, t := range types {
		if t.Name == "Ultrasound" {
			if err := q.TypeNeedSet(ctx, db.TypeNeedSetParams{
				ClinicID: clinicID, AppointmentTypeID: t.ID, ResourceKind: pgtype.Text{String: kind, Valid: true},
			}); err != nil {
				return room, fmt.Errorf("ultrasound's room: %w", err)
			}
		}
	}
	return room, nil
}
