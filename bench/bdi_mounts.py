#!/usr/bin/env python3
"""How soon a new bdi holds radaemon's value: btrfs or FUSE mounted N times.

A bdi is made at every mount and its window is what files opened on it
read with. Each cycle mounts a btrfs (mount(2) through libc, so the time
it returns is the syscall's, not a child process's), reads the bdi's
read_ahead_kb the moment mount(2) returns (what a first read would get),
then polls until radaemon's value is there; a netlink socket on the
kernel's uevents times the bdi's "add" too. Reported: how many cycles had
the value at mount(2)'s return, and the latency from the uevent and from
the return to the value (median, 95th percentile, worst).

  bench/bdi_mounts.py --cycles 200
  bench/bdi_mounts.py --cycles 200 --class hdd-7200

With --class NAME the file system is on a device of that class (the
model classes read with a device's latency, so btrfs's mount takes as long
as it would on that device); without, on a sparse file, where it is quickest.

With --fs fuse, tests/ra-testfs is mounted instead, twice N times: a
FUSE bdi's window is set by the server's INIT answer, which comes after
mount(2) returns and only lowers it (min(current, server's)). ra-testfs
returns once INIT is answered, the moment a first read could come: its
value then is counted. First without a pin (the server answers 64 KiB:
radaemon's value is the server's, and it must leave it), then with
[bdi:<mount point>] read_ahead_kb = 1024: the latency from the bdi's add
uevent and from the served mount to 1024, and what the bdi held in
between (a thread polls it from the uevent on: a 1024 written before INIT
is lowered to 128 by the answer).

  bench/bdi_mounts.py --fs fuse --cycles 200

With --udev (btrfs only), a udevd runs too (started here if none runs) with the
shipped rule's bdi line pointed at this build's helper, in
/run/udev/rules.d for the run only: the helper decides on the "add",
during the mount. Run as root from a build tree, holding
/run/radaemon-bench.lock.
"""
import argparse
import collections
import ctypes
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

from classes import CLASSES, Device
from daemon import Daemon
from machine import Machine, log

NETLINK_KOBJECT_UEVENT = 15
libc = ctypes.CDLL("libc.so.6", use_errno=True)


def sys_mount(source, target, fstype):
    if libc.mount(source.encode(), target.encode(), fstype.encode(), 0, None) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"mount {source} {target}: {os.strerror(e)}")


def sys_umount(target):
    if libc.umount2(target.encode(), 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"umount {target}: {os.strerror(e)}")


def bdi_kb(name):
    with open(f"/sys/class/bdi/{name}/read_ahead_kb") as f:
        return int(f.read())


class UeventClock(threading.Thread):
    """Times each bdi's add uevent as it is sent: a thread waits in recv
    while mount(2) runs (ctypes lets go of the GIL during the call)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)
        self.sock.bind((0, 1))
        self.seen = {}
        self.cond = threading.Condition()

    def run(self):
        while True:
            data = self.sock.recv(65536)
            now = time.monotonic()
            head = data.split(b"\0", 1)[0].decode(errors="replace")
            if head.startswith("add@/devices/virtual/bdi/"):
                with self.cond:
                    self.seen[head.rsplit("/", 1)[1]] = now
                    self.cond.notify_all()

    def wait_add(self, bdi, timeout=10):
        with self.cond:
            if not self.cond.wait_for(lambda: bdi in self.seen, timeout):
                raise TimeoutError(f"no add uevent for {bdi}")
            return self.seen.pop(bdi)

    def wait_next(self, prefix, after, timeout=10):
        """The first bdi added after time after whose name starts with prefix,
        and when: a FUSE bdi's name (0:N) is known only once it is mounted."""
        def first():
            return next((b for b, t in self.seen.items() if b.startswith(prefix) and t >= after), None)
        with self.cond:
            if not self.cond.wait_for(lambda: first() is not None, timeout):
                raise TimeoutError(f"no add uevent for a bdi {prefix}*")
            bdi = first()
            return bdi, self.seen.pop(bdi)


class Sampler(threading.Thread):
    """From the next FUSE bdi's add uevent on, polls its read_ahead_kb
    every 0.1 ms: each value it held and when it came."""

    def __init__(self, clock):
        super().__init__(daemon=True)
        self.clock = clock
        self.t0 = time.monotonic()
        self.bdi = self.t_event = None
        self.changes = []
        self.done = threading.Event()

    def run(self):
        self.bdi, self.t_event = self.clock.wait_next("0:", self.t0)
        while not self.done.is_set():
            try:
                kb = bdi_kb(self.bdi)
            except FileNotFoundError:
                break
            if not self.changes or kb != self.changes[-1][1]:
                self.changes.append((time.monotonic(), kb))
            time.sleep(0.0001)


def btrfs_bdi(uuid):
    return os.path.basename(os.readlink(f"/sys/fs/btrfs/{uuid}/bdi"))


def udevd_runs():
    return subprocess.run(["udevadm", "control", "--ping", "-t", "1"], capture_output=True).returncode == 0


def start_udev(machine, builddir, config):
    """udevd (if none runs) and the rule's bdi line for this run only."""
    if not udevd_runs():
        for udevd in ("/lib/systemd/systemd-udevd", "/usr/lib/systemd/systemd-udevd"):
            if os.access(udevd, os.X_OK):
                machine.spawn([udevd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                break
        deadline = time.monotonic() + 10
        while not udevd_runs():
            if time.monotonic() > deadline:
                raise RuntimeError("udevd did not start")
            time.sleep(0.05)
    helper = os.path.join(builddir, "udev", "radaemon-udev")
    made = not os.path.isdir("/run/udev/rules.d")
    os.makedirs("/run/udev/rules.d", exist_ok=True)
    rule = "/run/udev/rules.d/60-radaemon-bench.rules"
    with open(rule, "w") as f:
        f.write(f'SUBSYSTEM=="bdi", ACTION=="add", KERNEL=="btrfs-*", '
                f'IMPORT{{program}}="{helper} --config {config} --bdi $kernel"\n')

    def undo():
        os.unlink(rule)
        if made:
            os.rmdir("/run/udev/rules.d")
        if udevd_runs():  # one started here is gone by now
            subprocess.run(["udevadm", "control", "--reload"])
    machine.on_exit(undo)
    subprocess.run(["udevadm", "control", "--reload"], check=True)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def stats(v):
    return (f"median {statistics.median(v):.2f} ms, 95th {percentile(v, 95):.2f} ms, "
            f"worst {max(v):.2f} ms")


FUSE_SERVER_KB = 64  # what ra-testfs answers INIT with in the unpinned cycles
FUSE_PIN_KB = 1024


def fuse_cycles(machine, builddir, clock, cycles, pin):
    """ra-testfs mounted cycles times under a fresh radaemon, pinned or not."""
    binary = os.path.join(builddir, "tests", "ra-testfs")
    mnt = machine.path("mnt-fuse-pin" if pin else "mnt-fuse")
    os.mkdir(mnt)
    extra = f"[bdi:{mnt}]\nread_ahead_kb = {pin}\n" if pin else ""
    daemon = Daemon(machine, builddir, [], tag="fuse-pin" if pin else "fuse", bdis=[mnt], extra=extra)
    daemon.start()
    # Pinned: the server answers the kernel's offer (128) and the pin is the
    # value. Not: the server's 64 is radaemon's prior, the value to keep.
    argv = [binary, "--files", "1", "--size-mib", "16"] + \
        ([] if pin else ["--max-readahead-kb", str(FUSE_SERVER_KB)]) + [mnt]
    want = pin or FUSE_SERVER_KB
    mounted = []
    machine.on_exit(lambda: [sys_umount(m) for m in mounted])
    at_served = after_decision = lost = 0
    lost_logs = []
    from_event, from_served, decided = [], [], []
    sequences = collections.Counter()
    for i in range(cycles):
        since = len(daemon.output())
        sampler = Sampler(clock)
        sampler.start()
        subprocess.run(argv, check=True)  # returns once INIT is answered
        t_served = time.monotonic()
        mounted.append(mnt)
        st = os.stat(mnt)
        bdi = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        first = bdi_kb(bdi)
        at_served += first == want
        # radaemon checks every bdi's value once a second (interval_ms):
        # what is not there 3 s after the mount answered stays away.
        deadline = time.monotonic() + 3
        t_seen = t_served if first == want else None
        if pin:
            # Or until radaemon has said it yields to what INIT left.
            while t_seen is None and time.monotonic() < deadline:
                if bdi_kb(bdi) == want:
                    t_seen = time.monotonic()
                elif f"{bdi}: read_ahead_kb went from" in daemon.output()[since:]:
                    break
                else:
                    time.sleep(0.0002)
        else:
            # Nothing to write: wait for radaemon's word on this bdi, then look again.
            while f"{bdi}: read_ahead_kb " not in daemon.output()[since:]:
                if time.monotonic() > deadline:
                    tail = "\n".join(daemon.output()[since:].splitlines()[-15:])
                    raise RuntimeError(f"cycle {i}: no decision on {bdi}; radaemon said:\n{tail}")
                time.sleep(0.001)
            decided.append((time.monotonic() - t_served) * 1e3)
            time.sleep(0.02)
            after_decision += bdi_kb(bdi) == want
        sampler.done.set()
        sampler.join()
        if sampler.bdi != bdi:
            raise RuntimeError(f"cycle {i}: the uevent was for {sampler.bdi}, the mount is {bdi}")
        if not sampler.changes:  # done before its first look: the value was there at once
            sampler.changes.append((t_served, first))
        # The value this loop saw last, if the sampler stopped before it did.
        if t_seen is not None and sampler.changes[-1][1] != want:
            sampler.changes.append((t_seen, want))
        sequences[" -> ".join(str(kb) for _, kb in sampler.changes)] += 1
        if pin and t_seen is not None:
            # When the value came for good: the sampler's last change.
            t_set = sampler.changes[-1][0]
            from_event.append((t_set - sampler.t_event) * 1e3)
            from_served.append(max(0.0, t_set - t_served) * 1e3)
        elif pin:
            lost += 1
            if len(lost_logs) < 3:
                lost_logs.append(f"cycle {i}, {bdi}: " + " | ".join(
                    line.split(": ", 1)[1][:110] for line in daemon.output()[since:].splitlines()
                    if line.startswith(f"{bdi}: ")))
        sys_umount(mnt)
        mounted.remove(mnt)
    daemon.stop()

    kernel = 128 if pin else f"min(128, {FUSE_SERVER_KB})"
    print(f"FUSE (ra-testfs) mounted {cycles} times, radaemon "
          + (f"with [bdi:{mnt}] read_ahead_kb = {pin}" if pin else "without a pin")
          + f": {want} KiB in place when the mount answered (INIT done) in {at_served} of {cycles}"
          + (f"; still {want} after radaemon's decision in {after_decision} of {cycles}" if not pin else ""))
    print(f"  the kernel gives {kernel} at INIT; what the bdi held from its uevent on (cycles):")
    for seq, n in sequences.most_common():
        print(f"    {seq}: {n}")
    if pin:
        print(f"  {want} KiB not there 3 s after the mount answered in {lost} of {cycles}; "
              "radaemon's log on the first ones:")
        for line in lost_logs:
            print(f"    {line}")
    if from_event:
        print(f"  from the bdi's add uevent to the value ({len(from_event)} cycles): {stats(from_event)}")
        print(f"  from the served mount to the value:     {stats(from_served)}")
    else:
        print(f"  from the served mount to radaemon's decision in its log: {stats(decided)}")
    decisions = [line for line in daemon.output().splitlines() if "0:" in line]
    kinds = collections.Counter(line.split(": ", 1)[1].split(" (")[0].split(":")[0]
                                for line in decisions if ": " in line)
    print("  radaemon's log lines on the bdis, by kind: "
          + "; ".join(f"{k!r} x{n}" for k, n in kinds.most_common(8)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cycles", type=int, default=200)
    p.add_argument("--fs", default="btrfs", choices=("btrfs", "fuse"))
    p.add_argument("--udev", action="store_true", help="udevd and the rule's bdi line run too (btrfs)")
    p.add_argument("--class", dest="cls", choices=sorted(CLASSES), help="a device of this class, not a sparse file")
    p.add_argument("--builddir", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    args = p.parse_args()

    if args.fs == "fuse":
        if args.udev or args.cls:
            sys.exit("bdi_mounts.py: --udev and --class are for btrfs")
        builddir = os.path.abspath(args.builddir)
        with Machine() as machine:
            clock = UeventClock()
            clock.start()
            fuse_cycles(machine, builddir, clock, args.cycles, None)
            fuse_cycles(machine, builddir, clock, args.cycles, FUSE_PIN_KB)
        return 0

    with Machine() as machine:
        machine.builddir = os.path.abspath(args.builddir)
        if args.cls:
            loop = Device(machine, CLASSES[args.cls]).name
        else:
            loop = machine.new_loop(machine.sparse_file("btrfs.img", 8 << 30), direct_io=False)
        subprocess.run(["mkfs.btrfs", "-q", "-f", "--nodiscard", f"/dev/{loop}"], check=True, capture_output=True)
        mnt = machine.path("mnt")
        os.mkdir(mnt)
        uuid = subprocess.run(["blkid", "-s", "UUID", "-o", "value", f"/dev/{loop}"], check=True,
                              capture_output=True, text=True).stdout.strip()
        builddir = os.path.abspath(args.builddir)
        daemon = Daemon(machine, builddir, [loop], tag="bdi", bdis=[mnt, "btrfs"])
        daemon.start()
        if args.udev:
            start_udev(machine, builddir, daemon.config)
        mounted = []
        machine.on_exit(lambda: [sys_umount(m) for m in mounted])

        clock = UeventClock()
        clock.start()
        want = None
        at_return, from_event, from_return = 0, [], []
        for i in range(args.cycles):
            sys_mount(f"/dev/{loop}", mnt, "btrfs")
            t_ret = time.monotonic()
            bdi = btrfs_bdi(uuid)
            first = bdi_kb(bdi)
            mounted.append(mnt)
            t_event = clock.wait_add(bdi)
            if want is None:  # the first cycle tells what radaemon wants
                deadline = time.monotonic() + 10
                while bdi_kb(bdi) == 4096 and time.monotonic() < deadline:
                    time.sleep(0.0005)
                want = bdi_kb(bdi)
                log(f"bdi_mounts: radaemon sets {want} KiB on btrfs over {loop} (the kernel gives 4096)")
            at_return += first == want
            deadline = time.monotonic() + 10
            while bdi_kb(bdi) != want:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"cycle {i}: {bdi} stays at {bdi_kb(bdi)}, not {want}")
                time.sleep(0.0002)
            t_set = time.monotonic()
            from_event.append((t_set - t_event) * 1e3)
            from_return.append(max(0.0, t_set - t_ret) * 1e3)
            sys_umount(mnt)
            mounted.remove(mnt)
        daemon.stop()

    who = "radaemon and the udev rule" if args.udev else "radaemon alone (mountinfo)"
    where = f"a {args.cls} device" if args.cls else "a sparse file"
    print(f"btrfs on {where} mounted {args.cycles} times, {who}: {want} KiB in place at "
          f"mount(2)'s return in {at_return} of {args.cycles}")
    print(f"  from the bdi's add uevent to the value: {stats(from_event)}")
    print(f"  from mount(2)'s return to the value:    {stats(from_return)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
