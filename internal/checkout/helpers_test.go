package checkout_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/testkit"
)

// env is one test's services on the shared test PostgreSQL and Redis,
// with a clinic of the test's own.
type env struct {
	t *testing.T
	services
	pool   *pgxpool.Pool
	rdb    redis.UniversalClient
	clinic testkit.Clinic
	loc    *time.Location
}

// services are the checkout service and what it is built on.
type services struct {
	co       *checkout.Service
	holds    *holds.Store
	slots    *slots.Service
	bookings *booking.Service
}

// wire connects the services as app.Build does for the patient flow: the
// slot cache and bitmap, then the checkout's events and cooldowns, follow
// every committed booking change. (Not app.Build itself, so these tests do
// not depend on the web package.) ttl 0 is the holds default. between
// are observers that hear of each change after the slot cache and bitmap
// and before the checkout: a test can stop a confirm after its booking is
// committed and marked, before its hold is spent and announced.
func wire(pool *pgxpool.Pool, rdb redis.UniversalClient, ttl time.Duration, between ...booking.Observer) services {
	bookings := booking.NewService(pool)
	store := holds.NewStore(rdb, ttl, quietLogger)
	slotSvc := slots.New(pool, rdb, slots.Options{Holds: store, Logger: quietLogger})
	co := checkout.New(pool, store, slotSvc, bookings, quietLogger, checkout.Limits{})
	if len(between) == 0 {
		// As the server wires them.
		bookings.Observe(co.FollowBooking)
		return services{co: co, holds: store, slots: slotSvc, bookings: bookings}
	}
	bookings.Observe(slotSvc.OnBookingChange)
	for _, o := range between {
		bookings.Observe(o)
	}
	bookings.Observe(co.OnBookingChange)
	return services{co: co, holds: store, slots: slotSvc, bookings: bookings}
}

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// newEnv wires the services with the given hold TTL (0: the default) and
// creates a clinic shaped by o.
func newEnv(t *testing.T, ttl time.Duration, o testkit.ClinicOptions) *env {
	t.Helper()
	pool := testkit.DB(t)
	rdb := testkit.Redis(t)
	c := testkit.NewClinic(t, pool, o)
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, services: wire(pool, rdb, ttl), pool: pool, rdb: rdb, clinic: c, loc: loc}
	t.Cleanup(func() { forgetHolds(rdb, c.ID) })
	return e
}

// forgetHolds releases what a test's clinic still holds and unregisters the
// clinic from the sweeper's set, so runs do not pile up in the shared Redis.
func forgetHolds(rdb redis.UniversalClient, clinicID uuid.UUID) {
	ctx := context.Background()
	s := holds.NewStore(rdb, 0, quietLogger)
	if active, err := s.Active(ctx, clinicID); err == nil {
		for _, h := range active {
			_, _ = s.Release(ctx, h.HoldID, h.ClientID)
		}
	}
	_, _ = s.SweepClinic(ctx, clinicID)
	rdb.SRem(ctx, "holds:clinics", clinicID.String()) // the key the holds package documents
}

// monday is next week's (or later) Monday at hh:mm clinic time: a real slot
// of a 30-minute type for every testkit specialist.
func (e *env) monday(hh, mm int) time.Time {
	return testkit.NextWeekday(time.Now(), e.loc, time.Monday, hh, mm).UTC()
}

// tuesday is the day after monday.
func (e *env) tuesday(hh, mm int) time.Time {
	return testkit.NextWeekday(time.Now(), e.loc, time.Tuesday, hh, mm).UTC()
}

func (e *env) typeID(i int) uuid.UUID { return e.clinic.Types[i].ID }

func (e *env) specialist(i int) uuid.UUID { return e.clinic.Specialists[i].ID }

func newClient() string { return "client-" + uuid.NewString() }

var patient = booking.Patient{Name: "Ada Lovelace", Email: "ada@example.com", Phone: "+49 30 1234567"}

// patientOf is a patient of the client's own: the cooldown binds a
// patient's e-mail and phone, so tests where several clients book one
// type need several patients.
func patientOf(client string) booking.Patient {
	return booking.Patient{Name: "Ada Lovelace", Email: client + "@example.com"}
}

// hold must succeed.
func (e *env) hold(typeID uuid.UUID, start time.Time, specialist uuid.UUID, client string) holds.Hold {
	e.t.Helper()
	h, err := e.co.Hold(e.t.Context(), checkout.HoldRequest{
		AppointmentTypeID: typeID, Start: start, SpecialistID: specialist, ClientID: client,
	})
	if err != nil {
		e.t.Fatalf("hold %s for %s: %v", start, client, err)
	}
	return h
}

// tryHold returns what Hold returns.
func (e *env) tryHold(typeID uuid.UUID, start time.Time, client string) (holds.Hold, error) {
	return e.co.Hold(e.t.Context(), checkout.HoldRequest{AppointmentTypeID: typeID, Start: start, ClientID: client})
}

// confirm books a hold without an idempotency key.
func (e *env) confirm(h holds.Hold, typeID uuid.UUID, client string) (booking.Confirmation, error) {
	e.t.Helper()
	res, err := e.co.Confirm(e.t.Context(), checkout.ConfirmRequest{
		AppointmentTypeID: typeID, HoldID: h.HoldID, ClientID: client, Patient: patientOf(client),
	})
	return res.Confirmation, err
}

// mustConfirm books the hold for its owner.
func (e *env) mustConfirm(h holds.Hold) booking.Confirmation {
	e.t.Helper()
	c, err := e.confirm(h, h.AppointmentTypeID, h.ClientID)
	if err != nil {
		e.t.Fatalf("confirm %s: %v", h.HoldID, err)
	}
	return c
}

// confirmedAt counts the confirmed bookings of a specialist at a start.
func (e *env) confirmedAt(specialist uuid.UUID, start time.Time) int64 {
	e.t.Helper()
	n, err := db.New(e.pool).BookingCountConfirmedAt(context.Background(), db.BookingCountConfirmedAtParams{
		SpecialistID: specialist, SlotStart: start,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// active lists the clinic's live holds.
func (e *env) active() []holds.Hold {
	e.t.Helper()
	hs, err := e.holds.Active(context.Background(), e.clinic.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return hs
}

// wantCode asserts an *apperr.Error with this code and kind.
func wantCode(t *testing.T, err error, code string, kind apperr.Kind) *apperr.Error {
	t.Helper()
	ae := apperr.As(err)
	if ae == nil || ae.Code != code || ae.Kind != kind {
		t.Fatalf("got error %v, want %s (kind %d)", err, code, kind)
	}
	return ae
}

// events collects hold events from one pub/sub channel.
type events struct {
	t  *testing.T
	ch <-chan *redis.Message
}

func subscribe(t *testing.T, rdb redis.UniversalClient, channel string) *events {
	t.Helper()
	ps := rdb.Subscribe(context.Background(), channel)
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(t.Context()); err != nil { // the subscription's confirmation
		t.Fatalf("subscribe %s: %v", channel, err)
	}
	return &events{t: t, ch: ps.Channel()}
}

// until collects events until stop says so or timeout passes.
func (s *events) until(timeout time.Duration, stop func([]holds.Event) bool) []holds.Event {
	s.t.Helper()
	var out []holds.Event
	deadline := time.After(timeout)
	for !stop(out) {
		select {
		case m := <-s.ch:
			var ev holds.Event
			if err := json.Unmarshal([]byte(m.Payload), &ev); err != nil {
				s.t.Fatalf("event %q: %v", m.Payload, err)
			}
			out = append(out, ev)
		case <-deadline:
			return out
		}
	}
	return out
}

// releases filters release events of one hold with a reason.
func releases(evs []holds.Event, holdID, reason string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == holds.EventRelease && ev.HoldID == holdID && ev.Reason == reason {
			n++
		}
	}
	return n
}
