package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// cli runs the command as main does, against the test database, with
// PUBLIC_URL set; it returns what it printed and its error (main exits 1
// on an error).
type cli struct {
	t    *testing.T
	pool *pgxpool.Pool
}

func newCLI(t *testing.T) cli { return cli{t: t, pool: testkit.DB(t)} }

func (c cli) run(args ...string) (string, error) {
	c.t.Helper()
	env := map[string]string{"DATABASE_URL": c.pool.Config().ConnString(), "PUBLIC_URL": "https://booking.example.org/"}
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := run(ctx, args, func(k string) string { return env[k] }, &out, &errb)
	return out.String() + errb.String(), err
}

var linkRe = regexp.MustCompile(`https://booking\.example\.org/staff/welcome/([A-Za-z0-9_-]{43})\b`)

// token is the token of the one sign-in link out prints.
func (c cli) token(out string) string {
	c.t.Helper()
	m := linkRe.FindAllStringSubmatch(out, -1)
	if len(m) != 1 {
		c.t.Fatalf("want one sign-in link in:\n%s", out)
	}
	return m[0][1]
}

func uniqueSlug() string { return "cli-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12] }

func TestClinicCreateAndList(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	slug := uniqueSlug()
	email := "Owner-" + slug + "@Example.org"
	out, err := c.run("clinic", "create", "--slug", slug, "--name", "Praxis Sonnenschein", "--timezone", "Europe/Berlin",
		"--address", "Hauptstraße 5, Berlin", "--admin-email", email, "--language", "de")
	if err != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	token := c.token(out)
	ctx := context.Background()
	var name, zone, lang, role, hash string
	var staffCount, audits, links int
	err = c.pool.QueryRow(ctx, `SELECT c.name, c.timezone, c.language, u.role, u.password_hash,
		(SELECT count(*) FROM staff_users WHERE clinic_id = c.id),
		(SELECT count(*) FROM audit_log WHERE clinic_id = c.id AND action IN ('clinic.create', 'staff.create')),
		(SELECT count(*) FROM staff_signin_links WHERE token_hash = $2 AND staff_user_id = u.id)
		FROM clinics c JOIN staff_users u ON u.clinic_id = c.id WHERE c.slug = $1`, slug, sha(token)).
		Scan(&name, &zone, &lang, &role, &hash, &staffCount, &audits, &links)
	if err != nil {
		t.Fatal(err)
	}
	if name != "Praxis Sonnenschein" || zone != "Europe/Berlin" || lang != "de" || role != "admin" || staffCount != 1 || audits != 2 || links != 1 {
		t.Fatalf("stored: %s %s %s %s, %d staff, %d audit rows, %d links", name, zone, lang, role, staffCount, audits, links)
	}
	if strings.HasPrefix(hash, "$2") {
		t.Fatal("the admin has a usable password before the link is used")
	}
	info, err := staff.New(c.pool, nil, nil).PeekLink(ctx, token, time.Now())
	if err != nil || info.Email != strings.ToLower(email) {
		t.Fatalf("the printed link: %+v, %v", info, err)
	}

	out, err = c.run("clinic", "list")
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if !regexp.MustCompile(`(?m)^` + slug + `\s+Praxis Sonnenschein\s+Europe/Berlin\s+de\s+1$`).MatchString(out) {
		t.Fatalf("list does not show the clinic with its 1 staff account:\n%s", out)
	}
	// The default language is English.
	slug2 := uniqueSlug()
	if out, err := c.run("clinic", "create", "--slug", slug2, "--name", "Second", "--timezone", "America/New_York", "--admin-email", "o-"+slug2+"@example.org"); err != nil {
		t.Fatalf("create without --language: %v\n%s", err, out)
	}
	if err := c.pool.QueryRow(ctx, `SELECT language FROM clinics WHERE slug = $1`, slug2).Scan(&lang); err != nil || lang != "en" {
		t.Fatalf("default language %q, %v", lang, err)
	}
}

func sha(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

func TestClinicCreateRefusals(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	taken := uniqueSlug()
	if out, err := c.run("clinic", "create", "--slug", taken, "--name", "First", "--timezone", "Europe/Berlin", "--admin-email", "a-"+taken+"@example.org"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, tc := range []struct {
		name string
		edit func(flags map[string]string)
		says string
	}{
		{"BadSlug", func(f map[string]string) { f["slug"] = "My_Clinic" }, "--slug"},
		{"SlugWithCapitals", func(f map[string]string) { f["slug"] = "Clinic" }, "--slug"},
		{"TakenSlug", func(f map[string]string) { f["slug"] = taken }, "--slug: The slug"},
		{"UnknownZone", func(f map[string]string) { f["timezone"] = "Mars/Olympus_Mons" }, "--timezone"},
		{"BadEmail", func(f map[string]string) { f["admin-email"] = "not-an-address" }, "--admin-email"},
		// The clinic and its admin are one transaction: no clinic without its admin.
		{"TakenEmail", func(f map[string]string) { f["admin-email"] = "a-" + taken + "@example.org" }, "--admin-email"},
		{"BadLanguage", func(f map[string]string) { f["language"] = "fr" }, "--language"},
		{"MissingName", func(f map[string]string) { delete(f, "name") }, "missing --name"},
		{"MissingAdminEmail", func(f map[string]string) { delete(f, "admin-email") }, "missing --admin-email"},
		{"UnknownFlag", func(f map[string]string) { f["colour"] = "blue" }, "colour"},
	} {
		slug := uniqueSlug()
		flags := map[string]string{"slug": slug, "name": "Refused", "timezone": "Europe/Berlin", "admin-email": "r-" + slug + "@example.org"}
		tc.edit(flags)
		args := []string{"clinic", "create"}
		for k, v := range flags {
			args = append(args, "--"+k, v)
		}
		out, err := c.run(args...)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: error %v, want one saying %q; printed:\n%s", tc.name, err, tc.says, out)
		}
		if linkRe.MatchString(out) {
			t.Errorf("%s: a link was printed", tc.name)
		}
		var n int
		if err := c.pool.QueryRow(context.Background(), `SELECT count(*) FROM clinics WHERE slug = $1`, slug).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: the clinic was created (%d, %v)", tc.name, n, err)
		}
	}
	if _, err := c.run("clinic", "nonsense"); err == nil {
		t.Error("an unknown clinic subcommand passes")
	}
}

func TestStaffResetPassword(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	slug := uniqueSlug()
	email := "owner-" + slug + "@example.org"
	out, err := c.run("clinic", "create", "--slug", slug, "--name", "Reset", "--timezone", "Europe/Berlin", "--admin-email", email)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	first := c.token(out)
	out, err = c.run("staff", "reset-password", "--email", strings.ToUpper(email), "--clinic", slug)
	if err != nil {
		t.Fatalf("reset: %v\n%s", err, out)
	}
	second := c.token(out)
	svc := staff.New(c.pool, nil, nil)
	ctx := context.Background()
	if _, err := svc.PeekLink(ctx, first, time.Now()); apperr.CodeOf(err) != staff.CodeLinkReplaced {
		t.Fatalf("the first link after a reset: %v", err)
	}
	if _, err := svc.UseLink(ctx, second, "a brand new password", time.Now()); err != nil {
		t.Fatalf("the new link: %v", err)
	}
	for name, args := range map[string][]string{
		"UnknownAccount": {"--email", "nobody-" + slug + "@example.org"},
		"OtherClinic":    {"--email", email, "--clinic", "not-" + slug},
		"BadEmail":       {"--email", "nobody"},
		"MissingEmail":   {"--clinic", slug},
	} {
		out, err := c.run(append([]string{"staff", "reset-password"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "--email") || linkRe.MatchString(out) {
			t.Errorf("%s: %v, want an error naming --email and no link; printed:\n%s", name, err, out)
		}
	}
}
