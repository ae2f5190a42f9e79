#!/usr/bin/env python3
"""The JIT compilers' work during a bench run's writers, from a JFR recording made with jit.jfc.

Usage: jit-window.py RECORDING.jfr RUN.log [PACKAGE...]
  RUN.log is run-one.sh's log of the same run: the window runs from "Started RetryOutboxApp" (the
  writers start right after) to "wrote /" (the result written). Prints the C2 compilations' time in
  the window (wall time: on a busy machine it includes waiting for a core), the C2 thread's busy
  share by second of the JVM's life, the methods C2 compiled more than once, and the largest C2
  compilations of the given packages (default io/retryoutbox and java/time).
Needs the JDK's jfr tool on the PATH.
"""
import collections
import datetime
import json
import subprocess
import sys


def when(text):
    return datetime.datetime.fromisoformat(text.replace('Z', '+00:00'))


def seconds(duration):
    return float(duration[2:-1]) if duration.endswith('S') and 'M' not in duration[2:] else 0.0


def main():
    recording, log = sys.argv[1], sys.argv[2]
    packages = sys.argv[3:] or ['io/retryoutbox', 'java/time']
    lines = open(log).read().splitlines()

    def logged(pattern):
        return when([line for line in lines if pattern in line][0][:23] + '+00:00')

    start, end = logged('Started RetryOutboxApp'), logged('wrote /')
    printed = subprocess.run(['jfr', 'print', '--json', '--events', 'jdk.Compilation', recording],
                             capture_output=True, text=True, check=True).stdout
    events = [e['values'] for e in json.loads(printed)['recording']['events']]
    first = min(when(v['startTime']) for v in events)
    busy = collections.Counter()
    in_window = collections.Counter()
    compiled = collections.defaultdict(list)
    total = count = 0
    for v in events:
        if v['compileLevel'] != 4:
            continue
        began, took = when(v['startTime']), seconds(v['duration'])
        name = v['method']['type']['name'] + '.' + v['method']['name']
        compiled[name].append(took)
        at = (began - first).total_seconds()
        left = took
        while left > 0:
            second = int(at)
            part = min(left, second + 1 - at)
            busy[second] += part
            left -= part
            at += part
        if start <= began <= end:
            total += took
            count += 1
            if any(name.startswith(p) for p in packages):
                in_window[name] += took
    print('window %.1f s (from %.1f s of the JVM): C2 compiled %d methods for %.2f s'
          % ((end - start).total_seconds(), (start - first).total_seconds(), count, total))
    print('C2 busy by second: ' + ' '.join('%d:%d%%' % (s, 100 * busy[s]) for s in sorted(busy)))
    again = sorted(((sum(t), len(t), n) for n, t in compiled.items() if len(t) > 1), reverse=True)[:10]
    print('compiled more than once at C2 (all of the run):')
    for took, times, name in again:
        print('  %5d ms in %d %s' % (took * 1000, times, name))
    print('largest in the window of ' + ', '.join(packages) + ':')
    for name, took in in_window.most_common(10):
        print('  %5d ms %s' % (took * 1000, name))


if __name__ == '__main__':
    main()
