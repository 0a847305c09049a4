package web_test

// What the erasure tests read: a whole database as pg_dump writes it
// (bytes columns decoded, and the e-mails' base64 and quoted-printable
// parts too), every key and value of Redis, and a database restored
// from a dump.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"mime/quotedprintable"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/testkit"
)

// pgBin is where PostgreSQL 15's client programs are (PG_BIN overrides).
func pgBin(t testing.TB, name string) string {
	t.Helper()
	for _, dir := range []string{os.Getenv("PG_BIN"), "/usr/lib/postgresql/15/bin"} {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, name); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found (set PG_BIN)", name)
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// migratedDB is a new, migrated database of the test's own: its URL and a
// pool on it.
func migratedDB(t testing.TB) (string, *pgxpool.Pool) {
	t.Helper()
	url := testkit.FreshDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := postgres.Connect(ctx, url, 20, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.Migrate(ctx, pool, nil); err != nil {
		t.Fatal(err)
	}
	return url, pool
}

// pgDump runs pg_dump with args on the database at url and returns its output.
func pgDump(t testing.TB, url string, args ...string) []byte {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(pgBin(t, "pg_dump"), append(args, "--dbname="+url)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("pg_dump: %v: %s", err, errb.String())
	}
	return out.Bytes()
}

// restored is a new database with the custom-format dump restored into it.
func restored(t testing.TB, dump []byte) (string, *pgxpool.Pool) {
	t.Helper()
	url := testkit.FreshDB(t)
	file := filepath.Join(t.TempDir(), "backup.dump")
	if err := os.WriteFile(file, dump, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pgBin(t, "pg_restore"), "--no-owner", "--exit-on-error", "--dbname="+url, file).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_restore: %v: %s", err, out)
	}
	pool, err := postgres.Connect(context.Background(), url, 20, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return url, pool
}

var (
	hexBytes   = regexp.MustCompile(`\\\\x([0-9a-fA-F]+)`)
	base64Runs = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}={0,2}`)
)

// dataText is every row of the database at url as text: pg_dump's
// --data-only output, with every bytea value decoded, and the base64 and
// quoted-printable runs of all of it decoded too.
func dataText(t testing.TB, url string) string {
	t.Helper()
	dump := pgDump(t, url, "--data-only")
	parts := [][]byte{dump}
	for _, m := range hexBytes.FindAllSubmatch(dump, -1) {
		if b, err := hex.DecodeString(string(m[1])); err == nil {
			parts = append(parts, b)
		}
	}
	return decodedText(parts)
}

// decodedText is parts joined, with their base64 and quoted-printable
// encodings decoded and added.
func decodedText(parts [][]byte) string {
	var all bytes.Buffer
	for _, p := range parts {
		all.Write(p)
		all.WriteByte('\n')
		if qp, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(p))); err == nil {
			all.Write(qp)
			all.WriteByte('\n')
		}
		joined := strings.NewReplacer("\r\n", "", "\n", "").Replace(string(p))
		for _, run := range base64Runs.FindAllString(joined, -1) {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
				if b, err := enc.DecodeString(run); err == nil {
					all.Write(b)
					all.WriteByte('\n')
				}
			}
		}
	}
	return all.String()
}

// redisText is every key of the Redis rdb and every value, as text (on
// a Redis Cluster, every master's).
func redisText(t testing.TB, rdb redis.UniversalClient) string {
	t.Helper()
	ctx := context.Background()
	var parts [][]byte
	scan := func(ctx context.Context, node redis.UniversalClient) error {
		iter := node.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			parts = append(parts, []byte(iter.Val()))
			for _, v := range redisValues(ctx, rdb, iter.Val()) {
				parts = append(parts, []byte(v))
			}
		}
		return iter.Err()
	}
	var err error
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return scan(ctx, node)
		})
	} else {
		err = scan(ctx, rdb)
	}
	if err != nil {
		t.Fatalf("scan redis: %v", err)
	}
	return decodedText(parts)
}

// redisValues are the values of key, whatever its type.
func redisValues(ctx context.Context, rdb redis.UniversalClient, key string) []string {
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		return nil // gone meanwhile
	}
	switch typ {
	case "string":
		v, _ := rdb.Get(ctx, key).Result()
		return []string{v}
	case "hash":
		var vals []string
		for k, v := range rdb.HGetAll(ctx, key).Val() {
			vals = append(vals, k, v)
		}
		return vals
	case "set":
		return rdb.SMembers(ctx, key).Val()
	case "zset":
		return rdb.ZRange(ctx, key, 0, -1).Val()
	case "list":
		return rdb.LRange(ctx, key, 0, -1).Val()
	}
	dump, _ := rdb.Dump(ctx, key).Result()
	return []string{dump}
}

// traces are the needles of text found in haystack, case aside.
func traces(haystack string, needles ...string) []string {
	low := strings.ToLower(haystack)
	var found []string
	for _, n := range needles {
		if n != "" && strings.Contains(low, strings.ToLower(n)) {
			found = append(found, n)
		}
	}
	return found
}

// wantNoTrace fails when haystack (named what) holds any needle.
func wantNoTrace(t testing.TB, what, haystack string, needles ...string) {
	t.Helper()
	if found := traces(haystack, needles...); len(found) > 0 {
		t.Errorf("%s still holds %s", what, fmt.Sprint(found))
	}
}
