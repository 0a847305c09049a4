package redisx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNodeSilent is the error of a command not sent to a cluster node that
// has stopped answering (see silentGuard).
var ErrNodeSilent = errors.New("redis: cluster node not answering")

// silentGuard is a hook on the client of one cluster node. A node that
// hangs (stopped, cut off, swapping) answers nothing, and every command sent
// to it waits out the read timeout, twice with the retry: a request that
// reads several of its keys on paths that fail open would take many seconds
// to answer 503, and requests of clinics whose rate-limit counters or
// bitmaps happen to live there would slow down alike. While the node is
// silent (it answered nothing for longer than the read timeout, and a
// command failed unanswered since) commands fail at once with
// ErrNodeSilent, but for one every probeEvery, which finds it back.
type silentGuard struct {
	err         error
	silentAfter time.Duration
	probeEvery  time.Duration
	now         func() time.Time

	// onSilent, when set, is called for each command the node did not
	// answer or was not sent for its silence.
	onSilent func()

	// Unix nanoseconds: the last reply of any kind (a Redis error reply is
	// an answer too), the last command that got none, and the end of the
	// time the last probe was given.
	lastAnswer, lastFailure, lastProbe atomic.Int64
}

func newSilentGuard(addr string, silentAfter time.Duration) *silentGuard {
	return &silentGuard{
		err:         fmt.Errorf("%w: %s", ErrNodeSilent, addr),
		silentAfter: silentAfter,
		probeEvery:  silentAfter / 4,
		now:         time.Now,
	}
}

func (g *silentGuard) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *silentGuard) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		ctx, ok := g.admit(ctx)
		if !ok {
			g.silent()
			cmd.SetErr(g.err)
			return g.err
		}
		err := next(ctx, cmd)
		g.record(err)
		return err
	}
}

func (g *silentGuard) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		ctx, ok := g.admit(ctx)
		if !ok {
			g.silent()
			for _, cmd := range cmds {
				cmd.SetErr(g.err)
			}
			return g.err
		}
		err := next(ctx, cmds)
		g.record(err)
		return err
	}
}

// probing marks the context of a probe, so the commands go-redis sends on
// its behalf (the handshake of a new connection) go through too.
type probing struct{}

// admit says whether a command may go to the node: it is not silent, or it
// is and this command is the probe of the moment (or part of it).
func (g *silentGuard) admit(ctx context.Context) (context.Context, bool) {
	now := g.now().UnixNano()
	answer, failure := g.lastAnswer.Load(), g.lastFailure.Load()
	if failure <= answer || now-answer <= int64(g.silentAfter) || ctx.Value(probing{}) == g {
		return ctx, true
	}
	// One probe at a time (it holds the turn for as long as it can take),
	// probeEvery after the last one failed.
	probe := g.lastProbe.Load()
	if now < max(probe, failure)+int64(g.probeEvery) || !g.lastProbe.CompareAndSwap(probe, now+int64(g.silentAfter)) {
		return ctx, false
	}
	return context.WithValue(ctx, probing{}, g), true
}

// record notes whether the node answered the command.
func (g *silentGuard) record(err error) {
	switch {
	case err == nil || errors.Is(err, redis.Nil) || isReply(err):
		g.lastAnswer.Store(g.now().UnixNano())
	case unanswered(err):
		now := g.now().UnixNano()
		g.lastFailure.Store(now)
		if errors.Is(err, syscall.ECONNREFUSED) {
			// Nothing listens: the node is gone (killed, restarting), which
			// waiting out silentAfter would only confirm. It is silent now.
			for {
				answer := g.lastAnswer.Load()
				if now-answer > int64(g.silentAfter) || g.lastAnswer.CompareAndSwap(answer, now-int64(g.silentAfter)-1) {
					break
				}
			}
		}
		g.silent()
	}
}

func (g *silentGuard) silent() {
	if g.onSilent != nil {
		g.onSilent()
	}
}

// isReply is an error the server sent (MOVED, NOSCRIPT, CLUSTERDOWN...).
func isReply(err error) bool {
	var reply redis.Error
	var ne net.Error
	return errors.As(err, &reply) && !errors.As(err, &ne)
}

// unanswered is a command the node did not answer: a timeout, a refused or
// broken connection. A cancelled request or a full pool says nothing of it.
func unanswered(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
