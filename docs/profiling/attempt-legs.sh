#!/usr/bin/env bash
# After a run-one.sh run of the starter's jar (its database bench_prof and the sink's receipts still
# there): where each attempt's time goes, from the attempt log and the sink's first receipt of each
# message: from the message's row to its attempt's start, from that start to the sink's receipt, from
# the receipt plus the sink's latency to the outcome, and the attempt in all.
# Usage: attempt-legs.sh [SINK_LATENCY_MS]   Env: PGPORT (5432).
set -euo pipefail
receipts=$(mktemp) rows=$(mktemp)
trap 'rm -f "$receipts" "$rows"' EXIT
curl -sf http://127.0.0.1:18080/receipts > "$receipts"
psql -h 127.0.0.1 -p "${PGPORT:-5432}" -U postgres -d bench_prof -qAt -F ' ' -c "
select (convert_from(m.body, 'UTF8')::json->>'id')::bigint, (extract(epoch from a.started_at) * 1e6)::bigint,
  a.duration_ms, (extract(epoch from m.created_at) * 1e6)::bigint
from retry_outbox_message m join retry_outbox_attempt a on a.message_id = m.id" > "$rows"
python3 - "$receipts" "$rows" "${1:-0}" <<'PY'
import sys
received = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) == 2:
        received[int(parts[0])] = int(parts[1])
latency = float(sys.argv[3])
legs = {'row to attempt start': [], 'attempt start to receipt': [], 'receipt and latency to outcome': [],
        'attempt': []}
for line in open(sys.argv[2]):
    msg, started, duration, created = map(int, line.split())
    if msg not in received:
        continue
    sent = (received[msg] - started) / 1000
    legs['row to attempt start'].append((started - created) / 1000)
    legs['attempt start to receipt'].append(sent)
    legs['receipt and latency to outcome'].append(duration - latency - sent)
    legs['attempt'].append(duration)


def pct(values, q):
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1)


for name, values in legs.items():
    print(f'{name}: p10 {pct(values, .1)} ms, p50 {pct(values, .5)} ms, p90 {pct(values, .9)} ms, '
          f'p99 {pct(values, .99)} ms')
PY
