// Package redisx opens the Redis client: one server, or a Redis Cluster.
package redisx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Connect opens a client without requiring Redis to be up: the server
// starts and answers 503 for what needs Redis until it is back.
//
// url names one server (redis://host:port/db, as go-redis's ParseURL reads
// it) or a Redis Cluster (see ParseCluster), which gets go-redis's cluster
// client with the same pool and timeouts per node.
func Connect(url string, poolSize int) (redis.UniversalClient, error) {
	copt, isCluster, err := ParseCluster(url)
	if err != nil {
		return nil, fmt.Errorf("parse REDIS_URL: %w", err)
	}
	if isCluster {
		copt.PoolSize = poolSize
		// As below: one retry. On a cluster a retry is also what follows a
		// MOVED answer, so one slot moving is still followed.
		copt.MaxRedirects = 1
		copt.DialTimeout, copt.ReadTimeout, copt.WriteTimeout = dialTimeout, readTimeout, readTimeout
		// A node that hangs fails its commands at once (see silentGuard):
		// the other nodes' keys are served at full speed meanwhile. A node
		// that does not answer also has the slot map read again: go-redis
		// would otherwise learn of a failover (the replica that took the
		// dead master's slots) only from a MOVED answer, which a dead
		// master never gives, or after a minute.
		var cluster atomic.Pointer[redis.ClusterClient]
		copt.NewClient = func(o *redis.Options) *redis.Client {
			c := redis.NewClient(o)
			g := newSilentGuard(o.Addr, readTimeout)
			g.onSilent = func() {
				if cc := cluster.Load(); cc != nil {
					cc.ReloadState(context.Background()) // asynchronous; calls while one runs fold into one more
				}
			}
			c.AddHook(g)
			return c
		}
		cc := redis.NewClusterClient(copt)
		cluster.Store(cc)
		return cc, nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("parse REDIS_URL: %w", err)
	}
	opt.PoolSize = poolSize
	// Short timeouts and one retry: with Redis down a request should fail
	// (holds) or fall back (caches) within about a second, not hang.
	opt.MaxRetries = 1
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = dialTimeout, readTimeout, readTimeout
	return redis.NewClient(opt), nil
}

const (
	dialTimeout = 500 * time.Millisecond
	readTimeout = time.Second
)

// Open is a client on url, one server or a cluster as for Connect, with
// go-redis's own timeouts and retries: for tests and tools, which run many
// clients at once on a busy machine. poolSize 0 keeps go-redis's default.
func Open(url string, poolSize int) (redis.UniversalClient, error) {
	copt, isCluster, err := ParseCluster(url)
	if err != nil {
		return nil, err
	}
	if isCluster {
		copt.PoolSize = poolSize
		return redis.NewClusterClient(copt), nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	opt.PoolSize = poolSize
	return redis.NewClient(opt), nil
}

// Check says whether raw is a Redis URL Connect accepts. The error does not
// repeat the URL, which may hold a password.
func Check(raw string) error {
	_, isCluster, err := ParseCluster(raw)
	if err == nil && !isCluster {
		_, err = redis.ParseURL(raw)
	}
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// IsCluster reports whether url names a Redis Cluster (see ParseCluster);
// a malformed URL is not one.
func IsCluster(url string) bool {
	_, ok, err := ParseCluster(url)
	return ok && err == nil
}

// ParseCluster reads the cluster forms of a Redis URL; isCluster is false
// (and the options nil) for a URL of one server. The forms:
//
//	redis+cluster://[user:password@]host:port,host:port,...[?option=value&...]
//	redis://host:port,redis://host:port,...  (user, password and options from the first)
//	host:port,host:port,...
//	redis://host:port?addr=host:port&addr=host:port  (go-redis's own form)
//
// rediss+cluster:// and rediss:// use TLS. Options are those go-redis's
// ParseClusterURL reads (dial_timeout, pool_size, ...). A cluster has only
// database 0, so a path naming another is refused.
func ParseCluster(raw string) (opt *redis.ClusterOptions, isCluster bool, err error) {
	scheme, rest, hasScheme := strings.Cut(raw, "://")
	plus := hasScheme && strings.HasSuffix(scheme, "+cluster")
	if !plus && !strings.Contains(raw, ",") && !hasAddrOption(raw) {
		return nil, false, nil
	}
	var canonical string
	switch {
	case plus:
		canonical, err = fromPlusCluster(strings.TrimSuffix(scheme, "+cluster"), rest)
	case strings.Contains(raw, ","):
		canonical, err = fromList(raw)
	default:
		canonical = raw
	}
	if err != nil {
		return nil, true, err
	}
	if err := onlyDatabaseZero(canonical); err != nil {
		return nil, true, err
	}
	opt, err = redis.ParseClusterURL(canonical)
	if err != nil {
		return nil, true, err
	}
	return opt, true, nil
}

// hasAddrOption says whether a redis:// URL carries go-redis's addr option,
// which only its cluster form reads.
func hasAddrOption(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Query().Has("addr")
}

// fromPlusCluster turns scheme+cluster://[userinfo@]h1:p1,h2:p2[/path][?q]
// into go-redis's scheme://[userinfo@]h1:p1[/path]?q&addr=h2:p2.
func fromPlusCluster(scheme, rest string) (string, error) {
	if scheme != "redis" && scheme != "rediss" {
		return "", fmt.Errorf("unknown scheme %s+cluster (want redis+cluster or rediss+cluster)", scheme)
	}
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	userinfo, hosts := "", authority
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		userinfo, hosts = authority[:i+1], authority[i+1:]
	}
	addrs, err := splitAddrs(hosts)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(scheme + "://" + userinfo + addrs[0] + tail)
	if err != nil {
		return "", err
	}
	return withAddrs(u, addrs[1:]), nil
}

// fromList turns a comma list of redis:// URLs or bare host:port addresses
// into go-redis's form. Every element after the first may give only its
// address (and the same scheme, user and password, or none).
func fromList(raw string) (string, error) {
	parts := strings.Split(raw, ",")
	var first *url.URL
	var addrs []string
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if !strings.Contains(p, "://") {
			p = "redis://" + p
		}
		u, err := url.Parse(p)
		if err != nil {
			return "", fmt.Errorf("cluster address %d: %w", i+1, err)
		}
		if err := checkHostPort(u.Host); err != nil {
			return "", fmt.Errorf("cluster address %d: %w", i+1, err)
		}
		if i == 0 {
			first = u
			continue
		}
		if u.Scheme != first.Scheme || (u.User != nil && u.User.String() != first.User.String()) ||
			(u.Path != "" && u.Path != "/" && u.Path != "/0") || u.RawQuery != "" {
			return "", fmt.Errorf("cluster address %d (%s): after the first, give only host:port", i+1, u.Host)
		}
		addrs = append(addrs, u.Host)
	}
	return withAddrs(first, addrs), nil
}

// splitAddrs splits h1:p1,h2:p2 and checks each is host:port.
func splitAddrs(hosts string) ([]string, error) {
	var out []string
	for i, a := range strings.Split(hosts, ",") {
		a = strings.TrimSpace(a)
		if err := checkHostPort(a); err != nil {
			return nil, fmt.Errorf("cluster address %d: %w", i+1, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func checkHostPort(a string) error {
	h, p, err := net.SplitHostPort(a)
	if err != nil || h == "" {
		return fmt.Errorf("%q is not host:port", a)
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q is not host:port: bad port", a)
	}
	return nil
}

// withAddrs adds addr options for the addresses past u's own.
func withAddrs(u *url.URL, addrs []string) string {
	q := u.Query()
	for _, a := range addrs {
		q.Add("addr", a)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// onlyDatabaseZero refuses a path naming a database other than 0 (which
// go-redis's cluster form would silently ignore).
func onlyDatabaseZero(canonical string) error {
	u, err := url.Parse(canonical)
	if err != nil {
		return err
	}
	if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
		return fmt.Errorf("database %q: a Redis Cluster has only database 0", p)
	}
	return nil
}

// Mask is url with every password replaced, for logs: each element of a
// comma list, and the userinfo of a +cluster URL.
func Mask(raw string) string {
	if scheme, rest, ok := strings.Cut(raw, "://"); ok && strings.HasSuffix(scheme, "+cluster") {
		authority := rest
		if i := strings.IndexAny(rest, "/?"); i >= 0 {
			authority = rest[:i]
		}
		at := strings.LastIndexByte(authority, '@')
		if user, _, hasPassword := strings.Cut(authority[:max(at, 0)], ":"); at >= 0 && hasPassword {
			return scheme + "://" + user + ":xxxxx@" + rest[at+1:]
		}
		return raw
	}
	parts := strings.Split(raw, ",")
	for i, p := range parts {
		u, err := url.Parse(p)
		if err != nil {
			return "(unparseable)"
		}
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}

// Ping checks Redis answers within a second. On a cluster every master is
// asked, and one answering is enough: with a master down the clinics whose
// keys live on the others are served, and every instance is in the same
// position, so taking instances out of a load balancer would not help.
//
// On a cluster the masters are those of a slot map read afresh, and the
// node asked for it may be one that hangs (a stopped replica that nothing
// else talks to), which costs a read timeout before the next node is
// asked: a cluster is given two seconds, and the first master to answer
// ends the wait.
func Ping(ctx context.Context, c redis.UniversalClient) error {
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return c.Ping(ctx).Err()
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	answered := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			if err := node.Ping(ctx).Err(); err != nil {
				return fmt.Errorf("%s: %w", node.Options().Addr, err)
			}
			select {
			case answered <- struct{}{}:
			default:
			}
			return nil
		})
	}()
	select {
	case <-answered:
		return nil
	case err := <-done:
		select {
		case <-answered:
			return nil
		default:
		}
		if err == nil {
			err = errors.New("no cluster master known")
		}
		return err
	}
}
