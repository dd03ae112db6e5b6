#!/usr/bin/env python3
"""bench/swap.py: does radaemon's vm.page-cluster swap in as fast as the best fixed value?

  bench/swap.py [--devices zram,hdd-7200,ssd-ctrl] [--patterns seq,rand,mix]
                [--values 0,1,2,3,4,5,6] [--repeat N] [--runs N] [--no-daemon] [--out FILE]

Cells are {swap device} x {re-read pattern}. The swap device is the only
swap there is: a zram device, or a device of the bench's device model
(bench/devmodel: hdd-7200 is rotational, ssd-ctrl is not) with swap written
directly on it. A process in a memory cgroup (v1) whose working set is three
times its limit writes its memory, so most of it goes out to swap, and then
re-reads it (tests/swap-workload.py): seq (every page in order), rand (a
random quarter), mix (a sequential walk interleaved with random pages). The
last re-read pass is timed, at every fixed page-cluster and with radaemon
deciding (from a fresh state: the prior of the device's class, then what it
learns during the earlier passes).

Score: radaemon's time against the best fixed value's (>= 0.95 of its speed
is the target) and against the kernel default 3 (never more than 5 % slower),
medians of several interleaved runs, with the spread between runs and a
verdict that tells a miss within noise from a real one. Also: swap-in
requests per MiB and throughput at 0, 3 and the best value, and what
radaemon logged (with --debug) in the .json.

Holds /run/radaemon-bench.lock while a device is measured, one device at a
time. Writes bench/results/<date>-<kernel>-swap.md and .json.
"""
import argparse
import contextlib
import datetime
import fcntl
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import model  # noqa: E402
import swapcell  # noqa: E402

PAGE_CLUSTER = "/proc/sys/vm/page-cluster"
MEMCG = "/sys/fs/cgroup/memory"
LOCK = "/run/radaemon-bench.lock"
WORKLOAD = os.path.join(SRC, "tests", "swap-workload.py")
PAGE = os.sysconf("SC_PAGE_SIZE")
# The working set, and the limit: the interpreter's own few MiB count too.
# zram swaps in at hundreds of MiB/s: a larger set, so a pass lasts long enough to time.
WS_MIB = {"zram": 192, "default": 48}
LIMIT_MIB = {"zram": 48, "default": 16}
SWAP_KIB = 256 * 1024
# Passes per run, the last one timed: radaemon learns during the others. A
# mixed pass on ssd-ctrl lasts half a second, less than radaemon's interval:
# two of them before the timed one.
PASSES = {"seq": 3, "rand": 2, "mix": 3}
# Runs per cell and value (times --repeat), odd so that the median is a run,
# the values interleaved. A random pass on the rotational disk takes 14 s and
# a mixed one 6 s: three runs there keep the whole bench under 40 minutes;
# zram does no swap readahead, and its cells differ by noise only.
RUNS = {
    "zram": {"seq": 3, "rand": 3, "mix": 3},
    "non-rotational": {"seq": 5, "rand": 5, "mix": 5},
    "rotational": {"seq": 5, "rand": 3, "mix": 3},
}


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def read(path):
    with open(path) as f:
        return f.read().strip()


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def vmstat():
    out = {}
    for line in read("/proc/vmstat").splitlines():
        k, v = line.split()
        if k in ("pswpin", "pswpout", "swap_ra", "swap_ra_hit"):
            out[k] = int(v)
    return out


def disk_stat(dev):
    f = read(f"/sys/block/{dev}/stat").split()
    return {"read_ios": int(f[0]), "read_sectors": int(f[2])}


def swaps():
    return read("/proc/swaps").splitlines()[1:]


# --- the swap device ------------------------------------------------------------------------

@contextlib.contextmanager
def zram_swap():
    index = int(read("/sys/class/zram-control/hot_add"))
    dev = f"zram{index}"
    try:
        write(f"/sys/block/{dev}/disksize", f"{SWAP_KIB}K")
        subprocess.run(["mkswap", f"/dev/{dev}"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["swapon", "-p", "32767", f"/dev/{dev}"], check=True)
        try:
            yield dev, "zram"
        finally:
            subprocess.run(["swapoff", f"/dev/{dev}"], check=False)
    finally:
        with contextlib.suppress(OSError):
            write(f"/sys/block/{dev}/reset", 1)
        write("/sys/class/zram-control/hot_remove", index)


@contextlib.contextmanager
def model_swap(cls):
    record = model.attach(cls)
    node = record["node"]
    dev = os.path.basename(node)
    try:
        # Swap on the device itself, of SWAP_KIB: a swap map for the whole
        # terabyte would cost hundreds of MiB of memory.
        subprocess.run(["mkswap", node, str(SWAP_KIB)], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["swapon", "-p", "32767", node], check=True)
        try:
            yield dev, "rotational" if read(f"/sys/block/{dev}/queue/rotational") == "1" else "non-rotational"
        finally:
            subprocess.run(["swapoff", node], check=False)
    finally:
        model.detach(dev, quiet=True)


# --- one measurement ------------------------------------------------------------------------

@contextlib.contextmanager
def daemon(builddir, dev, workdir, pin=None):
    """radaemon from the build tree, fresh state, the default interval; only dev as a disk;
    page-cluster pinned to pin if given."""
    state = os.path.join(workdir, "state")
    os.makedirs(state, exist_ok=True)
    conf = os.path.join(workdir, "radaemon.conf")
    with open(conf, "w") as f:
        f.write(f"[daemon]\ndevices = {dev}\nstate_dir = {state}\n")
        if pin is not None:
            f.write(f"[swap]\npage_cluster = {pin}\n")
    logf = open(os.path.join(workdir, "daemon.log"), "w")
    p = subprocess.Popen([os.path.join(builddir, "daemon", "radaemon"), "--foreground", "--debug", "--config", conf],
                         stdout=logf, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while "Managing" not in read(logf.name):
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"radaemon did not start: {read(logf.name)}")
            time.sleep(0.05)
        yield logf.name
    finally:
        p.terminate()
        p.wait(timeout=30)
        logf.close()


def measure(device, dev, pattern, value, builddir, workdir):
    """One cell at one value ("radaemon" or an int): the last pass, with its counters."""
    passes = PASSES[pattern]
    with contextlib.ExitStack() as stack:
        if value == "radaemon":
            # Whatever was there before radaemon: the kernel's default.
            write(PAGE_CLUSTER, 3)
            stack.enter_context(daemon(builddir, dev, workdir))
        elif str(value).startswith("pinned:"):
            # The control: radaemon running as in its runs, the value fixed from the start.
            pin = int(value.split(":")[1])
            write(PAGE_CLUSTER, pin)
            stack.enter_context(daemon(builddir, dev, workdir, pin))
        else:
            write(PAGE_CLUSTER, value)
        size = "zram" if device == "zram" else "default"
        cg = stack.enter_context(swapcell.memory_cgroup(LIMIT_MIB[size] << 20))
        proc = subprocess.Popen(
            ["sh", "-c", 'echo $$ >"$0/cgroup.procs" && exec python3 "$@"', cg, WORKLOAD, str(WS_MIB[size]), pattern,
             str(passes), "--wait"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        stack.callback(proc.kill)
        json.loads(proc.stdout.readline())
        result, passes_seen = None, []
        for n in range(passes):
            pc_before = int(read(PAGE_CLUSTER))
            vm0, d0 = vmstat(), disk_stat(dev)
            proc.stdin.write("go\n")
            proc.stdin.flush()
            line = json.loads(proc.stdout.readline())
            vm1, d1 = vmstat(), disk_stat(dev)
            result = {
                "pass": n, "seconds": line["seconds"], "touched": line["pages"],
                "page_cluster": [pc_before, int(read(PAGE_CLUSTER))],
                "pswpin": vm1["pswpin"] - vm0["pswpin"],
                "swap_ra": vm1.get("swap_ra", 0) - vm0.get("swap_ra", 0),
                "swap_ra_hit": vm1.get("swap_ra_hit", 0) - vm0.get("swap_ra_hit", 0),
                "read_ios": d1["read_ios"] - d0["read_ios"],
                "read_sectors": d1["read_sectors"] - d0["read_sectors"],
            }
            passes_seen.append({k: result[k] for k in ("seconds", "page_cluster", "pswpin", "swap_ra",
                                                        "swap_ra_hit", "read_ios")})
        result["first_pass_seconds"] = passes_seen[0]["seconds"]
        result["passes"] = passes_seen
        proc.stdin.close()
        proc.wait(timeout=60)
        if value == "radaemon":
            # What radaemon saw and did, for the report's reader and for tuning the policy.
            with open(os.path.join(workdir, "daemon.log")) as f:
                result["daemon_log"] = [line.rstrip("\n") for line in f if "Swap:" in line]
    return result


def measure_device(device, patterns, values, builddir, repeat, use_daemon, controls=()):
    cells = {}
    swap = zram_swap() if device == "zram" else model_swap(device)
    with swap as (dev, cls), tempfile.TemporaryDirectory(prefix="radaemon-bench-swap.") as tmp:
        log(f"{device}: swap on {dev} ({cls})")
        for pattern in patterns:
            runs = {}
            order = list(values) + (["radaemon"] if use_daemon else []) + [f"pinned:{c}" for c in controls]
            for r in range(repeat * RUNS[cls][pattern]):
                for value in order:
                    workdir = os.path.join(tmp, f"{pattern}-{value}-{r}")
                    os.makedirs(workdir)
                    res = measure(device, dev, pattern, value, builddir, workdir)
                    runs.setdefault(str(value), []).append(res)
                    log(f"{device} {pattern} {value}: {res['seconds']:.2f} s (pc {res['page_cluster']}), "
                        f"{res['pswpin']} pages in, {res['read_ios']} reads, ra {res['swap_ra']}/"
                        f"{res['swap_ra_hit']}")
            cells[pattern] = {"device": device, "dev": dev, "class": cls, "runs": runs}
    return cells


# --- the report -----------------------------------------------------------------------------

def median_run(runs):
    s = sorted(runs, key=lambda r: r["seconds"])
    return s[len(s) // 2]


def spread(runs):
    """(max - min) / median of the runs' times: how far apart runs of one value fall."""
    t = [r["seconds"] for r in runs]
    return (max(t) - min(t)) / statistics.median(t) if t else 0.0


def summarize(cell, values):
    fixed = {v: median_run(cell["runs"][str(v)]) for v in values if str(v) in cell["runs"]}
    best = min(fixed, key=lambda v: fixed[v]["seconds"])
    out = {"fixed": fixed, "best": best}
    if "radaemon" in cell["runs"]:
        rd = median_run(cell["runs"]["radaemon"])
        out["radaemon"] = rd
        out["vs_best"] = fixed[best]["seconds"] / rd["seconds"]
        if 3 in fixed:
            out["vs_default"] = fixed[3]["seconds"] / rd["seconds"]
        # A miss is within the noise when radaemon's fastest run is as fast as
        # the median of the value it misses, or its median is as fast as that
        # value's slowest run: the runs of the two overlap around the medians.
        out["noise"] = {}
        for name, v in (("best", best), ("default", 3)):
            if v not in fixed:
                continue
            ref = [r["seconds"] for r in cell["runs"][str(v)]]
            mine = [r["seconds"] for r in cell["runs"]["radaemon"]]
            out["noise"][name] = min(mine) <= fixed[v]["seconds"] or rd["seconds"] <= max(ref)
    return out


def per_mib(run):
    mib = run["pswpin"] * PAGE / (1 << 20)
    return (run["read_ios"] / mib if mib else 0.0), (mib / run["seconds"] if run["seconds"] else 0.0)


def verdict(s):
    miss = [name for name, key in (("best", "vs_best"), ("default", "vs_default")) if s.get(key, 1) < 0.95]
    if not miss:
        return "met"
    if all(s["noise"].get(name) for name in miss):
        return "missed, within noise"
    return "MISSED"


def report(results, values, meta):
    runs = ", ".join(f"{cls}: " + "/".join(str(n * meta["repeat"]) for n in per.values())
                     for cls, per in RUNS.items())
    lines = [f"# Swap-in at every vm.page-cluster, and radaemon's ({meta['date']}, {meta['kernel']})", "",
             f"Command: `{meta['command']}`", "",
             f"Load average (1, 5, 15 min) at the start {meta['load_start']}, at the end {meta['load_end']}; "
             f"{meta['minutes']:.0f} minutes in all.", "",
             f"Working set {WS_MIB['default']} MiB in a memory cgroup limited to {LIMIT_MIB['default']} MiB "
             f"(zram: {WS_MIB['zram']} in {LIMIT_MIB['zram']}); re-read passes per run "
             + ", ".join(f"{p}: {n}" for p, n in PASSES.items())
             + ", the last one timed (seconds). Runs per value, seq/rand/mix: " + runs
             + "; the values and radaemon interleaved, every run a new process; the table gives medians. "
             "radaemon starts every run from a fresh state with page-cluster at 3 and decides and learns "
             "during the earlier passes at its default interval (1 s). Devices: zram, and bench/devmodel's "
             "hdd-7200 (rotational) and ssd-ctrl (non-rotational), swap directly on the device.", "",
             "| device | pattern | " + " | ".join(f"pc {v}" for v in values) +
             " | best | radaemon (pc) | vs best | vs default 3 | verdict |",
             "|---|---|" + "---|" * len(values) + "---|---|---|---|---|"]
    met = True
    for device, cells in results.items():
        for pattern, cell in cells.items():
            s = summarize(cell, values)
            row = [device, pattern] + [f"{s['fixed'][v]['seconds']:.2f}" if v in s["fixed"] else "-" for v in values]
            row.append(str(s["best"]))
            if "radaemon" in s:
                rd = s["radaemon"]
                v = verdict(s)
                met = met and v == "met"
                row += [f"{rd['seconds']:.2f} ({rd['page_cluster'][0]}→{rd['page_cluster'][1]})",
                        f"{s['vs_best']:.2f}", f"{s.get('vs_default', 0):.2f}", v]
            else:
                row += ["-", "-", "-", "-"]
            lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Target (radaemon >= 0.95 of the best and of the default 3 in every cell): "
              f"{'met' if met else 'NOT met'}. A miss is called within noise when radaemon's runs and the "
              "missed value's overlap around their medians (radaemon's fastest run at least as fast as that "
              "value's median, or its median at least as fast as that value's slowest run).", "",
              "## Spread between runs: (slowest - fastest) / median, in %", "",
              "| device | pattern | runs | " + " | ".join(f"pc {v}" for v in values) + " | radaemon |",
              "|---|---|---|" + "---|" * (len(values) + 1)]
    for device, cells in results.items():
        for pattern, cell in cells.items():
            n = len(cell["runs"][str(values[0])])
            row = [device, pattern, str(n)] + [
                f"{spread(cell['runs'][str(v)]) * 100:.0f}" if str(v) in cell["runs"] else "-"
                for v in values + ["radaemon"]]
            lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## radaemon's page-cluster in the timed pass of every run (at its start→end) and its times",
              "", "| device | pattern | runs |", "|---|---|---|"]
    for device, cells in results.items():
        for pattern, cell in cells.items():
            if "radaemon" in cell["runs"]:
                lines.append(f"| {device} | {pattern} | " + ", ".join(
                    f"{r['page_cluster'][0]}→{r['page_cluster'][1]} {r['seconds']:.2f} s"
                    for r in cell["runs"]["radaemon"]) + " |")
    controls = [(device, pattern, k, cell) for device, cells in results.items()
                for pattern, cell in cells.items() for k in cell["runs"] if k.startswith("pinned:")]
    if controls:
        lines += ["", "## The control: radaemon running, page-cluster pinned", "",
                  "radaemon started as in its own runs (same configuration, --debug, the device managed "
                  "and traced) but with `[swap] page_cluster` pinned from the start: what is left between "
                  "it and the fixed value is the daemon being there, not its choice.", "",
                  "| device | pattern | value | fixed (median, min-max) | pinned daemon (median, min-max) "
                  "| radaemon (median) |", "|---|---|---|---|---|---|"]
        for device, pattern, k, cell in controls:
            v = k.split(":")[1]

            def med(runs):
                t = sorted(r["seconds"] for r in runs)
                return f"{statistics.median(t):.3f} ({t[0]:.2f}-{t[-1]:.2f})"
            fixed = cell["runs"].get(v)
            rd = cell["runs"].get("radaemon")
            lines.append(f"| {device} | {pattern} | {v} | {med(fixed) if fixed else '-'} | "
                         f"{med(cell['runs'][k])} | {med(rd) if rd else '-'} |")
    lines += ["", "## Requests per MiB swapped in, and swap-in throughput (MiB/s)", "",
              "| device | pattern | pc 0 | pc 3 | best (pc) | radaemon |", "|---|---|---|---|---|---|"]
    for device, cells in results.items():
        for pattern, cell in cells.items():
            s = summarize(cell, values)

            def fmt(run):
                rq, tp = per_mib(run)
                return f"{rq:.0f} req/MiB, {tp:.1f} MiB/s"
            row = [device, pattern, fmt(s["fixed"][0]) if 0 in s["fixed"] else "-",
                   fmt(s["fixed"][3]) if 3 in s["fixed"] else "-",
                   f"{fmt(s['fixed'][s['best']])} ({s['best']})",
                   fmt(s["radaemon"]) if "radaemon" in s else "-"]
            lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## Readahead hits (swap_ra_hit / swap_ra) in the timed pass of the median run", "",
              "| device | pattern | " + " | ".join(f"pc {v}" for v in values) + " | radaemon |",
              "|---|---|" + "---|" * (len(values) + 1)]
    for device, cells in results.items():
        for pattern, cell in cells.items():
            s = summarize(cell, values)
            runs = [s["fixed"].get(v) for v in values] + [s.get("radaemon")]
            lines.append("| " + " | ".join([device, pattern] + [
                "-" if r is None else f"{r['swap_ra_hit']}/{r['swap_ra']}" for r in runs]) + " |")
    return "\n".join(lines) + "\n", met


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", default="zram,hdd-7200,ssd-ctrl")
    ap.add_argument("--patterns", default="seq,rand,mix")
    ap.add_argument("--values", default="0,1,2,3,4,5,6")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--runs", type=int, help="runs per value in every cell, instead of the table's (a quick look)")
    ap.add_argument("--no-daemon", action="store_true")
    ap.add_argument("--control", default="", metavar="PC,...",
                    help="also runs with radaemon running and page-cluster pinned to each PC: "
                         "what the daemon's presence costs beside its choice")
    ap.add_argument("--builddir", default=os.environ.get("RA_BUILDDIR", os.path.join(SRC, "build")))
    ap.add_argument("--out", help="the report (default bench/results/<date>-<kernel>-swap.md)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/swap.py: needs root (swap, cgroups, loop devices)")
    os.environ["RA_BUILDDIR"] = os.path.abspath(args.builddir)

    values = [int(v) for v in args.values.split(",")]
    if args.runs:
        for per in RUNS.values():
            per.update({p: args.runs for p in per})
    patterns = args.patterns.split(",")
    meta = {"date": datetime.date.today().isoformat(), "kernel": platform.release(),
            "command": "bench/swap.py " + " ".join(sys.argv[1:]), "repeat": args.repeat}
    out = args.out or os.path.join(HERE, "results", f"{meta['date']}-{meta['kernel']}-swap.md")
    saved = read(PAGE_CLUSTER)
    meta["load_start"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    start = time.monotonic()
    results = {}
    try:
        for device in args.devices.split(","):
            with open(LOCK, "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if swaps():
                    sys.exit(f"bench/swap.py: there is swap already; it must be the only one: {swaps()}")
                try:
                    results[device] = measure_device(device, patterns, values, args.builddir, args.repeat,
                                                     not args.no_daemon,
                                                     [int(c) for c in args.control.split(",") if c])
                finally:
                    write(PAGE_CLUSTER, saved)
    finally:
        write(PAGE_CLUSTER, saved)
    meta["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    meta["minutes"] = (time.monotonic() - start) / 60
    text, met = report(results, values, meta)
    with open(out, "w") as f:
        f.write(text)
    with open(out[:-3] + ".json", "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    print(text)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
