"""Modes: what sets read_ahead_kb before a measured run, and one cell's runs.

  fixed:N   N KiB, written before the device is opened
  sweep     every fixed value of the class's sweep; the best is the oracle
  default   what the kernel gives a real device of the class (128 KiB)
  4mib      tuned's throughput-performance: 4096 KiB
  radaemon  the daemon, allowed only this device, tunes it at start; then
            training runs of the same workload on the same device, each a
            new process with a fresh open; then a measured phase in a new
            process with a fresh open and the device's cache dropped, while
            the daemon keeps running
"""
import statistics
import threading
import time

from daemon import Daemon
from machine import log, read_kb, set_kb
from workloads import measure

ALL_MODES = ["sweep", "default", "4mib", "radaemon"]


def parse(modes):
    """Checks mode names; returns them in a stable order."""
    for m in modes:
        if m not in ALL_MODES and not (m.startswith("fixed:") and m[6:].isdigit()):
            raise ValueError(f"unknown mode '{m}' (want {', '.join(ALL_MODES)} or fixed:N)")
    return modes


def fixed_values(modes, cls):
    """The fixed read_ahead_kb values a cell measures, each once per repeat."""
    values = set()
    for m in modes:
        if m == "sweep":
            values.update(cls.sweep)
        elif m == "default":
            values.add(cls.kernel_kb)
        elif m == "4mib":
            values.add(4096)
        elif m.startswith("fixed:"):
            values.add(int(m[6:]))
    return sorted(values)


def run_fixed(machine, device, workload, kb, runtime):
    set_kb(device.name, kb)
    r = measure(machine, device, workload, runtime)
    # Something else (another radaemon, udev) retuning our device would
    # make this point a lie.
    if r["kb_at_open"] != kb or r["kb_after"] != kb:
        raise RuntimeError(f"{device.name}: read_ahead_kb moved from {kb} to {r['kb_after']} "
                           "during the measurement; is another tuner running?")
    return r


class Timeline:
    """Polls read_ahead_kb every 20 ms in a thread: when each value came.

    read: what to poll instead of the disk's read_ahead_kb (a btrfs bdi, which
    is a new one at every mount); a None it returns (nothing mounted) is skipped.
    """

    def __init__(self, name, read=None):
        self.name = name
        self.read = read or (lambda: read_kb(name))
        self.t0 = time.monotonic()
        self.changes = [(0.0, self.read())]
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self):
        while not self.done.wait(0.02):
            kb = self.read()
            if kb is not None and kb != self.changes[-1][1]:
                self.changes.append((round(time.monotonic() - self.t0, 2), kb))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


def run_radaemon(machine, device, workload, timing, builddir, tag):
    """One training + measured run under a fresh daemon with an empty state.

    decision_s is the time from the start of the training to the first
    value the daemon learned (None if it kept the one it chose at start)."""
    device.reset()  # as a freshly plugged device: the kernel's value
    daemon = Daemon(machine, builddir, [device.name], tag=tag, interval_ms=timing.interval_ms)
    daemon.start()
    try:
        with Timeline(device.name) as timeline:
            trained_from = time.monotonic() - timeline.t0
            training = [measure(machine, device, workload, timing.train)
                        for _ in range(timing.runs_for(workload))]
            r = measure(machine, device, workload, timing.runtime)
        daemon.check_tracing()
    finally:
        daemon.stop()
    learned = [(t - trained_from, kb) for t, kb in timeline.changes if t > trained_from]
    r["training"] = [t["score"] for t in training]
    r["kb_trained"] = [t["kb_at_open"] for t in training]
    r["timeline"] = [(round(t - trained_from, 2), kb) for t, kb in timeline.changes]
    r["decision_s"] = round(learned[0][0], 2) if learned else None
    r["decisions"] = daemon.decisions(device.name)
    return r


def run_cell(machine, device, workload, modes, timing, builddir):
    """Every mode of one (device class, workload) cell, round-robin per repeat,
    so that a slow minute of the machine hurts all modes alike."""
    values = fixed_values(modes, device.cls)
    points = {kb: [] for kb in values}
    radaemon = []
    for rep in range(timing.repeat):
        for kb in values:
            points[kb].append(run_fixed(machine, device, workload, kb, timing.runtime))
        if "radaemon" in modes:
            tag = f"daemon-{device.cls.name}-{workload.name}-{rep}"
            radaemon.append(run_radaemon(machine, device, workload, timing, builddir, tag))
        best = summary_line(workload, points, radaemon)
        log(f"  {device.cls.name}/{workload.name} repeat {rep + 1}/{timing.repeat}: {best}")
    return {"class": device.cls.name, "workload": workload.name, "unit": workload.unit,
            "higher_is_better": workload.higher_is_better, "modes": modes,
            "points": {str(kb): runs for kb, runs in points.items()}, "radaemon": radaemon}


def summary_line(workload, points, radaemon):
    parts = [f"{kb}:{statistics.median(r['score'] for r in runs):.4g}"
             for kb, runs in points.items() if runs]
    if radaemon:
        parts.append(f"radaemon({radaemon[-1]['kb_at_open']}):{radaemon[-1]['score']:.4g}")
    return " ".join(parts) + f" {workload.unit}"


def calibration_lines(daemon, names):
    """The daemon's log lines on its calibration of the named devices."""
    return [line.strip() for line in daemon.output().splitlines()
            if any(f"{n}: calibrat" in line or f"{n}: cannot calibrate" in line for n in names)]


def run_user(machine, device, workload, runtime, builddir, tag, start, idle_s, runs,
             interval_ms=None):
    """One start mode of a cell as users run it (users.py): a fresh daemon with
    an empty state on the device as the kernel leaves it; with start "idle"
    the device then sits idle idle_s seconds (the calibration's chance), with
    "nowait" the first job starts at once; then runs jobs, every one scored."""
    device.reset()
    daemon = Daemon(machine, builddir, [device.name], tag=tag, interval_ms=interval_ms)
    fresh = daemon.state_empty()
    daemon.start()
    try:
        with Timeline(device.name) as timeline:
            if start == "idle":
                time.sleep(idle_s)
            results = [measure(machine, device, workload, runtime) for _ in range(runs)]
        daemon.check_tracing()
    finally:
        daemon.stop()
    return {"start": start, "runs": results, "timeline": timeline.changes,
            "calibration": calibration_lines(daemon, [device.name]), "state_fresh": fresh,
            "decisions": daemon.decisions(device.name)}
