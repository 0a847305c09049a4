package redisx_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/platform/redisx"
	"github.com/clinic/booking/internal/testkit"
)

func TestParseClusterReadsEveryClusterForm(t *testing.T) {
	three := []string{"10.0.0.1:7000", "10.0.0.2:7001", "10.0.0.3:7002"}
	for _, tc := range []struct {
		url, user, password string
		addrs               []string
		tls                 bool
		readTimeout         time.Duration
	}{
		{url: "redis+cluster://10.0.0.1:7000,10.0.0.2:7001,10.0.0.3:7002", addrs: three},
		{url: "redis+cluster://app:s3cret@10.0.0.1:7000,10.0.0.2:7001,10.0.0.3:7002/0?read_timeout=2s",
			user: "app", password: "s3cret", addrs: three, readTimeout: 2 * time.Second},
		{url: "rediss+cluster://:pw@cache.internal:6379,cache2.internal:6379", password: "pw",
			addrs: []string{"cache.internal:6379", "cache2.internal:6379"}, tls: true},
		{url: "redis://10.0.0.1:7000,redis://10.0.0.2:7001,redis://10.0.0.3:7002", addrs: three},
		{url: "redis://app:s3cret@10.0.0.1:7000/0,redis://10.0.0.2:7001,10.0.0.3:7002",
			user: "app", password: "s3cret", addrs: three},
		{url: "10.0.0.1:7000, 10.0.0.2:7001,10.0.0.3:7002", addrs: three},
		{url: "redis://10.0.0.1:7000?addr=10.0.0.2:7001&addr=10.0.0.3:7002", addrs: three},
	} {
		opt, isCluster, err := redisx.ParseCluster(tc.url)
		if err != nil || !isCluster {
			t.Errorf("%s: cluster %v, err %v; want a cluster", tc.url, isCluster, err)
			continue
		}
		if !slices.Equal(opt.Addrs, tc.addrs) || opt.Username != tc.user || opt.Password != tc.password ||
			(opt.TLSConfig != nil) != tc.tls || opt.ReadTimeout != tc.readTimeout {
			t.Errorf("%s: addrs %v, user %q, password %q, TLS %v, read timeout %s; want %v, %q, %q, %v, %s", tc.url,
				opt.Addrs, opt.Username, opt.Password, opt.TLSConfig != nil, opt.ReadTimeout,
				tc.addrs, tc.user, tc.password, tc.tls, tc.readTimeout)
		}
	}
}

func TestParseClusterLeavesOneServerAlone(t *testing.T) {
	for _, u := range []string{"redis://127.0.0.1:63790/0", "rediss://u:p@cache:6380/3", "redis://cache:6379"} {
		if opt, isCluster, err := redisx.ParseCluster(u); isCluster || opt != nil || err != nil {
			t.Errorf("%s: cluster %v, options %v, err %v; want one server", u, isCluster, opt, err)
		}
		if err := redisx.Check(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestParseClusterRefusesWhatItCannotMean(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"redis+cluster://10.0.0.1:7000,10.0.0.2:7001/1", "only database 0"},
		{"redis://10.0.0.1:7000/2,redis://10.0.0.2:7001", "only database 0"},
		{"redis+cluster://10.0.0.1:7000,10.0.0.2", "not host:port"},
		{"redis+cluster://10.0.0.1:7000?no_such_option=1", "unexpected option"},
		{"memcached+cluster://10.0.0.1:7000,10.0.0.2:7001", "unknown scheme"},
		{"redis://a:1,redis://other:pw@b:2", "only host:port"},
		{"redis://a:1,redis://b:2/3", "only host:port"},
		{"redis://a:1,rediss://b:2", "only host:port"},
	} {
		_, isCluster, err := redisx.ParseCluster(tc.url)
		if !isCluster || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: cluster %v, err %v; want an error saying %q", tc.url, isCluster, err, tc.want)
		}
		if err := redisx.Check(tc.url); err == nil {
			t.Errorf("Check(%s) accepted it", tc.url)
		}
	}
}

func TestMaskHidesEveryPassword(t *testing.T) {
	for in, want := range map[string]string{
		"redis://u:secret@cache:6379/0":                       "redis://u:xxxxx@cache:6379/0",
		"redis+cluster://u:secret@a:1,b:2,c:3?read_timeout=2": "redis+cluster://u:xxxxx@a:1,b:2,c:3?read_timeout=2",
		"redis+cluster://a:1,b:2":                             "redis+cluster://a:1,b:2",
		"redis://u:secret@a:1,redis://u:secret@b:2":           "redis://u:xxxxx@a:1,redis://u:xxxxx@b:2",
		"a:1,b:2": "a:1,b:2",
	} {
		if got := redisx.Mask(in); got != want || strings.Contains(got, "secret") {
			t.Errorf("Mask(%s) = %s, want %s", in, got, want)
		}
	}
}

// Connect gives the client the URL asks for, and it works: on a cluster,
// keys of every master are written and read back through it.
func TestConnectTalksToTheTestRedis(t *testing.T) {
	u := testRedisURL()
	c, err := redisx.Connect(u, 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()
	if err := redisx.Ping(ctx, c); err != nil {
		t.Fatalf("ping %s: %v", redisx.Mask(u), err)
	}
	cc, isCluster := c.(*redis.ClusterClient)
	if isCluster != redisx.IsCluster(u) {
		t.Fatalf("%s gave a %T", redisx.Mask(u), c)
	}
	keys := make([]string, 12)
	for i := range keys {
		keys[i] = fmt.Sprintf("redisx-test:{%s}", uuid.NewString())
		if err := c.Set(ctx, keys[i], i, time.Minute).Err(); err != nil {
			t.Fatalf("set %s: %v", keys[i], err)
		}
	}
	for i, k := range keys {
		if n, err := c.Get(ctx, k).Int(); err != nil || n != i {
			t.Fatalf("get %s: %d, %v; want %d", k, n, err, i)
		}
	}
	if !isCluster {
		return
	}
	// Asked of each master directly: a key of another master's slots is
	// answered MOVED, one of its own 1.
	var masters, withKeys atomic.Int32
	if err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		masters.Add(1)
		for _, k := range keys {
			if n, err := node.Exists(ctx, k).Result(); err == nil && n == 1 {
				withKeys.Add(1)
				return nil
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if masters.Load() < 2 || withKeys.Load() < 2 {
		t.Fatalf("%d masters, %d of them hold some of the 12 keys: the keys did not spread over the cluster", masters.Load(), withKeys.Load())
	}
}

// A cluster whose masters are all unreachable is down for Ping, and
// answers within about a second.
func TestPingOfAnUnreachableClusterFails(t *testing.T) {
	c, err := redisx.Connect("redis+cluster://127.0.0.1:1,127.0.0.1:2", 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	start := time.Now()
	if err := redisx.Ping(t.Context(), c); err == nil {
		t.Fatal("Ping of nothing listening said ok")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Ping took %s", d)
	}
}

func testRedisURL() string {
	return cmp.Or(os.Getenv("TEST_REDIS_URL"), testkit.DefaultTestRedisURL)
}

// Check's errors end up in the server's start-up message: they must not
// repeat the password of the URL they refuse.
func TestCheckDoesNotRepeatThePassword(t *testing.T) {
	for _, u := range []string{
		"redis://u:secret@cache:notaport/0",
		"redis+cluster://u:secret@a:1,b:notaport",
		"redis://u:secret@a:notaport,redis://b:2",
		"redis://u:secret@cache:6379/0?no_such_option=1",
	} {
		err := redisx.Check(u)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("Check(%s) = %v, want an error without the password", u, err)
		}
	}
}
