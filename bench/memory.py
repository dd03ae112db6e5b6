#!/usr/bin/env python3
"""The memory suite (issue 44): many streams in a memory limit.

Each cell is a (device class, memory limit, stream count N): N `cat` of N
different files at once on ext4 over the class's modelled device, the
readers in a memory cgroup (v1 memory.limit_in_bytes, or v2 memory.max) of
the limit, or in none ("none"), each job on a fresh mount (a cold cache).
Every job reads the same total data whatever N (N files of total/N MiB), so
the cells of a class differ only in how many streams share the disk and the
memory. A window larger than the readers' memory holds is read, evicted
and read again: the device reads more than the job gets (*device MiB*
against *data MiB*), and the job reads slower than at a smaller window.

Modes: the fixed values of --sweep, each a job of its own (the best is the
cell's oracle; 128 KiB is the kernel's), and radaemon as users meet it
(users.py, start mode nowait): a fresh daemon (a new, empty state
directory) on the device as the kernel leaves it, then --runs jobs at
once, --iterations times with a fresh daemon each. Run 1 is at the
daemon's prior and reported; runs 2-4 together (total work over total
time) are scored. Targets: runs 2-4 together >= 0.90 of the oracle in
every cell and iteration, and no run 2-4 more than 5 % below the kernel's
128 KiB.

Every job is capped at --cap seconds and scored as bytes read over the
time it ran: a thrashing window does not take forever.

  bench/memory.py --quick            ssd-ctrl, 16 streams, 64 MiB, 128 and 1024 KiB, 1 iteration
  bench/memory.py                    2 classes x 3 limits x 3 stream counts, 7 fixed values,
                                     3 iterations
  bench/memory.py --report-only bench/results/X-memory.json

Run as root from a build tree (--builddir); it makes loop devices
5000-5999 and radaemon-bench-* cgroups, mounts under its temporary
directory, and removes all of it when it ends. Hold
/run/radaemon-bench.lock while measuring.
"""
import argparse
import json
import os
import sys
import time

import fs as fs_
import users
from classes import CLASSES
from daemon import warn_if_foreign_daemon
from machine import Interrupted, Machine, log

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1024 ** 2
KERNEL_KB = 128
LIMITS = {"64M": 64 * MiB, "256M": 256 * MiB, "none": None}
# Data per job by class: 5-30 s a job at good windows.
DATA_MIB = {"hdd-7200": 512, "ssd-ctrl": 1024}
# For the estimate only: what a job reads at about 128 KiB.
TYPICAL_MBS = {"hdd-7200": 60, "ssd-ctrl": 180}
TARGET_ORACLE = 0.90
TARGET_KERNEL = 0.95


def workload_name(limit, n):
    return f"cat{n}-{limit}"


def files(n):
    return [f"mem{n}-{i}" for i in range(n)]


def streams_job(n):
    """fs.py's EXTRA_WORKLOADS run: n cats of the n files at once, each
    through a wc that outlives a capped run's SIGINT (fs.py's cat4)."""
    def run(machine, fs, group, runtime):
        count = "(trap '' INT; wc -c)"
        line = " & ".join(f"(cat {fs.path(f)} | {count})" for f in files(n)) + "; wait"
        out, _, s = fs_.timed(machine, group, line, runtime)
        return sum(int(x) for x in out.split()) / s / 1e6, s
    return run


def populate(fs, data_mib, counts):
    """For each N: N files of data_mib / N MiB, written once per class."""
    log(f"memory: writing {len(counts)} x {data_mib} MiB on {fs.name}")
    for n in counts:
        for f in files(n):
            fs_.sh(f"dd if=/dev/zero of={fs.path(f)} bs=1M count={data_mib // n} status=none")
    fs_.sh("sync")


def served_mib(run):
    return run["device"]["read_bytes"] / MiB if "device" in run else None


def data_mib(run):
    """What the readers got: the score is bytes over the seconds it ran."""
    return run["score"] * 1e6 * run["seconds"] / MiB


def brief(run):
    return {"score": run["score"], "seconds": run["seconds"], "kb_at_open": run["kb_at_open"],
            "kb_after": run["kb_after"], "data_mib": round(data_mib(run), 1),
            "device_mib": None if served_mib(run) is None else round(served_mib(run), 1),
            "device": run.get("device")}


def run_cell(machine, fs, cls, limit, n, args):
    name = workload_name(limit, n)
    fs_.EXTRA_WORKLOADS[name] = (LIMITS[limit], streams_job(n))
    log(f"cell {cls}/{limit}/{n} streams on {fs.name}")
    cell = {"class": cls, "limit": limit, "limit_bytes": LIMITS[limit], "streams": n,
            "data_mib": args.data[cls], "points": {}, "iterations": [],
            "load": [fs_.loadavg()]}
    for kb in sorted(set(args.sweep) | {KERNEL_KB}):
        runs = [brief(fs_.run_fixed(machine, fs, name, kb, args.cap)) for _ in range(args.repeat)]
        cell["points"][str(kb)] = runs
        log(f"  {kb} KiB: " + " ".join(f"{r['score']:.4g} MB/s ({r['device_mib']:.0f} MiB read)"
                                       for r in runs))
    for it in range(args.iterations):
        tag = f"memory-{it}-{cls}-{limit}-{n}"
        entry = fs_.run_repeat(machine, fs, name, args.runs, args.cap, args.builddir,
                               args.interval_ms, tag)
        cell["iterations"].append({
            "iteration": it, "state_fresh": entry["state_fresh"],
            "runs": [brief(r) for r in entry["runs"]], "timeline": entry["timeline"],
            "decisions": entry["decisions"]})
        log(f"  radaemon {it + 1}/{args.iterations}: " + " ".join(
            f"{r['score']:.4g}@{r['kb_at_open']}->{r['kb_after']}" for r in entry["runs"]))
    cell["load"].append(fs_.loadavg())
    return cell


def score(cell):
    """The oracle, 128 KiB's score, and each iteration against both."""
    kb, best = users.oracle(cell["points"], True)
    kernel = users.oracle({KERNEL_KB: cell["points"].get(str(KERNEL_KB), [])}, True)[1]
    out = {"oracle_kb": kb, "oracle": best, "kernel": kernel, "iterations": []}
    for entry in cell["iterations"]:
        scores = [r["score"] for r in entry["runs"]]
        rest = users.together(scores[1:], True)
        out["iterations"].append({
            "first": users.ratio(scores[0], best, True),
            "rest": users.ratio(rest, best, True),
            "rest_vs_kernel": users.ratio(rest, kernel, True),
            "worst_vs_kernel": users.ratio(min(scores[1:]), kernel, True) if scores[1:] else None})
    its = out["iterations"]
    out["meets_oracle"] = bool(its) and all(i["rest"] >= TARGET_ORACLE for i in its)
    out["meets_kernel"] = bool(its) and all(i["worst_vs_kernel"] >= TARGET_KERNEL for i in its)
    return out


def windows(entry):
    """The daemon's "read_ahead_kb X -> Y" lines, without their reasons."""
    return [line for line in entry["decisions"] if ": read_ahead_kb " in line]


def markdown(data):
    f2 = lambda x: "-" if x is None else f"{x:.2f}"
    mib = lambda x: "-" if x is None else f"{x:.0f}"
    lines = [f"# Memory suite (issue 44), {data['date']}, Linux {data['kernel']}", "",
             f"Command: `{data['command']}`" + (f", {data['duration_s'] / 60:.1f} minutes"
                                                 if "duration_s" in data else "") + ".", ""]
    if data.get("quick"):
        lines += ["**A --quick run: it checks the machinery; its numbers are not results.**", ""]
    lines += [f"Each job: N `cat` of N different files at once on ext4 over the class's device "
              f"model, the readers in a memory cgroup of the limit (none: no limit), a fresh mount "
              f"(a cold cache); every job of a class reads the same data whatever N "
              f"({', '.join(f'{k}: {v} MiB' for k, v in data['data_mib'].items())}), capped at "
              f"{data['cap']} s and scored as bytes read over the time it ran (MB/s). Fixed "
              f"values: {data['repeat']} job(s) each; the oracle is the best. radaemon: a fresh "
              f"daemon (an empty state directory, start mode nowait) and {data['runs']} jobs, "
              f"{data['iterations']} iteration(s); run 1 is at the prior, *2-{data['runs']}* is "
              f"runs 2-{data['runs']} together (total work over total time) against the oracle, "
              f"*/128* the same against 128 KiB and *worst/128* the worst of those runs alone. "
              "*device MiB* is what the model served (its `read_bytes`): far above the data "
              "the readers got is a window evicted before it was read.", "",
              f"The machine (2 cores) is shared with another developer's compiles and unit tests: "
              f"load average (1 min) between cells {data.get('load', '-')}. Numbers from a shared "
              "machine are not results.", ""]
    lines += ["| class | limit | N | oracle | 128 KiB | radaemon runs 1-4: MB/s@window after "
              "(device MiB) | 2-4/oracle | 2-4/128 | worst/128 | >=0.90 | >=0.95 of 128 |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    missed = []
    for c in data["cells"]:
        s = score(c)
        its = c["iterations"]
        runs = "<br>".join(" ".join(f"{r['score']:.0f}@{r['kb_after']}({mib(r['device_mib'])})"
                                    for r in e["runs"]) for e in its) or "-"
        col = lambda key: "<br>".join(f2(i[key]) for i in s["iterations"]) or "-"
        lines.append(f"| {c['class']} | {c['limit']} | {c['streams']} | {s['oracle']:.0f} @ "
                     f"{s['oracle_kb']} | {'-' if s['kernel'] is None else format(s['kernel'], '.0f')} | {runs} | "
                     f"{col('rest')} | {col('rest_vs_kernel')} | {col('worst_vs_kernel')} | "
                     f"{'yes' if s['meets_oracle'] else '**no**'} | "
                     f"{'yes' if s['meets_kernel'] else '**no**'} |")
        if its and not (s["meets_oracle"] and s["meets_kernel"]):
            missed.append(c)
    n = sum(1 for c in data["cells"] if c["iterations"])
    ok1 = sum(score(c)["meets_oracle"] for c in data["cells"])
    ok2 = sum(score(c)["meets_kernel"] for c in data["cells"])
    lines += ["", f"Targets: runs 2-{data['runs']} together >= {TARGET_ORACLE} of the oracle in "
                  f"every iteration: {ok1} of {n} cells; no run 2-{data['runs']} more than 5 % "
                  f"below 128 KiB: {ok2} of {n} cells.", ""]
    suspect = []
    for c in data["cells"]:
        s = score(c)
        for i, r in zip(s["iterations"], c["iterations"]):
            if i["rest"] and i["rest"] > users.SUSPECT:
                suspect.append(f"{c['class']}/{c['limit']}/{c['streams']} iteration "
                               f"{r['iteration'] + 1}: 2-4/oracle {i['rest']:.2f}")
        for kb, v in c["points"].items():
            for r in v:
                if r["device_mib"] is not None and r["device_mib"] < 0.9 * r["data_mib"]:
                    suspect.append(f"{c['class']}/{c['limit']}/{c['streams']} {kb} KiB: the "
                                   f"device served {r['device_mib']:.0f} MiB of "
                                   f"{r['data_mib']:.0f} read (a cache answered)")
        for e in c["iterations"]:
            for k, r in enumerate(e["runs"]):
                if r["device_mib"] is not None and r["device_mib"] < 0.9 * r["data_mib"]:
                    suspect.append(f"{c['class']}/{c['limit']}/{c['streams']} radaemon "
                                   f"{e['iteration'] + 1} run {k + 1}: the device served "
                                   f"{r['device_mib']:.0f} MiB of {r['data_mib']:.0f} read")
            if not e["state_fresh"]:
                suspect.append(f"{c['class']}/{c['limit']}/{c['streams']} iteration "
                               f"{e['iteration'] + 1}: the daemon's state was not empty")
    lines += ["Suspect (a ratio above 1.20, a device serving less than the readers got, a "
              "state not fresh): " + ("; ".join(suspect) if suspect else "none") + ".", ""]
    lines += ["## Every cell", ""]
    for c in data["cells"]:
        s = score(c)
        lines.append(f"- {c['class']} {c['limit']} {c['streams']} streams ({c['data_mib']} MiB "
                     f"a job): fixed " + "; ".join(
                         f"{kb}: " + ", ".join(f"{r['score']:.1f} MB/s {mib(r['device_mib'])} MiB"
                                               + (f" (capped, {r['data_mib']:.0f} MiB read)"
                                                  if r["seconds"] >= data["cap"] - 0.5 else "")
                                               for r in v)
                         for kb, v in c["points"].items()))
        for e, i in zip(c["iterations"], s["iterations"]):
            lines.append(f"  - radaemon iteration {e['iteration'] + 1}: " + "; ".join(
                f"run {k + 1} {r['score']:.1f} MB/s, {mib(r['device_mib'])} MiB, "
                f"{r['kb_at_open']} -> {r['kb_after']} KiB" for k, r in enumerate(e["runs"]))
                + f"; first/oracle {f2(i['first'])}")
            lines += [f"    - `{line}`" for line in windows(e)]
    if missed:
        lines += ["", "Cells that miss a target: " + ", ".join(
            f"{c['class']}/{c['limit']}/{c['streams']}" for c in missed)
            + " (their decision lines are above; the JSON has the daemon's every line on the device).", ""]
    return "\n".join(lines) + "\n"


def estimate_s(args, cells):
    """A rough duration and its bound: every job at about 128 KiB's speed, or at the cap."""
    typical = bound = 0
    for cls, _, _ in cells:
        jobs = len(set(args.sweep) | {KERNEL_KB}) * args.repeat + args.iterations * args.runs
        typical += jobs * (min(args.cap, args.data[cls] * MiB / 1e6 / TYPICAL_MBS[cls]) + 1.5) \
            + args.iterations * 1.5
        bound += jobs * (args.cap + 1.5) + args.iterations * 1.5
    writes = sum(len(args.streams) * args.data[c] * MiB / 1e6 / 150 for c in args.classes)
    return typical + writes, bound + writes


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--classes", help="comma-separated (default hdd-7200,ssd-ctrl)")
    p.add_argument("--limits", help=f"of {', '.join(LIMITS)} (default all)")
    p.add_argument("--streams", help="stream counts (default 4,16,64)")
    p.add_argument("--sweep", help="fixed values, KiB (default 128,256,...,8192)")
    p.add_argument("--repeat", type=int, default=1, help="jobs of every fixed value")
    p.add_argument("--iterations", type=int, help="fresh daemons per cell (default 3; --quick 1)")
    p.add_argument("--runs", type=int, default=4, help="radaemon's jobs per daemon (at least 2)")
    p.add_argument("--cap", type=int, default=60, help="seconds a job may take at most")
    p.add_argument("--hdd-mib", type=int, help=f"data per job on hdd-7200 (default {DATA_MIB['hdd-7200']})")
    p.add_argument("--ssd-mib", type=int, help=f"data per job on ssd-ctrl (default {DATA_MIB['ssd-ctrl']})")
    p.add_argument("--interval-ms", type=int)
    p.add_argument("--builddir", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--results", default=os.path.join(HERE, "results"))
    p.add_argument("--report-only", metavar="JSON")
    p.add_argument("--quick", action="store_true",
                   help="ssd-ctrl, 16 streams, 64M, 128 and 1024 KiB, 1 iteration, 512 MiB")
    args = p.parse_args()
    quick = args.quick
    defaults = {"classes": "ssd-ctrl" if quick else "hdd-7200,ssd-ctrl",
                "limits": "64M" if quick else ",".join(LIMITS),
                "streams": "16" if quick else "4,16,64",
                "sweep": "128,1024" if quick else "128,256,512,1024,2048,4096,8192",
                "iterations": 1 if quick else 3,
                "ssd_mib": 512 if quick else DATA_MIB["ssd-ctrl"],
                "hdd_mib": DATA_MIB["hdd-7200"]}
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if args.report_only:
        with open(args.report_only) as f:
            print(markdown(json.load(f)), end="")
        return
    if args.runs < 2:
        p.error("--runs must be 2 or more (run 1, then runs 2-N)")
    args.classes = [c for c in args.classes.split(",") if c]
    for c in args.classes:
        if c not in DATA_MIB:
            p.error(f"unknown class {c} (have {', '.join(DATA_MIB)})")
    args.limits = [x for x in args.limits.split(",") if x]
    for x in args.limits:
        if x not in LIMITS:
            p.error(f"unknown limit {x} (have {', '.join(LIMITS)})")
    args.streams = [int(x) for x in args.streams.split(",") if x]
    args.sweep = [int(x) for x in args.sweep.split(",") if x]
    args.data = {"hdd-7200": args.hdd_mib, "ssd-ctrl": args.ssd_mib}
    args.builddir = os.path.abspath(args.builddir)
    if os.geteuid() != 0:
        sys.exit("memory.py: run as root")
    fs_.own_mount_namespace(__file__)

    cells = [(c, x, n) for c in args.classes for x in args.limits for n in args.streams]
    typical, bound = estimate_s(args, cells)
    log(f"memory.py: {len(cells)} cells x ({len(set(args.sweep) | {KERNEL_KB})} fixed values x "
        f"{args.repeat} + {args.iterations} daemons x {args.runs} jobs): about "
        f"{typical / 60:.0f} minutes, at most {bound / 60:.0f} if every job hit the {args.cap} s cap")
    stem = time.strftime("%Y-%m-%d-%H%M") + f"-{os.uname().release}-memory" + ("-quick" if quick else "")
    os.makedirs(args.results, exist_ok=True)
    json_path = os.path.join(args.results, stem + ".json")
    data = {"date": time.strftime("%Y-%m-%d %H:%M"), "kernel": os.uname().release,
            "command": " ".join(["memory.py"] + sys.argv[1:]), "quick": quick, "cap": args.cap,
            "repeat": args.repeat, "runs": args.runs, "iterations": args.iterations,
            "data_mib": {c: args.data[c] for c in args.classes}, "builddir": args.builddir,
            "estimate_s": round(typical), "cells": []}
    started = time.monotonic()
    warn_if_foreign_daemon()

    def save():
        loads = [x[0] for c in data["cells"] for x in c["load"]]
        data["load"] = f"{min(loads):.2f}-{max(loads):.2f}" if loads else "-"
        data["duration_s"] = time.monotonic() - started
        with open(json_path, "w") as f:
            json.dump(data, f, indent=1)

    with Machine() as machine:
        machine.builddir = args.builddir
        for cls in args.classes:
            fs = fs_.FsDevice(machine, CLASSES[cls], "ext4", workloads=())
            try:
                populate(fs, args.data[cls], args.streams)
                for limit in args.limits:
                    for n in args.streams:
                        data["cells"].append(run_cell(machine, fs, cls, limit, n, args))
                        save()
            finally:
                fs.close()
    save()
    report = markdown(data)
    with open(json_path[:-len(".json")] + ".md", "w") as f:
        f.write(report)
    print(report, end="")
    log(f"memory.py: wrote {json_path[:-len('.json')]}.md")


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, Interrupted):
        sys.exit("memory.py: interrupted; everything it made is removed")
