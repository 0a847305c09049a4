package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
)

// long is FAULTS_LONG=1: more patients, longer phases (make faults).
var long = os.Getenv("FAULTS_LONG") == "1"

// scaled stretches a phase of a scenario when FAULTS_LONG is set.
func scaled(d time.Duration) time.Duration {
	if long {
		return 5 * d
	}
	return d
}

// patients is how many concurrent patients a scenario's load runs.
func patients(n int) int {
	if long {
		return 4 * n
	}
	return n
}

var binDir string // where the binary is built; removed by TestMain

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// clinicBinary builds ./cmd/clinic once per test process and returns its path.
func clinicBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := repoRoot()
		if err != nil {
			buildErr = err
			return
		}
		binDir, err = os.MkdirTemp("", "clinic-faults-bin-")
		if err != nil {
			buildErr = err
			return
		}
		out := filepath.Join(binDir, "clinic")
		cmd := exec.Command("go", "build", "-o", out, "./cmd/clinic")
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/clinic: %v\n%s", err, b)
			return
		}
		builtBin = out
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// repoRoot walks up from the working directory to the directory with go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

func testRedisURL() string {
	if u := os.Getenv("TEST_REDIS_URL"); u != "" {
		return u
	}
	return testkit.DefaultTestRedisURL
}

// serverEnv is the environment of a server process: ours, without any of
// the settings the test decides, plus those.
func serverEnv(set map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := set[k]; ours || strings.HasPrefix(k, "PG") || k == "DEBUG_ADDR" {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

// migrate runs `clinic migrate` against databaseURL.
func migrate(t *testing.T, databaseURL string) {
	t.Helper()
	cmd := exec.Command(clinicBinary(t), "migrate")
	cmd.Env = serverEnv(map[string]string{"DATABASE_URL": databaseURL, "REDIS_URL": testRedisURL(), "LOG_LEVEL": "warn"})
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clinic migrate: %v\n%s", err, out)
	}
}

// logBuf keeps a server's stderr: its last lines, and every ERROR line.
type logBuf struct {
	mu      sync.Mutex
	partial []byte
	tail    []string
	errors  []string
}

const (
	keepTail   = 200
	keepErrors = 500
)

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		l.tail = append(l.tail, line)
		if len(l.tail) > keepTail {
			l.tail = l.tail[len(l.tail)-keepTail:]
		}
		if strings.Contains(line, `"level":"ERROR"`) && len(l.errors) < keepErrors {
			l.errors = append(l.errors, line)
		}
	}
	return len(p), nil
}

func (l *logBuf) Tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.tail
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (l *logBuf) Errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errors...)
}

// server is one `clinic serve` process, in a process group of its own.
type server struct {
	name string
	URL  string
	cmd  *exec.Cmd
	logs *logBuf

	exited  chan struct{} // closed when the process has been waited for
	waitErr error
}

// startServer runs `clinic serve` with env (ADDR is chosen here unless env
// names one) and waits until /readyz answers 200.
func startServer(t *testing.T, name string, env map[string]string) *server {
	t.Helper()
	set := map[string]string{
		"ADDR":                     fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t)),
		"LOG_FORMAT":               "json",
		"LOG_LEVEL":                "warn",
		"MIGRATE_ON_START":         "false",
		"SHUTDOWN_TIMEOUT_SECONDS": "10",
	}
	for k, v := range env {
		set[k] = v
	}
	s := &server{name: name, URL: "http://" + set["ADDR"], logs: &logBuf{}, exited: make(chan struct{})}
	s.cmd = exec.Command(clinicBinary(t), "serve")
	s.cmd.Env = serverEnv(set)
	s.cmd.Stdout = s.logs
	s.cmd.Stderr = s.logs
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("last log lines of %s:\n%s", s.name, s.logs.Tail(40))
		}
	})

	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-s.exited:
			t.Fatalf("%s exited at start (%v):\n%s", name, s.waitErr, s.logs.Tail(40))
		default:
		}
		res, err := client.Get(s.URL + "/readyz")
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within 30 s (last: %v):\n%s", name, err, s.logs.Tail(40))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL to the server's process group and waits for it.
func (s *server) kill() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
}

// alive reports whether the process is still running.
func (s *server) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// signal sends sig to the server process itself.
func (s *server) signal(sig syscall.Signal) error {
	return syscall.Kill(s.cmd.Process.Pid, sig)
}

// waitExit waits up to d for the process to end and returns its error
// (nil for exit status 0), or ok false if it is still running.
func (s *server) waitExit(d time.Duration) (err error, ok bool) {
	select {
	case <-s.exited:
		return s.waitErr, true
	case <-time.After(d):
		return nil, false
	}
}

// checkServerErrors fails the test for every ERROR line a server logged
// that allowed does not accept (nil: none is).
func checkServerErrors(t *testing.T, allowed func(line string) bool, servers ...*server) {
	t.Helper()
	for _, s := range servers {
		n := 0
		for _, line := range s.logs.Errors() {
			if allowed != nil && allowed(line) {
				continue
			}
			if n++; n <= 10 {
				t.Errorf("%s logged an error: %s", s.name, line)
			}
		}
		if n > 10 {
			t.Errorf("%s: %d more ERROR lines", s.name, n-10)
		}
	}
}

// ctxTimeout is a context for a verification step.
func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
