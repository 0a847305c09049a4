// Command devenv starts and stops the PostgreSQL and Redis that the server
// and its tests use on a developer machine and in CI.
//
//	go run ./cmd/devenv up [-print-env] [-browser] [-cluster] [-ha]
//	                                     start what is not running yet
//	                                     (-browser: also install Chromium;
//	                                     -cluster: a Redis Cluster instead
//	                                     of one Redis; -ha: a pg_auto_failover
//	                                     formation instead of one PostgreSQL)
//	go run ./cmd/devenv down [-cluster]  stop what this repository started
//	                                     (-cluster: only the Redis Cluster)
//	go run ./cmd/devenv env [-cluster] [-ha]
//	                                     print export lines for the URLs
//	go run ./cmd/devenv status           say what is running
//
// PostgreSQL (127.0.0.1:54320) is left alone when DATABASE_URL is set, Redis
// (127.0.0.1:63790, or the cluster's six nodes on 127.0.0.1:63801-63806:
// three masters, a replica each) when REDIS_URL is set. The pg_auto_failover
// formation of -ha (a monitor on 127.0.0.1:54361, a primary and a
// synchronous secondary on 54362 and 54363) is left alone when DATABASE_URL
// is set too. Their files live under
// <repo>/.data/. Progress goes to stderr; stdout carries only what env prints,
// so `eval "$(go run ./cmd/devenv up -print-env)"` works.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const (
	pgHost    = "127.0.0.1"
	pgPort    = 54320
	redisPort = 63790
)

// databases are created on the local cluster by up.
var databases = []string{"clinic", "clinic_test"}

const usage = `usage: devenv <command>

commands:
  up [-print-env] [-browser] [-cluster] [-ha]
                   start local PostgreSQL and Redis unless already running
                   (skipped when DATABASE_URL / REDIS_URL are set);
                   -print-env then prints what env prints; -browser also
                   installs Debian's chromium and a font for the browser
                   tests (as root; otherwise it says what to install);
                   -cluster starts a Redis Cluster of three masters and
                   three replicas on 127.0.0.1:63801-63806 instead of the
                   one Redis; -ha starts a pg_auto_failover formation
                   (installing Debian's postgresql-15-auto-failover as
                   root): a monitor on 127.0.0.1:54361, a primary and a
                   synchronous secondary on 54362-54363, and the URLs name
                   both nodes
  down [-cluster]  stop the PostgreSQL, Redis, Redis Cluster and
                   pg_auto_failover formation this repository started
                   (-cluster: only the Redis Cluster)
  env [-cluster] [-ha]
                   print export lines for DATABASE_URL, TEST_DATABASE_URL,
                   REDIS_URL and TEST_REDIS_URL (-cluster: the cluster's;
                   -ha: the formation's multi-host URLs)
  status           say what is running
`

var errUsage = errors.New("bad usage")

func main() {
	err := run(os.Args[1:], os.Stdout)
	if errors.Is(err, errUsage) {
		if err != errUsage {
			fmt.Fprintf(os.Stderr, "devenv: %v\n", err)
		}
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "devenv: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	name, args := args[0], args[1:]

	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	printEnv, browser, cluster, ha := false, false, false, false
	if name == "up" {
		flags.BoolVar(&printEnv, "print-env", false, "print the env lines after starting")
		flags.BoolVar(&browser, "browser", false, "install Chromium for the browser tests")
	}
	if name == "up" || name == "env" {
		flags.BoolVar(&cluster, "cluster", false, "a Redis Cluster instead of one Redis")
		flags.BoolVar(&ha, "ha", false, "a pg_auto_failover formation instead of one PostgreSQL")
	}
	if name == "down" {
		flags.BoolVar(&cluster, "cluster", false, "only the Redis Cluster")
	}
	if err := flags.Parse(args); err != nil {
		return fmt.Errorf("%s: %w (%w)", name, err, errUsage)
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q (%w)", name, flags.Arg(0), errUsage)
	}

	switch name {
	case "env":
		writeEnv(stdout, cluster, ha)
		return nil
	case "up", "down", "status":
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q (%w)", name, errUsage)
	}

	root, err := repoRoot()
	if err != nil {
		return err
	}
	data := filepath.Join(root, ".data")
	pg := &postgres{root: root, data: data}
	rd := &redis{dir: filepath.Join(data, "redis"), port: redisPort}
	rc := newRedisCluster(filepath.Join(data, "redis-cluster"))
	hf := newHAFormation(pg)

	switch name {
	case "up":
		redisUp := rd.up
		if cluster {
			redisUp = rc.up
		}
		pgUp := pg.up
		if ha {
			pgUp = hf.up
		}
		return up(data, pgUp, redisUp, browser, printEnv, cluster, ha, stdout)
	case "down":
		if cluster {
			return downCluster(data, rc)
		}
		return down(data, pg, rd, rc, hf)
	default: // status
		status(pg, rd, rc, hf, stdout)
		return nil
	}
}

// up starts what is not running (and not configured elsewhere), and
// prints the env lines with printEnv.
func up(data string, pgUp, redisUp func() error, browser, printEnv, cluster, ha bool, stdout io.Writer) error {
	if err := os.MkdirAll(data, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", data, err)
	}
	unlock, err := lock(data)
	if err != nil {
		return err
	}
	defer unlock()
	if os.Getenv("DATABASE_URL") == "" {
		if err := pgUp(); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
	} else {
		logf("DATABASE_URL is set: not starting local PostgreSQL")
	}
	if os.Getenv("REDIS_URL") == "" {
		if err := redisUp(); err != nil {
			return fmt.Errorf("redis: %w", err)
		}
	} else {
		logf("REDIS_URL is set: not starting local Redis")
	}
	if browser && os.Getenv("CLINIC_SKIP_BROWSER") == "" {
		if err := ensureBrowser(); err != nil {
			return fmt.Errorf("browser: %w", err)
		}
	}
	if printEnv {
		writeEnv(stdout, cluster, ha)
	}
	return nil
}

// down stops the local PostgreSQL, Redis, Redis Cluster and formation.
func down(data string, pg *postgres, rd *redis, rc *redisCluster, hf *haFormation) error {
	if _, err := os.Stat(data); errors.Is(err, os.ErrNotExist) {
		logf("nothing to stop: %s does not exist", data)
		return nil
	}
	unlock, err := lock(data)
	if err != nil {
		return err
	}
	defer unlock()
	// Stop each even if one fails, then report.
	errs := []error{wrap("postgres", pg.down()), wrap("redis", rd.down())}
	if _, err := os.Stat(rc.dir); err == nil {
		errs = append(errs, wrap("redis cluster", rc.down()))
	}
	errs = append(errs, wrap("pg_auto_failover", hf.down()))
	return errors.Join(errs...)
}

// downCluster stops the Redis Cluster this repository started, and
// nothing else.
func downCluster(data string, rc *redisCluster) error {
	if _, err := os.Stat(rc.dir); errors.Is(err, os.ErrNotExist) {
		logf("nothing to stop: no Redis Cluster in %s", rc.dir)
		return nil
	}
	unlock, err := lock(data)
	if err != nil {
		return err
	}
	defer unlock()
	return wrap("redis cluster", rc.down())
}

// status prints what runs, and which URLs point elsewhere.
func status(pg *postgres, rd *redis, rc *redisCluster, hf *haFormation, stdout io.Writer) {
	if os.Getenv("DATABASE_URL") != "" {
		fmt.Fprintln(stdout, "DATABASE_URL is set: the server and tests use it, not the local PostgreSQL")
	}
	fmt.Fprintln(stdout, pg.status())
	fmt.Fprintln(stdout, hf.status())
	if os.Getenv("REDIS_URL") != "" {
		fmt.Fprintln(stdout, "REDIS_URL is set: the server and tests use it, not the local Redis")
	}
	fmt.Fprintln(stdout, rd.status())
	fmt.Fprintln(stdout, rc.status())
}

// writeEnv prints one shell export per URL. Values the user set win; a test
// URL left unset follows its main URL when that was set by the user, so tests
// never silently talk to a different server than the one chosen. With
// cluster the Redis URLs default to the local cluster: the server and the
// tests share its one database, each test keeping to clinics of its own.
// With ha the PostgreSQL URLs name both nodes of the formation.
func writeEnv(w io.Writer, cluster, ha bool) {
	set := func(name, value string) {
		fmt.Fprintf(w, "export %s=%s\n", name, shellQuote(value))
	}
	pgURL := func(db string) string {
		return fmt.Sprintf("postgres://postgres@%s:%d/%s?sslmode=disable", pgHost, pgPort, db)
	}
	redisURL := func(db int) string {
		return fmt.Sprintf("redis://127.0.0.1:%d/%d", redisPort, db)
	}
	pair := func(mainName, testName, mainDefault, testDefault string) {
		mainURL, testURL := os.Getenv(mainName), os.Getenv(testName)
		if testURL == "" {
			testURL = testDefault
			if mainURL != "" {
				testURL = mainURL
			}
		}
		if mainURL == "" {
			mainURL = mainDefault
		}
		set(mainName, mainURL)
		set(testName, testURL)
	}
	if ha {
		pair("DATABASE_URL", "TEST_DATABASE_URL", haURL("clinic"), haURL("clinic_test"))
	} else {
		pair("DATABASE_URL", "TEST_DATABASE_URL", pgURL("clinic"), pgURL("clinic_test"))
	}
	if cluster {
		u := newRedisCluster("").url()
		pair("REDIS_URL", "TEST_REDIS_URL", u, u)
	} else {
		pair("REDIS_URL", "TEST_REDIS_URL", redisURL(0), redisURL(1))
	}
}

// shellQuote wraps s in single quotes for sh; a single quote inside s is
// closed, escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// repoRoot walks up from the working directory to the one holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the working directory: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or any parent: run devenv inside the repository", dir)
		}
	}
}

// lock serialises up and down within one repository, so two terminals (or a
// Makefile running targets in parallel) do not both run initdb.
func lock(data string) (unlock func(), err error) {
	path := filepath.Join(data, "devenv.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		logf("waiting for another devenv in this repository (%s)", path)
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
	}
	return func() { f.Close() }, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "devenv: "+format+"\n", args...)
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
