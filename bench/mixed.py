#!/usr/bin/env python3
"""A stream and a random reader of one device at once (issue 45).

One ext4 file system over a class's modelled device serves, at the same
time, two processes: a stream, fs.py's dd1 reader (`dd bs=4k`, the window
is all it reads ahead) of a 4 GiB file, and fs.py's random 4 KiB mmap
reader (mmap-rand: same reader, same seed) of a 1 GiB file in a 256 MiB
memory cgroup; a media server or a backup beside a database. Both start
together on a fresh mount (a cold cache) and run for --runtime seconds;
each is scored on its own: MB/s for the stream, faults a second (IOPS) for
the random reader.

Jobs, each on a fresh mount:

  stream  the stream alone       rand  the random reader alone
  pair    both at once

at every fixed window of --sweep (round-robin, --repeat rounds spread over
the iterations as users.py does), then radaemon as users meet it: a fresh
daemon (a new, empty state directory) on the device as the kernel leaves it
and the pair at once (start mode nowait), --runs jobs, --iterations times.

Scores: each reader against its best fixed window alone (the best median
of the stream jobs, of the rand jobs: the target "each >= 0.90 of its best
fixed window alone"), and against the pair's best fixed window (the one
whose worse reader's ratio is highest: the best one window per device does).
Run 1 is a user's first job; runs 2-N together (each reader's total work
over total time) a later job.

Besides the scores each job records what the random reader brought from
the device per fault (its /proc/self/io read_bytes: the window its faults
read around), the window's changes and the daemon's decision lines with
their time from the job's start, and how busy the machine's CPUs were.

  bench/mixed.py --quick                  ssd-ctrl, 16 and 2048 KiB, 1 iteration, 5 s jobs
  bench/mixed.py --classes hdd-7200,ssd-ctrl --sweep 4,16,128,512,2048,8192 --repeat 2
  bench/mixed.py --report-only results/X-mixed.json

Run as root from a build tree (--builddir); it makes loop devices
5000-5999 and radaemon-bench-* cgroups, mounts under its temporary
directory, and removes all of it when it ends. Hold
/run/radaemon-bench.lock while measuring.
"""
import argparse
import json
import os
import statistics
import sys
import threading
import time

import fs as fs_
import users
from classes import CLASSES
from daemon import warn_if_foreign_daemon
from machine import Interrupted, Machine, log

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1024 ** 2
STREAM_MIB = 4096   # longer than a job at 270 MB/s for runtimes up to 15 s
KINDS = ("stream", "rand", "pair")
WORKLOAD = {"stream": "mixed-stream", "rand": "mixed-rand", "pair": "stream+rand"}
TARGET = 0.90
# The reader of fs.py's mmap-rand, then what it brought from storage (the
# bios its faults submitted, readahead included: submit_bio() counts them
# to the task that submits them).
RAND_READER = fs_.MMAP_READER + r"""
with open("/proc/self/io") as f:
    print(dict(line.split(": ") for line in f.read().splitlines())["read_bytes"])
"""
# The daemon log of the radaemon runs, followed by each job's Watch (None: fixed jobs).
DAEMON_LOG = {"path": None}


def cpu_times():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]  # all, idle + iowait


class Watch:
    """Polls the knob every 20 ms during a job and reads the daemon's log as
    it grows: when each window came and each decision line, from the job's
    start (the daemon's plain log has no time)."""

    def __init__(self, fs):
        self.fs = fs
        self.t0 = time.monotonic()
        self.changes = [(0.0, fs.read_knob())]
        self.lines = []
        self.path = DAEMON_LOG["path"]
        self.offset = os.path.getsize(self.path) if self.path and os.path.exists(self.path) else 0
        self.partial = ""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _read_log(self):
        if not self.path:
            return
        with open(self.path) as f:
            f.seek(self.offset)
            text = f.read()
            self.offset = f.tell()
        text = self.partial + text
        *whole, self.partial = text.split("\n")
        t = round(time.monotonic() - self.t0, 2)
        for line in whole:
            if self.fs.name + ":" in line and ("read_ahead_kb" in line or "open file" in line):
                self.lines.append((t, line.strip()))

    def _poll(self):
        while not self.done.wait(0.02):
            kb = self.fs.read_knob()
            if kb is not None and kb != self.changes[-1][1]:
                self.changes.append((round(time.monotonic() - self.t0, 2), kb))
            self._read_log()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()
        self._read_log()


def wait_opened(path, t0, timeout=5):
    """Seconds from t0 until a process holds path open (the stream's dd)."""
    while time.monotonic() - t0 < timeout:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
                if any(os.readlink(f"/proc/{pid}/fd/{fd}") == path for fd in fds):
                    return round(time.monotonic() - t0, 3)
            except OSError:
                continue
        time.sleep(0.002)
    raise RuntimeError(f"no process opened {path} within {timeout} s")


def fn_is(thread, fn):
    return getattr(thread, "fn", None) is fn


def job(kind, split=None):
    """fs.py's EXTRA_WORKLOADS run for kind: the score is a dict, one entry per reader.
    kind "split": split = (ws, wr), the stream opened at ws, then the random reader at
    wr: what a window per file would give the pair (no daemon decides it)."""
    def run(machine, fs, group, runtime):
        reader = machine.path("mixed_rand_reader.py")
        with open(reader, "w") as f:
            f.write(RAND_READER)
        out, errors = {}, []

        def stream():
            # group: measure()'s, the class's cgroup without a memory limit (dd1's).
            _, err, s = fs_.timed(machine, group, f"dd if={fs.path('stream')} of=/dev/null bs=4k",
                                  runtime)
            out.update(stream_mbs=fs_.dd_bytes(err) / s / 1e6, stream_s=round(s, 2),
                       stream_mib=round(fs_.dd_bytes(err) / MiB, 1))

        def rand():
            # mmap-rand's 256 MiB memory cgroup.
            text, _, s = fs_.timed(machine, fs.cgroup(fs_.MEM_LIMIT),
                                   f"python3 {reader} {fs.path('mmap')} {runtime} 0", runtime + 30)
            n, read_bytes = (int(x) for x in text.split()[:2])
            out.update(rand_iops=n / min(s, runtime), rand_faults=n, rand_s=round(s, 2),
                       rand_read_mib=round(read_bytes / MiB, 1),
                       rand_kib_per_access=round(read_bytes / 1024 / n, 2) if n else None)

        def guarded(fn):
            def g():
                try:
                    fn()
                except Exception as e:  # re-raised in the caller's thread
                    errors.append(e)
            return g

        targets = {"stream": [stream], "rand": [rand], "pair": [stream, rand],
                   "split": [stream, rand]}[kind]
        threads = []
        for fn in targets:
            threads.append(threading.Thread(target=guarded(fn)))
            threads[-1].fn = fn
        all0, idle0 = cpu_times()
        t0 = time.monotonic()
        with Watch(fs) as watch:
            for t in threads:
                t.start()
                if kind == "split" and fn_is(t, stream):
                    # The stream's file took the device's window (ws) at open: now the
                    # random reader's (wr), which its file takes at its own open.
                    out["split_open_wait_s"] = wait_opened(fs.path("stream"), t0)
                    fs.set_knob(split[1])
            for t in threads:
                t.join()
        seconds = time.monotonic() - t0
        all1, idle1 = cpu_times()
        if errors:
            raise errors[0]
        out.update(cpu_busy=round(1 - (idle1 - idle0) / max(1, all1 - all0), 3),
                   windows=watch.changes, log=watch.lines)
        return out, seconds
    return run


for _kind in KINDS:
    fs_.EXTRA_WORKLOADS[WORKLOAD[_kind]] = (None, job(_kind))


def repair_stream(r):
    """A dd whose summary never came (seen once in 150 jobs: SIGINT and no line on
    stderr) read what the device served less what the random reader's process
    brought (the two add up to the model's read_bytes within 0.3 % in every
    other job): its MB/s from that, marked stream_from_device."""
    if r.get("stream_mib") == 0 and r.get("device", {}).get("read_bytes"):
        data = r["device"]["read_bytes"] - r.get("rand_read_mib", 0) * MiB
        if data > 0:
            r.update(stream_mbs=data / r["stream_s"] / 1e6, stream_from_device=True)
    return r


def brief(r):
    """A job's result without measure()'s nesting: the readers' numbers beside the window."""
    out = dict(r["score"])
    out.update(seconds=r["seconds"], kb_at_open=r["kb_at_open"], kb_after=r["kb_after"])
    if "device" in r:
        out["device"] = r["device"]
    return repair_stream(out)


def populate(fs):
    log(f"mixed: writing the stream's file ({STREAM_MIB} MiB) on {fs.name}")
    fs_.sh(f"dd if=/dev/zero of={fs.path('stream')} bs=1M count={STREAM_MIB} status=none")
    fs_.sh("sync")


def run_class(machine, cls, args, data):
    fs = fs_.FsDevice(machine, CLASSES[cls], "ext4", workloads=["mmap-rand"])
    cell = {"class": cls, "fs": "ext4", "device": fs.name, "kernel_kb": fs.kernel_kb,
            "points": {k: {} for k in KINDS}, "iterations": [], "load": []}
    data["cells"].append(cell)
    try:
        populate(fs)
        for it in range(args.iterations):
            load_before = fs_.loadavg()
            for rnd in users.fixed_rounds(it, args.iterations, args.repeat):
                for kb in args.sweep:
                    for kind in args.kinds:
                        r = brief(fs_.run_fixed(machine, fs, WORKLOAD[kind], kb, args.runtime))
                        cell["points"][kind].setdefault(str(kb), []).append(r)
                    log(f"  {cls} round {rnd + 1} {kb} KiB: " + describe_fixed(cell, kb, -1))
                    save(data, args)
                for ws, wr in args.split:
                    r = run_split(machine, fs, ws, wr, args.runtime)
                    cell.setdefault("split", {}).setdefault(f"{ws}/{wr}", []).append(r)
                    log(f"  {cls} round {rnd + 1} stream at {ws}, rand at {wr} KiB: "
                        f"{r['stream_mbs']:.1f} MB/s + {r['rand_iops']:.0f} IOPS "
                        f"({r['rand_kib_per_access']} KiB/fault)")
                    save(data, args)
            if args.runs == 0:
                cell["load"].append([load_before, fs_.loadavg()])
                continue
            tag = f"mixed-{it}-{cls}"
            DAEMON_LOG["path"] = machine.path(os.path.join(tag, "daemon.log"))
            try:
                entry = fs_.run_repeat(machine, fs, WORKLOAD["pair"], args.runs, args.runtime,
                                       args.builddir, args.interval_ms, tag)
            finally:
                DAEMON_LOG["path"] = None
            cell["iterations"].append({
                "iteration": it, "state_fresh": entry["state_fresh"],
                "runs": [brief(r) for r in entry["runs"]], "timeline": entry["timeline"],
                "decisions": [x for x in entry["decisions"]
                              if "read_ahead_kb" in x or "open file" in x or "calibrat" in x]})
            log(f"  {cls} radaemon {it + 1}/{args.iterations}: " + " ".join(
                f"[{r['stream_mbs']:.1f} MB/s {r['rand_iops']:.0f} IOPS "
                f"{r['kb_at_open']}->{r['kb_after']}]" for r in cell["iterations"][-1]["runs"]))
            cell["load"].append([load_before, fs_.loadavg()])
            save(data, args)
    finally:
        fs.close()


def run_split(machine, fs, ws, wr, runtime):
    """The pair with a window per file: the stream opens at ws, the random reader at wr."""
    name = f"split-{ws}-{wr}"
    fs_.EXTRA_WORKLOADS[name] = (None, job("split", (ws, wr)))
    fs_.fix_knob(fs, ws)
    r = fs_.measure(machine, fs, name, runtime)
    if r["kb_at_open"] != ws or r["kb_after"] != wr:
        raise RuntimeError(f"{fs.knob}: read_ahead_kb {r['kb_at_open']} at the stream's open and "
                           f"{r['kb_after']} after, not {ws} and {wr}")
    return brief(r)


def describe_fixed(cell, kb, i):
    p = cell["points"]
    parts = []
    if str(kb) in p["stream"]:
        parts.append(f"stream {p['stream'][str(kb)][i]['stream_mbs']:.1f} MB/s")
    if str(kb) in p["rand"]:
        r = p["rand"][str(kb)][i]
        parts.append(f"rand {r['rand_iops']:.0f} IOPS ({r['rand_kib_per_access']} KiB/fault)")
    if str(kb) in p["pair"]:
        pr = p["pair"][str(kb)][i]
        parts.append(f"pair {pr['stream_mbs']:.1f} MB/s + {pr['rand_iops']:.0f} IOPS "
                     f"({pr['rand_kib_per_access']} KiB/fault)")
    return "; ".join(parts)


# --- scoring -----------------------------------------------------------------

def median_of(runs, key):
    xs = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(xs) if xs else None


def score(cell):
    """Each reader's best fixed window alone, every pair window and radaemon's
    runs against them, and the pair's best window."""
    p = cell["points"]
    alone = {}
    for kind, key in (("stream", "stream_mbs"), ("rand", "rand_iops")):
        med = {int(kb): median_of(v, key) for kb, v in p[kind].items()}
        best_kb = max(med, key=med.get) if med else None
        alone[kind] = {"kb": best_kb, "best": med.get(best_kb), "medians": med}
    bs, br = alone["stream"]["best"], alone["rand"]["best"]
    pair = {}
    for kb, v in p["pair"].items():
        s, r = median_of(v, "stream_mbs"), median_of(v, "rand_iops")
        pair[int(kb)] = {"stream": s, "rand": r, "stream_ratio": s / bs, "rand_ratio": r / br,
                         "worse": min(s / bs, r / br), "kib_per_fault": median_of(v, "rand_kib_per_access")}
    pair_kb = max(pair, key=lambda k: pair[k]["worse"]) if pair else None
    out = {"alone": alone, "pair": pair, "pair_kb": pair_kb, "iterations": []}
    for e in cell["iterations"]:
        runs = e["runs"]
        rows = []
        for label, rs in (("first", runs[:1]), ("later", runs[1:])):
            if not rs:
                continue
            s = users.together([r["stream_mbs"] for r in rs], True)
            r = users.together([r["rand_iops"] for r in rs], True)
            row = {"which": label, "stream": s, "rand": r, "stream_ratio": s / bs,
                   "rand_ratio": r / br}
            if pair_kb is not None:
                row["stream_vs_pair"] = s / pair[pair_kb]["stream"]
                row["rand_vs_pair"] = r / pair[pair_kb]["rand"]
            row["meets"] = row["stream_ratio"] >= TARGET and row["rand_ratio"] >= TARGET
            rows.append(row)
        out["iterations"].append(rows)
    return out


def spread(runs, key):
    xs = [r[key] for r in runs if r.get(key) is not None]
    if len(xs) < 2:
        return ""
    return f" [{min(xs):.3g}-{max(xs):.3g}]"


def all_runs(data):
    for c in data["cells"]:
        for v in list(c["points"].values()) + [c.get("split", {})]:
            for runs in v.values():
                yield from runs
        for e in c["iterations"]:
            yield from e["runs"]


def markdown(data):
    f2 = lambda x: "-" if x is None else f"{x:.2f}"
    repaired = [r for r in all_runs(data) if repair_stream(r).get("stream_from_device")]
    lines = [f"# A stream and a random reader of one device (issue 45), {data['date']}, "
             f"Linux {data['kernel']}", "",
             f"Command: `{data['command']}`" + (f", {data['duration_s'] / 60:.1f} minutes"
                                                 if "duration_s" in data else "") + ".", ""]
    if data.get("quick"):
        lines += ["**A --quick run: it checks the machinery; its numbers are not results.**", ""]
    lines += [f"ext4 over each class's device model. *stream*: `dd bs=4k` of a {STREAM_MIB} MiB "
              "file (fs.py's dd1 reader), no memory limit; *rand*: fs.py's mmap-rand reader "
              "(random 4 KiB accesses through mmap of a 1 GiB file, seed 7) in a 256 MiB memory "
              "cgroup; *pair*: both started together. Every job on a fresh mount (a cold cache), "
              f"{data['runtime']} s. Fixed windows: {data['repeat']} job(s) of each kind each "
              f"(median [min-max]); radaemon: a fresh daemon (an empty state, no wait) and "
              f"{data['runs']} pair jobs, {data['iterations']} iterations. Ratios are against each "
              "reader's best fixed window alone; the pair's best window is the one whose worse "
              "ratio is highest. *KiB/fault*: what the random reader's process read from storage "
              "per access (its read-around).", "",
              f"Load average (1 min) before and after each iteration: {data.get('load', '-')}.", ""]
    if repaired:
        lines += [f"{len(repaired)} job(s) lost dd's summary: their stream MB/s is what the device "
                  "served less what the random reader's process read (marked * here and "
                  "`stream_from_device` in the JSON).", ""]
    for c in data["cells"]:
        s = score(c)
        a = s["alone"]
        if a["stream"]["best"] is None or a["rand"]["best"] is None:
            continue
        lines += [f"## {c['class']} ({c['device']}, kernel {c['kernel_kb']} KiB)", "",
                  f"Best alone: stream {a['stream']['best']:.1f} MB/s at {a['stream']['kb']} KiB, "
                  f"rand {a['rand']['best']:.0f} IOPS at {a['rand']['kb']} KiB." + (
                      f" Pair's best fixed window: **{s['pair_kb']} KiB** (worse reader at "
                      f"{f2(s['pair'][s['pair_kb']]['worse'])} of its best alone)."
                      if s["pair_kb"] is not None else ""), "",
                  "| window | stream alone MB/s | rand alone IOPS (KiB/fault) | pair: stream MB/s (/best) "
                  "| pair: rand IOPS (/best) (KiB/fault) | pair: worse ratio |",
                  "|---|---|---|---|---|---|"]
        P = c["points"]
        for kb in sorted({int(k) for v in P.values() for k in v}):
            st, rd, pr = (P[k].get(str(kb), []) for k in KINDS)
            q = s["pair"].get(kb)
            cols = [f"{median_of(st, 'stream_mbs'):.1f}{spread(st, 'stream_mbs')}" if st else "-",
                    f"{median_of(rd, 'rand_iops'):.0f}{spread(rd, 'rand_iops')} "
                    f"({median_of(rd, 'rand_kib_per_access'):.0f})" if rd else "-"]
            if q:
                cols += [f"{q['stream']:.1f}{spread(pr, 'stream_mbs')} ({q['stream_ratio']:.2f})",
                         f"{q['rand']:.0f}{spread(pr, 'rand_iops')} ({q['rand_ratio']:.2f}) "
                         f"({q['kib_per_fault']:.0f})", f"{q['worse']:.2f}"]
            else:
                cols += ["-", "-", "-"]
            lines.append(f"| {kb} | " + " | ".join(cols) + " |")
        if c.get("split"):
            earlier = data.get("oracle_cells", {}).get(c["class"])
            lines += ["", "A window per file (no daemon): the stream opened at the first window, "
                      "then the random reader at the second" + (
                          f"; in brackets against the best alone of `{data['oracle_from']}` "
                          f"(stream {earlier['alone']['stream']['best']:.1f} MB/s at "
                          f"{earlier['alone']['stream']['kb']} KiB, rand "
                          f"{earlier['alone']['rand']['best']:.0f} IOPS at "
                          f"{earlier['alone']['rand']['kb']} KiB)" if earlier else "") + ":", "",
                      "| stream/rand windows | stream MB/s (/best alone) | rand IOPS (/best alone) "
                      "| KiB/fault | worse ratio |", "|---|---|---|---|---|"]
            for key, v in c["split"].items():
                sm, rm = median_of(v, "stream_mbs"), median_of(v, "rand_iops")
                rs, rr = sm / a["stream"]["best"], rm / a["rand"]["best"]
                more = ""
                if earlier:
                    es, er = sm / earlier["alone"]["stream"]["best"], rm / earlier["alone"]["rand"]["best"]
                    more = f" [{es:.2f}, {er:.2f}]"
                lines.append(f"| {key} | {sm:.1f}{spread(v, 'stream_mbs')} ({rs:.2f}) | "
                             f"{rm:.0f}{spread(v, 'rand_iops')} ({rr:.2f}) | "
                             f"{median_of(v, 'rand_kib_per_access'):.0f} | {min(rs, rr):.2f}{more} |")
        if not c["iterations"]:
            continue
        lines += ["", "radaemon, the pair (run 1: first job; 2-N: later jobs together):", "",
                  "| iteration | job | windows at open -> after (changes, s from the job's start) "
                  "| stream MB/s (/best alone, /pair best) | rand IOPS (/best alone, /pair best) "
                  "| KiB/fault | each >= 0.90 |",
                  "|---|---|---|---|---|---|---|"]
        for e, rows in zip(c["iterations"], s["iterations"]):
            for k, r in enumerate(e["runs"]):
                ch = ", ".join(f"{kb}@{t:g}" for t, kb in r["windows"][1:]) or "none"
                lines.append(
                    f"| {e['iteration'] + 1} | run {k + 1} | {r['kb_at_open']} -> {r['kb_after']} "
                    f"({ch}) | {r['stream_mbs']:.1f}{'*' if r.get('stream_from_device') else ''} "
                    f"({r['stream_mbs'] / a['stream']['best']:.2f}) | "
                    f"{r['rand_iops']:.0f} ({r['rand_iops'] / a['rand']['best']:.2f}) | "
                    f"{r['rand_kib_per_access']:.0f} | |")
            for row in rows:
                lines.append(
                    f"| {e['iteration'] + 1} | **{'run 1' if row['which'] == 'first' else 'runs 2-N'}** | | "
                    f"{row['stream']:.1f} ({row['stream_ratio']:.2f}, {f2(row.get('stream_vs_pair'))}) | "
                    f"{row['rand']:.0f} ({row['rand_ratio']:.2f}, {f2(row.get('rand_vs_pair'))}) | | "
                    f"{'yes' if row['meets'] else '**no**'} |")
        lines += ["", "radaemon's windows (each iteration's daemon log; during a job, the time "
                  "from its start):", ""]
        for e in c["iterations"]:
            timed_lines = {line for r in e["runs"] for _, line in r.get("log", [])}
            lines += [f"- it {e['iteration'] + 1}, before or between the jobs: `{line}`"
                      for line in e["decisions"] if ": read_ahead_kb " in line and line not in timed_lines]
            for k, r in enumerate(e["runs"]):
                for t, line in r.get("log", []):
                    lines.append(f"- it {e['iteration'] + 1} run {k + 1} +{t:g} s: `{line}`")
        busy = [r["cpu_busy"] for v in c["points"].values() for runs in v.values() for r in runs] + \
            [r["cpu_busy"] for e in c["iterations"] for r in e["runs"]]
        short = [f"{kind} {kb}" for kind in ("stream", "pair") for kb, v in c["points"][kind].items()
                 for r in v if r["stream_s"] < data["runtime"] - 0.5]
        lines += ["", f"CPU busy during the jobs (both cores): {min(busy):.0%}-{max(busy):.0%}."
                  + (f" Streams that reached the end of the file before the runtime: "
                     f"{', '.join(short)}." if short else ""), ""]
    return "\n".join(lines) + "\n"


def save(data, args):
    loads = [f"{x[0][0]:.2f}/{x[1][0]:.2f}" for c in data["cells"] for x in c["load"]]
    data["load"] = ", ".join(loads) or "-"
    data["duration_s"] = time.monotonic() - args.started
    with open(args.json_path, "w") as f:
        json.dump(data, f, indent=1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--classes", help="comma-separated (default hdd-7200,ssd-ctrl)")
    p.add_argument("--sweep", help="fixed values, KiB (default 4,16,128,512,2048,8192)")
    p.add_argument("--repeat", type=int, default=2, help="jobs of every kind and fixed value")
    p.add_argument("--iterations", type=int, help="fresh daemons per class (default 3; --quick 1)")
    p.add_argument("--runs", type=int, default=3, help="radaemon's pair jobs per daemon (0: none)")
    p.add_argument("--kinds", default=",".join(KINDS),
                   help="the jobs at every fixed window, of stream, rand, pair")
    p.add_argument("--split", default="",
                   help="WS/WR,...: the pair with the stream opened at WS KiB and the random "
                        "reader at WR KiB (a window per file), each round")
    p.add_argument("--oracle-from", metavar="JSON",
                   help="also score against each reader's best alone in an earlier run's JSON")
    p.add_argument("--runtime", type=int, help="seconds a job runs (default 12; --quick 5)")
    p.add_argument("--interval-ms", type=int)
    p.add_argument("--builddir", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--results", default=os.path.join(HERE, "results"))
    p.add_argument("--report-only", metavar="JSON")
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    quick = args.quick
    defaults = {"classes": "ssd-ctrl" if quick else "hdd-7200,ssd-ctrl",
                "sweep": "16,2048" if quick else "4,16,128,512,2048,8192",
                "iterations": 1 if quick else 3, "runtime": 5 if quick else 12}
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if args.report_only:
        with open(args.report_only) as f:
            print(markdown(json.load(f)), end="")
        return
    if args.runtime > 15:
        p.error(f"--runtime at most 15: the stream's {STREAM_MIB} MiB must outlast the job")
    args.classes = [c for c in args.classes.split(",") if c]
    for c in args.classes:
        if c not in CLASSES or not CLASSES[c].model:
            p.error(f"{c}: a model class is needed")
    args.sweep = sorted({int(x) for x in args.sweep.split(",") if x})
    args.kinds = [k for k in args.kinds.split(",") if k]
    if set(args.kinds) - set(KINDS):
        p.error(f"--kinds: of {', '.join(KINDS)}")
    args.split = [tuple(int(x) for x in pair.split("/")) for pair in args.split.split(",") if pair]
    args.builddir = os.path.abspath(args.builddir)
    if os.geteuid() != 0:
        sys.exit("mixed.py: run as root")
    fs_.own_mount_namespace(__file__)
    per_class = (args.repeat * len(args.sweep) * len(KINDS) + args.iterations * args.runs) \
        * (args.runtime + 1.5) + args.iterations * 2 + 60
    log(f"mixed.py: {len(args.classes)} classes: about {len(args.classes) * per_class / 60:.0f} minutes")
    stem = time.strftime("%Y-%m-%d-%H%M") + f"-{os.uname().release}-mixed" + ("-quick" if quick else "")
    os.makedirs(args.results, exist_ok=True)
    args.json_path = os.path.join(args.results, stem + ".json")
    args.started = time.monotonic()
    data = {"date": time.strftime("%Y-%m-%d %H:%M"), "kernel": os.uname().release,
            "command": " ".join(["mixed.py"] + sys.argv[1:]), "quick": quick,
            "runtime": args.runtime, "repeat": args.repeat, "runs": args.runs,
            "iterations": args.iterations, "sweep": args.sweep, "builddir": args.builddir,
            "stream_mib": STREAM_MIB, "kinds": args.kinds, "split": args.split,
            "oracle_from": args.oracle_from, "cells": []}
    if args.oracle_from:
        with open(args.oracle_from) as f:
            earlier = json.load(f)
        data["oracle_cells"] = {c["class"]: {"date": earlier["date"], "alone": score(c)["alone"]}
                                for c in earlier["cells"]}
    warn_if_foreign_daemon()
    with Machine() as machine:
        machine.builddir = args.builddir
        for cls in args.classes:
            run_class(machine, cls, args, data)
    save(data, args)
    report = markdown(data)
    with open(args.json_path[:-len(".json")] + ".md", "w") as f:
        f.write(report)
    print(report, end="")
    log(f"mixed.py: wrote {args.json_path[:-len('.json')]}.md")


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, Interrupted):
        sys.exit("mixed.py: interrupted; everything it made is removed")
