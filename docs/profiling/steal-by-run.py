#!/usr/bin/env python3
"""The CPU time the hypervisor took (steal) while each run of a series ran.

Usage: steal-by-run.py VMSTAT RAW_DIR
  VMSTAT   the output of `vmstat -t 1`, started beside `run.sh` (one line a second)
  RAW_DIR  the series' results/raw/<date> folder: each run's log and JSON

For each run, from its log's first timestamp to its JSON's writing (vmstat -t and the logs in UTC): the seconds, the mean user, system, idle
and steal percentages, the highest steal of a second, and the run's rate (delivered messages a
second; a cost run's ratio and plain inserts a second; a ceilings run's requests and claimed rows a
second).
Two runs of one jar in one series differed by a third in rate; the slow ones were the ones the
machine's host took time from (docs/benchmarks.md, forty-seventh session).
"""
import datetime
import glob
import json
import os
import re
import sys

FIGURES = (("deliveredPerSec", "msg/s"), ("enqueueCostRatio", "cost"), ("plainInsertTxPerSec", "plain tx/s"),
           ("httpC64RequestsPerSecLatency0", "http/s"), ("dbClaimComplete100RowsPerSecWorkers4", "claim rows/s"))

STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)")


def seconds(vmstat):
    rows = []
    for line in open(vmstat):
        p = line.split()
        if len(p) < 19 or not p[0].isdigit():
            continue
        t = datetime.datetime.fromisoformat(p[17] + "T" + p[18])
        rows.append((t, int(p[12]), int(p[13]), int(p[14]), int(p[16])))
    return rows


def window(log):
    stamps = [m.group(1) for m in map(STAMP.match, open(log, errors="replace")) if m]
    if not stamps:
        return None
    end = datetime.datetime.fromisoformat(stamps[-1])
    # The ceilings log nothing after their start; a run's JSON is written as it ends.
    result = log[:-4] + ".json"
    if os.path.exists(result):
        end = max(end, datetime.datetime.fromtimestamp(os.path.getmtime(result), datetime.timezone.utc)
                  .replace(tzinfo=None))
    return datetime.datetime.fromisoformat(stamps[0]), end


def rate(log):
    path = log[:-4] + ".json"
    if not os.path.exists(path):
        return ""
    d = json.load(open(path))
    found = [f"{label} {d[key]}" for key, label in FIGURES if d.get(key) is not None]
    return ", ".join(found)


def main():
    rows = seconds(sys.argv[1])
    print(f"{'run':34s} {'s':>3s} {'us':>5s} {'sy':>5s} {'id':>5s} {'st':>5s} {'max st':>6s}  rate")
    for log in sorted(glob.glob(os.path.join(sys.argv[2], "*.log"))):
        w = window(log)
        if w is None:
            continue
        sel = [r for r in rows if w[0] <= r[0] <= w[1]]
        if not sel:
            continue
        n = len(sel)
        us, sy, idle, st = (sum(r[i] for r in sel) / n for i in (1, 2, 3, 4))
        print(f"{os.path.basename(log)[:-4]:34s} {n:3d} {us:5.1f} {sy:5.1f} {idle:5.1f} {st:5.1f} "
              f"{max(r[4] for r in sel):6d}  {rate(log)}")


if __name__ == "__main__":
    main()
