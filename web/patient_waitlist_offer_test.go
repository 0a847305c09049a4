package web_test

// Tests of a time offered from the waitlist, through its page: taking it
// books it (a second click is told so), passing it on hands it to the
// next, and while it is offered the booking pages cannot hold it.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/waitlist"
)

// pwOffered books start, puts a patient of each name on the waitlist for
// its day (in that order), cancels the booking and runs the first step of
// the opening it makes (the test server works no queue): the time is
// offered to the first. It returns the entries and the opening.
func pwOffered(t *testing.T, a *app, c clinic, start time.Time, names ...string) ([]waitlist.Entry, uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	typ, sp := c.Type0(), c.Specialists[0]
	first := a.bookAs(t, c, typ, sp.ID, start, booking.Patient{Name: "Booked First", Email: uniqueEmail("first")})
	entries := make([]waitlist.Entry, len(names))
	for i, name := range names {
		e, _, err := a.Deps.Waitlist.Join(ctx, waitlist.JoinRequest{
			ClinicID: c.ID, AppointmentTypeID: typ.ID, From: pwDay(c, start), To: pwDay(c, start),
			Patient: booking.Patient{Name: name, Email: uniqueEmail("waiting")}, ClientID: "c-" + uuid.NewString(), Language: "en",
		})
		if err != nil {
			t.Fatalf("join %s: %v", name, err)
		}
		pwConfirm(t, a, c, e.ID)
		entries[i] = e
		time.Sleep(2 * time.Millisecond) // joined in this order
	}
	if _, _, err := a.Deps.Bookings.Cancel(ctx, booking.CancelRequest{BookingID: first.Booking.ID, Actor: "staff:test", Reason: "ill"}); err != nil {
		t.Fatal(err)
	}
	var opening uuid.UUID
	if err := a.Pool.QueryRow(ctx, `SELECT id FROM waitlist_openings WHERE clinic_id = $1 AND slot_start = $2`, c.ID, start).Scan(&opening); err != nil {
		t.Fatalf("no opening of the cancelled time: %v", err)
	}
	pwStep(t, a, opening)
	return entries, opening
}

// pwStep runs one step of the opening, as its job would.
func pwStep(t *testing.T, a *app, opening uuid.UUID) {
	t.Helper()
	if err := a.Deps.Waitlist.Step(context.Background(), opening, uuid.Nil); err != nil {
		t.Fatalf("step the opening: %v", err)
	}
}

// pwOfferLink mints a link to the entry's open offer, as its e-mail does,
// and returns the offer page's path.
func pwOfferLink(t *testing.T, a *app, c clinic, entry uuid.UUID) string {
	t.Helper()
	ctx := context.Background()
	var offer uuid.UUID
	if err := a.Pool.QueryRow(ctx, `SELECT id FROM waitlist_offers WHERE entry_id = $1 AND state = 'open'`, entry).Scan(&offer); err != nil {
		t.Fatalf("no open offer: %v", err)
	}
	token, err := secret.NewToken(32)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.New(a.Pool).WaitlistLinkAdd(ctx, db.WaitlistLinkAddParams{
		TokenHash: secret.Hash(token), EntryID: entry, OfferID: uuid.NullUUID{UUID: offer, Valid: true}, Mailed: true,
	}); err != nil {
		t.Fatal(err)
	}
	return "/c/" + c.Slug + "/offer/" + token
}

// pwEntryState is an entry's state as stored.
func pwEntryState(t *testing.T, a *app, id uuid.UUID) string {
	t.Helper()
	var s string
	if err := a.Pool.QueryRow(context.Background(), `SELECT state FROM waitlist_entries WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// pwOfferState is the state an offer's page shows.
func pwOfferState(t *testing.T, r *response) string {
	t.Helper()
	s, ok := r.Doc().Find(`[data-testid="offer"]`).Attr("data-state")
	if !ok {
		t.Fatalf("%s: no offer on the page:\n%s", r.what, clip(r.Body, 2000))
	}
	return s
}

// The page shows the time, its zone and how long it is kept; the booking
// pages cannot hold it meanwhile; taking it books it and shows the
// booking as any booking does; a second click says it is booked.
func TestWaitlistOfferTakeIt(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 10, 0)
	entries, _ := pwOffered(t, a, c, start, "Ada Waiting", "Bo Waiting")
	link := pwOfferLink(t, a, c, entries[0].ID)

	page := a.newClient(t).Get(link).Want(http.StatusOK)
	wantPrivate(t, page)
	if st := pwOfferState(t, page); st != "open" {
		t.Fatalf("the offer is %q", st)
	}
	when := page.Text(`[data-testid="offer-when"]`)
	if !strings.Contains(when, start.Format("Monday 2 January 2006, 15:04")+" (Berlin time)") || !strings.HasSuffix(when, "10:30") {
		t.Errorf("the offer's time reads %q", when)
	}
	if !strings.Contains(page.Text(`[data-testid="offer"]`), sp.Name) || !strings.Contains(page.Text(`[data-testid="offer"]`), typ.Name) {
		t.Errorf("the offer names neither %s nor %s: %q", sp.Name, typ.Name, page.Text(`[data-testid="offer"]`))
	}
	if got := page.Text(`[data-testid="offer-until"]`); !strings.HasPrefix(got, "Kept for you until ") || !strings.Contains(got, "(Berlin time)") {
		t.Errorf("the offer's end reads %q", got)
	}
	exp, _ := page.Doc().Find(`[data-testid="offer-until"] .countdown`).Attr("data-expires")
	if at, err := time.Parse(time.RFC3339, exp); err != nil || time.Until(at) <= 0 || time.Until(at) > waitlist.DefaultOfferFor {
		t.Errorf("the countdown runs to %q (%v)", exp, err)
	}
	de := getIn(a.newClient(t), link, "de").Want(http.StatusOK)
	if got := de.Text(`[data-testid="offer-until"]`); !strings.HasPrefix(got, "Für Sie reserviert bis ") || !strings.Contains(de.Text(`[data-testid="offer-when"]`), ", 10:00 (Berliner Zeit)") {
		t.Errorf("in German the offer reads %q, %q", de.Text(`[data-testid="offer-when"]`), got)
	}
	// The link opens the place too, which leads back to the offer.
	place := a.newClient(t).Get("/c/" + c.Slug + "/waitlist/" + strings.TrimPrefix(link, "/c/"+c.Slug+"/offer/")).Want(http.StatusOK)
	if _, st := pwPlace(t, place); st != waitlist.StateOffered {
		t.Errorf("the place is %q", st)
	}
	if href, _ := place.Doc().Find(`[data-testid="waitlist-offer-link"]`).Attr("href"); href != link {
		t.Errorf("the place leads to %q, want the offer", href)
	}

	// Nobody else can hold the time while it is offered.
	if st := stateOn(t, a, c, typ, sp.ID, start); st != "held" {
		t.Errorf("the booking page shows the offered time %q, want held", st)
	}
	r := a.newClient(t).Post(c.BookPath(typ)+"/hold", url.Values{"start": {rfc(start)}, "specialist": {sp.ID.String()}})
	r.Want(http.StatusLocked)
	wantError(t, a.postHold(t, typ.ID, sp.ID, start, clientID()), http.StatusLocked, "SLOT_HELD", "")

	cl := a.newClient(t)
	accept := page.Form(`[data-testid="offer-accept"]`)
	took := cl.Post(accept.Action, accept.Values).Want(http.StatusSeeOther)
	m := managePath.FindStringSubmatch(took.Header.Get("Location"))
	if m == nil {
		t.Fatalf("taking it leads to %q, want the booking's page", took.Header.Get("Location"))
	}
	booked := cl.Get(took.Header.Get("Location")).Want(http.StatusOK)
	if booked.Doc().Find(`[data-testid="booked"]`).Length() != 1 || booked.Doc().Find(`[data-testid="manage-link"]`).Length() != 1 {
		t.Errorf("the booking's page does not say booked, or has no manage link:\n%s", clip(booked.Body, 2000))
	}
	if s := summaryOf(t, booked); s["For"] != "Ada Waiting" || !strings.Contains(s["When"], "10:00") || s["With"] != sp.Name {
		t.Errorf("the booking is %q", s)
	}
	var n int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND slot_start = $2
		AND status = 'confirmed' AND patient_email = $3`, c.ID, start, entries[0].Patient.Email).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d bookings of the time for the patient (%v), want 1", n, err)
	}

	again := cl.Post(accept.Action, accept.Values).Want(http.StatusOK)
	if st := pwOfferState(t, again); st != "booked" || !strings.Contains(again.Text(`[data-testid="offer-notice"]`), "already") {
		t.Errorf("a second click shows %q: %q", st, again.Text(`[data-testid="offer-notice"]`))
	}
	later := a.newClient(t).Get(link).Want(http.StatusOK)
	if st := pwOfferState(t, later); st != "booked" || !strings.Contains(later.Text(`[data-testid="offer-state"]`), "confirmation e-mail") {
		t.Errorf("the offer's page later shows %q: %q", st, later.Text(`[data-testid="offer-state"]`))
	}
	if pwEntryState(t, a, entries[0].ID) != waitlist.StateBooked || pwEntryState(t, a, entries[1].ID) != waitlist.StateWaiting {
		t.Errorf("the entries are %s and %s", pwEntryState(t, a, entries[0].ID), pwEntryState(t, a, entries[1].ID))
	}
}

// Passing a time on keeps the place and hands the time to the next; the
// offer passed on is over (taking it then is 410); the next leaving the
// list frees the time for everyone.
func TestWaitlistOfferPassItOn(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(3, 11, 0)
	entries, opening := pwOffered(t, a, c, start, "Ada Passing", "Bo Next")
	link := pwOfferLink(t, a, c, entries[0].ID)
	token := strings.TrimPrefix(link, "/c/"+c.Slug+"/offer/")

	cl := a.newClient(t)
	decline := cl.Get(link).Want(http.StatusOK).Form(`[data-testid="offer-decline"]`)
	cl.Post(decline.Action, decline.Values).WantRedirect("/c/" + c.Slug + "/waitlist/" + token)
	place := cl.Get("/c/" + c.Slug + "/waitlist/" + token).Want(http.StatusOK)
	if _, st := pwPlace(t, place); st != waitlist.StateWaiting || !strings.Contains(place.Text(`[data-testid="waitlist-notice"]`), "passed the time on") {
		t.Errorf("after passing it on the place is %q: %q", st, place.Text(`[data-testid="waitlist-notice"]`))
	}
	over := cl.Get(link).Want(http.StatusOK)
	if st := pwOfferState(t, over); st != "over" || over.Doc().Find(`[data-testid="offer-accept"]`).Length() != 0 {
		t.Errorf("the offer passed on shows %q", st)
	}
	if href, _ := over.Doc().Find(`[data-testid="offer-place-link"]`).Attr("href"); href != "/c/"+c.Slug+"/waitlist/"+token {
		t.Errorf("the offer that is over leads to %q", href)
	}
	late := cl.Post(link+"/accept", nil).Want(http.StatusGone)
	if st := pwOfferState(t, late); st != "over" {
		t.Errorf("taking it after passing it on shows %q", st)
	}

	pwStep(t, a, opening) // the job passing it on, run now
	if st := pwEntryState(t, a, entries[1].ID); st != waitlist.StateOffered {
		t.Fatalf("the next is %q, want offered", st)
	}
	next := pwOfferLink(t, a, c, entries[1].ID)
	if st := pwOfferState(t, a.newClient(t).Get(next).Want(http.StatusOK)); st != "open" {
		t.Errorf("the next's offer is %q", st)
	}
	nextPlace := "/c/" + c.Slug + "/waitlist/" + strings.TrimPrefix(next, "/c/"+c.Slug+"/offer/")
	a.newClient(t).Post(nextPlace+"/leave", nil).WantRedirect(nextPlace)
	if st := pwOfferState(t, a.newClient(t).Get(next).Want(http.StatusOK)); st != "over" {
		t.Errorf("after leaving, the next's offer is %q", st)
	}
	pwStep(t, a, opening) // nobody else waits: the time is released
	if st := stateOn(t, a, c, typ, sp.ID, start); st != "free" {
		t.Errorf("with nobody left waiting the time is %q, want free", st)
	}

	// A place's own link is no offer's; an unknown link is nothing.
	entryLink := pwJoinNoJS(t, a.newClient(t), c, typ, pwValues(c, "Cy Later", uniqueEmail("later"), start, start))
	wantErrorPage(t, a.newClient(t).Get(strings.Replace(entryLink, "/waitlist/", "/offer/", 1)), http.StatusNotFound)
	for _, p := range []string{"/c/" + c.Slug + "/offer/nothing", "/c/" + c.Slug + "/offer/nothing/accept", "/c/" + c.Slug + "/offer/nothing/decline"} {
		var r *response
		if strings.HasSuffix(p, "nothing") {
			r = a.newClient(t).Get(p)
		} else {
			r = a.newClient(t).Post(p, nil)
		}
		wantErrorPage(t, r, http.StatusNotFound)
		wantPrivate(t, r)
	}
}

// The offer and place pages, and their buttons, allow thirty requests a
// minute per client address (a link is a secret worth guessing).
func TestWaitlistOfferLinksLimited(t *testing.T) {
	t.Parallel()
	avoidWindowEdge(20 * time.Second)
	a := newApp(t)
	c := a.patientClinic(t)
	cl := a.newClient(t)
	for i := range 30 {
		p := "/c/" + c.Slug + []string{"/offer/", "/waitlist/"}[i%2] + "guess" + uuid.NewString()
		if r := cl.Get(p); r.Status != http.StatusNotFound {
			t.Fatalf("guess %d: %d", i+1, r.Status)
		}
	}
	r := cl.Post("/c/"+c.Slug+"/offer/guess/accept", nil)
	wantErrorPage(t, r, http.StatusTooManyRequests)
	retryAfter(t, r)
	a.newClient(t).Get("/c/" + c.Slug + "/offer/guess").Want(http.StatusNotFound) // another address is not held back
}

// pwAccepted posts the offer page's Take it and wants the offer's page
// again with status, the offer still open, and a notice that says want.
func pwAccepted(t *testing.T, cl *client, link string, status int, want string) *response {
	t.Helper()
	r := cl.Post(link+"/accept", nil)
	if r.Status != status {
		t.Fatalf("taking the offer: %d, want %d\n%s", r.Status, status, clip(r.Body, 2000))
	}
	if st := pwOfferState(t, r); st != "open" || r.Doc().Find(`[data-testid="offer-accept"]`).Length() != 1 {
		t.Errorf("taking the offer: it shows %q, want it open to take", st)
	}
	if n := r.Text(`[data-testid="offer-notice"]`); !strings.Contains(n, want) {
		t.Errorf("taking the offer: the notice reads %q, want %q", n, want)
	}
	return r
}

// Taking a time during the type's cooldown, or with a specialist who no
// longer takes bookings, is told on the offer's page (429 with
// Retry-After, 400), and the offer stands.
func TestWaitlistOfferRefusalsShownOnItsPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 10, 0)
	entries, _ := pwOffered(t, a, c, start, "Ada Cooling")
	link := pwOfferLink(t, a, c, entries[0].ID)
	cl := a.newClient(t)

	// Booked at the desk for another day a moment ago: the type's cooldown
	// runs.
	ctx := context.Background()
	if _, err := a.Pool.Exec(ctx, `UPDATE appointment_types SET cooldown_min = 60 WHERE id = $1`, typ.ID); err != nil {
		t.Fatal(err)
	}
	a.bookAs(t, c, typ, c.Specialists[1].ID, c.At(5, 10, 0), booking.Patient{Name: "Ada Cooling", Email: entries[0].Patient.Email})
	r := pwAccepted(t, cl, link, http.StatusTooManyRequests, "You booked "+typ.Name+" recently")
	if n := retryAfter(t, r); n < 59*60 || n > 60*60 {
		t.Errorf("Retry-After %d s, want the cooldown's hour", n)
	}

	if _, err := a.Pool.Exec(ctx, `UPDATE appointment_types SET cooldown_min = 0 WHERE id = $1`, typ.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Pool.Exec(ctx, `UPDATE specialists SET active = false WHERE id = $1`, sp.ID); err != nil {
		t.Fatal(err)
	}
	pwAccepted(t, cl, link, http.StatusBadRequest, "This specialist is not taking bookings.")
	if st := pwEntryState(t, a, entries[0].ID); st != waitlist.StateOffered {
		t.Errorf("after the refusals the entry is %s, want offered", st)
	}
}

// A time booked by someone else while the offer stands (its hold lost) is
// told on the offer's page (409), which still offers it.
func TestWaitlistOfferTimeBookedBySomeoneElse(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(3, 11, 0)
	entries, opening := pwOffered(t, a, c, start, "Bo Late")
	link := pwOfferLink(t, a, c, entries[0].ID)

	ctx := context.Background()
	var holdID string
	if err := a.Pool.QueryRow(ctx, `SELECT hold_id FROM waitlist_openings WHERE id = $1`, opening).Scan(&holdID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Deps.Holds.Release(ctx, holdID, "waitlist:"+opening.String()); err != nil {
		t.Fatal(err)
	}
	a.bookDirect(t, c, typ, sp.ID, start, "Cy Quicker")

	pwAccepted(t, a.newClient(t), link, http.StatusConflict, "This time was just booked by someone else")
	var state string
	if err := a.Pool.QueryRow(ctx, `SELECT state FROM waitlist_offers WHERE entry_id = $1`, entries[0].ID).Scan(&state); err != nil || state != waitlist.OfferOpen {
		t.Errorf("the offer is %q (%v), want open", state, err)
	}
}

// Passing on an offer says what became of it, as it stands after the
// answer: taken already, or over.
func TestWaitlistOfferPassedOnSaysWhatBecameOfIt(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	took, _ := pwOffered(t, a, c, c.At(2, 9, 0), "Dee Took")
	lapsed, opening := pwOffered(t, a, c, c.At(4, 9, 0), "Eli Lapsed")
	tookLink, lapsedLink := pwOfferLink(t, a, c, took[0].ID), pwOfferLink(t, a, c, lapsed[0].ID)
	place := func(link string) string { return strings.Replace(link, "/offer/", "/waitlist/", 1) }

	cl := a.newClient(t)
	cl.Post(tookLink+"/accept", nil).Want(http.StatusSeeOther)
	cl.Post(tookLink+"/decline", nil).WantRedirect(place(tookLink))
	if n := cl.Get(place(tookLink)).Want(http.StatusOK).Text(`[data-testid="waitlist-notice"]`); !strings.Contains(n, "it is booked") {
		t.Errorf("passing on a time taken says %q", n)
	}

	// The offer runs out, and its step ends it, before the answer.
	if _, err := a.Pool.Exec(context.Background(), `UPDATE waitlist_offers SET expires_at = now() - interval '1 second'
		WHERE entry_id = $1`, lapsed[0].ID); err != nil {
		t.Fatal(err)
	}
	pwStep(t, a, opening)
	cl.Post(lapsedLink+"/decline", nil).WantRedirect(place(lapsedLink))
	if n := cl.Get(place(lapsedLink)).Want(http.StatusOK).Text(`[data-testid="waitlist-notice"]`); !strings.Contains(n, "This offer is over") {
		t.Errorf("passing on an offer that ran out says %q", n)
	}
}
