package web_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// The fuzz targets send arbitrary bytes as request bodies to the real app
// (PostgreSQL, Redis) and require an answer below 500 whose body is JSON.
// Without -fuzz they run their seed corpus only.
//
//	go test ./web -run '^$' -fuzz '^FuzzCreateHold$' -fuzztime 20s

// fuzzPool is the shared test database, except in a fuzzing worker: each
// worker is its own process, and testkit.DB (re)creates the one per-binary
// database, which would cut the other workers off. Workers get a fresh
// database of their own instead.
func fuzzPool(f *testing.F) *pgxpool.Pool {
	f.Helper()
	if w := flag.Lookup("test.fuzzworker"); w == nil || w.Value.String() != "true" {
		return testkit.DB(f)
	}
	url := testkit.FreshDB(f)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := postgres.Connect(ctx, url, 20, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(pool.Close)
	if err := postgres.Migrate(ctx, pool, nil); err != nil {
		f.Fatal(err)
	}
	return pool
}

// fuzzServer is the app the page and JSON fuzz targets share. It is
// booted once per test process (wiring takes most of a second, and the seed
// corpora of all targets run in one process; a fuzzing worker runs one
// target) and lives until the process ends, with every rate limit lifted:
// the fuzzer is one address and one account.
type fuzzServer struct {
	ts   *httptest.Server
	deps web.Deps
	pool *pgxpool.Pool
	rdb  *redis.Client
}

var (
	fuzzServerMu     sync.Mutex
	fuzzServerShared *fuzzServer
)

func bootFuzzServer(f *testing.F) *fuzzServer {
	f.Helper()
	fuzzServerMu.Lock()
	defer fuzzServerMu.Unlock()
	if fuzzServerShared != nil {
		return fuzzServerShared
	}
	pool := fuzzPool(f)
	opt, err := redis.ParseURL(cmp.Or(os.Getenv("TEST_REDIS_URL"), testkit.DefaultTestRedisURL))
	if err != nil {
		f.Fatal(err)
	}
	rdb := redis.NewClient(opt) // not testkit.Redis: it would close with the first target
	// FZP_LOG=1 shows the server's warnings and errors (a 500's cause).
	var logTo io.Writer = io.Discard
	if os.Getenv("FZP_LOG") != "" {
		logTo = os.Stderr
	}
	deps := web.Wire(pool, rdb, slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelWarn})), scoped(web.Options{
		HoldsPerMinute: 1 << 30, LoginsPerMinute: 1 << 30, MovesPerMinute: 1 << 30, StaffWritesPerMinute: 1 << 30,
	}))
	deps.RunBackground(context.Background())
	ts := httptest.NewServer(web.New(deps, "127.0.0.1:0").Handler())
	select {
	case <-deps.Hub.Ready():
	case <-time.After(evWait):
		f.Fatal("the hub did not subscribe to Redis")
	}
	fuzzServerShared = &fuzzServer{ts: ts, deps: deps, pool: pool, rdb: rdb}
	return fuzzServerShared
}

// fuzzApp boots the app with a clinic for one fuzz target.
func fuzzApp(f *testing.F) (*api, testkit.Clinic) {
	f.Helper()
	a := bootAPIOn(f, fuzzPool(f), nil, web.Options{})
	c := testkit.NewClinic(f, a.pool, testkit.ClinicOptions{})
	rdb := testkit.Redis(f)
	f.Cleanup(func() { forgetClinicHolds(rdb, c.ID) })
	return a, c
}

// wantSane fails on a 5xx, a body that is not JSON, or one that shows an
// internal (fzpLeaks: a stack, a panic, SQL, the driver's errors) that the
// request did not carry itself: the body input (raw, and every JSON string
// in it, decoded) or one of more (a header, a path segment).
func wantSane(t *testing.T, what string, input []byte, r reply, more ...string) {
	t.Helper()
	if r.Status >= 500 {
		t.Fatalf("%s with body %q: %d %s", what, input, r.Status, r.Body)
	}
	if !json.Valid(r.Body) {
		t.Fatalf("%s with body %q: %d with a body that is not JSON: %q", what, input, r.Status, r.Body)
	}
	fzpWant(t, what, fuzzInputs(input, more...), r.Status, r.Body)
}

// fuzzInputs is what a request carried, for fzpReflected: the body as is,
// every string (key or value) a JSON decoder reads from it before the
// first syntax error, decoded (an answer may echo "\u0053ELECT " as
// "SELECT "), and more.
func fuzzInputs(body []byte, more ...string) []string {
	in := append([]string{string(body)}, more...)
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return in
		}
		if s, ok := tok.(string); ok {
			in = append(in, s)
		}
	}
}

// headerSafe reports whether s can be sent as a header value as is.
func headerSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func FuzzCreateHold(f *testing.F) {
	a, c := fuzzApp(f)
	typeID := c.Types[0].ID.String()
	monday := testkit.NextWeekday(time.Now(), mustBerlin(f), time.Monday, 10, 0).UTC()
	valid := func(start time.Time, client string) string {
		b, _ := json.Marshal(map[string]string{"appointmentTypeId": typeID, "slotStartDate": start.Format(time.RFC3339), "clientId": client})
		return string(b)
	}
	for _, seed := range []string{
		valid(monday, "fuzz-seed-a"),
		valid(monday, "fuzz-seed-b"), // held by a
		valid(monday.Add(30*time.Minute), "fuzz-seed-a"),
		valid(monday.Add(7*time.Minute), "fuzz-seed-c"),
		valid(monday.AddDate(0, 0, -7), "fuzz-seed-c"),
		valid(monday.AddDate(0, 0, 365), "fuzz-seed-c"),
		`{"appointmentTypeId":"` + typeID + `","slotStartDate":"0000-01-01T00:00:00Z","clientId":"x"}`,
		`{"appointmentTypeId":"` + typeID + `","slotStartDate":"9999-12-31T23:30:00Z","clientId":"x"}`,
		`{"appointmentTypeId":"` + typeID + `","slotStartDate":"2026-03-29T01:30:00+01:00","clientId":"x"}`,
		`{"appointmentTypeId":"` + typeID + `","slotStartDate":"` + monday.Format(time.RFC3339) + `","specialistId":"` + c.Specialists[1].ID.String() + `","clientId":"y"}`,
		`{"appointmentTypeId":"00000000-0000-0000-0000-000000000000","slotStartDate":"2026-01-01T00:00:00Z","clientId":"x"}`,
		`{"appointmentTypeId":"` + typeID + `","slotStartDate":"` + monday.Format(time.RFC3339) + `","clientId":"` + strings.Repeat("z", 300) + `"}`,
		`{"appointmentTypeId":1,"slotStartDate":[],"clientId":{}}`,
		`{"clientId":null}`,
		`{}`, `[]`, `null`, `""`, `0`, ``, `{`, `}`, `{"a":1}{"b":2}`, "\xff\xfe", `{"clientId":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		wantSane(t, "POST /v1/holds", body, a.do(t, "POST", "/v1/holds", body))
	})
}

func FuzzHeartbeat(f *testing.F) {
	a, c := fuzzApp(f)
	monday := testkit.NextWeekday(time.Now(), mustBerlin(f), time.Monday, 10, 0).UTC()
	h := a.hold(f, c.Types[0].ID, monday, "fuzz-owner")
	clinicHex := strings.ReplaceAll(c.ID.String(), "-", "")
	for _, seed := range []string{
		`{"holdId":"` + h.HoldID + `","clientId":"fuzz-owner"}`,
		`{"holdId":"` + h.HoldID + `","clientId":"someone-else"}`,
		`{"holdId":"h` + clinicHex + `00000000000000000000","clientId":"fuzz-owner"}`,
		`{"holdId":"h00000000000000000000000000000000ffffffffffffffffffff","clientId":"x"}`,
		`{"holdId":"H` + strings.ToUpper(clinicHex) + `00000000000000000000","clientId":"x"}`,
		`{"holdId":"` + h.HoldID + `"}`,
		`{"holdId":42,"clientId":true}`,
		`{}`, `[]`, `null`, ``, `{"holdId":`, "\x00",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := a.do(t, "PATCH", "/v1/holds", body)
		wantSane(t, "PATCH /v1/holds", body, r)
		if r.Status == http.StatusGone && !strings.Contains(string(r.Body), `"ok":false`) {
			t.Fatalf("410 without ok:false: %s", r.Body)
		}
	})
}

func FuzzBook(f *testing.F) {
	a, c := fuzzApp(f)
	typeID := c.Types[0].ID
	monday := testkit.NextWeekday(time.Now(), mustBerlin(f), time.Monday, 10, 0).UTC()
	h := a.hold(f, typeID, monday, "fuzz-booker")
	other := a.hold(f, typeID, monday.Add(time.Hour), "fuzz-other")
	seed := func(holdID, client, patient string) string {
		return `{"holdId":"` + holdID + `","clientId":"` + client + `","patient":` + patient + `}`
	}
	good := `{"name":"Ada Lovelace","email":"ada@example.com","phone":"+44 20 7946 0000"}`
	for _, s := range []struct{ body, key string }{
		{seed(h.HoldID, "fuzz-booker", good), "fuzz-key-1"},
		{seed(h.HoldID, "fuzz-booker", good), "fuzz-key-1"}, // a replay
		{seed(h.HoldID, "fuzz-booker", `{"name":"Someone Else","email":"x@example.com"}`), "fuzz-key-1"},
		{seed(other.HoldID, "fuzz-booker", good), ""},
		{seed(other.HoldID, "fuzz-other", `{"name":"","email":""}`), ""},
		{seed(other.HoldID, "fuzz-other", `{"name":"A","email":"a@b"}`), ""},
		{seed(other.HoldID, "fuzz-other", `{"name":"A","email":"a@example.com","phone":"\u0000"}`), ""},
		{seed(other.HoldID, "fuzz-other", `"patient"`), ""},
		{seed(other.HoldID, "fuzz-other", `{"name":["A"]}`), ""},
		{seed("nope", "x", good), "has space"},
		{`{"holdId":null,"clientId":null,"patient":null}`, ""},
		{`{}`, ""}, {`[]`, ""}, {``, ""}, {`{"patient":{`, ""}, {"\xef\xbb\xbf{}", ""},
	} {
		f.Add([]byte(s.body), s.key)
	}
	f.Fuzz(func(t *testing.T, body []byte, key string) {
		var hdr []string
		if key != "" && headerSafe(key) {
			hdr = []string{"Idempotency-Key", key}
		}
		wantSane(t, "POST book", body, a.do(t, "POST", bookPath(typeID), body, hdr...), key)
	})
}

func mustBerlin(tb testing.TB) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		tb.Fatal(err)
	}
	return loc
}
