package web_test

// A reader of GET /v1/holds/stream, the JSON stream an API client holds
// open, that checks every event it reads for leaks.

import (
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

// liveClient is a fresh client id.
func liveClient(prefix string) string { return prefix + "-" + uuid.NewString() }

// The patient of every booking the stream tests make; no stream may ever
// show it.
const (
	livePatientName  = "Ada Streamfield-Lovelace"
	livePatientEmail = "ada.streamfield@example.org"
	livePatientPhone = "+44 20 7946 0321"
)

var livePatientSeq atomic.Int64

// bookLive books the hold for the stream tests' patient: one of the
// client's own (the cooldown binds a patient's e-mail and phone), whose
// details still contain the ones the streams are searched for.
func (a *app) bookLive(t testing.TB, typeID uuid.UUID, h holdView, client string) bookedView {
	t.Helper()
	return a.bookFor(t, typeID, h, client, map[string]string{"name": livePatientName, "email": client + "." + livePatientEmail,
		"phone": fmt.Sprintf("%s %d", livePatientPhone, livePatientSeq.Add(1))})
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
func (a *app) openHoldStream(t *testing.T, typeID uuid.UUID, client, extra string, secrets ...string) *holdStream {
	t.Helper()
	c := dialSSE(t, a.hc, a.URL+holdStreamPath(typeID, client, extra))
	hs := &holdStream{t: t, c: c, secrets: append([]string{client}, secrets...)}
	first := c.must(evWait, "retry hint")
	if first.Retry != "5000" || len(first.Lines) != 0 || first.Name != "" {
		t.Fatalf("first block %q, want a bare \"retry: 5000\"", describeEvents([]sseEvent{first}))
	}
	hs.Init = hs.next("init")
	if hs.Init.str("type") != "init" || hs.Init.str("connectionId") == "" {
		t.Fatalf("second event %s, want init with a connectionId", hs.Init.Raw)
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
				t.Fatalf("connected %s, init said connection %s", ev.Raw, hs.ConnID)
			}
		default:
			t.Fatalf("between init and connected only hold events may come, got %s", ev.Raw)
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
