"""CPU of the machine by process group, a line a second, until stopped (SIGTERM or Ctrl-C).

Start it in the background before a run-one.sh run and stop it after: each line has the second,
how many of the two cores were busy, and the core-seconds of the bench peer's JVM, every PostgreSQL
process, the sink and the rest. A process that exits within a second loses that second's share.
"""
import os
import signal
import sys
import time

HZ = os.sysconf('SC_CLK_TCK')
GROUPS = ('peer', 'postgres', 'sink', 'other')


def by_group():
    ticks = dict.fromkeys(GROUPS, 0)
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            stat = open(f'/proc/{pid}/stat').read()
            command = open(f'/proc/{pid}/cmdline').read()
        except OSError:
            continue
        name_end = stat.rfind(')')
        fields = stat[name_end + 2:].split()
        name = stat[stat.find('(') + 1:name_end]
        if 'sink.jar' in command:
            group = 'sink'
        elif name.startswith('postgres'):
            group = 'postgres'
        elif name == 'java':
            group = 'peer'
        else:
            group = 'other'
        ticks[group] += int(fields[11]) + int(fields[12])
    return ticks


def machine():
    values = list(map(int, open('/proc/stat').readline().split()[1:]))
    return sum(values), values[3] + values[4]


def stop(*_):
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
cores = os.cpu_count()
before, total_before = by_group(), machine()
while True:
    time.sleep(1)
    after, total_after = by_group(), machine()
    total, idle = total_after[0] - total_before[0], total_after[1] - total_before[1]
    shares = ' '.join(f'{g}={max(0, after[g] - before[g]) / HZ:.2f}' for g in GROUPS)
    print(time.strftime('%H%M%S'), f'busy={(total - idle) / total * cores:.2f}', shares, flush=True)
    before, total_before = after, total_after
