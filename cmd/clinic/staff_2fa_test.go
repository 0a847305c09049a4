package main

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/secret"
)

// `clinic staff reset-2fa`: the account's second factor and recovery codes
// are gone, its sessions (listed or not) end, another account's stay, and
// the audit row names the command line.
func TestStaffResetSecondFactor(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ctx := context.Background()
	slug := uniqueSlug()
	email := "owner-" + slug + "@example.org"
	if out, err := c.run("clinic", "create", "--slug", slug, "--name", "Praxis", "--timezone", "Europe/Berlin", "--admin-email", email); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var id, clinicID uuid.UUID
	if err := c.pool.QueryRow(ctx, `SELECT id, clinic_id FROM staff_users WHERE email = $1`, email).Scan(&id, &clinicID); err != nil {
		t.Fatal(err)
	}
	var other uuid.UUID
	if err := c.pool.QueryRow(ctx, `INSERT INTO staff_users (clinic_id, email, password_hash, role) VALUES ($1, $2, 'x', 'staff') RETURNING id`,
		clinicID, "colleague-"+slug+"@example.org").Scan(&other); err != nil {
		t.Fatal(err)
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := c.pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO staff_second_factors (staff_user_id, secret_sealed, confirmed_at) VALUES ($1, '\x0102', now())`, id)
	exec(`INSERT INTO staff_recovery_codes (staff_user_id, code_hash) VALUES ($1, '\x01'), ($1, '\x02')`, id)
	// Two sessions of the account (one in the list of sessions, one from
	// before it) and one of the colleague's.
	session := func(user uuid.UUID, listed bool) string {
		t.Helper()
		token, err := secret.NewToken(32)
		if err != nil {
			t.Fatal(err)
		}
		data, err := scs.GobCodec{}.Encode(time.Now().Add(time.Hour), map[string]any{"staffId": user.String()})
		if err != nil {
			t.Fatal(err)
		}
		exec(`INSERT INTO sessions (token, data, expiry) VALUES ($1, $2, now() + interval '1 hour')`, token, data)
		if listed {
			sum := sha256.Sum256([]byte(token))
			exec(`INSERT INTO staff_sessions (token_hash, staff_user_id, signed_in_at, last_seen_at) VALUES ($1, $2, now(), now())`, sum[:], user)
		}
		return token
	}
	listed, unlisted, colleague := session(id, true), session(id, false), session(other, true)

	out, err := c.run("staff", "reset-2fa", "--clinic", slug, "--email", strings.ToUpper(email))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "second factor of "+email+" at "+slug+" is reset") || !strings.Contains(out, "sessions were ended") {
		t.Errorf("it printed:\n%s", out)
	}
	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		if err := c.pool.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT count(*) FROM staff_second_factors WHERE staff_user_id = $1`, id) + count(`SELECT count(*) FROM staff_recovery_codes WHERE staff_user_id = $1`, id); n != 0 {
		t.Errorf("%d rows of the second factor left", n)
	}
	for name, token := range map[string]string{"listed": listed, "unlisted": unlisted} {
		if count(`SELECT count(*) FROM sessions WHERE token = $1`, token) != 0 {
			t.Errorf("the account's %s session is still in the store", name)
		}
	}
	if count(`SELECT count(*) FROM sessions WHERE token = $1`, colleague) != 1 {
		t.Error("the colleague's session ended too")
	}
	if count(`SELECT count(*) FROM audit_log WHERE clinic_id = $1 AND action = 'staff.reset_second_factor' AND actor = 'cli' AND entity_id = $2`, clinicID, id.String()) != 1 {
		t.Error("no audit row of the reset")
	}

	out, err = c.run("staff", "reset-2fa", "--clinic", slug, "--email", email)
	if err != nil || !strings.Contains(out, "had no second factor") {
		t.Errorf("a second reset: %v\n%s", err, out)
	}
	for name, args := range map[string][]string{
		"UnknownAccount": {"--clinic", slug, "--email", "nobody-" + slug + "@example.org"},
		"OtherClinic":    {"--clinic", "not-" + slug, "--email", email},
		"BadEmail":       {"--clinic", slug, "--email", "nobody"},
		"MissingClinic":  {"--email", email},
	} {
		if out, err := c.run(append([]string{"staff", "reset-2fa"}, args...)...); err == nil {
			t.Errorf("%s: no error; printed:\n%s", name, out)
		}
	}
}
