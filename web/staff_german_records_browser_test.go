package web_test

// The staff's records, waitlist and sign-in pages for a staff member whose
// browser asks for German, in headless Chromium: from the sign-in form to
// the Outbox (searched), Patients, the audit log, a patient's export, the
// record of who looked, the waitlist with an offer made by hand, Your
// account, the second factor's set-up and code, and a sign-in link's
// password form, no page says an English sentence of the catalogue or an
// appointment type's English name, and axe finds nothing serious.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/seed"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// germanStaffWorld is a clinic whose types have German names, with a
// patient who booked and one who waits, both in German.
type germanStaffWorld struct {
	a       *app
	c       clinic
	english []string
	booked  string // the booked patient's address
	waiting waitlist.Entry
}

func newGermanStaffWorld(t *testing.T) *germanStaffWorld {
	t.Helper()
	a := keepingApp(t)
	c := a.deskClinic(t)
	ctx := context.Background()
	for name, de := range map[string]string{"Consultation": "Beratung", "Check-up": "Vorsorge"} {
		if _, err := a.Pool.Exec(ctx, `UPDATE appointment_types SET translations = jsonb_build_object('de', jsonb_build_object('name', $3::text))
			WHERE clinic_id = $1 AND name = $2`, c.ID, name, de); err != nil {
			t.Fatal(err)
		}
	}
	// The test clinic's specialists are named "Specialist ...": a German
	// practice's are not.
	if _, err := a.Pool.Exec(ctx, `UPDATE specialists SET name = 'Dr. Berg ' || left(id::text, 4) WHERE clinic_id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
	w := &germanStaffWorld{a: a, c: c, booked: uniqueEmail("greta")}
	w.english = append(englishOf(t, seed.Demo{}), "Consultation", "Check-up")
	req := deskBooking(c, c.Type0(), c.Specialists[0].ID, c.Next(time.Wednesday, 9, 0), booking.Patient{Name: "Greta Gast", Email: w.booked, Phone: "+49 30 555 0199"})
	req.Language = "de"
	if _, err := a.Deps.Bookings.Book(ctx, req); err != nil {
		t.Fatal(err)
	}
	thu := c.Next(time.Thursday, 9, 0)
	email := uniqueEmail("wanda")
	e, _, err := a.Deps.Waitlist.Join(ctx, waitlist.JoinRequest{
		ClinicID: c.ID, AppointmentTypeID: c.Types[1].ID,
		From: thu.In(c.Loc).Format(time.DateOnly), To: thu.In(c.Loc).Format(time.DateOnly),
		Patient:  booking.Patient{Name: "Wanda Warte", Email: email, Phone: "+49 30 555 0198"},
		ClientID: "c-" + email, Language: "de",
	})
	if err != nil {
		t.Fatal(err)
	}
	pwConfirm(t, a, c, e.ID)
	w.waiting = e
	keptMessage(t, a.signIn(t, c.Admin), w.booked)
	return w
}

// germanPage opens path, waits for visible and wants it German and axe
// clean.
func (w *germanStaffWorld) germanPage(t *testing.T, tab *browserTab, path, visible string) {
	t.Helper()
	openPage(t, tab, w.a.URL+path, visible)
	w.wantGerman(t, tab, path)
}

// wantGerman fails for English on the page shown, or for axe's serious
// findings there.
func (w *germanStaffWorld) wantGerman(t *testing.T, tab *browserTab, what string) {
	t.Helper()
	if lang := evalJS[string](tab, `document.documentElement.lang`); lang != "de" {
		t.Errorf("%s: the page's language is %q", what, lang)
	}
	noEnglish(t, what, recordsText(tab), w.english)
	if v := axeSerious(t, tab); len(v) > 0 {
		t.Errorf("axe on %s: %s", what, strings.Join(v, "; "))
	}
}

// recordsText is the page's words: its text but the staff header's (its
// navigation is the frame's, checked with the frame's pages) and but the
// codes it quotes (audit actions, ids, stored JSON).
func recordsText(tab *browserTab) string {
	return evalJS[string](tab, `(() => {
		const b = document.body.cloneNode(true);
		b.querySelectorAll(".staff-head, code").forEach(e => e.remove());
		document.documentElement.appendChild(b);
		const text = b.innerText;
		b.remove();
		return text;
	})()`)
}

func TestE2EBrowserStaffRecordsInGerman(t *testing.T) {
	t.Parallel()
	needChromium(t)
	w := newGermanStaffWorld(t)
	tab := startBrowser(t, "German staff", 1280, 900)
	defer tab.Report()
	tab.Do(polishWait, "a German browser", askingFor("de-DE,de;q=0.9"))

	w.germanPage(t, tab, "/staff/login", `#email`)
	if h := innerText(tab, "h1"); h != "Anmeldung für das Praxisteam" {
		t.Errorf("the sign-in page's heading is %q", h)
	}
	tab.Do(polishWait, "a wrong password",
		chromedp.SendKeys(chromedp.CSS(`#email`), w.c.Admin.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), "not the password"),
		chromedp.Click(chromedp.CSS(`form[action="/staff/login"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-error"]`)),
	)
	w.wantGerman(t, tab, "the refused sign-in")
	signInBrowser(tab, w.a, w.c.Admin)

	w.germanRecords(t, tab)
	w.germanWaitlist(t, tab)
	w.germanAccount(t, tab)
}

// germanRecords walks the admin's records of the patient who booked.
func (w *germanStaffWorld) germanRecords(t *testing.T, tab *browserTab) {
	t.Helper()
	w.germanPage(t, tab, "/staff/outbox?kind=confirmation&to=greta", `[data-testid="outbox-row"]`)
	if row := innerText(tab, `[data-testid="outbox-row"]`); !strings.Contains(row, "Buchungsbestätigung") {
		t.Errorf("the outbox's row does not name the confirmation in German: %q", row)
	}
	tab.Do(polishWait, "open the message",
		chromedp.Click(chromedp.CSS(`[data-testid="outbox-row"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="subject"]`)),
	)
	w.wantGerman(t, tab, "the kept message")
	q := "?email=" + w.booked
	w.germanPage(t, tab, "/staff/patients"+q, `[data-testid="patients-held"]`)
	if b := innerText(tab, `[data-testid="patients-bookings"]`); !strings.Contains(b, "Beratung") || !strings.Contains(b, "Gebucht (bevorstehend)") {
		t.Errorf("the patient's booking is not said in German: %q", b)
	}
	w.germanPage(t, tab, "/staff/patients/export"+q+"&format=html", `[data-testid="patient-export"]`)
	if b := innerText(tab, `[data-testid="export-bookings"]`); !strings.Contains(b, "Beratung") || !strings.Contains(b, "Gebucht") {
		t.Errorf("the export's booking is not said in German: %q", b)
	}
	w.germanPage(t, tab, "/staff/access"+q, `[data-testid="access-looks"]`)
	w.germanPage(t, tab, "/staff/users/"+w.c.Admin.ID.String()+"/access", `[data-testid="access-staff"]`)
	w.germanPage(t, tab, "/staff/audit", `[data-testid="audit"]`)
}

// germanWaitlist offers the waiting patient a time by hand, and asks
// whether to remove them.
func (w *germanStaffWorld) germanWaitlist(t *testing.T, tab *browserTab) {
	t.Helper()
	w.germanPage(t, tab, "/staff/waitlist", `[data-testid="waitlist-row"]`)
	if ty := innerText(tab, `[data-testid="wl-type"]`); ty != "Vorsorge" {
		t.Errorf("the waitlist names the type %q, want its German name", ty)
	}
	tab.Do(polishWait, "open the offer page",
		chromedp.Click(chromedp.CSS(`[data-testid="wl-offer"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="wl-time"]`)),
	)
	w.wantGerman(t, tab, "the offer page")
	tab.Do(polishWait, "offer the first time",
		chromedp.Click(chromedp.CSS(`[data-testid="wl-time"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="notice"]`)),
	)
	w.wantGerman(t, tab, "the waitlist with the offer made")
	testkit.WaitFor(t, mailWait, "the offer to stand", func() bool {
		var n int
		err := w.a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM waitlist_offers WHERE entry_id = $1 AND state = 'open'`, w.waiting.ID).Scan(&n)
		return err == nil && n == 1
	})
	w.germanPage(t, tab, "/staff/waitlist", `[data-testid="waitlist-row"]`)
	if st := innerText(tab, `[data-testid="wl-state"]`); !strings.HasPrefix(st, "Angeboten") {
		t.Errorf("the offered place's state reads %q", st)
	}
	tab.Do(polishWait, "ask to remove",
		chromedp.Click(chromedp.CSS(`[data-testid="wl-remove"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="wl-remove-summary"]`)),
	)
	w.wantGerman(t, tab, "the question before removing")
}

// germanAccount walks Your account, a refused password change, the
// second factor's set-up and the code step of the next sign-in, and a
// sign-in link's form.
func (w *germanStaffWorld) germanAccount(t *testing.T, tab *browserTab) {
	t.Helper()
	w.germanPage(t, tab, "/staff/account", `[data-testid="account"]`)
	tab.Do(polishWait, "change the password with a wrong current one",
		chromedp.SendKeys(chromedp.CSS(`#current`), "not the password"),
		chromedp.SendKeys(chromedp.CSS(`#password`), "seven silver lanterns"),
		chromedp.SendKeys(chromedp.CSS(`#confirm`), "seven silver lanterns"),
		chromedp.Click(chromedp.CSS(`[data-testid="password-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#current-error`)),
	)
	w.wantGerman(t, tab, "the refused password change")
	if e := innerText(tab, `#current-error`); !strings.Contains(e, "aktuelles Passwort") {
		t.Errorf("the wrong current password reads %q", e)
	}
	w.germanPage(t, tab, "/staff/account/second-factor", `[data-testid="totp-secret"]`)
	f := factor{Secret: innerText(tab, `[data-testid="totp-secret"]`)}
	tab.Do(polishWait, "a wrong first code",
		chromedp.SendKeys(chromedp.CSS(`#code`), "000000"),
		chromedp.Click(chromedp.CSS(`[data-testid="second-factor-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="second-factor-error"]`)),
	)
	w.wantGerman(t, tab, "the refused first code")
	tab.Do(polishWait, "the right first code",
		chromedp.SendKeys(chromedp.CSS(`#code`), f.code(t, time.Now())),
		chromedp.Click(chromedp.CSS(`[data-testid="second-factor-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="recovery-code"]`)),
	)
	w.wantGerman(t, tab, "the recovery codes")
	tab.Do(polishWait, "sign out and in again",
		chromedp.Click(chromedp.CSS(`form[action="/staff/logout"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), w.c.Admin.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`form[action="/staff/login"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-code"]`)),
	)
	w.wantGerman(t, tab, "the code step")
	code, err := totp.GenerateCode(f.Secret, time.Now().Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	tab.Do(polishWait, "the code",
		chromedp.SendKeys(chromedp.CSS(`#code`), code),
		chromedp.Click(chromedp.CSS(`form[action="/staff/login/code"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.staff-head`)),
	)
	_, _, link := w.a.linkedAdmin(t)
	w.germanPage(t, tab, link, `[data-testid="choose-password"]`)
	tab.Do(polishWait, "two different passwords",
		chromedp.SendKeys(chromedp.CSS(`#password`), "seven silver lanterns"),
		chromedp.SendKeys(chromedp.CSS(`#confirm`), "eight golden lanterns"),
		chromedp.Click(chromedp.CSS(`[data-testid="choose-password"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm-error`)),
	)
	w.wantGerman(t, tab, "the refused password")
	if r := w.a.newClient(t).Get(link); r.Status != http.StatusOK {
		t.Errorf("the refused form used the link up: %d", r.Status)
	}
}
