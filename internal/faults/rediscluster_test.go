package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

// One shard of the Redis Cluster, a master and its replica, stops
// answering (SIGSTOP: they hang, their connections stay open) under load,
// for longer than the cluster takes to mark the master failed, and then
// goes on (SIGCONT): no node is left to serve the master's slots (a master
// whose replica can take over is TestRedisClusterMasterKilled). Patients
// of two clinics book throughout: one clinic's keys live on the stopped
// master, the other's elsewhere. While it is stopped, the first clinic's requests answer 503,
// never 500 and never hang; the second clinic keeps booking, and a hold of
// it left to expire is released and announced on time; once the master is
// back the first clinic books again from the same server process; every
// booking answered 201 is in the database with its audit row, and nobody
// is double-booked.
//
// It runs only against a Redis Cluster on this machine, and only when
// CLUSTER_FAULTS=1 says nothing else uses the cluster meanwhile (make test
// and make test-cluster run it alone): it stops a node other tests would use.
func TestRedisClusterNodeStopped(t *testing.T) {
	if !testkit.RedisIsCluster() || os.Getenv("CLUSTER_FAULTS") != "1" {
		t.Skip("needs TEST_REDIS_URL naming a Redis Cluster and CLUSTER_FAULTS=1: `make test-cluster` runs this test")
	}
	client := testkit.Redis(t)
	rdb, ok := client.(*redis.ClusterClient)
	if !ok {
		t.Fatalf("TEST_REDIS_URL names a cluster, but testkit gave a %T", client)
	}
	masters := waitWhole(t, rdb)
	victim := pickVictim(t, rdb, masters)

	url := testkit.FreshDB(t)
	migrate(t, url)
	pool := openPool(t, url)
	onVictim, elsewhere := clinicsAcross(t, pool, victim)
	srv := startServer(t, "server", map[string]string{
		"DATABASE_URL":     url,
		"REDIS_URL":        testRedisURL(),
		"DB_MAX_CONNS":     "10", // the database server is shared with every other test
		"HOLD_TTL_SECONDS": fmt.Sprint(int(clusterHoldTTL / time.Second)),
	})
	targets := []target{{srv.name, srv.URL}}
	// The first day's slots of the clinic elsewhere are kept out of its load
	// for the hold left to expire.
	eSlots := slotStarts(t, elsewhere, 56)
	lv := startLoad(t, patients(4), onVictim.Types[0].ID, slotStarts(t, onVictim, 56), targets)
	le := startLoad(t, patients(4), elsewhere.Types[0].ID, eSlots[48:], targets)
	time.Sleep(scaled(2 * time.Second))
	for name, l := range map[string]*load{"on the victim": lv, "elsewhere": le} {
		if _, books := l.snapshot(); len(books) == 0 {
			t.Fatalf("the clinic %s booked nothing before the fault:\n%s", name, srv.logs.Tail(20))
		}
	}
	events := subscribeOn(t, rdb, masters, victim, holds.Channel(elsewhere.Types[0].ID))

	// Stopped past the cluster's node timeout (2 s in devenv), so the other
	// masters mark it failed and must go on serving their slots without it.
	stopped := victim.stopShard(t, rdb)
	checkReady(t, srv)
	expiredIn := abandonHold(t, srv, elsewhere, eSlots[0], events)
	time.Sleep(max(scaled(8*time.Second)-time.Since(stopped), 0))
	resumed := victim.resumeShard(t)

	recovered := firstBookingHeldAfter(lv, resumed, 20*time.Second)
	time.Sleep(scaled(2 * time.Second))
	lv.finish()
	le.finish()
	vCalls, vBooks := lv.snapshot()
	eCalls, eBooks := le.snapshot()
	t.Log(summary("clinic on the stopped master", vCalls, vBooks))
	t.Log(summary("clinic elsewhere", eCalls, eBooks))
	t.Logf("master %s stopped for %s; a hold of the clinic elsewhere released %s after it was made; first booking of the stopped master's clinic %s after it went on",
		victim.addr, resumed.Sub(stopped).Round(time.Millisecond), expiredIn.Round(time.Millisecond), recovered.Sub(resumed).Round(time.Millisecond))
	if recovered.IsZero() {
		t.Errorf("the clinic on the stopped master booked nothing within 20 s of it going on")
	}
	if !srv.alive() {
		t.Errorf("the server process exited (%v); it must ride out the outage", srv.waitErr)
	}

	checkStoppedClinicCalls(t, vCalls, stopped, resumed)
	checkOthersKeptBooking(t, eCalls, eBooks, stopped, resumed)
	checkServerErrors(t, func(line string) bool { return strings.Contains(line, `"status":503`) }, srv)
	checkBookings(t, pool, onVictim.ID, vBooks, unknownBookOutcomes(vCalls))
	checkBookings(t, pool, elsewhere.ID, eBooks, unknownBookOutcomes(eCalls))
}

// clusterHoldTTL is the server's hold TTL in the cluster fault test: short,
// so a hold left to expire is released while the master is still stopped.
const clusterHoldTTL = 5 * time.Second

// abandonHold holds start of c's specialist 1 and walks away, while the
// victim is stopped, and waits for its release (reason expired) to be
// announced: the sweeper must go on for the clinics whose keys are up. It
// returns how long after the hold that came.
func abandonHold(t *testing.T, srv *server, c testkit.Clinic, start time.Time, events *redis.PubSub) time.Duration {
	t.Helper()
	body := fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"specialistId":%q,"clientId":"walks-away"}`,
		c.Types[0].ID, start.UTC().Format(time.RFC3339), c.Specialists[0].ID)
	id := holdOn(t, newClient(), srv, body)
	heldAt := time.Now()
	within := clusterHoldTTL + 8*time.Second
	deadline := time.After(within)
	for {
		select {
		case m := <-events.Channel():
			var ev holds.Event
			if err := json.Unmarshal([]byte(m.Payload), &ev); err != nil {
				t.Fatalf("undecodable event %s: %v", m.Payload, err)
			}
			if ev.HoldID != id || ev.Type != holds.EventRelease {
				continue
			}
			d := time.Since(heldAt)
			if ev.Reason != holds.ReasonExpired || d < clusterHoldTTL-500*time.Millisecond {
				t.Errorf("the hold was released (%s) %s after it was made; want expired, after its TTL of %s", ev.Reason, d, clusterHoldTTL)
			}
			return d
		case <-deadline:
			t.Fatalf("a hold of the clinic elsewhere, made while a master was stopped, was not announced expired within %s (TTL %s); the server's last lines:\n%s", within, clusterHoldTTL, srv.logs.Tail(40))
		}
	}
}

// checkReady: with one master stopped the instance stays ready (every
// instance is in the same position; taking them all out of the balancer
// would stop the clinics the other masters serve), and says so promptly.
func checkReady(t *testing.T, srv *server) {
	t.Helper()
	time.Sleep(1500 * time.Millisecond) // past the read timeout: the stop is noticed
	start := time.Now()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatalf("/readyz with a master stopped: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || time.Since(start) > 2*time.Second {
		t.Errorf("/readyz with a master stopped answered %d after %s; want 200 within 2 s", res.StatusCode, time.Since(start))
	}
}

// subscribeOn subscribes to channel through a master other than the victim
// (a message published on any node reaches the subscribers of every node).
func subscribeOn(t *testing.T, rdb *redis.ClusterClient, masters []*clusterNode, victim *clusterNode, channel string) *redis.PubSub {
	t.Helper()
	i := slices.IndexFunc(masters, func(n *clusterNode) bool { return n != victim })
	node := masters[i].client(rdb)
	t.Cleanup(func() { _ = node.Close() })
	ps := node.Subscribe(t.Context(), channel)
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(t.Context()); err != nil {
		t.Fatal(err)
	}
	return ps
}

// clusterNode is a master of the test cluster running on this machine,
// with its replicas' addresses.
type clusterNode struct {
	addr     string
	pid      int
	slots    []redis.SlotRange
	replicas []string

	stoppedReplicas []int // by stopShard
}

func (n *clusterNode) serves(slot uint16) bool {
	return slices.ContainsFunc(n.slots, func(r redis.SlotRange) bool { return int64(slot) >= r.Start && int64(slot) <= r.End })
}

// client is a client of this node alone, with rdb's credentials.
func (n *clusterNode) client(rdb *redis.ClusterClient) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: n.addr, Username: rdb.Options().Username, Password: rdb.Options().Password})
}

// stopShard sends SIGSTOP to the master's replicas and then to the master,
// and makes sure they go on at the end of the test whatever happens; it
// returns when the master was stopped. The replicas are told not to take
// over first: the FAIL verdict on their master that reached them while
// they were stopped would otherwise start an election as they wake, a
// race with the master's own return.
func (n *clusterNode) stopShard(t *testing.T, rdb *redis.ClusterClient) time.Time {
	t.Helper()
	if len(n.replicas) == 0 {
		t.Fatalf("the master %s has no replica: see waitWhole", n.addr)
	}
	var pids []int
	for _, addr := range n.replicas {
		r := (&clusterNode{addr: addr}).client(rdb)
		t.Cleanup(func() { _ = r.Close() })
		setNoFailover(t, r, true)
		t.Cleanup(func() { allowFailoverOnceSettled(t, r, n.addr) })
		pids = append(pids, localPid(t, r))
	}
	pids = append(pids, n.pid)
	for _, pid := range pids {
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP to pid %d of the shard of %s: %v", pid, n.addr, err)
		}
	}
	n.stoppedReplicas = pids[:len(pids)-1]
	return time.Now()
}

// resumeShard continues the master, then its replicas.
func (n *clusterNode) resumeShard(t *testing.T) time.Time {
	t.Helper()
	if err := syscall.Kill(n.pid, syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT to the master %s (pid %d): %v", n.addr, n.pid, err)
	}
	resumed := time.Now()
	for _, pid := range n.stoppedReplicas {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatalf("SIGCONT to a replica of %s (pid %d): %v", n.addr, pid, err)
		}
	}
	return resumed
}

// clusterMasters lists the cluster's masters and their slots.
func clusterMasters(t *testing.T, rdb *redis.ClusterClient) []*clusterNode {
	t.Helper()
	ranges, err := rdb.ClusterSlots(ctxTimeout(t, 10*time.Second)).Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []*clusterNode
	for _, r := range ranges {
		addr := r.Nodes[0].Addr
		i := slices.IndexFunc(out, func(n *clusterNode) bool { return n.addr == addr })
		if i < 0 {
			out = append(out, &clusterNode{addr: addr})
			i = len(out) - 1
		}
		out[i].slots = append(out[i].slots, redis.SlotRange{Start: int64(r.Start), End: int64(r.End)})
		for _, rn := range r.Nodes[1:] {
			if !slices.Contains(out[i].replicas, rn.Addr) {
				out[i].replicas = append(out[i].replicas, rn.Addr)
			}
		}
	}
	if len(out) < 2 {
		t.Skipf("the cluster has %d master(s); the test needs two", len(out))
	}
	return out
}

// pickVictim is the master serving slot 0, found with its process id; the
// test is skipped when that process is not a redis-server on this machine.
func pickVictim(t *testing.T, rdb *redis.ClusterClient, masters []*clusterNode) *clusterNode {
	t.Helper()
	i := slices.IndexFunc(masters, func(n *clusterNode) bool { return n.serves(0) })
	if i < 0 {
		t.Fatal("no master serves slot 0")
	}
	victim := masters[i]
	node := victim.client(rdb)
	defer node.Close()
	victim.pid = localPid(t, node)
	return victim
}

// localPid is the process id of the node client talks to; the test is
// skipped when that process is not a redis-server on this machine.
func localPid(t *testing.T, client *redis.Client) int {
	t.Helper()
	info, err := client.InfoMap(ctxTimeout(t, 10*time.Second), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	addr := client.Options().Addr
	pid, err := strconv.Atoi(info["Server"]["process_id"])
	if err != nil {
		t.Fatalf("INFO server of %s: no process_id (%v)", addr, err)
	}
	port := info["Server"]["tcp_port"]
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), "redis-server") || !strings.Contains(string(cmdline), port) {
		t.Skipf("the node %s (pid %d) is not a redis-server on this machine: it cannot be stopped from here", addr, pid)
	}
	return pid
}

// clinicsAcross makes clinics until it has one whose keys (hash tag
// {clinicId}) live on the victim and one whose keys live on another master.
func clinicsAcross(t *testing.T, pool *pgxpool.Pool, victim *clusterNode) (onVictim, elsewhere testkit.Clinic) {
	t.Helper()
	var have [2]bool
	for i := 0; i < 50 && !(have[0] && have[1]); i++ {
		c := faultClinic(t, pool)
		if victim.serves(clinicSlot(c.ID)) {
			onVictim, have[0] = c, true
		} else {
			elsewhere, have[1] = c, true
		}
	}
	if !have[0] || !have[1] {
		t.Fatalf("50 clinics and not one on the victim %s and one elsewhere", victim.addr)
	}
	return onVictim, elsewhere
}

// clinicSlot is the cluster slot of a clinic's keys.
func clinicSlot(id uuid.UUID) uint16 { return testkit.ClusterSlot("{" + id.String() + "}") }

// checkStoppedClinicCalls: every call of the clinic on the stopped master
// was answered within the load's timeout, none with a 500, a 503 always
// with the UNAVAILABLE code; nothing asked after the stop and answered
// before the master went on succeeded, and some of it was answered 503.
func checkStoppedClinicCalls(t *testing.T, calls []call, stopped, resumed time.Time) {
	t.Helper()
	during, n503 := 0, 0
	for _, c := range calls {
		switch {
		case c.Status == 0:
			t.Errorf("%s of the clinic on the stopped master got no answer: %s", c.Op, c.Err)
		case c.Status == http.StatusInternalServerError:
			t.Errorf("%s of the clinic on the stopped master answered 500: %s", c.Op, c.Body)
		case c.Status == http.StatusServiceUnavailable && !strings.Contains(c.Body, `"UNAVAILABLE"`):
			t.Errorf("%s answered 503 without the UNAVAILABLE code: %s", c.Op, c.Body)
		case c.Status != http.StatusServiceUnavailable && !normal(c.Status):
			t.Errorf("%s of the clinic on the stopped master answered %d: %s", c.Op, c.Status, c.Body)
		}
		if c.Start.After(stopped) && c.End.Before(resumed) {
			during++
			if c.Status == http.StatusServiceUnavailable {
				n503++
			} else if c.Status == http.StatusCreated {
				t.Errorf("a %s of the clinic on the stopped master was answered 201 while it was stopped (asked %s)", c.Op, c.Start.Format("15:04:05.000"))
			}
		}
	}
	t.Logf("the clinic on the stopped master: %d requests asked and answered while it was stopped, %d of them 503", during, n503)
	if n503 == 0 {
		t.Errorf("no request of the clinic on the stopped master was answered 503 while it was stopped: the fault did not happen")
	}
}

// checkOthersKeptBooking: the clinic whose keys live on the running masters
// had only normal answers and no 503 (what else it needs of the stopped
// master, a rate-limit counter, a specialist's bitmap, fails open), and
// booked while the master was stopped.
func checkOthersKeptBooking(t *testing.T, calls []call, books []booked, stopped, resumed time.Time) {
	t.Helper()
	slowest := time.Duration(0)
	for _, c := range calls {
		slowest = max(slowest, c.End.Sub(c.Start))
		switch {
		case c.Status == 0:
			t.Errorf("%s of the clinic elsewhere got no answer: %s", c.Op, c.Err)
		case !normal(c.Status):
			t.Errorf("%s of the clinic elsewhere answered %d at %s (%s after the stop): %s", c.Op, c.Status,
				c.End.Format("15:04:05.000"), c.End.Sub(stopped).Round(time.Millisecond), c.Body)
		}
	}
	during := 0
	for _, b := range books {
		if b.HoldStarted.After(stopped) && b.At.Before(resumed) {
			during++
		}
	}
	t.Logf("the clinic elsewhere: %d bookings held and made while the master was stopped; slowest request %s", during, slowest.Round(time.Millisecond))
	if during == 0 {
		t.Errorf("the clinic whose keys live on the running masters booked nothing while one master was stopped")
	}
}
