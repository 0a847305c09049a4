package waitlist_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// rig is a clinic and one server's services over the shared PostgreSQL
// and Redis: bookings, holds, the outbox (keeping e-mails, its queue not
// worked: tests run the offer steps themselves) and the waitlist, all on
// one clock.
type rig struct {
	pool   *pgxpool.Pool
	rdb    redis.UniversalClient
	clinic testkit.Clinic
	loc    *time.Location
	clock  *testkit.Clock
	queue  string
	*instance
}

// instance is what one serve process has.
type instance struct {
	bookings *booking.Service
	holds    *holds.Store
	outbox   *outbox.Outbox
	waitlist *waitlist.Service
}

func newRig(t *testing.T) *rig {
	t.Helper()
	pool := testkit.DB(t)
	r := &rig{pool: pool, rdb: testkit.Redis(t), clock: &testkit.Clock{}, queue: "wl_" + strings.ReplaceAll(uuid.NewString(), "-", "")}
	r.clinic = testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	loc, err := time.LoadLocation(r.clinic.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	r.loc = loc
	r.instance = r.newInstance(t)
	return r
}

// newInstance is another serve process on the same databases.
func (r *rig) newInstance(t *testing.T) *instance {
	t.Helper()
	return r.newInstanceOn(t, r.clock)
}

// newInstanceOn is another serve process whose time is clock's.
func (r *rig) newInstanceOn(t *testing.T, clock *testkit.Clock) *instance {
	t.Helper()
	in := &instance{holds: holds.NewStore(r.rdb, 0, nil)}
	ob, err := outbox.New(r.pool, outbox.Config{PublicURL: "http://clinic.test", Clock: clock, Queue: r.queue})
	if err != nil {
		t.Fatal(err)
	}
	in.outbox = ob
	openings := waitlist.NewOpenings(r.pool, in.holds, waitlist.Config{Outbox: ob})
	in.bookings = booking.New(r.pool, booking.Options{TxHooks: []booking.TxHook{
		{Name: "e-mails", After: ob.Enqueue},
		{Name: "waitlist", After: openings.Enqueue},
	}})
	in.waitlist = waitlist.New(openings, in.bookings)
	co := checkout.New(r.pool, in.holds, nil, in.bookings, slog.New(slog.DiscardHandler), checkout.Limits{})
	in.bookings.Observe(co.OnBookingChange)
	return in
}

// at is a wall-clock time in the clinic's zone, days from today.
func (r *rig) at(days, hour, minute int) time.Time {
	d := time.Now().In(r.loc).AddDate(0, 0, days)
	return time.Date(d.Year(), d.Month(), d.Day(), hour, minute, 0, 0, r.loc)
}

func (r *rig) book(t *testing.T, start time.Time, email string) booking.Confirmation {
	t.Helper()
	c, err := r.bookings.Book(context.Background(), booking.BookRequest{
		AppointmentTypeID: r.clinic.Types[0].ID, SpecialistID: r.clinic.Specialists[0].ID, Start: start,
		Patient: booking.Patient{Name: "Ada Patient", Email: email}, Actor: booking.ActorPatient, Language: "en",
	})
	if err != nil {
		t.Fatalf("book %s: %v", start, err)
	}
	return c
}

func (r *rig) cancel(t *testing.T, b booking.Booking) {
	t.Helper()
	if _, _, err := r.bookings.Cancel(context.Background(), booking.CancelRequest{BookingID: b.ID, Actor: "staff:test", Reason: "ill"}); err != nil {
		t.Fatal(err)
	}
}

// join puts email on the list for the first type, for the days around
// start, and confirms the place as its patient would from the e-mail.
func (r *rig) join(t *testing.T, email string, start time.Time) waitlist.Entry {
	t.Helper()
	e := r.joinUnconfirmed(t, email, start)
	r.confirm(t, e.ID)
	return e
}

// joinUnconfirmed is join without the confirmation: a place typed in by
// someone who does not read the address's mail.
func (r *rig) joinUnconfirmed(t *testing.T, email string, start time.Time) waitlist.Entry {
	t.Helper()
	day := start.In(r.loc).Format(time.DateOnly)
	e, _, err := r.waitlist.Join(context.Background(), waitlist.JoinRequest{
		ClinicID: r.clinic.ID, AppointmentTypeID: r.clinic.Types[0].ID, From: day, To: day,
		Patient: booking.Patient{Name: "Waiting Patient", Email: email}, ClientID: "c-" + email, Language: "en",
	})
	if err != nil {
		t.Fatalf("join %s: %v", email, err)
	}
	// Joined in this order: the next joins a moment later.
	time.Sleep(2 * time.Millisecond)
	return e
}

// mailedLink mints a link to the entry's place as its e-mail carries one
// (the outbox mints them when it sends), and returns its token.
func (r *rig) mailedLink(t *testing.T, entry uuid.UUID) string {
	t.Helper()
	token := "m" + strings.ReplaceAll(uuid.NewString(), "-", "")
	_, err := r.pool.Exec(context.Background(), `INSERT INTO waitlist_links (token_hash, entry_id, mailed, clinic_id)
		SELECT sha256($1::bytea), id, true, clinic_id FROM waitlist_entries WHERE id = $2`, []byte(token), entry)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// confirm confirms the entry's place from a link of its e-mail.
func (r *rig) confirm(t *testing.T, entry uuid.UUID) {
	t.Helper()
	if _, err := r.waitlist.Confirm(context.Background(), r.clinic.ID, r.mailedLink(t, entry)); err != nil {
		t.Fatalf("confirm %s: %v", entry, err)
	}
}

// opening is the id of the one opening of the time start.
func (r *rig) opening(t *testing.T, start time.Time) (id uuid.UUID, holdID string) {
	t.Helper()
	err := r.pool.QueryRow(context.Background(),
		`SELECT id, hold_id FROM waitlist_openings WHERE clinic_id = $1 AND slot_start = $2`, r.clinic.ID, start).Scan(&id, &holdID)
	if err != nil {
		t.Fatalf("the opening of %s: %v", start, err)
	}
	return id, holdID
}

// offerOf is the state of an entry's offers, oldest first, as "state,...".
func (r *rig) offersOf(t *testing.T, entry uuid.UUID) string {
	t.Helper()
	rows, err := r.pool.Query(context.Background(), `SELECT state FROM waitlist_offers WHERE entry_id = $1 ORDER BY offered_at`, entry)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

func (r *rig) entryState(t *testing.T, id uuid.UUID) string {
	t.Helper()
	var s string
	if err := r.pool.QueryRow(context.Background(), `SELECT state FROM waitlist_entries WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// offerToken mints a link to the entry's open offer, as its e-mail would.
func (r *rig) offerToken(t *testing.T, entry uuid.UUID) string {
	t.Helper()
	token := "t" + strings.ReplaceAll(uuid.NewString(), "-", "")
	_, err := r.pool.Exec(context.Background(), `INSERT INTO waitlist_links (token_hash, entry_id, offer_id, clinic_id)
		SELECT sha256($1::bytea), entry_id, id, clinic_id FROM waitlist_offers WHERE entry_id = $2 AND state = 'open'`, []byte(token), entry)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func (r *rig) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := r.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// messages counts the clinic's e-mails of a kind to an address.
func (r *rig) messages(t *testing.T, kind, to string) int {
	return r.count(t, `SELECT count(*) FROM messages WHERE clinic_id = $1 AND kind = $2 AND recipient = $3`, r.clinic.ID, kind, to)
}

// delivered marks the offer e-mails to an address as accepted by the mail
// server (the rig's queue sends nothing by itself).
func (r *rig) delivered(t *testing.T, to string) {
	t.Helper()
	if _, err := r.pool.Exec(context.Background(), `UPDATE messages SET status = 'sent'
		WHERE clinic_id = $1 AND kind = 'waitlist_offer' AND recipient = $2`, r.clinic.ID, to); err != nil {
		t.Fatal(err)
	}
}

// heldBy is the client id holding start for the first type and specialist, or "".
func (r *rig) heldBy(t *testing.T, start time.Time) string {
	t.Helper()
	h, ok, err := r.holds.HeldBy(context.Background(), r.clinic.ID, r.clinic.Types[0].ID, r.clinic.Specialists[0].ID, start)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return ""
	}
	return h.ClientID
}

func owner(opening uuid.UUID) string { return fmt.Sprintf("waitlist:%s", opening) }
