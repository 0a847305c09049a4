package web_test

// The patients' privacy page: who answers for their data, what is kept
// and for how long (the clinic's retention settings), whom to ask; in
// English and German; linked from the footer of every patient page.

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func (a *app) setPrivacy(t *testing.T, c clinic, months, days int, controller, contact string) {
	t.Helper()
	if _, err := a.Pool.Exec(context.Background(), `UPDATE clinics SET retention_months = $2, mail_retention_days = $3,
		controller_name = $4, privacy_contact = $5, contact_email = 'desk@praxis.example' WHERE id = $1`,
		c.ID, months, days, controller, contact); err != nil {
		t.Fatal(err)
	}
}

func TestPrivacyPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	path := "/c/" + c.Slug + "/privacy"

	t.Run("DefaultsInEnglish", func(t *testing.T) {
		r := a.newClient(t).Get(path).Want(http.StatusOK)
		wantFullPage(t, r)
		if got := r.Text(`[data-testid="privacy-controller"]`); !strings.Contains(got, c.Name+" is responsible") {
			t.Errorf("controller: %q", got)
		}
		if got := r.Text(`[data-testid="privacy-months"]`); !strings.Contains(got, "for 12 months after your appointment") {
			t.Errorf("months: %q", got)
		}
		if got := r.Text(`[data-testid="privacy-days"]`); !strings.Contains(got, "for 30 days after sending") {
			t.Errorf("days: %q", got)
		}
		if got := r.Text(`[data-testid="privacy-address"]`); !strings.Contains(got, "Hauptstraße 5") {
			t.Errorf("address: %q", got)
		}
		if r.Doc().Find(`[data-testid="privacy-contact"]`).Length() != 0 {
			t.Error("a data-protection contact shown, none set")
		}
		if stored := r.Text(`[data-testid="privacy-stored"]`); !strings.Contains(stored, "e-mail address") || !strings.Contains(stored, "e-mails we send you") {
			t.Errorf("what is stored: %q", stored)
		}
	})
	t.Run("TheNumbersFollowTheSettings", func(t *testing.T) {
		a.setPrivacy(t, c, 18, 7, "Praxis Mitte GmbH", "Dr. Daten, dsb@praxis.example")
		r := a.newClient(t).Get(path).Want(http.StatusOK)
		for sel, want := range map[string]string{
			"privacy-controller": "Praxis Mitte GmbH is responsible",
			"privacy-months":     "for 18 months after",
			"privacy-days":       "for 7 days after",
			"privacy-contact":    "Data-protection contact: Dr. Daten, dsb@praxis.example",
			"privacy-rights":     "erased, or anything else about it: Dr. Daten, dsb@praxis.example.",
			"privacy-address":    "desk@praxis.example",
		} {
			if got := r.Text(`[data-testid="` + sel + `"]`); !strings.Contains(got, want) {
				t.Errorf("%s: %q, want %q in it", sel, got, want)
			}
		}
		a.setPrivacy(t, c, 1, 1, "", "")
		r = a.newClient(t).Get(path).Want(http.StatusOK)
		if got := r.Text(`[data-testid="privacy-months"]`); !strings.Contains(got, "for 1 month after") {
			t.Errorf("one month: %q", got)
		}
		if got := r.Text(`[data-testid="privacy-rights"]`); !strings.Contains(got, "desk@praxis.example") {
			t.Errorf("without a data-protection contact, ask the clinic: %q", got)
		}
	})
	t.Run("InGerman", func(t *testing.T) {
		a.setPrivacy(t, c, 24, 14, "", "")
		r := getIn(a.newClient(t), path, "de").Want(http.StatusOK)
		if lang, _ := r.Doc().Find("html").Attr("lang"); lang != "de" {
			t.Fatalf("lang %q", lang)
		}
		for sel, want := range map[string]string{
			"privacy-controller": c.Name + " ist für die personenbezogenen Daten verantwortlich",
			"privacy-months":     "24 Monate nach Ihrem Termin",
			"privacy-days":       "14 Tage nach dem Versand",
			"privacy-rights":     "Kopie Ihrer Daten",
			"privacy-link":       "Datenschutz",
		} {
			if got := r.Text(`[data-testid="` + sel + `"]`); !strings.Contains(got, want) {
				t.Errorf("%s: %q, want %q in it", sel, got, want)
			}
		}
	})
	t.Run("UnknownClinic", func(t *testing.T) {
		a.newClient(t).Get("/c/no-such-clinic-" + uuid.NewString()[:8] + "/privacy").Want(http.StatusNotFound)
	})
}

func TestPrivacyLinkedFromEveryPatientPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ := c.Type0()
	want := "/c/" + c.Slug + "/privacy"
	cl := a.newClient(t)
	token := bookViaPages(t, cl, c, typ, c.Specialists[0].ID, c.At(2, 10, 0), "Lina Link", "lina@example.org")
	for _, path := range []string{
		"/c/" + c.Slug,
		c.BookURL(typ, c.At(1, 10, 0), uuid.Nil),
		findPath(c),
		"/manage/" + token,
		"/manage/" + token + "/reschedule",
		want,
	} {
		r := cl.Get(path).Want(http.StatusOK)
		if href, _ := r.Doc().Find(`footer [data-testid="privacy-link"]`).Attr("href"); href != want {
			t.Errorf("%s: the footer links %q, want %s", path, href, want)
		}
	}
	// Staff pages are the clinic's own, not the patients'.
	if r := a.signIn(t, c.Admin).Get("/staff/settings").Want(http.StatusOK); r.Doc().Find(`[data-testid="privacy-link"]`).Length() != 0 {
		t.Error("a staff page links the patients' privacy page")
	}
}
