#!/usr/bin/env bash
# After a run-one.sh run of the starter's jar (its database bench_prof and the sink's receipts still
# there): where each attempt's time goes, from the attempt log and the sink's first receipt of each
# message: from the message's row to its attempt's start, from that start to the sink's receipt, from
# the receipt plus the sink's latency to the outcome, and the attempt in all. Then a bound: each
# message's latency (row to receipt) had its attempt started as soon as its row was there and its
# key's message before it was answered, each attempt taking what it took; what the relay's own waits
# add to the latency is the rest.
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
keys = {}
for line in open(sys.argv[2]):
    msg, started, duration, created = map(int, line.split())
    if msg not in received:
        continue
    keys.setdefault(msg % 100, []).append((msg, created, started, duration))
    sent = (received[msg] - started) / 1000
    legs['row to attempt start'].append((started - created) / 1000)
    legs['attempt start to receipt'].append(sent)
    legs['receipt and latency to outcome'].append(duration - latency - sent)
    legs['attempt'].append(duration)


def pct(values, q):
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1)


# The bench's keys are the message's id modulo 100; a key's messages go in id order.
actual, bound, waits = [], [], []
for attempts in keys.values():
    free = answered = 0
    for msg, created, started, duration in sorted(attempts):
        start = max(created, free)
        free = start + duration * 1000
        actual.append((received[msg] - created) / 1000)
        bound.append((start + received[msg] - started - created) / 1000)
        waits.append((started - max(created, answered)) / 1000)
        answered = started + duration * 1000
legs['row to receipt'] = actual
legs['row to receipt, the bound'] = bound
legs["the relay's own wait (row or the key's last answer, whichever later, to attempt start)"] = waits

for name, values in legs.items():
    print(f'{name}: p10 {pct(values, .1)} ms, p50 {pct(values, .5)} ms, p90 {pct(values, .9)} ms, '
          f'p99 {pct(values, .99)} ms')
PY
