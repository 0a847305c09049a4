package faults

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/platform/postgres"

	"github.com/clinic/booking/internal/testkit"
)

// pgCluster is a PostgreSQL cluster of one test, so it can be stopped and
// started without disturbing the others. As root, its commands run as the
// postgres user (initdb and postgres refuse to run as root).
type pgCluster struct {
	bin  string // directory of initdb, pg_ctl, postgres
	base string // holds data/ and pg.log
	data string
	log  string
	port int
	asPG bool // run the server commands through runuser -u postgres
}

// startPGCluster creates and starts a cluster on a free port. The test is
// skipped when PostgreSQL's server binaries are not installed.
func startPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	bin, err := postgres.ServerBinDir()
	if err != nil {
		t.Skipf("skipping: %v (install postgresql-15 to run this test)", err)
	}
	base, err := os.MkdirTemp("", "clinic-faults-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &pgCluster{bin: bin, base: base, data: filepath.Join(base, "data"), log: filepath.Join(base, "pg.log"),
		port: testkit.FreePort(t), asPG: os.Geteuid() == 0}
	t.Cleanup(func() {
		// Immediate: nothing here needs a clean shutdown.
		_ = c.run("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "-t", "30", "stop")
		os.RemoveAll(base)
	})
	if c.asPG {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres system user (`go run ./cmd/devenv up` creates it): %v", err)
		}
		uid, err := strconv.Atoi(u.Uid)
		if err != nil {
			t.Fatalf("postgres uid %q: %v", u.Uid, err)
		}
		gid, err := strconv.Atoi(u.Gid)
		if err != nil {
			t.Fatalf("postgres gid %q: %v", u.Gid, err)
		}
		if err := os.Chown(base, uid, gid); err != nil {
			t.Fatal(err)
		}
		// MkdirTemp's directory is 0700 and now the postgres user's; its
		// parent (the temp dir) must let postgres through.
		if err := c.run("test", "-w", base); err != nil {
			t.Fatalf("the postgres user cannot write %s: %v", base, err)
		}
	}
	if err := c.run("initdb", "-D", c.data, "--auth=trust", "--username=postgres",
		"--encoding=UTF8", "--locale=C", "--no-instructions"); err != nil {
		t.Fatalf("initdb: %v", err)
	}
	// Settings in the configuration file, not on pg_ctl's command line, so
	// every start (and restart) gets them. fsync and friends off: nothing
	// here must survive a crash of the machine. No Unix socket: TCP only.
	conf := fmt.Sprintf(`
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = ''
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
`, c.port)
	f, err := os.OpenFile(filepath.Join(c.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(conf)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
	return c
}

// URL of the cluster's postgres database.
func (c *pgCluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

func (c *pgCluster) start() error {
	if err := c.run("pg_ctl", "-D", c.data, "-l", c.log, "-w", "-t", "60", "start"); err != nil {
		return fmt.Errorf("pg_ctl start: %w\n%s", err, c.logTail())
	}
	return nil
}

// stop stops the server in fast mode: sessions are terminated, open
// transactions roll back.
func (c *pgCluster) stop() error {
	if err := c.run("pg_ctl", "-D", c.data, "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, c.logTail())
	}
	return nil
}

func (c *pgCluster) logTail() string {
	b, err := os.ReadFile(c.log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// run runs one of the server binaries (or a plain command such as test)
// as the cluster's owner. PG* variables are dropped so the caller's shell
// cannot point it elsewhere.
func (c *pgCluster) run(name string, args ...string) error {
	path := name
	if p := filepath.Join(c.bin, name); fileExists(p) {
		path = p
	}
	var cmd *exec.Cmd
	if c.asPG {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = "/" // the working directory may be closed to postgres
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// pg_ctl start leaves the postmaster running; it must not hold our
	// output pipe open, and Wait must not wait for it.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
