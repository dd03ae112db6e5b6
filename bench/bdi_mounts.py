#!/usr/bin/env python3
"""How soon a new bdi holds radaemon's value: btrfs mounted N times.

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

With --udev, a udevd runs too (started here if none runs) with the
shipped rule's bdi line pointed at this build's helper, in
/run/udev/rules.d for the run only: the helper decides on the "add",
during the mount. Run as root from a build tree, holding
/run/radaemon-bench.lock.
"""
import argparse
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


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cycles", type=int, default=200)
    p.add_argument("--udev", action="store_true", help="udevd and the rule's bdi line run too")
    p.add_argument("--class", dest="cls", choices=sorted(CLASSES), help="a device of this class, not a sparse file")
    p.add_argument("--builddir", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    args = p.parse_args()

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

    def stats(v):
        return (f"median {statistics.median(v):.2f} ms, 95th {percentile(v, 95):.2f} ms, "
                f"worst {max(v):.2f} ms")
    who = "radaemon and the udev rule" if args.udev else "radaemon alone (mountinfo)"
    where = f"a {args.cls} device" if args.cls else "a sparse file"
    print(f"btrfs on {where} mounted {args.cycles} times, {who}: {want} KiB in place at "
          f"mount(2)'s return in {at_return} of {args.cycles}")
    print(f"  from the bdi's add uevent to the value: {stats(from_event)}")
    print(f"  from mount(2)'s return to the value:    {stats(from_return)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
