package main

import (
	"bufio"
	"bytes"
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

// The local Redis Cluster: six nodes on these ports, created as three
// masters (the first three) with one replica each (the others; which
// replica follows which master is redis-cli's choice, and a failover swaps
// roles). Each node's cluster bus listens 100 ports higher (Redis's
// default, 10000 higher, is past 65535), out of the kernel's range for
// outgoing ports and clear of the single Redis servers a machine shared by
// several checkouts runs just above 63801-63806.
var clusterPorts = []int{63801, 63802, 63803, 63804, 63805, 63806}

// clusterMasters is how many of the nodes are masters.
const clusterMasters = 3

const clusterBusOffset = 100

// clusterNodeOptions make a node a cluster member whose files stay in its
// directory. A node that stops answering is marked failed after two
// seconds (Redis's default is 15): its replica takes over about a second
// later, quick enough for a test to watch, slow enough that a busy machine
// pausing a node for a moment does not set one off. A replica takes over
// however long it was cut off from its master (validity factor 0: no data
// is precious here), and syncs over the socket at once (diskless, no
// delay) when it joins or its master changes. The slots of a master that
// has no replica left stay away while the others go on serving theirs.
var clusterNodeOptions = []string{
	"--cluster-enabled", "yes",
	"--cluster-config-file", "nodes.conf",
	"--cluster-node-timeout", "2000",
	"--cluster-require-full-coverage", "no",
	"--cluster-replica-validity-factor", "0",
	"--repl-diskless-sync", "yes",
	"--repl-diskless-sync-delay", "0",
}

// redisCluster manages a Redis Cluster of three masters and three replicas
// on loopback for one repository, its nodes' files in
// <repo>/.data/redis-cluster/<port>.
type redisCluster struct {
	dir   string
	nodes []*redis
}

func newRedisCluster(dir string) *redisCluster {
	c := &redisCluster{dir: dir}
	for _, port := range clusterPorts {
		args := append([]string{"--cluster-port", strconv.Itoa(port + clusterBusOffset)}, clusterNodeOptions...)
		c.nodes = append(c.nodes, &redis{dir: filepath.Join(dir, strconv.Itoa(port)), port: port, args: args})
	}
	return c
}

// url is REDIS_URL for the cluster.
func (c *redisCluster) url() string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.addr()
	}
	return "redis+cluster://" + strings.Join(addrs, ",")
}

func (c *redisCluster) up() error {
	if err := c.ok(); err == nil {
		logf("Redis Cluster already running on %s", c.addrs())
		return nil
	}
	c.continueStopped()
	running := 0
	for _, n := range c.nodes {
		if redisPing(n.addr()) == nil {
			running++
		}
	}
	if running == 0 {
		// Nothing runs: start afresh rather than from the cluster layout the
		// nodes saved last time, which their empty memory no longer matches.
		for _, n := range c.nodes {
			if err := os.Remove(filepath.Join(n.dir, "nodes.conf")); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("removing the old cluster layout: %w", err)
			}
		}
	}
	for _, n := range c.nodes {
		if err := n.up(); err != nil {
			return fmt.Errorf("node %s: %w", n.addr(), err)
		}
	}
	if err := c.create(); err != nil {
		return err
	}
	return c.waitOK(30 * time.Second)
}

// continueStopped sends SIGCONT to our nodes that are stopped, as the
// cluster fault test leaves one if it is killed halfway.
func (c *redisCluster) continueStopped() {
	for _, n := range c.nodes {
		pid, ours := n.pid()
		if !ours {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(stat, ')'); err != nil || i < 0 || !bytes.HasPrefix(stat[i+1:], []byte(" T")) {
			continue
		}
		logf("node %s (pid %d) is stopped (SIGSTOP); continuing it", n.addr(), pid)
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			logf("continuing pid %d: %v", pid, err)
		}
	}
}

// create joins the nodes into one cluster and gives them the slots, unless
// they already form one (a node restarted with its saved layout rejoins by
// itself).
func (c *redisCluster) create() error {
	fresh := 0
	for _, n := range c.nodes {
		info, err := clusterInfo(n.addr())
		if err != nil {
			return fmt.Errorf("node %s: %w", n.addr(), err)
		}
		if info["cluster_known_nodes"] == "1" && info["cluster_slots_assigned"] == "0" {
			fresh++
		}
	}
	switch fresh {
	case 0:
		return nil
	case len(c.nodes):
	default:
		return fmt.Errorf("%d of the %d nodes (%s) belong to no cluster and the others do: run `go run ./cmd/devenv down` and try again",
			fresh, len(c.nodes), c.addrs())
	}
	cli, err := redisCLIBin()
	if err != nil {
		return err
	}
	logf("creating a Redis Cluster of %s (three masters, a replica each)", c.addrs())
	args := append([]string{"--cluster", "create"}, c.addrList()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(len(c.nodes)/clusterMasters-1), "--cluster-yes")
	if err := quiet(exec.Command(cli, args...)); err != nil {
		return fmt.Errorf("creating the cluster: %w", err)
	}
	return nil
}

// waitOK waits until every node reports the cluster ok.
func (c *redisCluster) waitOK(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := c.ok()
		if err == nil {
			logf("Redis Cluster ok on %s", c.addrs())
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ok after %s: %w", within, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ok says whether every node answers and sees the cluster whole (all nodes
// known, every slot served, state ok), and every master has a replica
// that is in sync with it: a failover has somewhere to go.
func (c *redisCluster) ok() error {
	masters := 0
	for _, n := range c.nodes {
		info, err := clusterInfo(n.addr())
		if err != nil {
			return fmt.Errorf("node %s: %w", n.addr(), err)
		}
		if info["cluster_state"] != "ok" || info["cluster_slots_ok"] != "16384" || info["cluster_known_nodes"] != strconv.Itoa(len(c.nodes)) {
			return fmt.Errorf("node %s: state %s, %s of 16384 slots ok, %s nodes known", n.addr(),
				info["cluster_state"], info["cluster_slots_ok"], info["cluster_known_nodes"])
		}
		repl, err := replicationInfo(n.addr())
		if err != nil {
			return fmt.Errorf("node %s: %w", n.addr(), err)
		}
		switch {
		case repl["role"] == "master" && repl["connected_slaves"] == "0":
			return fmt.Errorf("node %s: a master without a replica", n.addr())
		case repl["role"] == "master":
			masters++
		case repl["master_link_status"] != "up" || repl["master_sync_in_progress"] != "0":
			return fmt.Errorf("node %s: a replica not in sync with its master (link %s)", n.addr(), repl["master_link_status"])
		}
	}
	if masters != clusterMasters {
		return fmt.Errorf("%d masters, want %d", masters, clusterMasters)
	}
	return nil
}

// roles says which nodes are masters and which replicas, for status.
func (c *redisCluster) roles() string {
	var masters, replicas []string
	for _, n := range c.nodes {
		repl, err := replicationInfo(n.addr())
		switch {
		case err != nil:
		case repl["role"] == "master":
			masters = append(masters, strconv.Itoa(n.port))
		default:
			replicas = append(replicas, fmt.Sprintf("%d (of %s)", n.port, repl["master_port"]))
		}
	}
	return fmt.Sprintf("masters %s; replicas %s", strings.Join(masters, ", "), strings.Join(replicas, ", "))
}

func (c *redisCluster) down() error {
	var errs []error
	for _, n := range c.nodes {
		errs = append(errs, wrap("node "+n.addr(), n.down()))
	}
	return errors.Join(errs...)
}

func (c *redisCluster) status() string {
	running := 0
	for _, n := range c.nodes {
		if _, ours := n.pid(); ours && redisPing(n.addr()) == nil {
			running++
		}
	}
	switch {
	case running == 0:
		return "Redis Cluster: not running"
	case c.ok() == nil:
		return fmt.Sprintf("Redis Cluster: running on %s (%s; dir %s)", c.addrs(), c.roles(), c.dir)
	default:
		return fmt.Sprintf("Redis Cluster: %d of %d nodes running, not ok: %v", running, len(c.nodes), c.ok())
	}
}

func (c *redisCluster) addrList() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.addr()
	}
	return out
}

func (c *redisCluster) addrs() string { return strings.Join(c.addrList(), ", ") }

// clusterInfo is a node's CLUSTER INFO as fields.
func clusterInfo(addr string) (map[string]string, error) { return infoFields(addr, "CLUSTER INFO") }

// replicationInfo is a node's INFO replication as fields.
func replicationInfo(addr string) (map[string]string, error) {
	return infoFields(addr, "INFO replication")
}

// infoFields sends command, whose reply is lines of field:value.
func infoFields(addr, command string) (map[string]string, error) {
	text, err := redisBulk(addr, command)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out, nil
}

// redisBulk sends one inline command whose reply is a bulk string, and
// returns the string.
func redisBulk(addr, command string) (string, error) {
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
	r := bufio.NewReader(conn)
	head, err := r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading the reply to %s: %w", command, err)
	}
	head = strings.TrimRight(head, "\r\n")
	n, err := strconv.Atoi(strings.TrimPrefix(head, "$"))
	if !strings.HasPrefix(head, "$") || err != nil || n < 0 {
		return "", fmt.Errorf("%s answered %q", command, head)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return "", fmt.Errorf("reading the reply to %s: %w", command, err)
	}
	return string(body), nil
}

// redisCLIBin finds redis-cli (Debian's redis-tools), installing it with
// apt-get when we are root, as redis-server is.
func redisCLIBin() (string, error) {
	if path, err := exec.LookPath("redis-cli"); err == nil {
		return path, nil
	}
	if err := ensurePackages("redis-cli (to create the cluster)", []string{"/usr/bin/redis-cli"}, "redis-tools"); err != nil {
		return "", err
	}
	return "/usr/bin/redis-cli", nil
}
