#!/usr/bin/env python3
"""The relay's round statements (the outcomes' and the claim's) around the writers' start, from a
statement log of `statements.sh log`: each parse, bind (where a new plan is made) and execute, its
time, and the backend that ran it, by the time since the first business row's insert.
Usage: first-rounds.py [LOG] [FROM_S] [TO_S]   (defaults /tmp/retry-outbox-pgss/log, -0.05, 1.0)"""
import re
import sys

log = sys.argv[1] if len(sys.argv) > 1 else '/tmp/retry-outbox-pgss/log'
since = float(sys.argv[2]) if len(sys.argv) > 2 else -0.05
until = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
entry = re.compile(r'^\d{4}-\d\d-\d\d (\d\d):(\d\d):(\d\d\.\d+) \S+ \[(\d+)\] LOG:  duration: ([\d.]+) ms  '
                   r'(parse|bind|execute|statement)[^:]*: (.*)')
entries = []
for line in open(log, errors='replace'):
    if re.match(r'^\d{4}-', line) or not entries:
        entries.append(line.rstrip('\n'))
    else:  # a statement's further lines
        entries[-1] += ' ' + line.strip()
events = []
for text in entries:
    m = entry.match(text)
    if not m:
        continue
    h, mi, s, pid, ms, phase, sql = m.groups()
    sql = sql.strip()
    kind = ('claim' if 'WITH claimed AS' in sql else 'outcomes' if 'WITH locked AS' in sql
            else 'business' if 'bench_business' in sql else None)
    if kind and 'pg_temp.' not in sql:
        events.append((int(h) * 3600 + int(mi) * 60 + float(s), pid, phase, kind, float(ms)))
start = min(t for t, _, _, kind, _ in events if kind == 'business')
for t, pid, phase, kind, ms in events:
    if kind != 'business' and since <= t - start <= until:
        print(f'{t - start:7.3f} s  backend {pid}  {kind:8s} {phase:8s} {ms:7.2f} ms')
