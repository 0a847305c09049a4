package privacy_test

// The erasure's parts the end-to-end test cannot reach: the Redis keys
// named after the address (a live verification code and the count of
// codes sent), the client's cooldown keys, a staff session's notice that
// names the patient, and the ledger (keyed hashes only; an entry of
// another key matches nothing).

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/verify"
)

type nopSender struct{}

func (nopSender) Send(context.Context, mail.Message) error { return nil }

func TestEraseRedisSessionsAndLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, rdb := testkit.DB(t), testkit.Redis(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	scope := uuid.NewString() + ":"
	ob, err := outbox.New(pool, outbox.Config{PublicURL: "http://clinic.test", Queue: "mail_" + strings.ReplaceAll(uuid.NewString(), "-", "")})
	if err != nil {
		t.Fatal(err)
	}
	store := holds.NewStore(rdb, 0, nil)
	bookings := booking.New(pool, booking.Options{TxHooks: []booking.TxHook{{Name: "e-mails", After: ob.Enqueue}}})
	ledgerFile := filepath.Join(t.TempDir(), "ledger")
	svc := privacy.New(privacy.Config{Pool: pool, Redis: rdb, Bookings: bookings, Holds: store, Outbox: ob,
		Ledger: privacy.NewLedger(ledgerFile, []byte(strings.Repeat("k", 32))), LimitScope: scope})
	email := "lena." + strings.ReplaceAll(uuid.NewString(), "-", "")[:10] + "@example.org"
	name := "Lena Sichtbar"

	loc := testkit.Zone(t, c.Timezone)
	b, err := bookings.Book(ctx, booking.BookRequest{AppointmentTypeID: c.Types[0].ID, SpecialistID: c.Specialists[0].ID,
		Start: testkit.NextWeekday(time.Now(), loc, time.Tuesday, 9, 0), Patient: booking.Patient{Name: name, Email: email},
		Actor: "staff:x", ClientID: "b_client"})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SetCooldown(ctx, c.ID, "b_client", c.Types[0].ID, b.Booking.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	v := verify.New(rdb, verify.Config{Sender: nopSender{}, Key: []byte(strings.Repeat("v", 32)), Scope: scope,
		Codes:          ratelimit.New(rdb, scope+"code-recipient", 5, time.Hour, nil),
		CodesByAddress: ratelimit.New(rdb, scope+"code-address", 10, time.Hour, nil)})
	if _, err := v.SendCode(ctx, email, "192.0.2.1", "en", time.Minute); err != nil {
		t.Fatal(err)
	}
	before := scopeKeys(t, rdb, "*"+scope+"*")
	if len(before) < 2 {
		t.Fatalf("the code's keys: %v", before)
	}
	// A staff session whose notice names the patient.
	staffData, err := scs.GobCodec{}.Encode(time.Now().Add(time.Hour), map[string]any{"staffId": "x", "waitlistNotice": "Removed " + name + " from the waitlist."})
	if err != nil {
		t.Fatal(err)
	}
	token := uuid.NewString()
	if _, err := pool.Exec(ctx, `INSERT INTO sessions (token, data, expiry) VALUES ($1, $2, now() + interval '1 hour')`, token, staffData); err != nil {
		t.Fatal(err)
	}

	admin := testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	n, err := svc.Erase(ctx, admin, strings.ToUpper(email), "")
	if err != nil {
		t.Fatal(err)
	}
	if n.Bookings != 1 || n.Cancelled != 1 || n.Sessions != 1 || n.RedisKeys < 2 {
		t.Errorf("erased %+v", n)
	}
	for _, k := range scopeKeys(t, rdb, "*"+scope+"*") {
		if !strings.Contains(k, "code-address") { // counted per client network, not per patient
			t.Errorf("key %s is left", k)
		}
	}
	if left := scopeKeys(t, rdb, "client_limit:*"+b.Booking.ID.String()+"*"); len(left) != 0 {
		t.Errorf("cooldown keys left: %v", left)
	}
	var data []byte
	if err := pool.QueryRow(ctx, `SELECT data FROM sessions WHERE token = $1`, token).Scan(&data); err != nil {
		t.Fatalf("the staff session is gone: %v", err)
	}
	if _, values, err := (scs.GobCodec{}).Decode(data); err != nil || values["staffId"] != "x" || values["waitlistNotice"] != nil {
		t.Errorf("the staff session now holds %v (%v)", values, err)
	}

	ledger, err := os.ReadFile(ledgerFile)
	if err != nil || strings.Contains(strings.ToLower(string(ledger)), "lena") || strings.Count(string(ledger), "\n") != 1 {
		t.Fatalf("ledger %q (%v)", ledger, err)
	}
	// The same ledger read with another key matches nothing, and says so.
	other := privacy.New(privacy.Config{Pool: pool, Redis: rdb, Bookings: bookings, Holds: store, Outbox: ob,
		Ledger: privacy.NewLedger(ledgerFile, []byte(strings.Repeat("o", 32)))})
	r, err := other.Replay(ctx, true)
	if err != nil || r.OtherKey != 1 || r.Matched != 0 {
		t.Errorf("replay with another key: %+v, %v", r, err)
	}
}

func scopeKeys(t *testing.T, rdb redis.UniversalClient, match string) []string {
	t.Helper()
	var keys []string
	iter := rdb.Scan(context.Background(), 0, match, 1000).Iterator()
	for iter.Next(context.Background()) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}
