#!/usr/bin/env bash
# A private PostgreSQL 15 cluster with pg_stat_statements, for statement-level figures: the shared
# service does not load the extension, and loading it needs a restart.
# Usage: statements.sh start | log | report | stop   (port 5499; data in /tmp/retry-outbox-pgss)
#   log: from then on, every statement's parse, bind and execute, with its time and backend, in
#   /tmp/retry-outbox-pgss/log (emptied), for first-rounds.py
# Between start and report: PGPORT=5499 PRE="create extension pg_stat_statements" run-one.sh ...
set -euo pipefail
DATA=/tmp/retry-outbox-pgss PG=/usr/lib/postgresql/15/bin
case "${1:-}" in
  start)
    mkdir -p "$DATA" && chown postgres "$DATA"
    su postgres -c "$PG/initdb -D $DATA/data -A trust -U postgres" > /dev/null
    # The shared service's own settings, so that the figures compare.
    cat >> "$DATA/data/postgresql.conf" <<CONF
port = 5499
listen_addresses = '127.0.0.1'
unix_socket_directories = '/tmp'
autovacuum = off
shared_buffers = 128MB
max_wal_size = 1GB
min_wal_size = 80MB
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
CONF
    su postgres -c "$PG/pg_ctl -D $DATA/data -l $DATA/log -w start" > /dev/null ;;
  log)
    printf "log_min_duration_statement = 0\nlog_line_prefix = '%%m [%%p] '\n" >> "$DATA/data/postgresql.conf"
    su postgres -c "$PG/pg_ctl -D $DATA/data reload" > /dev/null
    : > "$DATA/log" ;;
  report)
    psql -h 127.0.0.1 -p 5499 -U postgres -d bench_prof -P pager=off \
      -c "select calls, round(total_exec_time::numeric) exec_ms, rows, shared_blks_hit hit, wal_records wal,
                 left(regexp_replace(query, '\s+', ' ', 'g'), 120) query
          from pg_stat_statements where dbid = (select oid from pg_database where datname = 'bench_prof')
          order by total_exec_time desc limit 25" \
      -c "select relname, indexrelname, idx_scan, idx_tup_read from pg_stat_user_indexes order by idx_scan desc" \
      -c "select relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del from pg_stat_user_tables" ;;
  stop)
    su postgres -c "$PG/pg_ctl -D $DATA/data -w stop" > /dev/null; rm -rf "$DATA" ;;
  *) echo "usage: $0 start | log | report | stop" >&2; exit 2 ;;
esac
