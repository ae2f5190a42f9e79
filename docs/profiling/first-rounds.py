#!/usr/bin/env python3
"""The relay's round statements (the outcomes' and the claim's) around the writers' start, from a
statement log of `statements.sh log`: each parse, bind (where a new plan is made) and execute, its
time, and the backend that ran it, by the time since the first business row's insert.
Usage: first-rounds.py [LOG] [FROM_S] [TO_S]   (defaults /tmp/retry-outbox-pgss/log, -0.05, 1.0)"""
import sys

from statement_log import events

log = sys.argv[1] if len(sys.argv) > 1 else '/tmp/retry-outbox-pgss/log'
since = float(sys.argv[2]) if len(sys.argv) > 2 else -0.05
until = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
found, start = events(log)
for t, pid, phase, kind, ms in found:
    if kind != 'business' and since <= t - start <= until:
        print(f'{t - start:7.3f} s  backend {pid}  {kind:8s} {phase:8s} {ms:7.2f} ms')
