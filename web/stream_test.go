package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// Tests of GET /v1/holds/stream, the JSON stream an API client holds open,
// read over real HTTP from the whole app on PostgreSQL and Redis.

const evWait = 5 * time.Second // how long a test waits for an event that must come

// liveApp is one instance of the app with its background work running
// (hub, hold sweeper), as main runs it.
type liveApp struct {
	t    *testing.T
	URL  string
	deps web.Deps
	pool *pgxpool.Pool
	rdb  redis.UniversalClient
}

// bootLive boots an instance on the test database and Redis and waits
// until its hub is subscribed.
func bootLive(t *testing.T, o web.Options) *liveApp {
	t.Helper()
	return bootLiveOn(t, testkit.DB(t), testkit.Redis(t), o)
}

func bootLiveOn(t *testing.T, pool *pgxpool.Pool, rdb redis.UniversalClient, o web.Options) *liveApp {
	t.Helper()
	deps := web.Wire(pool, rdb, slog.New(slog.NewTextHandler(io.Discard, nil)), scoped(o))
	ctx, cancel := context.WithCancel(context.Background())
	deps.RunBackground(ctx)
	ts := httptest.NewServer(web.New(deps, "127.0.0.1:0").Handler())
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		cancel()
	})
	waitHubReady(t, deps)
	return &liveApp{t: t, URL: ts.URL, deps: deps, pool: pool, rdb: rdb}
}

func waitHubReady(t *testing.T, deps web.Deps) {
	t.Helper()
	select {
	case <-deps.Hub.Ready():
	case <-time.After(evWait):
		t.Fatal("the hub did not subscribe to Redis")
	}
}

// clinic makes a clinic of the test's own, whose holds are dropped at the end.
func (a *liveApp) clinic(o testkit.ClinicOptions) testkit.Clinic {
	a.t.Helper()
	c := testkit.NewClinic(a.t, a.pool, o)
	rdb := a.rdb
	a.t.Cleanup(func() {
		ctx := context.Background()
		s := holds.NewStore(rdb, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if active, err := s.Active(ctx, c.ID); err == nil {
			for _, h := range active {
				_, _ = s.Release(ctx, h.HoldID, h.ClientID)
			}
		}
	})
	return c
}

// send makes one API request; body is JSON-encoded unless nil.
// hdr are name, value pairs.
func (a *liveApp) send(method, path string, body any, hdr ...string) (int, []byte) {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.URL+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return res.StatusCode, out
}

// liveHold is the answer to POST /v1/holds.
type liveHold struct {
	HoldID        string    `json:"holdId"`
	SpecialistID  uuid.UUID `json:"specialistId"`
	SlotStartDate string    `json:"slotStartDate"`
	HoldExpiresAt string    `json:"holdExpiresAt"`
}

// hold holds a slot through the API; it must give 201.
func (a *liveApp) hold(typeID uuid.UUID, start time.Time, client string) liveHold {
	a.t.Helper()
	st, body := a.send("POST", "/v1/holds", map[string]string{
		"appointmentTypeId": typeID.String(), "slotStartDate": start.UTC().Format(time.RFC3339), "clientId": client,
	})
	if st != http.StatusCreated {
		a.t.Fatalf("hold %s for %s: %d %s", start, client, st, body)
	}
	var h liveHold
	if err := json.Unmarshal(body, &h); err != nil {
		a.t.Fatal(err)
	}
	return h
}

func (a *liveApp) release(h liveHold, client string) {
	a.t.Helper()
	if st, body := a.send("DELETE", "/v1/holds/"+h.HoldID+"?clientId="+url.QueryEscape(client), nil); st != http.StatusNoContent {
		a.t.Fatalf("release %s: %d %s", h.HoldID, st, body)
	}
}

// liveBooking is the part of the booking answer the tests need.
type liveBooking struct {
	Appointment struct {
		ID uuid.UUID `json:"id"`
	} `json:"appointment"`
	ManageToken string `json:"manageToken"`
}

// The patient of every booking made here; no stream may ever show it.
const (
	livePatientName  = "Ada Streamfield-Lovelace"
	livePatientEmail = "ada.streamfield@example.org"
	livePatientPhone = "+44 20 7946 0321"
)

var livePatientSeq atomic.Int64

func (a *liveApp) book(typeID uuid.UUID, h liveHold, client string) liveBooking {
	a.t.Helper()
	st, body := a.send("POST", "/v1/appointment-types/"+typeID.String()+"/book", map[string]any{
		"holdId": h.HoldID, "clientId": client,
		// A patient of the client's own (the cooldown binds a patient's
		// e-mail and phone), whose details still contain the ones the
		// streams are searched for.
		"patient": map[string]string{"name": livePatientName, "email": client + "." + livePatientEmail,
			"phone": fmt.Sprintf("%s %d", livePatientPhone, livePatientSeq.Add(1))},
	})
	if st != http.StatusCreated {
		a.t.Fatalf("book %s: %d %s", h.HoldID, st, body)
	}
	var b liveBooking
	if err := json.Unmarshal(body, &b); err != nil {
		a.t.Fatal(err)
	}
	return b
}

func (a *liveApp) cancelBooking(b liveBooking) {
	a.t.Helper()
	if st, body := a.send("DELETE", "/v1/appointments/"+b.Appointment.ID.String(), nil, "Authorization", "Bearer "+b.ManageToken); st != http.StatusOK {
		a.t.Fatalf("cancel %s: %d %s", b.Appointment.ID, st, body)
	}
}

// liveClient is a fresh client id.
func liveClient(prefix string) string { return prefix + "-" + uuid.NewString() }

// mondayAt is the next Monday (at least tomorrow) at hh:mm in Berlin, the
// testkit clinic's zone.
func mondayAt(t *testing.T, hh, mm int) time.Time {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return testkit.NextWeekday(time.Now(), loc, time.Monday, hh, mm)
}

func holdStreamPath(typeID uuid.UUID, client, extra string) string {
	p := "/v1/holds/stream?appointmentTypeId=" + typeID.String() + "&clientId=" + url.QueryEscape(client)
	if extra != "" {
		p += "&" + extra
	}
	return p
}

// jsonEvent is one event of the JSON stream: its decoded fields and its raw data.
type jsonEvent struct {
	F   map[string]any
	Raw string
}

func (e jsonEvent) str(k string) string { s, _ := e.F[k].(string); return s }
func (e jsonEvent) own() bool           { b, _ := e.F["isOwnHold"].(bool); return b }

// holdStream is a reader of the JSON stream that checks every event it
// reads for leaks: no client id of anyone, no patient data.
type holdStream struct {
	t       *testing.T
	c       *sseConn
	secrets []string
	Init    jsonEvent
	Snap    []jsonEvent
	ConnID  string
}

// openHoldStream opens the stream and reads its preamble, asserting the
// order: "retry: 5000", init, the snapshot's hold events, connected.
// secrets are strings no event may contain (client ids).
func (a *liveApp) openHoldStream(typeID uuid.UUID, client, extra string, secrets ...string) *holdStream {
	a.t.Helper()
	c := dialSSE(a.t, nil, a.URL+holdStreamPath(typeID, client, extra))
	hs := &holdStream{t: a.t, c: c, secrets: append([]string{client}, secrets...)}
	first := c.must(evWait, "retry hint")
	if first.Retry != "5000" || len(first.Lines) != 0 || first.Name != "" {
		a.t.Fatalf("first block %q, want a bare \"retry: 5000\"", describeEvents([]sseEvent{first}))
	}
	hs.Init = hs.next("init")
	if hs.Init.str("type") != "init" || hs.Init.str("connectionId") == "" {
		a.t.Fatalf("second event %s, want init with a connectionId", hs.Init.Raw)
	}
	hs.ConnID = hs.Init.str("connectionId")
	for {
		ev := hs.next("snapshot or connected")
		switch ev.str("type") {
		case holds.EventHold:
			hs.Snap = append(hs.Snap, ev)
			continue
		case "connected":
			if ev.str("connectionId") != hs.ConnID {
				a.t.Fatalf("connected %s, init said connection %s", ev.Raw, hs.ConnID)
			}
		default:
			a.t.Fatalf("between init and connected only hold events may come, got %s", ev.Raw)
		}
		return hs
	}
}

// next is the next JSON event (pings skipped), checked for leaks.
func (h *holdStream) next(what string) jsonEvent {
	h.t.Helper()
	for {
		ev := h.c.must(evWait, what)
		if ev.Name != "" || len(ev.Lines) != 1 {
			h.t.Fatalf("the JSON stream sends unnamed one-line events, got %s", describeEvents([]sseEvent{ev}))
		}
		je := jsonEvent{F: ev.JSON(h.t), Raw: ev.Data()}
		h.checkPrivate(je)
		if je.str("type") == "ping" {
			continue
		}
		return je
	}
}

// nextOf reads until an event of type typ, failing on any event whose type
// is in forbidden.
func (h *holdStream) nextOf(typ string, forbidden ...string) jsonEvent {
	h.t.Helper()
	for {
		ev := h.next(typ + " event")
		if ev.str("type") == typ {
			return ev
		}
		for _, f := range forbidden {
			if ev.str("type") == f {
				h.t.Fatalf("got %s while waiting for %s", ev.Raw, typ)
			}
		}
	}
}

func (h *holdStream) checkPrivate(ev jsonEvent) {
	h.t.Helper()
	for _, k := range []string{"clientId", "clientHash", "patient"} {
		if _, ok := ev.F[k]; ok {
			h.t.Fatalf("event carries %q: %s", k, ev.Raw)
		}
	}
	for _, s := range append([]string{livePatientName, livePatientEmail, livePatientPhone, "clientId", "clientHash"}, h.secrets...) {
		if strings.Contains(ev.Raw, s) {
			h.t.Fatalf("event leaks %q: %s", s, ev.Raw)
		}
	}
}

// ended asserts the next event is {"type":"end","reason":reason} and that
// the server then closes the stream.
func (h *holdStream) ended(reason string) {
	h.t.Helper()
	ev := h.next("end " + reason)
	if ev.str("type") != "end" || ev.str("reason") != reason {
		h.t.Fatalf("got %s, want end with reason %s", ev.Raw, reason)
	}
	h.c.closes(evWait)
}

func twoTypeClinic() testkit.ClinicOptions {
	return testkit.ClinicOptions{Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, CooldownMin: 1440, MaxHoldsPerClient: 1},
		{Name: "Check-up", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, CooldownMin: 1440, MaxHoldsPerClient: 1},
	}}
}

func TestHoldStreamOpensWithRetryInitSnapshotOfTheTypesHoldsThenConnected(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(twoTypeClinic())
	typ, other := c.Types[0].ID, c.Types[1].ID
	me, them, elsewhere := liveClient("me"), liveClient("them"), liveClient("elsewhere")
	mine := a.hold(typ, mondayAt(t, 10, 0), me)
	theirs := a.hold(typ, mondayAt(t, 11, 0), them)
	a.hold(other, mondayAt(t, 12, 0), elsewhere) // another type: not in this stream

	s := a.openHoldStream(typ, me, "", them, elsewhere)

	for k, want := range map[string]string{
		"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no",
	} {
		if got := s.c.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if s.Init.str("appointmentTypeId") != typ.String() || s.Init.F["leaseMs"] != float64(15*60*1000) {
		t.Fatalf("init %s: want the type and the default lease of 15 min", s.Init.Raw)
	}
	if len(s.Snap) != 2 {
		t.Fatalf("snapshot: %d hold events, want the type's 2: %v", len(s.Snap), s.Snap)
	}
	want := map[string]struct {
		own bool
		h   liveHold
	}{mine.HoldID: {true, mine}, theirs.HoldID: {false, theirs}}
	for _, ev := range s.Snap {
		w, ok := want[ev.str("holdId")]
		if !ok {
			t.Fatalf("snapshot has a hold not of this type: %s", ev.Raw)
		}
		delete(want, ev.str("holdId"))
		if ev.own() != w.own {
			t.Errorf("snapshot %s: isOwnHold %v, want %v", ev.Raw, ev.own(), w.own)
		}
		if ev.str("slotStartDate") != w.h.SlotStartDate || ev.str("specialistId") != w.h.SpecialistID.String() ||
			ev.str("appointmentTypeId") != typ.String() || ev.str("holdExpiresAt") == "" || ev.str("slotEndDate") == "" {
			t.Errorf("snapshot %s does not describe hold %+v", ev.Raw, w.h)
		}
	}
}

func TestHoldStreamForwardsEventsWithIsOwnHoldHeartbeatsOnlyToTheOwnerAndNoClientOrPatientData(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	owner, other := liveClient("owner"), liveClient("other")
	mine := a.openHoldStream(typ, owner, "", other)
	theirs := a.openHoldStream(typ, other, "", owner)
	if len(mine.Snap)+len(theirs.Snap) != 0 {
		t.Fatal("a new clinic has no holds to snapshot")
	}

	h := a.hold(typ, mondayAt(t, 10, 0), owner)
	for _, tc := range []struct {
		s   *holdStream
		own bool
	}{{mine, true}, {theirs, false}} {
		ev := tc.s.next("hold")
		if ev.str("type") != holds.EventHold || ev.str("holdId") != h.HoldID || ev.own() != tc.own {
			t.Fatalf("got %s, want hold %s with isOwnHold %v", ev.Raw, h.HoldID, tc.own)
		}
		if ev.str("slotStartDate") != h.SlotStartDate || ev.str("holdExpiresAt") == "" || ev.str("specialistId") != h.SpecialistID.String() {
			t.Fatalf("hold event %s does not describe %+v", ev.Raw, h)
		}
	}

	if st, body := a.send("PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": owner}); st != http.StatusOK {
		t.Fatalf("heartbeat: %d %s", st, body)
	}
	if ev := mine.next("heartbeat"); ev.str("type") != holds.EventHeartbeat || ev.str("holdId") != h.HoldID || !ev.own() {
		t.Fatalf("owner got %s, want its heartbeat with isOwnHold true", ev.Raw)
	}

	b := a.book(typ, h, owner)
	if ev := mine.next("confirm"); ev.str("type") != holds.EventConfirm || !ev.own() || ev.str("slotStartDate") != h.SlotStartDate {
		t.Fatalf("owner got %s, want confirm with isOwnHold true", ev.Raw)
	}
	// The other stream's next event after the hold is the confirm: the
	// heartbeat in between was never sent to it.
	if ev := theirs.next("confirm"); ev.str("type") != holds.EventConfirm || ev.own() || ev.str("slotStartDate") != h.SlotStartDate {
		t.Fatalf("other client got %s, want confirm with isOwnHold false (and never the heartbeat)", ev.Raw)
	}

	a.cancelBooking(b)
	for _, s := range []*holdStream{mine, theirs} {
		if ev := s.next("cancel"); ev.str("type") != holds.EventCancel || ev.str("slotStartDate") != h.SlotStartDate {
			t.Fatalf("got %s, want cancel of the booking", ev.Raw)
		}
	}

	// A hold by the other client: own for it, not for the first.
	h2 := a.hold(typ, mondayAt(t, 11, 0), other)
	if ev := theirs.next("hold"); ev.str("holdId") != h2.HoldID || !ev.own() {
		t.Fatalf("got %s, want own hold %s", ev.Raw, h2.HoldID)
	}
	if ev := mine.next("hold"); ev.str("holdId") != h2.HoldID || ev.own() {
		t.Fatalf("got %s, want another's hold %s", ev.Raw, h2.HoldID)
	}
	a.release(h2, other)
	for _, tc := range []struct {
		s   *holdStream
		own bool
	}{{theirs, true}, {mine, false}} {
		if ev := tc.s.next("release"); ev.str("type") != holds.EventRelease || ev.str("reason") != holds.ReasonReleased || ev.own() != tc.own {
			t.Fatalf("got %s, want release/released with isOwnHold %v", ev.Raw, tc.own)
		}
	}
}

func TestHoldStreamAnnouncesAnExpiredHoldAsReleaseExpired(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{HoldTTL: time.Second})
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	owner, other := liveClient("owner"), liveClient("other")
	mine := a.openHoldStream(typ, owner, "", other)
	theirs := a.openHoldStream(typ, other, "", owner)

	h := a.hold(typ, mondayAt(t, 10, 0), owner)
	for _, tc := range []struct {
		s   *holdStream
		own bool
	}{{mine, true}, {theirs, false}} {
		if ev := tc.s.next("hold"); ev.str("holdId") != h.HoldID {
			t.Fatalf("got %s, want hold %s", ev.Raw, h.HoldID)
		}
		ev := tc.s.nextOf(holds.EventRelease, holds.EventHold, holds.EventConfirm)
		if ev.str("holdId") != h.HoldID || ev.str("reason") != holds.ReasonExpired || ev.own() != tc.own {
			t.Fatalf("got %s, want release of %s with reason expired, isOwnHold %v", ev.Raw, h.HoldID, tc.own)
		}
	}
}

func TestHoldStreamSecondStreamOfAClientEndsTheFirstWithReplaced(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	client := liveClient("tabs")

	first := a.openHoldStream(typ, client, "")
	second := a.openHoldStream(typ, client, "")
	if second.ConnID == first.ConnID {
		t.Fatal("each stream has its own connection id")
	}
	first.ended("replaced")

	// The second stream lives on.
	h := a.hold(typ, mondayAt(t, 10, 0), liveClient("someone"))
	if ev := second.next("hold"); ev.str("holdId") != h.HoldID {
		t.Fatalf("the replacing stream got %s, want hold %s", ev.Raw, h.HoldID)
	}
}

func TestHoldStreamShortLeaseEndsWithLeaseExpired(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	s := a.openHoldStream(c.Types[0].ID, liveClient("lease"), "leaseMs=300")
	if s.Init.F["leaseMs"] != float64(300) {
		t.Fatalf("init %s, want leaseMs 300", s.Init.Raw)
	}
	start := time.Now()
	s.ended("lease-expired")
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("a 300 ms lease ended after %s", d)
	}
}

func TestHoldStreamRejectsBadRequests(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	type errBody struct {
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	for _, tc := range []struct {
		name, path string
		status     int
		field      string
	}{
		{"LeaseNotANumber", holdStreamPath(typ, "c1", "leaseMs=abc"), 400, "leaseMs"},
		{"LeaseZero", holdStreamPath(typ, "c1", "leaseMs=0"), 400, "leaseMs"},
		{"LeaseNegative", holdStreamPath(typ, "c1", "leaseMs=-5"), 400, "leaseMs"},
		{"LeaseOverAnHour", holdStreamPath(typ, "c1", "leaseMs=7200000"), 400, "leaseMs"},
		{"LeaseFraction", holdStreamPath(typ, "c1", "leaseMs=1.5"), 400, "leaseMs"},
		{"MissingClientID", "/v1/holds/stream?appointmentTypeId=" + typ.String(), 400, "clientId"},
		{"MissingType", "/v1/holds/stream?clientId=c1", 400, "appointmentTypeId"},
		{"MalformedType", "/v1/holds/stream?appointmentTypeId=nope&clientId=c1", 400, "appointmentTypeId"},
		{"UnknownType", holdStreamPath(uuid.New(), "c1", ""), 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, cancel := getStream(t, nil, a.URL+tc.path)
			defer cancel()
			raw, _ := io.ReadAll(res.Body)
			var e errBody
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("%d %q is not the JSON error shape", res.StatusCode, raw)
			}
			if res.StatusCode != tc.status || e.Error.Message == "" {
				t.Fatalf("got %d %s, want %d", res.StatusCode, raw, tc.status)
			}
			if tc.field != "" {
				if got, _ := e.Error.Details["field"].(string); got != tc.field {
					t.Fatalf("details.field %q, want %q: %s", got, tc.field, raw)
				}
				if !strings.Contains(e.Error.Message, tc.field) {
					t.Fatalf("message %q does not name %s", e.Error.Message, tc.field)
				}
			}
		})
	}
	t.Run("LeaseOfExactlyAnHourIsAccepted", func(t *testing.T) {
		s := a.openHoldStream(typ, liveClient("hour"), "leaseMs=3600000")
		if s.Init.F["leaseMs"] != float64(3600000) {
			t.Fatalf("init %s", s.Init.Raw)
		}
	})
}

// freeLoopbackAddr is a loopback address with a port nobody listens on.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestHoldStreamAndHTMLStreamEndWithServerShutdownAndTheServerExitsPromptly(t *testing.T) {
	t.Parallel()
	pool, rdb := testkit.DB(t), testkit.Redis(t)
	deps := web.Wire(pool, rdb, slog.New(slog.NewTextHandler(io.Discard, nil)), scoped(web.Options{}))
	bg, stopBG := context.WithCancel(context.Background())
	defer stopBG()
	deps.RunBackground(bg)
	waitHubReady(t, deps)
	addr := freeLoopbackAddr(t)
	srv := web.New(deps, addr)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe(ctx, 5*time.Second) }()
	base := "http://" + addr
	for deadline := time.Now().Add(evWait); ; {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not come up: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	a := &liveApp{t: t, URL: base, deps: deps, pool: pool, rdb: rdb}
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	js := a.openHoldStream(typ, liveClient("shutdown"), "")
	html := dialSSE(t, nil, base+"/c/"+c.Slug+"/book/"+typ.String()+"/live?week="+mondayAt(t, 9, 0).Format("2006-01-02"))
	html.must(evWait, "the first cell") // the stream is open

	stop()
	start := time.Now()
	js.ended("server-shutdown")
	end, _ := html.until(evWait, "end event", func(e sseEvent) bool { return e.Name == "end" })
	if end.Data() != "server-shutdown" {
		t.Fatalf("HTML stream ended with %q, want server-shutdown", end.Data())
	}
	html.closes(evWait)
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ListenAndServe: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("ListenAndServe did not return within 3 s of the shutdown")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("shutdown took %s", d)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("the server still answers after shutdown")
	} else if !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "refused") {
		t.Logf("after shutdown: %v", err)
	}
}

func TestHoldStreamsAcrossTwoInstances(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	a := bootLiveOn(t, pool, testkit.Redis(t), web.Options{})
	b := bootLiveOn(t, pool, testkit.Redis(t), web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	maker, watcher := liveClient("maker"), liveClient("watcher")

	t.Run("AHoldMadeOnAReachesAStreamOnB", func(t *testing.T) {
		onB := b.openHoldStream(typ, watcher, "", maker)
		ownOnA := a.openHoldStream(typ, maker, "", watcher)
		h := a.hold(typ, mondayAt(t, 10, 0), maker)
		if ev := onB.next("hold from A"); ev.str("holdId") != h.HoldID || ev.own() {
			t.Fatalf("B got %s, want hold %s with isOwnHold false", ev.Raw, h.HoldID)
		}
		if ev := ownOnA.next("own hold"); ev.str("holdId") != h.HoldID || !ev.own() {
			t.Fatalf("A got %s, want own hold %s", ev.Raw, h.HoldID)
		}
		// And the other way round.
		h2 := b.hold(typ, mondayAt(t, 11, 0), watcher)
		if ev := ownOnA.next("hold from B"); ev.str("holdId") != h2.HoldID || ev.own() {
			t.Fatalf("A got %s, want hold %s from B", ev.Raw, h2.HoldID)
		}
	})

	t.Run("AStreamOnBReplacesTheSameClientsStreamOnA", func(t *testing.T) {
		client := liveClient("roaming")
		onA := a.openHoldStream(typ, client, "")
		onB := b.openHoldStream(typ, client, "")
		onA.ended("replaced")
		h := a.hold(typ, mondayAt(t, 12, 0), liveClient("x"))
		if ev := onB.next("hold"); ev.str("holdId") != h.HoldID {
			t.Fatalf("the stream on B got %s, want hold %s", ev.Raw, h.HoldID)
		}
		// Back to A: now B's stream is the older one.
		again := a.openHoldStream(typ, client, "")
		onB.ended("replaced")
		h2 := b.hold(typ, mondayAt(t, 13, 0), liveClient("y"))
		if ev := again.next("hold"); ev.str("holdId") != h2.HoldID {
			t.Fatalf("the new stream on A got %s, want hold %s", ev.Raw, h2.HoldID)
		}
	})
}

// metricsText is the app's /metrics page.
func (a *liveApp) metricsText() string {
	a.t.Helper()
	st, body := a.send("GET", "/metrics", nil)
	if st != http.StatusOK {
		a.t.Fatalf("/metrics: %d", st)
	}
	return string(body)
}

// eventually polls cond for up to evWait.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(evWait); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

func TestHoldStreamCountsOpenAndEndedStreamsOnMetricsAndLeavesTheHubWhenTheClientGoes(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	open := `clinic_streams_open{kind="json",scope="` + typ.String() + `"} `

	s := a.openHoldStream(typ, liveClient("metrics"), "")
	if m := a.metricsText(); !strings.Contains(m, open+"1\n") {
		t.Fatalf("/metrics lacks %s1", open)
	}
	if n := a.deps.Hub.Counts()["type"]; n != 1 {
		t.Fatalf("hub has %d type subscriptions, want 1", n)
	}
	s.c.cancel() // the browser goes away
	eventually(t, "the stream leaves the hub", func() bool { return a.deps.Hub.Counts()["type"] == 0 })
	eventually(t, "the ended stream is counted as client-abort", func() bool {
		m := a.metricsText()
		return strings.Contains(m, open+"0\n") && strings.Contains(m, `clinic_streams_ended_total{reason="client-abort"} 1`+"\n")
	})

	short := a.openHoldStream(typ, liveClient("metrics"), "leaseMs=100")
	short.ended("lease-expired")
	eventually(t, "the lease end is counted", func() bool {
		return strings.Contains(a.metricsText(), `clinic_streams_ended_total{reason="lease-expired"} 1`+"\n")
	})
}

// namedRedis is a client of the test Redis whose connections carry name,
// so a test can cut exactly its own subscription.
func namedRedis(t *testing.T, name string) redis.UniversalClient {
	t.Helper()
	opt := *testkit.Redis(t).(*redis.Client).Options()
	opt.ClientName = name
	c := redis.NewClient(&opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// cutSubscription kills the Redis connections named name that hold a
// subscription: the hub's one subscriber.
func cutSubscription(t *testing.T, name string) {
	t.Helper()
	admin := testkit.Redis(t)
	ctx := context.Background()
	list, err := admin.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, line := range strings.Split(list, "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if f["name"] == name && (f["psub"] != "0" || f["sub"] != "0") {
			if err := admin.Do(ctx, "CLIENT", "KILL", "ID", f["id"]).Err(); err != nil {
				t.Fatal(err)
			}
			killed++
		}
	}
	if killed != 1 {
		t.Fatalf("cut %d subscribed connections named %s, want the hub's one", killed, name)
	}
}

func TestHoldStreamResendsTheHoldsWhenTheRedisSubscriptionComesBack(t *testing.T) {
	t.Parallel()
	name := "streamtest-" + uuid.NewString()[:8]
	a := bootLiveOn(t, testkit.DB(t), namedRedis(t, name), web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	me := liveClient("me")
	h := a.hold(typ, mondayAt(t, 10, 0), me)
	s := a.openHoldStream(typ, me, "")
	if len(s.Snap) != 1 {
		t.Fatalf("snapshot %v", s.Snap)
	}

	cutSubscription(t, name)
	// The hold's own event may still arrive first: the stream subscribes
	// before it reads its snapshot, so an event in between comes twice.
	for {
		ev := s.next("resync")
		if ev.str("type") == "resync" {
			break
		}
		if ev.str("type") != holds.EventHold || ev.str("holdId") != h.HoldID {
			t.Fatalf("got %s, want resync once the subscription is back", ev.Raw)
		}
	}
	if ev := s.next("hold after resync"); ev.str("type") != holds.EventHold || ev.str("holdId") != h.HoldID || !ev.own() {
		t.Fatalf("got %s, want the live hold %s resent", ev.Raw, h.HoldID)
	}
	// Events flow again.
	h2 := a.hold(typ, mondayAt(t, 11, 0), liveClient("other"))
	if ev := s.next("hold"); ev.str("holdId") != h2.HoldID || ev.own() {
		t.Fatalf("got %s, want hold %s", ev.Raw, h2.HoldID)
	}
}
