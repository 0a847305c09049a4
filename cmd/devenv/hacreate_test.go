package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHelperPgAutoctl stands in for a pg_autoctl whose create hangs: run
// through a link called pg_autoctl with --pgdata, it starts a child and
// sleeps, so the test sees a process tree like the real one's.
func TestHelperPgAutoctl(t *testing.T) {
	if os.Getenv("DEVENV_HELPER_PG_AUTOCTL") != "1" {
		t.Skip("only run as a helper process")
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		os.Exit(3)
	}
	time.Sleep(60 * time.Second)
	os.Exit(0)
}

func TestRemoveFailedCreate(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	h := &haFormation{dir: t.TempDir()}
	data := filepath.Join(h.dir, "monitor")

	// What an interrupted create leaves: its processes, its data directory,
	// its configuration and state under the home, its pid file.
	link := filepath.Join(t.TempDir(), "pg_autoctl")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "-test.run=^TestHelperPgAutoctl$", "--", "--pgdata", data)
	cmd.Env = append(os.Environ(), "DEVENV_HELPER_PG_AUTOCTL=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// A service of a killed create: nothing in its command line, its
	// parent gone; only its PGDATA says whose it is.
	orphan := exec.Command("sleep", "60")
	orphan.Env = append(os.Environ(), "PGDATA="+data)
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orphan.Process.Kill(); _ = orphan.Wait() })
	config, state := autoctlHomes(nil)
	leftovers := []string{
		filepath.Join(data, "PG_VERSION"),
		filepath.Join(config, data, "pg_autoctl.cfg"),
		filepath.Join(state, data, "pg_autoctl.state"),
		filepath.Join(state, data, "pg_autoctl.init"),
		h.pidfile("monitor"),
	}
	for _, f := range leftovers {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("stale\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) < 3 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		pids = processesOf([]string{data})
	}
	if len(pids) != 3 || !slices.Contains(pids, cmd.Process.Pid) || !slices.Contains(pids, orphan.Process.Pid) {
		t.Fatalf("processes of %s: %v, want the helper (%d), its child and the orphan (%d)", data, pids, cmd.Process.Pid, orphan.Process.Pid)
	}

	if err := h.remove(nil, "monitor"); err != nil {
		t.Fatal(err)
	}

	for _, pid := range pids {
		if st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
			t.Errorf("pid %d still runs: %s", pid, st)
		}
	}
	for _, f := range leftovers {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s is still there", f)
		}
	}
}
