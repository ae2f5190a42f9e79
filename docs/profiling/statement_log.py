"""Reads a statement log of `statements.sh log` (log_min_duration_statement = 0): the relay's round
statements and the business rows' inserts, for first-rounds.py and round-gaps.py."""
import re

ENTRY = re.compile(r'^\d{4}-\d\d-\d\d (\d\d):(\d\d):(\d\d\.\d+) \S+ \[(\d+)\] LOG:  duration: ([\d.]+) ms  '
                   r'(parse|bind|execute|statement)[^:]*: (.*)')


def events(log):
    """Each parse, bind and execute of the claim's and the outcomes' statements (not the warm-up's
    rehearsal, on temporary tables) and of the business row's insert, as (seconds of the day,
    backend, phase, kind, milliseconds), kind one of claim, outcomes and business; and the time of
    the first business insert, which is when the writers started."""
    entries = []
    for line in open(log, errors='replace'):
        if re.match(r'^\d{4}-', line) or not entries:
            entries.append(line.rstrip('\n'))
        else:  # a statement's further lines
            entries[-1] += ' ' + line.strip()
    found = []
    for text in entries:
        m = ENTRY.match(text)
        if not m:
            continue
        h, mi, s, pid, ms, phase, sql = m.groups()
        kind = ('claim' if 'WITH claimed AS' in sql else 'outcomes' if 'WITH locked AS' in sql
                else 'business' if 'bench_business' in sql else None)
        if kind and 'pg_temp.' not in sql:
            found.append((int(h) * 3600 + int(mi) * 60 + float(s), pid, phase, kind, float(ms)))
    return found, min(t for t, _, _, kind, _ in found if kind == 'business')
