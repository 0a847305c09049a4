package web_test

// Fuzz targets of the hold endpoints and the booking: POST /v1/holds, the
// heartbeat (PATCH), the release (DELETE /v1/holds/:holdId) and POST
// /v1/appointment-types/:id/book. Every answer must be JSON (or a bodiless
// 204).

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

func FuzzCreateHold(f *testing.F) {
	a := fuzzApp(f)
	c := a.clinic(f, testkit.ClinicOptions{})
	typeID := c.Types[0].ID.String()
	monday := c.Monday(10, 0).UTC()
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
	a := fuzzApp(f)
	c := a.clinic(f, testkit.ClinicOptions{})
	monday := c.Monday(10, 0).UTC()
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
	a := fuzzApp(f)
	c := a.clinic(f, testkit.ClinicOptions{})
	typeID := c.Types[0].ID
	monday := c.Monday(10, 0).UTC()
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

// holdSlot holds a slot six days ahead for fuzz-owner (the first free one:
// FuzzAPIReschedule may have moved its booking there) and returns the hold's id.
func (a *jsonTargets) holdSlot(t *testing.T) string {
	t.Helper()
	var r *response
	for hh := 9; hh < 17; hh++ {
		b, _ := json.Marshal(map[string]string{"appointmentTypeId": a.c.Type0().ID.String(),
			"slotStartDate": a.c.At(6, hh, 0).UTC().Format(time.RFC3339), "clientId": "fuzz-owner"})
		if r = fetchJSON(t, noRedirects, "POST", a.URL+"/v1/holds", b); r.Status == http.StatusCreated {
			var h holdView
			r.Decode(&h)
			return h.HoldID
		}
	}
	t.Fatalf("no slot to hold: %d %s", r.Status, r.Body)
	return ""
}

// The mode bits of the hold target.
const (
	modeRealHold  = 1 << iota // a live hold's id, not the fuzzed one
	modeRealOwner             // its owner's client id
	modeRawHoldID             // the fuzzed hold id unescaped, when it can be
)

// DELETE /v1/holds/:holdId?clientId=, with a body too, which the server
// reads for the clientId when the query has none. Each input must get the
// answer releaseVerdict gives it: 204 for the owner's release and for a
// hold that is gone, 403 for another client, 400 for a missing or
// malformed hold or client id. Its seeds fail when checkout's Release
// answers a release of another client's hold 204 (holds.ErrNotOwner
// swallowed).
func FuzzAPIReleaseHold(f *testing.F) {
	a := bootJSONTargets(f)
	clinicHex := strings.ReplaceAll(a.c.ID.String(), "-", "")
	all := uint8(modeRealHold | modeRealOwner)
	for _, s := range []struct {
		holdID, client, body string
		mode                 uint8
	}{
		{"", "", "", all},
		{"", "", `{"clientId":"fuzz-owner"}`, modeRealHold}, // the owner in the body: 204
		{"", "someone-else", "", modeRealHold},              // 403
		{"", "", "", modeRealHold},                          // no clientId: 400
		{"", strings.Repeat("c", 129), "", modeRealHold},
		{"", "has space", "", modeRealHold},
		{"", "\x00", "", modeRealHold},
		{"", "Zürich", "", modeRealHold},
		{"h" + clinicHex + "00000000000000000000", "fuzz-owner", "", 0}, // gone: 204
		{"H" + strings.ToUpper(clinicHex) + "00000000000000000000", "fuzz-owner", "", 0},
		{"h00000000000000000000000000000000ffffffffffffffffffff", "x", "", 0},
		{"h" + clinicHex, "x", "", 0},
		{"not-a-hold", "x", `null`, 0},
		{"../appointments/" + uuid.NewString(), "x", "", modeRawHoldID},
		{"%00", "x", "", modeRawHoldID},
		{"' OR 1=1 --", "x", "", 0},
		{strings.Repeat("h", 5000), "x", "", 0},
	} {
		f.Add(s.holdID, s.client, []byte(s.body), s.mode)
	}
	for i, b := range trickyBodies[:len(trickyBodies)/2] {
		f.Add(trickyHeaders[i%len(trickyHeaders)], trickyHeaders[(i+1)%len(trickyHeaders)], []byte(b), uint8(i))
	}
	f.Fuzz(func(t *testing.T, holdID, client string, body []byte, mode uint8) {
		in := []string{holdID, client}
		held := ""
		if mode&modeRealHold != 0 {
			held = a.holdSlot(t)
			holdID = held
		}
		if mode&modeRealOwner != 0 {
			client = "fuzz-owner"
		}
		u := a.URL + "/v1/holds/" + pathSegment(holdID, mode&modeRawHoldID != 0)
		if client != "" {
			u += "?clientId=" + url.QueryEscape(client)
		}
		v := releaseVerdict(t, u, held, body)
		r := fetchJSON(t, noRedirects, "DELETE", u, body)
		what := "DELETE " + clip([]byte(u), 200)
		wantSaneOr204(t, what, body, r, in...)
		wantVerdict(t, what, r, v)
		if held != "" {
			// Leave the slot free for the next input.
			r := fetchJSON(t, noRedirects, "DELETE", a.URL+"/v1/holds/"+held+"?clientId=fuzz-owner", nil)
			if r.Status != http.StatusNoContent {
				t.Fatalf("release the hold: %d %s", r.Status, r.Body)
			}
		}
	})
}

// releaseVerdict is what DELETE /v1/holds/:holdId must answer a request to
// u with body while fuzz-owner holds held ("" for no hold): the refusal of
// the first check the input fails, in the server's order (the body's
// size, the address's characters, the body when it carries the client id,
// the hold id, the client id, the hold's owner), or 204 for a release of
// one's own hold or of a hold that is gone.
func releaseVerdict(t *testing.T, u, held string, body []byte) verdict {
	t.Helper()
	s := serverView(t, u)
	switch {
	case len(body) > maxRequestBody:
		return must(http.StatusRequestEntityTooLarge, "TOO_LARGE", "a body over the server's 256 KB")
	case !s.plain():
		return must(http.StatusBadRequest, "INVALID_ARGUMENT", "an address with characters that are not allowed")
	}
	holdID, ok := s.param("/v1/holds/", "")
	if !ok || holdID == "stream" {
		return verdict{} // another route, or none
	}
	client := s.query.Get("clientId")
	if client == "" && len(body) != 0 {
		if client, ok = bodyClientID(body); !ok {
			return must(http.StatusBadRequest, "INVALID_ARGUMENT", "a body that does not decode").unlessBody()
		}
	}
	switch _, ok := holds.ParseHoldID(holdID); {
	case !ok:
		return must(http.StatusBadRequest, "INVALID_ARGUMENT", "a hold id that is none")
	case checkout.ValidateClientID(client) != nil:
		return must(http.StatusBadRequest, "INVALID_ARGUMENT", "a missing or malformed client id")
	case holdID == held && client != "fuzz-owner":
		return must(http.StatusForbidden, "NOT_YOUR_HOLD", "another client's hold")
	case holdID == held:
		return must(http.StatusNoContent, "", "the owner's release")
	}
	return must(http.StatusNoContent, "", "a hold that is gone")
}

// bodyClientID is the clientId of a release's JSON body as the server
// decodes it (one JSON value of at most 64 KB), and false when the server
// refuses the body.
func bodyClientID(body []byte) (string, bool) {
	if len(body) > 64<<10 || strings.TrimSpace(string(body)) == "" {
		return "", false
	}
	var v struct {
		ClientID string `json:"clientId"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if dec.Decode(&v) != nil || dec.More() {
		return "", false
	}
	return v.ClientID, true
}
