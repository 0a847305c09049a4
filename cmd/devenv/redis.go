package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// redis manages a Redis server for one repository: no persistence, files in
// <repo>/.data/redis (a cluster node's in <repo>/.data/redis-cluster/<port>).
type redis struct {
	dir  string
	port int
	args []string // more redis-server options (a cluster node's)
}

func (r *redis) addr() string    { return fmt.Sprintf("127.0.0.1:%d", r.port) }
func (r *redis) pidfile() string { return filepath.Join(r.dir, "redis.pid") }
func (r *redis) logfile() string { return filepath.Join(r.dir, "redis.log") }

func (r *redis) up() error {
	if err := redisPing(r.addr()); err == nil {
		if _, ours := r.pid(); ours {
			logf("Redis already running on %s", r.addr())
		} else {
			logf("a Redis not started from this repository already answers on %s; using it", r.addr())
		}
		return nil
	} else if listening(r.addr()) {
		return fmt.Errorf("port %d is taken by something that does not answer PING like Redis: %w", r.port, err)
	}

	bin, err := redisServerBin()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", r.dir, err)
	}
	logf("starting Redis on %s (log %s)", r.addr(), r.logfile())
	start := exec.Command(bin, append([]string{
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(r.port),
		"--daemonize", "yes",
		"--dir", r.dir,
		"--pidfile", r.pidfile(),
		"--logfile", r.logfile(),
		"--save", "",
		"--appendonly", "no",
	}, r.args...)...)
	if err := quiet(start); err != nil {
		return fmt.Errorf("starting: %w", err)
	}

	deadline := time.Now().Add(10 * time.Second)
	for {
		err := redisPing(r.addr())
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PONG from %s after 10s (%v)\nlast lines of %s:\n%s",
				r.addr(), err, r.logfile(), tail(r.logfile(), 20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// down stops the Redis this repository started. A Redis on the port that is
// not ours (another clone's) is left alone: it may be serving someone else.
func (r *redis) down() error {
	pid, ours := r.pid()
	if redisPing(r.addr()) != nil {
		if ours {
			// Alive but deaf: ask it to go the blunt way.
			logf("Redis (pid %d) does not answer PING; sending SIGTERM", pid)
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
				return fmt.Errorf("signalling pid %d: %w", pid, err)
			}
			return r.waitExit(pid)
		}
		logf("Redis is not running")
		return nil
	}
	if !ours {
		logf("the Redis on %s was not started from this repository (no live pid in %s); leaving it running",
			r.addr(), r.pidfile())
		return nil
	}
	if err := redisShutdown(r.addr()); err != nil {
		return err
	}
	if err := r.waitExit(pid); err != nil {
		return err
	}
	logf("stopped Redis on %s", r.addr())
	return nil
}

func (r *redis) status() string {
	if err := redisPing(r.addr()); err != nil {
		if listening(r.addr()) {
			return fmt.Sprintf("Redis: something that is not Redis listens on %s (%v)", r.addr(), err)
		}
		return "Redis: not running"
	}
	if pid, ours := r.pid(); ours {
		return fmt.Sprintf("Redis: running on %s (pid %d, dir %s)", r.addr(), pid, r.dir)
	}
	return fmt.Sprintf("Redis: a server not started from this repository answers on %s", r.addr())
}

// pid reads our pidfile and says whether that process is a live redis-server.
// The check on the command line guards against a stale file whose pid the
// kernel has since given to something else.
func (r *redis) pid() (int, bool) {
	b, err := os.ReadFile(r.pidfile())
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return pid, false
	}
	return pid, strings.Contains(string(cmdline), "redis-server")
}

func (r *redis) waitExit(pid int) error {
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server (pid %d) still running 10s after being asked to stop", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// redisPing sends PING over plain RESP and expects +PONG. The error says
// why not: nothing listening, or something answering in another way.
func redisPing(addr string) error {
	reply, err := redisCommand(addr, "PING")
	if err != nil {
		return err
	}
	if reply != "+PONG" {
		return fmt.Errorf("PING answered %q", reply)
	}
	return nil
}

// redisShutdown stops the server without saving. On success Redis closes the
// connection without a reply; an error reply means it refused.
func redisShutdown(addr string) error {
	reply, err := redisCommand(addr, "SHUTDOWN NOSAVE")
	if errors.Is(err, io.EOF) || (err == nil && reply == "") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("SHUTDOWN NOSAVE: %w", err)
	}
	return fmt.Errorf("SHUTDOWN NOSAVE answered %q", reply)
}

// redisCommand sends one inline command and returns the first reply line.
func redisCommand(addr, command string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(3 * time.Second)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, command+"\r\n"); err != nil {
		return "", fmt.Errorf("sending %s: %w", command, err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading the reply to %s: %w", command, err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// redisServerBin finds redis-server, installing it with apt-get when we are
// root (CI, containers); otherwise it tells the user what to do.
func redisServerBin() (string, error) {
	if path, err := exec.LookPath("redis-server"); err == nil {
		return path, nil
	}
	if err := ensurePackages("redis-server (or set REDIS_URL)", []string{"/usr/bin/redis-server"}, "redis-server"); err != nil {
		return "", err
	}
	return "/usr/bin/redis-server", nil // found above, though PATH may lack /usr/bin
}
