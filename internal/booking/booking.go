// Package booking is the correctness gate: every confirmed booking, cancel
// and reschedule goes through here, in one transaction with its audit row.
// PostgreSQL's unique index and exclusion constraint decide who wins a slot;
// nothing here depends on Redis.
package booking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/idempotency"
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
	// LateCancel: the patient cancelled inside the change deadline.
	LateCancel bool      `json:"lateCancel,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
	Version    int32     `json:"version"`
	// Language is the language the patient booked in ("en", "de"; empty
	// when unknown, as for a booking made by staff): their e-mails use it.
	Language string `json:"-"`
	// SeriesID is the series the booking is a session of (uuid.Nil: none),
	// SeriesPosition its place in it, from 1.
	SeriesID       uuid.UUID `json:"seriesId,omitzero"`
	SeriesPosition int       `json:"seriesPosition,omitempty"`
	// ResourceID is the room or device the booking holds (uuid.Nil: its
	// type needs none), given by PostgreSQL as the booking is written:
	// known for a booking read back, not for one the one-statement gate
	// just wrote.
	ResourceID uuid.UUID `json:"-"`
}

// Patient is who the booking is for.
type Patient struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Phone string `json:"phone"`
}

// FromRow is a booking as stored, for a package that read it in a query
// of its own.
func FromRow(r db.Booking) Booking { return fromRow(r) }

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
		LateCancel:        r.LateCancel,
		RescheduledFrom:   r.RescheduledFrom.UUID,
		CancelReason:      r.CancelReason,
		CreatedAt:         r.CreatedAt.UTC(),
		Version:           r.Version,
		Language:          r.Language,
		SeriesID:          r.SeriesID.UUID,
		SeriesPosition:    int(r.SeriesPosition.Int32),
		ResourceID:        r.ResourceID.UUID,
	}
}

// Service books, cancels and reschedules.
type Service struct {
	pool      *pgxpool.Pool
	observers []Observer
	hooks     []TxHook
}

// TxHook is another package's part of a booking change, done in the
// change's own transaction: the change commits with what the hook wrote,
// or neither does. Before runs before the change writes the booking (a
// new booking's insert, a cancel's or a move's change of the old row),
// After once it is written, before the commit; either may be nil. An
// error of either rolls the change back and is returned by it, named by
// the hook.
//
// The patient's e-mails and the waitlist's openings are After hooks: they
// need the booking as written. Before is there for work that must not
// follow the insert, whose index entry then is the transaction's last lock.
//
// What a step may count on:
//   - Locks held when Before runs: for a new booking, the patient's lock
//     on the type (a patient's booking only) and the specialist's booking
//     lock, on both of Book's paths; for a move, the old booking's row and
//     the new time's specialist's lock; for a cancel, the booking's row.
//   - A step may run more than once for one change: either step again
//     when PostgreSQL aborts the transaction as a deadlock's victim (or
//     for a serialization failure), and, for a new booking, Before again
//     on the step-by-step path when the one-statement path wrote nothing
//     (the slot taken, a field wrong, a record under the idempotency key;
//     After runs only once the booking is written). Each run is in a new
//     transaction; the earlier one was rolled back with everything the
//     step wrote in it, but not with what it did outside the database (a
//     hold taken in Redis is still there), which must be safe to do again.
//
// Queue is the hook's After step in the form that lets a new booking be
// written in one batch (see Queue); a hook without it, or one whose Queue
// returns ErrNotQueued, has its After step run instead.
type TxHook struct {
	Name   string // what the hook does, for its errors: "e-mails", "waitlist"
	Before func(ctx context.Context, tx pgx.Tx, ch Change) error
	After  func(ctx context.Context, tx pgx.Tx, ch Change) error
	Queue  Queue
}

// Queue is a hook's part of a new booking that is written in one batch:
// the batch takes the patient's lock (a patient's booking), runs what the
// hooks queued on later, then the insert that takes the specialist's
// lock, then COMMIT, in one round trip, so that bookings of one
// specialist wait for each other for that round trip only.
//
// It runs in the booking's transaction tx before the batch is sent, with
// no lock of the booking's held, and is given the booking as it will be
// (with its id and its time of making). What it runs on tx runs at once
// (reads, and writes that refer to nothing of the booking, such as queue
// jobs); what it runs on later is only queued: Exec and QueryRow return
// nothing to read, SendBatch queues the batch's statements, Query is
// refused. A queued row may refer to the booking only through a foreign
// key checked at the commit (DEFERRABLE INITIALLY DEFERRED): it is
// written before the booking is. An error of a queued statement fails the
// booking, and a booking not written (the slot taken, a check failed)
// commits nothing of the batch nor of what was run on tx.
//
// It returns ErrNotQueued when it cannot take this form for ch: its After
// step then runs once the booking is written, and the batch does not end
// with COMMIT (the specialist's lock is then held over After's round
// trips). Like After, it may run more than once for one booking, each
// time in a new transaction.
type Queue func(ctx context.Context, tx pgx.Tx, later db.DBTX, ch Change) error

// ErrNotQueued is returned by a Queue that cannot write its part of ch
// in the batch: the hook's After step runs instead.
var ErrNotQueued = errors.New("booking: not queued, run After")

// Options are how New builds the service.
type Options struct {
	// TxHooks run in order in every change's transaction, each step of
	// each. Without any, a booking from a hold is one statement in one
	// round trip, and a change sends nothing. When none has a Before
	// step, a booking from a hold runs their Queue steps and is written
	// in one batch with what they queued.
	TxHooks []TxHook
}

// New makes the service with its transaction hooks.
func New(pool *pgxpool.Pool, o Options) *Service {
	return &Service{pool: pool, hooks: o.TxHooks}
}

// NewService makes the service without transaction hooks: its changes
// write nothing besides the bookings and their audit rows.
func NewService(pool *pgxpool.Pool) *Service { return New(pool, Options{}) }

// The kinds of Change.
const (
	ChangeConfirm    = "confirm"    // a new booking
	ChangeCancel     = "cancel"     // a booking cancelled
	ChangeReschedule = "reschedule" // a booking moved: Previous is the old one
)

// Change is a change of bookings: given to the transaction hooks inside
// its transaction, and told to observers once committed.
type Change struct {
	Kind string // ChangeConfirm, ChangeCancel or ChangeReschedule
	// Booking is the booking as it is now (for reschedule: the new one).
	// Before the write, the hooks' Before step is given it as it will be:
	// a new booking may not have its id, a cancelled one is still
	// confirmed.
	Booking  Booking
	Previous *Booking // for reschedule: the old booking, now rescheduled
	HoldID   string   // for confirm: the hold it came from, if any
	Actor    string   // who made it: ActorPatient or "staff:<id>"
	Reason   string   // for cancel and reschedule: the reason given, if any
	// Offer is, for confirm, the waitlist offer the booking takes up
	// (BookRequest.WaitlistOffer); uuid.Nil for any other booking.
	Offer uuid.UUID
	// Cooldown is, for confirm, the client's cooldown the booking starts
	// (BookRequest.Cooldown): the observer that spends the hold starts it.
	Cooldown time.Duration
	// Quiet is, for cancel, a change the patient is not told of: their
	// details are being erased, and nothing may be written to them.
	Quiet bool
	// Series is, for a confirm or a cancel that is one part of a change
	// of a whole series (BookSeries, CancelSeriesFrom), its place in that
	// change: the patient is told of the whole once, not of each part.
	Series SeriesStep
}

// hasBefore says whether any hook has a Before step.
func (s *Service) hasBefore() bool {
	for _, h := range s.hooks {
		if h.Before != nil {
			return true
		}
	}
	return false
}

// before runs every hook's Before step in tx.
func (s *Service) before(ctx context.Context, tx pgx.Tx, ch Change) error {
	for _, h := range s.hooks {
		if h.Before == nil {
			continue
		}
		if err := h.Before(ctx, tx, ch); err != nil {
			return fmt.Errorf("%s, before the booking is written: %w", h.Name, err)
		}
	}
	return nil
}

// after runs every hook's After step in tx.
func (s *Service) after(ctx context.Context, tx pgx.Tx, ch Change) error {
	for _, h := range s.hooks {
		if h.After == nil {
			continue
		}
		if err := h.After(ctx, tx, ch); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
	return nil
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
	// ResourceID, for a type that needs a room, is the room to take (the
	// one the booking's hold holds); the gate refuses the booking when
	// that room is not free (SLOT_TAKEN). uuid.Nil: the gate chooses.
	ResourceID uuid.UUID
	Start      time.Time
	End        time.Time // zero: Start plus the type's duration
	Patient    Patient
	ClientID   string
	HoldID     string // the hold it came from, if any: told to observers
	// WaitlistOffer is the waitlist offer this booking takes up, if any:
	// the waitlist's transaction hook closes it in the booking's
	// transaction, or refuses the booking when the offer is over.
	WaitlistOffer uuid.UUID
	// Cooldown, with HoldID, is how long the client may not hold this type
	// again once the booking is made: told to observers, which start it
	// with the spent hold. 0: none.
	Cooldown time.Duration
	// Actor is who is booking, for the audit row: ActorPatient or
	// "staff:<id>". A patient's booking is bound by the type's cooldown.
	Actor string
	// ClinicID, when set, scopes the request to one clinic (a staff member's).
	ClinicID uuid.UUID
	// Language is the patient's language for their e-mails ("en", "de";
	// anything else is kept as unknown).
	Language string
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
// e-mail address or the same phone number, in any spelling of it
// (identity.EmailKey, identity.PhoneKey), has a booking of the type made
// within the type's cooldown, whatever client made it: a confirmed one,
// or one the patient cancelled online less than CancelKeepsCooldown ago. The check runs under a transaction-scoped lock per
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
	s.notify(ctx, Change{Kind: ChangeConfirm, Booking: c.Booking, HoldID: req.HoldID, Actor: req.Actor, Offer: req.WaitlistOffer, Cooldown: req.Cooldown})
	return c, nil
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
