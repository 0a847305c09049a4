package web_test

// The fuzz targets send arbitrary bytes as request bodies, query values,
// path segments and headers to the real app (PostgreSQL, Redis) and
// require an answer below 500 that shows no internal: a stack, a panic,
// SQL or a driver's error, unless the request itself carried that text.
// Without -fuzz they run their seed corpus only (part of `make test`):
//
//	go test ./web -run '^$' -fuzz '^FuzzCreateHold$' -fuzztime 20s

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web/httpx"
)

// fuzzPool is the shared test database, except in a fuzzing worker: each
// worker is its own process, and testkit.DB (re)creates the one per-binary
// database, which would cut the other workers off. Workers get a fresh
// database of their own instead.
func fuzzPool(f *testing.F) *pgxpool.Pool {
	f.Helper()
	if w := flag.Lookup("test.fuzzworker"); w == nil || w.Value.String() != "true" {
		return testkit.DB(f)
	}
	return freshPool(f)
}

var (
	fuzzAppMu     sync.Mutex
	fuzzAppShared *app
)

// fuzzApp is the app the fuzz targets share. It is booted once per test
// process (wiring takes most of a second, and the seed corpora of all
// targets run in one process; a fuzzing worker runs one target) and lives
// until the process ends, with every rate limit lifted: the fuzzer is one
// address and one account.
func fuzzApp(f *testing.F) *app {
	f.Helper()
	fuzzAppMu.Lock()
	defer fuzzAppMu.Unlock()
	if fuzzAppShared != nil {
		return fuzzAppShared
	}
	opt, err := redis.ParseURL(cmp.Or(os.Getenv("TEST_REDIS_URL"), testkit.DefaultTestRedisURL))
	if err != nil {
		f.Fatal(err)
	}
	// FUZZ_LOG=1 shows the server's warnings and errors (a 500's cause).
	var logTo io.Writer = io.Discard
	if os.Getenv("FUZZ_LOG") != "" {
		logTo = os.Stderr
	}
	a, _ := startApp(f, withPool(fuzzPool(f)),
		withRedis(redis.NewClient(opt)), // not testkit.Redis: it would close with the first target
		withLog(logTo), withOptions(program.Options{
			HoldsPerMinute: 1 << 30, LoginsPerMinute: 1 << 30, MovesPerMinute: 1 << 30, MovesPerLinkPerHour: 1 << 30, StaffWritesPerMinute: 1 << 30,
		}))
	a.ready(f)
	fuzzAppShared = a
	return a
}

// leaks are what no answer may show: Go stacks and panics, SQL, the
// database driver's errors, source positions.
var leaks = []string{"goroutine ", "panic", "runtime error", "SQLSTATE", "pgx", "sql:", "SELECT ", "INSERT ", ".go:"}

const (
	pageTimeout = 15 * time.Second       // a page slower than this is a finding too
	streamRead  = 300 * time.Millisecond // how long a stream's first bytes may take once it answered
)

// trickyValues are values every parameter is tried with in the seed corpus.
var trickyValues = []string{
	"",
	strings.Repeat("a", 4096),
	"../../../../etc/passwd",
	"..%2F..%2Fstaff",
	"%00",
	"\x00",
	"%",
	"Zürich ☃ 日本語 \u202e",
	"-1",
	"-2026-01-05",
	"99999-01-01",
	"0000-01-01",
	"0001-01-01",
	"9999-12-31",
	"2026-02-30",
	"00000000-0000-0000-0000-00000000000g",
	"{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
	"urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8",
	"' OR 1=1 --",
	"1; DROP TABLE bookings; --",
	"%_\\",
	"9223372036854775808",
}

// pathSegment is a path segment: as given when raw and it can go in a URL as
// is, escaped otherwise.
func pathSegment(s string, raw bool) string {
	if raw {
		ok := !strings.ContainsAny(s, "?#")
		for i := 0; ok && i < len(s); i++ {
			ok = s[i] > 0x20 && s[i] < 0x7f
		}
		if _, err := url.Parse("http://x/" + s); ok && err == nil {
			return s
		}
	}
	return url.PathEscape(s)
}

// query encodes name, value pairs; empty values are sent too.
func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}

// fetch sends one request and returns the status and the body, or, for
// a stream that answered, its first bytes.
func fetch(t testing.TB, hc *http.Client, method, u string, body []byte, hdr ...string) (int, []byte) {
	t.Helper()
	st, _, b := fetchWithHeader(t, hc, method, u, body, hdr...)
	return st, b
}

// fetchWithHeader is fetch with the answer's header.
func fetchWithHeader(t testing.TB, hc *http.Client, method, u string, body []byte, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pageTimeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		t.Fatalf("%s %q: %v", method, u, err)
	}
	req.Header.Set("Accept", browserAccept)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	began := time.Now()
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v (after %s)", method, clip([]byte(u), 300), err, time.Since(began).Round(time.Millisecond))
	}
	defer res.Body.Close()
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		stop := time.AfterFunc(streamRead, cancel)
		defer stop.Stop()
		buf := make([]byte, 16<<10)
		n, _ := io.ReadAtLeast(res.Body, buf, 1)
		return res.StatusCode, res.Header, buf[:n]
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, clip([]byte(u), 300), err)
	}
	return res.StatusCode, res.Header, b
}

// wantNoLeak fails on a 5xx or an internal shown in the body.
func wantNoLeak(t testing.TB, what string, inputs []string, status int, body []byte) {
	t.Helper()
	if status >= 500 {
		t.Fatalf("%s: %d with inputs %q; body: %s", what, status, inputs, clip(body, 2000))
	}
	for _, m := range leaks {
		if i := bytes.Index(body, []byte(m)); i >= 0 && !reflected(m, inputs) {
			t.Fatalf("%s: %d; the body shows %q with inputs %q: …%s…", what, status, m, inputs, clip(body[max(0, i-300):], 600))
		}
	}
}

// reflected reports whether an input carries m (decoded or not): a page
// may echo what it was asked.
func reflected(m string, inputs []string) bool {
	for _, in := range inputs {
		vs := []string{in}
		if u, err := url.PathUnescape(in); err == nil {
			vs = append(vs, u)
		}
		if u, err := url.QueryUnescape(in); err == nil {
			vs = append(vs, u)
		}
		for _, v := range vs {
			if strings.Contains(v, m) {
				return true
			}
		}
	}
	return false
}

// reaches fails the target unless the valid request answers want: the
// harness must reach the real page, not only its errors.
func reaches(f *testing.F, hc *http.Client, method, u string, body []byte, want int, hdr ...string) {
	f.Helper()
	if st, b := fetch(f, hc, method, u, body, hdr...); st != want {
		f.Fatalf("%s %s: %d, want %d: %s", method, u, st, want, clip(b, 1000))
	}
}

// seeds adds, for each tricky value, the valid arguments with one of
// them (in turn) replaced by it, then the valid ones, all raw and escaped.
func seeds(f *testing.F, valid []string, add func(args []string, raw bool)) {
	f.Helper()
	add(valid, false)
	add(valid, true)
	for i, v := range trickyValues {
		args := append([]string(nil), valid...)
		args[i%len(args)] = v
		add(args, i%2 == 1)
	}
}

// wantSane fails on a 5xx, a body that is not JSON, or one that shows an
// internal (leaks: a stack, a panic, SQL, the driver's errors) that the
// request did not carry itself: the body input (raw, and every JSON string
// in it, decoded) or one of more (a header, a path segment).
func wantSane(t testing.TB, what string, input []byte, r *response, more ...string) {
	t.Helper()
	if r.Status >= 500 {
		t.Fatalf("%s with body %q: %d %s", what, input, r.Status, r.Body)
	}
	if !json.Valid([]byte(r.Body)) {
		t.Fatalf("%s with body %q: %d with a body that is not JSON: %q", what, input, r.Status, r.Body)
	}
	wantNoLeak(t, what, fuzzInputs(input, more...), r.Status, []byte(r.Body))
}

// fuzzInputs is what a request carried, for reflected: the body as is,
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

// trickyBodies are bodies every JSON target is seeded with.
var trickyBodies = []string{
	``, ` `, `null`, `{}`, `[]`, `""`, `0`, `true`, `{`, `}`, `{"a":1}{"b":2}`, "\xef\xbb\xbf{}", "\xff\xfe", "\x00", `{"x":"a` + "\x00" + `"}`,
	strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	`{"a":` + strings.Repeat(`{"a":`, 12000) + `1` + strings.Repeat(`}`, 12001),
	`{"n":1e400}`, `{"n":-99999999999999999999999}`,
	`{"s":"` + strings.Repeat("x", 70<<10) + `"}`,  // over BindJSON's 64 KB
	`{"s":"` + strings.Repeat("y", 300<<10) + `"}`, // over the server's 256 KB
	`{"s":"Zürich ☃ 日本語 \u202e \ud800 \uffff"}`,
}

// trickyHeaders are If-Match values (and ids, tokens) every target is seeded with.
var trickyHeaders = []string{"", `*`, `"v0"`, `"v-1"`, `W/"v1"`, `"v2147483648"`, `"v1", "v2"`, `v1`, `"1"`, "' OR 1=1 --", strings.Repeat("v", 4096)}

// fetchJSON sends one JSON request with hc and returns the answer.
func fetchJSON(t testing.TB, hc *http.Client, method, u string, body []byte, hdr ...string) *response {
	t.Helper()
	if body == nil {
		body = []byte{} // still sent, as an empty body
	}
	st, h, b := fetchWithHeader(t, hc, method, u, body, append([]string{"Accept", "application/json", "Content-Type", "application/json"}, hdr...)...)
	return &response{Status: st, Header: h, Body: string(b), t: t, what: method + " " + u}
}

// wantSaneOr204 is wantSane, with a bodiless 204 allowed.
func wantSaneOr204(t *testing.T, what string, body []byte, r *response, more ...string) {
	t.Helper()
	if r.Status == http.StatusNoContent && len(r.Body) == 0 {
		return
	}
	wantSane(t, what, body, r, more...)
}

// withHeaderIfSafe adds name: v when v can be sent as a header value.
func withHeaderIfSafe(hdr []string, name, v string) []string {
	if v != "" && headerSafe(v) {
		return append(hdr, name, v)
	}
	return hdr
}

var noRedirects = &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// verdict is what a target requires of the answer to one input beyond
// sanity: a status and the JSON error's code, or, with orBody, that or
// the refusal of the body (400 INVALID_ARGUMENT, 413 TOO_LARGE), which the
// server may check first. The zero verdict requires nothing more.
type verdict struct {
	status int
	code   string // "" for any (a page, a 204)
	orBody bool
	why    string // the class of input, for the failure message
}

// must is the verdict status with code for the inputs why describes.
func must(status int, code, why string) verdict {
	return verdict{status: status, code: code, why: why}
}

// unlessBody is v, or the body's refusal.
func (v verdict) unlessBody() verdict {
	v.orBody = true
	return v
}

// errorCode is the code of the answer's JSON error, or "".
func errorCode(r *response) string {
	var e errorShape
	_ = json.Unmarshal([]byte(r.Body), &e)
	return e.Error.Code
}

// wantVerdict fails unless r answers as v requires.
func wantVerdict(t testing.TB, what string, r *response, v verdict) {
	t.Helper()
	if v.status == 0 {
		return
	}
	code := errorCode(r)
	if r.Status == v.status && (v.code == "" || code == v.code) {
		return
	}
	if v.orBody && (r.Status == http.StatusBadRequest && code == "INVALID_ARGUMENT" || r.Status == http.StatusRequestEntityTooLarge && code == "TOO_LARGE") {
		return
	}
	alt := ""
	if v.orBody {
		alt = " (or the body's refusal)"
	}
	t.Fatalf("%s: %d %s, want %d %s%s for %s: %s", what, r.Status, code, v.status, v.code, alt, v.why, clip(r.Body, 500))
}

// maxRequestBody is what the server reads of a body at most (BodyLimit).
const maxRequestBody = 256 << 10

// served is a request to a URL as the server reads it: the decoded path
// and the query its text check looks at, and the path its router matches
// (the escaped one when the escaping is not the default).
type served struct {
	path, route string
	query       url.Values
}

// serverView is how the server reads a request to u.
func serverView(t testing.TB, u string) served {
	t.Helper()
	cu, err := url.Parse(u)
	if err != nil {
		t.Fatalf("%q: %v", u, err)
	}
	su, err := url.ParseRequestURI(cu.RequestURI())
	if err != nil {
		t.Fatalf("%q: %v", cu.RequestURI(), err)
	}
	route := su.RawPath
	if route == "" {
		route = su.Path
	}
	return served{path: su.Path, route: route, query: su.Query()}
}

// plain reports whether the request passes the server's text check: its
// path and every query name and value valid UTF-8 without NUL.
func (s served) plain() bool {
	if !httpx.PlainText(s.path) {
		return false
	}
	for k, vs := range s.query {
		if !httpx.PlainText(k) {
			return false
		}
		for _, v := range vs {
			if !httpx.PlainText(v) {
				return false
			}
		}
	}
	return true
}

// param is the one path segment between prefix and suffix, as the router
// hands it to the handler, and whether the route has that shape.
func (s served) param(prefix, suffix string) (string, bool) {
	rest, ok := strings.CutPrefix(s.route, prefix)
	if !ok {
		return "", false
	}
	seg, ok := strings.CutSuffix(rest, suffix)
	if !ok || seg == "" || strings.Contains(seg, "/") {
		return "", false
	}
	return seg, true
}

// ifMatchSent is the If-Match the server reads when v is sent (see
// withHeaderIfSafe), "" for none: header values lose their surrounding
// spaces.
func ifMatchSent(v string) string {
	if !headerSafe(v) {
		return ""
	}
	return strings.Trim(v, " ")
}
