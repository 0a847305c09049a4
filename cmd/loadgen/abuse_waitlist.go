package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// waitlistRow: six places joined with invented addresses (each from an
// address of its own), then one a real patient confirms from the link of
// their e-mail; two booked times of the day are cancelled. It counts the
// offers each side got.
func waitlistRow(ctx context.Context, base string, ac abuseClinic, mb *mailbox, pool *pgxpool.Pool) abuseRow {
	const what, goal = "fake waitlist places capture freed times: 6 invented joins, then 1 real", "0 offers to invented places"
	real := "real.waiter@" + ac.slug + ".example.net" // of this run, as the mail cap counts a day
	berlin, _ := time.LoadLocation("Europe/Berlin")
	var cancels []func() answer
	var day string
	for i := range 2 {
		a, client := newAbuser(base, 70+i), uuid.NewString()
		start := slotAt(500 + i)
		hold, ans := a.hold(ctx, ac.open, ac.specialists[0], start, client)
		id, token := "", ""
		if hold != "" {
			id, token, ans = a.book(ctx, ac.open, hold, client, map[string]string{"name": "Booked Person", "email": fmt.Sprintf("booked%d@example.net", i)})
		}
		if id == "" {
			return abuseRow{what, fmt.Sprintf("booking a time to free refused: %d %s", ans.status, ans.code), goal}
		}
		t, _ := time.Parse(time.RFC3339, start)
		day = t.In(berlin).Format(time.DateOnly)
		cancels = append(cancels, func() answer {
			return a.do(ctx, http.MethodDelete, "/v1/appointments/"+id, nil, map[string]string{"Authorization": "Bearer " + token})
		})
	}
	join := func(n int, email string) answer {
		return newAbuser(base, n).json(ctx, http.MethodPost, "/v1/appointment-types/"+ac.open.String()+"/waitlist",
			map[string]any{"clientId": uuid.NewString(), "from": day, "to": day, "patient": map[string]string{"name": "Wait Ing", "email": email}}, nil)
	}
	var joins tally
	for i := range 6 {
		joins.add(join(80+i, fmt.Sprintf("victim+%d@example.net", i)))
	}
	joins.add(join(86, real))
	confirmed := confirmFromMail(ctx, base, mb, real)
	for _, cancel := range cancels {
		cancel()
		time.Sleep(2 * time.Second) // the offer's job runs at once
	}
	var fake, genuine int
	err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE e.patient_email <> $2), count(*) FILTER (WHERE e.patient_email = $2)
		FROM waitlist_offers o JOIN waitlist_entries e ON e.id = o.entry_id WHERE e.clinic_id = $1`, ac.id, real).Scan(&fake, &genuine)
	if err != nil {
		return abuseRow{what, "counting offers: " + err.Error(), goal}
	}
	return abuseRow{what, fmt.Sprintf("%d offers to invented places, %d to the real one (joins %s; real place confirmed: %v)",
		fake, genuine, joins.String(), confirmed), goal}
}

// placeLink finds a place's link in a raw message (quoted-printable soft
// line breaks removed).
var placeLink = regexp.MustCompile(`/c/[a-z0-9-]+/waitlist/[A-Za-z0-9_-]{43}`)

// confirmFromMail waits (up to 15 s) for the e-mail to rcpt with a place's
// link and presses its Confirm button, as the patient does.
func confirmFromMail(ctx context.Context, base string, mb *mailbox, rcpt string) bool {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if link := mb.find(rcpt, placeLink); link != "" {
			return newAbuser(base, 87).do(ctx, http.MethodPost, link+"/confirm", nil, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}).status < 400
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// find is the first match of re in a message to rcpt, or "".
func (mb *mailbox) find(rcpt string, re *regexp.Regexp) string {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	for _, m := range mb.mail {
		for _, t := range m.to {
			if bytes.EqualFold([]byte(t), []byte(rcpt)) {
				if found := re.Find(bytes.ReplaceAll(m.data, []byte("=\r\n"), nil)); found != nil {
					return string(found)
				}
			}
		}
	}
	return ""
}
