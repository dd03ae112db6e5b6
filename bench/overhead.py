#!/usr/bin/env python3
"""What radaemon costs: hotplug-to-applied latency and idle memory.

Run as root from a build tree (after make). It makes its own loop devices,
gives the daemon an allow-list of exactly those, starts udevd if none runs,
and removes everything it made when it ends.

  overhead.py hotplug [--count 50]   udev event -> read_ahead_kb written
  overhead.py rss [--devices 10]     resident memory of an idle daemon
  overhead.py all                    both, as a Markdown table

The latency is measured from the moment udevd's event was queued on our
netlink socket (the kernel's SO_TIMESTAMPNS: the same moment the daemon's
copy was queued) until this process reads the daemon's value back from
sysfs. Our own wake-up and polling count against radaemon, so the numbers are
an upper bound.
"""
import argparse
import errno
import fcntl
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NETLINK_KOBJECT_UEVENT = 15
UDEV_MONITOR_GROUP = 2
SO_TIMESTAMPNS = 35
LOOP_CTL_ADD = 0x4C80
LOOP_CTL_REMOVE = 0x4C81
FIRST_INDEX = 3000


def run(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def loop_control(request, index):
    fd = os.open("/dev/loop-control", os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, request, index)
    finally:
        os.close(fd)


def remove_loop(index, timeout=10):
    """Detaches and deletes; udevd may hold the device open for a moment."""
    subprocess.run(["losetup", "-d", f"/dev/loop{index}"], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while os.path.exists(f"/sys/block/loop{index}"):
        try:
            loop_control(LOOP_CTL_REMOVE, index)
        except OSError as e:
            if e.errno not in (errno.EBUSY, errno.ENODEV) or time.monotonic() > deadline:
                print(f"overhead.py: cannot remove loop{index}: {e}", file=sys.stderr)
                return
            time.sleep(0.02)


def wait_detached(index, timeout=10):
    """A detach takes effect when the last opener (udevd's probe) closes."""
    deadline = time.monotonic() + timeout
    while open(f"/sys/block/loop{index}/size").read().strip() != "0":
        if time.monotonic() > deadline:
            raise TimeoutError(f"loop{index} stays attached")
        time.sleep(0.005)


def read_kb(name):
    with open(f"/sys/block/{name}/queue/read_ahead_kb") as f:
        return int(f.read())


class Bench:
    """Owns what the measurement made: files, loop devices, udevd, daemon."""

    def __init__(self, builddir):
        self.radaemon = os.path.join(builddir, "daemon", "radaemon")
        if not os.access(self.radaemon, os.X_OK):
            sys.exit(f"overhead.py: no daemon at {self.radaemon}; build first")
        self.tmp = tempfile.TemporaryDirectory(prefix="radaemon-bench.")
        self.indices = []
        self.udevd = None
        self.daemon = None
        self.image = os.path.join(self.tmp.name, "tiny.img")
        with open(self.image, "wb") as f:
            f.truncate(505 * 1024)

    def __enter__(self):
        if subprocess.run(["udevadm", "control", "--ping", "-t", "1"],
                          stderr=subprocess.DEVNULL).returncode != 0:
            self.udevd = subprocess.Popen(["/lib/systemd/systemd-udevd"],
                                          stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while subprocess.run(["udevadm", "control", "--ping", "-t", "1"],
                                 stderr=subprocess.DEVNULL).returncode != 0:
                if time.monotonic() > deadline:
                    sys.exit("overhead.py: udevd did not start")
                time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.stop_daemon()
        for index in self.indices:
            remove_loop(index)
        if self.udevd:
            self.udevd.terminate()
            self.udevd.wait()
        self.tmp.cleanup()

    def unused_indices(self, n):
        found, index = [], FIRST_INDEX
        while len(found) < n:
            if not os.path.exists(f"/sys/block/loop{index}"):
                found.append(index)
            index += 1
        return found

    def attach(self, index):
        if index not in self.indices:
            self.indices.append(index)
        run("losetup", f"/dev/loop{index}", self.image)

    def start_daemon(self, names):
        conf = os.path.join(self.tmp.name, "radaemon.conf")
        with open(conf, "w") as f:
            # Ten names a line: long lists continue on indented lines.
            rows = [" ".join(names[i:i + 10]) for i in range(0, len(names), 10)]
            f.write("[daemon]\ndevices = " + "\n    ".join(rows) + "\n")
        log = open(os.path.join(self.tmp.name, "daemon.log"), "w")
        self.daemon = subprocess.Popen([self.radaemon, "--foreground", "--config", conf],
                                       stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while "Managing" not in open(log.name).read():
            if time.monotonic() > deadline or self.daemon.poll() is not None:
                sys.exit("overhead.py: the daemon did not start:\n" + open(log.name).read())
            time.sleep(0.01)

    def stop_daemon(self):
        if self.daemon:
            self.daemon.terminate()
            self.daemon.wait()
            self.daemon = None


def udev_monitor():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC,
                      NETLINK_KOBJECT_UEVENT)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind((0, UDEV_MONITOR_GROUP))
    return s


def next_event(sock, name, action, deadline, diskseq=None):
    """Returns the queueing time (ns, CLOCK_REALTIME) of udevd's next matching event.

    With diskseq, only an event for that attachment counts: udevd may still be
    sending the events of the previous detach, which carry the older one.
    """
    while True:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        data, ancdata, _, _ = sock.recvmsg(1 << 16, socket.CMSG_SPACE(16))
        if not data.startswith(b"libudev\0"):
            continue
        off, length = struct.unpack_from("=II", data, 16)
        props = dict(p.split("=", 1) for p in
                     data[off:off + length].decode(errors="replace").split("\0") if "=" in p)
        if props.get("DEVNAME") != f"/dev/{name}" or props.get("ACTION") != action:
            continue
        if diskseq is not None and props.get("DISKSEQ") != diskseq:
            continue
        for level, kind, value in ancdata:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("=qq", value[:16])
                return sec * 1_000_000_000 + nsec
        return time.time_ns()


def wait_applied(name, want, deadline):
    while time.monotonic() < deadline:
        if read_kb(name) == want:
            return time.time_ns()
    raise TimeoutError(f"{name} never reached {want} KiB")


def measure_hotplug(bench, count, want=4):
    """count "add" and count "change" events, each ending with the value applied."""
    added = bench.unused_indices(count + 1)
    spare = added.pop()
    names = [f"loop{i}" for i in added + [spare]]
    bench.start_daemon(names)
    sock = udev_monitor()
    results = {"add": [], "change": []}

    # add: losetup on an index that does not exist creates the device.
    for index in added:
        bench.attach(index)
        deadline = time.monotonic() + 10
        t0 = next_event(sock, f"loop{index}", "add", deadline)
        results["add"].append(wait_applied(f"loop{index}", want, deadline) - t0)

    # change: attaching a file to a free device makes the kernel raise the
    # value (2560 KiB here) and report "change" only.
    bench.indices.append(spare)
    loop_control(LOOP_CTL_ADD, spare)
    for _ in range(count):
        run("losetup", f"/dev/loop{spare}", bench.image)
        diskseq = open(f"/sys/block/loop{spare}/diskseq").read().strip()
        deadline = time.monotonic() + 10
        t0 = next_event(sock, f"loop{spare}", "change", deadline, diskseq)
        results["change"].append(wait_applied(f"loop{spare}", want, deadline) - t0)
        run("losetup", "-d", f"/dev/loop{spare}")
        wait_detached(spare)

    sock.close()
    bench.stop_daemon()
    return {kind: summarize(ns) for kind, ns in results.items()}


def summarize(ns):
    ms = sorted(x / 1e6 for x in ns)
    return {"n": len(ms), "median_ms": statistics.median(ms), "max_ms": ms[-1],
            "p90_ms": ms[int(0.9 * (len(ms) - 1))]}


def measure_rss(bench, devices, settle=2.0):
    indices = bench.unused_indices(devices)
    for index in indices:
        bench.attach(index)
    bench.start_daemon([f"loop{i}" for i in indices])
    time.sleep(settle)
    status = {}
    with open(f"/proc/{bench.daemon.pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                status[key] = int(value.split()[0])
    bench.stop_daemon()
    return {"devices": devices, **{k + "_KiB": v for k, v in status.items()}}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["hotplug", "rss", "all"])
    parser.add_argument("--builddir", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--devices", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("overhead.py: run as root (loop devices, sysfs)")

    out = {}
    with Bench(args.builddir) as bench:
        if args.what in ("hotplug", "all"):
            out["hotplug"] = measure_hotplug(bench, args.count)
        if args.what in ("rss", "all"):
            out["rss"] = measure_rss(bench, args.devices)

    if args.json:
        print(json.dumps(out, indent=2))
        return
    if "hotplug" in out:
        print("| event | n | median | p90 | max |")
        print("|---|---|---|---|---|")
        for kind, r in out["hotplug"].items():
            print(f"| {kind} | {r['n']} | {r['median_ms']:.2f} ms | {r['p90_ms']:.2f} ms "
                  f"| {r['max_ms']:.2f} ms |")
    if "rss" in out:
        r = out["rss"]
        print(f"\nidle with {r['devices']} devices: VmRSS {r['VmRSS_KiB']} KiB "
              f"(anon {r['RssAnon_KiB']} KiB, file {r['RssFile_KiB']} KiB), "
              f"peak {r['VmHWM_KiB']} KiB")


if __name__ == "__main__":
    main()
