#!/usr/bin/env bash
# Point-in-time recovery, tried: a PostgreSQL of its own archives its WAL
# to a folder; the demo clinic gets 10,000 bookings; a base backup; 1,000
# more bookings; the target time; a mistaken update of every booking; then
# the base backup is restored on a second instance up to the target, and
# must hold the 11,000 bookings and none of the mistake. Prints the time
# and size of each step; exits non-zero when the restore is wrong.
#
# Needs PostgreSQL 15's server binaries (Debian's postgresql-15) and
# bin/clinic (make build). As root, the instances run as the postgres
# user. Ports: PITR_PORT and PITR_PORT+1 (default 54491, 54492).
set -euo pipefail

PG=${PG_BIN:-/usr/lib/postgresql/15/bin}
PORT=${PITR_PORT:-54491}
RPORT=$((PORT + 1))
CLINIC=$(realpath "${CLINIC_BIN:-bin/clinic}")
if [ ! -x "$PG/initdb" ]; then
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y -q postgresql-15 >/dev/null
	else
		echo "no $PG/initdb: run: sudo apt-get install postgresql-15"
		exit 1
	fi
fi
[ -x "$CLINIC" ] || { echo "no $CLINIC: make build"; exit 1; }

B=$(mktemp -d /var/tmp/clinic-pitr-XXXXXX)
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$B"
cleanup() {
	as_pg "$PG/pg_ctl -D $B/restore -m immediate stop" >/dev/null 2>&1 || true
	as_pg "$PG/pg_ctl -D $B/primary -m immediate stop" >/dev/null 2>&1 || true
	rm -rf "$B"
}
trap cleanup EXIT
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

as_pg "mkdir $B/wal && $PG/initdb -D $B/primary -U postgres --auth=trust" >/dev/null
cat >> "$B/primary/postgresql.conf" <<CONF
port = $PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$B'
wal_level = replica
archive_mode = on
archive_command = 'test ! -f $B/wal/%f && cp %p $B/wal/%f'
CONF
as_pg "$PG/pg_ctl -D $B/primary -l $B/primary.log -w start" >/dev/null
P="postgres://postgres@127.0.0.1:$PORT"
psql -q "$P/postgres" -c "CREATE DATABASE clinic"
DATABASE_URL="$P/clinic?sslmode=disable" "$CLINIC" seed >/dev/null 2>&1

book() { # first, count, name: one specialist's bookings, 30 minutes apart
	psql -q "$P/clinic" -c "INSERT INTO bookings (clinic_id, appointment_type_id, specialist_id, slot_start, slot_end, patient_name, patient_email)
	SELECT c.id, (SELECT id FROM appointment_types WHERE clinic_id = c.id ORDER BY id LIMIT 1),
	       (SELECT id FROM specialists WHERE clinic_id = c.id ORDER BY id LIMIT 1),
	       timestamptz '2027-01-04 08:00Z' + i * interval '30 minutes', timestamptz '2027-01-04 08:30Z' + i * interval '30 minutes',
	       '$3 ' || i, 'p' || i || '@example.org'
	FROM generate_series($1, $1 + $2 - 1) i, clinics c WHERE c.slug = 'demo'"
}
book 0 10000 Patient

t=$(date +%s%N)
as_pg "$PG/pg_basebackup -d '$P/postgres' -D $B/base -X stream -c fast"
echo "pg_basebackup -X stream -c fast: $(ms "$t") ms, $(du -sh "$B/base" | cut -f1)"
book 10000 1000 Later
target=$(psql -At "$P/postgres" -c "SELECT now()")
sleep 1
psql -q "$P/clinic" -c "UPDATE bookings SET patient_name = 'oops'" # the mistake
psql -q "$P/postgres" -c "SELECT pg_switch_wal()" >/dev/null
until [ -z "$(find "$B/primary/pg_wal/archive_status" -name '*.ready')" ]; do sleep 0.1; done
echo "WAL archived: $(find "$B/wal" -type f | wc -l) segments, $(du -sh "$B/wal" | cut -f1); target $target"
as_pg "$PG/pg_ctl -D $B/primary -w stop" >/dev/null

t=$(date +%s%N)
as_pg "cp -a $B/base $B/restore && touch $B/restore/recovery.signal"
cat >> "$B/restore/postgresql.conf" <<CONF
port = $RPORT
archive_mode = off
restore_command = 'cp $B/wal/%f %p'
recovery_target_time = '$target'
recovery_target_action = 'promote'
CONF
as_pg "$PG/pg_ctl -D $B/restore -l $B/restore.log -w start" >/dev/null
R="postgres://postgres@127.0.0.1:$RPORT"
until [ "$(psql -At "$R/postgres" -c 'SELECT pg_is_in_recovery()' 2>/dev/null)" = f ]; do sleep 0.1; done
echo "restore to the target (copy, replay, promote): $(ms "$t") ms"
grep -E "recovery stopping" "$B/restore.log" | sed 's/^.*LOG: */PostgreSQL: /' || true

got=$(psql -At "$R/clinic" -c "SELECT count(*) || ' ' || count(*) FILTER (WHERE patient_name LIKE 'Later %') || ' ' || count(*) FILTER (WHERE patient_name = 'oops') FROM bookings")
echo "restored: bookings, made after the base backup, named by the mistake: $got"
[ "$got" = "11000 1000 0" ] || { echo "FAIL: want 11000 1000 0"; exit 1; }
echo "ok"
