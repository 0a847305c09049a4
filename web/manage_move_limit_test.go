package web_test

// The moves of one booking by its manage link are limited per link (each
// sends the patient an e-mail): six an hour, the page's and the API's
// together. The seventh is refused with 429 and Retry-After, on the page
// in the patient's language and in the API's error shape; another
// booking moves as before, and Redis keeps no manage link.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
)

// moveCase is a booking moved by its manage link, page and API alike.
type moveCase struct {
	a     *app
	c     clinic
	token string
	cl    *client
}

// page moves the booking to hh:00 on Monday by the manage page's form.
func (m moveCase) page(t *testing.T, hh int, hdr ...string) *response {
	t.Helper()
	return m.cl.send("POST", "/manage/"+m.token+"/reschedule", url.Values{"start": {rfc(m.c.Monday(hh, 0))}, "confirm": {"yes"}},
		append([]string{"Accept", browserAccept}, hdr...)...)
}

// api moves the booking to hh:00 on Monday by PATCH /v1/appointments/:id,
// with the booking's current id and ETag.
func (m moveCase) api(t *testing.T, hh int) *response {
	t.Helper()
	b, err := m.a.Deps.Bookings.ByManageToken(context.Background(), m.token)
	if err != nil {
		t.Fatal(err)
	}
	return m.cl.send("PATCH", "/v1/appointments/"+b.ID.String(), map[string]string{"slotStartDate": rfc(m.c.Monday(hh, 0))},
		"Authorization", "Bearer "+m.token, "If-Match", fmt.Sprintf(`"v%d"`, b.Version))
}

func TestMovesPerManageLinkAreLimited(t *testing.T) {
	t.Parallel()
	avoidHourEdge(time.Minute)
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID
	mine, theirs := clientID(), clientID()
	b := a.book(t, typeID, a.hold(t, typeID, c.Monday(10, 0), mine), mine)
	other := a.book(t, typeID, a.hold(t, typeID, c.Monday(14, 0), theirs), theirs)
	m := moveCase{a: a, c: c, token: b.ManageToken, cl: a.newClient(t)}

	// Six moves between 11:00 and 12:00, three by the page, three by the API.
	for i, hh := range []int{11, 12, 11} {
		if r := m.page(t, hh); r.Status != http.StatusSeeOther {
			t.Fatalf("page move %d to %d:00: %d %s", i+1, hh, r.Status, clip(r.Body, 1500))
		}
	}
	for i, hh := range []int{12, 11, 12} {
		if r := m.api(t, hh); r.Status != http.StatusOK {
			t.Fatalf("API move %d to %d:00: %d %s", i+1, hh, r.Status, r.Body)
		}
	}

	// The seventh: by the page, a whole page and the htmx panel, in the
	// patient's language; by the API, the error shape.
	wantMovesSpent(t, m.page(t, 11), "This appointment has been moved too often in the last hour. Please try again in")
	if r := m.page(t, 11, "HX-Request", "true"); strings.Contains(r.Body, "<html") {
		t.Error("the answer to htmx is a whole page")
	} else {
		wantMovesSpent(t, r, "This appointment has been moved too often")
	}
	wantMovesSpent(t, m.page(t, 11, "Accept-Language", "de"), "Dieser Termin wurde in der letzten Stunde zu oft verschoben.")
	r := m.api(t, 11)
	e := wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
	if s := retryAfter(t, r); s > 3600 {
		t.Errorf("API: Retry-After %d s, beyond the hour", s)
	}
	if !strings.Contains(e.Error.Message, "at most 6 moves per hour") || e.Error.Details["limit"] != float64(6) || e.Error.Details["windowSeconds"] != float64(3600) {
		t.Errorf("API: %s", r.Body)
	}
	now, err := a.Deps.Bookings.ByManageToken(context.Background(), b.ManageToken)
	if err != nil || !now.Start.Equal(c.Monday(12, 0)) || now.Status != "confirmed" {
		t.Fatalf("after the refused moves: %+v %v", now, err)
	}

	// Another booking, from the same address, moves.
	o := moveCase{a: a, c: c, token: other.ManageToken, cl: m.cl}
	if r := o.page(t, 15); r.Status != http.StatusSeeOther {
		t.Fatalf("another booking's move: %d %s", r.Status, clip(r.Body, 1500))
	}
	keys, err := a.RDB.Keys(context.Background(), "ratelimit:*move-link*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("no per-link counters in Redis (%v)", err)
	}
	for _, k := range keys {
		if strings.Contains(k, b.ManageToken) || strings.Contains(k, other.ManageToken) {
			t.Errorf("Redis keeps a manage link: %s", k)
		}
	}
}

// wantMovesSpent asserts a 429 page or panel that says msg, with a
// Retry-After within the hour.
func wantMovesSpent(t *testing.T, r *response, msg string) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429: %s", r.Status, clip(r.Body, 1500))
	}
	if s := retryAfter(t, r); s > 3600 {
		t.Errorf("Retry-After %d s, beyond the hour", s)
	}
	if got := r.Text(`[data-testid="problem"]`); !strings.Contains(got, msg) {
		t.Errorf("the panel says %q, want %q", got, msg)
	}
}
