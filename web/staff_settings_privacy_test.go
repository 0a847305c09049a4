package web_test

// The patients' data part of the settings page: the retention periods,
// the controller and the data-protection contact are saved with an audit
// row, refused in place when out of range, and kept by a form that does
// not carry them.

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

func TestSettingsPrivacy(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	admin := a.signIn(t, c.Admin)
	form := admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values
	if form.Get("retentionMonths") != "12" || form.Get("mailRetentionDays") != "30" {
		t.Fatalf("the form's periods: %v", form)
	}
	stored := func() db.Clinic {
		row, err := db.New(a.Pool).ClinicGet(context.Background(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return row
	}

	t.Run("BadFieldsAnswerInPlace", func(t *testing.T) {
		before := a.auditCount(t, c.ID)
		for _, tc := range []struct{ field, value string }{
			{"retentionMonths", "0"},
			{"retentionMonths", "121"},
			{"retentionMonths", "a year"},
			{"mailRetentionDays", "366"},
			{"mailRetentionDays", "-1"},
			{"controllerName", strings.Repeat("x", 201)},
			{"privacyContact", "dsb@praxis.example\u202E"},
		} {
			v := cloneValues(form)
			v.Set(tc.field, tc.value)
			r := admin.Post("/staff/settings", v).Want(http.StatusBadRequest)
			if r.Text(`[data-testid="`+tc.field+`-error"]`) == "" {
				t.Errorf("%s=%q: no message beside the field\n%s", tc.field, tc.value, clip(r.Body, 800))
			}
		}
		if n := a.auditCount(t, c.ID); n != before {
			t.Errorf("refused saves wrote %d audit rows", n-before)
		}
	})
	t.Run("SavedWithAudit", func(t *testing.T) {
		form := admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values
		v := cloneValues(form)
		v.Set("retentionMonths", "24")
		v.Set("mailRetentionDays", "7")
		v.Set("controllerName", "Praxis Mitte GmbH")
		v.Set("privacyContact", "Dr. Daten, dsb@praxis.example")
		admin.Post("/staff/settings", v).WantRedirect("/staff/settings?saved=1")
		got := stored()
		if got.RetentionMonths != 24 || got.MailRetentionDays != 7 || got.ControllerName != "Praxis Mitte GmbH" || got.PrivacyContact != "Dr. Daten, dsb@praxis.example" {
			t.Errorf("stored %d months, %d days, %q, %q", got.RetentionMonths, got.MailRetentionDays, got.ControllerName, got.PrivacyContact)
		}
		if row := a.lastAudit(t, c.ID); row.Action != "clinic.settings" || !strings.Contains(string(row.After), `"retentionMonths": 24`) {
			t.Errorf("audit row %s: %s", row.Action, row.After)
		}
		back := admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values
		if back.Get("retentionMonths") != "24" || back.Get("privacyContact") != "Dr. Daten, dsb@praxis.example" {
			t.Errorf("the form shows %v", back)
		}
	})
	t.Run("FormWithoutThePeriodsKeepsThem", func(t *testing.T) {
		v := cloneValues(admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values)
		v.Del("retentionMonths")
		v.Del("mailRetentionDays")
		v.Set("address", "Neue Straße 1")
		admin.Post("/staff/settings", v).WantRedirect("/staff/settings?saved=1")
		if got := stored(); got.RetentionMonths != 24 || got.MailRetentionDays != 7 || got.Address != "Neue Straße 1" {
			t.Errorf("stored %d months, %d days, address %q", got.RetentionMonths, got.MailRetentionDays, got.Address)
		}
	})
}
