#!/usr/bin/env bash
# Deliver runs of several jars (or one jar with different arguments) in turn, the order rotated each
# round, each after a CHECKPOINT and once the machine is quiet, then each arm's runs: its mean rate and the median, mean and sorted
# list of its p99s. For tails, which one run says little about: the p99 at 20 ms moved from 66 to
# 250 ms between runs of the same jar in an hour (docs/benchmarks.md, forty-second session).
# Usage: rotate.sh BENCH OUT ROUNDS LATENCY name=jar[:peer arguments] ...
#   e.g. rotate.sh "$bench" out/rot 8 20 a=ro.jar "b=ro.jar:--retry-outbox.destinations.sink.flow.adaptive=false"
# The jars are looked up in $JARS (default: the current directory). A sink already running is kept
# (run.sh's series warm theirs up with the ceilings first); else run-one.sh starts one, and a first
# run at 0 ms, not counted, goes before the others.
set -uo pipefail
BENCH=$1 OUTD=$2 ROUNDS=$3 LAT=$4; shift 4
ARMS=("$@") N=$# JARS=${JARS:-$PWD}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUTD"
if ! curl -sf http://127.0.0.1:18080/stats > /dev/null; then
  first=${ARMS[0]#*=}
  OUT=$OUTD "$here/run-one.sh" "$BENCH" "$JARS/${first%%:*}" warm 0 > /dev/null
fi
# As run.sh does before each run: wait (at most 30 s) until the machine is quiet. Back to back, the
# last run's JVM and database were still winding down into the next run's first seconds.
busy() {
  local a b idle total=0 i
  read -r -a a < <(head -1 /proc/stat); sleep 1; read -r -a b < <(head -1 /proc/stat)
  idle=$(( (b[4] + b[5]) - (a[4] + a[5]) ))
  for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
  echo $(( total > 0 ? 100 * (total - idle) / total : 0 ))
}
quiet() {
  local waited=0
  while [ "$(busy)" -gt 25 ] && [ "$waited" -lt 30 ]; do waited=$((waited + 1)); done
}
for i in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((N - 1))); do
    arm=${ARMS[$(( (k + i) % N ))]}
    name=${arm%%=*} rest=${arm#*=} args=()
    jar=${rest%%:*}
    if [[ $rest == *:* ]]; then read -r -a args <<< "${rest#*:}"; fi
    psql -h 127.0.0.1 -p "${PGPORT:-5432}" -U postgres -d postgres -qc checkpoint > /dev/null
    quiet
    OUT=$OUTD "$here/run-one.sh" "$BENCH" "$JARS/$jar" "$name-$i" "$LAT" "${args[@]}"
  done
done
python3 - "$OUTD" <<'PY'
import collections, glob, json, statistics, sys
arms = collections.defaultdict(list)
for path in glob.glob(sys.argv[1] + '/*-*.json'):
    name = path.rsplit('/', 1)[1].rsplit('-', 1)[0]
    if name == 'warm':
        continue
    d = json.load(open(path))
    arms[name].append((d['deliveredPerSec'], d['latencyP99Ms']))
for name, runs in sorted(arms.items()):
    p99 = sorted(r[1] for r in runs)
    print(name, 'runs', len(runs), 'rate mean', round(statistics.mean(r[0] for r in runs)),
          'p99 median', statistics.median(p99), 'mean', round(statistics.mean(p99), 1),
          'over 100 ms', sum(1 for p in p99 if p > 100), p99)
PY
