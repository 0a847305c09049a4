package clinics_test

import (
	"context"
	"testing"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clinics"
)

// A clinic asks past the allowance until its admin says otherwise; a
// save without the field (a form from before it) keeps what was set, and
// a value not offered is refused naming the field.
func TestSettingsVerificationKeptAndChecked(t *testing.T) {
	t.Parallel()
	_, svc, c := newClinic(t)
	st := current(t, svc, c.ID)
	if st.Verification != clinics.VerifyPastAllowance {
		t.Fatalf("a new clinic's verification is %q", st.Verification)
	}
	in := st
	in.Verification = clinics.VerifyAlways
	res, err := svc.SaveSettings(context.Background(), c.ID, actor, in, false)
	if err != nil {
		t.Fatal(err)
	}
	in = res.Settings
	in.Name, in.Verification = "Renamed", ""
	res, err = svc.SaveSettings(context.Background(), c.ID, actor, in, false)
	if err != nil || res.Settings.Verification != clinics.VerifyAlways {
		t.Fatalf("a save without the field: %+v, %v", res.Settings, err)
	}
	in = res.Settings
	in.Verification = "sometimes"
	_, err = svc.SaveSettings(context.Background(), c.ID, actor, in, false)
	if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Invalid || ae.Field() != "verification" {
		t.Fatalf("a value not offered: %v", err)
	}
}
