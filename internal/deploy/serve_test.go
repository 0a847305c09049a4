package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/testkit"
)

// chrooted runs the image's entrypoint with args in root, as user, with
// the image's environment and env over it (nothing of this process's).
type chrooted struct {
	root, user string
	env        []string
}

func (c chrooted) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "chroot", append([]string{"--userspec=" + c.user, c.root, "/usr/local/bin/clinic"}, args...)...)
	cmd.Env = c.env
	return cmd
}

// run runs one command to its end and returns what it printed.
func (c chrooted) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.command(ctx, args...).CombinedOutput()
	return string(out), err
}

// checkServes runs `serve` from the unpacked image against a fresh
// database and the test Redis: it migrates, answers /readyz, a seeded
// clinic's page and a static file, runs as the image's user, and
// `clinic healthcheck` tells it running from it stopped.
func checkServes(t *testing.T, root string, imageEnv []string, user string) {
	port := testkit.FreePort(t)
	redisURL := os.Getenv("TEST_REDIS_URL")
	if redisURL == "" {
		redisURL = testkit.DefaultTestRedisURL
	}
	dbURL := testkit.FreshDB(t)
	c := chrooted{root: root, user: user, env: append(imageEnv,
		"ADDR=127.0.0.1:"+strconv.Itoa(port),
		"DATABASE_URL="+dbURL,
		"REDIS_URL="+redisURL,
		"SHUTDOWN_TIMEOUT_SECONDS=5",
	)}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	var logs bytes.Buffer
	srv := c.command(context.Background(), "serve")
	srv.Stdout, srv.Stderr = &logs, &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() {
		srv.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("server's log:\n%s", logs.String())
		}
	})
	waitReady(t, base, exited)

	t.Run("AsTheImageUser", func(t *testing.T) { checkProcess(t, srv.Process.Pid, root) })
	t.Run("Migrated", func(t *testing.T) {
		out, err := c.run(t, "migrate", "status")
		files, _ := filepath.Glob("../../migrations/*.sql")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err != nil || len(lines) != len(files) || strings.Contains(out, "pending") {
			t.Fatalf("migrate status (%v), want %d applied:\n%s", err, len(files), out)
		}
	})
	t.Run("SeededClinicPage", func(t *testing.T) {
		if out, err := c.run(t, "seed"); err != nil || !strings.Contains(out, "Seeded") {
			t.Fatalf("seed: %v\n%s", err, out)
		}
		// The demo clinic keeps Europe/Berlin: its page needs the zone
		// data the binary carries, since the image has no zoneinfo.
		if status, body := get(t, base+"/c/demo"); status != 200 || !strings.Contains(body, "Demo Health Clinic") {
			t.Fatalf("/c/demo: %d\n%.500s", status, body)
		}
	})
	t.Run("ErasureLedgerWritten", func(t *testing.T) { checkLedger(t, c, dbURL) })
	t.Run("StaticFiles", func(t *testing.T) {
		want, err := os.ReadFile("../../static/app.css")
		if err != nil {
			t.Fatal(err)
		}
		if status, body := get(t, base+"/static/app.css"); status != 200 || body != string(want) {
			t.Fatalf("/static/app.css: %d, %d bytes, want the %d of static/app.css", status, len(body), len(want))
		}
		if status, body := get(t, base+"/static/vendor/htmx.min.js"); status != 200 || !strings.Contains(body, "htmx") {
			t.Fatalf("/static/vendor/htmx.min.js: %d", status)
		}
	})
	t.Run("HealthcheckWhileServing", func(t *testing.T) {
		if out, err := c.run(t, "healthcheck"); err != nil {
			t.Fatalf("healthcheck: %v\n%s", err, out)
		}
	})
	t.Run("HealthcheckOnceStopped", func(t *testing.T) {
		srv.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			if err != nil {
				t.Errorf("after SIGTERM the server exited with %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the server did not stop within 20 s of SIGTERM")
		}
		out, err := c.run(t, "healthcheck", "-timeout", "2s")
		if err == nil || !strings.Contains(out, "refused") || strings.Count(strings.TrimSpace(out), "\n") > 0 {
			t.Fatalf("healthcheck of a stopped server: %v, want a failure of one line naming the refusal:\n%s", err, out)
		}
	})
}

// checkLedger: an erasure the table has and the file lacks is appended to
// the file by a replay, in the state folder, the server's and private.
func checkLedger(t *testing.T, c chrooted, dbURL string) {
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `INSERT INTO erasures (id, clinic_id, email_mac, key_id, erased_at)
		SELECT gen_random_uuid(), id, 'test', 'test', now() FROM clinics WHERE slug = 'demo'`); err != nil {
		t.Fatal(err)
	}
	if out, err := c.run(t, "patient", "erase", "--replay"); err != nil {
		t.Fatalf("patient erase --replay: %v\n%s", err, out)
	}
	info, err := os.Stat(filepath.Join(c.root, stateDir, "erasures.ledger"))
	if err != nil {
		t.Fatalf("no ledger in the state folder: %v", err)
	}
	if st := info.Sys().(*syscall.Stat_t); st.Uid != 65532 || info.Mode()&0o077 != 0 {
		t.Errorf("the ledger is uid %d, %v: want the server's, read by it alone", st.Uid, info.Mode())
	}
}

func waitReady(t *testing.T, base string, exited chan error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the server exited before it was ready: %v", err)
		default:
		}
		if status, _ := get(t, base+"/readyz"); status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not answer 200 within 90 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// get is the status and body of a GET, 0 when nothing answered.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// checkProcess reads the server's /proc entry: its user and groups are
// the image's, it holds no capability and its root is the image's.
func checkProcess(t *testing.T, pid int, root string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			status[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	want := map[string]string{
		"Uid":    "65532 65532 65532 65532",
		"Gid":    "65532 65532 65532 65532",
		"CapEff": "0000000000000000",
		"CapPrm": "0000000000000000",
	}
	for k, v := range want {
		if status[k] != v {
			t.Errorf("%s: %q, want %q", k, status[k], v)
		}
	}
	if g := status["Groups"]; g != "" && g != "65532" {
		t.Errorf("supplementary groups %q, want none but the image's", g)
	}
	if r, err := os.Readlink(fmt.Sprintf("/proc/%d/root", pid)); err != nil || r != root {
		t.Errorf("the server's root is %q (%v), want %s", r, err, root)
	}
}
