#!/usr/bin/env python3
"""The gaps between the relay's rounds in one run, from a statement log of `statements.sh log`, and,
with a wall-clock profile of the same run, what the poll thread did in them.

Usage: round-gaps.py LOG [GAP_MS [WALL_JFR]]   (defaults /tmp/retry-outbox-pgss/log, 60)

A round is one execution of the outcomes' statement; its time is taken from the first business
row's insert, as in first-rounds.py. The profile is async-profiler's wall-clock mode written as
JFR, e.g. JOPTS="-agentpath:$ap/libasyncProfiler.so=start,event=wall,interval=2ms,threads,file=wall.jfr".
Each of the poll thread's samples that was runnable is put in one bucket by the system call it was
in: a write to an eventfd wakes one of Netty's event loops, a write to a socket sends a statement
to PostgreSQL, a condition signal from a ScheduledThreadPoolExecutor's queue wakes a scheduler's
thread (Reactor's timer for each exchange's timeout), and poll waits for PostgreSQL's answer. On a
saturated machine a thread woken that way often takes the core from the thread that woke it.
"""
import collections
import datetime
import json
import subprocess
import sys

from statement_log import events

log = sys.argv[1] if len(sys.argv) > 1 else '/tmp/retry-outbox-pgss/log'
gap_ms = float(sys.argv[2]) if len(sys.argv) > 2 else 60
wall = sys.argv[3] if len(sys.argv) > 3 else None

found, start = events(log)
rounds = [t for t, _, phase, kind, _ in found if kind == 'outcomes' and phase == 'execute']
gaps = [(a, b) for a, b in zip(rounds, rounds[1:]) if a >= start and (b - a) * 1000 > gap_ms]


def bucket(frames):
    top = frames[0] if frames else ''
    if top.endswith('write') and len(frames) > 1:
        return 'eventfd write (wakes an event loop)' if 'eventfd' in frames[1] else 'socket write (to PostgreSQL)'
    if 'cond_signal' in top or 'cond_broadcast' in top:
        if any('DelayedWorkQueue' in f for f in frames):
            return 'condition signal (wakes a scheduler thread)'
        return 'condition signal (other)'
    if top.endswith('.poll') or top == 'poll':
        return 'poll (waits for PostgreSQL)'
    return 'Java and the rest'


samples = []
if wall:
    out = subprocess.run(['jfr', 'print', '--json', '--stack-depth', '40', '--events', 'profiler.WallClockSample', wall],
                         capture_output=True, text=True, check=True).stdout
    for event in json.loads(out)['recording']['events']:
        v = event['values']
        thread = v['sampledThread']['javaName'] or v['sampledThread']['osName'] or ''
        if not thread.startswith('retry-outbox-relay') or v['state'] != 'STATE_RUNNABLE':
            continue
        when = datetime.datetime.fromisoformat(v['startTime'][:26])
        t = when.hour * 3600 + when.minute * 60 + when.second + when.microsecond / 1e6
        frames = [f['method']['type']['name'] + '.' + f['method']['name'] for f in v['stackTrace']['frames']]
        samples.append((t, bucket(frames)))

print(f'{len(rounds)} rounds, {len(gaps)} gaps over {gap_ms:.0f} ms after the writers started')
for a, b in gaps:
    inside = collections.Counter(k for t, k in samples if a < t < b)
    print(f'{a - start:7.3f} s -> {b - start:7.3f} s  {1000 * (b - a):4.0f} ms  '
          + ', '.join(f'{k} {n}' for k, n in inside.most_common()))
if samples:
    total = collections.Counter(k for _, k in samples)
    print(f'the poll thread, runnable, in all ({sum(total.values())} samples):')
    for k, n in total.most_common():
        print(f'  {n:6d} {100 * n / sum(total.values()):5.1f}%  {k}')
