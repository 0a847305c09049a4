package web_test

// A browser on a booking page and its live stream: the page's days and
// cells, and the stream's events compared with them.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// viewer is one browser: its cookie jar carries its session (and so its
// client id) from the page to the stream.
type viewer struct {
	t      *testing.T
	a      *app
	http   *http.Client
	page   string // path of the booking page, with its query
	stream string // path of the page's live stream, with its query
}

func (a *app) viewer(t *testing.T, slug string, typeID uuid.UUID, query string) *viewer {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	base := "/c/" + slug + "/book/" + typeID.String()
	return &viewer{t: t, a: a, http: &http.Client{Jar: jar}, page: base + "?" + query, stream: base + "/live?" + query}
}

var (
	cellRE     = regexp.MustCompile(`(?s)<li id="([^"]*)".*?</li>`)
	dayRE      = regexp.MustCompile(`(?s)<section id="(day-[^"]*)".*?</section>`)
	sseSwapRE  = regexp.MustCompile(`\ssse-swap="([^"]*)"`)
	dataStatRE = regexp.MustCompile(`\sdata-state="([^"]*)"`)
	rootRE     = regexp.MustCompile(`^<(li|section) id="([^"]*)"`)
)

// fragments loads the page and returns the HTML of each element the
// stream can replace, by id: every day section and every slot cell. It
// also returns the ids in page order.
func (v *viewer) fragments() (map[string]string, []string) {
	v.t.Helper()
	res, err := v.http.Get(v.a.URL + v.page)
	if err != nil {
		v.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		v.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		v.t.Fatalf("GET %s: %d %s", v.page, res.StatusCode, raw)
	}
	html := string(raw)
	// The page connects to its stream with the state it shows (&state=...),
	// so the stream need not resend it; the tests dial without it and get
	// everything.
	if !strings.Contains(html, `sse-connect="`+strings.ReplaceAll(v.stream, "&", "&amp;")+`&amp;state=`) {
		v.t.Fatalf("the page does not connect to %s", v.stream)
	}
	out := map[string]string{}
	var order []string
	add := func(re *regexp.Regexp, in string) {
		for _, m := range re.FindAllStringSubmatch(in, -1) {
			if _, dup := out[m[1]]; dup {
				v.t.Fatalf("id %s twice on the page", m[1])
			}
			out[m[1]] = m[0]
			order = append(order, m[1])
		}
	}
	add(dayRE, html)
	add(cellRE, html)
	if len(out) == 0 {
		v.t.Fatalf("no slot grid on %s", v.page)
	}
	return out, order
}

// cellCount counts the slot cells among ids.
func cellCount(ids []string) int {
	n := 0
	for _, id := range ids {
		if strings.HasPrefix(id, "slot-") {
			n++
		}
	}
	return n
}

// returning gives the viewer a session with a client id, as a browser has
// that held a slot before (a page view makes none).
func (v *viewer) returning() {
	v.t.Helper()
	sm := v.a.Deps.Sessions
	ctx, err := sm.Load(context.Background(), "")
	if err != nil {
		v.t.Fatal(err)
	}
	sm.Put(ctx, "clientId", "b_"+strings.ReplaceAll(uuid.NewString(), "-", ""))
	token, _, err := sm.Commit(ctx)
	if err != nil {
		v.t.Fatal(err)
	}
	u, _ := url.Parse(v.a.URL)
	v.http.Jar.SetCookies(u, []*http.Cookie{{Name: "clinic_session", Value: token, Path: "/"}})
}

// clientID is the viewer's client id, read from its session as the server
// stores it (see returning).
func (v *viewer) clientID() string {
	v.t.Helper()
	u, _ := url.Parse(v.a.URL)
	for _, ck := range v.http.Jar.Cookies(u) {
		if ck.Name == "clinic_session" {
			ctx, err := v.a.Deps.Sessions.Load(context.Background(), ck.Value)
			if err != nil {
				v.t.Fatal(err)
			}
			if id := v.a.Deps.Sessions.GetString(ctx, "clientId"); id != "" {
				return id
			}
		}
	}
	v.t.Fatal("the viewer has no session with a client id")
	return ""
}

// open loads the page, connects its stream, and checks that the stream
// begins with every day and cell of the page, each exactly as the page
// renders it for this viewer. It returns the stream, positioned after them.
func (v *viewer) open() *sseConn {
	v.t.Helper()
	v.fragments() // as a browser does: the page (and its session) first
	s := dialSSE(v.t, v.http, v.a.URL+v.stream)
	v.everyFragment(s)
	return s
}

// everyFragment reads one event per day section and cell of the page,
// each exactly as the page now renders it.
func (v *viewer) everyFragment(s *sseConn) {
	v.t.Helper()
	page, order := v.fragments()
	got := map[string]bool{}
	for len(got) < len(page) {
		ev := s.must(evWait, fmt.Sprintf("fragment %d of %d", len(got)+1, len(page)))
		if ev.Name == "" && len(ev.Lines) == 0 {
			continue // the retry hint
		}
		if ev.Name == "end" {
			v.t.Fatalf("stream ended (%s) after %d of the page's %d days and cells", ev.Data(), len(got), len(page))
		}
		checkFragmentEvent(v.t, ev)
		want, ok := page[ev.Name]
		if !ok {
			v.t.Fatalf("stream sent %s, which the page does not show", ev.Name)
		}
		if got[ev.Name] {
			v.t.Fatalf("stream sent %s twice before sending all of the page", ev.Name)
		}
		got[ev.Name] = true
		if ev.Data() != want {
			v.t.Fatalf("%s:\nstream %s\npage   %s", ev.Name, ev.Data(), want)
		}
	}
	if len(order) != len(got) {
		v.t.Fatalf("stream sent %d days and cells, page shows %d", len(got), len(order))
	}
}

// checkFragmentEvent: an event is named after the element it carries (a
// cell or a day), and that element swaps itself in on exactly that event.
func checkFragmentEvent(t *testing.T, ev sseEvent) {
	t.Helper()
	d := ev.Data()
	for _, l := range ev.Lines {
		if strings.ContainsAny(l, "\r\n") {
			t.Fatalf("data line %q holds a line break", l)
		}
	}
	root := rootRE.FindStringSubmatch(d)
	swap := sseSwapRE.FindStringSubmatch(d) // the root's own: attributes come before children
	if root == nil || swap == nil || !strings.HasSuffix(d, "</"+root[1]+">") {
		t.Fatalf("event %s: data is not one live <li> cell or <section> day: %s", ev.Name, d)
	}
	if ev.Name != root[2] || ev.Name != swap[1] {
		t.Fatalf("event name %q, element id %q, sse-swap %q: all three must be equal", ev.Name, root[2], swap[1])
	}
}

func stateOf(html string) string {
	m := dataStatRE.FindStringSubmatch(html)
	if m == nil {
		return ""
	}
	return m[1]
}

// cellChange waits for the next event of cell id and asserts that no other
// cell changed meanwhile and that the cell is now in state want, exactly
// as the page now renders it for v.
func (v *viewer) cellChange(s *sseConn, id, want string) (before []sseEvent) {
	v.t.Helper()
	ev, before := s.until(evWait, "cell "+id+" "+want, func(e sseEvent) bool {
		return e.Name == id && stateOf(e.Data()) == want
	})
	for _, b := range before {
		if b.Name != id {
			v.t.Fatalf("cell %s changed too (%s); only %s should have", b.Name, describeEvents([]sseEvent{b}), id)
		}
	}
	checkFragmentEvent(v.t, ev)
	page, _ := v.fragments()
	if ev.Data() != page[id] {
		v.t.Fatalf("cell %s:\nstream %s\npage   %s", id, ev.Data(), page[id])
	}
	return before
}
