package faults

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/testkit"
)

// A master of the Redis Cluster dies (SIGKILL) under hold load, and its
// replica takes over. The master chosen is the one the server's event
// subscription is connected to, so that subscription has to find the new
// topology. Patients of two clinics hold and book throughout, one clinic's
// keys on the dying master, and probes hold that clinic's slots as fast as
// they are answered, up to the kill and past the failover. While the slots
// have no master, holds answer 503 UNAVAILABLE with Retry-After, never 500
// and never hang; the other clinic books on; after the failover the holds
// granted before the kill are checked (did asynchronous replication lose
// any? could another patient hold the same slot?) and what a patient with
// a lost hold meets at booking is recorded; no slot is booked twice; a new
// hold is announced on a JSON hold stream opened before the kill, and the
// sweeper, now on the new master, releases and announces the holds left.
//
// SIGKILL rather than SIGSTOP: a process that dies (a crash, the OOM
// killer, a machine gone) is the failure replicas are for, and its clients
// see refused connections at once; a master that hangs is
// TestRedisClusterNodeStopped. The killed node is started again at the end
// (go run ./cmd/devenv up -cluster), and rejoins as its successor's replica.
//
// Like TestRedisClusterNodeStopped it runs only with CLUSTER_FAULTS=1 on a
// cluster on this machine with a replica per master (devenv up -cluster).
func TestRedisClusterMasterKilled(t *testing.T) {
	if !testkit.RedisIsCluster() || os.Getenv("CLUSTER_FAULTS") != "1" {
		t.Skip("needs TEST_REDIS_URL naming a Redis Cluster and CLUSTER_FAULTS=1: `make test-cluster` runs this test")
	}
	rdb, ok := testkit.Redis(t).(*redis.ClusterClient)
	if !ok {
		t.Fatal("TEST_REDIS_URL names a cluster, but testkit gave another client")
	}
	url := testkit.FreshDB(t)
	migrate(t, url)
	pool := openPool(t, url)
	srv := startServer(t, "server", map[string]string{
		"DATABASE_URL":     url,
		"REDIS_URL":        testRedisURL(),
		"DB_MAX_CONNS":     "10",
		"HOLD_TTL_SECONDS": fmt.Sprint(int(failoverHoldTTL / time.Second)),
	})
	victim := subscriptionMaster(t, rdb, waitWhole(t, rdb))
	onVictim, elsewhere := clinicsAcross(t, pool, victim)
	typeID := onVictim.Types[0].ID
	watch := openStream(t, fmt.Sprintf("%s/v1/holds/stream?appointmentTypeId=%s&clientId=failover-watcher", srv.URL, typeID))
	watch.waitFor(t, `"type":"connected"`, 10*time.Second)

	targets := []target{{srv.name, srv.URL}}
	vSlots := slotStarts(t, onVictim, 56)
	lv := startLoad(t, patients(4), typeID, vSlots[probeSlots:], targets)
	le := startLoad(t, patients(4), elsewhere.Types[0].ID, slotStarts(t, elsewhere, 56), targets)
	time.Sleep(scaled(2 * time.Second))
	for name, l := range map[string]*load{"on the victim": lv, "elsewhere": le} {
		if _, books := l.snapshot(); len(books) == 0 {
			t.Fatalf("the clinic %s booked nothing before the fault:\n%s", name, srv.logs.Tail(20))
		}
	}
	pr := startProbes(t, srv, onVictim, vSlots[:probeSlots])
	time.Sleep(scaled(1500 * time.Millisecond))

	cutReplicationLink(t, rdb, victim)
	killed := victim.kill(t)
	promoted := waitPromoted(t, rdb, victim.replicas, killed, 30*time.Second)
	recovered := pr.firstGrantAfter(killed, 20*time.Second)
	time.Sleep(scaled(time.Second))
	pr.finish()
	lv.finish()
	le.finish()
	probes := pr.snapshot()
	vCalls, vBooks := lv.snapshot()
	eCalls, eBooks := le.snapshot()
	t.Log(summary("clinic on the killed master", vCalls, vBooks))
	t.Log(summary("clinic elsewhere", eCalls, eBooks))
	if recovered.IsZero() {
		t.Fatalf("no hold of the killed master's clinic granted within 20 s of the kill; the server's last lines:\n%s", srv.logs.Tail(30))
	}
	first, last, n503 := outage(probes, vCalls, killed)
	t.Logf("master %s killed; its replica %s master %s later; holds of its clinic answered 503 from %s to %s after the kill (%d answers, the slowest in %s), granted again %s after it",
		victim.addr, promoted.addr, promoted.at.Sub(killed).Round(time.Millisecond),
		first.Round(time.Millisecond), last.Round(time.Millisecond), n503, slowestAfter(probes, killed).Round(time.Millisecond),
		recovered.Sub(killed).Round(time.Millisecond))

	checkProbeAnswers(t, probes, killed)
	checkStoppedClinicCallsAnswered(t, vCalls)
	extra := checkHoldsAcrossKill(t, srv, onVictim, probes, killed)
	announcedIn := checkNewHoldAnnounced(t, srv, onVictim, vSlots[probeSlots-1], watch)
	checkSurvivorsExpire(t, watch, extra.left)
	t.Logf("after the failover a new hold was on the stream %s after it was granted; %d holds granted before the kill were released by the sweeper and announced",
		announcedIn.Round(time.Millisecond), len(extra.left))
	if !srv.alive() {
		t.Errorf("the server process exited (%v); it must ride out the failover", srv.waitErr)
	}
	checkOthersKeptBooking(t, eCalls, eBooks, killed, recovered)
	checkServerErrors(t, func(line string) bool { return strings.Contains(line, `"status":503`) }, srv)
	checkBookings(t, pool, onVictim.ID, append(vBooks, extra.books...), unknownBookOutcomes(vCalls))
	checkBookings(t, pool, elsewhere.ID, eBooks, unknownBookOutcomes(eCalls))
}

// cutReplicationLink, with FAILOVER_LINK_CUT set to a duration, drops the
// master's replication links that long before the kill: the writes of that
// time reach no replica (a replica reconnects on its next once-a-second
// tick, usually after the kill), as when the master dies during a network
// blip between it and its replica or with the host under it. It is the
// case asynchronous replication loses holds in; plain SIGKILL on one
// machine loses none, since the kernel delivers what the master wrote to
// its replica's socket after it dies.
func cutReplicationLink(t *testing.T, rdb *redis.ClusterClient, victim *clusterNode) {
	t.Helper()
	v := os.Getenv("FAILOVER_LINK_CUT")
	if v == "" {
		return
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("FAILOVER_LINK_CUT=%q: %v", v, err)
	}
	node := victim.client(rdb)
	defer node.Close()
	if err := node.Do(ctxTimeout(t, 5*time.Second), "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatalf("CLIENT KILL TYPE replica on %s: %v", victim.addr, err)
	}
	t.Logf("the replication links of %s dropped %s before the kill", victim.addr, d)
	time.Sleep(d)
}

// failoverHoldTTL is the server's hold TTL in the failover test: the holds
// granted before the kill must still be alive when they are checked after
// the failover (a few seconds), and their expiry is then awaited.
const failoverHoldTTL = 12 * time.Second

// probeSlots is how many of the first slot starts of the killed master's
// clinic are the probes' (20 weekdays of 48, six specialists each); the
// load books the others.
const probeSlots = 960

// subscriptionMaster is the master the server's event subscription (its one
// PSUBSCRIBE connection) is connected to.
func subscriptionMaster(t *testing.T, rdb *redis.ClusterClient, masters []*clusterNode) *clusterNode {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range masters {
			node := m.client(rdb)
			list, err := node.ClientList(ctxTimeout(t, 5*time.Second)).Result()
			node.Close()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(list, " psub=1 ") {
				node := m.client(rdb)
				m.pid = localPid(t, node)
				node.Close()
				return m
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no master has the server's event subscription (a PSUBSCRIBE connection)")
	return nil
}

// kill sends SIGKILL to the master, and starts it again at the end of the
// test, when it is one of the local cluster's nodes.
func (n *clusterNode) kill(t *testing.T) time.Time {
	t.Helper()
	t.Cleanup(func() { restartClusterNode(t, n.addr) })
	if err := syscall.Kill(n.pid, syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL to the master %s (pid %d): %v", n.addr, n.pid, err)
	}
	return time.Now()
}

// restartClusterNode starts the nodes of devenv's cluster that are down and
// waits for it to be whole again (every master with an in-sync replica), so
// the tests that follow have a failover to go to.
func restartClusterNode(t *testing.T, addr string) {
	root, err := repoRoot()
	if err != nil {
		t.Errorf("%v: start %s again by hand", err, addr)
		return
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REDIS_URL=") && !strings.HasPrefix(kv, "TEST_REDIS_URL=") {
			env = append(env, kv)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".data", "redis-cluster", strings.TrimPrefix(addr, "127.0.0.1:"))); err != nil {
		t.Logf("%s is not a node of devenv's cluster: start it again by hand", addr)
		return
	}
	cmd := exec.Command("go", "run", "./cmd/devenv", "up", "-cluster")
	cmd.Dir, cmd.Env = root, env
	if out, err := cmd.CombinedOutput(); err != nil {
		// One line: make test-cluster shows only this file's lines.
		t.Errorf("starting the killed node %s again: %v: %s", addr, err, strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", " | "))
	}
}

// infoReplica reads a "slaveN:ip=...,port=...,state=..." line of INFO
// replication.
func infoReplica(line string) (map[string]string, bool) {
	name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
	if !ok || !strings.HasPrefix(name, "slave") || !strings.Contains(rest, "ip=") {
		return nil, false
	}
	f := map[string]string{}
	for _, kv := range strings.Split(rest, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			f[k] = v
		}
	}
	return f, true
}

// waitWhole waits until every master of the cluster has a replica in sync
// with it (a node started again after the previous test may still be
// joining), and returns the masters then.
func waitWhole(t *testing.T, rdb *redis.ClusterClient) []*clusterNode {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		masters := clusterMasters(t, rdb)
		var missing []string
		for _, m := range masters {
			node := m.client(rdb)
			info, err := node.Info(ctxTimeout(t, 5*time.Second), "replication").Result()
			node.Close()
			// The master's own list of replicas: the slot map another node
			// gives may not name one that has just joined.
			m.replicas = nil
			for _, line := range strings.Split(info, "\n") {
				if f, ok := infoReplica(line); ok && f["state"] == "online" {
					m.replicas = append(m.replicas, f["ip"]+":"+f["port"])
				}
			}
			if err != nil || len(m.replicas) == 0 || strings.Contains(info, "state=wait_bgsave") || strings.Contains(info, "state=send_bulk") {
				missing = append(missing, m.addr)
			}
		}
		if len(missing) == 0 {
			return masters
		}
		if time.Now().After(deadline) {
			t.Fatalf("the masters %s have no replica in sync after 30 s: `go run ./cmd/devenv up -cluster` gives each one", strings.Join(missing, ", "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// promotion is the replica that took over and when it said so.
type promotion struct {
	addr string
	at   time.Time
}

// waitPromoted waits until one of replicas reports itself master.
func waitPromoted(t *testing.T, rdb *redis.ClusterClient, replicas []string, killed time.Time, within time.Duration) promotion {
	t.Helper()
	var clients []*redis.Client
	for _, addr := range replicas {
		c := (&clusterNode{addr: addr}).client(rdb)
		defer c.Close()
		clients = append(clients, c)
	}
	for time.Since(killed) < within {
		for _, c := range clients {
			role, err := c.Do(ctxTimeout(t, 2*time.Second), "ROLE").Slice()
			if err == nil && len(role) > 0 && role[0] == "master" {
				return promotion{c.Options().Addr, time.Now()}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no replica (%s) took over within %s of the kill", strings.Join(replicas, ", "), within)
	return promotion{}
}

// outage is when holds of the killed master's clinic answered 503 after
// the kill (the first and last answer, as durations after it), and how
// many did.
func outage(probes []probe, calls []call, killed time.Time) (first, last time.Duration, n int) {
	var ends []time.Time
	for _, p := range probes {
		if p.Status == http.StatusServiceUnavailable && p.Answered.After(killed) {
			ends = append(ends, p.Answered)
		}
	}
	for _, c := range calls {
		if c.Op == "hold" && c.Status == http.StatusServiceUnavailable && c.End.After(killed) {
			ends = append(ends, c.End)
		}
	}
	if len(ends) == 0 {
		return 0, 0, 0
	}
	return slices.MinFunc(ends, time.Time.Compare).Sub(killed), slices.MaxFunc(ends, time.Time.Compare).Sub(killed), len(ends)
}

// slowestAfter is the longest a probe answered 503 after the kill took.
func slowestAfter(probes []probe, killed time.Time) time.Duration {
	var d time.Duration
	for _, p := range probes {
		if p.Status == http.StatusServiceUnavailable && p.Answered.After(killed) {
			d = max(d, p.Answered.Sub(p.Asked))
		}
	}
	return d
}

// checkProbeAnswers: every probe was answered, none 500; a 503 is
// UNAVAILABLE with Retry-After; and some answered 503 after the kill.
func checkProbeAnswers(t *testing.T, probes []probe, killed time.Time) {
	t.Helper()
	n503 := 0
	for _, p := range probes {
		switch {
		case p.Status == 0:
			t.Errorf("a hold probe got no answer: %s", p.Err)
		case p.Status == http.StatusServiceUnavailable:
			if !strings.Contains(p.Body, `"UNAVAILABLE"`) || p.RetryAfter == "" {
				t.Errorf("a hold probe answered 503 without UNAVAILABLE or without Retry-After (%q): %s", p.RetryAfter, p.Body)
			}
			if p.Answered.After(killed) {
				n503++
			}
		case p.Status != http.StatusCreated:
			t.Errorf("a hold probe answered %d: %s", p.Status, p.Body)
		}
	}
	if n503 == 0 {
		t.Errorf("no hold probe answered 503 after the kill: the fault did not happen")
	}
}

// checkStoppedClinicCallsAnswered: every call of the load on the killed
// master's clinic was answered, none with a 500, a 503 always UNAVAILABLE.
func checkStoppedClinicCallsAnswered(t *testing.T, calls []call) {
	t.Helper()
	for _, c := range calls {
		switch {
		case c.Status == 0:
			t.Errorf("%s of the clinic on the killed master got no answer: %s", c.Op, c.Err)
		case c.Status == http.StatusServiceUnavailable && !strings.Contains(c.Body, `"UNAVAILABLE"`):
			t.Errorf("%s answered 503 without the UNAVAILABLE code: %s", c.Op, c.Body)
		case c.Status != http.StatusServiceUnavailable && !normal(c.Status):
			t.Errorf("%s of the clinic on the killed master answered %d: %s", c.Op, c.Status, c.Body)
		}
	}
}
