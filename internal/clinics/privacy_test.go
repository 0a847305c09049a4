package clinics_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/testkit"
)

func TestSettingsPrivacy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, svc, c := newClinic(t)
	st := current(t, svc, c.ID)
	if st.Privacy != (clinics.Privacy{RetentionMonths: 12, MailRetentionDays: 30}) {
		t.Fatalf("a clinic's starting privacy settings: %+v", st.Privacy)
	}
	t.Run("SavedAndAudited", func(t *testing.T) {
		in := current(t, svc, c.ID)
		in.Privacy = clinics.Privacy{RetentionMonths: 36, MailRetentionDays: 7, ControllerName: " Praxis Mitte GmbH ", Contact: "Dr. Datenschutz, dsb@praxis.example"}
		res, err := svc.SaveSettings(ctx, c.ID, actor, in, false)
		if err != nil {
			t.Fatal(err)
		}
		want := clinics.Privacy{RetentionMonths: 36, MailRetentionDays: 7, ControllerName: "Praxis Mitte GmbH", Contact: "Dr. Datenschutz, dsb@praxis.example"}
		if res.Settings.Privacy != want || current(t, svc, c.ID).Privacy != want {
			t.Fatalf("saved %+v, want %+v", res.Settings.Privacy, want)
		}
		rows := auditOf(t, pool, c.ID)
		last := rows[len(rows)-1]
		if last.Action != "clinic.settings" || !strings.Contains(string(last.After), `"retentionMonths": 36`) || !strings.Contains(string(last.Before), `"retentionMonths": 12`) {
			t.Fatalf("audit row %s: before %s after %s", last.Action, last.Before, last.After)
		}
	})
	t.Run("ZeroKeepsTheClinics", func(t *testing.T) {
		in := current(t, svc, c.ID)
		in.Privacy.RetentionMonths, in.Privacy.MailRetentionDays = 0, 0
		in.Address = "Elsewhere 1"
		res, err := svc.SaveSettings(ctx, c.ID, actor, in, false)
		if err != nil {
			t.Fatal(err)
		}
		if p := res.Settings.Privacy; p.RetentionMonths != 36 || p.MailRetentionDays != 7 {
			t.Fatalf("a form without the periods changed them: %+v", p)
		}
	})
	for field, p := range map[string]clinics.Privacy{
		"retentionMonths":   {RetentionMonths: 121},
		"mailRetentionDays": {MailRetentionDays: 366},
		"controllerName":    {ControllerName: strings.Repeat("x", 201)},
		"privacyContact":    {Contact: "line\nbreak"},
	} {
		t.Run("Refuses/"+field, func(t *testing.T) {
			in := current(t, svc, c.ID)
			in.Privacy = p
			_, err := svc.SaveSettings(ctx, c.ID, actor, in, false)
			testkit.WantCode(t, err, apperr.CodeInvalidArgument, field)
			if ae := apperr.As(err); ae.Field() != field {
				t.Errorf("error names %q, want %q", ae.Field(), field)
			}
		})
	}
	for _, months := range []int32{-1, 0x7fffffff} {
		in := current(t, svc, c.ID)
		in.Privacy.RetentionMonths = months
		if _, err := svc.SaveSettings(ctx, c.ID, actor, in, false); apperr.As(err) == nil {
			t.Errorf("%d months: %v", months, err)
		}
	}
}

func TestCreateWithRetention(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	svc := clinics.NewService(pool)
	in := clinics.Input{Slug: "ret-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:20], Name: "Retention", Timezone: "Europe/Berlin", RetentionMonths: 6, MailRetentionDays: 14}
	c, err := svc.Create(context.Background(), in, actor, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Privacy.RetentionMonths != 6 || c.Privacy.MailRetentionDays != 14 {
		t.Fatalf("a new clinic's periods: %+v", c.Privacy)
	}
	in.Slug, in.RetentionMonths = in.Slug+"-x", 200
	_, err = svc.Create(context.Background(), in, actor, nil)
	testkit.WantCode(t, err, apperr.CodeInvalidArgument, "200 months")
}
