package web_test

// Tests of GET /v1/holds/stream, the JSON stream an API client holds open,
// read over real HTTP from the whole app on PostgreSQL and Redis.

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

func TestHoldStreamOpensWithRetryInitSnapshotOfTheTypesHoldsThenConnected(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, twoTypeClinic())
	typ, other := c.Types[0].ID, c.Types[1].ID
	me, them, elsewhere := liveClient("me"), liveClient("them"), liveClient("elsewhere")
	mine := a.hold(t, typ, c.Monday(10, 0), me)
	theirs := a.hold(t, typ, c.Monday(11, 0), them)
	a.hold(t, other, c.Monday(12, 0), elsewhere) // another type: not in this stream

	s := a.openHoldStream(t, typ, me, "", them, elsewhere)

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
		h   holdView
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
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	owner, other := liveClient("owner"), liveClient("other")
	mine := a.openHoldStream(t, typ, owner, "", other)
	theirs := a.openHoldStream(t, typ, other, "", owner)
	if len(mine.Snap)+len(theirs.Snap) != 0 {
		t.Fatal("a new clinic has no holds to snapshot")
	}

	h := a.hold(t, typ, c.Monday(10, 0), owner)
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

	if r := a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": owner}); r.Status != http.StatusOK {
		t.Fatalf("heartbeat: %d %s", r.Status, r.Body)
	}
	if ev := mine.next("heartbeat"); ev.str("type") != holds.EventHeartbeat || ev.str("holdId") != h.HoldID || !ev.own() {
		t.Fatalf("owner got %s, want its heartbeat with isOwnHold true", ev.Raw)
	}

	b := a.bookLive(t, typ, h, owner)
	if ev := mine.next("confirm"); ev.str("type") != holds.EventConfirm || !ev.own() || ev.str("slotStartDate") != h.SlotStartDate {
		t.Fatalf("owner got %s, want confirm with isOwnHold true", ev.Raw)
	}
	// The other stream's next event after the hold is the confirm: the
	// heartbeat in between was never sent to it.
	if ev := theirs.next("confirm"); ev.str("type") != holds.EventConfirm || ev.own() || ev.str("slotStartDate") != h.SlotStartDate {
		t.Fatalf("other client got %s, want confirm with isOwnHold false (and never the heartbeat)", ev.Raw)
	}

	a.cancelBooking(t, b)
	for _, s := range []*holdStream{mine, theirs} {
		if ev := s.next("cancel"); ev.str("type") != holds.EventCancel || ev.str("slotStartDate") != h.SlotStartDate {
			t.Fatalf("got %s, want cancel of the booking", ev.Raw)
		}
	}

	// A hold by the other client: own for it, not for the first.
	h2 := a.hold(t, typ, c.Monday(11, 0), other)
	if ev := theirs.next("hold"); ev.str("holdId") != h2.HoldID || !ev.own() {
		t.Fatalf("got %s, want own hold %s", ev.Raw, h2.HoldID)
	}
	if ev := mine.next("hold"); ev.str("holdId") != h2.HoldID || ev.own() {
		t.Fatalf("got %s, want another's hold %s", ev.Raw, h2.HoldID)
	}
	a.release(t, h2, other)
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
	a := newApp(t, withOptions(program.Options{HoldTTL: time.Second}))
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	owner, other := liveClient("owner"), liveClient("other")
	mine := a.openHoldStream(t, typ, owner, "", other)
	theirs := a.openHoldStream(t, typ, other, "", owner)

	h := a.hold(t, typ, c.Monday(10, 0), owner)
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
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	client := liveClient("tabs")

	first := a.openHoldStream(t, typ, client, "")
	second := a.openHoldStream(t, typ, client, "")
	if second.ConnID == first.ConnID {
		t.Fatal("each stream has its own connection id")
	}
	first.ended("replaced")

	// The second stream lives on.
	h := a.hold(t, typ, c.Monday(10, 0), liveClient("someone"))
	if ev := second.next("hold"); ev.str("holdId") != h.HoldID {
		t.Fatalf("the replacing stream got %s, want hold %s", ev.Raw, h.HoldID)
	}
}

func TestHoldStreamShortLeaseEndsWithLeaseExpired(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	s := a.openHoldStream(t, c.Types[0].ID, liveClient("lease"), "leaseMs=300")
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
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
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
			var e errorShape
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
		s := a.openHoldStream(t, typ, liveClient("hour"), "leaseMs=3600000")
		if s.Init.F["leaseMs"] != float64(3600000) {
			t.Fatalf("init %s", s.Init.Raw)
		}
	})
}

func TestHoldStreamsAcrossTwoInstances(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	b := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	maker, watcher := liveClient("maker"), liveClient("watcher")

	t.Run("AHoldMadeOnAReachesAStreamOnB", func(t *testing.T) {
		onB := b.openHoldStream(t, typ, watcher, "", maker)
		ownOnA := a.openHoldStream(t, typ, maker, "", watcher)
		h := a.hold(t, typ, c.Monday(10, 0), maker)
		if ev := onB.next("hold from A"); ev.str("holdId") != h.HoldID || ev.own() {
			t.Fatalf("B got %s, want hold %s with isOwnHold false", ev.Raw, h.HoldID)
		}
		if ev := ownOnA.next("own hold"); ev.str("holdId") != h.HoldID || !ev.own() {
			t.Fatalf("A got %s, want own hold %s", ev.Raw, h.HoldID)
		}
		// And the other way round.
		h2 := b.hold(t, typ, c.Monday(11, 0), watcher)
		if ev := ownOnA.next("hold from B"); ev.str("holdId") != h2.HoldID || ev.own() {
			t.Fatalf("A got %s, want hold %s from B", ev.Raw, h2.HoldID)
		}
	})

	t.Run("AStreamOnBReplacesTheSameClientsStreamOnA", func(t *testing.T) {
		client := liveClient("roaming")
		onA := a.openHoldStream(t, typ, client, "")
		onB := b.openHoldStream(t, typ, client, "")
		onA.ended("replaced")
		h := a.hold(t, typ, c.Monday(12, 0), liveClient("x"))
		if ev := onB.next("hold"); ev.str("holdId") != h.HoldID {
			t.Fatalf("the stream on B got %s, want hold %s", ev.Raw, h.HoldID)
		}
		// Back to A: now B's stream is the older one.
		again := a.openHoldStream(t, typ, client, "")
		onB.ended("replaced")
		h2 := b.hold(t, typ, c.Monday(13, 0), liveClient("y"))
		ev := again.next("hold")
		if ev.str("holdId") == h.HoldID {
			// Published before this stream opened, the event of h may
			// still have been on its way from Redis to A's subscription
			// when the stream joined it.
			ev = again.next("hold")
		}
		if ev.str("holdId") != h2.HoldID {
			t.Fatalf("the new stream on A got %s, want hold %s", ev.Raw, h2.HoldID)
		}
	})
}

func TestHoldStreamCountsOpenAndEndedStreamsOnMetricsAndLeavesTheHubWhenTheClientGoes(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	open := `clinic_streams_open{kind="json",scope="` + typ.String() + `"} `

	s := a.openHoldStream(t, typ, liveClient("metrics"), "")
	if m := a.metricsText(t); !strings.Contains(m, open+"1\n") {
		t.Fatalf("/metrics lacks %s1", open)
	}
	if n := a.Deps.Hub.Counts()["type"]; n != 1 {
		t.Fatalf("hub has %d type subscriptions, want 1", n)
	}
	s.c.cancel() // the browser goes away
	testkit.WaitFor(t, evWait, "the stream leaves the hub", func() bool { return a.Deps.Hub.Counts()["type"] == 0 })
	testkit.WaitFor(t, evWait, "the ended stream is counted as client-abort", func() bool {
		m := a.metricsText(t)
		return strings.Contains(m, open+"0\n") && strings.Contains(m, `clinic_streams_ended_total{reason="client-abort"} 1`+"\n")
	})

	short := a.openHoldStream(t, typ, liveClient("metrics"), "leaseMs=100")
	short.ended("lease-expired")
	testkit.WaitFor(t, evWait, "the lease end is counted", func() bool {
		return strings.Contains(a.metricsText(t), `clinic_streams_ended_total{reason="lease-expired"} 1`+"\n")
	})
}

func TestHoldStreamResendsTheHoldsWhenTheRedisSubscriptionComesBack(t *testing.T) {
	t.Parallel()
	name := "streamtest-" + uuid.NewString()[:8]
	a := newApp(t, withRedis(namedRedis(t, name)))
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	me := liveClient("me")
	h := a.hold(t, typ, c.Monday(10, 0), me)
	s := a.openHoldStream(t, typ, me, "")
	if len(s.Snap) != 1 {
		t.Fatalf("snapshot %v", s.Snap)
	}

	testkit.CutSubscription(t, name)
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
	h2 := a.hold(t, typ, c.Monday(11, 0), liveClient("other"))
	if ev := s.next("hold"); ev.str("holdId") != h2.HoldID || ev.own() {
		t.Fatalf("got %s, want hold %s", ev.Raw, h2.HoldID)
	}
}
