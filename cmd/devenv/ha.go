package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// haFormation is a pg_auto_failover formation on loopback: a monitor and
// two PostgreSQL nodes, a primary and a synchronous secondary, each run by
// its own `pg_autoctl run` in a process group of its own (the failover
// test kills a node's whole group). Its files live in <repo>/.data/ha:
// monitor/, node1/, node2/ (the data directories), <name>.pid (the pid of
// the pg_autoctl that runs it), <name>.log and <name>-create-<n>.log (the
// output of each attempt to create it).
type haFormation struct {
	pg  *postgres // for the binaries and the owner (postgres as root)
	dir string
}

// The formation's ports: clear of the single server's 54320 and of Redis.
const (
	haMonitorPort = 54361
	haNode1Port   = 54362
	haNode2Port   = 54363
)

// haNodes are the two nodes, in the order they are created: node1 starts
// as the primary, node2 is cloned from it.
var haNodes = []haNode{{"node1", haNode1Port}, {"node2", haNode2Port}}

type haNode struct {
	name string
	port int
}

// haFiles are what `up -ha` needs besides PostgreSQL itself.
var haFiles = []string{"/usr/bin/pg_autoctl"}

// haMonitorSettings make the monitor notice a dead primary within about
// three seconds and stop waiting for it to demote itself after three more
// (the defaults take about 30 s from a primary's death to a promotion).
var haMonitorSettings = map[string]string{
	"pgautofailover.health_check_period":               "1000",
	"pgautofailover.health_check_timeout":              "1000",
	"pgautofailover.health_check_max_retries":          "1",
	"pgautofailover.health_check_retry_delay":          "500",
	"pgautofailover.node_considered_unhealthy_timeout": "3000",
	"pgautofailover.primary_demote_timeout":            "3000",
}

// haNodeSettings are each node's keeper timeouts, in seconds: how long a
// standby being promoted waits for its WAL receiver to stop and to catch up.
var haNodeSettings = map[string]string{
	"timeout.prepare_promotion_walreceiver": "1",
	"timeout.prepare_promotion_catchup":     "5",
}

func newHAFormation(pg *postgres) *haFormation {
	return &haFormation{pg: pg, dir: filepath.Join(pg.data, "ha")}
}

// haURL is the multi-host URL of db on the formation: pgx tries each host
// and keeps the one that accepts writes.
func haURL(db string) string {
	hosts := make([]string, len(haNodes))
	for i, n := range haNodes {
		hosts[i] = fmt.Sprintf("%s:%d", pgHost, n.port)
	}
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable&target_session_attrs=read-write", strings.Join(hosts, ","), db)
}

func (h *haFormation) monitorURL() string {
	return fmt.Sprintf("postgres://autoctl_node@%s:%d/pg_auto_failover?sslmode=disable", pgHost, haMonitorPort)
}

// up creates what is missing, starts what is not running, and waits until
// the formation has a primary and a secondary in sync.
func (h *haFormation) up() error {
	if err := ensurePackages("pg_auto_failover", haFiles, "postgresql-15-auto-failover"); err != nil {
		return err
	}
	owner, err := h.pg.owner(true)
	if err != nil {
		return err
	}
	if err := h.prepare(owner); err != nil {
		return err
	}
	monitor := filepath.Join(h.dir, "monitor")
	if !h.created(owner, "monitor") {
		logf("creating the pg_auto_failover monitor in %s", monitor)
		if err := h.create(owner, "monitor", "monitor", "--pgdata", monitor, "--pgport", strconv.Itoa(haMonitorPort),
			"--hostname", pgHost, "--listen", pgHost, "--auth", "trust", "--no-ssl"); err != nil {
			return err
		}
	}
	if err := h.start(owner, "monitor"); err != nil {
		return err
	}
	if err := h.waitSQL(haMonitorPort, "pg_auto_failover", 60*time.Second); err != nil {
		return fmt.Errorf("monitor: %w", err)
	}
	if err := h.tuneMonitor(); err != nil {
		return err
	}
	for i, n := range haNodes {
		data := filepath.Join(h.dir, n.name)
		if !h.created(owner, n.name) {
			if i > 0 { // a standby is cloned from a running primary
				if err := h.waitFormation(i, 120*time.Second); err != nil {
					return err
				}
			}
			logf("creating pg_auto_failover node %s on %s:%d", n.name, pgHost, n.port)
			if err := h.create(owner, n.name, "postgres", "--pgdata", data, "--pgport", strconv.Itoa(n.port),
				"--hostname", pgHost, "--listen", pgHost, "--name", n.name, "--dbname", databases[0],
				"--auth", "trust", "--no-ssl", "--monitor", h.monitorURL()); err != nil {
				return err
			}
		}
		if _, ok := h.running(n.name); !ok {
			// Only while it is stopped: pg_autoctl config set signals a
			// running pg_autoctl, which reads the file again anyway.
			for k, v := range haNodeSettings {
				if err := quiet(h.autoctl(owner, "config", "set", "--pgdata", data, k, v)); err != nil {
					return err
				}
			}
		}
		if err := h.start(owner, n.name); err != nil {
			return err
		}
	}
	if err := h.waitFormation(len(haNodes), 180*time.Second); err != nil {
		return err
	}
	return h.createDatabases()
}

// prepare creates the formation's directory, owned by owner, in a place
// owner can reach: as root in a clone under /root, /var/tmp, linked from
// .data/ha.
func (h *haFormation) prepare(owner *account) error {
	// pg_autoctl keeps each node's configuration and state under its
	// user's home (~/.config, ~/.local/share): a postgres user created by
	// devenv has none yet.
	if owner != nil && owner.home != "" {
		if _, err := os.Stat(owner.home); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(owner.home, 0o755); err != nil {
				return fmt.Errorf("creating %s: %w", owner.home, err)
			}
			if err := owner.chown(owner.home); err != nil {
				return err
			}
		}
	}
	if target, err := os.Readlink(h.dir); err == nil {
		h.dir = target
		return nil
	}
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", h.dir, err)
	}
	if err := owner.chown(h.dir); err != nil {
		return err
	}
	if owner.canWrite(h.dir) {
		return nil
	}
	if entries, _ := os.ReadDir(h.dir); len(entries) > 0 {
		return fmt.Errorf("the %s user cannot reach %s: remove it and run up -ha again", owner.name, h.dir)
	}
	link := h.dir
	if err := os.Remove(link); err != nil {
		return fmt.Errorf("removing %s: %w", link, err)
	}
	sum := sha256.Sum256([]byte(h.pg.root))
	h.dir = "/var/tmp/clinic-booking-ha-" + hex.EncodeToString(sum[:4])
	logf("the %s user cannot reach %s; putting the formation in %s and linking it", owner.name, link, h.dir)
	if err := h.pg.makeFallback(owner, h.dir); err != nil {
		return err
	}
	os.Remove(filepath.Join(h.dir, "data")) // makeFallback's, for the single server
	return os.Symlink(h.dir, link)
}

// autoctl is a pg_autoctl command run as owner. Its runtime files (pid
// files, sockets of its supervisor) stay in the formation's directory.
func (h *haFormation) autoctl(owner *account, args ...string) *exec.Cmd {
	cmd := owner.command("/usr/bin/pg_autoctl", args...)
	bin, _ := h.pg.bin()
	config, state := autoctlHomes(owner)
	cmd.Env = append(cmd.Env, "XDG_RUNTIME_DIR="+filepath.Join(h.dir, "run"), "PG_CONFIG="+filepath.Join(bin, "pg_config"),
		"XDG_CONFIG_HOME="+filepath.Dir(config), "XDG_DATA_HOME="+filepath.Dir(state),
		// pg_ctl start and stop give up after 60 s by default, which initdb,
		// a checkpoint and a start on a loaded machine can take.
		"PGCTLTIMEOUT=300")
	return cmd
}

func (h *haFormation) pidfile(name string) string { return filepath.Join(h.dir, name+".pid") }

// running is the pid of name's pg_autoctl, when it runs.
func (h *haFormation) running(name string) (int, bool) {
	b, err := os.ReadFile(h.pidfile(name))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	// A pid file outlives its process, and the pid may be reused by
	// another formation's pg_autoctl: it must run this very node.
	if err != nil || !strings.Contains(string(cmdline), "pg_autoctl") || !strings.Contains(string(cmdline), filepath.Join(h.dir, name)) {
		return 0, false
	}
	return pid, true
}

// start runs `pg_autoctl run` for name in the background, in a process
// group of its own, unless it runs already. A node whose processes were
// killed starts again and rejoins the formation (as a secondary when the
// other node was promoted meanwhile).
func (h *haFormation) start(owner *account, name string) error {
	if pid, ok := h.running(name); ok {
		logf("pg_autoctl %s already running (pid %d)", name, pid)
		return nil
	}
	run := filepath.Join(h.dir, "run") // pg_autoctl's XDG_RUNTIME_DIR
	if err := os.MkdirAll(run, 0o700); err != nil {
		return err
	}
	if err := owner.chown(run); err != nil {
		return err
	}
	if err := ensureSocketDir(owner); err != nil {
		return err
	}
	// Whatever still runs of the node without its pg_autoctl (services of
	// a killed create, the PostgreSQL they kept) would stay outside the
	// new pg_autoctl's process group, which is what a failover test kills.
	if err := stopProcessesOf(dataPaths(filepath.Join(h.dir, name))); err != nil {
		return err
	}
	// A PostgreSQL killed with its pg_autoctl leaves its postmaster.pid,
	// and pg_autoctl then never starts it again: remove a stale one.
	removeStalePostmasterPID(filepath.Join(h.dir, name))
	logPath := filepath.Join(h.dir, name+".log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := h.autoctl(owner, "run", "--pgdata", filepath.Join(h.dir, name))
	cmd.Stdout, cmd.Stderr = log, log
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting pg_autoctl %s: %w", name, err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	if err := os.WriteFile(h.pidfile(name), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return err
	}
	logf("started pg_autoctl %s (pid %d, log %s)", name, pid, logPath)
	return nil
}

// removeStalePostmasterPID removes data's postmaster.pid when the
// process it names is gone.
func removeStalePostmasterPID(data string) {
	path := filepath.Join(data, "postmaster.pid")
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
		logf("removing the stale %s (pid %d is gone)", path, pid)
		os.Remove(path)
	}
}

// ensureSocketDir: PostgreSQL's Unix socket goes to Debian's default
// directory, which a machine with only the server binaries may lack.
func ensureSocketDir(owner *account) error {
	const dir = "/var/run/postgresql"
	if _, err := os.Stat(dir); err == nil || owner == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o2775); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	return owner.chown(dir)
}

func initialized(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "PG_VERSION"))
	return err == nil
}

// tuneMonitor applies haMonitorSettings (again on every up: cheap, and a
// monitor created by an older devenv gets them too).
func (h *haFormation) tuneMonitor() error {
	var sql []string
	for k, v := range haMonitorSettings {
		sql = append(sql, fmt.Sprintf("ALTER SYSTEM SET %s = %s", k, v))
	}
	for _, s := range append(sql, "SELECT pg_reload_conf()") {
		if _, err := h.query(haMonitorPort, "pg_auto_failover", s); err != nil {
			return fmt.Errorf("tuning the monitor: %w", err)
		}
	}
	return nil
}

// waitFormation waits until the monitor reports a primary and want-1
// secondaries, every node at its goal, and (with a secondary) the primary
// replicating synchronously.
func (h *haFormation) waitFormation(want int, within time.Duration) error {
	deadline := time.Now().Add(within)
	last := ""
	for {
		states, err := h.query(haMonitorPort, "pg_auto_failover",
			"SELECT string_agg(nodename || '=' || reportedstate || '/' || goalstate, ' ' ORDER BY nodeid) FROM pgautofailover.node")
		if err == nil {
			last = states
			if formationReady(states, want) && (want < 2 || h.inSync()) {
				logf("pg_auto_failover formation ready: %s", states)
				return nil
			}
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the formation was not ready within %s (last: %s); logs in %s", within, last, h.dir)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// formationReady reads "node1=primary/primary node2=secondary/secondary".
func formationReady(states string, want int) bool {
	primaries, secondaries := 0, 0
	for _, f := range strings.Fields(states) {
		_, st, _ := strings.Cut(f, "=")
		switch st {
		case "primary/primary", "single/single":
			primaries++
		case "secondary/secondary":
			secondaries++
		}
	}
	return primaries == 1 && secondaries == want-1
}

// inSync reports whether the primary has a synchronous standby streaming.
func (h *haFormation) inSync() bool {
	for _, n := range haNodes {
		out, err := h.query(n.port, "postgres", "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum')")
		if err == nil && out != "0" {
			return true
		}
	}
	return false
}

// createDatabases creates the test database on the primary (the server's
// was created with the nodes); the standby gets it by replication.
func (h *haFormation) createDatabases() error {
	primary := ""
	for _, n := range haNodes {
		if out, err := h.query(n.port, "postgres", "SELECT pg_is_in_recovery()"); err == nil && out == "f" {
			primary = strconv.Itoa(n.port)
		}
	}
	if primary == "" {
		return errors.New("no node accepts writes")
	}
	port, _ := strconv.Atoi(primary)
	for _, db := range databases {
		exists, err := h.query(port, "postgres", fmt.Sprintf("SELECT 1 FROM pg_database WHERE datname = '%s'", db))
		if err != nil {
			return err
		}
		if exists != "1" {
			if _, err := h.query(port, "postgres", "CREATE DATABASE "+db); err != nil {
				return err
			}
			logf("created database %s on the formation", db)
		}
	}
	return nil
}

func (h *haFormation) waitSQL(port int, db string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		_, err := h.query(port, db, "SELECT 1")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// query runs one statement as postgres over TCP on a node of the formation.
func (h *haFormation) query(port int, db, sql string) (string, error) {
	psql := (*account)(nil).command(h.pg.client("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-h", pgHost, "-p", strconv.Itoa(port), "-U", "postgres", "-d", db, "-tAc", sql)
	psql.Env = append(psql.Env, "PGCONNECT_TIMEOUT=3")
	return output(psql)
}

// down stops the nodes, then the monitor: SIGTERM to each pg_autoctl,
// which stops its PostgreSQL (fast) and exits.
func (h *haFormation) down() error {
	if target, err := os.Readlink(h.dir); err == nil {
		h.dir = target
	}
	if _, err := os.Stat(h.dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, name := range []string{haNodes[1].name, haNodes[0].name, "monitor"} {
		pid, ok := h.running(name)
		if !ok {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			errs = append(errs, fmt.Errorf("stopping pg_autoctl %s: %w", name, err))
			continue
		}
		deadline := time.Now().Add(60 * time.Second)
		for _, still := h.running(name); still && time.Now().Before(deadline); _, still = h.running(name) {
			time.Sleep(200 * time.Millisecond)
		}
		if _, still := h.running(name); still {
			errs = append(errs, fmt.Errorf("pg_autoctl %s (pid %d) did not stop within 60 s", name, pid))
			continue
		}
		logf("stopped pg_autoctl %s", name)
	}
	return errors.Join(errs...)
}

// status is one line per process of the formation, and the monitor's view.
func (h *haFormation) status() string {
	if target, err := os.Readlink(h.dir); err == nil {
		h.dir = target
	}
	if _, err := os.Stat(h.dir); err != nil {
		return "PostgreSQL HA (pg_auto_failover): not created (up -ha creates it in " + h.dir + ")"
	}
	var parts []string
	for _, name := range []string{"monitor", haNodes[0].name, haNodes[1].name} {
		if pid, ok := h.running(name); ok {
			parts = append(parts, fmt.Sprintf("%s running (pid %d)", name, pid))
		} else {
			parts = append(parts, name+" stopped")
		}
	}
	line := "PostgreSQL HA (pg_auto_failover, " + h.dir + "): " + strings.Join(parts, ", ")
	if states, err := h.query(haMonitorPort, "pg_auto_failover",
		"SELECT string_agg(nodename || ' ' || nodeport || ' ' || reportedstate, ', ' ORDER BY nodeid) FROM pgautofailover.node"); err == nil {
		line += "; monitor says: " + states
	}
	return line
}
