package web_test

// Tests of the waitlist's metrics on /metrics: the list's size now, the
// offers made, taken and run out, the time from a cancellation to the
// booking of its time, and no patient data.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/waitlist"
)

// shiftClock is the queue's and the waitlist's time: the real one moved
// on by what a test adds.
type shiftClock struct {
	mu    sync.Mutex
	shift time.Duration
}

func (c *shiftClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.shift)
}

func (c *shiftClock) NowOrNil() *time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shift == 0 {
		return nil
	}
	t := time.Now().Add(c.shift)
	return &t
}

func (c *shiftClock) add(d time.Duration) {
	c.mu.Lock()
	c.shift += d
	c.mu.Unlock()
}

// wlSeries are the waitlist's series a test follows, by a short name.
var wlSeries = map[string]string{
	"waiting":     `clinic_waitlist_entries{state="waiting"}`,
	"unconfirmed": `clinic_waitlist_entries{state="unconfirmed"}`,
	"offered":     `clinic_waitlist_entries{state="offered"}`,
	"openings":    `clinic_waitlist_openings_open`,
	"joined":      `clinic_waitlist_joined_total`,
	"made":        `clinic_waitlist_offers_total{outcome="made"}`,
	"accepted":    `clinic_waitlist_offers_total{outcome="accepted"}`,
	"declined":    `clinic_waitlist_offers_total{outcome="declined"}`,
	"expired":     `clinic_waitlist_offers_total{outcome="expired"}`,
	"released":    `clinic_waitlist_released_total`,
	"rebooked":    `clinic_waitlist_rebooked_total`,
}

// wantWaitlistMetrics waits until /metrics shows every series of
// wlSeries at its value in want (absent: 0) and returns the text.
func wantWaitlistMetrics(t *testing.T, a *app, step string, want map[string]float64) string {
	t.Helper()
	deadline := time.Now().Add(mailWait)
	for {
		text := a.metricsText(t)
		var wrong []string
		for name, series := range wlSeries {
			if v, ok := metricValue(t, text, series); !ok || v != want[name] {
				wrong = append(wrong, fmt.Sprintf("%s = %v (present %v), want %v", series, v, ok, want[name]))
			}
		}
		if len(wrong) == 0 {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s:\n%s", step, strings.Join(wrong, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// offerLinkOf mints a link to the entry's open offer, as its e-mail does.
func offerLinkOf(t *testing.T, a *app, entry uuid.UUID) string {
	t.Helper()
	var offer uuid.UUID
	if err := a.Pool.QueryRow(context.Background(), `SELECT id FROM waitlist_offers WHERE entry_id = $1 AND state = 'open'`, entry).Scan(&offer); err != nil {
		t.Fatalf("the entry's open offer: %v", err)
	}
	token, err := secret.NewToken(32)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.New(a.Pool).WaitlistLinkAdd(context.Background(), db.WaitlistLinkAddParams{
		TokenHash: secret.Hash(token), EntryID: entry, OfferID: uuid.NullUUID{UUID: offer, Valid: true},
	}); err != nil {
		t.Fatal(err)
	}
	return token
}

// A join, a cancellation offered and taken, and one offered and run out
// move the waitlist's series; none names a patient or the clinic.
func TestWaitlistMetricsFollowTheList(t *testing.T) {
	t.Parallel()
	clk := &shiftClock{}
	// A database of its own: the sizes count every clinic's list.
	a := newApp(t, withPool(freshPool(t)), withOptions(program.Options{Mail: program.MailOptions{
		Workers: 2, Retry: fastRetry, Queue: ownQueue(), Clock: clk,
	}}))
	c := a.deskClinic(t)
	ctx := context.Background()
	first, second := c.Next(time.Wednesday, 10, 0), c.Next(time.Wednesday, 11, 0)
	want := map[string]float64{}
	wantWaitlistMetrics(t, a, "nothing", want)

	taker := a.wlJoin(t, c, c.Types[0], first, first, "Nora Waiting")
	want["waiting"], want["joined"] = 1, 1
	wantWaitlistMetrics(t, a, "a join", want)

	freeUp := func(start time.Time) {
		t.Helper()
		conf := a.bookAs(t, c, c.Types[0], c.Specialists[0].ID, start, booking.Patient{Name: "Otto Booked", Email: "otto-" + uuid.NewString()[:8] + "@example.org"})
		if _, _, err := a.Deps.Bookings.Cancel(ctx, booking.CancelRequest{BookingID: conf.Booking.ID, Actor: "staff:test", Reason: "ill"}); err != nil {
			t.Fatal(err)
		}
	}
	freeUp(first)
	want["waiting"], want["offered"], want["openings"], want["made"] = 0, 1, 1, 1
	wantWaitlistMetrics(t, a, "an offer", want)

	if _, err := a.Deps.Waitlist.Accept(ctx, c.ID, offerLinkOf(t, a, taker.ID)); err != nil {
		t.Fatalf("accept: %v", err)
	}
	want["offered"], want["openings"], want["accepted"], want["rebooked"] = 0, 0, 1, 1
	text := wantWaitlistMetrics(t, a, "an offer taken", want)
	if v, _ := metricValue(t, text, "clinic_waitlist_rebook_seconds_total"); v <= 0 || v > 60 {
		t.Errorf("clinic_waitlist_rebook_seconds_total = %v, want the moments from the cancellation to the booking", v)
	}

	late := a.wlJoin(t, c, c.Types[0], second, second, "Pia Waiting")
	freeUp(second)
	want["joined"], want["made"], want["offered"], want["openings"] = 2, 2, 1, 1
	wantWaitlistMetrics(t, a, "a second offer", want)
	// The offer reached the patient (this server's queue sends nothing by
	// itself), and ran out.
	if _, err := a.Pool.Exec(ctx, `UPDATE messages SET status = 'sent' WHERE entry_id = $1 AND kind = 'waitlist_offer'`, late.ID); err != nil {
		t.Fatal(err)
	}
	clk.add(a.Deps.Waitlist.OfferFor() + time.Minute)
	var opening uuid.UUID
	if err := a.Pool.QueryRow(ctx, `SELECT opening_id FROM waitlist_offers WHERE entry_id = $1`, late.ID).Scan(&opening); err != nil {
		t.Fatal(err)
	}
	// The step the queue runs at the offer's end.
	if err := a.Deps.Waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	want["offered"], want["openings"], want["expired"], want["released"] = 0, 0, 1, 1
	wantWaitlistMetrics(t, a, "an offer run out", want)

	// A place not confirmed counts apart from those waiting, until it is.
	day := second.In(c.Loc).Format(time.DateOnly)
	idle, _, err := a.Deps.Waitlist.Join(ctx, waitlist.JoinRequest{ClinicID: c.ID, AppointmentTypeID: c.Types[0].ID, From: day, To: day,
		Patient: booking.Patient{Name: "Ida Unconfirmed", Email: "ida-" + uuid.NewString()[:8] + "@example.org"}, ClientID: "c-ida", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	want["joined"], want["unconfirmed"] = 3, 1
	text = wantWaitlistMetrics(t, a, "a join not confirmed", want)
	if strings.Contains(text, idle.Patient.Email) {
		t.Errorf("/metrics names %q", idle.Patient.Email)
	}
	pwConfirm(t, a, c, idle.ID)
	want["unconfirmed"], want["waiting"] = 0, 1
	text = wantWaitlistMetrics(t, a, "the place confirmed", want)

	for _, secret := range []string{taker.Patient.Email, taker.Patient.Name, late.Patient.Email, c.ID.String(), c.Slug} {
		if strings.Contains(text, secret) {
			t.Errorf("/metrics names %q", secret)
		}
	}
	if st := a.wlState(t, late.ID); st != waitlist.StateLapsed {
		t.Errorf("the entry whose offer ran out is %s, want lapsed", st)
	}
}
