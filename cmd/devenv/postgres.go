package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	pgplatform "github.com/clinic/booking/internal/platform/postgres"
)

// postgres manages a throwaway PostgreSQL 15 cluster for one repository.
//
// The cluster normally lives in <repo>/.data/pg. As root, the server runs as
// the postgres user; if that user cannot reach .data/ (a clone under /root,
// mode 700), the cluster goes to /var/tmp and .data/pg becomes a symlink to
// it, so the user's directories never need their modes changed.
type postgres struct {
	root string // repository root
	data string // <repo>/.data

	binDir string // see bin; found on first use
}

// bin returns the directory of the server binaries, looked up once.
func (p *postgres) bin() (string, error) {
	if p.binDir == "" {
		dir, err := pgplatform.ServerBinDir()
		if err != nil {
			return "", err
		}
		p.binDir = dir
	}
	return p.binDir, nil
}

// client finds psql or createdb: next to the server binaries, else on PATH.
func (p *postgres) client(name string) string {
	if dir, err := p.bin(); err == nil && isExecutable(filepath.Join(dir, name)) {
		return filepath.Join(dir, name)
	}
	return name // exec looks it up in PATH, and says so if it is missing
}

func (p *postgres) addr() string { return fmt.Sprintf("%s:%d", pgHost, pgPort) }

// serverOptions are passed to postgres on every start. fsync and friends are
// off: this cluster holds nothing that cannot be recreated, and tests run
// much faster. Unix sockets are off: everything connects over TCP, and a
// socket path under a deep clone could pass the 107-byte limit.
var serverOptions = []string{
	"-c listen_addresses=" + pgHost,
	"-c port=" + strconv.Itoa(pgPort),
	"-c unix_socket_directories=''",
	"-c max_connections=300",
	"-c fsync=off",
	"-c synchronous_commit=off",
	"-c full_page_writes=off",
}

// cluster is where a cluster's files are; dir may not exist yet.
type cluster struct {
	dir string // the data directory pg_ctl -D gets (symlink resolved)
	log string // the server log pg_ctl -l gets
}

func (c cluster) initialized() bool {
	_, err := os.Stat(filepath.Join(c.dir, "PG_VERSION"))
	return err == nil
}

// owner is who runs the server commands: postgres when we are root, else us.
// Only up creates the postgres user; without it nothing of ours can be running.
func (p *postgres) owner(create bool) (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	return postgresAccount(create)
}

func (p *postgres) up() error {
	owner, err := p.owner(true)
	if err != nil {
		return err
	}
	c := p.locate()
	if c.initialized() && p.running(owner, c) {
		logf("PostgreSQL already running on %s (cluster %s)", p.addr(), c.dir)
		return p.createDatabases()
	}
	if listening(p.addr()) {
		if err := p.ping(); err != nil {
			return fmt.Errorf("port %d is taken by something that does not answer as PostgreSQL user postgres: %w", pgPort, err)
		}
		logf("a PostgreSQL server not started from this repository already listens on %s; using it", p.addr())
		return p.createDatabases()
	}

	bin, err := p.bin()
	if err != nil {
		return err
	}
	c, err = p.prepare(owner)
	if err != nil {
		return err
	}
	if !c.initialized() {
		logf("creating a PostgreSQL cluster in %s", c.dir)
		initdb := owner.command(filepath.Join(bin, "initdb"), "-D", c.dir,
			"--auth=trust", "--username=postgres", "--encoding=UTF8", "--locale=C", "--no-instructions")
		if err := quiet(initdb); err != nil {
			return fmt.Errorf("initdb: %w", err)
		}
	}

	logf("starting PostgreSQL on %s (log %s)", p.addr(), c.log)
	start := owner.command(filepath.Join(bin, "pg_ctl"), "-D", c.dir, "-l", c.log,
		"-w", "-t", "60", "-o", strings.Join(serverOptions, " "), "start")
	if err := quiet(start); err != nil {
		return fmt.Errorf("starting: %w\nlast lines of %s:\n%s", err, c.log, tail(c.log, 20))
	}
	return p.createDatabases()
}

func (p *postgres) down() error {
	c := p.locate()
	if !c.initialized() {
		logf("PostgreSQL: no cluster in %s, nothing to stop", c.dir)
		return nil
	}
	owner, err := p.owner(false)
	if err != nil {
		return err
	}
	if !p.running(owner, c) {
		logf("PostgreSQL is not running (cluster %s)", c.dir)
		return nil
	}
	bin, err := p.bin()
	if err != nil {
		return err
	}
	stop := owner.command(filepath.Join(bin, "pg_ctl"), "-D", c.dir, "-m", "fast", "-w", "-t", "60", "stop")
	if err := quiet(stop); err != nil {
		return fmt.Errorf("stopping: %w", err)
	}
	logf("stopped PostgreSQL (cluster %s)", c.dir)
	return nil
}

func (p *postgres) status() string {
	c := p.locate()
	where := c.dir
	if link := filepath.Join(p.data, "pg"); link != c.dir {
		where = link + " -> " + c.dir
	}
	// Without a postgres user (as root) nothing of ours can be running, and
	// pg_ctl run as root says so by failing.
	owner, _ := p.owner(false)
	switch {
	case c.initialized() && p.running(owner, c):
		return fmt.Sprintf("PostgreSQL: running on %s (cluster %s)", p.addr(), where)
	case listening(p.addr()):
		return fmt.Sprintf("PostgreSQL: something not started from this repository listens on %s", p.addr())
	case c.initialized():
		return fmt.Sprintf("PostgreSQL: stopped (cluster %s)", where)
	default:
		return fmt.Sprintf("PostgreSQL: not running, no cluster yet (would be %s)", where)
	}
}

// running asks pg_ctl whether this cluster's server is up. pg_ctl will not
// run as root, hence the owner.
func (p *postgres) running(owner *account, c cluster) bool {
	bin, err := p.bin()
	if err != nil {
		return false
	}
	return owner.command(filepath.Join(bin, "pg_ctl"), "-D", c.dir, "status").Run() == nil
}

// locate says where the cluster is, following the .data/pg symlink that the
// root fallback leaves.
func (p *postgres) locate() cluster {
	link := filepath.Join(p.data, "pg")
	if target, err := os.Readlink(link); err == nil {
		if !filepath.IsAbs(target) {
			target = filepath.Join(p.data, target)
		}
		return cluster{dir: target, log: filepath.Join(filepath.Dir(target), "pg.log")}
	}
	return cluster{dir: link, log: filepath.Join(p.data, "pg.log")}
}

// prepare creates the cluster directory and log file, owned by owner, in a
// place owner can reach.
func (p *postgres) prepare(owner *account) (cluster, error) {
	c := p.locate()
	link := filepath.Join(p.data, "pg")

	if c.dir != link { // already moved out by an earlier run
		return c, p.makeFallback(owner, filepath.Dir(c.dir))
	}

	_, statErr := os.Stat(c.dir)
	fresh := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return c, fmt.Errorf("creating %s: %w", c.dir, err)
	}
	if !c.initialized() {
		if err := owner.chown(c.dir); err != nil {
			return c, err
		}
	}
	if !owner.canWrite(c.dir) {
		if !fresh {
			return c, fmt.Errorf("the %s user cannot reach %s (a parent directory is closed to it): "+
				"remove it and run up again, and the cluster will be put under /var/tmp instead", owner.name, c.dir)
		}
		if err := os.Remove(c.dir); err != nil {
			return c, fmt.Errorf("removing %s: %w", c.dir, err)
		}
		return p.moveOut(owner)
	}
	if err := touch(c.log, owner); err != nil {
		return c, err
	}
	return c, nil
}

// moveOut puts a new cluster under /var/tmp/clinic-booking-pg-<hash of the
// repository path> and links .data/pg (and .data/pg.log) to it.
func (p *postgres) moveOut(owner *account) (cluster, error) {
	sum := sha256.Sum256([]byte(p.root))
	base := "/var/tmp/clinic-booking-pg-" + hex.EncodeToString(sum[:4])
	c := cluster{dir: filepath.Join(base, "data"), log: filepath.Join(base, "pg.log")}
	logf("the %s user cannot reach %s (a parent directory is closed to it, e.g. /root is mode 700); "+
		"putting the cluster in %s and linking .data/pg to it", owner.name, p.data, c.dir)

	if err := p.makeFallback(owner, base); err != nil {
		return c, err
	}
	for link, target := range map[string]string{
		filepath.Join(p.data, "pg"):     c.dir,
		filepath.Join(p.data, "pg.log"): c.log,
	} {
		if fi, err := os.Lstat(link); err == nil && !fi.IsDir() {
			os.Remove(link) // an old log, or a stale link
		}
		if err := os.Symlink(target, link); err != nil {
			return c, fmt.Errorf("linking %s to %s: %w", link, target, err)
		}
	}
	return c, nil
}

// makeFallback creates base and base/data owned by owner. /var/tmp is
// world-writable, so an existing base must be a real directory of owner's,
// not something another user planted.
func (p *postgres) makeFallback(owner *account, base string) error {
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating %s: %w", base, err)
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return fmt.Errorf("checking %s: %w", base, err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	wantUID := uint32(os.Geteuid())
	if !fi.IsDir() || st == nil || (st.Uid != wantUID && (owner == nil || st.Uid != owner.uid)) {
		return fmt.Errorf("%s exists but is not a directory owned by us or postgres: remove it", base)
	}
	if err := owner.chown(base); err != nil {
		return err
	}
	dir := filepath.Join(base, "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err != nil {
		return owner.chown(dir)
	}
	return nil
}

// createDatabases creates the databases the server and tests use, if missing.
func (p *postgres) createDatabases() error {
	for _, db := range databases {
		exists, err := p.query(fmt.Sprintf("SELECT 1 FROM pg_database WHERE datname = '%s'", db))
		if err != nil {
			return err
		}
		if exists == "1" {
			continue
		}
		createdb := (*account)(nil).command(p.client("createdb"),
			"-h", pgHost, "-p", strconv.Itoa(pgPort), "-U", "postgres", db)
		if err := quiet(createdb); err != nil {
			// Lost a race with another up (a different clone sharing the server)?
			if again, _ := p.query(fmt.Sprintf("SELECT 1 FROM pg_database WHERE datname = '%s'", db)); again == "1" {
				continue
			}
			return fmt.Errorf("creating database %s: %w", db, err)
		}
		logf("created database %s", db)
	}
	return nil
}

func (p *postgres) ping() error {
	_, err := p.query("SELECT 1")
	return err
}

// query runs one SQL statement as postgres over TCP and returns its bare
// output. psql is a client: it runs as us, root or not.
func (p *postgres) query(sql string) (string, error) {
	psql := (*account)(nil).command(p.client("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-h", pgHost, "-p", strconv.Itoa(pgPort), "-U", "postgres", "-d", "postgres", "-tAc", sql)
	return output(psql)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// touch makes sure path exists and belongs to owner, so pg_ctl, running as
// owner, can append to it inside a directory owner cannot write.
func touch(path string, owner *account) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	f.Close()
	return owner.chown(path)
}
