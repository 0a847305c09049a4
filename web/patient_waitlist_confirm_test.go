package web_test

// Tests of confirming a place on the waitlist: the page of the e-mailed
// link, its Confirm button (a POST), and what the pages, the API and the
// staff's list show of a place not confirmed.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/waitlist"
)

// pwMailedLink mints a link to the entry's place as its e-mail carries
// one (the outbox mints them when it sends) and returns its page's path.
func pwMailedLink(t testing.TB, a *app, c clinic, entry uuid.UUID) string {
	t.Helper()
	token, err := secret.NewToken(32)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.New(a.Pool).WaitlistLinkAdd(context.Background(), db.WaitlistLinkAddParams{
		TokenHash: secret.Hash(token), EntryID: entry, Mailed: true,
	}); err != nil {
		t.Fatal(err)
	}
	return "/c/" + c.Slug + "/waitlist/" + token
}

// pwConfirm confirms the entry's place, as its patient does from the
// e-mail.
func pwConfirm(t testing.TB, a *app, c clinic, entry uuid.UUID) {
	t.Helper()
	token := strings.TrimPrefix(pwMailedLink(t, a, c, entry), "/c/"+c.Slug+"/waitlist/")
	if _, err := a.Deps.Waitlist.Confirm(context.Background(), c.ID, token); err != nil {
		t.Fatalf("confirm %s: %v", entry, err)
	}
}

// pwConfirmEmail confirms the live place of an address at the clinic.
func pwConfirmEmail(t testing.TB, a *app, c clinic, email string) {
	t.Helper()
	var id uuid.UUID
	if err := a.Pool.QueryRow(context.Background(), `SELECT id FROM waitlist_entries
		WHERE clinic_id = $1 AND patient_email = $2 AND state IN ('waiting', 'offered')`, c.ID, email).Scan(&id); err != nil {
		t.Fatalf("no place of %s: %v", email, err)
	}
	pwConfirm(t, a, c, id)
}

func pwConfirmedAt(t testing.TB, a *app, entry uuid.UUID) *time.Time {
	t.Helper()
	var at *time.Time
	if err := a.Pool.QueryRow(context.Background(), `SELECT confirmed_at FROM waitlist_entries WHERE id = $1`, entry).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

// The page of the link shown on joining says the place waits for its
// confirmation from the e-mail, with no button; the page of an e-mailed
// link says what confirming means and has the button. Opening that page,
// and a GET of the button's address, confirm nothing (a mail scanner
// opens links); the POST confirms, and the page then shows the place as
// waiting, with a notice, and no button. The token shown on joining
// cannot confirm (403). German too.
func TestWaitlistConfirmFromTheEmailedLink(t *testing.T) {
	t.Parallel()
	a := queueApp(t)
	c := a.patientClinic(t)
	typ := c.Type0()
	today := time.Now().In(c.Loc)
	email := uniqueEmail("confirm")
	joinLink := pwJoinNoJS(t, a.newClient(t), c, typ, pwValues(c, "Ada Confirming", email, today, today.AddDate(0, 0, 2)))
	var entry uuid.UUID
	if err := a.Pool.QueryRow(context.Background(), `SELECT id FROM waitlist_entries WHERE patient_email = $1`, email).Scan(&entry); err != nil {
		t.Fatal(err)
	}

	joined := a.newClient(t).Get(joinLink).Want(http.StatusOK)
	if s, state := pwPlace(t, joined); state != waitlist.StateWaiting || !strings.HasPrefix(s["Status"], "Not confirmed yet") {
		t.Errorf("the joined place shows %q (%s)", s, state)
	}
	if joined.Doc().Find(`[data-testid="waitlist-unconfirmed"]`).Length() != 1 || joined.Doc().Find(`[data-testid="waitlist-confirm"]`).Length() != 0 {
		t.Errorf("the page of the link shown on joining: want the note to confirm from the e-mail, and no button:\n%s", clip(joined.Body, 3000))
	}
	a.newClient(t).Post(joinLink+"/confirm", nil).Want(http.StatusForbidden)

	mailed := pwMailedLink(t, a, c, entry)
	cl := a.newClient(t)
	page := cl.Get(mailed).Want(http.StatusOK)
	wantPrivate(t, page)
	if got := page.Text(`[data-testid="waitlist-confirm-section"] p`); !strings.Contains(got, "this e-mail address is yours") ||
		!strings.Contains(got, "24 hours") || !strings.Contains(got, typ.Name) {
		t.Errorf("the page does not say what confirming means: %q", got)
	}
	form := page.Form(`[data-testid="waitlist-confirm"]`)
	if form.Action != mailed+"/confirm" {
		t.Fatalf("the button posts to %q", form.Action)
	}
	// What a mail scanner does: open the link, and any address it finds.
	a.newClient(t).Get(mailed).Want(http.StatusOK)
	if r := a.newClient(t).Get(form.Action); r.Status != http.StatusNotFound {
		t.Errorf("GET of the button's address answers %d, want 404 (no page there)", r.Status)
	}
	if at := pwConfirmedAt(t, a, entry); at != nil {
		t.Fatalf("GETs confirmed the place at %s", at)
	}

	cl.Post(form.Action, form.Values).WantRedirect(mailed)
	if pwConfirmedAt(t, a, entry) == nil {
		t.Fatal("the Confirm button did not confirm the place")
	}
	after := cl.Get(mailed).Want(http.StatusOK)
	if s, _ := pwPlace(t, after); !strings.HasPrefix(s["Status"], "Waiting.") {
		t.Errorf("the confirmed place shows %q", s)
	}
	if got := after.Text(`[data-testid="waitlist-notice"]`); !strings.Contains(got, "Your place is confirmed") {
		t.Errorf("the notice says %q", got)
	}
	if after.Doc().Find(`[data-testid="waitlist-confirm"]`).Length() != 0 {
		t.Error("a confirmed place still shows the Confirm button")
	}
	cl.Post(form.Action, nil).WantRedirect(mailed) // twice is no error

	// In German.
	other := uniqueEmail("bestaetigen")
	pwJoinNoJS(t, a.newClient(t), c, typ, pwValues(c, "Bea Bestätigend", other, today, today))
	var second uuid.UUID
	if err := a.Pool.QueryRow(context.Background(), `SELECT id FROM waitlist_entries WHERE patient_email = $1`, other).Scan(&second); err != nil {
		t.Fatal(err)
	}
	german, link := a.newClient(t), pwMailedLink(t, a, c, second)
	german.Get(link + "?lang=de") // sets the language, and leads back to the page
	de := german.Get(link).Want(http.StatusOK)
	if got := de.Text(`[data-testid="waitlist-confirm-section"]`); !strings.Contains(got, "E-Mail-Adresse Ihnen gehört") || !strings.Contains(got, "Meinen Platz bestätigen") {
		t.Errorf("the German page says %q", got)
	}
}

// The API's answer says the place is not confirmed; the token it returns
// cannot confirm it, the e-mailed link can, and the place then counts
// before a later one.
func TestWaitlistAPIPlaceIsConfirmedByMail(t *testing.T) {
	t.Parallel()
	a := queueApp(t)
	c := a.patientClinic(t)
	typ := c.Type0()
	day := c.At(4, 10, 0)
	var got struct {
		Entry struct {
			ID        uuid.UUID `json:"id"`
			Confirmed *bool     `json:"confirmed"`
		} `json:"entry"`
		Token string `json:"token"`
	}
	a.newClient(t).send(http.MethodPost, pwAPIPath(typ), pwBody(c, uniqueEmail("api-confirm"), day)).Want(http.StatusCreated).Decode(&got)
	if got.Entry.Confirmed == nil || *got.Entry.Confirmed {
		t.Fatalf("the answer's confirmed is %v, want false", got.Entry.Confirmed)
	}
	a.newClient(t).Post("/c/"+c.Slug+"/waitlist/"+got.Token+"/confirm", nil).Want(http.StatusForbidden)
	if pwConfirmedAt(t, a, got.Entry.ID) != nil {
		t.Fatal("the API's token confirmed the place")
	}
	mailed := pwMailedLink(t, a, c, got.Entry.ID)
	a.newClient(t).Post(mailed+"/confirm", nil).WantRedirect(mailed)
	if pwConfirmedAt(t, a, got.Entry.ID) == nil {
		t.Fatal("the e-mailed link did not confirm the place")
	}
}
