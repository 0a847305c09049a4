// Package booking is the correctness gate: every confirmed booking, cancel
// and reschedule goes through here, in one transaction with its audit row.
// PostgreSQL's unique index and exclusion constraint decide who wins a slot;
// nothing here depends on Redis.
package booking

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/idempotency"
	"github.com/clinic/booking/internal/textfield"
)

// Statuses of a booking. Only confirmed bookings hold a slot.
const (
	StatusConfirmed   = "confirmed"
	StatusCancelled   = "cancelled"
	StatusRescheduled = "rescheduled"
)

// Booking is a booking as the rest of the application sees it.
type Booking struct {
	ID                uuid.UUID `json:"id"`
	ClinicID          uuid.UUID `json:"clinicId"`
	AppointmentTypeID uuid.UUID `json:"appointmentTypeId"`
	SpecialistID      uuid.UUID `json:"specialistId"`
	Start             time.Time `json:"slotStartDate"`
	End               time.Time `json:"slotEndDate"`
	Status            string    `json:"status"`
	Patient           Patient   `json:"patient"`
	ClientID          string    `json:"-"`
	RescheduledFrom   uuid.UUID `json:"rescheduledFrom,omitzero"`
	CancelReason      string    `json:"cancelReason,omitempty"`
	CreatedAt         time.Time `json:"createdAt"`
	Version           int32     `json:"version"`
}

// Patient is who the booking is for.
type Patient struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Phone string `json:"phone"`
}

func fromRow(r db.Booking) Booking {
	return Booking{
		ID:                r.ID,
		ClinicID:          r.ClinicID,
		AppointmentTypeID: r.AppointmentTypeID,
		SpecialistID:      r.SpecialistID,
		Start:             r.SlotStart.UTC(),
		End:               r.SlotEnd.UTC(),
		Status:            r.Status,
		Patient:           Patient{Name: r.PatientName, Email: r.PatientEmail, Phone: r.PatientPhone},
		ClientID:          r.ClientID,
		RescheduledFrom:   r.RescheduledFrom.UUID,
		CancelReason:      r.CancelReason,
		CreatedAt:         r.CreatedAt.UTC(),
		Version:           r.Version,
	}
}

// Service books, cancels and reschedules.
type Service struct {
	pool      *pgxpool.Pool
	observers []Observer
}

func NewService(pool *pgxpool.Pool) *Service {
	return &Service{pool: pool}
}

// Change is a committed change of bookings, told to observers.
type Change struct {
	Kind     string   // "confirm", "cancel" or "reschedule"
	Booking  Booking  // the booking as it is now (for reschedule: the new one)
	Previous *Booking // for reschedule: the old booking, now rescheduled
	HoldID   string   // for confirm: the hold it came from, if any
}

// Observer hears of every committed change, after the commit: caches,
// bitmaps and live events follow the database, never lead it. Observers are
// best effort and must not fail the change.
type Observer func(ctx context.Context, ch Change)

// Observe adds an observer; call it while wiring, before serving.
func (s *Service) Observe(o Observer) { s.observers = append(s.observers, o) }

func (s *Service) notify(ctx context.Context, ch Change) {
	// The request may be cancelled the moment the client has its answer;
	// the follow-up work must still happen.
	ctx = context.WithoutCancel(ctx)
	for _, o := range s.observers {
		o(ctx, ch)
	}
}

// BookRequest asks for one confirmed booking.
type BookRequest struct {
	AppointmentTypeID uuid.UUID
	SpecialistID      uuid.UUID
	Start             time.Time
	End               time.Time // zero: Start plus the type's duration
	Patient           Patient
	ClientID          string
	HoldID            string // the hold it came from, if any: told to observers
	// Actor is who is booking, for the audit row: ActorPatient or
	// "staff:<id>". A patient's booking is bound by the type's cooldown.
	Actor string
	// ClinicID, when set, scopes the request to one clinic (a staff member's).
	ClinicID uuid.UUID
	// Remember, when set, stores the answer to an idempotent request with
	// the booking, in its transaction. A record the key already has makes
	// Book write nothing and return *idempotency.ReplayError.
	Remember *Remember

	// storedPatient: the patient's details come from a booking already
	// stored (a reschedule copies them) and are kept as they are, even if
	// they were written before today's rules for free text.
	storedPatient bool
}

// Remember is an idempotency key and how to render the answer stored
// under it.
type Remember struct {
	Key    idempotency.Key
	Encode func(Confirmation) (status int, body []byte, err error)
}

// Confirmation is a booking just made, with the private token of its manage
// link; only the token's hash is stored, so this is the one chance to read it.
type Confirmation struct {
	Booking     Booking
	ManageToken string
}

// ActorPatient is the Actor of a booking the patient makes themselves.
const ActorPatient = "patient"

// Book inserts a confirmed booking.
//
// A patient's booking (Actor ActorPatient) is refused while the same
// e-mail (case aside) or the same phone number (its digits) has a
// confirmed booking of the type made within the type's cooldown, whatever
// client made it. The check runs under a transaction-scoped lock per
// patient and type, so two bookings of one patient at once cannot both
// pass it. Staff bookings are not bound by it.
//
// Errors: INVALID_ARGUMENT (400, naming the field) for bad input, NOT_FOUND
// for an unknown appointment type, SLOT_TAKEN (409) when the specialist already
// has a confirmed booking at that start or overlapping it, COOLDOWN (429)
// for a patient's booking within the cooldown, *idempotency.ReplayError
// when Remember's key already has an answer.
func (s *Service) Book(ctx context.Context, req BookRequest) (Confirmation, error) {
	token, hash, err := newManageToken()
	if err != nil {
		return Confirmation{}, err
	}
	c, done, err := s.bookAtOnce(ctx, req, token, hash)
	if err != nil {
		return Confirmation{}, err
	}
	if !done {
		if c, err = s.bookStepByStep(ctx, req, token, hash); err != nil {
			return Confirmation{}, err
		}
	}
	s.notify(ctx, Change{Kind: "confirm", Booking: c.Booking, HoldID: req.HoldID})
	return c, nil
}

// bookAtOnce runs the gate as one statement (BookingCreate): one round
// trip instead of six, for a request that names its clinic and its end, as
// one made from a hold does. The booking, its audit row and the stored
// answer are built here first, so the statement only has to write them.
// done is false when nothing was written, for whatever reason (a field
// that is wrong, the type or specialist not bookable, the slot taken, a
// record under the idempotency key): the step-by-step gate then decides,
// with its own errors, so both paths answer alike.
func (s *Service) bookAtOnce(ctx context.Context, req BookRequest, token string, hash []byte) (c Confirmation, done bool, err error) {
	start, end := req.Start.UTC(), req.End.UTC()
	patient, perr := ValidatePatient(req.Patient)
	if req.ClinicID == uuid.Nil || req.AppointmentTypeID == uuid.Nil || req.SpecialistID == uuid.Nil || perr != nil ||
		start.IsZero() || !start.Truncate(time.Minute).Equal(start) || !end.After(start) ||
		(req.Remember != nil && req.Remember.Key.ClinicID != req.ClinicID) {
		return Confirmation{}, false, nil
	}
	b := Booking{
		ID: uuid.New(), ClinicID: req.ClinicID, AppointmentTypeID: req.AppointmentTypeID, SpecialistID: req.SpecialistID,
		Start: start, End: end, Status: StatusConfirmed, Patient: patient, ClientID: req.ClientID,
		// As PostgreSQL keeps it, so the stored answer and the audit row
		// read like the row.
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond),
		Version:   1,
	}
	c = Confirmation{Booking: b, ManageToken: token}
	row, err := audit.Row(auditEntry(req.Actor, "booking.create", nil, &b, ""))
	if err != nil {
		return c, false, err
	}
	p := db.BookingCreateParams{
		ID: b.ID, ClinicID: b.ClinicID, AppointmentTypeID: b.AppointmentTypeID, SpecialistID: b.SpecialistID,
		SlotStart: start, SlotEnd: end, PatientName: patient.Name, PatientEmail: patient.Email, PatientPhone: patient.Phone,
		ClientID: req.ClientID, ManageTokenHash: hash, CreatedAt: b.CreatedAt, Actor: row.Actor, AuditAfter: row.After,
	}
	if r := req.Remember; r != nil {
		status, body, err := r.Encode(c)
		if err != nil {
			return c, false, err
		}
		p.Remember = true
		p.Principal, p.Route, p.IdempotencyKey, p.RequestHash = r.Key.Principal, r.Key.Route, r.Key.Key, r.Key.RequestHash
		p.StatusCode, p.Body = int32(status), body
	}
	var n int64
	if req.Actor == ActorPatient {
		p.CheckCooldown = true
		n, err = s.createAsPatient(ctx, p)
	} else {
		n, err = db.New(s.pool).BookingCreate(ctx, p)
	}
	switch {
	case isSQLState(err, "23505", "23P01"):
		return c, false, nil
	case err != nil:
		return c, false, fmt.Errorf("insert booking: %w", err)
	}
	return c, n == 1, nil
}

// createAsPatient runs BookingCreate after BookingPatientLock, in one
// round trip: a batch runs as one implicit transaction, so the lock is
// held until the booking commits, and the insert, a later statement, sees
// every booking that the lock's previous holder committed.
func (s *Service) createAsPatient(ctx context.Context, p db.BookingCreateParams) (int64, error) {
	b := &pgx.Batch{}
	q := db.New(queue{b})
	_ = q.BookingPatientLock(ctx, db.BookingPatientLockParams{AppointmentTypeID: p.AppointmentTypeID, Email: p.PatientEmail, Phone: p.PatientPhone})
	_, _ = q.BookingCreate(ctx, p)
	br := s.pool.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return 0, err
	}
	var n int64
	if err := br.QueryRow().Scan(&n); err != nil {
		_ = br.Close()
		return 0, err
	}
	// Closing reads the end of the implicit transaction: the booking counts
	// only once it committed.
	return n, br.Close()
}

// queue is a db.DBTX that queues the generated statements on a batch
// instead of running them; their results are read from the batch.
type queue struct{ b *pgx.Batch }

func (q queue) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	q.b.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

func (q queue) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errors.New("booking: a batch queues no multi-row queries")
}

func (q queue) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	q.b.Queue(sql, args...)
	return queuedRow{}
}

type queuedRow struct{}

func (queuedRow) Scan(...any) error { return nil }

// lockPatient takes the patient's lock on the type (BookingPatientLock)
// for the rest of the transaction. Every path takes it before its insert,
// so two bookings never wait for each other's lock and row at once.
func lockPatient(ctx context.Context, q *db.Queries, p db.BookingInsertParams) error {
	if err := q.BookingPatientLock(ctx, db.BookingPatientLockParams{
		AppointmentTypeID: p.AppointmentTypeID, Email: p.PatientEmail, Phone: p.PatientPhone,
	}); err != nil {
		return fmt.Errorf("lock patient: %w", err)
	}
	return nil
}

// checkCooldown refuses a patient's booking b within the type's cooldown
// of another. Run under lockPatient, it sees a booking that a concurrent
// request committed: the check is a later statement than the lock.
func checkCooldown(ctx context.Context, q *db.Queries, b Booking) error {
	until, err := q.BookingPatientCooldownUntil(ctx, db.BookingPatientCooldownUntilParams{
		AppointmentTypeID: b.AppointmentTypeID, Email: b.Patient.Email, Phone: b.Patient.Phone, ExcludeID: b.ID,
	})
	if err != nil {
		return fmt.Errorf("check cooldown: %w", err)
	}
	rem := time.Until(until)
	if rem <= 0 {
		return nil
	}
	t, err := q.AppointmentTypeGet(ctx, b.AppointmentTypeID)
	if err != nil {
		return fmt.Errorf("load appointment type: %w", err)
	}
	return apperr.Cooldown(t.Name, rem)
}

// bookStepByStep is the gate in a transaction of single statements, which
// tells every way a booking can be refused apart.
func (s *Service) bookStepByStep(ctx context.Context, req BookRequest, token string, hash []byte) (Confirmation, error) {
	var b Booking
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		params, err := validate(ctx, q, req)
		if err != nil {
			return err
		}
		patient := req.Actor == ActorPatient
		if patient {
			if err := lockPatient(ctx, q, params); err != nil {
				return err
			}
		}
		params.ManageTokenHash = hash
		b, err = insert(ctx, q, params)
		if err != nil {
			return err
		}
		// After the insert, so a lost slot is told as such first.
		if patient {
			if err := checkCooldown(ctx, q, b); err != nil {
				return err
			}
		}
		if err := writeAudit(ctx, q, b.ClinicID, req.Actor, "booking.create", b.ID, nil, &b, ""); err != nil {
			return err
		}
		if r := req.Remember; r != nil {
			status, body, err := r.Encode(Confirmation{Booking: b, ManageToken: token})
			if err != nil {
				return err
			}
			rec, err := idempotency.Save(ctx, tx, r.Key, idempotency.Record{Status: status, Body: body})
			if err != nil {
				return err
			}
			if rec != nil {
				return &idempotency.ReplayError{Record: rec}
			}
		}
		return nil
	})
	if err != nil {
		return Confirmation{}, err
	}
	return Confirmation{Booking: b, ManageToken: token}, nil
}

// insert runs the gate: zero rows, a unique violation and an exclusion
// violation are all the same lost race to the user.
func insert(ctx context.Context, q *db.Queries, p db.BookingInsertParams) (Booking, error) {
	row, err := q.BookingInsert(ctx, p)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) || isSQLState(err, "23505", "23P01") {
			return Booking{}, apperr.SlotTaken()
		}
		return Booking{}, fmt.Errorf("insert booking: %w", err)
	}
	return fromRow(row), nil
}

func validate(ctx context.Context, q *db.Queries, req BookRequest) (db.BookingInsertParams, error) {
	if req.AppointmentTypeID == uuid.Nil {
		return db.BookingInsertParams{}, apperr.Invalidf("appointmentTypeId", "appointmentTypeId is required")
	}
	row, err := q.BookingTargetGet(ctx, db.BookingTargetGetParams{AppointmentTypeID: req.AppointmentTypeID, SpecialistID: req.SpecialistID})
	at := row.AppointmentType
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && req.ClinicID != uuid.Nil && at.ClinicID != req.ClinicID) {
		return db.BookingInsertParams{}, apperr.NotFoundf("appointmentTypeId", "No such appointment type.")
	}
	if err != nil {
		return db.BookingInsertParams{}, fmt.Errorf("load appointment type and specialist: %w", err)
	}
	switch {
	case req.SpecialistID == uuid.Nil:
		return db.BookingInsertParams{}, apperr.Invalidf("specialistId", "specialistId is required")
	case !row.SpecialistFound || !row.SameClinic:
		return db.BookingInsertParams{}, apperr.Invalidf("specialistId", "No such specialist at this clinic.")
	case !row.SpecialistActive:
		return db.BookingInsertParams{}, apperr.Invalidf("specialistId", "This specialist is not taking bookings.")
	case !row.Performs:
		return db.BookingInsertParams{}, apperr.Invalidf("specialistId", "This specialist does not perform %s.", at.Name)
	}

	start, end := req.Start.UTC(), req.End.UTC()
	duration := time.Duration(at.DurationMin) * time.Minute
	switch {
	case start.IsZero():
		return db.BookingInsertParams{}, apperr.Invalidf("slotStartDate", "slotStartDate is required")
	case !start.Truncate(time.Minute).Equal(start):
		return db.BookingInsertParams{}, apperr.Invalidf("slotStartDate", "slotStartDate must be on a whole minute")
	case req.End.IsZero():
		end = start.Add(duration)
	case !end.After(start):
		return db.BookingInsertParams{}, apperr.Invalidf("slotEndDate", "slotEndDate must be after slotStartDate")
	case end.Sub(start) != duration:
		return db.BookingInsertParams{}, apperr.Invalidf("slotEndDate",
			"%s takes %d minutes, but the slot given is %d minutes long", at.Name, at.DurationMin, int(end.Sub(start)/time.Minute))
	}

	p := req.Patient
	if !req.storedPatient {
		if p, err = ValidatePatient(req.Patient); err != nil {
			return db.BookingInsertParams{}, err
		}
	}
	return db.BookingInsertParams{
		ClinicID:          at.ClinicID,
		AppointmentTypeID: at.ID,
		SpecialistID:      req.SpecialistID,
		SlotStart:         start,
		SlotEnd:           end,
		PatientName:       p.Name,
		PatientEmail:      p.Email,
		PatientPhone:      p.Phone,
		ClientID:          req.ClientID,
	}, nil
}

// ValidatePatient trims the patient's details and names the first field that
// is wrong; textfield has the limits and the characters refused.
func ValidatePatient(p Patient) (Patient, error) {
	var nameErr, emailErr, phoneErr error
	p.Name, nameErr = textfield.PatientName.Check(p.Name)
	p.Email, emailErr = textfield.PatientEmail.Check(p.Email)
	p.Phone, phoneErr = textfield.PatientPhone.Check(p.Phone)
	switch {
	case nameErr != nil:
		return p, nameErr
	case p.Name == "":
		return p, apperr.Invalidf("patient.name", "Please enter your name.")
	case emailErr != nil:
		return p, emailErr
	case p.Email == "":
		return p, apperr.Invalidf("patient.email", "Please enter your e-mail address.")
	case !validEmail(p.Email):
		return p, apperr.Invalidf("patient.email", "That does not look like an e-mail address.")
	case phoneErr != nil:
		return p, phoneErr
	case !validPhone(p.Phone):
		return p, apperr.Invalidf("patient.phone", "A phone number has digits, spaces and + - ( ) only.")
	}
	return p, nil
}

func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && strings.Contains(s[strings.LastIndex(s, "@"):], ".")
}

func validPhone(s string) bool {
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune(" +-()./", r):
		default:
			return false
		}
	}
	return s == "" || digits >= 5
}

// CancelRequest cancels one booking.
type CancelRequest struct {
	BookingID uuid.UUID
	ClinicID  uuid.UUID // when set, a booking of another clinic is not found
	Actor     string
	Reason    string
}

// Cancel frees a booking's slot at once. Cancelling a booking that is no
// longer confirmed changes nothing and is not an error; changed says which.
//
// Errors: NOT_FOUND, INVALID_ARGUMENT (reason: see textfield.Reason).
func (s *Service) Cancel(ctx context.Context, req CancelRequest) (b Booking, changed bool, err error) {
	if req.Reason, err = textfield.Reason.Check(req.Reason); err != nil {
		return Booking{}, false, err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		old, err := lockBooking(ctx, q, req.BookingID, req.ClinicID)
		if err != nil {
			return err
		}
		if old.Status != StatusConfirmed {
			b = old
			return nil
		}
		b, err = setStatus(ctx, q, old.ID, StatusCancelled, req.Reason, true)
		if err != nil {
			return err
		}
		changed = true
		return writeAudit(ctx, q, b.ClinicID, req.Actor, "booking.cancel", b.ID, &old, &b, req.Reason)
	})
	if err == nil && changed {
		s.notify(ctx, Change{Kind: "cancel", Booking: b})
	}
	return b, changed, err
}

// RescheduleRequest moves a confirmed booking to another start, and
// optionally another specialist of the same type.
type RescheduleRequest struct {
	BookingID    uuid.UUID
	ClinicID     uuid.UUID
	Start        time.Time
	SpecialistID uuid.UUID // uuid.Nil: the same specialist
	Actor        string
	Reason       string
	// ExpectVersion, when set, is the version the caller saw (If-Match);
	// checked under the row lock, so two reschedules cannot both pass.
	ExpectVersion int32
}

// Reschedule cancels the old booking and inserts the new one in one
// transaction: when the new slot is taken, nothing changes. The manage link
// moves to the new booking.
//
// Errors: NOT_FOUND, BOOKING_NOT_ACTIVE (409), INVALID_ARGUMENT (reason as
// for Cancel, or the new time), SLOT_TAKEN.
func (s *Service) Reschedule(ctx context.Context, req RescheduleRequest) (Booking, error) {
	var err error
	if req.Reason, err = textfield.Reason.Check(req.Reason); err != nil {
		return Booking{}, err
	}
	var nb, prev Booking
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		old, err := lockBooking(ctx, q, req.BookingID, req.ClinicID)
		if err != nil {
			return err
		}
		if req.ExpectVersion != 0 && old.Version != req.ExpectVersion {
			return ErrVersionMismatch(old.Version)
		}
		if old.Status != StatusConfirmed {
			return apperr.New(apperr.Conflict, apperr.CodeBookingNotActive, "This booking was cancelled or moved and cannot be rescheduled.")
		}
		row, err := q.BookingGet(ctx, old.ID)
		if err != nil {
			return fmt.Errorf("load booking: %w", err)
		}
		specialist := req.SpecialistID
		if specialist == uuid.Nil {
			specialist = old.SpecialistID
		}
		params, err := validate(ctx, q, BookRequest{
			AppointmentTypeID: old.AppointmentTypeID,
			SpecialistID:      specialist,
			Start:             req.Start,
			Patient:           old.Patient,
			ClientID:          old.ClientID,
			storedPatient:     true,
		})
		if err != nil {
			return err
		}
		if prev, err = setStatus(ctx, q, old.ID, StatusRescheduled, req.Reason, false); err != nil {
			return err
		}
		params.ManageTokenHash = row.ManageTokenHash
		params.RescheduledFrom = uuid.NullUUID{UUID: old.ID, Valid: true}
		nb, err = insert(ctx, q, params)
		if err != nil {
			return err
		}
		return writeAudit(ctx, q, nb.ClinicID, req.Actor, "booking.reschedule", old.ID, &old, &nb, req.Reason)
	})
	if err != nil {
		return Booking{}, err
	}
	s.notify(ctx, Change{Kind: "reschedule", Booking: nb, Previous: &prev})
	return nb, nil
}

// ErrVersionMismatch is a stale If-Match or form version.
func ErrVersionMismatch(current int32) *apperr.Error {
	return &apperr.Error{
		Kind: apperr.PreconditionFailed, Code: apperr.CodeConcurrencyConflict,
		Message: "This booking changed since you loaded it. Reload it and try again.",
		Details: map[string]any{"currentVersion": current},
	}
}

func lockBooking(ctx context.Context, q *db.Queries, id, clinicID uuid.UUID) (Booking, error) {
	row, err := q.BookingGetForUpdate(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && clinicID != uuid.Nil && row.ClinicID != clinicID) {
		return Booking{}, apperr.NotFoundf("bookingId", "No such booking.")
	}
	if err != nil {
		return Booking{}, fmt.Errorf("lock booking: %w", err)
	}
	return fromRow(row), nil
}

func setStatus(ctx context.Context, q *db.Queries, id uuid.UUID, status, reason string, keepToken bool) (Booking, error) {
	row, err := q.BookingSetStatus(ctx, db.BookingSetStatusParams{
		ID: id, Status: status, CancelReason: reason, KeepToken: keepToken,
	})
	if err != nil {
		return Booking{}, fmt.Errorf("set booking status: %w", err)
	}
	return fromRow(row), nil
}

func writeAudit(ctx context.Context, q *db.Queries, clinicID uuid.UUID, actor, action string, id uuid.UUID, before, after *Booking, reason string) error {
	e := auditEntry(actor, action, before, after, reason)
	e.ClinicID, e.EntityID = clinicID, id.String()
	return audit.Write(ctx, q, e)
}

// auditEntry is the audit entry of a booking change; the single-statement
// gate fills in the clinic and the booking's id itself.
func auditEntry(actor, action string, before, after *Booking, reason string) audit.Entry {
	return audit.Entry{Actor: actor, Action: action, Entity: "booking", Before: before, After: after, Reason: reason}
}

// ByManageToken finds the booking a manage link points at.
//
// Errors: NOT_FOUND.
func (s *Service) ByManageToken(ctx context.Context, token string) (Booking, error) {
	row, err := db.New(s.pool).BookingGetByTokenHash(ctx, HashToken(token))
	if errors.Is(err, pgx.ErrNoRows) {
		return Booking{}, apperr.NotFoundf("", "This link is not valid (any more).")
	}
	if err != nil {
		return Booking{}, fmt.Errorf("find booking by token: %w", err)
	}
	return fromRow(row), nil
}

// Get finds a booking by id, scoped to a clinic when clinicID is set.
func (s *Service) Get(ctx context.Context, id, clinicID uuid.UUID) (Booking, error) {
	row, err := db.New(s.pool).BookingGet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && clinicID != uuid.Nil && row.ClinicID != clinicID) {
		return Booking{}, apperr.NotFoundf("bookingId", "No such booking.")
	}
	if err != nil {
		return Booking{}, fmt.Errorf("get booking: %w", err)
	}
	return fromRow(row), nil
}

func newManageToken() (token string, hash []byte, err error) {
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", nil, fmt.Errorf("manage token: %w", err)
	}
	token = base64.RawURLEncoding.EncodeToString(buf)
	return token, HashToken(token), nil
}

// HashToken is how manage tokens are stored: a leaked table does not leak links.
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

func isSQLState(err error, codes ...string) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	for _, c := range codes {
		if pgErr.Code == c {
			return true
		}
	}
	return false
}
