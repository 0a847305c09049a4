package web_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
)

// Bytes that are not UTF-8 inside a JSON body were decoded as U+FFFD and
// stored ("A��B"). Now the body is refused with a 400 that names the
// field, and nothing is held or booked. Fails if BindJSON stops checking
// the body's encoding, or names no field.
func TestAPIBodyNotUTF8Is400NamingTheField(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	start := c.Next(time.Monday, 10, 0)
	client := clientID()

	wantField := func(t *testing.T, r *response, field string) {
		t.Helper()
		if r.Status != http.StatusBadRequest {
			t.Fatalf("status %d, want 400: %s", r.Status, r.Body)
		}
		var e struct {
			Error struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		r.Decode(&e)
		if e.Error.Code != "INVALID_ARGUMENT" || e.Error.Details["field"] != field {
			t.Fatalf("error %+v, want INVALID_ARGUMENT naming %s", e.Error, field)
		}
	}

	hold := `{"appointmentTypeId":"` + c.Types[0].ID.String() + `","slotStartDate":"` + rfc(start) + `","clientId":"` + client + "\xff\"}"
	wantField(t, a.do(t, "POST", "/v1/holds", hold), "clientId")

	h := a.hold(t, c.Types[0].ID, start, client)
	book := `{"holdId":"` + h.HoldID + `","clientId":"` + client + `","patient":{"email":"utf8@example.org","name":"A` + "\xff\xfe" + `B"}}`
	wantField(t, a.do(t, "POST", "/v1/appointment-types/"+c.Types[0].ID.String()+"/book", book), "patient.name")
	// Half a surrogate pair, escaped, decodes to U+FFFD just the same;
	// so do bad bytes deep in a nested value.
	book = `{"holdId":"` + h.HoldID + `","clientId":"` + client + `","patient":{"email":"utf8@example.org","name":"A\ud800B"}}`
	wantField(t, a.do(t, "POST", "/v1/appointment-types/"+c.Types[0].ID.String()+"/book", book), "patient.name")
	book = `{"holdId":"` + h.HoldID + `","clientId":"` + client + `","patient":{"email":"utf8@example.org","name":"AB","extra":{"list":["` + "\xc0" + `"]}}}`
	wantField(t, a.do(t, "POST", "/v1/appointment-types/"+c.Types[0].ID.String()+"/book", book), "patient.extra.list")
	var n int
	if err := a.Pool.QueryRow(t.Context(), `SELECT count(*) FROM bookings WHERE clinic_id = $1`, c.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d bookings after the refused body (%v), want none", n, err)
	}

	// The same booking in valid UTF-8 goes through.
	ok, _ := json.Marshal(map[string]any{"holdId": h.HoldID, "clientId": client, "patient": map[string]string{"email": "utf8@example.org", "name": "Änne Ørsted"}})
	if r := a.do(t, "POST", "/v1/appointment-types/"+c.Types[0].ID.String()+"/book", ok); r.Status != http.StatusCreated {
		t.Fatalf("valid booking: %d %s", r.Status, r.Body)
	}
}
