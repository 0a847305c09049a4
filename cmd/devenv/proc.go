package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// account is a system user to run commands as. PostgreSQL refuses to run as
// root, so when devenv runs as root its server commands run as "postgres".
// A nil *account means "as ourselves".
type account struct {
	name   string
	home   string
	uid    uint32
	gid    uint32
	groups []uint32
}

// postgresAccount returns the postgres system user, creating it if missing
// and asked to.
func postgresAccount(create bool) (*account, error) {
	u, err := user.Lookup("postgres")
	var unknown user.UnknownUserError
	if create && errors.As(err, &unknown) {
		logf("creating the postgres system user (PostgreSQL will not run as root)")
		cmd := exec.Command("useradd", "--system", "--user-group",
			"--home-dir", "/var/lib/postgresql", "--shell", "/bin/bash", "postgres")
		if err := quiet(cmd); err != nil {
			return nil, err
		}
		u, err = user.Lookup("postgres")
	}
	if err != nil {
		return nil, fmt.Errorf("looking up the postgres user: %w", err)
	}
	a := &account{name: u.Username, home: u.HomeDir}
	if a.uid, err = parseID(u.Uid); err != nil {
		return nil, err
	}
	if a.gid, err = parseID(u.Gid); err != nil {
		return nil, err
	}
	gids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("looking up the groups of postgres: %w", err)
	}
	for _, g := range gids {
		id, err := parseID(g)
		if err != nil {
			return nil, err
		}
		a.groups = append(a.groups, id)
	}
	return a, nil
}

func parseID(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad user or group id %q: %w", s, err)
	}
	return uint32(n), nil
}

// command builds a command that runs as a (or as ourselves when a is nil).
// PG* variables are dropped so a stray PGHOST or PGDATA in the caller's
// shell cannot point our commands at another server.
func (a *account) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") {
			continue
		}
		if a != nil && (strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "USER=") || strings.HasPrefix(kv, "LOGNAME=")) {
			continue
		}
		env = append(env, kv)
	}
	if a != nil {
		env = append(env, "HOME="+a.home, "USER="+a.name, "LOGNAME="+a.name)
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Credential: &syscall.Credential{Uid: a.uid, Gid: a.gid, Groups: a.groups},
		}
		// The child changes directory after dropping to the account, and our
		// working directory may be one it cannot enter (a clone under /root).
		cmd.Dir = "/"
	}
	cmd.Env = env
	return cmd
}

// canWrite reports whether a can create files in dir, which also means it
// can traverse every parent. Asked of the system (test -w as that user)
// rather than worked out from modes, so ACLs and the like count.
func (a *account) canWrite(dir string) bool {
	if a == nil {
		return true
	}
	return a.command("test", "-d", dir, "-a", "-w", dir, "-a", "-x", dir).Run() == nil
}

func (a *account) chown(path string) error {
	if a == nil {
		return nil
	}
	if err := os.Lchown(path, int(a.uid), int(a.gid)); err != nil {
		return fmt.Errorf("giving %s to %s: %w", path, a.name, err)
	}
	return nil
}

// quiet runs cmd, keeping its output out of the way unless it fails.
func quiet(cmd *exec.Cmd) error {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", commandLine(cmd), err, indent(out.String()))
	}
	return nil
}

// loud runs cmd with its output on our stderr, for slow steps (apt-get)
// whose progress is worth seeing.
func loud(cmd *exec.Cmd) error {
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", commandLine(cmd), err)
	}
	return nil
}

// output runs cmd and returns its trimmed stdout.
func output(cmd *exec.Cmd) (string, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w\n%s", commandLine(cmd), err, indent(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func commandLine(cmd *exec.Cmd) string {
	return strings.Join(cmd.Args, " ")
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    (no output)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// tail returns the last n lines of a file, for showing why a server died.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return indent(strings.Join(lines, "\n"))
}

// listening reports whether something accepts TCP connections on addr.
func listening(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
