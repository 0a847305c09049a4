package clinics_test

import (
	"context"
	"testing"

	"github.com/clinic/booking/internal/apperr"
)

// A clinic's country reads its patients' phone numbers: a new clinic is
// German, an admin may name any country the phone library knows, and a
// form without the field keeps it.
func TestSettingsCountry(t *testing.T) {
	t.Parallel()
	_, svc, c := newClinic(t)
	ctx := context.Background()
	st := current(t, svc, c.ID)
	if st.Country != "DE" {
		t.Fatalf("a new clinic's country is %q, want DE", st.Country)
	}
	for _, bad := range []string{"XX", "DEU", "1", "Deutschland"} {
		in := current(t, svc, c.ID)
		in.Country = bad
		_, err := svc.SaveSettings(ctx, c.ID, actor, in, false)
		if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Invalid || ae.Field() != "country" {
			t.Errorf("country %q: %v, want INVALID_ARGUMENT naming country", bad, err)
		}
	}
	in := current(t, svc, c.ID)
	in.Country = " at "
	res, err := svc.SaveSettings(ctx, c.ID, actor, in, false)
	if err != nil || res.Settings.Country != "AT" {
		t.Fatalf("save AT: %+v %v", res.Settings, err)
	}
	in = res.Settings
	in.Country, in.Name = "", "Renamed"
	if res, err = svc.SaveSettings(ctx, c.ID, actor, in, false); err != nil || res.Settings.Country != "AT" {
		t.Fatalf("a save without a country: %+v %v, want AT kept", res.Settings, err)
	}
}
