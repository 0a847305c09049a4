package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// noCooldownClinic is a one-specialist clinic whose type lets a patient
// book again at once.
func noCooldownClinic(t *testing.T, a *app) clinic {
	t.Helper()
	return a.clinic(t, testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{{
		Name: "Consultation", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, CooldownMin: 0, MaxHoldsPerClient: 1,
	}}})
}

// The booking form past its address's allowance: the code step keeps the
// hold shown, a wrong code says how many tries are left, the right one
// books and leaves a cookie with which the same patient books again
// without a code.
func TestPageCodeStepPastTheAllowance(t *testing.T) {
	t.Parallel()
	avoidHourEdge(time.Minute)
	a, srv := verifyApp(t, program.Options{})
	c := noCooldownClinic(t, a)
	typ, sp := c.Type0(), c.Specialists[0].ID
	starts := freeStarts(c, 5)
	cl := a.newClient(t)
	for i := range 3 {
		p := invented(i)
		bookViaPages(t, cl, c, typ, sp, starts[i], p.Name, p.Email)
	}

	p := invented(3)
	held := holdNoJS(t, cl, c, typ, sp, starts[3]).Want(http.StatusOK)
	f := detailsForm(t, held.Doc(), p.Name, p.Email, "")
	step := cl.Post(f.Action, f.Values).Want(http.StatusPreconditionRequired)
	panel := step.Doc().Find(`[data-testid="code-step"]`)
	if panel.Length() != 1 || !strings.Contains(text(panel), p.Email) || !strings.Contains(text(panel), "Monday") {
		t.Fatalf("the code step does not show the held time and the address: %q", text(panel))
	}
	code := codeSentTo(t, srv, 1, p.Email)

	cf := formOf(t, step.Doc().Find(`[data-testid="code-form"]`), "code form")
	if cf.Values.Get("email") != p.Email || cf.Values.Get("name") != p.Name {
		t.Fatalf("the code form does not carry what was typed: %v", cf.Values)
	}
	cf.Values.Set("code", wrongCode(t, code))
	wrong := cl.Post(cf.Action, cf.Values).Want(http.StatusUnprocessableEntity)
	if msg := wrong.Text(`[data-testid="code-error"]`); !strings.Contains(msg, "4 tries left") {
		t.Fatalf("wrong code says %q", msg)
	}
	cf.Values.Set("code", code)
	booked := cl.Post(cf.Action, cf.Values).Want(http.StatusSeeOther)
	if !managePath.MatchString(booked.Header.Get("Location")) {
		t.Fatalf("the right code leads to %q", booked.Header.Get("Location"))
	}
	ck := booked.Cookie("clinic_verified")
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.MaxAge < 29*24*3600 {
		t.Fatalf("verified cookie %+v", ck)
	}

	// The same patient again: the cookie verifies them, no code.
	bookViaPages(t, cl, c, typ, sp, starts[4], p.Name, p.Email)
	if got := len(srv.Messages()); got != 1 {
		t.Fatalf("%d codes sent, want 1", got)
	}
}

// wrongCode is a six-digit code that is not code.
func wrongCode(t *testing.T, code string) string {
	t.Helper()
	return fmt.Sprintf("%06d", (mustAtoi(t, code)+1)%1000000)
}
