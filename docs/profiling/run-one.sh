#!/usr/bin/env bash
# One deliver run of a bench peer's jar on a fresh database, outside run.sh, for profiling.
# Usage: run-one.sh BENCH JAR LABEL LATENCY_MS [peer arguments...]
#   LATENCY_MS "cost" runs the bench's enqueue-cost mode instead (profile cost, the relay off: 500
#   transactions of each variant, then alternating rounds of the plain insert and the enqueue; e.g.
#   --bench.cost.tx=8000 for rounds four times as long) and prints its ratio.
# Env: PGPORT (5432), MESSAGES (20000), JOPTS (extra JVM options, e.g. an -agentpath), OUT (./out),
#      PRE (SQL run in the fresh database first, e.g. "create extension pg_stat_statements").
# Starts the bench's sink on 18080 if none answers there; stop it before a run.sh series, which
# starts its own on the same port.
set -uo pipefail
BENCH=$1 JAR=$2 LABEL=$3 LAT=$4; shift 4
PORT=${PGPORT:-5432} MESSAGES=${MESSAGES:-20000} OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
if ! curl -sf http://127.0.0.1:18080/stats > /dev/null; then
  # In a session of its own: the script must not wait for the sink, which outlives it.
  (cd "$BENCH" && setsid -f java -Xmx512m -jar sink/target/sink.jar 18080 > "$OUT/sink.log" 2>&1 < /dev/null)
  for _ in $(seq 50); do curl -sf http://127.0.0.1:18080/stats > /dev/null && break; sleep 0.2; done
fi
psql -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc "drop database if exists bench_prof with (force)" > /dev/null 2>&1
psql -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc "create database bench_prof" > /dev/null
if [ -n "${PRE:-}" ]; then psql -h 127.0.0.1 -p "$PORT" -U postgres -d bench_prof -qc "$PRE" > /dev/null; fi
if [ "$LAT" = cost ]; then
  MODE=(--bench.mode=cost --spring.profiles.active=cost)
else
  MODE=(--bench.mode=deliver --bench.sink-latency-ms="$LAT")
fi
timeout -k 10 420 java -Xmx1g ${JOPTS:-} -jar "$JAR" \
  --spring.datasource.url="jdbc:postgresql://127.0.0.1:$PORT/bench_prof" --bench.sink-url=http://127.0.0.1:18080 \
  --bench.messages="$MESSAGES" --bench.wait-seconds=120 --bench.out="$OUT/$LABEL.json" \
  "${MODE[@]}" "$@" > "$OUT/$LABEL.log" 2>&1
python3 - "$OUT/$LABEL.json" "$LABEL" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = ('deliveredPerSec', 'enqueueTxPerSec', 'latencyP50Ms', 'latencyP99Ms', 'duplicates', 'missing')
if d.get('mode') == 'cost':
    keys = ('enqueueCostRatio', 'plainInsertTxPerSec', 'libraryEnqueueTxPerSec', 'enqueueErrors')
print(sys.argv[2], {k: d.get(k) for k in keys})
PY
