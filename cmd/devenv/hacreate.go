package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// haCreateAttempts is how often `pg_autoctl create` of one member is tried.
// A failed attempt leaves more than its data directory behind (the node
// registered on the monitor with the system identifier of its first initdb,
// pg_autoctl's state files in its owner's home), and pg_autoctl's own
// restarts of the attempt trip over exactly that: so every attempt starts
// from nothing.
const haCreateAttempts = 3

// created reports whether name's create went through to its end: its data
// directory initialized, and pg_autoctl's files for it there, a keeper's
// state without the init file that a create removes last (a create that
// failed or was killed leaves an initialized data directory all the same).
func (h *haFormation) created(owner *account, name string) bool {
	data := filepath.Join(h.dir, name)
	if !initialized(data) {
		return false
	}
	config, state := autoctlHomes(owner)
	for _, p := range dataPaths(data) {
		if !exists(filepath.Join(config, p, "pg_autoctl.cfg")) {
			continue
		}
		if name == "monitor" {
			return true
		}
		return exists(filepath.Join(state, p, "pg_autoctl.state")) && !exists(filepath.Join(state, p, "pg_autoctl.init"))
	}
	return false
}

// dataPaths are the names pg_autoctl may know a data directory by: as
// given, and with its links resolved.
func dataPaths(data string) []string {
	if real, err := filepath.EvalSymlinks(data); err == nil && real != data {
		return []string{data, real}
	}
	return []string{data}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// create makes name (the monitor or a node) with `pg_autoctl create args...`.
// Each attempt's output goes to <name>-create-<attempt>.log in the
// formation's directory; when an attempt fails, its first ERROR and FATAL
// lines are shown with the log's path, what it left is removed, and it is
// tried again.
func (h *haFormation) create(owner *account, name string, args ...string) error {
	var err error
	var logPath string
	for attempt := 1; attempt <= haCreateAttempts; attempt++ {
		logPath = filepath.Join(h.dir, fmt.Sprintf("%s-create-%d.log", name, attempt))
		if err = h.remove(owner, name); err != nil {
			return err
		}
		if addr := fmt.Sprintf("%s:%d", pgHost, portOf(name)); listening(addr) {
			return fmt.Errorf("creating pg_auto_failover %s: %s is taken by a process that is not this formation's: stop it and run up -ha again", name, addr)
		}
		if err = h.createOnce(owner, logPath, args); err == nil {
			return nil
		}
		logf("creating %s failed (attempt %d of %d): %v\n%s\n    full output: %s",
			name, attempt, haCreateAttempts, err, indent(firstErrors(logPath, 10)), logPath)
	}
	return fmt.Errorf("creating pg_auto_failover %s failed %d times (last: %w); full output in %s", name, haCreateAttempts, err, logPath)
}

func (h *haFormation) createOnce(owner *account, logPath string, args []string) error {
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := h.autoctl(owner, append([]string{"create"}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	return cmd.Run()
}

// firstErrors is the first n lines of a pg_autoctl log that say ERROR or
// FATAL: the cause of a failure is the first of them, the rest follows.
func firstErrors(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() && len(lines) < n {
		if l := sc.Text(); strings.Contains(l, "ERROR") || strings.Contains(l, "FATAL") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "(no ERROR or FATAL line; it ends with:)\n" + strings.TrimLeft(tail(path, 5), " ")
	}
	return strings.Join(lines, "\n")
}

// remove takes away everything of name that a failed or interrupted create,
// or an earlier formation at the same path, may have left: its pg_autoctl
// and PostgreSQL processes, its registration on the monitor, its data
// directory, and pg_autoctl's configuration and state for that data
// directory in its owner's home. That last one outlives the clone: a fresh
// clone at the path of an earlier one otherwise finds the old node's state
// and "continues" a create that belonged to another monitor.
func (h *haFormation) remove(owner *account, name string) error {
	paths := dataPaths(filepath.Join(h.dir, name))
	if err := stopProcessesOf(paths); err != nil {
		return err
	}
	if name != "monitor" {
		if err := h.unregister(name); err != nil {
			return err
		}
	}
	config, state := autoctlHomes(owner)
	for _, p := range paths {
		for _, dir := range []string{p, filepath.Join(config, p), filepath.Join(state, p)} {
			if err := os.RemoveAll(dir); err != nil {
				return fmt.Errorf("removing %s: %w", dir, err)
			}
		}
	}
	os.Remove(h.pidfile(name))
	return nil
}

// unregister removes the node called name, or any node on its port, from
// the monitor, and waits until the monitor has forgotten it.
func (h *haFormation) unregister(name string) error {
	where := fmt.Sprintf("nodename = '%s' OR (nodehost = '%s' AND nodeport = %d)", name, pgHost, portOf(name))
	deadline := time.Now().Add(30 * time.Second)
	for {
		left, err := h.query(haMonitorPort, "pg_auto_failover", "SELECT count(*) FROM pgautofailover.node WHERE "+where)
		if err != nil {
			return fmt.Errorf("asking the monitor about %s: %w", name, err)
		}
		if left == "0" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the monitor still lists %s after 30 s", name)
		}
		logf("removing %s from the pg_auto_failover monitor", name)
		if _, err := h.query(haMonitorPort, "pg_auto_failover",
			"SELECT pgautofailover.remove_node(nodeid, true) FROM pgautofailover.node WHERE "+where); err != nil {
			return fmt.Errorf("removing %s from the monitor: %w", name, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func portOf(name string) int {
	for _, n := range haNodes {
		if n.name == name {
			return n.port
		}
	}
	return haMonitorPort
}

// autoctlHomes are where pg_autoctl run as owner keeps its configuration
// and its state: the XDG directories that autoctl sets.
func autoctlHomes(owner *account) (config, state string) {
	home := ""
	if owner != nil {
		home = owner.home
	} else {
		home, _ = os.UserHomeDir()
	}
	config, state = os.Getenv("XDG_CONFIG_HOME"), os.Getenv("XDG_DATA_HOME")
	if owner != nil || config == "" {
		config = filepath.Join(home, ".config")
	}
	if owner != nil || state == "" {
		state = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(config, "pg_autoctl"), filepath.Join(state, "pg_autoctl")
}

// stopProcessesOf kills every pg_autoctl and postgres whose command line
// names one of the data directories (a create in progress, its supervisor's
// children, a server of an earlier formation at the same path), then waits
// until they are gone. Nothing of theirs is worth a clean shutdown.
func stopProcessesOf(dataDirs []string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		pids := processesOf(dataDirs)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v of %s did not stop within 15 s", pids, dataDirs[0])
		}
		for _, pid := range pids {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("stopping pid %d of %s: %w", pid, dataDirs[0], err)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// processesOf lists the pids of pg_autoctl and postgres processes started
// with one of dataDirs (pg_autoctl's --pgdata, postgres's -D, the PGDATA
// of pg_autoctl's services), of the
// postmaster that a postmaster.pid there names, and of all their
// descendants (pg_autoctl's services and PostgreSQL's backends retitle
// themselves, so only their ancestry tells whose they are).
func processesOf(dataDirs []string) []int {
	children := map[int][]int{}
	var roots []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if ppid := parentOf(pid); ppid > 0 {
			children[ppid] = append(children[ppid], pid)
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		if startedWith(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), dataDirs) || servesData(pid, dataDirs) {
			roots = append(roots, pid)
		}
	}
	for _, d := range dataDirs {
		b, err := os.ReadFile(filepath.Join(d, "postmaster.pid"))
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(string(b), "\n")
		pid, err := strconv.Atoi(strings.TrimSpace(first))
		if err != nil || pid <= 0 {
			continue
		}
		if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(string(cmd), "postgres") {
			roots = append(roots, pid)
		}
	}
	seen := map[int]bool{}
	var pids []int
	for len(roots) > 0 {
		pid := roots[0]
		roots = roots[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		pids = append(pids, pid)
		roots = append(roots, children[pid]...)
	}
	return pids
}

// servesData reports whether pid is one of pg_autoctl's services for one
// of dataDirs: they name their data directory only in PGDATA, and the
// services of a killed create live on, children of init, keeping their
// PostgreSQL running.
func servesData(pid int, dataDirs []string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, "PGDATA="); ok {
			return slices.Contains(dataDirs, filepath.Clean(v))
		}
	}
	return false
}

// parentOf is pid's parent, read from /proc/<pid>/stat (whose second
// field, the command in parentheses, may itself hold spaces).
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// startedWith reports whether args run pg_autoctl or postgres on one of
// dataDirs.
func startedWith(args, dataDirs []string) bool {
	bin := filepath.Base(args[0])
	if bin != "pg_autoctl" && bin != "postgres" {
		return false
	}
	for i := 1; i < len(args)-1; i++ {
		if args[i] != "--pgdata" && args[i] != "-D" {
			continue
		}
		for _, d := range dataDirs {
			if filepath.Clean(args[i+1]) == d {
				return true
			}
		}
	}
	return false
}
