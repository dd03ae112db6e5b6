#!/usr/bin/env python3
"""What radaemon costs: hotplug latency, memory, CPU, racontrol, coldplug.

Run as root from a build tree (after make). It makes its own loop devices,
gives the daemon an allow-list of exactly those, and removes everything it
made when it ends. run.py runs these too; this entry point runs them alone.

  overhead.py hotplug [--count 50]   udev event -> read_ahead_kb written
  overhead.py rss [--devices 10]     resident memory of an idle daemon
  overhead.py cpu                    CPU with idle and busy devices
  overhead.py status                 racontrol status latency (needs racontrol)
  overhead.py coldplug               start -> READY=1 with N devices (up to 500)
  overhead.py all                    all of them, as Markdown
  overhead.py tracing                the tracing cost at about 1 GB/s of page-cache reads
                                     (not in all: it needs 1.2 GiB of /dev/shm)
  overhead.py openfiles              following a new window with 0, 10,000 and 100,000
                                     descriptors open in the reader (or as many as its
                                     RLIMIT_NOFILE allows; not in all: 512 MiB of /dev/shm)

The hotplug latency is measured from the moment udevd's event was queued on
our netlink socket (the kernel's SO_TIMESTAMPNS: the same moment the
daemon's copy was queued) until this process reads the daemon's value back
from sysfs. Our own wake-up and polling count against radaemon, so the
numbers are an upper bound. Only this measurement needs udevd: it starts one
if none runs and stops only the one it started.
"""
import argparse
import json
import os
import re
import resource
import socket
import statistics
import struct
import subprocess
import sys
import time

from daemon import Daemon
from machine import (FIRST_INDEX, LOOP_CTL_ADD, TRACEFS, Machine, log, loop_control, read_kb, run,
                     set_kb, tracefs_mounted, wait_detached)

HERE = os.path.dirname(os.path.abspath(__file__))
NETLINK_KOBJECT_UEVENT = 15
UDEV_MONITOR_GROUP = 2
SO_TIMESTAMPNS = 35
TINY_BYTES = 505 * 1024
TINY_PRIOR_KB = 4      # radaemon's prior for a 505 KiB device
LOOP_ATTACH_KB = 2560  # what the loop driver sets at attach

PRESETS = {
    "quick": {"hotplug_count": 5, "rss_devices": [10], "cpu_devices": [1, 10], "cpu_window": 2,
              "cpu_rates": [10],
              "status_devices": [1, 10], "status_calls": 5, "coldplug_devices": [1, 50],
              "coldplug_repeat": 1},
    "full": {"hotplug_count": 50, "rss_devices": [10, 500], "cpu_devices": [1, 100],
             "cpu_window": 10, "cpu_rates": [10, 100], "status_devices": [1, 100, 200, 500], "status_calls": 20,
             "coldplug_devices": [1, 10, 100, 500], "coldplug_repeat": 3},
}
ALL = ["hotplug", "rss", "cpu", "status", "coldplug"]


def ping_udevd():
    return subprocess.run(["udevadm", "control", "--ping", "-t", "1"],
                          stderr=subprocess.DEVNULL).returncode == 0


class Udevd:
    """udevd for the hotplug measurement: ours if none runs, else the one there is."""

    def __init__(self, machine):
        self.machine = machine
        self.process = None

    def __enter__(self):
        if not ping_udevd():
            self.process = self.machine.spawn(["/lib/systemd/systemd-udevd"],
                                              stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while not ping_udevd():
                if time.monotonic() > deadline:
                    raise RuntimeError("udevd did not start")
                time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        if self.process:
            # Let it finish our devices' events, so no database entry stays behind.
            subprocess.run(["udevadm", "settle", "-t", "10"], stderr=subprocess.DEVNULL)
            self.machine.stop(self.process)


def tiny_image(machine):
    path = machine.path("tiny.img")
    if not os.path.exists(path):
        machine.sparse_file("tiny.img", TINY_BYTES)
    return path


def make_loops(machine, n, start=FIRST_INDEX):
    """n loop devices made through /dev/loop-control, each over a 505 KiB file."""
    image = tiny_image(machine)
    names = []
    for index in machine.unused_indices(n, start):
        machine.track_loop(index)
        loop_control(LOOP_CTL_ADD, index)
        run("losetup", f"/dev/loop{index}", image)
        names.append(f"loop{index}")
    return names


def summarize(values, scale=1.0):
    v = sorted(x * scale for x in values)
    return {"n": len(v), "median": statistics.median(v), "min": v[0], "max": v[-1],
            "p90": v[int(0.9 * (len(v) - 1))]}


# --- hotplug -----------------------------------------------------------------

def udev_monitor():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC,
                      NETLINK_KOBJECT_UEVENT)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind((0, UDEV_MONITOR_GROUP))
    return s


def receive_event(sock, timeout):
    """udevd's next message as (properties, queueing time in ns, CLOCK_REALTIME).

    Raises socket.timeout when none comes in time; what is not udevd's (the
    kernel's own uevents) comes back as ({}, time).
    """
    sock.settimeout(timeout)
    data, ancdata, _, _ = sock.recvmsg(1 << 16, socket.CMSG_SPACE(16))
    stamp = None
    for level, kind, value in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            sec, nsec = struct.unpack("=qq", value[:16])
            stamp = sec * 1_000_000_000 + nsec
    if stamp is None:
        stamp = time.time_ns()
    if not data.startswith(b"libudev\0"):
        return {}, stamp
    off, length = struct.unpack_from("=II", data, 16)
    props = dict(p.split("=", 1) for p in
                 data[off:off + length].decode(errors="replace").split("\0") if "=" in p)
    return props, stamp


def next_event(sock, name, action, deadline, diskseq=None):
    """Returns the queueing time (ns, CLOCK_REALTIME) of udevd's next matching event.

    With diskseq, only an event for that attachment counts: udevd may still be
    sending the events of the previous detach, which carry the older one.
    """
    while True:
        props, stamp = receive_event(sock, max(0.001, deadline - time.monotonic()))
        if props.get("DEVNAME") != f"/dev/{name}" or props.get("ACTION") != action:
            continue
        if diskseq is not None and props.get("DISKSEQ") != diskseq:
            continue
        return stamp


def wait_applied(name, want, deadline):
    while time.monotonic() < deadline:
        if read_kb(name) == want:
            return time.time_ns()
    raise TimeoutError(f"{name} never reached {want} KiB")


def measure_hotplug(machine, builddir, count):
    """count "add" and count "change" events, each ending with the value applied."""
    image = tiny_image(machine)
    added = machine.unused_indices(count + 1)
    spare = added.pop()
    results = {"add": [], "change": []}
    with Udevd(machine):
        daemon = Daemon(machine, builddir, [f"loop{i}" for i in added + [spare]], tag="hotplug")
        sock = udev_monitor()
        try:
            daemon.start()
            # add: losetup on an index that does not exist creates the device.
            for index in added:
                machine.track_loop(index)
                run("losetup", f"/dev/loop{index}", image)
                deadline = time.monotonic() + 10
                t0 = next_event(sock, f"loop{index}", "add", deadline)
                results["add"].append(wait_applied(f"loop{index}", TINY_PRIOR_KB, deadline) - t0)

            # change: attaching a file to a free device makes the kernel raise
            # the value (2560 KiB here) and report "change" only.
            machine.track_loop(spare)
            loop_control(LOOP_CTL_ADD, spare)
            for _ in range(count):
                run("losetup", f"/dev/loop{spare}", image)
                diskseq = open(f"/sys/block/loop{spare}/diskseq").read().strip()
                deadline = time.monotonic() + 10
                t0 = next_event(sock, f"loop{spare}", "change", deadline, diskseq)
                results["change"].append(
                    wait_applied(f"loop{spare}", TINY_PRIOR_KB, deadline) - t0)
                run("losetup", "-d", f"/dev/loop{spare}")
                wait_detached(spare)
        finally:
            sock.close()
            daemon.stop()
    return {kind: summarize(ns, 1e-6) for kind, ns in results.items()}


# --- memory and CPU of an idle daemon ----------------------------------------

def proc_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[key + "_KiB"] = int(value.split()[0])
    return out


def cpu_ns(pid):
    """CPU time of every thread, in ns (schedstat: finer than utime's ticks)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


def read_calls(pid):
    with open(f"/proc/{pid}/io") as f:
        return int(dict(line.split(": ") for line in f.read().splitlines())["syscr"])


def measure_rss(machine, builddir, names, counts, settle=2.0):
    rows = []
    for n in counts:
        with Daemon(machine, builddir, names[:n], tag=f"rss-{n}") as daemon:
            time.sleep(settle)
            rows.append({"devices": n, **proc_status(daemon.pid)})
    return rows


# Reads 4 KiB with O_DIRECT (past the page cache, so every read reaches the
# device and its counters) from each device in turn, rate rounds a second.
BUSY_READER = """
import mmap, os, sys, time
rate, names = float(sys.argv[1]), sys.argv[2:]
fds = [os.open("/dev/" + n, os.O_RDONLY | os.O_DIRECT | os.O_CLOEXEC) for n in names]
buf, offset, pages = mmap.mmap(-1, 4096), 0, os.lseek(fds[0], 0, os.SEEK_END) // 4096
due = time.monotonic()
while True:
    for fd in fds:
        os.preadv(fd, [buf], offset)
    offset = (offset + 4096) % (pages * 4096)
    due += 1 / rate
    time.sleep(max(0, due - time.monotonic()))
"""


def busy_reader(machine, names, rate):
    return machine.spawn([sys.executable, "-c", BUSY_READER, str(rate)] + names)


def cpu_window(pid, window):
    """The daemon's CPU (ms per s) and read calls (per s) over window seconds."""
    c0, r0 = cpu_ns(pid), read_calls(pid)
    time.sleep(window)
    c1, r1 = cpu_ns(pid), read_calls(pid)
    return (c1 - c0) / 1e6 / window, (r1 - r0) / window


def measure_cpu(machine, builddir, names, counts, window, rates, interval_ms=1000):
    """CPU of a daemon with n devices, idle and then busy.

    Busy: every device reads rate requests a second (O_DIRECT, 4 KiB,
    sequential), so each is sampled every interval and, where tracefs is
    mounted, each request passes through the tracer. The share of one core
    is the daemon's CPU time over wall time; the reader's own CPU is not
    counted.
    """
    rows = []
    for n in counts:
        with Daemon(machine, builddir, names[:n], tag=f"cpu-{n}",
                    interval_ms=interval_ms) as daemon:
            time.sleep(1.0)  # past the coldplug
            idle, idle_reads = cpu_window(daemon.pid, window)
            busy = []
            for rate in rates:
                reader = busy_reader(machine, names[:n], rate)
                time.sleep(interval_ms / 1000 * 2)  # every device seen busy
                ms, reads = cpu_window(daemon.pid, window)
                if reader.poll() is not None:
                    raise RuntimeError(f"the busy reader died (exit {reader.returncode})")
                machine.stop(reader)
                busy.append({"requests_per_s": rate * n, "cpu_ms_per_s": ms,
                             "core_percent": ms / 10, "reads_per_s": reads})
                time.sleep(interval_ms / 1000 * 2)
            traced = tracing_line(daemon) is not None
        rows.append({"devices": n, "cpu_ms_per_s": idle, "reads_per_s": idle_reads,
                     "busy": busy, "traced": traced})
    out = {"interval_ms": interval_ms, "window_s": window, "rows": rows}
    samples = window * 1000 / interval_ms
    reads = rows[-1]["busy"][0]["reads_per_s"] * window if rates else 0
    if reads < samples / 2:
        out.update(available=False,
                   why=f"no statistics sampler: the busy daemon made {reads:.0f} read calls in "
                       f"{window} s with interval_ms={interval_ms}")
        return out
    lo, hi = rows[0], rows[-1]
    per_device = (hi["busy"][0]["cpu_ms_per_s"] - lo["busy"][0]["cpu_ms_per_s"]) / \
        (hi["devices"] - lo["devices"])
    out.update(available=True, us_per_device_sample=per_device * 1000 * interval_ms / 1000)
    return out


# --- the tracing cost ---------------------------------------------------------

# Reads files one after another in 128 KiB read(2) calls (cat's size) at up
# to rate MB/s (0: as fast as it can), one line of JSON a pass on stdout.
# cold: every page of the files evicted first (POSIX_FADV_DONTNEED, only
# these files: the machine's cache stays), so every window is read ahead
# from the device; warm: the files cached, then 1 MiB of every 8 MiB
# evicted, so most reads are page-cache hits and the tracepoints fire only
# where a window is read ahead. Eviction and warming are not timed.
TRACING_READER = """
import json, os, resource, sys, time
case, rate, passes, paths = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
fds = [os.open(p, os.O_RDONLY | os.O_CLOEXEC) for p in paths]
buf = bytearray(128 << 10)
def read_all(fd, paced):
    done, t0 = 0, time.monotonic()
    os.lseek(fd, 0, os.SEEK_SET)
    while True:
        n = os.readv(fd, [buf])
        if n == 0:
            return done
        done += n
        if paced and rate > 0:
            ahead = done / (rate * 1e6) - (time.monotonic() - t0)
            if ahead > 0.001:
                time.sleep(ahead)
for _ in range(passes):
    for fd in fds:
        if case == "warm":
            read_all(fd, False)
            size = os.fstat(fd).st_size
            for off in range(0, size, 8 << 20):
                os.posix_fadvise(fd, off, 1 << 20, os.POSIX_FADV_DONTNEED)
        else:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    r0, t0, done = resource.getrusage(resource.RUSAGE_SELF), time.monotonic(), 0
    for fd in fds:
        done += read_all(fd, True)
    t1, r1 = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"bytes": done, "seconds": t1 - t0, "utime": r1.ru_utime - r0.ru_utime,
                      "stime": r1.ru_stime - r0.ru_stime}), flush=True)
"""
TRACING_FILES = 4
TRACING_FILE_MIB = 256
CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid):
    """utime + stime of a process (all its threads), in s, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_busy_s():
    """Busy CPU time of the whole machine (every CPU, not idle or iowait), in s."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / CLK_TCK


def instance_events(pid):
    """(events read, events lost) so far by the daemon's own trace instance."""
    read = lost = 0
    base = f"{TRACEFS}/instances/radaemon.{pid}/per_cpu"
    for cpu in os.listdir(base):
        with open(f"{base}/{cpu}/stats") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key == "read events":
                    read += int(value)
                elif key in ("overrun", "dropped events"):
                    lost += int(value)
    return read, lost


def tracing_filesystem(machine, kb, file_mib):
    """ext4 on a loop device over a file in /dev/shm (memory: the reads cost
    CPU, not waiting), with the files to read; returns (name, paths)."""
    image = f"/dev/shm/radaemon-bench-tracing-{os.getpid()}.img"
    machine.on_exit(lambda: os.path.exists(image) and os.unlink(image))
    with open(image, "wb") as f:
        f.truncate((TRACING_FILES * file_mib + 192) << 20)
    try:
        name = machine.new_loop(image)
    except subprocess.CalledProcessError:
        name = machine.new_loop(image, direct_io=False)  # a kernel whose tmpfs has no O_DIRECT
    run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", f"/dev/{name}")
    mnt = machine.path("tracing-mnt")
    os.makedirs(mnt, exist_ok=True)
    run("mount", "-o", "noatime", f"/dev/{name}", mnt)
    machine.on_exit(lambda: subprocess.run(["umount", mnt]))
    paths, block = [], bytes(range(256)) * 4096
    for i in range(TRACING_FILES):
        paths.append(os.path.join(mnt, f"f{i}"))
        with open(paths[-1], "wb") as f:
            for _ in range(file_mib):
                f.write(block)
            os.fsync(f.fileno())
    set_kb(name, kb)
    return name, paths


def tracing_block(machine, paths, case, rate, passes, daemon=None):
    """passes of the reader, with the daemon (tracing) or without; sums."""
    before = (machine_busy_s(), daemon and proc_cpu_s(daemon.pid), daemon and cpu_ns(daemon.pid),
              daemon and instance_events(daemon.pid))
    reader = machine.spawn([sys.executable, "-c", TRACING_READER, case, str(rate), str(passes)] + paths,
                           stdout=subprocess.PIPE)
    out = [json.loads(line) for line in reader.stdout]
    if reader.wait() != 0 or len(out) != passes:
        raise RuntimeError(f"the tracing reader failed (exit {reader.returncode})")
    machine.stop(reader)
    row = {k: sum(p[k] for p in out) for k in ("bytes", "seconds", "utime", "stime")}
    row["machine_busy_s"] = machine_busy_s() - before[0]
    if daemon:
        # The daemon drains a buffer when it is half full, and all of them every interval:
        # what the block left below half is read at the next tick.
        time.sleep(1.5)
        if daemon.process.poll() is not None:
            raise RuntimeError("the daemon died during the tracing measurement")
        read, lost = instance_events(daemon.pid)
        row.update(daemon_cpu_s=proc_cpu_s(daemon.pid) - before[1],
                   daemon_sched_s=(cpu_ns(daemon.pid) - before[2]) / 1e9,
                   events=read - before[3][0], lost=lost - before[3][1])
    return row


def measure_tracing(machine, builddir, rate=1000, passes=5, rounds=2, kb=128,
                    file_mib=TRACING_FILE_MIB):
    """The reader's CPU and throughput with radaemon tracing and without, and the daemon's CPU.

    Blocks of passes alternate (without, with; rounds times) so that drift
    in what else the machine runs falls on both. The daemon manages only the
    loop device (allow-list) with a pin at kb, the same value the runs
    without it have, so only the tracing differs; a pin does not stop it
    from tracing the device.
    """
    if not tracefs_mounted():
        return {"available": False, "why": f"no tracefs at {TRACEFS}: nothing to measure"}
    name, paths = tracing_filesystem(machine, kb, file_mib)
    extra = f"[device:{name}]\nread_ahead_kb = {kb}\n"
    out = {"available": True, "rate_mbs": rate, "passes": passes, "rounds": rounds, "kb": kb,
           "files": TRACING_FILES, "file_mib": file_mib, "device": name,
           "load_before": os.getloadavg(), "cases": {}}
    for case in ("cold", "warm"):
        rows = {"off": [], "on": []}
        for r in range(rounds):
            log(f"overhead: tracing, {case}, round {r + 1}: without radaemon")
            rows["off"].append(tracing_block(machine, paths, case, rate, passes))
            with Daemon(machine, builddir, [name], tag=f"tracing-{case}-{r}", extra=extra) as daemon:
                if not tracing_line(daemon):
                    raise RuntimeError("the daemon does not trace:\n" + daemon.output())
                out["evidence"] = tracing_line(daemon)
                time.sleep(1.0)  # past the coldplug and the first filters
                log(f"overhead: tracing, {case}, round {r + 1}: with radaemon")
                rows["on"].append(tracing_block(machine, paths, case, rate, passes, daemon))
                if read_kb(name) != kb:
                    raise RuntimeError(f"{name} left the pin: {read_kb(name)} KiB")
        out["cases"][case] = {mode: {k: sum(b[k] for b in blocks) for k in blocks[0]}
                              for mode, blocks in rows.items()}
        out["cases"][case]["blocks"] = rows
    out["load_after"] = os.getloadavg()
    return out


def tracing_line(daemon):
    """What the daemon says it traces ("readahead per file and block requests"), or None."""
    for line in daemon.output().splitlines():
        if line.startswith("Tracing ") or " Tracing " in line:
            return line.split("Tracing ", 1)[1].split(" through ")[0]
    return None


# --- open files followed ------------------------------------------------------

# Holds N descriptors of one small file (a file server's open files, to be
# looked at and passed over) and maps a 256 MiB file, faulting at random
# pages of it 30 times a second until killed: the follower (faster, and
# after about a hundred misses the kernel stops reading around a file's
# faults: no window to follow). Prints "ready" after its first 20 faults.
OPENFILES_READER = """
import mmap, os, random, resource, sys, time
other, big, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held = [os.open(other, os.O_RDONLY | os.O_CLOEXEC) for _ in range(n)]
fd = os.open(big, os.O_RDONLY | os.O_CLOEXEC)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
pages = len(m) // 4096
i = 0
while True:
    m[random.randrange(pages) * 4096]
    i += 1
    if i == 20:
        print("ready", flush=True)
    time.sleep(1 / 30)
"""
OPENFILES_LINE = re.compile(r": (\d+) files to follow, (\d+) descriptors of (\d+) processes looked at in "
                            r"([0-9.]+) ms(?: \((\d+) steps, ([0-9.]+) ms in all\))?")


def measure_openfiles(machine, builddir, counts, repeat=3):
    """What following a new window costs the daemon with N descriptors open.

    ext4 on a loop device over /dev/shm; a reader that holds N descriptors
    and faults at random in a mapped file opened at a 1024 KiB pin; then
    racontrol set 16 (a pin: the change every source makes), which makes
    the daemon look at the reader's descriptors and follow its file. Reads
    the daemon's own timing (its debug line), its CPU over the second
    around the change (schedstat), the time racontrol set took (the daemon
    does this in its loop: the reply waits), and its memory after.
    """
    racontrol = racontrol_path(builddir)
    if not tracefs_mounted() and not os.path.isdir(TRACEFS):
        return {"available": False, "why": "no tracefs: no follower to find"}
    image = f"/dev/shm/radaemon-bench-openfiles-{os.getpid()}.img"
    machine.on_exit(lambda: os.path.exists(image) and os.unlink(image))
    with open(image, "wb") as f:
        f.truncate(512 << 20)
    name = machine.new_loop(image, direct_io=False)
    run("mkfs.ext4", "-q", "-F", f"/dev/{name}")
    mnt = machine.path("openfiles-mnt")
    os.makedirs(mnt, exist_ok=True)
    run("mount", f"/dev/{name}", mnt)
    machine.on_exit(lambda: subprocess.run(["umount", mnt]))
    other, big = os.path.join(mnt, "other"), os.path.join(mnt, "big")
    with open(other, "wb") as f:
        f.write(b"x" * 4096)
    with open(big, "wb") as f:
        for _ in range(256):
            f.write(os.urandom(1 << 20))
    rows = []
    with PrivateBus(machine) as bus:
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address)
        for n in counts:
            for r in range(repeat):
                extra = f"[device:{name}]\nread_ahead_kb = 1024\n"
                with Daemon(machine, builddir, [name], tag=f"openfiles-{n}-{r}", extra=extra,
                            env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address}, debug=True) as daemon:
                    deadline = time.monotonic() + 10
                    while read_kb(name) != 1024 and time.monotonic() < deadline:
                        time.sleep(0.05)
                    with open("/proc/sys/vm/drop_caches", "w") as f:
                        f.write("3\n")
                    reader = machine.spawn([sys.executable, "-c", OPENFILES_READER, other, big, str(n)],
                                           stdout=subprocess.PIPE)
                    if reader.stdout.readline().strip() != b"ready":
                        raise RuntimeError(f"the reader with {n} descriptors did not start")
                    time.sleep(2.2)  # two intervals of its faults under 1024 KiB
                    before = cpu_ns(daemon.pid)
                    t0 = time.monotonic()
                    p = subprocess.run([racontrol, "set", name, "16", "--runtime"], env=env,
                                       capture_output=True, timeout=60)
                    set_s = time.monotonic() - t0
                    time.sleep(1.0)
                    cpu = (cpu_ns(daemon.pid) - before) / 1e6
                    machine.stop(reader)
                    if p.returncode != 0:
                        raise RuntimeError("racontrol set failed: " + p.stderr.decode(errors="replace"))
                    lines = [OPENFILES_LINE.search(x) for x in daemon.decisions(name)]
                    timed = [x for x in lines if x]
                    followed = f"(pid {reader.pid}) reads {big} under the 1024 KiB" in daemon.output()
                    row = {"descriptors": n, "run": r + 1, "followed": followed, "set_ms": set_s * 1000,
                           "daemon_cpu_ms": cpu, **proc_status(daemon.pid)}
                    if timed:
                        t = timed[-1]
                        row.update(files=int(t.group(1)), scanned=int(t.group(2)),
                                   processes=int(t.group(3)), follow_ms=float(t.group(4)))
                        if t.group(5):
                            row.update(steps=int(t.group(5)), elapsed_ms=float(t.group(6)))
                    log(f"overhead: openfiles, {n} descriptors, run {r + 1}: {row}")
                    rows.append(row)
    return {"available": True, "device": name, "rows": rows}


# --- racontrol status --------------------------------------------------------

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={path}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""


class PrivateBus:
    """A private system bus, so the measurement needs no machine-wide one."""

    def __init__(self, machine):
        self.machine = machine
        self.process = None
        self.address = None

    def __enter__(self):
        path = self.machine.path("system_bus_socket")
        config = self.machine.path("bus.conf")
        with open(config, "w") as f:
            f.write(BUS_CONFIG.format(path=path))
        self.process = self.machine.spawn(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile",
             "--print-address=1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.address = self.process.stdout.readline().decode().strip()
        if not self.address:
            raise RuntimeError("dbus-daemon did not start: "
                               + self.process.stderr.read().decode(errors="replace"))
        return self

    def __exit__(self, *exc):
        self.machine.stop(self.process)


def racontrol_path(builddir):
    return os.path.join(builddir, "racontrol", "racontrol")


def measure_status(machine, builddir, names, counts, calls):
    racontrol = racontrol_path(builddir)
    if not os.access(racontrol, os.X_OK):
        return {"available": False, "why": "racontrol is not built (no build/racontrol/racontrol)"}
    rows = []
    with PrivateBus(machine) as bus:
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address)
        for n in counts:
            with Daemon(machine, builddir, names[:n], tag=f"status-{n}",
                        env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address}):
                # READY=1 may come before the daemon's name is on the bus.
                deadline = time.monotonic() + 5
                while subprocess.run([racontrol, "status"], env=env, capture_output=True,
                                     timeout=30).returncode != 0:
                    if time.monotonic() > deadline:
                        break  # the timed calls below report the failure
                    time.sleep(0.05)
                seconds = []
                for _ in range(calls):
                    t0 = time.monotonic()
                    p = subprocess.run([racontrol, "status"], env=env, capture_output=True,
                                       timeout=30)
                    seconds.append(time.monotonic() - t0)
                    if p.returncode != 0:
                        first = (p.stderr or p.stdout).decode(errors="replace").strip()
                        return {"available": False,
                                "why": f"racontrol status failed with {n} devices: "
                                       f"{first.splitlines()[0] if first else p.returncode}"}
            rows.append({"devices": n, **summarize(seconds, 1000)})
    return {"available": True, "rows": rows}


# --- coldplug ----------------------------------------------------------------

def measure_coldplug(machine, builddir, names, counts, repeat):
    """Seconds from exec to READY=1, with every device to be written."""
    rows = []
    for n in counts:
        seconds = []
        for rep in range(repeat):
            for name in names[:n]:
                set_kb(name, LOOP_ATTACH_KB)  # as the kernel left it at attach
            daemon = Daemon(machine, builddir, names[:n], tag=f"coldplug-{n}-{rep}")
            seconds.append(daemon.start())
            managing = daemon.managing()
            daemon.stop()
            if managing != n:
                raise RuntimeError(f"coldplug: the daemon manages {managing} disks, not {n}")
            wrong = [x for x in names[:n] if read_kb(x) != TINY_PRIOR_KB]
            if wrong:
                raise RuntimeError(f"coldplug: {len(wrong)} devices not tuned, e.g. {wrong[0]}")
        rows.append({"devices": n, **summarize(seconds, 1000)})
    return rows


def measure(machine, builddir, what, preset):
    """The overhead measurements named in what, with one preset's sizes."""
    p = PRESETS[preset]
    out = {"preset": preset}
    if "hotplug" in what:
        log("overhead: hotplug latency")
        out["hotplug"] = measure_hotplug(machine, builddir, p["hotplug_count"])
    wanted = [k for k in ("rss", "cpu", "status", "coldplug") if k in what]
    if not wanted:
        return out
    most = max(max(p[f"{k}_devices"]) for k in wanted)
    log(f"overhead: making {most} loop devices through /dev/loop-control")
    names = make_loops(machine, most)
    if "rss" in what:
        log("overhead: idle memory")
        out["rss"] = measure_rss(machine, builddir, names, p["rss_devices"])
    if "cpu" in what:
        log("overhead: CPU per sampled device")
        out["cpu"] = measure_cpu(machine, builddir, names, p["cpu_devices"], p["cpu_window"],
                                 p["cpu_rates"])
    if "status" in what:
        log("overhead: racontrol status latency")
        out["status"] = measure_status(machine, builddir, names, p["status_devices"],
                                       p["status_calls"])
    if "coldplug" in what:
        log("overhead: coldplug time")
        out["coldplug"] = measure_coldplug(machine, builddir, names, p["coldplug_devices"],
                                           p["coldplug_repeat"])
    return out


def main():
    import report  # only here: report imports nothing of ours but formatting

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=ALL + ["all", "tracing", "openfiles"])
    parser.add_argument("--builddir", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--quick", action="store_true", help="small counts")
    parser.add_argument("--count", type=int, help="hotplug events of each kind")
    parser.add_argument("--devices", type=int, help="devices for rss (and cpu, status, coldplug)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rate-mbs", type=float, default=1000,
                        help="tracing: the reader's pace, MB/s (0: as fast as it can)")
    parser.add_argument("--passes", type=int, default=5, help="tracing: passes of the files a block")
    parser.add_argument("--rounds", type=int, default=2, help="tracing: blocks without and with radaemon")
    parser.add_argument("--kb", type=int, default=128, help="tracing: read_ahead_kb, the same in both")
    parser.add_argument("--file-mib", type=int, default=TRACING_FILE_MIB,
                        help=f"tracing: the size of each of the {TRACING_FILES} files")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("overhead.py: run as root (loop devices, sysfs, cgroups)")

    preset = "quick" if args.quick else "full"
    if args.count:
        PRESETS[preset]["hotplug_count"] = args.count
    if args.devices:
        PRESETS[preset]["rss_devices"] = [args.devices]
        for key in ("cpu_devices", "status_devices", "coldplug_devices"):
            PRESETS[preset][key] = sorted({1, args.devices})
    what = ALL if args.what == "all" else [args.what]
    with Machine() as machine:
        if args.what == "openfiles":
            # One process holds at most its hard RLIMIT_NOFILE (raising it needs CAP_SYS_RESOURCE).
            most = resource.getrlimit(resource.RLIMIT_NOFILE)[1] - 1024
            counts = sorted({0, min(10000, most), min(100000, most)})
            out = {"openfiles": measure_openfiles(machine, args.builddir, counts)}
        elif args.what == "tracing":
            out = {"tracing": measure_tracing(machine, args.builddir, args.rate_mbs, args.passes,
                                              args.rounds, args.kb, args.file_mib)}
        else:
            out = measure(machine, args.builddir, what, preset)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print("\n".join(report.overhead_markdown(out)))


if __name__ == "__main__":
    main()
