package redisx

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// BenchmarkReplicaAck prices WAIT 1 after a write shaped like a hold's claim
// (one script setting a key with a TTL) on a Redis Cluster with replicas:
// "script" is the write alone, "script+WAIT" the write and WAIT 1 100 in one
// round trip on the same connection (WAIT counts that connection's writes),
// which returns once a replica has the write. Besides the throughput
// (ns/op) it reports the median and 99th percentile of one call's latency.
// Run with TEST_REDIS_URL
// naming the cluster:
//
//	go test -run '^$' -bench ReplicaAck -benchtime 5000x ./internal/platform/redisx/
func BenchmarkReplicaAck(b *testing.B) {
	u := os.Getenv("TEST_REDIS_URL")
	if !IsCluster(u) {
		b.Skip("needs TEST_REDIS_URL naming a Redis Cluster with replicas")
	}
	rdb, err := Connect(u, 16)
	if err != nil {
		b.Fatal(err)
	}
	defer rdb.Close()
	ctx := context.Background()
	node, err := rdb.(*redis.ClusterClient).MasterForKey(ctx, "{replica-ack}")
	if err != nil {
		b.Fatal(err)
	}
	const script = `redis.call('SET', KEYS[1], ARGV[1], 'PX', 60000) return 1`
	var n, unacked atomic.Int64
	for _, wait := range []bool{false, true} {
		name := map[bool]string{false: "script", true: "script+WAIT"}[wait]
		b.Run(name, func(b *testing.B) {
			var mu sync.Mutex
			lat := make([]time.Duration, 0, b.N)
			b.SetParallelism(4) // 4 goroutines per core
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					key := fmt.Sprintf("{replica-ack}:%d", n.Add(1))
					start := time.Now()
					if !wait {
						if err := node.Eval(ctx, script, []string{key}, "v").Err(); err != nil {
							b.Error(err)
							return
						}
						mu.Lock()
						lat = append(lat, time.Since(start))
						mu.Unlock()
						continue
					}
					cmds, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
						p.Eval(ctx, script, []string{key}, "v")
						p.Do(ctx, "WAIT", 1, 100)
						return nil
					})
					if err != nil {
						b.Error(err)
						return
					}
					if acks, _ := cmds[1].(*redis.Cmd).Int64(); acks < 1 {
						unacked.Add(1)
					}
					mu.Lock()
					lat = append(lat, time.Since(start))
					mu.Unlock()
				}
			})
			if len(lat) > 0 {
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			}
			if wait {
				b.ReportMetric(float64(unacked.Load()), "unacked")
			}
		})
	}
}
