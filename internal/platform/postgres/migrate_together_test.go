package postgres_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/migrations"
)

// Three instances start together, as a deployment of three servers does:
// each migrates before it serves. The locks let one apply the pending
// migrations while the others wait and find nothing left, so all three
// start, and each migration is applied once: on an empty database, and on
// one a release behind (an upgrade), where without the locks the three
// apply the same migrations at once and all but one fail.
func TestThreeInstancesMigrateTogether(t *testing.T) {
	ctx := context.Background()
	url := testkit.FreshDB(t)
	pools := make([]*pgxpool.Pool, 3)
	for i := range pools {
		pool, err := postgres.Connect(ctx, url, 4, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		pools[i] = pool
	}
	startTogether := func(t *testing.T) {
		t.Helper()
		errs := testkit.Race(len(pools), func(i int) error { return postgres.Migrate(ctx, pools[i], nil) })
		for i, err := range errs {
			if err != nil {
				t.Errorf("instance %d: %v", i, err)
			}
		}
		wantAppliedOnce(t, pools[0])
	}

	t.Run("EmptyDatabase", startTogether)
	t.Run("OneReleaseBehind", func(t *testing.T) {
		p, err := postgres.NewMigrator(pools[0], nil)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := p.DownTo(ctx, 10); err != nil {
			t.Fatal(err)
		}
		if err := postgres.ResetQueue(ctx, pools[0]); err != nil {
			t.Fatal(err)
		}
		startTogether(t)
	})
}

// wantAppliedOnce checks the version tables: every migration of ours and
// of the job queue applied, each once.
func wantAppliedOnce(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v %v", files, err)
	}
	// goose adds a row per migration applied and one per migration rolled
	// back: the latest row of each version says where it stands.
	var applied, rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE is_applied), count(*) FROM (
		SELECT DISTINCT ON (version_id) version_id, is_applied FROM goose_db_version
		WHERE version_id > 0 ORDER BY version_id, id DESC) latest`).Scan(&applied, &rows); err != nil {
		t.Fatal(err)
	}
	if applied != len(files) || rows != len(files) {
		t.Errorf("goose_db_version: %d of %d versions applied, want all %d", applied, rows, len(files))
	}
	var ups, downs int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE is_applied), count(*) FILTER (WHERE NOT is_applied)
		FROM goose_db_version WHERE version_id > 0`).Scan(&ups, &downs); err != nil {
		t.Fatal(err)
	}
	if ups-downs != len(files) {
		t.Errorf("goose_db_version: %d applications and %d roll-backs, want each migration applied once more than rolled back", ups, downs)
	}
	var queueRows, queueVersions int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (line, version)) FROM river_migration`).Scan(&queueRows, &queueVersions); err != nil {
		t.Fatal(err)
	}
	if queueRows == 0 || queueRows != queueVersions {
		t.Errorf("river_migration: %d rows of %d versions, want each once", queueRows, queueVersions)
	}
}
