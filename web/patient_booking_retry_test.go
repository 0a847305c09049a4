package web_test

// The details form carries an idempotency key: a browser that sends the
// form again after its answer was lost (a 503 at commit, a dropped
// connection, a double click, a reload that re-posts) is sent to the
// confirmation of the booking it made, and nothing is booked twice.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/testkit"
)

// postedForm is the answer to a form posted outside the client's helpers
// (which may fail the test, not allowed off its goroutine).
type postedForm struct {
	status   int
	location string // Location, or HX-Redirect for htmx
	err      error
}

func postForm(cl *client, path string, form url.Values, htmx bool) postedForm {
	req, err := http.NewRequest(http.MethodPost, cl.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return postedForm{err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", browserAccept)
	if htmx {
		req.Header.Set("Hx-Request", "true")
	}
	res, err := cl.hc.Do(req)
	if err != nil {
		return postedForm{err: err}
	}
	defer res.Body.Close()
	loc := res.Header.Get("Location")
	if htmx {
		loc = res.Header.Get("HX-Redirect")
	}
	return postedForm{status: res.StatusCode, location: loc}
}

func TestPageConfirmSentTwiceBooksOnce(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0].ID
	if _, err := a.Pool.Exec(context.Background(), `UPDATE appointment_types SET cooldown_min = 60 WHERE id = $1`, typ.ID); err != nil {
		t.Fatal(err)
	}
	starts := freeStarts(c, 2)
	p := invented(0)
	cl := a.newClient(t)

	held := holdNoJS(t, cl, c, typ, sp, starts[0]).Want(http.StatusOK)
	f := detailsForm(t, held.Doc(), "", p.Email, "+49 30 1234567")
	key := f.Values.Get("Idempotency-Key")
	if key == "" {
		t.Fatalf("the details form carries no idempotency key: %v", f.Values)
	}
	// A field error shows the form again with the same key, so a retry of
	// the corrected form repeats one request.
	fixed := cl.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
	f = detailsForm(t, fixed.Doc(), p.Name, p.Email, "+49 30 1234567")
	if got := f.Values.Get("Idempotency-Key"); got != key {
		t.Fatalf("the form shown again carries the key %q, want %q", got, key)
	}

	// Sent twice at once (the first answer lost to its sender), then once
	// more after both were answered.
	{
		answers := make([]postedForm, 2)
		testkit.Together(2, func(i int) { answers[i] = postForm(cl, f.Action, f.Values, i == 1) })
		for i, want := range []int{http.StatusSeeOther, http.StatusOK} {
			if answers[i].err != nil || answers[i].status != want || !managePath.MatchString(answers[i].location) {
				t.Fatalf("posted together, answer %d: %+v; want %d to the manage page", i, answers[i], want)
			}
		}
		if answers[0].location != answers[1].location {
			t.Fatalf("the two posts were sent to %q and %q: want the one booking", answers[0].location, answers[1].location)
		}
		again := cl.Post(f.Action, f.Values).WantRedirect(answers[0].location)
		page := cl.Get(again.Header.Get("Location")).Want(http.StatusOK)
		if page.Doc().Find(`[data-testid="summary"]`).Length() != 1 {
			t.Fatalf("the retry's confirmation page shows no booking:\n%s", clip(page.Body, 2000))
		}
		if rows, overlaps := a.confirmedRows(t, c.ID); rows != 1 || overlaps != 0 {
			t.Fatalf("%d bookings (%d overlapping) after one form sent three times, want 1", rows, overlaps)
		}
	}

	// Another browser sending this very form (key, hold and details) is not
	// let into the booking: the key is filed under the browser that booked.
	if r := postForm(a.newClient(t), f.Action, f.Values, false); r.err != nil || r.status == http.StatusSeeOther || r.location != "" {
		t.Fatalf("another browser with the same form: %+v; want a refusal", r)
	}

	// The same key with other details is refused, as the API refuses it.
	{
		other := cloneValues(f.Values)
		other.Set("name", p.Name+" Jr")
		r := cl.Post(f.Action, other).Want(http.StatusUnprocessableEntity)
		if msg := text(panelOf(r)); !strings.Contains(msg, "already sent with other details") {
			t.Fatalf("the same form with other details says %q", msg)
		}
		if rows, _ := a.confirmedRows(t, c.ID); rows != 1 {
			t.Fatalf("%d bookings, want 1", rows)
		}
	}

	// The same patient from another browser: another form, another key,
	// and the cooldown of the booking made.
	{
		cl2 := a.newClient(t)
		held := holdNoJS(t, cl2, c, typ, sp, starts[1]).Want(http.StatusOK)
		g := detailsForm(t, held.Doc(), p.Name, p.Email, "+49 30 1234567")
		if g.Values.Get("Idempotency-Key") == key {
			t.Fatal("another form carries the same key")
		}
		cl2.Post(g.Action, g.Values).Want(http.StatusTooManyRequests)
		if rows, _ := a.confirmedRows(t, c.ID); rows != 1 {
			t.Fatalf("%d bookings, want 1", rows)
		}
	}
}

// The code step's form sent again after it booked: the code it carries is
// spent, and the answer is still the booking's confirmation.
func TestPageCodeStepSentTwiceBooksOnce(t *testing.T) {
	t.Parallel()
	avoidHourEdge(time.Minute)
	a, srv := verifyApp(t, program.Options{})
	c := noCooldownClinic(t, a)
	typ, sp := c.Type0(), c.Specialists[0].ID
	starts := freeStarts(c, 4)
	cl := a.newClient(t)
	for i := range 3 { // past the address's allowance: the next booking asks for a code
		p := invented(i)
		bookViaPages(t, cl, c, typ, sp, starts[i], p.Name, p.Email)
	}
	p := invented(3)
	held := holdNoJS(t, cl, c, typ, sp, starts[3]).Want(http.StatusOK)
	f := detailsForm(t, held.Doc(), p.Name, p.Email, "")
	step := cl.Post(f.Action, f.Values).Want(http.StatusPreconditionRequired)
	cf := formOf(t, step.Doc().Find(`[data-testid="code-form"]`), "code form")
	if cf.Values.Get("Idempotency-Key") != f.Values.Get("Idempotency-Key") {
		t.Fatalf("the code form carries the key %q, the details form %q", cf.Values.Get("Idempotency-Key"), f.Values.Get("Idempotency-Key"))
	}
	cf.Values.Set("code", codeSentTo(t, srv, 1, p.Email))
	booked := cl.Post(cf.Action, cf.Values).Want(http.StatusSeeOther)
	if !managePath.MatchString(booked.Header.Get("Location")) {
		t.Fatalf("the right code leads to %q", booked.Header.Get("Location"))
	}
	cl.Post(cf.Action, cf.Values).WantRedirect(booked.Header.Get("Location"))
	if rows, _ := a.confirmedRows(t, c.ID); rows != 4 {
		t.Fatalf("%d bookings, want 4", rows)
	}
}
