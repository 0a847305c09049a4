package privacy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/db"
)

// The record of who looked: every staff page or fragment that shows
// patients' names or contacts writes one row naming the staff account,
// the time, the page and the bookings, waitlist places and e-mails it
// showed, by id only. It holds no patient detail.

// The pages a record names, in the words the admins' pages show.
const (
	PageCalendar      = "calendar"
	PageDayGrid       = "day grid"
	PageWeekView      = "week view"
	PageBooking       = "booking"
	PageBookingDialog = "booking dialog"
	PageMoveDialog    = "move dialog"
	PageSearch        = "search"
	PageDaySheet      = "day sheet"
	PageOutbox        = "outbox"
	PageAuditLog      = "audit log"
	PageWaitlist      = "waitlist"
	PageWaitlistOffer = "waitlist offer"
	PageExport        = "export"
	PagePatients      = "patients"
	PagePatientLookup = "patient look-up"
)

// Access is one view: who saw which bookings, waitlist places and
// e-mails, on which page. An e-mail stands for its booking or waitlist
// place as well (the record looks them up).
type Access struct {
	ClinicID uuid.UUID
	StaffID  uuid.UUID
	Page     string
	Bookings []uuid.UUID
	Waitlist []uuid.UUID
	Messages []uuid.UUID
}

// Shows says the view showed anything a record names.
func (a Access) Shows() bool {
	return len(a.Bookings)+len(a.Waitlist)+len(a.Messages) > 0
}

// RecordAccess writes a's record with q: one statement, one round trip.
// It needs no transaction with the read it records: a record of a page
// whose answer then failed says only that the page was asked for.
func RecordAccess(ctx context.Context, q *db.Queries, a Access) error {
	err := q.AccessRecordInsert(ctx, db.AccessRecordInsertParams{
		ClinicID: a.ClinicID, StaffID: a.StaffID, Page: a.Page,
		BookingIds: nonNil(a.Bookings), WaitlistIds: nonNil(a.Waitlist), MessageIds: nonNil(a.Messages),
	})
	if err != nil {
		return fmt.Errorf("record access: %w", err)
	}
	return nil
}

func nonNil(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}

// repeatWindow is how long the same account's same view of the same
// bookings counts as one: a page and the live stream it opens at once
// show the same bookings, as does a reload.
const repeatWindow = 10 * time.Second

// Recorder writes the records of the staff's views, synchronously: a
// page is answered only once its record is written, so no view goes
// unrecorded (a failed record fails the page). The same account's same
// view repeated within repeatWindow is written once, remembered in this
// process only (another instance writes its own).
type Recorder struct {
	pool *pgxpool.Pool
	now  func() time.Time

	mu     sync.Mutex
	window time.Duration
	recent map[[32]byte]time.Time

	written, repeats, failed atomic.Uint64
}

// RecordCounts are what a Recorder did with the views it was given.
type RecordCounts struct {
	Written uint64 // records written
	Repeats uint64 // views written once already within the repeat window
	Failed  uint64 // records that failed, and with them their pages
}

// Counts are what r did so far, for the metrics.
func (r *Recorder) Counts() RecordCounts {
	return RecordCounts{Written: r.written.Load(), Repeats: r.repeats.Load(), Failed: r.failed.Load()}
}

// NewRecorder makes the recorder and the admins' reads of the record.
func NewRecorder(pool *pgxpool.Pool) *Recorder {
	return &Recorder{pool: pool, now: time.Now, window: repeatWindow, recent: map[[32]byte]time.Time{}}
}

// SetRepeatWindow sets how long a repeated view counts as one (0: every
// view is written); the default is repeatWindow.
func (r *Recorder) SetRepeatWindow(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.window = d
}

// Record writes a's record unless it shows nothing or repeats one
// written within the repeat window.
func (r *Recorder) Record(ctx context.Context, a Access) error {
	if !a.Shows() {
		return nil
	}
	key := a.key()
	now := r.now()
	if r.seen(key, now) {
		r.repeats.Add(1)
		return nil
	}
	if err := RecordAccess(ctx, db.New(r.pool), a); err != nil {
		r.failed.Add(1)
		return err
	}
	r.written.Add(1)
	r.remember(key, now)
	return nil
}

// key names a view for repeatWindow: account, clinic, page and the ids
// in order.
func (a Access) key() [32]byte {
	h := sha256.New()
	h.Write(a.ClinicID[:])
	h.Write(a.StaffID[:])
	h.Write([]byte(a.Page))
	for _, ids := range [][]uuid.UUID{a.Bookings, a.Waitlist, a.Messages} {
		sorted := slices.Clone(ids)
		slices.SortFunc(sorted, func(x, y uuid.UUID) int { return bytes.Compare(x[:], y[:]) })
		h.Write([]byte{'|'})
		for _, id := range sorted {
			h.Write(id[:])
		}
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func (r *Recorder) seen(key [32]byte, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.recent[key]
	return ok && now.Sub(at) < r.window
}

// remember keeps key; the map is swept of old keys as it grows, so it
// holds about the views of the last repeatWindow.
func (r *Recorder) remember(key [32]byte, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.recent) >= 4096 {
		for k, at := range r.recent {
			if now.Sub(at) >= r.window {
				delete(r.recent, k)
			}
		}
	}
	r.recent[key] = now
}
