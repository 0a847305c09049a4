package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// A backup restored is a server that carries on: a database with bookings,
// e-mails sent and e-mails still queued, and a confirmed waitlist place is
// dumped with pg_dump, a patient is erased after the dump, and the dump is
// restored into a new database. A server started on it replays the ledger
// (the patient is erased again), sends the queued e-mails once and none of
// those sent before the dump, shows the bookings, and offers a freed time
// to the waiting patient.
func TestBackupRestoreCarriesOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srcURL, src, key := migratedSource(t, ctx)
	ledger := filepath.Join(t.TempDir(), "erasures.ledger")
	desk := deskOn(t, src, key, ledger)
	cl := testkit.NewClinic(t, src, testkit.ClinicOptions{})
	day := testkit.NextWeekday(time.Now(), testkit.Zone(t, cl.Timezone), time.Tuesday, 10, 0)
	tag := strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
	email := func(who string) string { return who + "." + tag + "@example.org" }
	book := func(d *app.App, who string, at time.Time) booking.Confirmation {
		t.Helper()
		c, err := d.Deps.Bookings.Book(ctx, booking.BookRequest{
			AppointmentTypeID: cl.Types[0].ID, SpecialistID: cl.Specialists[0].ID, Start: at, ClinicID: cl.ID,
			Patient: booking.Patient{Name: "Patient " + who, Email: email(who)}, Actor: "staff:desk@example.org",
		})
		if err != nil {
			t.Fatalf("book %s: %v", who, err)
		}
		return c
	}

	// Before the dump: two bookings and a waitlist place, their e-mails
	// sent by a server.
	before := testkit.SMTP(t)
	env := func(dbURL string, mail *testkit.SMTPServer) map[string]string {
		return map[string]string{"DATABASE_URL": dbURL, "SMTP_URL": mail.URL(), "MAIL_FROM": "Clinic <bookings@clinic.test>", "ERASURE_LEDGER": ledger}
	}
	first := startServe(t, env(srcURL, before))
	anna := book(desk, "anna", day)
	// In the afternoon: a time wilma does not wait for, freed when the
	// restored server erases xaver again.
	book(desk, "xaver", day.Add(4*time.Hour))
	place := confirmedPlace(t, ctx, desk, src, cl, day, "Patient wilma", email("wilma"))
	before.WaitFor(t, 3, time.Minute)
	testkit.Drained(t, src, testkit.Jobs{})
	first.stop(t)

	// Queued while no server works the queue: two more confirmations.
	book(desk, "bert", day.Add(30*time.Minute))
	carla := book(desk, "carla", day.Add(60*time.Minute))

	dump := filepath.Join(t.TempDir(), "clinic.dump")
	pgTool(t, "pg_dump", "-Fc", "-f", dump, "--dbname", srcURL)

	// After the dump: xaver is erased (the ledger's file gets the entry).
	if out, err := runEnv(env(srcURL, before), "patient", "erase", "--clinic", cl.Slug, "--email", email("xaver"), "--yes"); err != nil {
		t.Fatalf("erase: %v\n%s", err, out)
	}

	dstURL, dst := restoreDump(t, ctx, dump)
	if name := bookedName(t, ctx, dst, email("xaver")); name != "Patient xaver" {
		t.Fatalf("the dump should hold xaver as before the erasure: %q", name)
	}

	after := testkit.SMTP(t)
	second := startServe(t, env(dstURL, after))

	// The erasure made after the dump is made again at the start.
	erasedAgain(t, ctx, dst, cl.ID, day.Add(4*time.Hour))

	// The queued confirmations go out once; nothing sent before the dump
	// goes again.
	after.WaitFor(t, 2, time.Minute)
	testkit.Drained(t, dst, testkit.Jobs{})
	for _, who := range []string{"bert", "carla", "anna", "xaver", "wilma"} {
		want := 0
		if who == "bert" || who == "carla" {
			want = 1 // queued at the dump; the others were sent before it
		}
		if n := sentTo(after, email(who)); n != want {
			t.Errorf("%d e-mails to %s after the restore, want %d", n, who, want)
		}
	}

	// The bookings are served: anna's manage link opens her booking.
	if code, page := getPage(t, second.url+"/manage/"+anna.ManageToken); code != http.StatusOK || !strings.Contains(page, "Patient anna") {
		t.Errorf("anna's manage page on the restore: %d", code)
	}

	// The waitlist place is still there: carla's cancel offers her time
	// to wilma.
	deskAfter := deskOn(t, dst, key, ledger)
	if _, _, err := deskAfter.Deps.Bookings.Cancel(ctx, booking.CancelRequest{
		BookingID: carla.Booking.ID, ClinicID: cl.ID, Actor: "staff:desk@example.org", Reason: "ill",
	}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, time.Minute, "an offer e-mailed to wilma", func() bool { return sentTo(after, email("wilma")) == 1 })
	var offered int
	if err := dst.QueryRow(ctx, `SELECT count(*) FROM waitlist_offers WHERE entry_id = $1 AND state = 'open'`, place.ID).Scan(&offered); err != nil || offered != 1 {
		t.Errorf("open offers to wilma: %d (%v)", offered, err)
	}
	testkit.Drained(t, dst, testkit.Jobs{})
	if n := sentTo(after, email("anna")) + sentTo(after, email("xaver")); n != 0 {
		t.Errorf("%d e-mails sent again to anna or xaver", n)
	}
	second.stop(t)
}

// migratedSource is a fresh migrated database for the trial, its pool and
// the server key its first start stored (every backup carries it).
func migratedSource(t *testing.T, ctx context.Context) (string, *pgxpool.Pool, []byte) {
	t.Helper()
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: it comes with PostgreSQL's client (Debian's postgresql-client-15)", tool)
		}
	}
	srcURL := testkit.FreshDB(t)
	src, err := postgres.ConnectMigrated(ctx, srcURL, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	key, err := secret.Load(ctx, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srcURL, src, key
}

// restoreDump restores dump into a fresh database with pg_restore, as the
// operator's steps say (ANALYZE included), and returns its URL and a pool.
func restoreDump(t *testing.T, ctx context.Context, dump string) (string, *pgxpool.Pool) {
	t.Helper()
	dstURL := testkit.FreshDB(t)
	pgTool(t, "pg_restore", "--no-owner", "--exit-on-error", "--dbname", dstURL, dump)
	dst, err := pgxpool.New(ctx, dstURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dst.Close)
	if _, err := dst.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	return dstURL, dst
}

// getPage is the status and body of a GET of url.
func getPage(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	page, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(page)
}

// confirmedPlace puts the patient on the waitlist for the morning of day's
// date and confirms the place through the link its e-mail carries.
func confirmedPlace(t *testing.T, ctx context.Context, desk *app.App, pool *pgxpool.Pool, cl testkit.Clinic, day time.Time, name, email string) waitlist.Entry {
	t.Helper()
	date := day.In(testkit.Zone(t, cl.Timezone)).Format(time.DateOnly)
	place, _, err := desk.Deps.Waitlist.Join(ctx, waitlist.JoinRequest{
		ClinicID: cl.ID, AppointmentTypeID: cl.Types[0].ID, From: date, To: date, Times: []string{waitlist.Morning},
		Patient: booking.Patient{Name: name, Email: email}, Language: "en",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := desk.Deps.Waitlist.Confirm(ctx, cl.ID, mailedWaitlistLink(t, pool, place.ID)); err != nil {
		t.Fatal(err)
	}
	return place
}

// erasedAgain checks that the booking at start was anonymised and cancelled
// by the replay of the ledger, which wrote one erasure for the clinic.
func erasedAgain(t *testing.T, ctx context.Context, dst *pgxpool.Pool, clinicID uuid.UUID, start time.Time) {
	t.Helper()
	var name, status string
	var entries int
	err := dst.QueryRow(ctx, `SELECT patient_name, status, (SELECT count(*) FROM erasures WHERE clinic_id = $2)
		FROM bookings WHERE clinic_id = $2 AND slot_start = $1`, start, clinicID).Scan(&name, &status, &entries)
	if err != nil || name != "anonymised" || status != "cancelled" || entries != 1 {
		t.Errorf("xaver after the start on the restore: %q %q, %d erasures (%v)", name, status, entries, err)
	}
}

// deskOn is the server's services on pool, acting as the staff's pages
// would; the servers started with serve work the queue.
func deskOn(t *testing.T, pool *pgxpool.Pool, key []byte, ledger string) *app.App {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return app.Build(pool, testkit.Redis(t), quiet, app.Options{SecretKey: key, ErasureLedger: ledger})
}

// bookedName is the patient's name on the booking made for email.
func bookedName(t *testing.T, ctx context.Context, pool *pgxpool.Pool, email string) string {
	t.Helper()
	var name string
	if err := pool.QueryRow(ctx, `SELECT patient_name FROM bookings WHERE patient_email = $1`, email).Scan(&name); err != nil {
		t.Fatalf("the booking of %s: %v", email, err)
	}
	return name
}

// mailedWaitlistLink mints a link to the place as its e-mail carries one,
// and returns its token.
func mailedWaitlistLink(t *testing.T, pool *pgxpool.Pool, entry uuid.UUID) string {
	t.Helper()
	token := "m" + strings.ReplaceAll(uuid.NewString(), "-", "")
	if _, err := pool.Exec(context.Background(), `INSERT INTO waitlist_links (token_hash, entry_id, mailed, clinic_id)
		SELECT sha256($1::bytea), id, true, clinic_id FROM waitlist_entries WHERE id = $2`, []byte(token), entry); err != nil {
		t.Fatal(err)
	}
	return token
}

func sentTo(s *testkit.SMTPServer, addr string) int {
	n := 0
	for _, m := range s.Messages() {
		for _, to := range m.To {
			if strings.EqualFold(to, addr) {
				n++
			}
		}
	}
	return n
}

// pgTool runs one of PostgreSQL's programs and fails the test with its
// output.
func pgTool(t *testing.T, name string, args ...string) {
	t.Helper()
	start := time.Now()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	t.Logf("%s took %s", name, time.Since(start).Round(time.Millisecond))
}

// runEnv runs a command as main does, with env and the test's Redis.
func runEnv(env map[string]string, args ...string) (string, error) {
	all := map[string]string{"REDIS_URL": testRedisURL(), "PUBLIC_URL": "https://booking.example.org/"}
	for k, v := range env {
		all[k] = v
	}
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := run(ctx, args, func(k string) string { return all[k] }, &out, &out)
	return out.String(), err
}

func testRedisURL() string {
	if u := os.Getenv("TEST_REDIS_URL"); u != "" {
		return u
	}
	return testkit.DefaultTestRedisURL
}

// served is a `clinic serve` running in the test's process.
type served struct {
	url    string
	cancel context.CancelFunc
	done   chan error
	logs   *lockedBuffer
}

// startServe runs serve with env and waits until /readyz answers, which
// is after the ledger's replay.
func startServe(t *testing.T, env map[string]string) *served {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	all := map[string]string{"REDIS_URL": testRedisURL(), "ADDR": addr, "PUBLIC_URL": "http://" + addr + "/"}
	for k, v := range env {
		all[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{url: "http://" + addr, cancel: cancel, done: make(chan error, 1), logs: &lockedBuffer{}}
	go func() {
		s.done <- run(ctx, []string{"serve"}, func(k string) string { return all[k] }, io.Discard, s.logs)
	}()
	t.Cleanup(func() {
		cancel()
		if t.Failed() {
			t.Logf("server %s logs:\n%s", addr, s.logs.String())
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case err := <-s.done:
			t.Fatalf("serve ended at start: %v\n%s", err, s.logs.String())
		default:
		}
		if res, err := http.Get(s.url + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready within a minute:\n%s", s.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the server as SIGTERM would and waits for it.
func (s *served) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30 s")
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
