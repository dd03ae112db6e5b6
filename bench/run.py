#!/usr/bin/env python3
"""radaemon's benchmark: is it faster than any one fixed read_ahead_kb?

Emulates device classes with throttled loop devices, runs workloads on them
with fixed values (a sweep, whose best is the oracle), the kernel default,
tuned's 4 MiB and radaemon, measures the daemon's overhead, and writes
bench/results/<date>-<kernel>.md with one PNG per device class.

  run.py --quick                     a few cells, short phases (< 3 minutes)
  run.py                             every cell (about 41 minutes)
  run.py --classes hdd --workloads seq,mmap-rand --modes sweep,radaemon
  run.py --report-only results/X.json   re-render a report
  run.py --user                      what users see: no wait and an idle start,
                                     runs 1 and 2-5 scored, 3 fresh iterations
  run.py --user --quick              2 cells, 2 iterations: the machinery (minutes)

Run as root from a build tree (after make): it makes loop devices 5000-5999
and radaemon-bench-* cgroups, and removes them all when it ends.
"""
import argparse
import dataclasses
import json
import os
import platform
import shutil
import subprocess
import sys
import time

import modes as modes_
import overhead
import report
import users
from classes import CLASSES, MODEL_CLASSES, Device
from daemon import warn_if_foreign_daemon
from machine import Interrupted, Machine, cgroup_version, log
from workloads import WORKLOADS

HERE = os.path.dirname(os.path.abspath(__file__))

PRESETS = {
    # Six training runs: the windows radaemon tries one after another (128,
    # 512, 2048, 8192 KiB and back) each need a stream opened under them.
    "full": {"runtime": 2, "train": 5, "train_runs": 6, "repeat": 3, "cells": None,
             "sweep": None},
    # A few cells that show each effect once: the probe, a bandwidth-bound
    # stream, and random mmap reads where a large window hurts.
    "quick": {"runtime": 1, "train": 3, "train_runs": 3, "repeat": 2,
              "cells": [("tiny-stick", "probe"), ("ssd-ctrl", "seq"), ("hdd-7200", "mmap-rand")],
              "sweep": {"tiny-stick": [4, 16], None: [16, 128, 512, 2048]}},
    # The user suite's check of its machinery: a stream and random mmap
    # reads, each on the class where a wrong first window costs most.
    "user-quick": {"runtime": 1, "train": 3, "train_runs": 3, "repeat": 1, "iterations": 2,
                   "cells": [("ssd-ctrl", "seq"), ("hdd-7200", "mmap-rand")],
                   "sweep": {None: [4, 128, 2048]}},
}


@dataclasses.dataclass
class Timing:
    runtime: int        # seconds of a measured run
    train: int          # seconds of one training run before radaemon's measured run
    train_runs: int     # training runs, each a new process that opens the device afresh
    repeat: int
    interval_ms: int | None

    def runs_for(self, workload):
        # A probe is over in a moment: train with two probes, as two plugs would.
        return 2 if workload.name == "probe" else self.train_runs


def split(value):
    return [v for v in value.split(",") if v] if value else None


def command_output(*argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        return "?"


def machine_info(builddir):
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        ram = int(f.readline().split()[1]) * 1024
    with open("/etc/debian_version") as f:
        debian = f.read().strip()
    repo = os.path.dirname(HERE)
    return {"date": time.strftime("%Y-%m-%d"), "kernel": os.uname().release,
            "kernel_version": os.uname().version, "cpu": cpu, "cores": os.cpu_count(),
            "ram_gib": ram / 2 ** 30, "debian": debian, "fio": command_output("fio", "--version"),
            "python": platform.python_version(), "cgroup": cgroup_version(),
            "radaemon": command_output(os.path.join(builddir, "daemon", "radaemon"), "--version"),
            "commit": command_output("git", "-C", repo, "describe", "--always", "--dirty"),
            "load_start": " ".join(f"{x:.2f}" for x in os.getloadavg())}


def plan(args, preset):
    """The (class, workload) cells to run, with each class's sweep."""
    classes = split(args.classes) or list(MODEL_CLASSES)
    workloads = split(args.workloads) or list(WORKLOADS)
    for c in classes:
        if c not in CLASSES:
            sys.exit(f"run.py: unknown class '{c}' (have {', '.join(CLASSES)})")
    for w in workloads:
        if w not in WORKLOADS:
            sys.exit(f"run.py: unknown workload '{w}' (have {', '.join(WORKLOADS)})")
    cells = [(c, w) for c in classes for w in CLASSES[c].workloads if w in workloads]
    if preset["cells"] and not (args.classes or args.workloads):
        cells = preset["cells"]
    if not cells:
        sys.exit("run.py: no cell left: each class runs only its own workloads "
                 "(the tiny stick only the probe, the others all but the probe)")
    sweeps = preset["sweep"] or {}
    chosen = {}
    for c, _ in cells:
        cls = CLASSES[c]
        sweep = sweeps.get(c, sweeps.get(None))
        chosen[c] = dataclasses.replace(cls, sweep=sweep) if sweep else cls
    return cells, chosen


def notes(timing, chosen, quick):
    tiny = chosen.get("tiny-stick")
    modelled = any(c.model for c in chosen.values())
    n = [
        ("Each device class is served by the device model (bench/ra-devmodel, parameters "
         "and sources in bench/classes/*.conf, validated by bench/validate.py): a loop device "
         "with direct I/O over a file the model serves through FUSE, so the block layer is "
         "real and the model answers each command when the device it names would (a disk "
         "seeks only when a command jumps, and its cache reads ahead). The model server runs "
         "in the bench's own cgroup; a workload's cgroup has only its memory limit."
         if modelled else
         "Each device class is a loop device over a sparse file (direct I/O to the file, so "
         "there is no second page cache), made a class by the read throttle of the cgroup the "
         "workload runs in (cgroup v1 blkio.throttle.read_iops_device and read_bps_device), "
         "queue/rotational, queue/max_sectors_kb and its size. Every mode of a cell runs on the "
         "same loop device with the same throttle."),
        "Before every run the device's page cache is dropped (BLKFLSBUF on that device only; "
        "the kernel also drops it at the last close, and that close waits for readahead in "
        "flight). The run is a new process that opens the device afresh, so the file takes "
        "the read_ahead_kb in sysfs at that moment; it is checked before and after every "
        "fixed run.",
        "fio runs with buffered I/O, invalidate=0 and fadvise_hint=0 (its default hints would "
        "double the window of sequential jobs and switch readahead off for random ones), and "
        "its fixed random seed, so every mode of a cell does the same reads. The random "
        "workloads run in a memory cgroup limited to 256 MiB over a 4 GiB data set.",
        "KiB read from the device come from /sys/block/<dev>/stat, taken once nothing is in "
        "flight, so the tail of the last readahead window counts.",
        f"Repeats run round-robin ({timing.repeat} rounds over all modes of a cell), so a slow "
        "moment of the machine hurts every mode alike. default and 4 MiB are the sweep's "
        "128 and 4096 KiB points: the same measurement, not a second one.",
        "The oracle is the best median of every fixed value measured in the cell (the sweep, "
        "and default and 4 MiB where the sweep lacks them). Picking the best of many noisy medians "
        "favours the oracle a little: a ratio of 0.97 with the same value as the oracle is "
        "noise.",
        f"radaemon: for every run a new daemon with an empty state_dir and an allow-list of "
        f"only this device starts on the device as the kernel leaves it (128 KiB), tunes it "
        f"at start (coldplug), then trains on the workload: {timing.train_runs} runs of "
        f"{timing.train} s (the probe: two probes), each a new process with a fresh open and "
        "the device's cache dropped, as a file takes the window in force when it is opened; "
        "then a new process measures. "
        "The daemon keeps running through the measured run. No udevd runs during workload "
        "measurements.",
        "Without udevd the daemon sees the loop devices' transport as \"loop\"; the USB "
        "classes are therefore non-rotational, which gives the same prior the daemon gives "
        "transport usb (128 KiB, capped by size).",
        "The loop driver sets read_ahead_kb 2560 at attach (shown in the class table); real "
        "devices of these classes that report no optimal I/O size get the kernel's 128 KiB, "
        "which is what default means here.",
        "The thr-nvme class is throttled at 20000 IOPS and 400 MB/s, what this 2-core VM "
        "sustains at every window: unthrottled, the loop device was CPU-bound and the same "
        "run varied threefold with other work on the machine, which measured the machine "
        "rather than the window.",
        "Other work (another engineer's tests) may run on this machine at the same time; "
        "the load averages above show how busy it was.",
    ]
    if tiny:
        n.append(f"The tiny stick (15 kB/s) is kept cheap: it runs only the probe, scored by "
                 f"KiB read (which its speed does not change), and its sweep stops at "
                 f"{max(tiny.sweep)} KiB, with 4 MiB measured as its own mode: a probe there "
                 "takes over 20 s.")
    if quick:
        n.append("This is a --quick run: few cells, a short sweep, short phases. Its numbers "
                 "show the instrument works; use the full run for conclusions.")
    return n


def run_workloads(machine, args, timing, cells, chosen, modes, data, save):
    devices = {}
    for cname, wname in cells:
        if cname not in devices:
            devices[cname] = Device(machine, chosen[cname])
            data["classes"][cname] = devices[cname].describe()
        device, workload = devices[cname], WORKLOADS[wname]
        data["workloads"][wname] = dataclasses.asdict(workload)
        log(f"cell {cname}/{wname} on {device.name}")
        data["cells"].append(modes_.run_cell(machine, device, workload, modes, timing,
                                             args.builddir))
        save()


def run_user_suite(machine, args, timing, cells, chosen, data, save):
    """users.py's suite: the whole suite args.iterations times; in each, every
    cell's share of the fixed values' rounds, then each start mode under a
    fresh daemon with args.user_runs jobs scored."""
    devices = {}
    for cname, wname in cells:
        if cname not in devices:
            devices[cname] = Device(machine, chosen[cname])
            data["classes"][cname] = devices[cname].describe()
        w = WORKLOADS[wname]
        data["workloads"][wname] = dataclasses.asdict(w)
        data["cells"].append({"class": cname, "workload": wname, "unit": w.unit,
                              "higher_is_better": w.higher_is_better, "modes": ["sweep"],
                              "points": {}, "radaemon": [], "user": []})
    for it in range(args.iterations):
        for cell, (cname, wname) in zip(data["cells"], cells):
            device, workload = devices[cname], WORKLOADS[wname]
            for _ in users.fixed_rounds(it, args.iterations, timing.repeat):
                for kb in chosen[cname].sweep:
                    cell["points"].setdefault(str(kb), []).append(
                        modes_.run_fixed(machine, device, workload, kb, timing.runtime))
            for start in args.starts:
                tag = f"user-{it}-{start}-{cname}-{wname}"
                entry = modes_.run_user(machine, device, workload, timing.runtime, args.builddir,
                                        tag, start, args.idle_s, args.user_runs, timing.interval_ms)
                entry["iteration"] = it
                cell["user"].append(entry)
                log(f"iteration {it + 1}/{args.iterations} {cname}/{wname} {start}: " + " ".join(
                    f"{r['score']:.4g}@{r['kb_at_open']}" for r in entry["runs"]) + f" {workload.unit}")
            save()


def user_markdown(data):
    """The user suite's report (users.py), raw suite."""
    u = data["user"]
    m = data["machine"]
    lines = [f"# radaemon raw suite as users see it: {m['date']}, Linux {m['kernel']}", "",
             f"{m['radaemon']} at commit {m['commit']}; `{data['command']}`, "
             f"{data['duration_s'] / 60:.1f} minutes; {m['cpu']}, {m['cores']} cores; load average "
             f"at start {m['load_start']}, at end {m.get('load_end', '?')}.", ""]
    if data["preset"] == "user-quick":
        lines += ["**A --quick run: it checks the machinery; its numbers are not results.**", ""]
    lines += users.intro(u["iterations"], u["starts"], u["idle_s"], u["runs"], data["timing"]["runtime"])
    lines += [f"Fixed values: {data['sweep_note']}, {data['timing']['repeat']} run(s) each, spread "
              "over the iterations. The raw workloads read the block device (bench/README.md); the "
              "probe's score is KiB read, its ratios inverted.", ""]
    targets = [("raw suite, no wait, a user's second job (run 2)", "nowait", "run2", 0.95, 0.97,
                0.03, ()),
               ("raw suite, no wait, runs 2-5", "nowait", "rest", None, None, 0.03, ()),
               ("raw suite, idle start, first run", "idle", "first", None, None, 0.03, ())]
    lines += users.markdown(data["cells"], targets=targets)
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="few cells, short phases")
    parser.add_argument("--classes", help=f"comma-separated: {', '.join(CLASSES)}")
    parser.add_argument("--workloads", help=f"comma-separated: {', '.join(WORKLOADS)}")
    parser.add_argument("--modes", default=",".join(modes_.ALL_MODES),
                        help="comma-separated: sweep, default, 4mib, radaemon, fixed:N")
    parser.add_argument("--repeat", type=int, help="runs of every mode in every cell")
    parser.add_argument("--runtime", type=int, help="seconds of a measured run")
    parser.add_argument("--train", type=int, help="seconds of each of radaemon's training runs")
    parser.add_argument("--train-runs", type=int, help="radaemon's training runs per measurement")
    parser.add_argument("--interval-ms", type=int,
                        help="the daemon's interval_ms (default: the daemon's own)")
    parser.add_argument("--overhead", default="all",
                        help=f"comma-separated: {', '.join(overhead.ALL)}, or all, or none")
    parser.add_argument("--builddir", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--results", default=os.path.join(HERE, "results"),
                        help="where the report goes")
    parser.add_argument("--report-only", metavar="JSON", help="render a report from saved results")
    parser.add_argument("--user", action="store_true",
                        help="the user suite (users.py): every cell with no wait and with an idle "
                             "start, runs 1 and 2-5 scored, the whole suite --iterations times")
    parser.add_argument("--iterations", type=int,
                        help=f"--user: runs of the whole suite, each with fresh daemons "
                             f"(default {users.ITERATIONS}; --quick 2)")
    parser.add_argument("--starts", default=",".join(users.START_MODES),
                        help="--user: start modes, comma-separated: nowait, idle")
    parser.add_argument("--idle-s", type=float, default=users.IDLE_S,
                        help="--user: seconds the device sits idle before its first job in idle mode")
    parser.add_argument("--user-runs", type=int, default=users.USER_RUNS,
                        help="--user: scored jobs per cell and start mode")
    args = parser.parse_args()
    args.builddir = os.path.abspath(args.builddir)

    if args.report_only:
        with open(args.report_only) as f:
            data = json.load(f)
        write_report(data, os.path.dirname(os.path.abspath(args.report_only)),
                     os.path.basename(args.report_only)[:-len(".json")])
        return
    if args.user:
        try:
            args.starts = users.parse_starts(args.starts)
        except ValueError as e:
            sys.exit(f"run.py: {e}")
        if args.user_runs < 2:
            sys.exit("run.py: --user-runs must be 2 or more (run 1, then runs 2-N)")
    if os.geteuid() != 0:
        sys.exit("run.py: run as root (loop devices, sysfs, cgroups)")
    if not shutil.which("fio"):
        sys.exit("run.py: fio is missing (apt-get install fio)")
    if not shutil.which("gnuplot"):
        log("run.py: gnuplot is missing (apt-get install gnuplot-nox): no plots")

    name = "quick" if args.quick else "full"
    if args.user:
        name = "user-quick" if args.quick else "full"
    preset = PRESETS[name]
    if args.user:
        args.iterations = args.iterations or preset.get("iterations", users.ITERATIONS)
    timing = Timing(args.runtime or preset["runtime"], args.train or preset["train"],
                    args.train_runs or preset["train_runs"], args.repeat or preset["repeat"],
                    args.interval_ms)
    try:
        modes = modes_.parse(split(args.modes) or [])
    except ValueError as e:
        sys.exit(f"run.py: {e}")
    what = overhead.ALL if args.overhead == "all" else [] if args.overhead == "none" \
        else split(args.overhead)
    if args.user:
        what = []  # the user suite measures the cells alone
        modes = ["sweep"]
    for w in what:
        if w not in overhead.ALL:
            sys.exit(f"run.py: unknown overhead measurement '{w}'")
    cells, chosen = plan(args, preset) if modes else ([], {})

    info = machine_info(args.builddir)
    stem = f"{info['date']}-{info['kernel']}" + ("-user" if args.user else "") \
        + ("-quick" if args.quick else "")
    os.makedirs(args.results, exist_ok=True)
    sweeps = sorted({(min(c.sweep), max(c.sweep)) for c in chosen.values()})
    data = {"machine": info, "preset": name, "command": " ".join(["run.py"] + sys.argv[1:]),
            "timing": dataclasses.asdict(timing), "classes": {}, "workloads": {}, "cells": [],
            "sweep_note": "; ".join(f"{lo}…{hi} KiB by doubling" for lo, hi in sweeps),
            "notes": notes(timing, chosen, args.quick), "duration_s": 0}
    if args.user:
        data["user"] = {"iterations": args.iterations, "starts": args.starts,
                        "idle_s": args.idle_s, "runs": args.user_runs}
        fixed = max(len(c.sweep) for c in chosen.values())
        est = users.estimate_s(cells, args.iterations, args.starts, args.idle_s, args.user_runs,
                               timing.runtime + 1.0, fixed, timing.repeat)
        data["user"]["estimate_s"] = round(est)
        log(f"run.py: user suite, {len(cells)} cells x {len(args.starts)} start modes x "
            f"{args.iterations} iterations: about {est / 60:.0f} minutes")
    started = time.monotonic()
    json_path = os.path.join(args.results, stem + ".json")

    def save():
        data["duration_s"] = time.monotonic() - started
        with open(json_path + ".tmp", "w") as f:
            json.dump(data, f, indent=1)
        os.replace(json_path + ".tmp", json_path)

    warn_if_foreign_daemon()
    with Machine() as machine:
        machine.builddir = args.builddir
        if args.user:
            run_user_suite(machine, args, timing, cells, chosen, data, save)
        else:
            run_workloads(machine, args, timing, cells, chosen, modes, data, save)
    if what:
        with Machine() as machine:
            data["overhead"] = overhead.measure(machine, args.builddir, what, name)
    data["machine"]["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    save()
    write_report(data, args.results, stem)
    log(f"run.py: done in {data['duration_s'] / 60:.1f} minutes")


def write_report(data, directory, stem):
    if "user" in data:
        path = os.path.join(directory, stem + ".md")
        with open(path, "w") as f:
            f.write(user_markdown(data))
        log(f"run.py: wrote {path}")
        return
    plots = report.plots(data, directory, stem)
    path = os.path.join(directory, stem + ".md")
    with open(path, "w") as f:
        f.write(report.markdown(data, plots))
    log(f"run.py: wrote {path}" + (f" and {len(plots)} plots" if plots else ""))


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, Interrupted):
        sys.exit("run.py: interrupted; everything it made is removed")
