#!/usr/bin/env bash
# After a run-one.sh run of the starter's jar (its database bench_prof and the sink's receipts still
# there): each message's latency from its business row's created_at to the sink's first receipt, split
# at the outbox row's last_attempt_at, by the second its transaction started, and the sink's receipts
# a second. Env: PGPORT (5432), BUCKET_MS (1000: by the second; e.g. 100 to see the first second).
set -euo pipefail
receipts=$(mktemp) rows=$(mktemp)
trap 'rm -f "$receipts" "$rows"' EXIT
curl -sf http://127.0.0.1:18080/receipts > "$receipts"
psql -h 127.0.0.1 -p "${PGPORT:-5432}" -U postgres -d bench_prof -qAt -F ' ' -c "
select b.msg_id, (extract(epoch from b.created_at) * 1e6)::bigint,
  coalesce((extract(epoch from m.last_attempt_at) * 1e6)::bigint, 0)
from bench_business b
left join retry_outbox_message m on (convert_from(m.body, 'UTF8')::jsonb ->> 'id')::bigint = b.msg_id" > "$rows"
python3 - "$receipts" "$rows" "${BUCKET_MS:-1000}" <<'PY'
import sys
received = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) == 2:
        received[int(parts[0])] = int(parts[1])
rows = []
for line in open(sys.argv[2]):
    msg, created, attempted = map(int, line.split())
    if msg in received:
        rows.append((created, attempted, received[msg]))
rows.sort()
start = rows[0][0]
bucket = int(sys.argv[3]) * 1000


def pct(values, q):
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))] / 1000)


seconds = {}
for row in rows:
    seconds.setdefault((row[0] - start) // bucket, []).append(row)
print('from (ms) committed p50 p99 | p99 to the attempt | p99 from the attempt (ms)')
for second in sorted(seconds):
    rs = seconds[second]
    print(second * bucket // 1000, len(rs), pct([r - c for c, a, r in rs], .5), pct([r - c for c, a, r in rs], .99), '|',
          pct([a - c for c, a, r in rs if a], .99), '|', pct([r - a for c, a, r in rs if a], .99))
per_second = {}
for c, a, r in rows:
    per_second[(r - start) // bucket] = per_second.get((r - start) // bucket, 0) + 1
print(f'received a bucket of {bucket // 1000} ms:', [per_second.get(s, 0) for s in range(max(per_second) + 1)])
started = {}
for c, a, r in rows:
    if a:
        started[(a - start) // bucket] = started.get((a - start) // bucket, 0) + 1
print(f'attempts started a bucket (the last of each message):', [started.get(s, 0) for s in range(max(started) + 1)])
PY
