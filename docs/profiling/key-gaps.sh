#!/usr/bin/env bash
# After a run-one.sh run of a keyed peer (its database bench_prof and the sink's receipts still there):
# the gaps between the sink's receipts of consecutive messages of an ordering key (the bench's key is
# the message id modulo 100) whose second message was committed before the first one arrived, so the
# key had work waiting: while the writers ran, and after they stopped. Env: PGPORT (5432).
set -euo pipefail
receipts=$(mktemp) rows=$(mktemp)
trap 'rm -f "$receipts" "$rows"' EXIT
curl -sf http://127.0.0.1:18080/receipts > "$receipts"
psql -h 127.0.0.1 -p "${PGPORT:-5432}" -U postgres -d bench_prof -qAt -F ' ' \
  -c "select msg_id, (extract(epoch from created_at) * 1e6)::bigint from bench_business" > "$rows"
python3 - "$receipts" "$rows" <<'PY'
import sys
received = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) == 2:
        received[int(parts[0])] = int(parts[1])
created = {}
for line in open(sys.argv[2]):
    msg, micros = map(int, line.split())
    created[msg] = micros
writers_end = max(created.values())
keys = {}
for msg, at in received.items():
    if msg in created:
        keys.setdefault(msg % 100, []).append((at, created[msg]))
during, after = [], []
for receipts in keys.values():
    receipts.sort()
    for (first, _), (second, committed) in zip(receipts, receipts[1:]):
        if committed <= first:
            (during if second <= writers_end else after).append((second - first) / 1000)


def pct(values, q):
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1)


for name, gaps in (('while the writers ran', during), ('after they stopped', after)):
    if gaps:
        print(f'{name}: {len(gaps)} gaps, p10 {pct(gaps, .1)} ms, p50 {pct(gaps, .5)} ms, '
              f'p90 {pct(gaps, .9)} ms, p99 {pct(gaps, .99)} ms')
    else:
        print(f'{name}: no gaps')
PY
