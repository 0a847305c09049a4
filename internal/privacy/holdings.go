package privacy

// Finding one patient: every row and session draft that holds their
// details, for the staff's page and for the erasure.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/identity"
	"github.com/clinic/booking/internal/staff"
)

// Holdings is what a clinic holds about one patient, shaped for display.
type Holdings struct {
	Patient  Patient
	Names    []string // the names the patient gave, as stored
	Bookings []HeldBooking
	Messages []HeldMessage
	Places   []HeldPlace
	Audit    []HeldAudit
	// Drafts are the browser sessions whose booking form keeps what the
	// patient typed.
	Drafts int
	// Others are the other e-mail addresses and phone numbers written on
	// the rows found (a second address given with the same phone, the
	// phone given with the address searched for), each Contact one of
	// them without a name: perhaps the same patient, perhaps a family
	// member sharing a phone. Only a search that names them too reaches
	// the rows found by them alone.
	Others []Contact

	details []string // the patient's details as stored (Forget)
}

// Access is the access record of u's view of h.
func (h Holdings) Access(u staff.User) Access {
	a := Access{ClinicID: u.ClinicID, StaffID: u.ID, Page: PagePatients}
	for _, b := range h.Bookings {
		a.Bookings = append(a.Bookings, b.ID)
	}
	for _, p := range h.Places {
		a.Waitlist = append(a.Waitlist, p.ID)
	}
	for _, m := range h.Messages {
		a.Messages = append(a.Messages, m.ID)
	}
	return a
}

// Empty says whether nothing at all is held.
func (h Holdings) Empty() bool {
	return len(h.Bookings) == 0 && len(h.Messages) == 0 && len(h.Places) == 0 && len(h.Audit) == 0 && h.Drafts == 0
}

// HeldBooking is one booking of the patient.
type HeldBooking struct {
	ID                   uuid.UUID
	Start, End           time.Time
	Type, Specialist     string
	Status               string
	Future               bool // confirmed and still to come: an erasure cancels it
	HasEmail, HasPhone   bool
	Attendance, Language string
	LateCancel           bool // cancelled by the patient inside the change deadline
}

// HeldMessage is one e-mail to the patient, sent or not.
type HeldMessage struct {
	ID        uuid.UUID
	Kind      string
	Status    string
	CreatedAt time.Time
	SentAt    *time.Time
}

// HeldPlace is one waitlist place of the patient.
type HeldPlace struct {
	ID       uuid.UUID
	Type     string
	From, To time.Time
	State    string
	JoinedAt time.Time
}

// HeldAudit is one audit row about the patient's bookings or places.
type HeldAudit struct {
	ID       int64
	At       time.Time
	Actor    string
	Action   string
	Entity   string
	EntityID string
}

// found are the rows of one patient, as stored.
type found struct {
	bookings []db.Booking
	places   []db.WaitlistEntry
	messages []db.Message
	audit    []db.AuditLog
	drafts   []draftSession
}

func (f found) empty() bool {
	return len(f.bookings) == 0 && len(f.places) == 0 && len(f.messages) == 0 && len(f.drafts) == 0
}

func (f found) bookingIDs() []uuid.UUID {
	ids := make([]uuid.UUID, len(f.bookings))
	for i, b := range f.bookings {
		ids[i] = b.ID
	}
	return ids
}

func (f found) placeIDs() []uuid.UUID {
	ids := make([]uuid.UUID, len(f.places))
	for i, e := range f.places {
		ids[i] = e.ID
	}
	return ids
}

func (f found) messageIDs() []uuid.UUID {
	ids := make([]uuid.UUID, len(f.messages))
	for i, m := range f.messages {
		ids[i] = m.ID
	}
	return ids
}

// details are the patient's details as written in the rows found: what
// must not be left anywhere.
func (f found) details() []string {
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	for _, b := range f.bookings {
		add(b.PatientName, b.PatientEmail, b.PatientPhone)
	}
	for _, e := range f.places {
		add(e.PatientName, e.PatientEmail, e.PatientPhone)
	}
	for _, m := range f.messages {
		add(m.Recipient)
	}
	return out
}

// Holdings finds the patient with this e-mail address or phone number
// (either may be empty, not both) at u's clinic and says what is held.
//
// Errors: FORBIDDEN (only admins), INVALID_ARGUMENT naming "email" when
// neither is given.
func (s *Service) Holdings(ctx context.Context, u staff.User, email, phone string) (Holdings, error) {
	if err := u.May(ActPatients); err != nil {
		return Holdings{}, err
	}
	q := db.New(s.cfg.Pool)
	p, err := PatientOf(ctx, q, u.ClinicID, email, phone)
	if err != nil {
		return Holdings{}, err
	}
	f, err := s.find(ctx, q, p, time.Time{})
	if err != nil {
		return Holdings{}, err
	}
	return s.describe(ctx, q, p, f)
}

// find reads every row of p's, made up to until (zero: whenever).
func (s *Service) find(ctx context.Context, q *db.Queries, p Patient, until time.Time) (found, error) {
	var f found
	var err error
	if f.bookings, err = Bookings(ctx, q, p); err != nil {
		return found{}, err
	}
	if f.places, err = q.PrivacyPatientPlaces(ctx, db.PrivacyPatientPlacesParams{ClinicID: p.ClinicID, EmailKey: p.EmailKey, PhoneKey: p.PhoneKey}); err != nil {
		return found{}, fmt.Errorf("patient's waitlist places: %w", err)
	}
	if !until.IsZero() {
		f.bookings = slices.DeleteFunc(f.bookings, func(b db.Booking) bool { return b.CreatedAt.After(until) })
		f.places = slices.DeleteFunc(f.places, func(e db.WaitlistEntry) bool { return e.JoinedAt.After(until) })
	}
	if f.messages, err = s.messagesOf(ctx, q, p, f, until); err != nil {
		return found{}, err
	}
	entryIDs := make([]string, len(f.places))
	for i, e := range f.places {
		entryIDs[i] = e.ID.String()
	}
	bookingIDs := make([]string, len(f.bookings))
	for i, b := range f.bookings {
		bookingIDs[i] = b.ID.String()
	}
	if f.audit, err = q.PrivacyAuditAbout(ctx, db.PrivacyAuditAboutParams{ClinicID: p.ClinicID, BookingIds: bookingIDs, EntryIds: entryIDs}); err != nil {
		return found{}, fmt.Errorf("audit rows about the patient: %w", err)
	}
	if f.drafts, err = s.drafts(ctx, q, p); err != nil {
		return found{}, err
	}
	return f, nil
}

// messagesOf are the messages about p's bookings and places, and the
// lists "find my booking" sent to p's address.
func (s *Service) messagesOf(ctx context.Context, q *db.Queries, p Patient, f found, until time.Time) ([]db.Message, error) {
	msgs, err := q.PrivacyMessagesAbout(ctx, db.PrivacyMessagesAboutParams{BookingIds: f.bookingIDs(), EntryIds: f.placeIDs()})
	if err != nil {
		return nil, fmt.Errorf("messages about the patient: %w", err)
	}
	if p.EmailKey == "" {
		return msgs, nil
	}
	lookups, err := q.PrivacyLookups(ctx, p.ClinicID)
	if err != nil {
		return nil, fmt.Errorf("lookups: %w", err)
	}
	var ids []uuid.UUID
	for _, l := range lookups {
		key := identity.EmailKey(l.Recipient)
		if l.RecipientKey.Valid && l.RecipientKey.String != "" {
			key = l.RecipientKey.String
		}
		if key == p.EmailKey && (until.IsZero() || !l.CreatedAt.After(until)) {
			ids = append(ids, l.ID)
		}
	}
	if len(ids) == 0 {
		return msgs, nil
	}
	more, err := q.PrivacyMessagesByID(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("lookups: %w", err)
	}
	return append(msgs, more...), nil
}

// describe shapes f for display.
func (s *Service) describe(ctx context.Context, q *db.Queries, p Patient, f found) (Holdings, error) {
	types, err := q.AppointmentTypeListByClinic(ctx, p.ClinicID)
	if err != nil {
		return Holdings{}, fmt.Errorf("types: %w", err)
	}
	specialists, err := q.SpecialistListByClinic(ctx, p.ClinicID)
	if err != nil {
		return Holdings{}, fmt.Errorf("specialists: %w", err)
	}
	typeName := map[uuid.UUID]string{}
	for _, t := range types {
		typeName[t.ID] = t.Name
	}
	specialistName := map[uuid.UUID]string{}
	for _, sp := range specialists {
		specialistName[sp.ID] = sp.Name
	}
	h := Holdings{Patient: p, Drafts: len(f.drafts), details: f.details()}
	now := time.Now()
	for _, b := range f.bookings {
		if !slices.Contains(h.Names, b.PatientName) {
			h.Names = append(h.Names, b.PatientName)
		}
		h.Bookings = append(h.Bookings, HeldBooking{
			ID: b.ID, Start: b.SlotStart, End: b.SlotEnd, Type: typeName[b.AppointmentTypeID], Specialist: specialistName[b.SpecialistID],
			Status: b.Status, Future: b.Status == "confirmed" && b.SlotStart.After(now),
			HasEmail: b.PatientEmail != "", HasPhone: b.PatientPhone != "", Attendance: b.Attendance, Language: b.Language, LateCancel: b.LateCancel,
		})
	}
	for _, e := range f.places {
		if !slices.Contains(h.Names, e.PatientName) {
			h.Names = append(h.Names, e.PatientName)
		}
		h.Places = append(h.Places, HeldPlace{ID: e.ID, Type: typeName[e.AppointmentTypeID], From: e.FromDate, To: e.ToDate, State: e.State, JoinedAt: e.JoinedAt})
	}
	for _, m := range f.messages {
		h.Messages = append(h.Messages, HeldMessage{ID: m.ID, Kind: m.Kind, Status: m.Status, CreatedAt: m.CreatedAt, SentAt: m.AcceptedAt})
	}
	for _, a := range f.audit {
		h.Audit = append(h.Audit, HeldAudit{ID: a.ID, At: a.At, Actor: a.Actor, Action: a.Action, Entity: a.Entity, EntityID: a.EntityID})
	}
	h.Others = f.others(p)
	return h, nil
}

// others are the addresses and numbers on f's bookings and places whose
// keys are not p's, one spelling per key.
func (f found) others(p Patient) []Contact {
	var out []Contact
	seen := map[string]bool{p.EmailKey: true, p.PhoneKey: true, "": true}
	add := func(email, emailKey, phone, phoneKey string) {
		if !seen[emailKey] && email != "" {
			seen[emailKey] = true
			out = append(out, Contact{Email: email})
		}
		if !seen[phoneKey] && phone != "" {
			seen[phoneKey] = true
			out = append(out, Contact{Phone: phone})
		}
	}
	for _, b := range f.bookings {
		add(b.PatientEmail, b.PatientEmailKey, b.PatientPhone, b.PatientPhoneKey)
	}
	for _, e := range f.places {
		add(e.PatientEmail, e.PatientEmailKey, e.PatientPhone, e.PatientPhoneKey)
	}
	return out
}
