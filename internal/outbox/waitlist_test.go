package outbox_test

// Tests of the waitlist's e-mails through a real queue and mail server:
// a place taken and a time offered each send one e-mail whose link opens
// the place or the offer; an offer or a place that is over by the time
// its e-mail is composed sends nothing.

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// wlRig is a rig whose outbox also runs the waitlist's jobs. Its queue is
// not worked until start: a test can change what an e-mail would tell
// before the e-mail is composed.
type wlRig struct {
	*rig
	holds    *holds.Store
	waitlist *waitlist.Service
	started  bool
}

func newWaitlistRig(t *testing.T, tz string) *wlRig {
	t.Helper()
	// The offers' steps are jobs that may wait for a retry; only a leader
	// of the rig's own moves them along by the rig's clock.
	pool := ownDB(t)
	base := &rig{pool: pool, smtp: testkit.SMTP(t), clock: &testkit.Clock{}, queue: "mail_" + strings.ReplaceAll(uuid.NewString(), "-", "")}
	base.clinic = testkit.NewClinic(t, pool, testkit.ClinicOptions{Timezone: tz})
	loc, err := time.LoadLocation(base.clinic.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	base.loc = loc
	r := &wlRig{rig: base, holds: holds.NewStore(testkit.Redis(t), 0, nil)}
	base.outbox, err = outbox.New(pool, outbox.Config{
		PublicURL: "http://clinic.test", Workers: 2, Clock: base.clock, Sender: base.sender(t),
		Queue: base.queue,
		Retry: outbox.Retry{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond, Attempts: 5},
		// The rigs of the package share a database and mail a few fixed
		// addresses: the cap on one address is lifted out of their way.
		Cap: outbox.Cap{PerClinic: 1 << 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	openings := waitlist.NewOpenings(pool, r.holds, waitlist.Config{Outbox: base.outbox})
	base.bookings = booking.New(pool, booking.Options{TxHooks: []booking.TxHook{
		{Name: "e-mails", After: base.outbox.Enqueue},
		{Name: "waitlist", After: openings.Enqueue},
	}})
	r.waitlist = waitlist.New(openings, base.bookings)
	co := checkout.New(pool, r.holds, nil, base.bookings, slog.New(slog.DiscardHandler), checkout.Limits{})
	base.bookings.Observe(co.OnBookingChange)
	return r
}

// start begins working the queue: the e-mails written so far are composed
// and sent, and the waitlist's jobs run.
func (r *wlRig) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.outbox.Start(ctx, r.waitlist.Jobs()); err != nil {
		t.Fatal(err)
	}
	r.started = true
	t.Cleanup(func() {
		stop, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		_ = r.outbox.Stop(stop)
		cancel()
	})
}

// join puts email on the list for the first type on start's day, and
// confirms the place as its patient would from its e-mail (joinOnly
// does not).
func (r *wlRig) join(t *testing.T, email, lang string, start time.Time) (waitlist.Entry, string) {
	t.Helper()
	e, token := r.joinOnly(t, email, lang, start)
	mailed := "m" + strings.ReplaceAll(uuid.NewString(), "-", "")
	if _, err := r.pool.Exec(context.Background(), `INSERT INTO waitlist_links (token_hash, entry_id, mailed, clinic_id)
		SELECT sha256($1::bytea), id, true, clinic_id FROM waitlist_entries WHERE id = $2`, []byte(mailed), e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.waitlist.Confirm(context.Background(), r.clinic.ID, mailed); err != nil {
		t.Fatalf("confirm %s: %v", email, err)
	}
	return e, token
}

// joinOnly puts email on the list, unconfirmed.
func (r *wlRig) joinOnly(t *testing.T, email, lang string, start time.Time) (waitlist.Entry, string) {
	t.Helper()
	day := start.In(r.loc).Format(time.DateOnly)
	e, token, err := r.waitlist.Join(context.Background(), waitlist.JoinRequest{
		ClinicID: r.clinic.ID, AppointmentTypeID: r.clinic.Types[0].ID, From: day, To: day,
		Patient: booking.Patient{Name: "Waiting Patient", Email: email}, ClientID: "c-" + email, Language: lang,
	})
	if err != nil {
		t.Fatalf("join %s: %v", email, err)
	}
	return e, token
}

// freeUp books start for someone and cancels it: the time is freed with
// the list waiting. Without a started queue it steps the opening itself,
// as the queue's job would.
func (r *wlRig) freeUp(t *testing.T, start time.Time) {
	t.Helper()
	ctx := context.Background()
	b := r.book(t, start, "first-"+uuid.NewString()[:8]+"@example.org")
	if _, _, err := r.bookings.Cancel(ctx, booking.CancelRequest{BookingID: b.ID, Actor: "staff:test", Reason: "ill"}); err != nil {
		t.Fatal(err)
	}
	if r.started {
		return
	}
	var opening uuid.UUID
	if err := r.pool.QueryRow(ctx, `SELECT id FROM waitlist_openings WHERE clinic_id = $1 AND slot_start = $2`,
		r.clinic.ID, start.UTC()).Scan(&opening); err != nil {
		t.Fatalf("the opening of %s: %v", start, err)
	}
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
}

// mailOf is the entry's one message of kind; it fails unless there is
// exactly one.
func (r *wlRig) mailOf(t *testing.T, entry uuid.UUID, kind string) db.Message {
	t.Helper()
	var id uuid.UUID
	n := r.count(t, `SELECT count(*) FROM messages WHERE entry_id = $1 AND kind = $2`, entry, kind)
	if n != 1 {
		t.Fatalf("%d %s messages of the entry, want 1", n, kind)
	}
	if err := r.pool.QueryRow(context.Background(), `SELECT id FROM messages WHERE entry_id = $1 AND kind = $2`, entry, kind).Scan(&id); err != nil {
		t.Fatal(err)
	}
	m, err := db.New(r.pool).MessageGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// offerLink mints a link to the entry's open offer, as its e-mail would.
func (r *wlRig) offerLink(t *testing.T, entry uuid.UUID) string {
	t.Helper()
	var offer uuid.UUID
	if err := r.pool.QueryRow(context.Background(), `SELECT id FROM waitlist_offers WHERE entry_id = $1 AND state = 'open'`, entry).Scan(&offer); err != nil {
		t.Fatalf("the entry's open offer: %v", err)
	}
	token, err := secret.NewToken(32)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.New(r.pool).WaitlistLinkAdd(context.Background(), db.WaitlistLinkAddParams{
		TokenHash: secret.Hash(token), EntryID: entry, OfferID: uuid.NullUUID{UUID: offer, Valid: true},
	}); err != nil {
		t.Fatal(err)
	}
	return token
}

// received are the e-mails the mail server took for to.
func (r *wlRig) received(t *testing.T, to string) []testkit.ParsedMail {
	t.Helper()
	var out []testkit.ParsedMail
	for _, m := range r.smtp.Messages() {
		if p := testkit.ParseReceived(t, m); p.To == to {
			out = append(out, p)
		}
	}
	return out
}

// waitReceived waits until the mail server took n e-mails for to.
func (r *wlRig) waitReceived(t *testing.T, to string, n int) []testkit.ParsedMail {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := r.received(t, to)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d e-mails to %s after 20 s, want %d", len(got), to, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// linkIn finds the link to path ("waitlist" or "offer") of the clinic in
// the text and returns its token.
func (r *wlRig) linkIn(t *testing.T, text, path string) string {
	t.Helper()
	re := regexp.MustCompile(`http://clinic\.test/c/` + regexp.QuoteMeta(r.clinic.Slug) + `/` + path + `/([A-Za-z0-9_-]{43})\b`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no /c/%s/%s/{token} link in:\n%s", r.clinic.Slug, path, text)
	}
	return m[1]
}

// Joining sends one e-mail to the entry's address whose link opens the
// place (not an offer), asks to confirm it, and confirms it (the token
// shown on joining does not).
func TestWaitlistJoinedMailOpensThePlace(t *testing.T) {
	t.Parallel()
	r := newWaitlistRig(t, "")
	r.start(t)
	const to = "joined@example.org"
	e, joinToken := r.joinOnly(t, to, "en", r.at(4, 10, 0))

	got := r.waitReceived(t, to, 1)[0]
	if !strings.Contains(got.Subject, "You are on the waitlist for "+r.clinic.Types[0].Name) {
		t.Errorf("subject %q", got.Subject)
	}
	token := r.linkIn(t, got.Text, "waitlist")
	opened, offer, err := r.waitlist.ByToken(context.Background(), r.clinic.ID, token)
	if err != nil || opened.ID != e.ID || offer.ID != uuid.Nil {
		t.Fatalf("the e-mail's link opens entry %s, offer %s, %v; want entry %s and no offer", opened.ID, offer.ID, err, e.ID)
	}
	if _, _, err := r.waitlist.ByToken(context.Background(), testkit.NewClinic(t, r.pool, testkit.ClinicOptions{}).ID, token); err == nil {
		t.Error("the link opens the place at another clinic")
	}
	if flat := strings.Join(strings.Fields(got.Text), " "); !strings.Contains(flat, "Confirm your place") {
		t.Errorf("the place's e-mail does not ask to confirm it:\n%s", got.Text)
	}
	if _, err := r.waitlist.Confirm(context.Background(), r.clinic.ID, joinToken); err == nil {
		t.Error("the token shown on joining confirms the place")
	}
	if c, err := r.waitlist.Confirm(context.Background(), r.clinic.ID, token); err != nil || !c.Confirmed() {
		t.Errorf("the e-mail's link does not confirm the place: %v", err)
	}
	r.waitStatus(t, r.mailOf(t, e.ID, outbox.KindWaitlistJoined).ID, "sent")
	r.settle(t)
	// A second send of the place's e-mail fails this.
	r.drained(t)
	if n := len(r.received(t, to)); n != 1 {
		t.Fatalf("%d e-mails to the entry, want 1", n)
	}
}

// A cancelled time someone waits for sends them one offer, whose link
// opens the offer and which names the time in the clinic's zone.
func TestWaitlistOfferMailOpensTheOffer(t *testing.T) {
	t.Parallel()
	r := newWaitlistRig(t, "Asia/Tokyo") // 10:00 there is 01:00 UTC
	r.start(t)
	const to = "offered@example.org"
	start := r.at(5, 10, 0)
	e, _ := r.join(t, to, "en", start)
	r.freeUp(t, start)

	mails := r.waitReceived(t, to, 2)
	var got testkit.ParsedMail
	for _, m := range mails {
		if strings.Contains(m.Text, "/offer/") {
			got = m
		}
	}
	if got.Text == "" {
		t.Fatalf("no offer among the e-mails to the entry: %q, %q", mails[0].Subject, mails[1].Subject)
	}
	if !strings.Contains(got.Subject, "10:00") {
		t.Errorf("the offer's subject %q does not name 10:00", got.Subject)
	}
	flat := strings.Join(strings.Fields(got.Text), " ")
	for _, want := range []string{"10:00", "Tokyo time", r.clinic.Types[0].Name} {
		if !strings.Contains(flat, want) {
			t.Errorf("the offer does not say %q:\n%s", want, got.Text)
		}
	}
	if strings.Contains(flat, "01:00") {
		t.Errorf("the offer names the time in UTC:\n%s", got.Text)
	}
	opened, offer, err := r.waitlist.ByToken(context.Background(), r.clinic.ID, r.linkIn(t, got.Text, "offer"))
	if err != nil || opened.ID != e.ID || offer.ID == uuid.Nil {
		t.Fatalf("the offer's link opens entry %s, offer %s, %v", opened.ID, offer.ID, err)
	}
	if !offer.Start.Equal(start) || offer.State != waitlist.OfferOpen {
		t.Errorf("the link opens an offer of %s (%s), want the open offer of %s", offer.Start, offer.State, start)
	}
	m := r.waitStatus(t, r.mailOf(t, e.ID, outbox.KindWaitlistOffer).ID, "sent")
	if m.OfferID.UUID != offer.ID {
		t.Errorf("the message names offer %s, the link opens %s", m.OfferID.UUID, offer.ID)
	}
	r.settle(t)
	// A second offer e-mail (the step run twice) fails this.
	r.drained(t)
	if n := len(r.received(t, to)); n != 2 {
		t.Fatalf("%d e-mails to the entry, want the place's and the offer's", n)
	}
}

// An offer taken, passed on or run out before its e-mail is composed,
// and a place left before its e-mail is, send nothing: their messages end
// cancelled.
func TestWaitlistMailOfWhatIsOverIsNotSent(t *testing.T) {
	t.Parallel()
	r := newWaitlistRig(t, "")
	ctx := context.Background()
	accepted, _ := r.join(t, "accepted@example.org", "en", r.at(3, 10, 0))
	declined, _ := r.join(t, "declined@example.org", "en", r.at(4, 10, 0))
	expired, _ := r.join(t, "expired@example.org", "en", r.at(5, 10, 0))
	left, leftToken := r.join(t, "left@example.org", "en", r.at(6, 10, 0))
	for _, d := range []int{3, 4, 5} {
		r.freeUp(t, r.at(d, 10, 0))
	}
	if _, err := r.waitlist.Accept(ctx, r.clinic.ID, r.offerLink(t, accepted.ID)); err != nil {
		t.Fatalf("accept: %v", err)
	}
	if err := r.waitlist.Decline(ctx, r.clinic.ID, r.offerLink(t, declined.ID)); err != nil {
		t.Fatalf("decline: %v", err)
	}
	if err := r.waitlist.Leave(ctx, r.clinic.ID, leftToken); err != nil {
		t.Fatalf("leave: %v", err)
	}
	r.clock.Set(time.Now().Add(waitlist.DefaultOfferFor + time.Minute))
	r.start(t)

	for _, e := range []waitlist.Entry{accepted, declined, expired} {
		r.waitStatus(t, r.mailOf(t, e.ID, outbox.KindWaitlistOffer).ID, "cancelled")
	}
	r.waitStatus(t, r.mailOf(t, left.ID, outbox.KindWaitlistJoined).ID, "cancelled")
	r.settle(t)
	// An offer e-mail of an ended offer, or a place's of one who left,
	// sent late (its cancel not reaching the queued job) fails this.
	r.drained(t)
	for _, m := range r.smtp.Messages() {
		if p := testkit.ParseReceived(t, m); strings.Contains(p.Text, "/offer/") || p.To == "left@example.org" {
			t.Errorf("sent %q to %s", p.Subject, p.To)
		}
	}
	// The taken time's booking was confirmed all the same.
	if len(r.waitReceived(t, "accepted@example.org", 1)) != 1 {
		t.Error("the booking of the taken offer sent no confirmation")
	}
}

// A patient who joined in German gets the place's e-mail in German.
func TestWaitlistJoinedMailInGerman(t *testing.T) {
	t.Parallel()
	r := newWaitlistRig(t, "")
	r.start(t)
	const to = "deutsch@example.org"
	r.join(t, to, "de", r.at(4, 10, 0))
	got := r.waitReceived(t, to, 1)[0]
	if want := "Sie stehen auf der Warteliste für " + r.clinic.Types[0].Name; got.Subject != want {
		t.Fatalf("subject %q, want %q", got.Subject, want)
	}
	if got.Language != "de" {
		t.Errorf("Content-Language %q, want de", got.Language)
	}
}

// The rig's drained waits for the waitlist's steps as well as for the
// e-mails (a step still to run may yet write an e-mail, so a count taken
// while one waits in the other jobs' queue is not final), and judges a
// scheduled job due by the rig's clock, as the queue does, not by the
// database's.
func TestWaitlistRigDrainedWaitsForSteps(t *testing.T) {
	t.Parallel()
	r := newWaitlistRig(t, "")
	r.clock.Set(time.Now().Add(time.Hour))
	r.start(t)
	var id int64
	// A step of an opening that does not exist, due now by the rig's
	// clock (an hour ahead of the database's) so the queue's scheduler
	// makes it available within seconds: it runs, and does nothing.
	if err := r.pool.QueryRow(context.Background(), `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at)
		VALUES (jsonb_build_object('opening_id', gen_random_uuid()), 'waitlist_offer', 5, $1, 'scheduled', $2) RETURNING id`,
		outbox.WorkQueue(r.outbox), r.clock.Now()).Scan(&id); err != nil {
		t.Fatal(err)
	}
	r.drained(t)
	if s := r.jobState(t, id); s != "completed" {
		t.Fatalf("drained returned with the step %s, want it completed", s)
	}
}
