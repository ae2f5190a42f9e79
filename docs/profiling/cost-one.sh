#!/usr/bin/env bash
# One enqueue-cost run of a bench peer's jar on a fresh database, outside run.sh: the bench's
# cost mode (profile cost, the relay off; 500 transactions of each variant, then alternating
# rounds of the plain insert and the library's enqueue) and its ratio.
# Usage: cost-one.sh BENCH JAR LABEL [peer arguments...], e.g. --bench.cost.tx=8000 for warmer rounds
# Env: PGPORT (5432), JOPTS (extra JVM options), OUT (./out/cost), PRE (SQL run in the fresh database
#      first, e.g. the starter's migrations for the reference relay's --ideal.starter-schema=true).
# Starts the bench's sink on 18080 if none answers there (the cost mode resets it); stop it before a
# run.sh series, which starts its own on the same port.
set -uo pipefail
BENCH=$1 JAR=$2 LABEL=$3; shift 3
PORT=${PGPORT:-5432} OUT=${OUT:-$PWD/out/cost}
mkdir -p "$OUT"
if ! curl -sf http://127.0.0.1:18080/stats > /dev/null; then
  (cd "$BENCH" && setsid -f java -Xmx512m -jar sink/target/sink.jar 18080 > "$OUT/sink.log" 2>&1 < /dev/null)
  for _ in $(seq 50); do curl -sf http://127.0.0.1:18080/stats > /dev/null && break; sleep 0.2; done
fi
psql -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc "drop database if exists bench_prof with (force)" > /dev/null 2>&1
psql -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc "create database bench_prof" > /dev/null
if [ -n "${PRE:-}" ]; then psql -h 127.0.0.1 -p "$PORT" -U postgres -d bench_prof -qc "$PRE" > /dev/null; fi
psql -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc checkpoint > /dev/null
timeout -k 10 300 java -Xmx1g ${JOPTS:-} -jar "$JAR" \
  --spring.datasource.url="jdbc:postgresql://127.0.0.1:$PORT/bench_prof" --bench.sink-url=http://127.0.0.1:18080 \
  --bench.out="$OUT/$LABEL.json" --bench.mode=cost --spring.profiles.active=cost "$@" > "$OUT/$LABEL.log" 2>&1
python3 - "$OUT/$LABEL.json" "$LABEL" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = ('enqueueCostRatio', 'plainInsertTxPerSec', 'libraryEnqueueTxPerSec', 'enqueueErrors')
print(sys.argv[2], {k: d.get(k) for k in keys})
PY
