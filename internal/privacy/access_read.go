package privacy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
)

// The admins' reads of the record of who looked. Reading it shows no
// patient's name or contact (the admin types the address or number, and
// the page answers with times, pages and staff accounts), so it is no
// view of the patient's data and writes no access record; it is an act
// of an admin on a patient's data, so it writes an audit row, without the
// patient's details.

// ActReadAccess is the role table's action for reading the record:
// admins, who also read the audit log.
const ActReadAccess = staff.ActAudit

// LookLimit is how many records a read lists, newest first.
const LookLimit = 500

// Look is one view of a patient's bookings or waitlist places: who, when,
// on which page, and which of them it showed.
type Look struct {
	At         time.Time
	Page       string
	StaffID    uuid.UUID
	StaffEmail string // "" for an account since deleted
	Bookings   []uuid.UUID
	Waitlist   []uuid.UUID
}

// PatientBooking is one of the patient's bookings as the record names it:
// by id and time, without the patient's details.
type PatientBooking struct {
	ID     uuid.UUID
	Start  time.Time
	Status string
}

// PatientLooks are the patient's bookings and every view of them.
type PatientLooks struct {
	Bookings []PatientBooking
	Waitlist []uuid.UUID
	Looks    []Look
}

// StaffLook is one view by a staff account: when, which page, how many
// bookings, waitlist places and e-mails it showed.
type StaffLook struct {
	At                                 time.Time
	Page                               string
	Bookings, WaitlistPlaces, Messages int
}

// ByPatient is who looked at the bookings and waitlist places of the
// patient with this e-mail address or phone number at u's clinic.
//
// Errors: FORBIDDEN (not an admin), INVALID (neither given).
func (r *Recorder) ByPatient(ctx context.Context, u staff.User, email, phone string) (PatientLooks, error) {
	if err := u.May(ActReadAccess); err != nil {
		return PatientLooks{}, err
	}
	q := db.New(r.pool)
	p, err := PatientOf(ctx, q, u.ClinicID, email, phone)
	if err != nil {
		return PatientLooks{}, err
	}
	bookings, err := Bookings(ctx, q, p)
	if err != nil {
		return PatientLooks{}, err
	}
	var out PatientLooks
	ids := make([]uuid.UUID, len(bookings))
	for i, b := range bookings {
		ids[i] = b.ID
		out.Bookings = append(out.Bookings, PatientBooking{ID: b.ID, Start: b.SlotStart, Status: b.Status})
	}
	if out.Waitlist, err = q.AccessPatientWaitlist(ctx, db.AccessPatientWaitlistParams{
		ClinicID: p.ClinicID, EmailKey: p.EmailKey, PhoneKey: p.PhoneKey,
	}); err != nil {
		return PatientLooks{}, fmt.Errorf("patient's waitlist places: %w", err)
	}
	if err := audit.Write(ctx, q, audit.Entry{
		ClinicID: u.ClinicID, Actor: u.Actor(), Action: "access.read_patient", Entity: "patient",
	}); err != nil {
		return PatientLooks{}, err
	}
	if len(ids) == 0 && len(out.Waitlist) == 0 {
		return out, nil
	}
	rows, err := q.AccessListByPatient(ctx, db.AccessListByPatientParams{
		ClinicID: u.ClinicID, BookingIds: ids, WaitlistIds: nonNil(out.Waitlist), RowLimit: LookLimit,
	})
	if err != nil {
		return PatientLooks{}, fmt.Errorf("list patient's access: %w", err)
	}
	for _, row := range rows {
		out.Looks = append(out.Looks, Look{
			At: row.At, Page: row.Page, StaffID: row.StaffID, StaffEmail: row.StaffEmail,
			Bookings: row.ShownBookings, Waitlist: row.ShownWaitlist,
		})
	}
	return out, nil
}

// ByStaff is what the account staffID of u's clinic looked at, newest
// first, and the account's e-mail address.
//
// Errors: FORBIDDEN (not an admin), NOT_FOUND (no such account at the
// clinic).
func (r *Recorder) ByStaff(ctx context.Context, u staff.User, staffID uuid.UUID) (string, []StaffLook, error) {
	if err := u.May(ActReadAccess); err != nil {
		return "", nil, err
	}
	q := db.New(r.pool)
	acct, err := q.StaffUserGet(ctx, staffID)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && acct.ClinicID != u.ClinicID) {
		return "", nil, apperr.NotFoundf("id", "No such staff account at this clinic.")
	}
	if err != nil {
		return "", nil, fmt.Errorf("load staff account: %w", err)
	}
	if err := audit.Write(ctx, q, audit.Entry{
		ClinicID: u.ClinicID, Actor: u.Actor(), Action: "access.read_staff", Entity: "staff_user", EntityID: staffID.String(),
	}); err != nil {
		return "", nil, err
	}
	rows, err := q.AccessListByStaff(ctx, db.AccessListByStaffParams{ClinicID: u.ClinicID, StaffID: staffID, RowLimit: LookLimit})
	if err != nil {
		return "", nil, fmt.Errorf("list staff access: %w", err)
	}
	out := make([]StaffLook, len(rows))
	for i, row := range rows {
		out[i] = StaffLook{At: row.At, Page: row.Page, Bookings: int(row.Bookings),
			WaitlistPlaces: int(row.WaitlistPlaces), Messages: int(row.Messages)}
	}
	return acct.Email, out, nil
}

// DeleteAccessBefore deletes the clinic's access records written before
// before, the end of its retention period for patient details, and says
// how many it deleted. Retention's daily run calls it for each clinic.
func DeleteAccessBefore(ctx context.Context, q *db.Queries, clinicID uuid.UUID, before time.Time) (int64, error) {
	n, err := q.AccessDeleteBefore(ctx, db.AccessDeleteBeforeParams{ClinicID: clinicID, Before: before})
	if err != nil {
		return 0, fmt.Errorf("delete access records: %w", err)
	}
	return n, nil
}
