package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// api is the whole app on an httptest server, with the services behind it
// (to book directly as staff would, or to look into Redis).
type api struct {
	url  string
	deps web.Deps
	pool *pgxpool.Pool
	rdb  redis.UniversalClient
}

// bootAPI boots the app on the test database and Redis; rdb nil means the
// test Redis.
func bootAPI(t *testing.T, rdb redis.UniversalClient, o web.Options) *api {
	t.Helper()
	return bootAPIOn(t, testkit.DB(t), rdb, o)
}

// bootAPIOn is bootAPI on a given database.
func bootAPIOn(t testing.TB, pool *pgxpool.Pool, rdb redis.UniversalClient, o web.Options) *api {
	t.Helper()
	if rdb == nil {
		rdb = testkit.Redis(t)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	deps := web.Wire(pool, rdb, logger, scoped(o))
	ts := httptest.NewServer(web.New(deps, "127.0.0.1:0").Handler())
	t.Cleanup(ts.Close)
	return &api{url: ts.URL, deps: deps, pool: pool, rdb: rdb}
}

// clinic makes a clinic of the test's own; its holds are released at the end.
func (a *api) clinic(t *testing.T, o testkit.ClinicOptions) testkit.Clinic {
	t.Helper()
	c := testkit.NewClinic(t, a.pool, o)
	rdb := testkit.Redis(t)
	t.Cleanup(func() { forgetClinicHolds(rdb, c.ID) })
	return c
}

// forgetClinicHolds releases a clinic's live holds and unregisters it from
// the sweeper's set (the key the holds package documents).
func forgetClinicHolds(rdb redis.UniversalClient, clinicID uuid.UUID) {
	ctx := context.Background()
	s := holds.NewStore(rdb, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if active, err := s.Active(ctx, clinicID); err == nil {
		for _, h := range active {
			_, _ = s.Release(ctx, h.HoldID, h.ClientID)
		}
	}
	_, _ = s.SweepClinic(ctx, clinicID)
	rdb.SRem(ctx, "holds:clinics", clinicID.String())
}

// reply is one HTTP answer, read whole.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends a request. body is sent as is when it is a string or []byte,
// marshalled otherwise, and left out when nil. hdr are name, value pairs.
func (a *api) do(t testing.TB, method, path string, body any, hdr ...string) reply {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{Status: res.StatusCode, Header: res.Header, Body: raw}
}

// into decodes the body, failing the test when it is not JSON.
func (r reply) into(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("body %q is not the JSON expected: %v", r.Body, err)
	}
}

// wantError asserts the status and the error shape
// {"error":{"code","message","details"}} with the code, and for a 400
// details.field == field.
func wantError(t *testing.T, r reply, status int, code, field string) errorShape {
	t.Helper()
	var top map[string]json.RawMessage
	r.into(t, &top)
	var e errorShape
	r.into(t, &e)
	if r.Status != status || e.Error.Code != code {
		t.Fatalf("got %d %s, want %d %s: %s", r.Status, e.Error.Code, status, code, r.Body)
	}
	if _, ok := top["error"]; !ok || e.Error.Message == "" || e.Error.Details == nil {
		t.Fatalf("not the error shape: %s", r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q", ct)
	}
	if status == http.StatusBadRequest || field != "" {
		if got, _ := e.Error.Details["field"].(string); got != field {
			t.Fatalf("details.field %q, want %q: %s", got, field, r.Body)
		}
	}
	return e
}

// retryAfter is the Retry-After header in seconds, failing when it is missing.
func retryAfter(t *testing.T, r reply) int {
	t.Helper()
	n, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || n < 1 {
		t.Fatalf("Retry-After %q, want whole seconds >= 1", r.Header.Get("Retry-After"))
	}
	return n
}

// holdView is the answer to POST /v1/holds.
type holdView struct {
	HoldID        string    `json:"holdId"`
	SpecialistID  uuid.UUID `json:"specialistId"`
	SlotStartDate string    `json:"slotStartDate"`
	SlotEndDate   string    `json:"slotEndDate"`
	HoldExpiresAt string    `json:"holdExpiresAt"`
}

func holdBody(typeID uuid.UUID, start time.Time, client string) map[string]string {
	return map[string]string{
		"appointmentTypeId": typeID.String(), "slotStartDate": start.UTC().Format(time.RFC3339), "clientId": client,
	}
}

// hold must give 201.
func (a *api) hold(t testing.TB, typeID uuid.UUID, start time.Time, client string) holdView {
	t.Helper()
	r := a.do(t, "POST", "/v1/holds", holdBody(typeID, start, client))
	if r.Status != http.StatusCreated {
		t.Fatalf("hold %s: %d %s", start, r.Status, r.Body)
	}
	var h holdView
	r.into(t, &h)
	return h
}

func clientID() string { return "c-" + uuid.NewString() }

// slotAt is the next Monday (at least tomorrow) at hh:mm in Berlin, in UTC.
func slotAt(t *testing.T, hh, mm int) time.Time {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return testkit.NextWeekday(time.Now(), loc, time.Monday, hh, mm).UTC()
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func TestCreateHoldAPI(t *testing.T) {
	t.Parallel()
	a := bootAPI(t, nil, web.Options{})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID

	t.Run("CreatedWithTheHold", func(t *testing.T) {
		start := slotAt(t, 9, 0)
		r := a.do(t, "POST", "/v1/holds", holdBody(typeID, start, clientID()))
		var h holdView
		r.into(t, &h)
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
		start := slotAt(t, 9, 30)
		body := holdBody(typeID, start, clientID())
		body["slotStartDate"] = start.In(time.FixedZone("", 2*3600)).Format(time.RFC3339)
		if r := a.do(t, "POST", "/v1/holds", body); r.Status != http.StatusCreated {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})

	// 12:00 booked through the API (its client is now cooling down), 13:00
	// held by someone, 14:00 booked by staff.
	bookedStart, bookedClient := slotAt(t, 12, 0), clientID()
	a.book(t, typeID, a.hold(t, typeID, bookedStart, bookedClient), bookedClient)
	heldStart, heldBy := slotAt(t, 13, 0), clientID()
	a.hold(t, typeID, heldStart, heldBy)
	takenStart := slotAt(t, 14, 0)
	a.staffBook(t, c, 0, takenStart)

	quotaClient := clientID()
	a.hold(t, typeID, slotAt(t, 15, 0), quotaClient)

	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"NoBody", "", 400, "INVALID_ARGUMENT", "body"},
		{"BadJSON", `{"appointmentTypeId":`, 400, "INVALID_ARGUMENT", "body"},
		{"NotAnObject", `[1,2]`, 400, "INVALID_ARGUMENT", "body"},
		{"TwoObjects", `{} {}`, 400, "INVALID_ARGUMENT", "body"},
		{"MissingType", map[string]string{"slotStartDate": rfc(slotAt(t, 10, 0)), "clientId": clientID()}, 400, "INVALID_ARGUMENT", "appointmentTypeId"},
		{"MalformedType", map[string]string{"appointmentTypeId": "nope", "slotStartDate": rfc(slotAt(t, 10, 0)), "clientId": clientID()}, 400, "INVALID_ARGUMENT", "appointmentTypeId"},
		{"TypeNotAString", `{"appointmentTypeId": 42, "slotStartDate": "` + rfc(slotAt(t, 10, 0)) + `", "clientId": "x"}`, 400, "INVALID_ARGUMENT", "appointmentTypeId"},
		{"MissingStart", map[string]string{"appointmentTypeId": typeID.String(), "clientId": clientID()}, 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"MalformedStart", map[string]string{"appointmentTypeId": typeID.String(), "slotStartDate": "next monday", "clientId": clientID()}, 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"StartWithoutZone", map[string]string{"appointmentTypeId": typeID.String(), "slotStartDate": slotAt(t, 10, 0).Format("2006-01-02T15:04:05"), "clientId": clientID()}, 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"MalformedSpecialist", map[string]string{"appointmentTypeId": typeID.String(), "slotStartDate": rfc(slotAt(t, 10, 0)), "specialistId": "bob", "clientId": clientID()}, 400, "INVALID_ARGUMENT", "specialistId"},
		{"MissingClient", map[string]string{"appointmentTypeId": typeID.String(), "slotStartDate": rfc(slotAt(t, 10, 0))}, 400, "INVALID_ARGUMENT", "clientId"},
		{"ClientWithSpaces", holdBody(typeID, slotAt(t, 10, 0), "two words"), 400, "INVALID_ARGUMENT", "clientId"},
		{"ClientTooLong", holdBody(typeID, slotAt(t, 10, 0), strings.Repeat("x", 129)), 400, "INVALID_ARGUMENT", "clientId"},
		{"UnknownType", holdBody(uuid.New(), slotAt(t, 10, 0), clientID()), 404, "NOT_FOUND", "appointmentTypeId"},
		{"OffTheGrid", holdBody(typeID, slotAt(t, 10, 15), clientID()), 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"OutsideOpeningHours", holdBody(typeID, slotAt(t, 7, 0), clientID()), 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"InThePast", holdBody(typeID, slotAt(t, 10, 0).AddDate(0, 0, -14), clientID()), 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"TooFarAhead", holdBody(typeID, slotAt(t, 10, 0).AddDate(0, 0, 70), clientID()), 400, "INVALID_ARGUMENT", "slotStartDate"},
		{"SpecialistNotOfTheType", map[string]string{"appointmentTypeId": typeID.String(), "slotStartDate": rfc(slotAt(t, 10, 0)), "specialistId": uuid.NewString(), "clientId": clientID()}, 400, "INVALID_ARGUMENT", "specialistId"},
		{"BookedSlot", holdBody(typeID, bookedStart, clientID()), 409, "SLOT_TAKEN", ""},
		{"BookedByStaff", holdBody(typeID, takenStart, clientID()), 409, "SLOT_TAKEN", ""},
		{"HeldSlot", holdBody(typeID, heldStart, clientID()), 423, "SLOT_HELD", ""},
		{"Quota", holdBody(typeID, slotAt(t, 16, 0), quotaClient), 429, "HOLD_QUOTA", ""},
		{"Cooldown", holdBody(typeID, slotAt(t, 16, 30), bookedClient), 429, "COOLDOWN", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(t, "POST", "/v1/holds", tc.body)
			e := wantError(t, r, tc.status, tc.code, tc.field)
			switch tc.code {
			case "SLOT_HELD", "COOLDOWN":
				secs := retryAfter(t, r)
				if got, _ := e.Error.Details["retryAfterSeconds"].(float64); int(got) != secs {
					t.Fatalf("details.retryAfterSeconds %v, Retry-After %d", e.Error.Details["retryAfterSeconds"], secs)
				}
				if tc.code == "SLOT_HELD" && secs > 30 {
					t.Fatalf("SLOT_HELD Retry-After %d exceeds the hold TTL", secs)
				}
				if tc.code == "COOLDOWN" && secs < 1439*60 {
					t.Fatalf("COOLDOWN Retry-After %d, want about a day", secs)
				}
			case "HOLD_QUOTA":
				retryAfter(t, r)
				if e.Error.Details["maxHolds"] != float64(1) {
					t.Fatalf("details %v", e.Error.Details)
				}
			}
		})
	}

	t.Run("HoldsNeverLeakAnotherClientsId", func(t *testing.T) {
		r := a.do(t, "POST", "/v1/holds", holdBody(typeID, heldStart, clientID()))
		if r.Status != http.StatusLocked || strings.Contains(string(r.Body), heldBy) {
			t.Fatalf("SLOT_HELD answer shows a client id: %s", r.Body)
		}
	})
}

func TestHeartbeatAPI(t *testing.T) {
	t.Parallel()
	a := bootAPI(t, nil, web.Options{HoldTTL: time.Second})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID

	type gone struct {
		OK    *bool `json:"ok"`
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	wantGone := func(t *testing.T, r reply) {
		t.Helper()
		var g gone
		r.into(t, &g)
		if r.Status != http.StatusGone || g.OK == nil || *g.OK || g.Error.Code != "HOLD_GONE" || g.Error.Message == "" || g.Error.Details == nil {
			t.Fatalf("got %d %s, want 410 {ok:false, error:HOLD_GONE}", r.Status, r.Body)
		}
	}

	t.Run("KeepsTheHoldPastItsTTL", func(t *testing.T) {
		client := clientID()
		start := slotAt(t, 10, 0)
		h := a.hold(t, typeID, start, client)
		for range 5 {
			time.Sleep(300 * time.Millisecond)
			r := a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": client})
			var body struct {
				OK            bool   `json:"ok"`
				HoldExpiresAt string `json:"holdExpiresAt"`
			}
			r.into(t, &body)
			if r.Status != http.StatusOK || !body.OK {
				t.Fatalf("heartbeat: %d %s", r.Status, r.Body)
			}
			if exp, err := time.Parse(time.RFC3339Nano, body.HoldExpiresAt); err != nil || exp.Before(time.Now().Add(500*time.Millisecond)) {
				t.Fatalf("holdExpiresAt %q, want about a TTL ahead", body.HoldExpiresAt)
			}
		}
		// 1.5 s after the claim, with a 1 s TTL: still pinned.
		wantError(t, a.do(t, "POST", "/v1/holds", holdBody(typeID, start, clientID())), 423, "SLOT_HELD", "")
	})

	t.Run("ExpiredHoldIsGone", func(t *testing.T) {
		client := clientID()
		h := a.hold(t, typeID, slotAt(t, 11, 0), client)
		time.Sleep(1300 * time.Millisecond)
		wantGone(t, a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": client}))
	})

	t.Run("AnotherClientsHoldIsGone", func(t *testing.T) {
		h := a.hold(t, typeID, slotAt(t, 12, 0), clientID())
		wantGone(t, a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": clientID()}))
	})

	t.Run("ReleasedHoldIsGone", func(t *testing.T) {
		client := clientID()
		h := a.hold(t, typeID, slotAt(t, 13, 0), client)
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
	a := bootAPI(t, nil, web.Options{})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID
	start := slotAt(t, 10, 0)
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
		a.hold(t, typeID, start, clientID())
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
// hold operation is 503 UNAVAILABLE, never a 500.
func TestHoldsAPIWithRedisDown(t *testing.T) {
	t.Parallel()
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { _ = down.Close() })
	a := bootAPI(t, down, web.Options{})
	c := testkit.NewClinic(t, a.pool, testkit.ClinicOptions{})
	typeID := c.Types[0].ID
	someHold := "h" + strings.ReplaceAll(c.ID.String(), "-", "") + strings.Repeat("0", 20)

	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"CreateHold", "POST", "/v1/holds", holdBody(typeID, slotAt(t, 10, 0), clientID())},
		{"CreateHoldForASpecialist", "POST", "/v1/holds", map[string]string{
			"appointmentTypeId": typeID.String(), "slotStartDate": rfc(slotAt(t, 10, 0)), "specialistId": c.Specialists[1].ID.String(), "clientId": clientID(),
		}},
		{"Heartbeat", "PATCH", "/v1/holds", map[string]string{"holdId": someHold, "clientId": clientID()}},
		{"Release", "DELETE", "/v1/holds/" + someHold + "?clientId=x", nil},
		{"Book", "POST", "/v1/appointment-types/" + typeID.String() + "/book", map[string]any{
			"holdId": someHold, "clientId": clientID(), "patient": map[string]string{"name": "Ada", "email": "ada@example.com"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, a.do(t, tc.method, tc.path, tc.body), 503, "UNAVAILABLE", "")
		})
	}

	t.Run("InputErrorsAreStill400", func(t *testing.T) {
		wantError(t, a.do(t, "POST", "/v1/holds", holdBody(typeID, slotAt(t, 10, 15), clientID())), 400, "INVALID_ARGUMENT", "slotStartDate")
	})
	t.Run("TimeslotsStillAnswer", func(t *testing.T) {
		day := slotAt(t, 10, 0).Format("2006-01-02")
		if r := a.do(t, "GET", "/v1/appointment-types/"+typeID.String()+"/timeslots?from="+day+"&to="+day, nil); r.Status != 200 {
			t.Fatalf("timeslots with Redis down: %d %s", r.Status, r.Body)
		}
	})
}
