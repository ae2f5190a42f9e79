#!/usr/bin/env bash
# The message row's statements on variants of its schema, with pgbench, outside the bench: 20,000
# enqueues (a business row and the unkeyed enqueue's insert, 4 clients), then the relay's claim and
# delivered update until none is left (20 a statement, 1 client), each variant in turn on a fresh
# copy, with pg_stat_statements' time a call. Run on the private cluster of statements.sh (port 5499).
# Variants: wide (the migrations as they are), narrow (the request in a table of its own, written in
# the enqueue's statement and joined in the claim; the state row keeps every index), pending (the
# migrations with the unfinished index on PENDING rows only).
# Usage: statements.sh start; row-variants.sh [ROUNDS] [VARIANTS...]; statements.sh stop
set -euo pipefail
ROUNDS=${1:-3}; shift || true
VARIANTS=${*:-wide narrow pending}
HERE=$(cd "$(dirname "$0")" && pwd)
M=$HERE/../../retry-outbox-autoconfigure/src/main/resources/io/retryoutbox/db/migration/postgresql
PB=/usr/lib/postgresql/15/bin/pgbench
psql_() { psql -h 127.0.0.1 -p 5499 -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# A time-ordered id, as the starter's, made by the server for every variant alike.
ID="(lpad(to_hex((extract(epoch from clock_timestamp()) * 1e6)::bigint), 16, '0')
	|| lpad(to_hex((random() * 1e15)::bigint), 16, '0'))::uuid"
BODY="convert_to(repeat('x', 200), 'UTF8')"
SETTINGS="SELECT set_config('plan_cache_mode', 'force_generic_plan', true),
	set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true);"
DUE="SELECT x.id FROM retry_outbox_message x WHERE x.status = 'PENDING' AND x.is_head AND x.destination = 'sink'
	AND x.next_attempt_at <= now() ORDER BY x.next_attempt_at LIMIT 20 FOR UPDATE SKIP LOCKED"
LEASE="status = 'IN_FLIGHT', lease_owner = 'bench', lease_until = now() + interval '60 seconds',
	attempts = m.attempts + 1, last_attempt_at = now()"
DONE="BEGIN;
$SETTINGS
UPDATE retry_outbox_message SET status = 'DELIVERED', delivered_at = now(), lease_owner = NULL, lease_until = NULL,
	last_status_code = 200
WHERE id = ANY (ARRAY(SELECT id FROM retry_outbox_message WHERE status = 'IN_FLIGHT' ORDER BY lease_until LIMIT 20))
	AND status = 'IN_FLIGHT';
COMMIT;"

for v in $VARIANTS; do
  psql_ -d postgres -c "drop database if exists rv_$v" -c "create database rv_$v" 2> /dev/null
  case $v in
    wide|pending)
      for f in $(ls "$M"/V*.sql | sort -V); do psql_ -d "rv_$v" -f "$f"; done
      [ "$v" = pending ] && psql_ -d "rv_$v" -c "drop index retry_outbox_message_unfinished_idx" \
        -c "create index retry_outbox_message_unfinished_idx on retry_outbox_message (created_at)
            include (status, destination) where status = 'PENDING'"
      cat > "$WORK/enqueue-$v.sql" <<SQL
\set b random(1, 1000000000)
BEGIN;
INSERT INTO bench_business (v) VALUES ('order-' || :b);
WITH v AS MATERIALIZED (SELECT $ID AS id)
INSERT INTO retry_outbox_message (id, destination, method, path, headers, body, content_type, ordering_key,
	idempotency_key, trace_parent, trace_state)
SELECT v.id, 'sink', 'POST', '/msg', '{}'::jsonb, $BODY, 'application/json', NULL, v.id::text, NULL, NULL FROM v;
COMMIT;
SQL
      CLAIMED="RETURNING m.id, m.body) SELECT count(*), sum(length(body)) FROM c;" ;;
    narrow)
      # The message table's state and indexes as migrated (V1 to V10), without the request's columns.
      psql_ -d "rv_$v" <<'SQL'
CREATE TABLE retry_outbox_request (id uuid PRIMARY KEY, method text NOT NULL, path text NOT NULL,
	headers jsonb NOT NULL DEFAULT '{}', body bytea, content_type text, idempotency_key text NOT NULL,
	trace_parent text, trace_state text);
CREATE TABLE retry_outbox_message (id uuid PRIMARY KEY, seq bigint GENERATED ALWAYS AS IDENTITY,
	destination text NOT NULL, ordering_key text,
	status text NOT NULL DEFAULT 'PENDING' CONSTRAINT retry_outbox_message_status_check
		CHECK (status = ANY ('{PENDING,IN_FLIGHT,DELIVERED,DEAD}'::text[])),
	attempts integer NOT NULL DEFAULT 0, next_attempt_at timestamptz NOT NULL DEFAULT now(),
	created_at timestamptz NOT NULL DEFAULT now(), last_attempt_at timestamptz, last_status_code integer,
	last_error_code text, last_error text, dead_reason text, lease_owner text, lease_until timestamptz,
	delivered_at timestamptz, is_head boolean NOT NULL DEFAULT true, holds_key boolean NOT NULL DEFAULT false,
	releasing boolean NOT NULL DEFAULT false, new_arrival boolean NOT NULL DEFAULT false);
CREATE INDEX ON retry_outbox_message (ordering_key, seq) WHERE new_arrival;
CREATE INDEX ON retry_outbox_message (created_at) WHERE status = 'DEAD';
CREATE INDEX ON retry_outbox_message (delivered_at) WHERE status = 'DELIVERED';
CREATE INDEX ON retry_outbox_message (destination, next_attempt_at) WHERE status = 'PENDING' AND is_head;
CREATE INDEX ON retry_outbox_message (ordering_key) WHERE is_head AND holds_key;
CREATE INDEX ON retry_outbox_message (lease_until) WHERE status = 'IN_FLIGHT';
CREATE INDEX ON retry_outbox_message (ordering_key) WHERE releasing;
CREATE INDEX ON retry_outbox_message (ordering_key, seq) WHERE status = 'PENDING' AND NOT is_head AND NOT new_arrival;
CREATE INDEX ON retry_outbox_message (created_at) INCLUDE (status, destination) WHERE status IN ('PENDING', 'IN_FLIGHT');
SQL
      cat > "$WORK/enqueue-$v.sql" <<SQL
\set b random(1, 1000000000)
BEGIN;
INSERT INTO bench_business (v) VALUES ('order-' || :b);
WITH v AS MATERIALIZED (SELECT $ID AS id), r AS (
	INSERT INTO retry_outbox_request (id, method, path, headers, body, content_type, idempotency_key, trace_parent,
		trace_state)
	SELECT v.id, 'POST', '/msg', '{}'::jsonb, $BODY, 'application/json', v.id::text, NULL, NULL FROM v)
INSERT INTO retry_outbox_message (id, destination, ordering_key) SELECT v.id, 'sink', NULL FROM v;
COMMIT;
SQL
      CLAIMED="RETURNING m.id) SELECT count(*), sum(length(r.body)) FROM c JOIN retry_outbox_request r ON r.id = c.id;" ;;
    *) echo "unknown variant $v" >&2; exit 2 ;;
  esac
  psql_ -d "rv_$v" -c "create extension if not exists pg_stat_statements" \
    -c "create table bench_business (id bigserial primary key, v text)"
  printf '%s\n' "BEGIN;" "$SETTINGS" "WITH c AS (UPDATE retry_outbox_message m SET $LEASE" \
    "WHERE m.id = ANY (ARRAY($DUE))" "$CLAIMED" "COMMIT;" "$DONE" > "$WORK/relay-$v.sql"
done

for round in $(seq "$ROUNDS"); do
  for v in $VARIANTS; do
    tables="bench_business, retry_outbox_message"
    if [ "$v" = narrow ]; then tables="$tables, retry_outbox_request"; fi
    psql_ -d "rv_$v" -c "truncate $tables"
    psql_ -d "rv_$v" -c checkpoint -c "select pg_stat_statements_reset()" > /dev/null
    enqueue=$($PB -h 127.0.0.1 -p 5499 -U postgres -n -M prepared -c 4 -j 2 -t 5000 -f "$WORK/enqueue-$v.sql" "rv_$v" \
      | grep -o 'tps = [0-9]*' | cut -d' ' -f3)
    relay=$($PB -h 127.0.0.1 -p 5499 -U postgres -n -M prepared -c 1 -j 1 -t 1000 -f "$WORK/relay-$v.sql" "rv_$v" \
      | grep -o 'tps = [0-9]*' | cut -d' ' -f3)
    left=$(psql_ -d "rv_$v" -c "select count(*) from retry_outbox_message where status <> 'DELIVERED'")
    times=$(psql_ -d "rv_$v" -c "select string_agg(
        case when query ~ '^WITH v' then 'enqueue' when query ~ '^WITH c' then 'claim/20'
             when query ~ '^UPDATE' then 'delivered/20' end || ' ' || round((total_exec_time / calls * 1000)::numeric, 1) || ' us',
        ', ' order by query)
      from pg_stat_statements where query ~ '^(WITH|UPDATE)'")
    echo "round $round $v: enqueue $enqueue tx/s, relay $relay tx/s (20 messages each), not delivered $left; $times"
  done
done
