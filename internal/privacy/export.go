package privacy

// Export: everything a clinic holds about one patient, as one document
// the patient can be handed (their right of access). docs/privacy.md
// describes each field; the names are stable, a change of meaning changes
// ExportFormat.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/identity"
	"github.com/clinic/booking/internal/staff"
)

// ExportFormat names the document's shape and version.
const ExportFormat = "clinic-patient-export/1"

// ActionExport is the action of the audit row every export writes.
const ActionExport = "patient.export"

// Export is one patient's data at one clinic. Times of appointments are
// given in the clinic's zone and in UTC; every other time is UTC.
type Export struct {
	Format     string    `json:"format"`
	ID         uuid.UUID `json:"exportId"`
	ExportedAt time.Time `json:"exportedAt"`
	// ExportedBy is who made the export: the staff member's name and role,
	// or "cli" for the command line.
	ExportedBy Actor        `json:"exportedBy"`
	Clinic     ExportClinic `json:"clinic"`
	// RequestedFor is the address and number the export was asked for,
	// as typed.
	RequestedFor Contact         `json:"requestedFor"`
	Bookings     []ExportBooking `json:"bookings"`
	Emails       []ExportEmail   `json:"emails"`
	Waitlist     []ExportPlace   `json:"waitlistPlaces"`
	Audit        []ExportEvent   `json:"auditEntries"`
}

// ExportClinic is the clinic that holds the data (the controller).
type ExportClinic struct {
	Name         string `json:"name"`
	Address      string `json:"address"`
	ContactEmail string `json:"contactEmail"`
	ContactPhone string `json:"contactPhone"`
	TimeZone     string `json:"timeZone"`
}

// Contact is a patient's details as stored with a booking or a place.
type Contact struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email"`
	Phone string `json:"phone"`
}

// Span is an appointment's time: its start and end in the clinic's zone
// (RFC 3339 with the zone's offset then) and in UTC.
type Span struct {
	Start    string    `json:"start"`
	End      string    `json:"end"`
	StartUTC time.Time `json:"startUtc"`
	EndUTC   time.Time `json:"endUtc"`
}

// ExportBooking is one booking, in any state.
type ExportBooking struct {
	ID              uuid.UUID `json:"id"`
	Time            Span      `json:"time"`
	AppointmentType string    `json:"appointmentType"`
	Specialist      string    `json:"specialist"`
	// Status is confirmed, cancelled, or rescheduled (moved: MovedTo is
	// the booking it became).
	Status       string     `json:"status"`
	CreatedAt    time.Time  `json:"createdAt"`
	CancelledAt  *time.Time `json:"cancelledAt"`
	CancelReason string     `json:"cancelReason"`
	MovedFrom    *uuid.UUID `json:"movedFrom"`
	MovedTo      *uuid.UUID `json:"movedTo"`
	// Attendance is "", arrived, no_show or completed.
	Attendance   string     `json:"attendance"`
	AttendanceAt *time.Time `json:"attendanceAt"`
	// LateCancel: the patient cancelled inside the change deadline.
	LateCancel bool    `json:"lateCancel"`
	Language   string  `json:"language"`
	Patient    Contact `json:"patient"`
}

// ExportEmail is one e-mail written to the patient, sent or not.
type ExportEmail struct {
	ID uuid.UUID `json:"id"`
	// Kind is confirmation, reminder, change, cancellation, lookup,
	// waitlist_joined or waitlist_offer.
	Kind string `json:"kind"`
	// Status is queued, sending, sent, retrying, failed, cancelled or held.
	Status          string     `json:"status"`
	To              string     `json:"to"`
	BookingID       *uuid.UUID `json:"bookingId"`
	WaitlistPlaceID *uuid.UUID `json:"waitlistPlaceId"`
	Language        string     `json:"language"`
	CreatedAt       time.Time  `json:"createdAt"`
	SendAt          time.Time  `json:"sendAt"`
	SentAt          *time.Time `json:"sentAt"`
	Attempts        int        `json:"attempts"`
	// Subject and Text are the e-mail as written, when the server kept a
	// copy (it keeps one when it sends without a mail server); null when
	// it did not.
	Subject *string `json:"subject"`
	Text    *string `json:"text"`
}

// ExportPlace is one place on the waitlist.
type ExportPlace struct {
	ID              uuid.UUID `json:"id"`
	AppointmentType string    `json:"appointmentType"`
	// Specialist is "" when any specialist would do.
	Specialist string `json:"specialist"`
	FromDate   string `json:"fromDate"`
	ToDate     string `json:"toDate"`
	// PartsOfDay are morning, afternoon, evening; empty is any time.
	PartsOfDay []string `json:"partsOfDay"`
	// State is waiting, offered, booked, left, removed or lapsed.
	State       string        `json:"state"`
	JoinedAt    time.Time     `json:"joinedAt"`
	ConfirmedAt *time.Time    `json:"confirmedAt"`
	EndedAt     *time.Time    `json:"endedAt"`
	BookingID   *uuid.UUID    `json:"bookingId"`
	Language    string        `json:"language"`
	Patient     Contact       `json:"patient"`
	Offers      []ExportOffer `json:"offers"`
}

// ExportOffer is a time offered to a waitlist place.
type ExportOffer struct {
	ID         uuid.UUID `json:"id"`
	Time       Span      `json:"time"`
	Specialist string    `json:"specialist"`
	// State is open, accepted, declined, expired or withdrawn.
	State     string     `json:"state"`
	OfferedAt time.Time  `json:"offeredAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	EndedAt   *time.Time `json:"endedAt"`
	BookingID *uuid.UUID `json:"bookingId"`
}

// ExportEvent is one audit entry about the patient's bookings, places
// or e-mails: what was done, when, by whom and why.
type ExportEvent struct {
	At     time.Time `json:"at"`
	Action string    `json:"action"`
	// Entity is booking, waitlist_entry or message; EntityID its id.
	Entity   string `json:"entity"`
	EntityID string `json:"entityId"`
	By       Actor  `json:"by"`
	Reason   string `json:"reason"`
}

// Actor is who acted: Kind staff (with the account's name and role),
// patient, system or cli (the command line).
type Actor struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	Role string `json:"role,omitempty"`
}

// Counts are the sizes of an export, the only thing its audit row says
// of it.
type Counts struct {
	Bookings       int `json:"bookings"`
	Emails         int `json:"emails"`
	WaitlistPlaces int `json:"waitlistPlaces"`
	AuditEntries   int `json:"auditEntries"`
}

// Counts are the export's sizes.
func (e Export) Counts() Counts {
	return Counts{Bookings: len(e.Bookings), Emails: len(e.Emails), WaitlistPlaces: len(e.Waitlist), AuditEntries: len(e.Audit)}
}

// JSON is the document as it is handed out: indented, UTF-8.
func (e Export) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode export: %w", err)
	}
	return append(b, '\n'), nil
}

// Exporter builds patients' exports.
type Exporter struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// exporter is who makes an export: the audit row's actor, the document's
// exportedBy, and the staff account the record of who looked names (none
// at the command line, whose export the audit row alone records).
type exporter struct {
	actor   string
	by      Actor
	staffID uuid.UUID
}

// NewExporter is an Exporter reading pool.
func NewExporter(pool *pgxpool.Pool) *Exporter {
	return &Exporter{pool: pool, now: time.Now}
}

// Export is everything u's clinic holds about the patient with this
// e-mail address or phone number (any spelling of either), with an audit
// row saying u exported a patient and how much, and u's record of
// having looked at the patient's bookings, places and e-mails (page
// PageExport).
//
// Errors: FORBIDDEN (only admins export), INVALID_ARGUMENT (email,
// phone), NOT_FOUND (the clinic holds nothing of such a patient).
func (x *Exporter) Export(ctx context.Context, u staff.User, email, phone string) (Export, error) {
	if err := u.May(staff.ActPatientExport); err != nil {
		return Export{}, err
	}
	return x.export(ctx, u.ClinicID, exporter{actor: u.Actor(), by: Actor{Kind: "staff", Name: u.Name, Role: u.Role}, staffID: u.ID}, email, phone)
}

// ExportByOperator is Export for the server's operator at the command
// line, who names the clinic themselves.
//
// Errors: INVALID_ARGUMENT (email, phone), NOT_FOUND.
func (x *Exporter) ExportByOperator(ctx context.Context, clinicID uuid.UUID, email, phone string) (Export, error) {
	return x.export(ctx, clinicID, exporter{actor: staff.ActorCLI, by: Actor{Kind: staff.ActorCLI}}, email, phone)
}

func (x *Exporter) export(ctx context.Context, clinicID uuid.UUID, who exporter, email, phone string) (Export, error) {
	email, phone = strings.TrimSpace(email), strings.TrimSpace(phone)
	if err := checkContact(email, phone); err != nil {
		return Export{}, err
	}
	var out Export
	// One snapshot: the bookings, e-mails and audit rows agree with each
	// other, and the audit row of the export commits with the reading.
	err := pgx.BeginTxFunc(ctx, x.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		q := db.New(tx)
		p, err := PatientOf(ctx, q, clinicID, email, phone)
		if err != nil {
			return err
		}
		r := reader{q: q, p: p}
		if out, err = r.read(ctx); err != nil {
			return err
		}
		if len(out.Bookings) == 0 && len(out.Emails) == 0 && len(out.Waitlist) == 0 {
			return apperr.NotFoundf(notFoundField(email), "This clinic holds no bookings, e-mails or waitlist places of a patient with this e-mail address or phone number.")
		}
		out.Format, out.ID, out.ExportedAt, out.ExportedBy = ExportFormat, uuid.New(), x.now().UTC(), who.by
		out.RequestedFor = Contact{Email: email, Phone: phone}
		if who.staffID != uuid.Nil {
			if err := RecordAccess(ctx, q, Access{ClinicID: clinicID, StaffID: who.staffID, Page: PageExport,
				Bookings: r.bookingIDs, Waitlist: r.entryIDs, Messages: emailIDs(out.Emails)}); err != nil {
				return err
			}
		}
		return audit.Write(ctx, q, audit.Entry{
			ClinicID: clinicID, Actor: who.actor, Action: ActionExport, Entity: "export", EntityID: out.ID.String(),
			After: out.Counts(),
		})
	})
	if err != nil {
		return Export{}, err
	}
	return out, nil
}

// checkContact refuses what cannot name a patient: nothing at all, an
// address without its @, a number without a digit.
func checkContact(email, phone string) error {
	if email == "" && phone == "" {
		return apperr.Invalidf("email", "Type the patient's e-mail address or phone number.")
	}
	if email != "" && !strings.Contains(email, "@") {
		return apperr.Invalidf("email", "The e-mail address needs an @.")
	}
	if phone != "" && identity.PhoneKey(phone, identity.DefaultRegion) == "" {
		return apperr.Invalidf("phone", "The phone number needs digits.")
	}
	return nil
}

func notFoundField(email string) string {
	if email != "" {
		return "email"
	}
	return "phone"
}

func emailIDs(emails []ExportEmail) []uuid.UUID {
	out := make([]uuid.UUID, len(emails))
	for i, m := range emails {
		out[i] = m.ID
	}
	return out
}
