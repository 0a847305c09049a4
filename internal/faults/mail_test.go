package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/testkit"
)

// A mail server out of service while patients book, and the instance that
// took the bookings killed with SIGKILL before any e-mail got through:
// once the mail server is back, another instance sends every confirmation,
// exactly once.
func TestKilledInstanceMailOnce(t *testing.T) {
	t.Parallel()
	url := testkit.FreshDB(t)
	migrate(t, url)
	pool := openPool(t, url)
	c := faultClinic(t, pool)
	smtp := testkit.SMTP(t)
	smtp.RefuseNext(1<<30, 451, "4.3.2 out of service") // the outage
	env := map[string]string{
		"DATABASE_URL": url, "REDIS_URL": testRedisURL(), "SMTP_URL": smtp.URL(),
		"MAIL_FROM": "Clinic <bookings@clinic.test>", "MAIL_RETRY_SECONDS": "1", "DB_MAX_CONNS": "10",
	}
	victim := startServer(t, "victim", env)

	const patients = 6
	client := newClient()
	starts := slotStarts(t, c, 10)
	for i := range patients {
		bookOn(t, client, victim, c.Types[0].ID.String(), starts[i*7], i)
	}
	// Every confirmation has been tried and refused at least once, and
	// waits for its retry (none is mid-attempt): then the instance dies.
	testkit.WaitFor(t, 30*time.Second, "every confirmation refused and waiting for its retry", func() bool {
		return count(t, pool, `SELECT count(*) FROM messages m JOIN river_job j ON j.id = m.job_id
			WHERE m.kind = 'confirmation' AND m.attempts >= 1 AND j.state = 'retryable'`) == patients
	})
	victim.kill()
	orphans := testkit.Running(t, pool) // the victim's, run by nobody now
	if n := len(smtp.Messages()); n != 0 {
		t.Fatalf("%d e-mails got through the outage", n)
	}

	smtp.RefuseNext(0, 0, "") // the mail server is back
	startServer(t, "successor", env)
	smtp.WaitFor(t, patients, 60*time.Second)
	// Counted once no e-mail job is left to run: a double sent by the
	// successor (a confirmation the victim's last attempt had delivered
	// after all) fails this.
	testkit.Drained(t, pool, testkit.Jobs{Kinds: []string{"send_message"}, Orphans: orphans})
	got := smtp.Messages()
	seen := map[string]int{}
	for _, r := range got {
		seen[testkit.ParseReceived(t, r).To]++
	}
	if len(got) != patients || len(seen) != patients {
		t.Fatalf("%d e-mails to %d addresses, want %d to %d: %v", len(got), len(seen), patients, patients, seen)
	}
	if n := count(t, pool, `SELECT count(*) FROM messages WHERE kind = 'confirmation' AND status = 'sent'`); n != patients {
		t.Fatalf("%d confirmations recorded as sent, want %d", n, patients)
	}
}

// bookOn holds and books start for patient i through the API.
func bookOn(t *testing.T, client *http.Client, on *server, typeID string, start time.Time, i int) {
	t.Helper()
	clientID := "mail-" + uuid.NewString()
	hold := holdOn(t, client, on, fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"clientId":%q}`,
		typeID, start.UTC().Format(time.RFC3339), clientID))
	st, b, err := postJSON(client, on.URL+"/v1/appointment-types/"+typeID+"/book",
		fmt.Sprintf(`{"holdId":%q,"clientId":%q,"patient":{"name":"Mail Patient","email":"p%d@example.org"}}`, hold, clientID, i))
	if err != nil || st != http.StatusCreated {
		t.Fatalf("book on %s: %d %s %v", on.name, st, b, err)
	}
	var a struct {
		Appointment struct {
			ID uuid.UUID `json:"id"`
		} `json:"appointment"`
	}
	if err := json.Unmarshal(b, &a); err != nil || a.Appointment.ID == uuid.Nil {
		t.Fatalf("booking answer without an id: %s", b)
	}
}

func count(t *testing.T, pool *pgxpool.Pool, sql string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(ctxTimeout(t, 10*time.Second), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
