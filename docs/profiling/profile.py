#!/usr/bin/env python3
"""Reads async-profiler's collapsed stacks written a file a second, e.g. with
-agentpath:libasyncProfiler.so=start,event=cpu,interval=1ms,threads,loop=1s,file=DIR/p-%t.collapsed
(each file is named p-YYYYMMDD-HHMMSS.collapsed; FROM and TO are HHMMSS, both inclusive).

  profile.py groups DIR [FROM [TO]]                   samples by thread group, per second and in all
  profile.py inclusive DIR THREAD [FROM TO] [MATCH..] frames by inclusive samples on threads named THREAD*
  profile.py under DIR THREAD FRAME DEPTH [FROM TO]   what the first frame containing FRAME calls
  profile.py kernel DIR [FROM [TO]]                   samples by thread group, in all and in the kernel
"""
import collections
import os
import sys

GROUPS = [('C2', 'C2 compiler'), ('C1', 'C1 compiler'), ('reactor-http', 'event loops'),
          ('pool-2-thread', 'writers'), ('retry-outbox-relay', 'relay thread(s)'),
          ('ideal', 'relay thread(s)'), ('main', 'main'), ('GC', 'gc'), ('G1', 'gc')]


def stacks(directory, first='000000', last='999999'):
    for name in sorted(os.listdir(directory)):
        second = name[11:17]
        if not (name.endswith('.collapsed') and first <= second <= last):
            continue
        for line in open(os.path.join(directory, name)):
            stack, count = line.rsplit(' ', 1)
            frames = stack.split(';')
            yield second, frames[0].strip('[]').split(' tid=')[0], frames[1:], int(count)


def group(thread):
    return next((g for prefix, g in GROUPS if prefix in thread), 'other')


def groups(directory, first='000000', last='999999'):
    seconds = collections.defaultdict(collections.Counter)
    for second, thread, _, count in stacks(directory, first, last):
        seconds[second][group(thread)] += count
    total = collections.Counter()
    for second in sorted(seconds):
        total.update(seconds[second])
        print(second, sum(seconds[second].values()), dict(seconds[second].most_common()))
    print('all', sum(total.values()), dict(total.most_common()))


def kernel(directory, first='000000', last='999999'):
    total, in_kernel = collections.Counter(), collections.Counter()
    for _, thread, frames, count in stacks(directory, first, last):
        total[group(thread)] += count
        if frames and frames[-1].endswith('_[k]'):
            in_kernel[group(thread)] += count
    for name, count in total.most_common():
        print('%-16s %7d  kernel %7d' % (name, count, in_kernel[name]))


def inclusive(directory, thread, first='000000', last='999999', *match):
    counts, total = collections.Counter(), 0
    for _, name, frames, count in stacks(directory, first, last):
        if name.startswith(thread):
            total += count
            counts.update({frame: count for frame in set(frames)})
    print('total', total)
    for frame, count in counts.most_common(300):
        if not match or any(m in frame for m in match):
            print(count, frame[:160])


def under(directory, thread, frame, depth, first='000000', last='999999'):
    counts, total = collections.Counter(), 0
    for _, name, frames, count in stacks(directory, first, last):
        at = next((i for i, f in enumerate(frames) if frame in f), None)
        if name.startswith(thread) and at is not None:
            total += count
            counts[';'.join(frames[at + 1:at + 1 + int(depth)])] += count
    print('total', total)
    for callees, count in counts.most_common(30):
        print(count, callees[:200])


if __name__ == '__main__':
    command, args = sys.argv[1], sys.argv[2:]
    {'groups': groups, 'inclusive': inclusive, 'under': under, 'kernel': kernel}[command](*args)
