package staff_test

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

const newPassword = "blue whale at dawn"

func wantInvalidField(t testing.TB, err error, field, what string) {
	t.Helper()
	if ae := apperr.As(err); ae == nil || ae.Code != apperr.CodeInvalidArgument || ae.Field() != field {
		t.Errorf("%s: %v, want INVALID_ARGUMENT naming %s", what, err, field)
	}
}

// newClinicWithAdmin creates a clinic as the command line does: its admin
// has no password, only a sign-in link.
func newClinicWithAdmin(t testing.TB, pool *pgxpool.Pool) (clinics.Clinic, staff.Account, staff.Link) {
	t.Helper()
	var acc staff.Account
	var l staff.Link
	slug := "w-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	c, err := clinics.NewService(pool).Create(context.Background(), clinics.Input{
		Slug: slug, Name: "Welcome " + slug, Timezone: "Europe/Vienna", Language: "de",
	}, staff.ActorCLI, func(q *db.Queries, c clinics.Clinic) error {
		var err error
		acc, l, err = staff.CreateFirstAdmin(context.Background(), q, c.ID, "Owner-"+slug+"@Example.org", time.Now())
		return err
	})
	if err != nil {
		t.Fatalf("create clinic: %v", err)
	}
	return c, acc, l
}

func TestFirstAdminHasNoPasswordUntilTheLinkIsUsed(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	svc := newService(pool, nil)
	ctx := context.Background()
	c, acc, l := newClinicWithAdmin(t, pool)
	if acc.Role != staff.RoleAdmin || acc.ClinicID != c.ID || acc.Email != strings.ToLower(acc.Email) || c.Language != "de" {
		t.Fatalf("clinic %+v, admin %+v", c, acc)
	}
	for _, pw := range []string{"", "!no-password", newPassword} {
		_, err := svc.Authenticate(ctx, acc.Email, pw)
		testkit.WantCode(t, err, "BAD_CREDENTIALS", "sign-in before the link is used")
	}
	// Only the token's hash is stored.
	h := sha256.Sum256([]byte(l.Token))
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM staff_signin_links WHERE token_hash = $1 AND staff_user_id = $2`, h[:], acc.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("stored link by hash: %d, %v", n, err)
	}
	if d := time.Until(l.ExpiresAt); d < 23*time.Hour || d > 24*time.Hour {
		t.Fatalf("link valid for %s, want 24 h", d)
	}
	info, err := svc.PeekLink(ctx, l.Token, time.Now())
	if err != nil || info.Email != acc.Email || info.ClinicName != c.Name {
		t.Fatalf("peek: %+v, %v", info, err)
	}
	wantInvalidField(t, apperr.As(mustErr(svc.UseLink(ctx, l.Token, "too short", time.Now()))), "password", "short password")
	wantInvalidField(t, apperr.As(mustErr(svc.UseLink(ctx, l.Token, acc.Email, time.Now()))), "password", "the e-mail as password")
	u, err := svc.UseLink(ctx, l.Token, newPassword, time.Now())
	if err != nil || u.ID != acc.ID || u.Role != staff.RoleAdmin {
		t.Fatalf("use link: %+v, %v", u, err)
	}
	if _, err := svc.Authenticate(ctx, strings.ToUpper(acc.Email), newPassword); err != nil {
		t.Fatalf("sign-in with the chosen password: %v", err)
	}
	rows := testkit.AuditRows(t, pool, "staff_user", acc.ID.String())
	if testkit.CountAction(rows, "staff.create") != 1 || testkit.CountAction(rows, "staff.set_password") != 1 {
		t.Fatalf("audit rows of the admin: %+v", rows)
	}
	if n := len(testkit.AuditRows(t, pool, "clinic", c.ID.String())); n != 1 {
		t.Fatalf("audit rows of the clinic: %d", n)
	}
}

func mustErr(_ staff.User, err error) error { return err }

func TestLinkWorksOnce(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	svc := newService(pool, nil)
	ctx := context.Background()
	_, acc, l := newClinicWithAdmin(t, pool)
	if _, err := svc.UseLink(ctx, l.Token, newPassword, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err := svc.UseLink(ctx, l.Token, "another fine password", time.Now())
	testkit.WantCode(t, err, staff.CodeLinkUsed, "second use")
	_, err = svc.PeekLink(ctx, l.Token, time.Now())
	testkit.WantCode(t, err, staff.CodeLinkUsed, "look at a used link")
	if _, err := svc.Authenticate(ctx, acc.Email, "another fine password"); err == nil {
		t.Fatal("the second use changed the password")
	}
}

func TestLinkExpires(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	svc := newService(pool, nil)
	ctx := context.Background()
	_, acc, l := newClinicWithAdmin(t, pool)
	// The clock moved on 24 hours.
	later := time.Now().Add(staff.LinkLifetime)
	_, err := svc.PeekLink(ctx, l.Token, later)
	testkit.WantCode(t, err, staff.CodeLinkExpired, "peek a day later")
	_, err = svc.UseLink(ctx, l.Token, newPassword, later)
	testkit.WantCode(t, err, staff.CodeLinkExpired, "use a day later")
	// A row made a day ago has expired by the real clock too.
	_, l2, err := svc.ResetLink(ctx, acc.Email, "", time.Now().Add(-staff.LinkLifetime-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.UseLink(ctx, l2.Token, newPassword, time.Now())
	testkit.WantCode(t, err, staff.CodeLinkExpired, "use a back-dated link")
	if ae := apperr.As(err); ae.Kind != apperr.Gone {
		t.Fatalf("kind %v, want Gone", ae.Kind)
	}
}

func TestTamperedLinkIsNotFound(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	svc := newService(pool, nil)
	ctx := context.Background()
	_, _, l := newClinicWithAdmin(t, pool)
	flip := "A"
	if l.Token[5] == 'A' {
		flip = "B"
	}
	for name, tok := range map[string]string{
		"OneCharacterChanged": l.Token[:5] + flip + l.Token[6:],
		"Shortened":           l.Token[:len(l.Token)-1],
		"Longer":              l.Token + "A",
		"Empty":               "",
		"NotBase64":           strings.Repeat("!", len(l.Token)),
	} {
		_, err := svc.PeekLink(ctx, tok, time.Now())
		testkit.WantCode(t, err, apperr.CodeNotFound, name+": peek")
		_, err = svc.UseLink(ctx, tok, newPassword, time.Now())
		testkit.WantCode(t, err, apperr.CodeNotFound, name+": use")
	}
	if _, err := svc.PeekLink(ctx, l.Token, time.Now()); err != nil {
		t.Fatalf("the real link: %v", err)
	}
}

func TestResetLinkReplacesOlderLinks(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	svc := newService(pool, nil)
	ctx := context.Background()
	c, acc, first := newClinicWithAdmin(t, pool)
	got, second, err := svc.ResetLink(ctx, strings.ToUpper(acc.Email), c.Slug, time.Now())
	if err != nil || got.ID != acc.ID || second.Token == first.Token {
		t.Fatalf("reset: %+v, %v", got, err)
	}
	_, err = svc.UseLink(ctx, first.Token, newPassword, time.Now())
	testkit.WantCode(t, err, staff.CodeLinkReplaced, "the older link")
	if _, err := svc.UseLink(ctx, second.Token, newPassword, time.Now()); err != nil {
		t.Fatalf("the newer link: %v", err)
	}
	_, _, err = svc.ResetLink(ctx, acc.Email, "no-such-clinic", time.Now())
	testkit.WantCode(t, err, apperr.CodeNotFound, "reset in another clinic")
	_, _, err = svc.ResetLink(ctx, "nobody-"+uuid.NewString()[:8]+"@example.org", "", time.Now())
	testkit.WantCode(t, err, apperr.CodeNotFound, "reset of an unknown account")
	_, _, err = svc.ResetLink(ctx, "not an address", "", time.Now())
	wantInvalidField(t, err, "email", "reset of a bad address")
	if n := testkit.CountAction(testkit.AuditRows(t, pool, "staff_user", acc.ID.String()), "staff.reset_password"); n != 1 {
		t.Fatalf("%d reset audit rows", n)
	}
}

// Two uses of one link at the same moment: exactly one sets the password.
func TestLinkUsedConcurrentlyOnce(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	svc := newService(pool, nil)
	ctx := context.Background()
	_, acc, l := newClinicWithAdmin(t, pool)
	passwords := []string{"first of two passwords", "second of two passwords"}
	var ok, gone atomic.Int32
	testkit.Together(len(passwords), func(i int) {
		_, err := svc.UseLink(ctx, l.Token, passwords[i], time.Now())
		switch apperr.CodeOf(err) {
		case "":
			if err == nil {
				ok.Add(1)
			}
		case staff.CodeLinkUsed:
			gone.Add(1)
		default:
			t.Errorf("use %d: %v", i, err)
		}
	})
	if ok.Load() != 1 || gone.Load() != 1 {
		t.Fatalf("%d uses succeeded, %d were refused as used; want 1 and 1", ok.Load(), gone.Load())
	}
	signedIn := 0
	for _, pw := range passwords {
		if _, err := svc.Authenticate(ctx, acc.Email, pw); err == nil {
			signedIn++
		}
	}
	var used int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM staff_signin_links WHERE staff_user_id = $1 AND used_at IS NOT NULL`, acc.ID).Scan(&used)
	if err != nil && err != pgx.ErrNoRows {
		t.Fatal(err)
	}
	if signedIn != 1 || used != 1 {
		t.Fatalf("%d passwords sign in, %d links used; want 1 and 1", signedIn, used)
	}
	if n := testkit.CountAction(testkit.AuditRows(t, pool, "staff_user", acc.ID.String()), "staff.set_password"); n != 1 {
		t.Fatalf("%d set_password audit rows, want 1", n)
	}
}
