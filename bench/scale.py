#!/usr/bin/env python3
"""Does radaemon keep up with hundreds of disks coming and going?

The reliability targets: 500 loop devices created and removed five times
while one daemon runs; every one tuned within a second of its event, none
missed, no file descriptor leaked, resident memory back to within 10 % of
where it started; coldplug of 500 devices in at most 1 s.

Run as root from a build tree (after make):

  scale.py                                  5 rounds of 500, coldplug x3 (about 3 minutes)
  scale.py --devices 50 --rounds 2 --coldplug-runs 1    a quick look
  scale.py --report-only results/X-scale.json           re-render a report

A round creates every device through /dev/loop-control (udev "add", no
medium yet) and attaches a 505 KiB sparse file with losetup: the kernel
raises read_ahead_kb to 2560 KiB and reports "change", and radaemon's prior
for so small a device is 4 KiB. A device's latency runs from the moment
udevd's "change" for that attachment (its DISKSEQ) was queued on our monitor
socket (SO_TIMESTAMPNS; the daemon's copy is queued at the same moment) to
the moment this process reads 4 back from sysfs; our polling counts against
the daemon, so it is an upper bound. Then every device is detached and
removed, and once udevd has sent every event of that and the daemon has read
them all, its open file descriptors and VmRSS are compared with those it had
before the first round. --heap-stats adds glibc's account of its heap.

It starts udevd if none runs (the daemon hears hotplug only through udevd)
and stops only the one it started; it makes loop devices at the top of
5000-5999 and removes them all when it ends, also on an error or Ctrl-C.
The report is bench/results/<date>-<kernel>-scale.md (and .json); an
"analysis" list added to the JSON by hand shows in a --report-only render.
"""
import argparse
import errno
import json
import os
import queue
import re
import select
import shutil
import socket
import subprocess
import sys
import threading
import time

from daemon import Daemon, warn_if_foreign_daemon
from machine import (LAST_INDEX, LOOP_CTL_ADD, Interrupted, Machine, log, loop_control,
                     read_kb, remove_loop, sysfs)
from overhead import (TINY_PRIOR_KB, Udevd, cpu_ns, make_loops, measure_coldplug, proc_status,
                      receive_event, summarize, tiny_image, udev_monitor)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULTS = {"devices": 500, "rounds": 5, "coldplug_runs": 3}
TARGET_LATENCY_S = 1.0
TARGET_RSS_SHARE = 0.10
TARGET_COLDPLUG_S = 1.0
LOG_WARNING = 4
SO_RCVBUFFORCE = 33
MONITOR_BUFFER_BYTES = 64 << 20
LOG_LINE = re.compile(r"^(?:<(\d)>)?(.*)$")
WRITE_LINE = re.compile(rf"read_ahead_kb \d+ -> {TINY_PRIOR_KB} KiB \(prior, on (\w+)\)")


# --- the daemon's log --------------------------------------------------------

class LogTail:
    """The daemon's log lines as (level, text), read on from where we stopped
    (a daemon started with log_levels: each line begins with <level>)."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.partial = b""

    def lines(self):
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            chunk = f.read()
        self.offset += len(chunk)
        parts = (self.partial + chunk).split(b"\n")
        self.partial = parts.pop()
        out = []
        for raw in parts:
            level, text = LOG_LINE.match(raw.decode(errors="replace")).groups()
            out.append((int(level) if level else 6, text))
        return out


def open_fds(pid):
    """The daemon's open descriptors: number -> what it points at."""
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out[fd] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            out[fd] = "?"
    return out


def state_identities(daemon):
    """The identities in the daemon's state file, which it keeps in memory too."""
    try:
        with open(os.path.join(daemon.dir, "state", "state")) as f:
            return [line.split()[1] for line in f if line.startswith("device ")]
    except FileNotFoundError:
        return []


def snapshot(daemon):
    fds = open_fds(daemon.pid)
    return {"fds": len(fds), "fd_targets": fds, "cpu_ms": cpu_ns(daemon.pid) / 1e6,
            "state_identities": state_identities(daemon), **proc_status(daemon.pid)}


def heap_stats(daemon, tail):
    """glibc's own account of the daemon's heap: bytes in use by malloc's
    callers, and bytes malloc holds from the system (in use or free but not
    given back). Asked through gdb (malloc_stats() prints to the daemon's
    stderr, its log), which stops the daemon for a moment: only on request."""
    tail.lines()
    p = subprocess.run(["gdb", "-p", str(daemon.pid), "-batch", "-nx",
                        "-ex", "call (void) malloc_stats()"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.1)
    text = [t for _, t in tail.lines()]
    if p.returncode != 0 or "Total (incl. mmap):" not in text:
        return None
    total = text[text.index("Total (incl. mmap):"):]

    def value(key):
        return next(int(t.split("=")[1]) for t in total if t.startswith(key))
    return {"heap_in_use_KiB": value("in use bytes") // 1024,
            "heap_held_KiB": value("system bytes") // 1024}


# --- one round ---------------------------------------------------------------

def attach_all(machine, indices, image, created, done, stop):
    """Creates and attaches each device; puts (name, diskseq or error, time) on done.

    Only what is in created is ours to remove: an index another program took
    meanwhile fails LOOP_CTL_ADD and stays theirs.

    Runs in a thread, so the main one can time the daemon while the storm
    goes on; stop ends it early (Ctrl-C in the main thread).
    """
    for index in indices:
        if stop.is_set():
            break
        name = f"loop{index}"
        try:
            loop_control(LOOP_CTL_ADD, index)
        except OSError as e:
            done.put((name, f"LOOP_CTL_ADD: {e}", time.time_ns()))
            continue
        machine.track_loop(index)
        created.append(index)
        p = subprocess.run(["losetup", f"/dev/{name}", image], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        if p.returncode != 0:
            done.put((name, f"losetup: {p.stderr.decode(errors='replace').strip()}",
                      time.time_ns()))
            continue
        done.put((name, int(sysfs(name, "diskseq")), time.time_ns()))


def monitor():
    """Our udev monitor, with room for every event of a round's removals.

    Nothing reads it while the devices are removed; SO_RCVBUF stops at
    net.core.rmem_max, SO_RCVBUFFORCE (root) does not.
    """
    sock = udev_monitor()
    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, MONITOR_BUFFER_BYTES)
    return sock


def drain_events(sock, ours, first_change):
    """Keeps the first "change" udevd sent for each (device, DISKSEQ) of ours.

    Returns how often the socket overflowed (events lost) meanwhile.
    """
    overruns = 0
    while select.select([sock], [], [], 0)[0]:
        try:
            props, stamp = receive_event(sock, 1)
        except OSError as e:
            if e.errno != errno.ENOBUFS:
                raise
            overruns += 1
            continue
        name = props.get("DEVNAME", "").removeprefix("/dev/")
        if props.get("ACTION") == "change" and name in ours and "DISKSEQ" in props:
            first_change.setdefault((name, int(props["DISKSEQ"])), stamp)
    return overruns


def measure_attach(machine, sock, indices, image, miss_after):
    """Attaches every device and times each from its udev event to radaemon's value."""
    ours = {f"loop{i}" for i in indices}
    done = queue.Queue()
    stop = threading.Event()
    created = []
    thread = threading.Thread(target=attach_all,
                              args=(machine, indices, image, created, done, stop), daemon=True)
    first_change = {}
    no_event_yet = {}   # name -> (diskseq, attached at): attached, no event seen
    pending = {}        # name -> event time: event seen, value not read back yet
    latency, missed, no_event, failed = {}, {}, {}, {}
    udevd_lag = {}      # name -> from losetup's return to udevd's event
    limit = int(miss_after * 1e9)
    overruns = 0
    t0 = time.monotonic()
    thread.start()
    try:
        while True:
            overruns += drain_events(sock, ours, first_change)
            while not done.empty():
                name, seq, at = done.get()
                if isinstance(seq, str):
                    failed[name] = seq
                else:
                    no_event_yet[name] = (seq, at)
            now = time.time_ns()
            for name, (seq, at) in list(no_event_yet.items()):
                if (name, seq) in first_change:
                    pending[name] = first_change[(name, seq)]
                    udevd_lag[name] = pending[name] - at
                    del no_event_yet[name]
                elif now - at > limit:
                    no_event[name] = read_kb(name)
                    del no_event_yet[name]
            for name, stamp in list(pending.items()):
                kb = read_kb(name)
                seen = time.time_ns()
                if kb == TINY_PRIOR_KB:
                    latency[name] = seen - stamp
                elif seen - stamp > limit:
                    missed[name] = kb
                else:
                    continue
                del pending[name]
            if not thread.is_alive() and done.empty() and not pending and not no_event_yet:
                break
            select.select([sock], [], [], 0.001 if pending else 0.01)
    finally:
        stop.set()
        thread.join()
    return {"attached": len(latency) + len(missed) + len(no_event),
            "seconds": time.monotonic() - t0,
            "latency_ns": latency, "missed": missed, "no_event": no_event, "failed": failed,
            "overruns": overruns, "created": created, "udevd_lag_ns": udevd_lag}


def remove_all(machine, indices):
    for index in indices:
        remove_loop(index)
        if not os.path.exists(f"/sys/block/loop{index}") and index in machine.loops:
            machine.loops.remove(index)


def netlink_sockets(pid):
    """The daemon's netlink sockets: inode -> (bytes queued, messages dropped)."""
    inodes = {int(t[8:-1]) for t in open_fds(pid).values() if t.startswith("socket:[")}
    out = {}
    with open(f"/proc/{pid}/net/netlink") as f:
        next(f)
        for line in f:
            fields = line.split()
            if int(fields[9]) in inodes:
                out[int(fields[9])] = (int(fields[4]), int(fields[8]))
    return out


def wait_processed(daemon, names, timeout):
    """Waits until udevd has sent every event of the removals and the daemon
    has read them all: the devices are gone, udevd's queue is empty, and
    nothing waits on the daemon's netlink sockets. Returns whether it was so
    within timeout."""
    deadline = time.monotonic() + timeout
    while any(os.path.exists(f"/sys/block/{n}") for n in names):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    subprocess.run(["udevadm", "settle", f"-t{max(1, int(deadline - time.monotonic()))}"],
                   stderr=subprocess.DEVNULL)
    while daemon.process.poll() is None:
        if all(queued == 0 for queued, _ in netlink_sockets(daemon.pid).values()):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return False


def writes_on(lines):
    """How many of the daemon's writes of the prior came from which event."""
    out = {}
    for _, text in lines:
        m = WRITE_LINE.search(text)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0) + 1
    return out


def run_round(machine, daemon, tail, sock, indices, image, args):
    a = measure_attach(machine, sock, indices, image, args.miss_after)
    t0 = time.monotonic()
    remove_all(machine, a["created"])
    removing = time.monotonic() - t0
    processed = wait_processed(daemon, [f"loop{i}" for i in a["created"]], timeout=60)
    processed_s = time.monotonic() - t0
    time.sleep(args.settle)
    lines = tail.lines()
    alive = daemon.process.poll() is None
    warnings = [f"<{level}>{text}" for level, text in lines if level <= LOG_WARNING]
    row = {"devices": len(indices), "attached": a["attached"], "attach_s": a["seconds"],
           "latency_ms": summarize(a["latency_ns"].values(), 1e-6) if a["latency_ns"] else None,
           "over_target": sum(1 for ns in a["latency_ns"].values()
                              if ns > TARGET_LATENCY_S * 1e9),
           "missed": a["missed"], "no_event": a["no_event"], "failed": a["failed"],
           "monitor_overruns": a["overruns"],
           "udevd_lag_ms": summarize(a["udevd_lag_ns"].values(), 1e-6)
           if a["udevd_lag_ns"] else None,
           "writes_on": writes_on(lines),
           "removals_logged": sum(1 for _, t in lines if t.endswith(": removed.")),
           "remove_s": removing, "processed": processed, "processed_s": processed_s,
           "alive": alive, "warnings": warnings[:20], "warnings_total": len(warnings),
           "still_present": [f"loop{i}" for i in a["created"]
                             if os.path.exists(f"/sys/block/loop{i}")]}
    for name in list(a["missed"])[:5]:
        row.setdefault("missed_log", {})[name] = [t for _, t in lines if t.startswith(name + ":")]
    if alive:
        row.update(snapshot(daemon))
        row["netlink_drops"] = sum(d for _, d in netlink_sockets(daemon.pid).values())
        if args.heap_stats:
            row["heap"] = heap_stats(daemon, tail)
    else:
        row["exit"] = daemon.process.returncode
    return row


# --- the whole run -----------------------------------------------------------

def pick_indices(machine, n):
    """n free indices, from the top of the bench's range if it is free there:
    run.py and overhead.py take theirs from the bottom, and may run meanwhile."""
    try:
        return machine.unused_indices(n, start=LAST_INDEX + 1 - n)
    except RuntimeError:
        return machine.unused_indices(n)


def measure(machine, args):
    indices = pick_indices(machine, args.devices)
    names = [f"loop{i}" for i in indices]
    image = tiny_image(machine)
    out = {"indices": f"{indices[0]}-{indices[-1]}", "rounds": []}
    with Udevd(machine) as udevd:
        out["udevd"] = "started by the bench" if udevd.process else "already running"
        sock = monitor()
        daemon = None
        try:
            daemon = Daemon(machine, args.builddir, names, tag="scale", log_levels=True)
            daemon.start()
            tail = LogTail(daemon.log)
            time.sleep(args.baseline_settle)
            tail.lines()
            out["baseline"] = snapshot(daemon)
            if args.heap_stats:
                out["baseline"]["heap"] = heap_stats(daemon, tail)
            log(f"scale: baseline {out['baseline']['fds']} fds, "
                f"{out['baseline']['VmRSS_KiB']} KiB VmRSS")
            for r in range(args.rounds):
                row = run_round(machine, daemon, tail, sock, indices, image, args)
                out["rounds"].append(row)
                lat = row["latency_ms"] or {}
                log(f"scale: round {r + 1}: {row['attached']} tuned or missed, median "
                    f"{lat.get('median', 0):.1f} ms, max {lat.get('max', 0):.1f} ms, "
                    f"{len(row['missed'])} missed, {len(row['no_event'])} without an event, "
                    f"{row.get('fds', '-')} fds, {row.get('VmRSS_KiB', '-')} KiB VmRSS"
                    + ("" if row["alive"] else ", the daemon is DEAD"))
                if not row["alive"]:
                    break
            if daemon.process.poll() is None:
                machine.stop(daemon.process)
            out["exit"] = daemon.process.returncode
            daemon.process = None
        finally:
            sock.close()
            if args.keep_log and daemon:
                shutil.copyfile(daemon.log, args.keep_log)
        if args.coldplug_runs:
            log(f"scale: coldplug of {args.devices} devices, {args.coldplug_runs} runs")
            cold = make_loops(machine, args.devices, start=pick_indices(machine, args.devices)[0])
            subprocess.run(["udevadm", "settle", "-t", "30"], stderr=subprocess.DEVNULL)
            out["coldplug"] = measure_coldplug(machine, args.builddir, cold, [args.devices],
                                               args.coldplug_runs)[0]
            remove_all(machine, [int(n[4:]) for n in cold])
    return out


def verdicts(data):
    rounds, base = data["rounds"], data["baseline"]
    n = data["devices"]
    lat = [r["latency_ms"]["max"] for r in rounds if r["latency_ms"]]
    missed = sum(len(r["missed"]) + len(r["no_event"]) for r in rounds)
    # Not attached: LOOP_CTL_ADD or losetup failed (another program took the
    # index): not the daemon's miss, but not measured either.
    untested = sum(n - r["attached"] for r in rounds)
    over = sum(r["over_target"] for r in rounds)
    fds = [r.get("fds") for r in rounds]
    rss = [r.get("VmRSS_KiB") for r in rounds]
    alive = all(r["alive"] for r in rounds) and len(rounds) == data["rounds_planned"]
    worst_rss = max((abs(x - base["VmRSS_KiB"]) / base["VmRSS_KiB"] for x in rss if x),
                    default=None)
    out = [
        ("every device tuned within 1 s of its event",
         bool(lat) and over == 0 and max(lat) <= TARGET_LATENCY_S * 1000,
         f"{over} over 1 s; worst {max(lat):.1f} ms" if lat else "no device was timed"),
        ("none missed", missed == 0 and untested == 0,
         f"{missed} of {n * len(rounds) - untested} missed or without an event"
         + (f"; {untested} not attached, so not measured" if untested else "")),
        ("no file descriptor leaked", alive and all(x == base["fds"] for x in fds),
         f"{base['fds']} before, after each round " + ", ".join(str(x) for x in fds)),
        ("resident memory back within 10 %",
         alive and worst_rss is not None and worst_rss <= TARGET_RSS_SHARE,
         f"{base['VmRSS_KiB']} KiB before, after each round "
         + ", ".join(f"{x}" for x in rss) + " KiB"
         + (f" (at most {worst_rss * 100:+.1f} % off)" if worst_rss is not None else "")),
        ("the daemon ran through every round", alive,
         f"{len(rounds)} of {data['rounds_planned']} rounds; exit status {data.get('exit')}"),
    ]
    if data.get("coldplug"):
        c = data["coldplug"]
        out.append((f"coldplug of {c['devices']} devices in at most 1 s",
                    c["max"] <= TARGET_COLDPLUG_S * 1000,
                    f"median {c['median']:.0f} ms, slowest of {c['n']} {c['max']:.0f} ms"))
    return out


# --- the report --------------------------------------------------------------

def ms(x):
    return f"{x:.1f} ms" if x < 100 else f"{x:.0f} ms"


def markdown(data):
    m, base = data["machine"], data["baseline"]
    lines = [f"# radaemon at scale: {m['date']}, Linux {m['kernel']}", "",
             f"{m['radaemon']} at commit {m['commit']}; `{data['command']}`, "
             f"{data['duration_s'] / 60:.1f} minutes.", "",
             "## Machine", "",
             f"- {m['cpu']}, {m['cores']} cores, {m['ram_gib']:.0f} GiB RAM",
             f"- Linux {m['kernel']} ({m['kernel_version']}), Debian {m['debian']}, "
             f"Python {m['python']}",
             f"- load average at start {m['load_start']}, at end {m.get('load_end', '?')} "
             "(other work may share this machine)",
             f"- udevd {data['udevd']}; loop devices {data['indices']}", "",
             "## Verdicts", "",
             "| target | verdict | measured |", "|---|---|---|"]
    for what, ok, detail in verdicts(data):
        lines.append(f"| {what} | {'**met**' if ok else '**missed**'} | {detail} |")
    lines += ["", "## Rounds", "",
              f"{data['devices']} devices a round. Latency: from udevd's \"change\" for the "
              "attachment to read_ahead_kb read back as 4 KiB (an upper bound: our polling "
              "counts). Missed: the event came, the value did not within "
              f"{data['miss_after_s']:g} s. fds and VmRSS: once udevd had sent every event of "
              f"the removals and the daemon had read them all, plus {data['settle_s']:g} s; "
              f"before round 1: {base['fds']} fds, "
              f"{base['VmRSS_KiB']} KiB VmRSS ({base['RssAnon_KiB']} KiB anonymous).", "",
              "| round | timed | median | p90 | max | over 1 s | missed | no event "
              "| fds | VmRSS | anon | daemon CPU | alive |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    cpu = base["cpu_ms"]
    for i, r in enumerate(data["rounds"], 1):
        lat = r["latency_ms"] or {"n": 0, "median": 0, "p90": 0, "max": 0}
        used = r.get("cpu_ms", cpu) - cpu
        cpu = r.get("cpu_ms", cpu)
        lines.append(
            f"| {i} | {lat['n']} | {ms(lat['median'])} | {ms(lat['p90'])} | {ms(lat['max'])} "
            f"| {r['over_target']} | {len(r['missed'])} | {len(r['no_event'])} "
            f"| {r.get('fds', '-')} | {r.get('VmRSS_KiB', '-')} KiB "
            f"| {r.get('RssAnon_KiB', '-')} KiB | {used / 1000:.2f} s "
            f"| {'yes' if r['alive'] else 'no'} |")
    if base.get("heap"):
        lines += ["", "The daemon's heap as glibc accounts for it (malloc_stats(), through gdb, "
                  "after fds and VmRSS were read): held is what malloc has taken from the "
                  "system and not given back; in use is the rest of it after its free lists, "
                  "and so counts what it keeps in its per-thread caches too.", "",
                  "| when | heap in use | heap held | VmRSS |", "|---|---:|---:|---:|",
                  f"| before round 1 | {base['heap']['heap_in_use_KiB']} KiB "
                  f"| {base['heap']['heap_held_KiB']} KiB | {base['VmRSS_KiB']} KiB |"]
        for i, r in enumerate(data["rounds"], 1):
            if r.get("heap"):
                lines.append(f"| after round {i} | {r['heap']['heap_in_use_KiB']} KiB "
                             f"| {r['heap']['heap_held_KiB']} KiB | {r['VmRSS_KiB']} KiB |")
    lines += ["", "The storm around it: how long the attachments took, how far udevd's "
              "event for an attachment came after losetup returned (udevd's own queue, not "
              "the daemon's), which event the daemon's write of 4 KiB came from (udevd often "
              "handles the \"add\" after the attachment, so the daemon tunes on it and the "
              "\"change\" finds the value in place), and how long from the first detach "
              "until udevd had sent every removal and the daemon had read them all (detach "
              "and remove: our own loop over losetup -d and LOOP_CTL_REMOVE, which waits out "
              "udevd's probes).", "",
              "| round | attach burst | udevd lag median | udevd lag max | written on add "
              "| written on change | detach and remove | removals read after |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i, r in enumerate(data["rounds"], 1):
        lag = r["udevd_lag_ms"] or {"median": 0, "max": 0}
        on = r["writes_on"]
        lines.append(f"| {i} | {r['attach_s']:.1f} s | {ms(lag['median'])} | {ms(lag['max'])} "
                     f"| {on.get('add', 0)} | {on.get('change', 0)} | {r['remove_s']:.1f} s "
                     f"| {r['processed_s']:.1f} s |")
    problems = []
    for i, r in enumerate(data["rounds"], 1):
        if r["failed"]:
            problems.append(f"- round {i}: {len(r['failed'])} devices not attached, e.g. "
                            + "; ".join(f"{k}: {v}" for k, v in list(r["failed"].items())[:3]))
        if r["missed"]:
            problems.append(f"- round {i}: missed (read_ahead_kb when given up): "
                            + ", ".join(f"{k} {v} KiB" for k, v in list(r["missed"].items())[:10]))
            for name, log_lines in r.get("missed_log", {}).items():
                problems += [f"  - `{t}`" for t in log_lines]
        if r["monitor_overruns"]:
            problems.append(f"- round {i}: our own monitor socket overflowed "
                            f"{r['monitor_overruns']} times (events lost to the bench, "
                            "not necessarily to the daemon)")
        if r["no_event"]:
            problems.append(f"- round {i}: no udev event seen for the attachment of "
                            + ", ".join(f"{k} ({v} KiB)"
                                        for k, v in list(r["no_event"].items())[:10]))
        if not r["processed"]:
            problems.append(f"- round {i}: the removals were not all sent by udevd and read by "
                            "the daemon within 60 s")
        if r.get("netlink_drops"):
            problems.append(f"- round {i}: the kernel dropped {r['netlink_drops']} messages "
                            "for the daemon's netlink sockets so far (receive buffer full)")
        if r["still_present"]:
            problems.append(f"- round {i}: could not remove {', '.join(r['still_present'][:5])}")
        if r["warnings_total"]:
            problems.append(f"- round {i}: {r['warnings_total']} warnings or errors in the "
                            "daemon's log, first ones:")
            problems += [f"  - `{w}`" for w in r["warnings"][:5]]
        if r.get("fds") is not None and r["fds"] != base["fds"]:
            new = sorted(set(r["fd_targets"].values()) - set(base["fd_targets"].values()))
            problems.append(f"- round {i}: {r['fds']} fds, {base['fds']} before; new targets: "
                            + ", ".join(new[:10]))
    lines += ["", "Problems seen:", ""] + (problems or ["- none"])
    if data.get("coldplug"):
        c = data["coldplug"]
        lines += ["", "## Coldplug", "",
                  f"From exec to READY=1 with {c['devices']} attached devices, each set to "
                  "2560 KiB before the start, so every one is written (2560 -> 4 KiB); "
                  "udevd running and settled:", "",
                  "| devices | runs | median | min | max |", "|---:|---:|---:|---:|---:|",
                  f"| {c['devices']} | {c['n']} | {ms(c['median'])} | {ms(c['min'])} "
                  f"| {ms(c['max'])} |"]
    if data.get("analysis"):
        lines += ["", "## Analysis", ""] + [f"- {n}" for n in data["analysis"]]
    lines += ["", "## How it was measured", ""] + [f"- {n}" for n in NOTES]
    return "\n".join(lines) + "\n"


NOTES = [
    "One radaemon from the build tree, started before round 1 with an allow-list of exactly "
    "the loop devices the run uses (devices = loop5000 ... in its config), its own state_dir, "
    "everything else at its defaults; it runs through all rounds. Its stderr is a file named "
    "in JOURNAL_STREAM, as under systemd, so each line carries its syslog level, and its "
    "environment has the unit's Environment= (GLIBC_TUNABLES=glibc.malloc.tcache_count=0).",
    "A round: for each device in turn LOOP_CTL_ADD on /dev/loop-control (udev \"add\", size 0), "
    "then losetup over the same 505 KiB sparse file (all devices share one backing file, so "
    "one identity in the daemon's state); these run back to back in a thread, a burst as "
    "fast as losetup goes, while the main thread times the daemon. Then every device is "
    "detached (losetup -d) and removed (LOOP_CTL_REMOVE) in turn.",
    "The event of an attachment is the first \"change\" from udevd with the DISKSEQ the "
    "device has after losetup; its time is when it was queued on our netlink socket "
    "(SO_TIMESTAMPNS), the moment the daemon's copy was queued too. The devices whose event "
    "came are polled every millisecond until read_ahead_kb reads 4.",
    "Settled after the removals: every device is gone from /sys/block, `udevadm settle` "
    "returned (udevd has sent every event), and no byte waits on any of the daemon's netlink "
    "sockets (/proc/PID/net/netlink); then --settle seconds more (3 by default), past the "
    "malloc_trim the daemon makes 1 s after its last udev work.",
    "fds: entries in /proc/PID/fd; VmRSS and RssAnon from /proc/PID/status; daemon CPU: the "
    "sum of its threads' schedstat run time during the round.",
    "Coldplug reuses overhead.py's measurement, with new devices after the rounds and a "
    "new daemon per run.",
    "The devices take the top of the bench's range of loop indices (5000-5999) where it is "
    "free: run.py and overhead.py take theirs from the bottom and may run meanwhile. An index "
    "another program takes between rounds fails LOOP_CTL_ADD, is reported as not attached and "
    "is left alone.",
]


def main():
    import run  # machine_info: the same machine description as the main report

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--builddir", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--devices", type=int, default=DEFAULTS["devices"])
    parser.add_argument("--rounds", type=int, default=DEFAULTS["rounds"])
    parser.add_argument("--coldplug-runs", type=int, default=DEFAULTS["coldplug_runs"],
                        help="0: no coldplug")
    parser.add_argument("--miss-after", type=float, default=10.0,
                        help="seconds after its event a device counts as missed")
    # The daemon gives freed heap back 1 s after its last udev work
    # (TRIM_AFTER_USEC in daemon/ra-udev.c): read VmRSS after that, not in a race with it.
    parser.add_argument("--settle", type=float, default=3.0,
                        help="seconds after the last removal is logged, before fds and VmRSS")
    parser.add_argument("--baseline-settle", type=float, default=2.0,
                        help="seconds after READY=1 before the baseline")
    parser.add_argument("--results", default=os.path.join(HERE, "results"))
    parser.add_argument("--heap-stats", action="store_true",
                        help="after the baseline and each round, glibc's heap statistics "
                             "(through gdb, which stops the daemon for a moment)")
    parser.add_argument("--keep-log", metavar="FILE", help="copy the daemon's log there")
    parser.add_argument("--report-only", metavar="JSON", help="render a report from saved results")
    args = parser.parse_args()
    args.builddir = os.path.abspath(args.builddir)

    if args.report_only:
        with open(args.report_only) as f:
            data = json.load(f)
        path = args.report_only[:-len(".json")] + ".md"
        with open(path, "w") as f:
            f.write(markdown(data))
        log(f"scale: wrote {path}")
        return
    if os.geteuid() != 0:
        sys.exit("scale.py: run as root (loop devices, sysfs)")
    if not 1 <= args.devices <= 1000:
        sys.exit("scale.py: --devices must be from 1 to 1000 (indices 5000-5999)")

    info = run.machine_info(args.builddir)
    quick = any(getattr(args, k) != v for k, v in DEFAULTS.items())
    stem = f"{info['date']}-{info['kernel']}-scale" + ("-quick" if quick else "")
    data = {"machine": info, "command": " ".join(["scale.py"] + sys.argv[1:]),
            "devices": args.devices, "rounds_planned": args.rounds,
            "miss_after_s": args.miss_after, "settle_s": args.settle}
    started = time.monotonic()
    warn_if_foreign_daemon()
    with Machine() as machine:
        data.update(measure(machine, args))
    data["duration_s"] = time.monotonic() - started
    data["machine"]["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    os.makedirs(args.results, exist_ok=True)
    base = os.path.join(args.results, stem)
    with open(base + ".json", "w") as f:
        json.dump(data, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write(markdown(data))
    log(f"scale: wrote {base}.md")
    failed = [what for what, ok, _ in verdicts(data) if not ok]
    if failed:
        log("scale: missed: " + "; ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, Interrupted):
        sys.exit("scale.py: interrupted; everything it made is removed")
