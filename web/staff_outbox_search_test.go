package web_test

// The outbox page's search and pages: a confirmation is found by part of
// its address, by kind and by its booking however many messages came
// after it; fifty to a page, with the next and previous pages linked.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/testkit"
)

func TestOutboxSearchAndPages(t *testing.T) {
	t.Parallel()
	a := keepingApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	email := uniqueEmail("searched")
	bk := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Wednesday, 11, 0), booking.Patient{Name: "Searched Patient", Email: email}).Booking
	admin := a.signIn(t, c.Admin)
	keptMessage(t, admin, email)
	// Sixty reminders about another booking come after it.
	busy := uniqueEmail("busy")
	other := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Wednesday, 12, 0), booking.Patient{Name: "Busy Patient", Email: busy}).Booking
	keptMessage(t, admin, busy)
	ctx := context.Background()
	for i := range 60 {
		id := uuid.New()
		if _, err := a.Pool.Exec(ctx, `INSERT INTO messages (id, clinic_id, booking_id, kind, recipient, send_at) VALUES ($1, $2, $3, 'reminder', 'busy@example.org', now())`, id, c.ID, other.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Pool.Exec(ctx, `INSERT INTO outbox_copies (message_id, clinic_id, recipient, subject, raw, created_at) VALUES ($1, $2, 'busy@example.org', $3, '', now() + $4 * interval '1 second')`, id, c.ID, fmt.Sprintf("Reminder %d", i), i+1); err != nil {
			t.Fatal(err)
		}
	}
	rows := func(query string) []string {
		t.Helper()
		var out []string
		r := admin.Get("/staff/outbox" + query).Want(http.StatusOK)
		r.Doc().Find(`[data-testid="outbox-row"]`).Each(func(_ int, s *goquery.Selection) { out = append(out, s.Text()) })
		return out
	}
	first := rows("")
	if len(first) != 50 || strings.Contains(strings.Join(first, "\n"), email) {
		t.Fatalf("the first page has %d rows (the confirmation among them: %v), want 50 newest", len(first), strings.Contains(strings.Join(first, "\n"), email))
	}
	page := admin.Get("/staff/outbox").Doc()
	next, _ := page.Find(`[data-testid="outbox-next"]`).Attr("href")
	if !strings.Contains(strings.Join(rows(strings.TrimPrefix(next, "/staff/outbox")), "\n"), email) {
		t.Errorf("the next page (%q) does not have the confirmation", next)
	}
	local := strings.SplitN(email, "@", 2)[0]
	if got := rows("?kind=confirmation"); len(got) != 2 || strings.Contains(strings.Join(got, "\n"), "Reminder") {
		t.Errorf("the confirmations: %q, want the two bookings' alone", got)
	}
	for _, q := range []url.Values{{"to": {local[:len(local)-2]}}, {"kind": {"confirmation"}, "to": {"searched"}}, {"booking": {bk.ID.String()}}} {
		got := rows("?" + q.Encode())
		if len(got) != 1 || !strings.Contains(got[0], email) {
			t.Errorf("search %v: %d rows %q, want the confirmation alone", q, len(got), got)
		}
	}
	admin.Get("/staff/outbox?kind=spam").Want(http.StatusBadRequest)
	admin.Get("/staff/outbox?booking=nope").Want(http.StatusBadRequest)
	if got := rows("?to=" + url.QueryEscape("%")); len(got) != 0 {
		t.Errorf("a %% matches %d rows", len(got))
	}
	// Staff only.
	a.newClient(t).Get("/staff/outbox?to=busy").WantRedirect("/staff/login")
}
