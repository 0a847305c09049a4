package redisx

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A node that hangs costs the read timeout once; then its commands fail at
// once, but for a probe every probeEvery, which finds it back. Run against
// the test Redis (a cluster node will do: PING has no key) through a proxy
// that can stop passing bytes on, as a stopped process would. Once the node
// hangs, the guard reads a clock the test moves, so which command is a probe
// is decided by the test, not by how fast a loaded machine runs the loop.
// Fails if the guard sends commands to a silent node (no ErrNodeSilent), or
// probes more often than probeEvery, or never probes again.
func TestSilentGuardFailsFastWhileANodeHangsAndFindsItBack(t *testing.T) {
	target := testRedisAddr(t)
	p := newPauseProxy(t, target)
	const timeout = 300 * time.Millisecond
	c := redis.NewClient(&redis.Options{Addr: p.addr, ReadTimeout: timeout, WriteTimeout: timeout, MaxRetries: -1})
	g := newSilentGuard(p.addr, timeout)
	var frozen atomic.Int64 // the guard's clock in Unix nanoseconds; 0 is the real one
	g.now = func() time.Time {
		if n := frozen.Load(); n != 0 {
			return time.Unix(0, n)
		}
		return time.Now()
	}
	c.AddHook(g)
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	p.pause()
	time.Sleep(2 * timeout) // the last answer is now older than the timeout
	start := time.Now()
	if err := c.Ping(ctx).Err(); err == nil || errors.Is(err, ErrNodeSilent) {
		t.Fatalf("first ping to the hung node: %v, want a timeout", err)
	}
	if d := time.Since(start); d < timeout {
		t.Fatalf("first ping failed after %s, before the read timeout", d)
	}
	now := time.Now()
	frozen.Store(now.UnixNano())
	fast := func(what string) {
		t.Helper()
		for range 10 {
			if err := c.Ping(ctx).Err(); !errors.Is(err, ErrNodeSilent) {
				t.Fatalf("ping to the hung node %s: %v, want ErrNodeSilent at once", what, err)
			}
		}
	}
	probe := func(what string) error {
		t.Helper()
		err := c.Ping(ctx).Err()
		if errors.Is(err, ErrNodeSilent) {
			t.Fatalf("ping to the hung node %s: %v, want a probe", what, err)
		}
		return err
	}
	fast("before probeEvery")
	now = now.Add(g.probeEvery)
	frozen.Store(now.UnixNano())
	if err := probe("after probeEvery"); err == nil {
		t.Fatal("the probe of the hung node got an answer")
	}
	fast("right after a probe")
	// The next probe comes probeEvery after the time the last one was
	// given (the read timeout), not before.
	now = time.Unix(0, frozen.Load()).Add(timeout + g.probeEvery - time.Millisecond)
	frozen.Store(now.UnixNano())
	fast("a millisecond before the next probe")
	now = now.Add(time.Millisecond)
	frozen.Store(now.UnixNano())
	if err := probe("at the next probe"); err == nil {
		t.Fatal("the second probe of the hung node got an answer")
	}

	p.resume()
	var err error
	for range 10 {
		now = now.Add(timeout + g.probeEvery)
		frozen.Store(now.UnixNano())
		if err = probe("after it came back"); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the node answers again, but probes still fail: %v", err)
	}
	for range 20 {
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatalf("ping after the node came back: %v", err)
		}
	}
}

// A Redis error reply is an answer: a node that refuses commands is not
// silent, and its refusals are not replaced by ErrNodeSilent.
func TestSilentGuardCountsErrorRepliesAsAnswers(t *testing.T) {
	g := newSilentGuard("node", time.Second)
	clock := time.Now()
	g.now = func() time.Time { return clock }
	g.record(&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded})
	clock = clock.Add(2 * time.Second)
	if !admitted(g) || admitted(g) {
		t.Fatal("a node silent past the timeout: want one probe admitted, then none")
	}
	g.record(redis.Nil)
	if !admitted(g) || !admitted(g) {
		t.Fatal("a node that answered (nil) after its silence is refused")
	}
	g.record(io.EOF)
	clock = clock.Add(2 * time.Second)
	g.record(errMoved{})
	if !admitted(g) || !admitted(g) {
		t.Fatal("a node that answered MOVED is refused")
	}
}

// A node that does not answer, or is not sent a command for its silence,
// is reported (the cluster client then reads the slot map again, to find a
// replica that took over); one that answers is not.
func TestSilentGuardReportsSilence(t *testing.T) {
	g := newSilentGuard("node", time.Second)
	clock := time.Now()
	g.now = func() time.Time { return clock }
	reports := 0
	g.onSilent = func() { reports++ }
	g.record(nil)
	g.record(errMoved{})
	if reports != 0 {
		t.Fatalf("%d reports for a node that answered", reports)
	}
	g.record(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED})
	if reports != 1 {
		t.Fatalf("%d reports after a refused connection, want 1", reports)
	}
	clock = clock.Add(2 * time.Second)
	hook := g.ProcessHook(func(context.Context, redis.Cmder) error {
		return &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
	})
	_ = hook(context.Background(), redis.NewCmd(context.Background(), "get", "k")) // the probe, refused
	reports = 0
	if err := hook(context.Background(), redis.NewCmd(context.Background(), "get", "k")); !errors.Is(err, ErrNodeSilent) || reports != 1 {
		t.Fatalf("a command refused for the silence: %v, %d reports; want ErrNodeSilent and 1", err, reports)
	}
}

// A refused connection makes the node silent at once: nothing listens,
// and waiting out the timeout would only confirm it. A timeout does not.
func TestSilentGuardRefusedIsSilentAtOnce(t *testing.T) {
	g := newSilentGuard("node", time.Second)
	clock := time.Now()
	g.now = func() time.Time { return clock }
	g.record(nil)
	g.record(&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded})
	if !admitted(g) || !admitted(g) {
		t.Fatal("a node that timed out once, right after answering, is refused")
	}
	g.record(&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})
	if admitted(g) {
		t.Fatal("a node that refused a connection is still sent commands")
	}
	clock = clock.Add(g.probeEvery)
	if !admitted(g) || admitted(g) {
		t.Fatal("a node silent for refusing: want one probe admitted after probeEvery, then none")
	}
}

func admitted(g *silentGuard) bool {
	_, ok := g.admit(context.Background())
	return ok
}

type errMoved struct{}

func (errMoved) Error() string { return "MOVED 3999 127.0.0.1:6381" }
func (errMoved) RedisError()   {}

func testRedisAddr(t *testing.T) string {
	u := cmp.Or(os.Getenv("TEST_REDIS_URL"), "redis://127.0.0.1:63790/1")
	if copt, ok, err := ParseCluster(u); err != nil {
		t.Fatal(err)
	} else if ok {
		return copt.Addrs[0]
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	return opt.Addr
}

// pauseProxy passes TCP connections on to a target; paused, it holds every
// byte in both directions until resumed.
type pauseProxy struct {
	addr string
	mu   sync.Mutex
	gate chan struct{} // closed while passing bytes on
}

func newPauseProxy(t *testing.T, target string) *pauseProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pauseProxy{addr: ln.Addr().String(), gate: make(chan struct{})}
	close(p.gate)
	var conns sync.WaitGroup
	t.Cleanup(func() { ln.Close(); p.resume(); conns.Wait() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			conns.Add(2)
			go func() { defer conns.Done(); p.pipe(out, in) }()
			go func() { defer conns.Done(); p.pipe(in, out) }()
		}
	}()
	return p
}

func (p *pauseProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.gate
			p.mu.Unlock()
			<-gate
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *pauseProxy) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gate = make(chan struct{})
}

func (p *pauseProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
}
