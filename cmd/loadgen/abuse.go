package main

// The abuse scenario: what one person with a script gets from the public
// path of a served build with its default limits. Each row is a plain
// script of the kind an attacker writes; the numbers are what the server
// let through.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/db"
)

// abuser is one client address: requests leave from 127.77.0.n, so the
// server sees a network of its own for each n, as it would on the
// internet, without trusting a forwarded header.
type abuser struct {
	base   string
	client *http.Client
}

func newAbuser(base string, n int) *abuser {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 77, byte(n>>8), byte(n))}, Timeout: 5 * time.Second}
	t := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}
	return &abuser{base: base, client: &http.Client{Timeout: 15 * time.Second, Transport: t}}
}

// answer is a response's status, error code and body.
type answer struct {
	status int
	code   string
	body   []byte
	header http.Header
}

func (a *abuser) do(ctx context.Context, method, path string, body []byte, headers map[string]string) answer {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(body))
	if err != nil {
		return answer{code: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := a.client.Do(req)
	if err != nil {
		return answer{code: err.Error()}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, code: strings.TrimSpace(errorCode(raw)), body: raw, header: res.Header}
}

func (a *abuser) json(ctx context.Context, method, path string, body any, headers map[string]string) answer {
	b, _ := json.Marshal(body)
	return a.do(ctx, method, path, b, headers)
}

// hold holds start (RFC 3339) of the type with specialist sp (uuid.Nil:
// any) for clientID and returns the hold's id, or the refusal.
func (a *abuser) hold(ctx context.Context, typeID, sp uuid.UUID, start, clientID string) (string, answer) {
	body := map[string]string{"appointmentTypeId": typeID.String(), "slotStartDate": start, "clientId": clientID}
	if sp != uuid.Nil {
		body["specialistId"] = sp.String()
	}
	ans := a.json(ctx, http.MethodPost, "/v1/holds", body, nil)
	var h struct {
		HoldID string `json:"holdId"`
	}
	_ = json.Unmarshal(ans.body, &h)
	return h.HoldID, ans
}

// book books a held time for the patient; on 201 it returns the
// appointment's id and manage token.
func (a *abuser) book(ctx context.Context, typeID uuid.UUID, holdID, clientID string, patient map[string]string) (id, token string, ans answer) {
	ans = a.json(ctx, http.MethodPost, "/v1/appointment-types/"+typeID.String()+"/book",
		map[string]any{"holdId": holdID, "clientId": clientID, "patient": patient},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	var b struct {
		Appointment struct {
			ID string `json:"id"`
		} `json:"appointment"`
		ManageToken string `json:"manageToken"`
	}
	_ = json.Unmarshal(ans.body, &b)
	return b.Appointment.ID, b.ManageToken, ans
}

// abuseClinic is the clinic the scenario attacks: specialists working
// around the clock, a type without cooldown and one with a day's cooldown.
type abuseClinic struct {
	id, open, cooling uuid.UUID
	slug              string
	specialists       []uuid.UUID
}

func setupAbuseClinic(ctx context.Context, pool *pgxpool.Pool) (abuseClinic, error) {
	q := db.New(pool)
	var ac abuseClinic
	ac.slug = fmt.Sprintf("abuse-%d", time.Now().UnixNano())
	c, err := q.ClinicUpsert(ctx, db.ClinicUpsertParams{Slug: ac.slug, Name: "Abuse clinic", Timezone: "Europe/Berlin"})
	if err != nil {
		return ac, err
	}
	ac.id = c.ID
	for i, cooldown := range []int32{0, 1440} {
		at, err := q.AppointmentTypeInsert(ctx, db.AppointmentTypeInsertParams{ClinicID: c.ID, Name: fmt.Sprintf("Type %d", i),
			DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, CooldownMin: cooldown, MaxHoldsPerClient: 1})
		if err != nil {
			return ac, err
		}
		if i == 0 {
			ac.open = at.ID
		} else {
			ac.cooling = at.ID
		}
	}
	for i := range 3 {
		sp, err := q.SpecialistInsert(ctx, db.SpecialistInsertParams{ClinicID: c.ID, Name: fmt.Sprintf("Specialist %d", i), Priority: int32(i + 1), Active: true})
		if err != nil {
			return ac, err
		}
		ac.specialists = append(ac.specialists, sp.ID)
		for wd := range 7 {
			if err := q.WeeklyHoursInsert(ctx, db.WeeklyHoursInsertParams{ClinicID: c.ID, SpecialistID: sp.ID, Weekday: int16(wd), StartMin: 0, EndMin: 24 * 60}); err != nil {
				return ac, err
			}
		}
		for _, t := range []uuid.UUID{ac.open, ac.cooling} {
			if err := q.AppointmentTypeSpecialistAdd(ctx, db.AppointmentTypeSpecialistAddParams{ClinicID: c.ID, AppointmentTypeID: t, SpecialistID: sp.ID}); err != nil {
				return ac, err
			}
		}
	}
	return ac, nil
}

// slotAt is the start of the n-th half hour from two days ahead at 00:00
// UTC: distinct, free and within the booking window.
func slotAt(n int) string {
	d := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 2)
	return d.Add(time.Duration(n) * 30 * time.Minute).Format(time.RFC3339)
}

// abuseRow is one line of the report.
type abuseRow struct {
	abuse, measured, goal string
}

func abuseMode(ctx context.Context, admin *pgxpool.Pool, o options) error {
	raiseFileLimit()
	// A database of its own: the server sends every e-mail its outbox
	// holds, and mail left queued by other runs (make bench's, say) would
	// stand before the scenario's in the queue.
	url, drop, err := freshDatabase(ctx, admin, o.databaseURL)
	if err != nil {
		return err
	}
	defer drop()
	if out, err := exec.CommandContext(ctx, o.spawn, "migrate").CombinedOutput(); err != nil {
		return fmt.Errorf("migrate: %v: %s", err, out)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	mb, err := startMailbox()
	if err != nil {
		return err
	}
	defer mb.close()
	base, stop, err := startChild(ctx, o.spawn, []string{"DATABASE_URL=" + url, "SMTP_URL=" + mb.url(), "MAIL_FROM=Clinic <bookings@clinic.test>", "MAIL_RETRY_SECONDS=1"}, "serve")
	if err != nil {
		return err
	}
	defer stop()
	ac, err := setupAbuseClinic(ctx, pool)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	fmt.Printf("abuse scenario against %s (default limits), clinic %s\n", base, ac.slug)
	rows := []abuseRow{
		bookOutRow(ctx, base, ac),
		mailBombRow(ctx, base, ac, mb),
		reclaimRow(ctx, base, ac),
		spellingsRow(ctx, base, ac),
		namesRow(ctx, base, ac, mb),
		waitlistRow(ctx, base, ac, mb, pool),
		streamsRow(ctx, base, ac),
		utf8Row(ctx, base, ac),
		metricsRow(ctx, base),
	}
	fmt.Printf("\n| abuse | measured | goal |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s |\n", r.abuse, r.measured, r.goal)
	}
	return nil
}

// tally counts answers by "status code".
type tally struct {
	mu sync.Mutex
	n  map[string]int
}

func (t *tally) add(a answer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == nil {
		t.n = map[string]int{}
	}
	k := fmt.Sprint(a.status)
	if a.code != "" && a.status >= 400 {
		k += " " + a.code
	}
	t.n[k]++
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var parts []string
	for k, v := range t.n {
		parts = append(parts, fmt.Sprintf("%d × %s", v, k))
	}
	return strings.Join(parts, ", ")
}

func (t *tally) count(status int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for k, v := range t.n {
		if strings.HasPrefix(k, fmt.Sprint(status)) {
			n += v
		}
	}
	return n
}

// bookOutRow: four threads from one address hold and book distinct times
// with invented patients.
func bookOutRow(ctx context.Context, base string, ac abuseClinic) abuseRow {
	a := newAbuser(base, 1)
	var books tally
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Load() < 40 {
				n := int(next.Add(1))
				client := uuid.NewString()
				hold, ans := a.hold(ctx, ac.open, uuid.Nil, slotAt(n), client)
				if hold == "" {
					books.add(ans)
					continue
				}
				_, _, ans = a.book(ctx, ac.open, hold, client, map[string]string{
					"name": "Invented Person", "email": fmt.Sprintf("victim+%d@example.com", n), "phone": fmt.Sprintf("+49 30 %07d", 1000000+n)})
				books.add(ans)
			}
		}()
	}
	wg.Wait()
	return abuseRow{"book out with invented patients, 4 threads, one address, 40 tries",
		fmt.Sprintf("%d booked (%s)", books.count(201), books.String()), "≤ 3 without a code"}
}

// freshDatabase creates an empty database beside the one of databaseURL,
// points DATABASE_URL of this process (and so of the servers it starts)
// at it, and returns its URL and how to drop it.
func freshDatabase(ctx context.Context, admin *pgxpool.Pool, databaseURL string) (string, func(), error) {
	u, err := neturl.Parse(databaseURL)
	if err != nil {
		return "", nil, fmt.Errorf("-database-url: %w", err)
	}
	name := fmt.Sprintf("clinic_abuse_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	prev := os.Getenv("DATABASE_URL")
	os.Setenv("DATABASE_URL", u.String())
	drop := func() {
		os.Setenv("DATABASE_URL", prev)
		_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	return u.String(), drop, nil
}
