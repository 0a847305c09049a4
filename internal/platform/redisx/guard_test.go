package redisx

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A node that hangs costs the read timeout once; then its commands fail at
// once, but for a probe now and then, until it answers again. Run against
// the test Redis (a cluster node will do: PING has no key) through a proxy
// that can stop passing bytes on, as a stopped process would.
func TestSilentGuardFailsFastWhileANodeHangsAndFindsItBack(t *testing.T) {
	target := testRedisAddr(t)
	p := newPauseProxy(t, target)
	const timeout = 300 * time.Millisecond
	c := redis.NewClient(&redis.Options{Addr: p.addr, ReadTimeout: timeout, WriteTimeout: timeout, MaxRetries: -1})
	c.AddHook(newSilentGuard(p.addr, timeout))
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
	fast, probes := 0, 0
	for deadline := time.Now().Add(4 * timeout); time.Now().Before(deadline); {
		start := time.Now()
		err := c.Ping(ctx).Err()
		switch {
		case errors.Is(err, ErrNodeSilent) && time.Since(start) < 50*time.Millisecond:
			fast++
		case err != nil && !errors.Is(err, ErrNodeSilent):
			probes++
		default:
			t.Fatalf("ping to the hung node: %v after %s", err, time.Since(start))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if fast < 10 || probes == 0 || probes > 5 {
		t.Fatalf("while the node hung: %d pings failed at once, %d probes waited; want most at once and a few probes", fast, probes)
	}

	p.resume()
	var err error
	for deadline := time.Now().Add(5 * timeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err = c.Ping(ctx).Err(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the node answers again, but pings still fail: %v", err)
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
