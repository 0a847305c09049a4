package staff

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/textfield"
)

// Bookings are the staff's booking actions, over the same gate as patients.
type Bookings struct {
	svc      *Service
	bookings *booking.Service
	holds    *holds.Store
}

func NewBookings(s *Service, b *booking.Service, h *holds.Store) *Bookings {
	return &Bookings{svc: s, bookings: b, holds: h}
}

// BookForPatient books straight through the database gate, without a hold
// (a phone booking), but not over a hold another client has on that time.
// With Redis down it still books: the database decides.
//
// Errors: INVALID_ARGUMENT, NOT_FOUND, SLOT_HELD (423), SLOT_TAKEN (409).
func (b *Bookings) BookForPatient(ctx context.Context, u User, typeID, specialistID uuid.UUID, start time.Time, p booking.Patient) (booking.Confirmation, error) {
	t, err := db.New(b.svc.pool).AppointmentTypeGetInClinic(ctx, db.AppointmentTypeGetInClinicParams{ID: typeID, ClinicID: u.ClinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return booking.Confirmation{}, apperr.NotFoundf("appointmentTypeId", "No such appointment type at this clinic.")
	}
	if err != nil {
		return booking.Confirmation{}, err
	}
	end := start.Add(time.Duration(t.DurationMin) * time.Minute)
	if b.holds != nil {
		if active, err := b.holds.Active(ctx, u.ClinicID); err == nil {
			for _, h := range active {
				if h.SpecialistID == specialistID && h.Start.Before(end) && start.Before(h.End) {
					return booking.Confirmation{}, apperr.SlotHeld(time.Until(h.ExpiresAt))
				}
			}
		}
	}
	return b.bookings.Book(ctx, booking.BookRequest{
		AppointmentTypeID: typeID, SpecialistID: specialistID, Start: start, Patient: p,
		Actor: u.Actor(), ClinicID: u.ClinicID, ClientID: "staff",
	})
}

// Cancel cancels any of the clinic's bookings with a reason.
func (b *Bookings) Cancel(ctx context.Context, u User, id uuid.UUID, reason string) (booking.Booking, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return booking.Booking{}, apperr.Invalidf("reason", "Give a reason: it goes into the audit log.")
	}
	bk, _, err := b.bookings.Cancel(ctx, booking.CancelRequest{BookingID: id, ClinicID: u.ClinicID, Actor: u.Actor(), Reason: reason})
	return bk, err
}

// Reschedule moves any of the clinic's bookings, with a reason, under the
// version the form was opened at.
func (b *Bookings) Reschedule(ctx context.Context, u User, id uuid.UUID, start time.Time, specialist uuid.UUID, version int32, reason string) (booking.Booking, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return booking.Booking{}, apperr.Invalidf("reason", "Give a reason: it goes into the audit log.")
	}
	return b.bookings.Reschedule(ctx, booking.RescheduleRequest{
		BookingID: id, ClinicID: u.ClinicID, Start: start, SpecialistID: specialist,
		Actor: u.Actor(), Reason: reason, ExpectVersion: version,
	})
}

// Calendar is the clinic's confirmed bookings between from and to.
//
// Errors: none of its own (database failures are internal).
func (b *Bookings) Calendar(ctx context.Context, u User, from, to time.Time) ([]CalendarBooking, error) {
	return b.calendar(ctx, u.ClinicID, from, to)
}

// Search finds bookings by patient name, e-mail or phone in a date range.
func (b *Bookings) Search(ctx context.Context, u User, q string, from, to time.Time) ([]db.BookingSearchRow, error) {
	return db.New(b.svc.pool).BookingSearch(ctx, db.BookingSearchParams{ClinicID: u.ClinicID, Q: strings.TrimSpace(q), RangeStart: from, RangeEnd: to})
}

// AuditFilter narrows the audit log.
type AuditFilter struct {
	Entity, Actor string
	From, To      time.Time
	Page          int
}

// AuditPageSize is the rows per audit page.
const AuditPageSize = 50

// Audit lists the clinic's audit rows, newest first.
func (s *Service) Audit(ctx context.Context, u User, f AuditFilter) ([]db.AuditLog, error) {
	if f.Page < 1 {
		f.Page = 1
	}
	return db.New(s.pool).AuditList(ctx, db.AuditListParams{
		ClinicID: u.ClinicID, Entity: f.Entity, Actor: f.Actor, FromAt: f.From, ToAt: f.To,
		PageSize: AuditPageSize + 1, PageOffset: int32((f.Page - 1) * AuditPageSize),
	})
}

// Staff accounts and kiosk tokens: admin only.

// StaffUsers lists the clinic's accounts.
func (s *Service) StaffUsers(ctx context.Context, u User) ([]db.StaffUser, error) {
	if err := requireAdmin(u); err != nil {
		return nil, err
	}
	return db.New(s.pool).StaffUserListByClinic(ctx, u.ClinicID)
}

// CreateStaffUser adds an account.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (email, name, password, role),
// CONFLICT (e-mail taken).
func (s *Service) CreateStaffUser(ctx context.Context, u User, email, name, password, role string) (db.StaffUser, error) {
	if err := requireAdmin(u); err != nil {
		return db.StaffUser{}, err
	}
	email, emailErr := textfield.StaffEmail.Check(email)
	email = strings.ToLower(email)
	name, nameErr := textfield.StaffName.Check(name)
	passwordErr := textfield.CheckPassword(password)
	switch {
	case emailErr != nil:
		return db.StaffUser{}, emailErr
	case !strings.Contains(email, "@"):
		return db.StaffUser{}, apperr.Invalidf("email", "That does not look like an e-mail address.")
	case nameErr != nil:
		return db.StaffUser{}, nameErr
	case passwordErr != nil:
		return db.StaffUser{}, passwordErr
	case role != RoleAdmin && role != RoleStaff:
		return db.StaffUser{}, apperr.Invalidf("role", "The role is admin or staff.")
	}
	hash, err := hashPassword(password)
	if err != nil {
		return db.StaffUser{}, err
	}
	var row db.StaffUser
	err = s.tx(ctx, u, func(q *db.Queries) error {
		var err error
		row, err = q.StaffUserUpsert(ctx, db.StaffUserUpsertParams{ClinicID: u.ClinicID, Email: email, Name: name, PasswordHash: hash, Role: role})
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.New(apperr.Conflict, apperr.CodeEmailTaken, "There is already an account with that e-mail address.")
		}
		if err != nil {
			return err
		}
		return audit(ctx, q, u, "staff.create", "staff_user", row.ID.String(), nil, map[string]string{"email": email, "role": role}, "")
	})
	return row, err
}

// KioskTokens lists the clinic's kiosk tokens.
func (s *Service) KioskTokens(ctx context.Context, u User) ([]db.KioskToken, error) {
	if err := requireAdmin(u); err != nil {
		return nil, err
	}
	return db.New(s.pool).KioskTokenListByClinic(ctx, u.ClinicID)
}

// CreateKioskToken makes a read-only device token; the token is returned
// once, only its hash is kept.
func (s *Service) CreateKioskToken(ctx context.Context, u User, name string) (string, error) {
	if err := requireAdmin(u); err != nil {
		return "", err
	}
	name, err := textfield.KioskName.Check(name)
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", apperr.Invalidf("name", "Name the screen (for example \"Waiting room 1\").")
	}
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	token := "k_" + base64.RawURLEncoding.EncodeToString(buf)
	err = s.tx(ctx, u, func(q *db.Queries) error {
		row, err := q.KioskTokenInsert(ctx, db.KioskTokenInsertParams{ClinicID: u.ClinicID, Name: name, TokenHash: booking.HashToken(token)})
		if err != nil {
			return err
		}
		return audit(ctx, q, u, "kiosk_token.create", "kiosk_token", row.ID.String(), nil, map[string]string{"name": name}, "")
	})
	return token, err
}

// RevokeKioskToken stops a token working.
func (s *Service) RevokeKioskToken(ctx context.Context, u User, id uuid.UUID) error {
	if err := requireAdmin(u); err != nil {
		return err
	}
	return s.tx(ctx, u, func(q *db.Queries) error {
		n, err := q.KioskTokenRevoke(ctx, db.KioskTokenRevokeParams{ID: id, ClinicID: u.ClinicID})
		if err != nil {
			return err
		}
		if n == 0 {
			return notFound("kiosk token")
		}
		return audit(ctx, q, u, "kiosk_token.revoke", "kiosk_token", id.String(), nil, nil, "")
	})
}

// SetDisabled disables an account of the admin's clinic (it can no longer
// sign in; its sessions and streams end at their next check) or enables it
// again. An admin cannot disable their own account, so a clinic is never
// left without one by a slip.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (id: one's own account), NOT_FOUND.
func (s *Service) SetDisabled(ctx context.Context, u User, id uuid.UUID, disabled bool) (db.StaffUser, error) {
	if err := requireAdmin(u); err != nil {
		return db.StaffUser{}, err
	}
	if disabled && id == u.ID {
		return db.StaffUser{}, apperr.Invalidf("id", "You cannot disable your own account.")
	}
	action := "staff.enable"
	if disabled {
		action = "staff.disable"
	}
	var row db.StaffUser
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		var err error
		row, err = q.StaffUserSetDisabled(ctx, db.StaffUserSetDisabledParams{ID: id, ClinicID: u.ClinicID, Disabled: disabled})
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("account")
		}
		if err != nil {
			return err
		}
		return audit(ctx, q, u, action, "staff_user", id.String(), nil, map[string]string{"email": row.Email}, "")
	})
	return row, err
}

// KioskTokenValid checks a board's token.
//
// Errors: none of its own (database failures are internal).
func (s *Service) KioskTokenValid(ctx context.Context, clinicID uuid.UUID, token string) (bool, error) {
	return db.New(s.pool).KioskTokenValid(ctx, db.KioskTokenValidParams{ClinicID: clinicID, TokenHash: booking.HashToken(token)})
}
