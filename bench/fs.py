#!/usr/bin/env python3
"""The file-system suite: real tools on ext4 and xfs over the costly classes.

The raw suite (run.py) reads block devices; users read files. Here each
cell is a (device class, file system, workload): the class's throttled loop
device gets a file system with a source-like tree and big files, and real
tools read them with a cold cache (the file system is mounted afresh before
every run, which drops its page cache):

  tar         tar -c of the tree (one jump per file on the disk), piped to wc
  pcat        cat over disjoint folders, 3 readers at once
  pdd-single  4 dd bs=4k readers of one big file, started together
  pdd-multi   4 dd bs=4k readers of 4 different big files
  mmap-rand   random 4 KiB mmap reads of a 1 GiB file, 256 MiB page cache
  phase       a scan of a big file, random mmap lookups in another, the scan again

Modes: fixed values (the sweep, whose best is the oracle) and radaemon in
repeat mode: a fresh daemon with an empty state on the device as the kernel
leaves it, then the same workload --repeat-runs times, every run scored
(what a nightly backup sees).

  bench/fs.py --classes hdd --fs ext4 --workloads tar,mmap-rand
  bench/fs.py --report-only bench/results/X-fs.json

Every run is capped at --runtime seconds (throughput over the time it ran).
Run as root from a build tree; it makes loop devices 5000-5999 and
radaemon-bench-* cgroups, mounts under its temporary directory, and removes
all of it when it ends. Hold /run/radaemon-bench.lock while measuring.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

import model
import modes as modes_
from classes import CLASSES, Device
from daemon import Daemon, warn_if_foreign_daemon
from machine import Interrupted, Machine, log, read_kb, set_kb, wait_idle

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1024 ** 2
FOLDERS = 6
SMALL_PER_FOLDER = 20   # files of 1 MiB
LARGE_PER_FOLDER = 3    # files of 4 MiB
BIG_FILES = 4           # of BIG_MIB each, for dd and the phase scans
BIG_MIB = 256
MMAP_MIB = 1024
MEM_LIMIT = 256 * MiB

# A random mmap reader: accesses per second over a time, or a fixed count.
MMAP_READER = r"""
import mmap, os, random, sys, time
path, seconds, count = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_RDONLY)
size = os.lseek(fd, 0, os.SEEK_END)
m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
rnd = random.Random(7)
end = time.monotonic() + seconds
n = 0
while time.monotonic() < end and (count == 0 or n < count):
    m[rnd.randrange(0, size // 4096) * 4096]
    n += 1
print(n)
"""

WORKLOADS = {
    "tar": ("MB/s", "tar -c of a source-like tree (6 folders, 120 files of 1 MiB, 18 of 4 MiB)"),
    "pcat": ("MB/s", "cat over disjoint folders, 3 readers at once"),
    "pdd-single": ("MB/s", "4 dd bs=4k readers of one 256 MiB file, started together"),
    "pdd-multi": ("MB/s", "4 dd bs=4k readers of 4 different 256 MiB files"),
    "mmap-rand": ("IOPS", "random 4 KiB mmap reads of a 1 GiB file with a 256 MiB page cache"),
    "phase": ("1/s", "scan 256 MiB (dd bs=4k), 400 random mmap lookups in a 1 GiB file, "
                     "the scan again; scored 100 / seconds"),
}


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True)


class FsDevice:
    """A class's loop device with a file system and its data."""

    def __init__(self, machine, cls, fstype):
        self.machine = machine
        self.device = Device(machine, cls)
        self.fstype = fstype
        self.mnt = machine.path(f"mnt-{cls.name}-{fstype}")
        os.makedirs(self.mnt)
        self.mounted = False
        machine.on_exit(self.umount)
        mkfs = {"ext4": "mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1",
                "xfs": "mkfs.xfs -q -f"}[fstype]
        sh(f"{mkfs} {self.device.node}")
        self.mount()
        self.populate()

    @property
    def name(self):
        return self.device.name

    def mount(self):
        # Every run mounts afresh (a cold cache), and ext4's lazyinit thread would
        # then read beside the workload: noinit_itable, no zeroing of inode
        # tables; no_prefetch_block_bitmaps, no reading of every group's block
        # bitmap (a seek across the disk each: it made tar runs on hdd-7200 take
        # 5.6 s instead of 2.1 whenever it overlapped them, 468 commands more).
        # noatime: the first read of each file would otherwise write its inode back.
        opts = ("-o noatime,noinit_itable,no_prefetch_block_bitmaps " if self.fstype == "ext4"
                else "-o noatime ")
        sh(f"mount {opts}{self.device.node} {self.mnt}")
        self.mounted = True

    def umount(self):
        if self.mounted:
            p = subprocess.run(["umount", self.mnt], capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError(f"cannot unmount {self.mnt}: {p.stderr.strip()}")
            self.mounted = False

    def cold(self):
        """A cold page cache for this file system alone (and the device's own)."""
        self.umount()
        wait_idle(self.name)
        subprocess.run(["blockdev", "--flushbufs", self.device.node], check=True)
        self.mount()

    def populate(self):
        log(f"fs: writing the data set on {self.fstype} over {self.name}")
        tree = os.path.join(self.mnt, "tree")
        for d in range(FOLDERS):
            folder = os.path.join(tree, f"src{d}")
            os.makedirs(folder)
            for i in range(SMALL_PER_FOLDER):
                sh(f"head -c {MiB} /dev/urandom >{folder}/file{i}.c")
            for i in range(LARGE_PER_FOLDER):
                sh(f"head -c {4 * MiB} /dev/urandom >{folder}/blob{i}.o")
        for i in range(BIG_FILES):
            sh(f"dd if=/dev/zero of={self.mnt}/big{i} bs=1M count={BIG_MIB} status=none")
        sh(f"dd if=/dev/zero of={self.mnt}/mmap bs=1M count={MMAP_MIB} status=none")
        sh("sync")

    def close(self):
        self.umount()


def timed(machine, group, argv, runtime):
    """Runs argv (a shell line) in group, at most runtime s: (stdout, seconds)."""
    t0 = time.monotonic()
    child = machine.spawn(["timeout", "-s", "INT", str(runtime), "bash", "-c", argv],
                          preexec_fn=group.join, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    out, err = child.communicate()
    machine.stop(child)
    seconds = time.monotonic() - t0
    if child.returncode not in (0, 124, 130):
        raise RuntimeError(f"{argv} failed ({child.returncode}): {err.decode(errors='replace')}")
    return out.decode(), err.decode(), seconds


def dd_bytes(err):
    """Bytes copied, summed over every dd's summary on stderr."""
    return sum(int(line.split()[0]) for line in err.splitlines() if "bytes" in line and "copied" in line)


def measure(machine, fs, workload, runtime):
    fs.cold()
    group = fs.device.cgroup(MEM_LIMIT if workload in ("mmap-rand", "phase") else None)
    mnt = fs.mnt
    kb_at_open = read_kb(fs.name)
    counted = model.stats(fs.name) if fs.device.cls.model else {}
    reader = machine.path("mmap_reader.py")
    with open(reader, "w") as f:
        f.write(MMAP_READER)
    if workload == "tar":
        out, _, s = timed(machine, group, f"tar -cf - -C {mnt} tree | wc -c", runtime)
        score = int(out.split()[0]) / s / 1e6
    elif workload == "pcat":
        groups = [" ".join(f"{mnt}/tree/src{d}/*" for d in range(k, FOLDERS, 3)) for k in range(3)]
        line = " & ".join(f"(cat {g} | wc -c)" for g in groups) + "; wait"
        out, _, s = timed(machine, group, line, runtime)
        score = sum(int(x) for x in out.split()) / s / 1e6
    elif workload in ("pdd-single", "pdd-multi"):
        files = [f"{mnt}/big0"] * 4 if workload == "pdd-single" else \
            [f"{mnt}/big{i}" for i in range(4)]
        line = " & ".join(f"dd if={f} of=/dev/null bs=4k" for f in files) + "; wait"
        _, err, s = timed(machine, group, line, runtime)
        score = dd_bytes(err) / s / 1e6
    elif workload == "mmap-rand":
        out, _, s = timed(machine, group, f"python3 {reader} {mnt}/mmap {runtime} 0", runtime + 30)
        score = int(out.split()[0]) / min(s, runtime)
    elif workload == "phase":
        line = (f"dd if={mnt}/big1 of=/dev/null bs=4k status=none && "
                f"python3 {reader} {mnt}/mmap 1000 400 >/dev/null && "
                f"dd if={mnt}/big2 of=/dev/null bs=4k status=none")
        _, _, s = timed(machine, group, line, 10 * runtime)
        score = 100 / s
    else:
        raise ValueError(workload)
    r = {"score": score, "seconds": round(s, 2), "kb_at_open": kb_at_open, "kb_after": read_kb(fs.name)}
    if counted:
        # What the model served this run: commands, seeks, cache hits, bytes.
        after = model.stats(fs.name)
        r["device"] = {k: after[k] - counted.get(k, 0) for k in
                       ("reads", "read_bytes", "writes", "seeks", "skips", "cache_hits")}
    return r


def run_fixed(machine, fs, workload, kb, runtime):
    set_kb(fs.name, kb)
    r = measure(machine, fs, workload, runtime)
    if r["kb_after"] != kb:
        raise RuntimeError(f"{fs.name}: read_ahead_kb moved from {kb} to {r['kb_after']}")
    return r


def run_repeat(machine, fs, workload, runs, runtime, builddir, interval_ms, tag):
    """A fresh daemon with an empty state on a device as the kernel leaves it; runs scored."""
    fs.device.reset()
    daemon = Daemon(machine, builddir, [fs.name], tag=tag, interval_ms=interval_ms)
    daemon.start()
    results = []
    try:
        with modes_.Timeline(fs.name) as timeline:
            for _ in range(runs):
                results.append(measure(machine, fs, workload, runtime))
        daemon.check_tracing()
    finally:
        daemon.stop()
    return {"runs": results, "timeline": timeline.changes, "decisions": daemon.decisions(fs.name)}


def run_cell(machine, fs, workload, sweep, args):
    log(f"cell {fs.device.cls.name}/{fs.fstype}/{workload} on {fs.name}")
    points = {}
    for kb in sweep:
        points[kb] = [run_fixed(machine, fs, workload, kb, args.runtime) for _ in range(args.repeat)]
        log(f"  {kb} KiB: " + " ".join(f"{r['score']:.4g}" for r in points[kb]))
    cell = {"class": fs.device.cls.name, "fs": fs.fstype, "workload": workload,
            "unit": WORKLOADS[workload][0], "points": {str(k): v for k, v in points.items()}}
    if args.repeat_runs:
        tag = f"daemon-{fs.device.cls.name}-{fs.fstype}-{workload}"
        cell["radaemon"] = run_repeat(machine, fs, workload, args.repeat_runs, args.runtime,
                                      args.builddir, args.interval_ms, tag)
        log("  radaemon: " + " ".join(f"{r['score']:.4g}@{r['kb_at_open']}"
                                      for r in cell["radaemon"]["runs"]))
    return cell


def score_cell(cell):
    """The oracle, the default, and radaemon's runs against them."""
    med = {int(k): statistics.median(r["score"] for r in v) for k, v in cell["points"].items()}
    best_kb = max(med, key=med.get)
    out = {"oracle_kb": best_kb, "oracle": med[best_kb], "default": med.get(128)}
    if "radaemon" in cell:
        runs = [r["score"] for r in cell["radaemon"]["runs"]]
        out["runs"] = runs
        out["last_ratio"] = runs[-1] / med[best_kb]
        # Five runs together against five at the best fixed value: total work over total time.
        out["together_ratio"] = len(runs) / sum(1 / r for r in runs) / med[best_kb]
        if med.get(128):
            out["worst_vs_default"] = min(runs) / med[128]
    return out


def markdown(data):
    lines = [f"# File-system suite, {data['date']}, Linux {data['kernel']}", "",
             f"Command: `{data['command']}`", "",
             "Each run starts with the file system mounted afresh (a cold page cache) and is "
             f"capped at {data['runtime']} s. The oracle is the best median of the fixed values "
             "measured; radaemon runs in repeat mode: a fresh daemon with an empty state, then "
             f"the workload {data['repeat_runs']} times, every run scored (what a nightly job "
             "sees). *together* is the runs' total work over their total time against the "
             "oracle's.", "",
             "| class | fs | workload | unit | fixed (median) | oracle | radaemon runs (KiB at open) "
             "| last/oracle | together/oracle | worst/default |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for cell in data["cells"]:
        s = score_cell(cell)
        fixed = " ".join(f"{k}:{statistics.median(r['score'] for r in v):.3g}"
                         for k, v in cell["points"].items())
        runs = " ".join(f"{r['score']:.3g}({r['kb_at_open']})"
                        for r in cell.get("radaemon", {}).get("runs", []))
        fmt = lambda x: f"{x:.2f}" if x is not None else "-"
        lines.append(f"| {cell['class']} | {cell['fs']} | {cell['workload']} | {cell['unit']} | "
                     f"{fixed} | {s['oracle']:.3g} @ {s['oracle_kb']} | {runs} | "
                     f"{fmt(s.get('last_ratio'))} | {fmt(s.get('together_ratio'))} | "
                     f"{fmt(s.get('worst_vs_default'))} |")
    lines += ["", "Workloads:", ""] + [f"- `{w}` ({u}): {d}" for w, (u, d) in WORKLOADS.items()]
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--classes", default="hdd-7200,ssd-ctrl")
    p.add_argument("--fs", default="ext4,xfs")
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--sweep", default="16,128,512,2048,8192", help="fixed values, KiB")
    p.add_argument("--repeat", type=int, default=1, help="runs of every fixed value")
    p.add_argument("--repeat-runs", type=int, default=5, help="radaemon's scored runs (0: none)")
    p.add_argument("--runtime", type=int, default=10, help="seconds a run may take at most")
    p.add_argument("--interval-ms", type=int)
    p.add_argument("--builddir", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--results", default=os.path.join(HERE, "results"))
    p.add_argument("--report-only", metavar="JSON")
    args = p.parse_args()
    args.builddir = os.path.abspath(args.builddir)

    if args.report_only:
        with open(args.report_only) as f:
            data = json.load(f)
        print(markdown(data), end="")
        return
    if os.geteuid() != 0:
        sys.exit("fs.py: run as root")
    classes = [c for c in args.classes.split(",") if c]
    for c in classes:
        if c not in CLASSES:
            sys.exit(f"fs.py: unknown class {c}")
    workloads = [w for w in args.workloads.split(",") if w]
    for w in workloads:
        if w not in WORKLOADS:
            sys.exit(f"fs.py: unknown workload {w} (have {', '.join(WORKLOADS)})")
    sweep = [int(x) for x in args.sweep.split(",") if x]

    stem = time.strftime("%Y-%m-%d-%H%M") + f"-{os.uname().release}-fs"
    os.makedirs(args.results, exist_ok=True)
    data = {"date": time.strftime("%Y-%m-%d %H:%M"), "kernel": os.uname().release,
            "command": " ".join(["fs.py"] + sys.argv[1:]), "runtime": args.runtime,
            "repeat_runs": args.repeat_runs, "cells": []}
    json_path = os.path.join(args.results, stem + ".json")
    warn_if_foreign_daemon()
    with Machine() as machine:
        machine.builddir = args.builddir
        for c in classes:
            for fstype in [f for f in args.fs.split(",") if f]:
                fs = FsDevice(machine, CLASSES[c], fstype)
                try:
                    for w in workloads:
                        data["cells"].append(run_cell(machine, fs, w, sweep, args))
                        with open(json_path, "w") as f:
                            json.dump(data, f, indent=1)
                finally:
                    fs.close()
    with open(os.path.join(args.results, stem + ".md"), "w") as f:
        f.write(markdown(data))
    print(markdown(data), end="")
    log(f"fs.py: wrote {json_path[:-5]}.md")


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, Interrupted):
        sys.exit("fs.py: interrupted; everything it made is removed")
