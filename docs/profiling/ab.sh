#!/usr/bin/env bash
# Alternating deliver runs of two configurations, one at a time, and the ratio of their rates.
# Usage: ab.sh BENCH PAIRS LATENCY_MS A_JAR "A_ARGS" B_JAR "B_ARGS"
#   e.g. ab.sh "$bench" 6 0 ro.jar "" ro.jar "--retry-outbox.relay.run-size=1"
# Env: as run-one.sh (JOPTS and PRE apply to both; A_JOPTS, B_JOPTS, A_PRE and B_PRE to one each),
#      OUT (./out/ab).
# Prints each pair and, at the end, the mean of B/A over the pairs with its standard error (the
# machine's rate drifts by more than most changes are worth, so only pairs run back to back compare)
# and each side's median p99.
# A CHECKPOINT before each run: without one, a run is slowed by the WAL of the run before it.
set -uo pipefail
BENCH=$1 PAIRS=$2 LAT=$3 A_JAR=$4 A_ARGS=$5 B_JAR=$6 B_ARGS=$7
HERE=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-$PWD/out/ab}
mkdir -p "$OUT"
rate() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['deliveredPerSec'])" "$OUT/$1.json"; }
p99() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['latencyP99Ms'])" "$OUT/$1.json"; }
p99a=() p99b=()
ratios=()
for i in $(seq "$PAIRS"); do
  # A first in odd pairs, B first in even ones: the second run of a pair tends to differ.
  for side in $( ((i % 2)) && echo "a b" || echo "b a"); do
    psql -h 127.0.0.1 -p "${PGPORT:-5432}" -U postgres -d postgres -qc checkpoint > /dev/null
    if [ "$side" = a ]; then
      JOPTS="${JOPTS:-} ${A_JOPTS:-}" PRE="${A_PRE:-${PRE:-}}" "$HERE/run-one.sh" "$BENCH" "$A_JAR" "a$i" "$LAT" $A_ARGS > /dev/null
    else
      JOPTS="${JOPTS:-} ${B_JOPTS:-}" PRE="${B_PRE:-${PRE:-}}" "$HERE/run-one.sh" "$BENCH" "$B_JAR" "b$i" "$LAT" $B_ARGS > /dev/null
    fi
  done
  a=$(rate "a$i") b=$(rate "b$i")
  ratios+=("$(python3 -c "print($b / $a)")")
  p99a+=("$(p99 "a$i")") p99b+=("$(p99 "b$i")")
  echo "pair $i: A $a msg/s, B $b msg/s, B/A $(python3 -c "print(round($b / $a, 3))"), p99 A ${p99a[-1]} ms, B ${p99b[-1]} ms"
done
python3 - "${#ratios[@]}" "${ratios[@]}" "${p99a[@]}" "${p99b[@]}" <<'PY'
import statistics, sys
n = int(sys.argv[1])
r, pa, pb = ([float(x) for x in sys.argv[2 + k * n:2 + (k + 1) * n]] for k in range(3))
se = statistics.stdev(r) / len(r) ** 0.5 if len(r) > 1 else float('nan')
print(f"B/A over {len(r)} pairs: mean {statistics.mean(r):.3f}, standard error {se:.3f}")
print(f"p99 medians: A {statistics.median(pa):.1f} ms, B {statistics.median(pb):.1f} ms")
PY
