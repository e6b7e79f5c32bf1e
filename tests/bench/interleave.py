#!/usr/bin/env python3
"""Times commands side by side, interleaved run by run.

    interleave.py --runs N [--warmup W] [--prepare SH] --json OUT NAME=CMD...

Every round runs each command once, rotating which goes first, so that a
shared VM whose speed drifts from one minute to the next slows both sides
alike (hyperfine runs all of one command, then all of the next: on this
VM the same binary moved by 20 % between such batches).  CMD is argv
words, `&&` between programs run one after the other; each program is
spawned directly (no shell in the timing), its wall time and its own CPU
time (wait4's rusage, user + system) are added up, and its peak resident
set size (wait4's ru_maxrss) kept: a command's peak is the largest of its
programs'.  PREPARE runs through
/bin/sh before every timed command, outside the timing.  A failing
command ends the bench with its status and its stderr.

Writes OUT: {"NAME": {"wall": [s...], "cpu": [s...], "rss": [KiB...]}, ...}
and prints, for each command, the median wall and CPU time in ms and the
median peak RSS in MB.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time


def parse_cmd(text):
    progs, cur = [], []
    for w in shlex.split(text):
        if w == "&&":
            progs.append(cur)
            cur = []
        else:
            cur.append(w)
    progs.append(cur)
    if any(not p for p in progs):
        sys.exit(f"interleave: empty program in `{text}`")
    return progs


def run_once(name, progs):
    wall = cpu = 0.0
    rss = 0
    for argv in progs:
        with tempfile.TemporaryFile() as err:
            t = time.perf_counter()
            try:
                pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
                    (os.POSIX_SPAWN_DUP2, err.fileno(), 2)])
            except OSError as e:
                sys.exit(f"interleave: {name}: cannot run {argv[0]}: {e}")
            _, status, ru = os.wait4(pid, 0)
            wall += time.perf_counter() - t
            cpu += ru.ru_utime + ru.ru_stime
            rss = max(rss, ru.ru_maxrss)
            if status != 0:
                err.seek(0)
                sys.stderr.write(err.read().decode(errors="replace"))
                sys.exit(f"interleave: {name}: `{shlex.join(argv)}` failed "
                         f"(wait status {status})")
    return wall, cpu, rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--prepare", default=None)
    ap.add_argument("--json", required=True)
    ap.add_argument("commands", nargs="+", metavar="NAME=CMD")
    a = ap.parse_args()
    cmds = []
    for c in a.commands:
        name, sep, text = c.partition("=")
        if not sep or not name:
            sys.exit(f"interleave: expected NAME=CMD, got `{c}`")
        cmds.append((name, parse_cmd(text)))
    res = {name: {"wall": [], "cpu": [], "rss": []} for name, _ in cmds}

    def prepare():
        if a.prepare:
            subprocess.run(["/bin/sh", "-c", a.prepare], check=True)

    for i in range(a.warmup + a.runs):
        k = i % len(cmds)
        for name, progs in cmds[k:] + cmds[:k]:
            prepare()
            wall, cpu, rss = run_once(name, progs)
            if i >= a.warmup:
                res[name]["wall"].append(wall)
                res[name]["cpu"].append(cpu)
                res[name]["rss"].append(rss)
    with open(a.json, "w") as f:
        json.dump(res, f)
    for name, _ in cmds:
        r = res[name]
        print(f"{name}: wall {statistics.median(r['wall']) * 1e3:.1f} ms, "
              f"cpu {statistics.median(r['cpu']) * 1e3:.1f} ms, "
              f"peak rss {statistics.median(r['rss']) / 1024:.1f} MB (median of {a.runs})")


if __name__ == "__main__":
    main()
