package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/config"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/platform/redisx"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/web"
)

// waitlistCancels is how many booked times the waitlist scenario frees.
const waitlistCancels = 60

// waitlistResult is how long freed times took to be offered.
type waitlistResult struct {
	cancels, offered int
	p50, p99, worst  time.Duration
	load             float64 // grid pages per second meanwhile
}

// waitlistScenario measures the time from a cancellation to the offer of
// its time to a waiting patient, while the server serves grid pages to 32
// connections. The cancellations are made by this process, wired as a
// second instance (bookings, holds, waitlist; it works no queue); the
// server's queue workers make the offers. Each of n booked times of one
// specialist has one patient waiting for that day; they are cancelled at
// ten a second. The figure is the offer's time less the opening's, both
// written by PostgreSQL clients on this machine's clock.
func waitlistScenario(ctx context.Context, pool *pgxpool.Pool, base string, n int) (waitlistResult, error) {
	rdb, err := redisx.Open(envOr("REDIS_URL", config.DefaultRedisURL), 0)
	if err != nil {
		return waitlistResult{}, err
	}
	defer rdb.Close()
	deps := app.Build(pool, rdb, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{}).Deps
	slug, typeID, week, err := setupStreamClinic(ctx, pool)
	if err != nil {
		return waitlistResult{}, err
	}
	var clinicID, specialistID uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT t.clinic_id, s.id FROM appointment_types t JOIN specialists s ON s.clinic_id = t.clinic_id WHERE t.id = $1`, typeID).Scan(&clinicID, &specialistID); err != nil {
		return waitlistResult{}, err
	}
	booked, err := fillForWaitlist(ctx, pool, deps, clinicID, typeID, specialistID, week, n)
	if err != nil {
		return waitlistResult{}, err
	}

	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var load float64
	wg.Add(1)
	go func() {
		defer wg.Done()
		load, _ = hammer(loadCtx, fmt.Sprintf("%s/c/%s/book/%s?week=%s", base, slug, typeID, week), 32, time.Duration(n)*100*time.Millisecond+2*time.Second)
	}()
	time.Sleep(time.Second) // the load is on
	for _, b := range booked {
		if _, _, err := deps.Bookings.Cancel(ctx, booking.CancelRequest{BookingID: b.ID, ClinicID: clinicID, Actor: "staff:bench", Reason: "bench"}); err != nil {
			stopLoad()
			wg.Wait()
			return waitlistResult{}, fmt.Errorf("cancel: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	res, err := offersOf(ctx, pool, clinicID, n)
	stopLoad()
	wg.Wait()
	res.load = load
	return res, err
}

// fillForWaitlist books n times of the specialist in the week (from the
// first day's 08:00 on, 30 minutes apart, over the days) and puts one
// patient on the list for each time's day, confirmed (an unconfirmed
// place is offered nothing).
func fillForWaitlist(ctx context.Context, pool *pgxpool.Pool, deps web.Deps, clinicID, typeID, specialistID uuid.UUID, week string, n int) ([]booking.Booking, error) {
	loc, _ := time.LoadLocation("Europe/Berlin")
	monday, _ := time.ParseInLocation(time.DateOnly, week, loc)
	var out []booking.Booking
	for i := range n {
		start := time.Date(monday.Year(), monday.Month(), monday.Day()+i%7, 8, 0, 0, 0, loc).Add(time.Duration(i/7) * 30 * time.Minute)
		c, err := deps.Bookings.Book(ctx, booking.BookRequest{
			AppointmentTypeID: typeID, SpecialistID: specialistID, Start: start, ClinicID: clinicID, End: start.Add(30 * time.Minute),
			Patient: booking.Patient{Name: "Booked", Email: fmt.Sprintf("booked%d@bench.test", i)}, ClientID: "bench", Actor: "staff:bench",
		})
		if err != nil {
			return nil, fmt.Errorf("book %s: %w", start, err)
		}
		out = append(out, c.Booking)
		day := start.Format(time.DateOnly)
		e, _, err := deps.Waitlist.Join(ctx, waitlist.JoinRequest{
			ClinicID: clinicID, AppointmentTypeID: typeID, From: day, To: day, ClientID: "bench",
			Patient: booking.Patient{Name: "Waiting", Email: fmt.Sprintf("waiting%d@bench.test", i)},
		})
		if err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
		if err := confirmPlace(ctx, pool, deps, clinicID, e.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// confirmPlace confirms a place as its patient does, from a link of the
// kind its e-mail carries (minted here: the bench reads no mail).
func confirmPlace(ctx context.Context, pool *pgxpool.Pool, deps web.Deps, clinicID, entryID uuid.UUID) error {
	token, err := secret.NewToken(32)
	if err != nil {
		return err
	}
	if err := db.New(pool).WaitlistLinkAdd(ctx, db.WaitlistLinkAddParams{TokenHash: secret.Hash(token), EntryID: entryID, Mailed: true}); err != nil {
		return fmt.Errorf("mint a place's link: %w", err)
	}
	if _, err := deps.Waitlist.Confirm(ctx, clinicID, token); err != nil {
		return fmt.Errorf("confirm: %w", err)
	}
	return nil
}

// offersOf waits (up to 30 s) for n openings of the clinic to be offered
// and returns the delays.
func offersOf(ctx context.Context, pool *pgxpool.Pool, clinicID uuid.UUID, n int) (waitlistResult, error) {
	r := waitlistResult{cancels: n}
	deadline := time.Now().Add(30 * time.Second)
	var delays []time.Duration
	for {
		rows, err := pool.Query(ctx, `SELECT extract(epoch FROM min(o.offered_at) - op.freed_at)
			FROM waitlist_openings op JOIN waitlist_offers o ON o.opening_id = op.id
			WHERE op.clinic_id = $1 GROUP BY op.id, op.clinic_id`, clinicID)
		if err != nil {
			return r, err
		}
		delays = delays[:0]
		for rows.Next() {
			var s float64
			if err := rows.Scan(&s); err != nil {
				return r, err
			}
			delays = append(delays, time.Duration(s*float64(time.Second)))
		}
		rows.Close()
		if len(delays) >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.offered = len(delays)
	if len(delays) == 0 {
		return r, fmt.Errorf("no freed time was offered within 30 s")
	}
	slices.Sort(delays)
	l := latencies{d: delays}
	r.p50, r.p99, r.worst = l.pct(50), l.pct(99), delays[len(delays)-1]
	if r.offered < n {
		fmt.Fprintf(os.Stderr, "loadgen: only %d of %d freed times were offered within 30 s\n", r.offered, n)
	}
	return r, nil
}
