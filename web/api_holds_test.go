package web_test

// Tests of the hold endpoints of the JSON API: POST, PATCH (heartbeat) and
// DELETE /v1/holds.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

func TestCreateHoldAPI(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID

	t.Run("CreatedWithTheHold", func(t *testing.T) {
		start := c.Monday(9, 0)
		r := a.do(t, "POST", "/v1/holds", holdBody(typeID, start, clientID()))
		var h holdView
		r.Decode(&h)
		if r.Status != http.StatusCreated || h.SpecialistID != c.Specialists[0].ID || h.SlotStartDate != rfc(start) ||
			h.SlotEndDate != rfc(start.Add(30*time.Minute)) {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		if _, ok := holds.ParseHoldID(h.HoldID); !ok {
			t.Fatalf("holdId %q", h.HoldID)
		}
		exp, err := time.Parse(time.RFC3339Nano, h.HoldExpiresAt)
		if err != nil || exp.Before(time.Now().Add(20*time.Second)) || exp.After(time.Now().Add(31*time.Second)) {
			t.Fatalf("holdExpiresAt %q, want about 30 s ahead", h.HoldExpiresAt)
		}
	})

	t.Run("StartGivenWithAnOffsetIsTheSameInstant", func(t *testing.T) {
		start := c.Monday(9, 30)
		body := holdBody(typeID, start, clientID())
		body["slotStartDate"] = start.In(time.FixedZone("", 2*3600)).Format(time.RFC3339)
		if r := a.do(t, "POST", "/v1/holds", body); r.Status != http.StatusCreated {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})

	// 12:00 booked through the API (its client is now cooling down), 13:00
	// held by someone, 14:00 booked by staff.
	taken := holdRefusalSlots{booked: c.Monday(12, 0), bookedBy: clientID(), held: c.Monday(13, 0), heldBy: clientID(),
		taken: c.Monday(14, 0), quotaClient: clientID()}
	a.book(t, typeID, a.hold(t, typeID, taken.booked, taken.bookedBy), taken.bookedBy)
	a.hold(t, typeID, taken.held, taken.heldBy)
	a.bookDirect(t, c, c.Type0(), c.Specialists[0].ID, taken.taken, "Desk Patient")
	a.hold(t, typeID, c.Monday(15, 0), taken.quotaClient)

	for _, tc := range holdRefusals(c, taken) {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(t, "POST", "/v1/holds", tc.body)
			wantRefusalDetails(t, r, wantError(t, r, tc.status, tc.code, tc.field))
		})
	}

	t.Run("HoldsNeverLeakAnotherClientsId", func(t *testing.T) {
		r := a.do(t, "POST", "/v1/holds", holdBody(typeID, taken.held, clientID()))
		if r.Status != http.StatusLocked || strings.Contains(r.Body, taken.heldBy) {
			t.Fatalf("SLOT_HELD answer shows a client id: %s", r.Body)
		}
	})
}

// holdRefusalSlots are the slots and clients TestCreateHoldAPI is refused on.
type holdRefusalSlots struct {
	booked, held, taken time.Time
	bookedBy, heldBy    string
	quotaClient         string
}

type holdRefusal struct {
	name   string
	body   any
	status int
	code   string
	field  string
}

// holdRefusals are the holds of c's first type that are refused, and how.
func holdRefusals(c clinic, s holdRefusalSlots) []holdRefusal {
	typeID := c.Types[0].ID
	return []holdRefusal{
		{"NoBody", "", 400, "INVALID_ARGUMENT", "body"},
		{"BadJSON", `{"appointmentTypeId":`, 400, "INVALID_ARGUMENT", "body"},
		{"NotAnObject", `[1,2]`, 400, "INVALID_ARGUMENT", "body"},
		{"TwoObjects", `{} {}`, 400, "INVALID_ARGUMENT", "body"},
		{"MissingType", map[string]string{"slotStartDate": rfc(c.Monday(10, 0)), "clientId": clientID()}, 400, "INVALID_ARGUMENT", "appointmentTypeId"},
		{"MalformedType", map[string]string{"appointmentTypeId": "nope", "slotStartDate": rfc(c.Monday(10, 0)), "clientId": clientID()}, 400, "INVALID_ARGUMENT", "appointmentTypeId"},
		{"TypeNotAString", `{"appointmentTypeId": 42, "slotStartDate": "` + rfc(c.Monday(10, 0)) + `", "clientId": "x"}`, 400, "INVALID_ARGUMENT", "appointmentTypeId"},
		{"MissingStart", map[string]string{"appointmentTypeId": typeID.String(), "clientId": clientID()}, 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"MalformedStart", map[string]string{"appointmentTypeId": typeID.String(), "slotStartDate": "next monday", "clientId": clientID()}, 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"StartWithoutZone", map[string]string{"appointmentTypeId": typeID.String(), "slotStartDate": c.Monday(10, 0).Format("2006-01-02T15:04:05"), "clientId": clientID()}, 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"MalformedSpecialist", map[string]string{"appointmentTypeId": typeID.String(), "slotStartDate": rfc(c.Monday(10, 0)), "specialistId": "bob", "clientId": clientID()}, 400, "INVALID_ARGUMENT", "specialistId"},
		{"MissingClient", map[string]string{"appointmentTypeId": typeID.String(), "slotStartDate": rfc(c.Monday(10, 0))}, 400, "INVALID_ARGUMENT", "clientId"},
		{"ClientWithSpaces", holdBody(typeID, c.Monday(10, 0), "two words"), 400, "INVALID_ARGUMENT", "clientId"},
		{"ClientTooLong", holdBody(typeID, c.Monday(10, 0), strings.Repeat("x", 129)), 400, "INVALID_ARGUMENT", "clientId"},
		{"UnknownType", holdBody(uuid.New(), c.Monday(10, 0), clientID()), 404, "NOT_FOUND", "appointmentTypeId"},
		{"OffTheGrid", holdBody(typeID, c.Monday(10, 15), clientID()), 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"OutsideOpeningHours", holdBody(typeID, c.Monday(7, 0), clientID()), 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"InThePast", holdBody(typeID, c.Monday(10, 0).AddDate(0, 0, -14), clientID()), 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"TooFarAhead", holdBody(typeID, c.Monday(10, 0).AddDate(0, 0, 70), clientID()), 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"SpecialistNotOfTheType", map[string]string{"appointmentTypeId": typeID.String(), "slotStartDate": rfc(c.Monday(10, 0)), "specialistId": uuid.NewString(), "clientId": clientID()}, 400, "INVALID_ARGUMENT", "specialistId"},
		{"BookedSlot", holdBody(typeID, s.booked, clientID()), 409, "SLOT_TAKEN", ""},
		{"BookedByStaff", holdBody(typeID, s.taken, clientID()), 409, "SLOT_TAKEN", ""},
		{"HeldSlot", holdBody(typeID, s.held, clientID()), 423, "SLOT_HELD", ""},
		{"Quota", holdBody(typeID, c.Monday(16, 0), s.quotaClient), 429, "HOLD_QUOTA", ""},
		{"Cooldown", holdBody(typeID, c.Monday(16, 30), s.bookedBy), 429, "COOLDOWN", ""},
	}
}

// wantRefusalDetails checks what a refusal tells the client about when to
// come back.
func wantRefusalDetails(t *testing.T, r *response, e errorShape) {
	t.Helper()
	switch e.Error.Code {
	case "SLOT_HELD", "COOLDOWN":
		secs := retryAfter(t, r)
		if got, _ := e.Error.Details["retryAfterSeconds"].(float64); int(got) != secs {
			t.Fatalf("details.retryAfterSeconds %v, Retry-After %d", e.Error.Details["retryAfterSeconds"], secs)
		}
		if e.Error.Code == "SLOT_HELD" && secs > 30 {
			t.Fatalf("SLOT_HELD Retry-After %d exceeds the hold TTL", secs)
		}
		if e.Error.Code == "COOLDOWN" && secs < 1439*60 {
			t.Fatalf("COOLDOWN Retry-After %d, want about a day", secs)
		}
	case "HOLD_QUOTA":
		retryAfter(t, r)
		if e.Error.Details["maxHolds"] != float64(1) {
			t.Fatalf("details %v", e.Error.Details)
		}
	}
}

func TestHeartbeatAPI(t *testing.T) {
	t.Parallel()
	// A 3 s TTL and heartbeats every 500 ms: a heartbeat may come 2.5 s
	// late on a loaded machine before the hold lapses under it. A hold
	// that must be gone is expired on purpose (PEXPIRE), not waited out.
	const ttl = 3 * time.Second
	a := newApp(t, withOptions(program.Options{HoldTTL: ttl}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID

	type gone struct {
		OK *bool `json:"ok"`
		errorShape
	}
	wantGone := func(t *testing.T, r *response) {
		t.Helper()
		var g gone
		r.Decode(&g)
		if r.Status != http.StatusGone || g.OK == nil || *g.OK || g.Error.Code != "HOLD_GONE" || g.Error.Message == "" || g.Error.Details == nil {
			t.Fatalf("got %d %s, want 410 {ok:false, error:HOLD_GONE}", r.Status, r.Body)
		}
	}

	t.Run("KeepsTheHoldPastItsTTL", func(t *testing.T) {
		client := clientID()
		start := c.Monday(10, 0)
		h := a.hold(t, typeID, start, client)
		for range 8 {
			time.Sleep(500 * time.Millisecond)
			r := a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": client})
			var body struct {
				OK            bool   `json:"ok"`
				HoldExpiresAt string `json:"holdExpiresAt"`
			}
			r.Decode(&body)
			if r.Status != http.StatusOK || !body.OK {
				t.Fatalf("heartbeat: %d %s", r.Status, r.Body)
			}
			if exp, err := time.Parse(time.RFC3339Nano, body.HoldExpiresAt); err != nil || exp.Before(time.Now().Add(ttl-time.Second)) {
				t.Fatalf("holdExpiresAt %q, want about a TTL ahead", body.HoldExpiresAt)
			}
		}
		// 4 s after the claim, with a 3 s TTL: still pinned.
		wantError(t, a.do(t, "POST", "/v1/holds", holdBody(typeID, start, clientID())), 423, "SLOT_HELD", "")
	})

	t.Run("ExpiredHoldIsGone", func(t *testing.T) {
		client := clientID()
		start := c.Monday(11, 0)
		h := a.hold(t, typeID, start, client)
		key := holdKeyOf(c.ID, typeID, c.Specialists[0].ID, start)
		if err := a.RDB.PExpire(t.Context(), key, time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, 5*time.Second, "the hold's key to expire", func() bool { return a.RDB.Exists(t.Context(), key).Val() == 0 })
		wantGone(t, a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": client}))
	})

	t.Run("AnotherClientsHoldIsGone", func(t *testing.T) {
		h := a.hold(t, typeID, c.Monday(12, 0), clientID())
		wantGone(t, a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": clientID()}))
	})

	t.Run("ReleasedHoldIsGone", func(t *testing.T) {
		client := clientID()
		h := a.hold(t, typeID, c.Monday(13, 0), client)
		if r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId="+client, nil); r.Status != http.StatusNoContent {
			t.Fatalf("release: %d %s", r.Status, r.Body)
		}
		wantGone(t, a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": client}))
	})

	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"BadJSON", `{"holdId"`, "body"},
		{"NoBody", "", "body"},
		{"MissingHoldId", map[string]string{"clientId": "x"}, "holdId"},
		{"MalformedHoldId", map[string]string{"holdId": "h123", "clientId": "x"}, "holdId"},
		{"UppercaseHoldId", map[string]string{"holdId": "H" + strings.Repeat("A", 52), "clientId": "x"}, "holdId"},
		{"MissingClient", map[string]string{"holdId": "h" + strings.ReplaceAll(c.ID.String(), "-", "") + strings.Repeat("0", 20)}, "clientId"},
		{"HoldIdNotAString", `{"holdId": true, "clientId": "x"}`, "holdId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, a.do(t, "PATCH", "/v1/holds", tc.body), 400, "INVALID_ARGUMENT", tc.field)
		})
	}
}

func TestReleaseHoldAPI(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{TrustedProxies: loopbackProxy}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID
	start := c.Monday(10, 0)
	client := clientID()
	h := a.hold(t, typeID, start, client)

	t.Run("AnotherOwnerIsForbiddenAndTheHoldStays", func(t *testing.T) {
		wantError(t, a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId="+clientID(), nil), 403, "NOT_YOUR_HOLD", "")
		wantError(t, a.do(t, "POST", "/v1/holds", holdBody(typeID, start, clientID())), 423, "SLOT_HELD", "")
	})
	t.Run("MalformedIdIsInvalid", func(t *testing.T) {
		wantError(t, a.do(t, "DELETE", "/v1/holds/not-a-hold?clientId="+client, nil), 400, "INVALID_ARGUMENT", "holdId")
	})
	t.Run("MissingClientIsInvalid", func(t *testing.T) {
		wantError(t, a.do(t, "DELETE", "/v1/holds/"+h.HoldID, nil), 400, "INVALID_ARGUMENT", "clientId")
	})
	t.Run("OwnerReleasesAndTheSlotIsFree", func(t *testing.T) {
		r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId="+client, nil)
		if r.Status != http.StatusNoContent || len(r.Body) != 0 {
			t.Fatalf("release: %d %q", r.Status, r.Body)
		}
		// Free for everyone else (the releaser's own network waits out
		// the hold's life: TestReleaseBarsTheNetworkFromTheTime).
		a.holdFrom(t, typeID, uuid.Nil, start, clientID(), "198.51.100.30")
	})
	t.Run("ReleasingAgainIsHarmless", func(t *testing.T) {
		if r := a.do(t, "DELETE", "/v1/holds/"+h.HoldID+"?clientId="+client, nil); r.Status != http.StatusNoContent {
			t.Fatalf("second release: %d %s", r.Status, r.Body)
		}
	})
	t.Run("UnknownHoldIsHarmless", func(t *testing.T) {
		id := "h" + strings.ReplaceAll(c.ID.String(), "-", "") + strings.Repeat("ab", 10)
		if r := a.do(t, "DELETE", "/v1/holds/"+id+"?clientId="+client, nil); r.Status != http.StatusNoContent {
			t.Fatalf("release of an unknown hold: %d %s", r.Status, r.Body)
		}
	})
}

// TestHoldsAPIWithRedisDown: the holds live in Redis, so without it every
// hold operation is 503 UNAVAILABLE with Retry-After, never a 500.
func TestHoldsAPIWithRedisDown(t *testing.T) {
	t.Parallel()
	a := newApp(t, withRedisDown())
	c := a.clinic(t, testkit.ClinicOptions{})
	typeID := c.Types[0].ID
	someHold := "h" + strings.ReplaceAll(c.ID.String(), "-", "") + strings.Repeat("0", 20)

	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"CreateHold", "POST", "/v1/holds", holdBody(typeID, c.Monday(10, 0), clientID())},
		{"CreateHoldForASpecialist", "POST", "/v1/holds", map[string]string{
			"appointmentTypeId": typeID.String(), "slotStartDate": rfc(c.Monday(10, 0)), "specialistId": c.Specialists[1].ID.String(), "clientId": clientID(),
		}},
		{"Heartbeat", "PATCH", "/v1/holds", map[string]string{"holdId": someHold, "clientId": clientID()}},
		{"Release", "DELETE", "/v1/holds/" + someHold + "?clientId=x", nil},
		{"Book", "POST", "/v1/appointment-types/" + typeID.String() + "/book", map[string]any{
			"holdId": someHold, "clientId": clientID(), "patient": map[string]string{"name": "Ada", "email": "ada@example.com"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(t, tc.method, tc.path, tc.body)
			wantError(t, r, 503, "UNAVAILABLE", "")
			if r.Header.Get("Retry-After") == "" {
				t.Errorf("a 503 without Retry-After")
			}
		})
	}

	t.Run("InputErrorsAreStill400", func(t *testing.T) {
		wantError(t, a.do(t, "POST", "/v1/holds", holdBody(typeID, c.Monday(10, 15), clientID())), 400, "INVALID_ARGUMENT", "slotStartDate")
	})
	t.Run("TimeslotsStillAnswer", func(t *testing.T) {
		day := c.Monday(10, 0).Format("2006-01-02")
		if r := a.do(t, "GET", "/v1/appointment-types/"+typeID.String()+"/timeslots?from="+day+"&to="+day, nil); r.Status != 200 {
			t.Fatalf("timeslots with Redis down: %d %s", r.Status, r.Body)
		}
	})
}

// holdKeyOf is the Redis key of a hold of the time start, as the holds
// package's doc lays its keys out: tests expire it on purpose, instead of
// waiting out a TTL.
func holdKeyOf(clinicID, typeID, specialistID uuid.UUID, start time.Time) string {
	return "hold:{" + clinicID.String() + "}:" + typeID.String() + ":" + start.UTC().Format(time.RFC3339) + ":" + specialistID.String()
}
