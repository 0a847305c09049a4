package web_test

// Tests of the patient export's edges: who may export and what bad input
// answers, a name with markup on the page, and e-mails sent through a
// mail server (no text kept).

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	imail "github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// Only admins export: reception and staff get 403 for the form and the
// export alike, and write no audit row; a visitor is sent to sign in.
// Bad input is a 400 naming its field, an unknown patient a 404, on the
// form's page and in JSON.
func TestPatientExportRolesAndRefusals(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	email := uniqueEmail("roles")
	a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Tuesday, 9, 0), booking.Patient{Name: "Role Patient", Email: email})
	for _, role := range []string{staff.RoleReception, staff.RoleStaff} {
		cl := a.signIn(t, a.newAccount(t, c.ID, role))
		before := a.auditCount(t, c.ID)
		for _, p := range []string{exportPath(), exportPath("email", email), exportPath("email", email, "format", "json")} {
			if r := cl.Get(p); r.Status != http.StatusForbidden || strings.Contains(r.Body, "Role Patient") {
				t.Errorf("%s %s: %d, want 403", role, p, r.Status)
			}
		}
		if after := a.auditCount(t, c.ID); after != before {
			t.Errorf("%s: a refused export wrote %d audit rows", role, after-before)
		}
		if cl.Get("/staff/audit").Doc().Find(`[data-testid="export-link"]`).Length() != 0 {
			t.Errorf("%s sees the export link", role)
		}
	}
	a.newClient(t).Get(exportPath("email", email)).WantRedirect("/staff/login")

	admin := a.signIn(t, c.Admin)
	if href, _ := admin.Get("/staff/audit").Doc().Find(`[data-testid="export-link"]`).Attr("href"); href != "/staff/patients/export" {
		t.Errorf("the audit log links to %q", href)
	}
	form := admin.Get(exportPath()).Want(http.StatusOK)
	if form.Doc().Find(`form[data-testid="export-form"] input[name="email"]`).Length() != 1 {
		t.Errorf("the form page: %s", clip(form.Text("main"), 500))
	}
	for _, tc := range []struct {
		kv     []string
		status int
		field  string
	}{
		{[]string{"email", "no-at-sign"}, http.StatusBadRequest, "email"},
		{[]string{"phone", "call me"}, http.StatusBadRequest, "phone"},
		{[]string{"email", " ", "phone", ""}, http.StatusBadRequest, "email"},
		{[]string{"email", "nobody-" + email}, http.StatusNotFound, "email"},
		{[]string{"phone", "+49 89 000000"}, http.StatusNotFound, "phone"},
		{[]string{"email", email, "format", "pdf"}, http.StatusBadRequest, "format"},
	} {
		code := apperr.CodeInvalidArgument
		if tc.status == http.StatusNotFound {
			code = apperr.CodeNotFound
		}
		asJSON := http.Header{"Accept": {"application/json"}}
		if tc.field == "format" {
			wantError(t, admin.do(http.MethodGet, exportPath(tc.kv...), nil, asJSON), tc.status, code, tc.field)
			continue
		}
		wantError(t, admin.do(http.MethodGet, exportPath(append(tc.kv, "format", "json")...), nil, asJSON), tc.status, code, tc.field)
		// The form's page, as its button sends it.
		r := admin.Get(exportPath(append(tc.kv, "format", "html")...))
		if r.Status != tc.status || r.Text(`[data-testid="export-error"]`) == "" {
			t.Errorf("%v on the page: %d, error %q", tc.kv, r.Status, r.Text(`[data-testid="export-error"]`))
		}
	}
}

// A name is text on the page, never markup.
func TestPatientExportPageEscapesTheName(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	email := uniqueEmail("script")
	a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Tuesday, 9, 0), booking.Patient{Name: "Eve Script", Email: email})
	// Names with markup are refused at booking; one stored before that
	// rule, or by hand, must still be shown as text.
	if _, err := a.Pool.Exec(context.Background(), `UPDATE bookings SET patient_name = $1 WHERE clinic_id = $2`,
		`<script>alert("x")</script> Eve`, c.ID); err != nil {
		t.Fatal(err)
	}
	r := a.signIn(t, c.Admin).Get(exportPath("email", email)).Want(http.StatusOK)
	if strings.Contains(r.Body, `<script>alert`) || !strings.Contains(r.Body, `&lt;script&gt;alert(`) {
		t.Errorf("the name is not escaped: %s", clip(r.Text(`[data-testid="export-bookings"]`), 500))
	}
	if got := r.Text(`[data-testid="export-booking"]`); !strings.Contains(got, `<script>alert("x")</script> Eve`) {
		t.Errorf("the name reads %q", got)
	}
}

// With a mail server, no copy of an e-mail is kept: the export lists the
// e-mails the server accepted, sent, without a text.
func TestPatientExportThroughAMailServer(t *testing.T) {
	t.Parallel()
	srv := testkit.SMTP(t)
	cfg, err := imail.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	sender, err := imail.NewSMTP(cfg, "Clinic bookings <bookings@example.org>")
	if err != nil {
		t.Fatal(err)
	}
	a := newApp(t, withOptions(program.Options{Mail: program.MailOptions{Sender: sender, Workers: 2, Retry: fastRetry, Queue: ownQueue()}}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	email := uniqueEmail("smtp")
	a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Tuesday, 9, 0), booking.Patient{Name: "Sam Smtp", Email: email})
	waitMailsTo(t, srv, email, 1)
	exportSent(t, a, c)
	w := &exportWorld{a: a, c: c, admin: a.signIn(t, c.Admin)}
	x, _ := w.jsonExport(t, "email", email)
	var sent int
	for _, m := range x.Emails {
		if m.Subject != nil || m.Text != nil {
			t.Errorf("e-mail %s (%s) has a text though none was kept", m.ID, m.Kind)
		}
		if m.Kind == "confirmation" && m.Status == "sent" && m.SentAt != nil && m.To == email {
			sent++
		}
	}
	if sent != 1 {
		t.Errorf("the export lists %d sent confirmations: %+v", sent, x.Emails)
	}
	page := w.admin.Get(exportPath("email", email)).Want(http.StatusOK)
	if !strings.Contains(page.Text(`[data-testid="export-email"]`), "No copy of the text was kept") {
		t.Errorf("the page's e-mails: %s", page.Text(`[data-testid="export-email"]`))
	}
}
