package postgres_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// How each table would be placed on a PostgreSQL distributed by clinic
// (Citus): docs/scaling.md gives the reasons. A new table must be placed
// here, and docs/scaling.md must name it.
var (
	// Split by clinic_id, each clinic's rows on one node.
	distributedTables = []string{
		"access_records", "appointment_type_specialists", "appointment_types", "audit_log",
		"booking_links", "bookings", "closures", "erasures", "idempotency_keys", "kiosk_tokens",
		"messages", "outbox_copies", "overrides", "specialists", "waitlist_entries",
		"waitlist_links", "waitlist_offers", "waitlist_openings", "weekly_hours",
		"resources", "resource_hours", "resource_closures", "appointment_type_resources",
	}
	// Copied whole to every node: small, read by every clinic's queries or
	// found without a clinic (a staff member signs in by e-mail alone).
	referenceTables = []string{
		"clinics", "server_secrets", "staff_recovery_codes", "staff_second_factors",
		"staff_sessions", "staff_signin_links", "staff_users", "calendar_feeds",
	}
	// Kept on the coordinator only: found by a cookie's token, or the job
	// queue's own tables (locks, LISTEN/NOTIFY, SKIP LOCKED).
	localTables = []string{
		"goose_db_version", "river_job", "river_leader", "river_migration",
		"river_notification", "river_queue", "sessions",
	}
)

// Every key a distributed table has names clinic_id: primary keys, unique
// constraints and unique indexes, exclusion constraints, and foreign keys
// between distributed tables (on both sides). A reference table refers to
// no distributed one. A migration that breaks either fails here.
func TestKeysOfDistributedTablesIncludeTheClinic(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	ctx := context.Background()

	rows, err := pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	placed := slices.Concat(distributedTables, referenceTables, localTables)
	for _, name := range tables {
		if !slices.Contains(placed, name) {
			t.Errorf("table %s is not placed: add it to distributedTables, referenceTables or localTables, and to docs/scaling.md", name)
		}
	}
	for _, name := range placed {
		if !slices.Contains(tables, name) {
			t.Errorf("table %s is placed but does not exist", name)
		}
	}

	checked := checkConstraints(t, ctx, pool) + checkUniqueIndexes(t, ctx, pool)
	if checked < 40 {
		t.Errorf("only %d keys of distributed tables checked: the queries find too little", checked)
	}

	doc, err := os.ReadFile("../../../docs/scaling.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range placed {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/scaling.md does not name table `%s`", name)
		}
	}
}

// checkConstraints reports each primary, unique, exclusion and foreign key
// of a distributed table that leaves out clinic_id, and a reference table's
// foreign key to a distributed one; it returns how many keys it checked.
func checkConstraints(t *testing.T, ctx context.Context, pool *pgxpool.Pool) int {
	t.Helper()
	// Constraints: the columns of the key, and for a foreign key the
	// referenced table and columns.
	rows, err := pool.Query(ctx, `
		SELECT c.conname, c.contype::text, c.conrelid::regclass::text,
		       ARRAY(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)),
		       coalesce(c.confrelid::regclass::text, ''),
		       ARRAY(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.confrelid AND a.attnum = ANY(c.confkey))
		FROM pg_constraint c
		WHERE c.connamespace = 'public'::regnamespace AND c.contype IN ('p', 'u', 'x', 'f')`)
	if err != nil {
		t.Fatal(err)
	}
	type constraint struct {
		Name, Type, Table string
		Columns           []string
		RefTable          string
		RefColumns        []string
	}
	cons, err := pgx.CollectRows(rows, pgx.RowToStructByPos[constraint])
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range cons {
		distributed := slices.Contains(distributedTables, c.Table)
		switch {
		case c.Type == "f" && slices.Contains(referenceTables, c.Table) && slices.Contains(distributedTables, c.RefTable):
			t.Errorf("%s: reference table %s refers to distributed table %s", c.Name, c.Table, c.RefTable)
		case !distributed:
		case c.Type == "f" && slices.Contains(distributedTables, c.RefTable):
			checked++
			if !slices.Contains(c.Columns, "clinic_id") || !slices.Contains(c.RefColumns, "clinic_id") {
				t.Errorf("%s on %s: foreign key (%s) -> %s (%s) without clinic_id on both sides",
					c.Name, c.Table, strings.Join(c.Columns, ", "), c.RefTable, strings.Join(c.RefColumns, ", "))
			}
		case c.Type == "f":
		default:
			checked++
			if !slices.Contains(c.Columns, "clinic_id") {
				t.Errorf("%s on %s: key (%s) without clinic_id", c.Name, c.Table, strings.Join(c.Columns, ", "))
			}
		}
	}
	return checked
}

// checkUniqueIndexes reports each unique index of a distributed table made
// without a constraint (partial ones, on expressions) that leaves out
// clinic_id; it returns how many it checked.
func checkUniqueIndexes(t *testing.T, ctx context.Context, pool *pgxpool.Pool) int {
	t.Helper()
	checked := 0
	// Unique indexes made without a constraint (partial ones, on
	// expressions).
	rows, err := pool.Query(ctx, `
		SELECT i.indexrelid::regclass::text, i.indrelid::regclass::text,
		       ARRAY(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey))
		FROM pg_index i
		JOIN pg_class t ON t.oid = i.indrelid
		WHERE t.relnamespace = 'public'::regnamespace AND i.indisunique
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`)
	if err != nil {
		t.Fatal(err)
	}
	type index struct {
		Name, Table string
		Columns     []string
	}
	idx, err := pgx.CollectRows(rows, pgx.RowToStructByPos[index])
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range idx {
		if !slices.Contains(distributedTables, i.Table) {
			continue
		}
		checked++
		if !slices.Contains(i.Columns, "clinic_id") {
			t.Errorf("unique index %s on %s: (%s) without clinic_id", i.Name, i.Table, strings.Join(i.Columns, ", "))
		}
	}
	return checked
}

// A link takes its clinic from the row it opens; a link to a booking or a
// waitlist place that does not exist is an error, never a link silently
// left out (it would reach a patient as a page that says "not found").
func TestLinkToAMissingRowIsRefused(t *testing.T) {
	t.Parallel()
	q := db.New(testkit.DB(t))
	ctx := context.Background()
	if err := q.BookingLinkAdd(ctx, db.BookingLinkAddParams{TokenHash: []byte(uuid.NewString()), BookingID: uuid.New()}); err == nil {
		t.Error("a link to a booking that does not exist was accepted")
	}
	if err := q.WaitlistLinkAdd(ctx, db.WaitlistLinkAddParams{TokenHash: []byte(uuid.NewString()), EntryID: uuid.New()}); err == nil {
		t.Error("a link to a waitlist place that does not exist was accepted")
	}
}
