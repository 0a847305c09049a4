// Package waitlist keeps the patients who wait for a fully booked type and
// offers them, one at a time and in order of joining, each time that
// becomes free.
//
// A place counts once confirmed: joining writes an e-mail whose link
// leads to a page with a Confirm button (a POST, which mail scanners that
// open links do not make), and until it is pressed the place is never
// offered a time; a place not confirmed within ConfirmWithin ends. A
// patient who passes an offered time on goes to the end of the list.
//
// A time becomes free when a booking is cancelled or moved away (or staff
// offer one by hand). If anyone waits for it, the change's own transaction
// records an opening and its first job, and the time is held (the same
// Redis hold a patient takes, owned by the opening) before the change
// commits: no page ever sees it free while it is offered. The job, run by
// one worker of the outbox's queue, offers the time to the first matching
// entry: it keeps the hold for the offer's life and a grace minute,
// records the offer, and writes its e-mail, in one transaction; the next
// job, scheduled at the offer's expiry, passes the time on. An accepted
// offer is a booking through the normal gate, which closes the offer in
// its transaction; after the last entry the hold is released and the time
// is free for everyone.
package waitlist

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/staff"
)

// DefaultOfferFor is how long an offer stands when Config says nothing.
const DefaultOfferFor = 15 * time.Minute

// ConfirmWithin is how long a place may wait for its patient to confirm
// it from the e-mailed link: a day gives a patient who joined in the
// evening the next morning, and a place joined in someone else's name
// leaves the list (and the address's one place per type) soon after.
const ConfirmWithin = 24 * time.Hour

// grace is how much longer than its offer an offer's hold lives: the job
// that passes the time on runs at the expiry, and until it has, the time
// stays held. A job that never runs (every process down) leaves the time
// held no longer than this past the offer.
const grace = time.Minute

// Parts of the day an entry may ask for, in the clinic's zone.
const (
	Morning   = "morning"   // before 12:00
	Afternoon = "afternoon" // 12:00 to 17:00
	Evening   = "evening"   // from 17:00
)

// The role table's actions for the list's staff side: seeing the list
// and offering a time from it is booking for a patient, taking someone
// off it is cancelling. Every method that acts for staff checks one first.
const (
	ActOffer  = staff.ActBook
	ActRemove = staff.ActCancel
)

// The parts' boundaries, as hours of the local day. PartOf is the one rule
// that reads them; the database's match of a freed time to a waiting
// patient is given them as parameters, so the two cannot disagree.
const (
	afternoonFromHour = 12
	eveningFromHour   = 17
)

// PartOf is the part of the day a local time falls in.
func PartOf(local time.Time) string {
	switch h := local.Hour(); {
	case h < afternoonFromHour:
		return Morning
	case h < eveningFromHour:
		return Afternoon
	}
	return Evening
}

// InParts says whether a local time falls in one of the parts of the day
// asked for (none asked: any time).
func InParts(local time.Time, parts []string) bool {
	return len(parts) == 0 || slices.Contains(parts, PartOf(local))
}

// States of an entry.
const (
	StateWaiting = "waiting"
	StateOffered = "offered"
	StateBooked  = "booked"
	StateLeft    = "left"
	StateRemoved = "removed"
	StateLapsed  = "lapsed"
)

// States of an offer.
const (
	OfferOpen      = "open"
	OfferAccepted  = "accepted"
	OfferDeclined  = "declined"
	OfferExpired   = "expired"
	OfferWithdrawn = "withdrawn"
)

// Config is how the waitlist offers.
type Config struct {
	// Outbox is the queue that runs the waitlist's jobs (see
	// Service.Jobs) and sends its e-mails; nil: no time is ever offered
	// and no e-mail written (tests of the list alone).
	Outbox *outbox.Outbox
	// OfferFor is how long a patient has to take an offered time
	// (WAITLIST_OFFER_MINUTES); 0 is DefaultOfferFor.
	OfferFor time.Duration
	Log      *slog.Logger
	// Bookable says whether a time is still among its type's bookable
	// times (hours, closures, notice), bookings aside; nil: only bookings
	// are looked at.
	Bookable func(ctx context.Context, b booking.Booking) (bool, error)
	// AfterHold, when set, runs in an offer's transaction once the time's
	// hold is taken and before the offer is written; an error fails the
	// transaction there, as a process dying at that point would. Fault
	// tests set it; the program leaves it nil.
	AfterHold func(ctx context.Context) error
}

// Openings is the waitlist's part in a booking's transaction (Enqueue, a
// booking.TxHook's After step), with the state the whole waitlist shares.
// It is made before the booking service that runs it; New then makes the
// whole waitlist around it, which books accepted offers through that
// service.
type Openings struct {
	pool   *pgxpool.Pool
	holds  *holds.Store
	outbox *outbox.Outbox
	cfg    Config
	log    *slog.Logger
	stats  Stats
}

// Service is the waitlist.
type Service struct {
	*Openings
	bookings *booking.Service
}

// Stats counts what the waitlist did since the process started.
type Stats struct {
	Joined, Offered, Accepted, Declined, Expired, Released atomic.Int64
	// Rebooked sums the time from a freed time to its booking through an
	// offer, in milliseconds, over Accepted offers.
	RebookedMillis atomic.Int64
}

// NewOpenings makes the waitlist's part in a booking's transaction, for
// the booking service's hooks and then New.
func NewOpenings(pool *pgxpool.Pool, hs *holds.Store, cfg Config) *Openings {
	if cfg.OfferFor <= 0 {
		cfg.OfferFor = DefaultOfferFor
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Openings{pool: pool, holds: hs, outbox: cfg.Outbox, cfg: cfg, log: cfg.Log}
}

// New makes the waitlist around its openings; an accepted offer is booked
// through bookings, whose transaction hooks should include the openings'
// Enqueue. Its jobs run in the outbox's queue (Jobs).
func New(o *Openings, bookings *booking.Service) *Service {
	return &Service{Openings: o, bookings: bookings}
}

// OfferFor is how long an offer stands.
func (s *Service) OfferFor() time.Duration { return s.cfg.OfferFor }

// Stats is what the waitlist did since the process started.
func (s *Service) Stats() *Stats { return &s.stats }

// Sizes are the list's sizes at one moment, every clinic's.
type Sizes struct {
	Waiting     int64 // confirmed places waiting without an offer
	Unconfirmed int64 // places waiting for their patient to confirm them
	Offered     int64 // offers standing
	Openings    int64 // freed times being offered
}

// Sizes is the list now, every clinic's: patients waiting, places not
// confirmed, offers standing, and freed times being offered.
func (s *Service) Sizes(ctx context.Context) (Sizes, error) {
	r, err := db.New(s.pool).WaitlistStats(ctx)
	if err != nil {
		return Sizes{}, fmt.Errorf("waitlist sizes: %w", err)
	}
	return Sizes{Waiting: r.Waiting, Unconfirmed: r.Unconfirmed, Offered: r.Offered, Openings: r.Openings}, nil
}

func (s *Openings) now() time.Time {
	if s.outbox != nil {
		return s.outbox.Now()
	}
	return time.Now()
}

// Entry is one patient's place in the list.
type Entry struct {
	ID, ClinicID, AppointmentTypeID uuid.UUID
	SpecialistID                    uuid.UUID // uuid.Nil: any specialist
	From, To                        time.Time // days, as dates at midnight UTC
	Times                           []string  // Morning, Afternoon, Evening; none: any time
	Patient                         booking.Patient
	Language                        string
	State                           string
	JoinedAt                        time.Time
	// ConfirmedAt is when the patient confirmed the place from its
	// e-mailed link; zero: not confirmed, and never offered a time.
	ConfirmedAt time.Time
	// ByMail, read by ByToken, says the link that opened the entry came in
	// an e-mail, so it can confirm the place.
	ByMail bool
	// Read with the entry for its pages and the staff's list.
	TypeName, SpecialistName string
	// TypeTexts are the type's name in other languages than TypeName's
	// (read for the patient's pages only).
	TypeTexts clinics.Translations
	Ahead     int // how many confirmed places for the type stand before it
	// The live offer to the entry, if any (the staff's list).
	OfferID    uuid.UUID
	OfferStart time.Time
	OfferUntil time.Time
}

// TypeIn is the entry's type as a page in lang names it.
func (e Entry) TypeIn(lang string) string { return e.TypeTexts.Name(lang, e.TypeName) }

// Confirmed says the patient confirmed the place: only then is it
// offered times.
func (e Entry) Confirmed() bool { return !e.ConfirmedAt.IsZero() }

// Offer is a time offered to an entry.
type Offer struct {
	ID, OpeningID, EntryID                    uuid.UUID
	ClinicID, AppointmentTypeID, SpecialistID uuid.UUID
	Start, End                                time.Time
	State                                     string
	OfferedAt, ExpiresAt                      time.Time
	BookingID                                 uuid.UUID
	HoldID                                    string
}

// holdOwner is the client id of an opening's hold.
func holdOwner(openingID uuid.UUID) string { return "waitlist:" + openingID.String() }
