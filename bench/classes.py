"""Device classes: real kinds of disks, emulated by the device model or, to
compare, by a throttled loop device.

The model classes (the default) are served by bench/ra-devmodel through a
loop device with direct I/O: the block layer stays real and the model
answers each command when the device it names would (bench/model.py,
bench/classes/*.conf, checked by bench/validate.py). The throttled classes
(names starting with thr-) are what the bench used before: a fixed cost for
every command, whatever it follows. They stay only to compare.

A throttled class is a loop device over a sparse file: a real block device (uevents, sysfs,
page cache, readahead). What makes it a USB stick or a disk:
  - the read throttle of the cgroup the workload runs in: iops is the cost
    per command, bps the media bandwidth (blk-throttle counts requests after
    they are split at max_sectors_kb);
  - queue/rotational, which radaemon reads;
  - queue/max_sectors_kb, the largest command the device takes;
  - the size, which radaemon reads and which bounds the data set.
The sparse file holds no data: reads of its holes cost only CPU, so the
throttle, not the backing disk, sets the speed.
"""
from dataclasses import dataclass, field

import os
import re

import model
from machine import LOOP_CTL_ADD, loop_control, read_kb, set_kb, sysfs, write_sysfs

KiB, MiB, GiB, TiB = 1024, 1024 ** 2, 1024 ** 3, 1024 ** 4

# Every point from 4 KiB to 8 MiB, by doubling: the sweep that finds the oracle.
SWEEP_KB = [4 << i for i in range(12)]

# What the kernel gives a real disk that reports no optimal I/O size
# (VM_READAHEAD_PAGES). The loop driver sets 2560 KiB at attach instead; that
# is an artefact of the emulation, recorded in the report but not used as
# the classes' default.
KERNEL_DEFAULT_KB = 128


@dataclass
class DeviceClass:
    name: str
    emulates: str
    size: int
    rotational: bool
    iops: int | None            # None: no throttle
    bps: int | None
    workloads: list
    max_sectors_kb: int | None = None
    costly: bool = False        # each command costs much: larger requests read faster
    kernel_kb: int = KERNEL_DEFAULT_KB
    sweep: list = field(default_factory=lambda: list(SWEEP_KB))
    why: str = ""
    model: str | None = None    # a bench/classes/*.conf class the device model serves


def _model_class(name, workloads, why, costly=True, sweep=None):
    """A model class: size and rotational flag from its parameter file."""
    with open(os.path.join(model.CLASS_DIR, f"{name}.conf")) as f:
        text = f.read()
    size = int(re.search(r"^size\s*=\s*(\d+)", text, re.M).group(1))
    rotational = re.search(r"^rotational\s*=\s*(\d)", text, re.M).group(1) == "1"
    emulates = re.search(r"^emulates\s*=\s*(.+)$", text, re.M).group(1)
    return DeviceClass(name, emulates, size=size, rotational=rotational, iops=None, bps=None,
                       workloads=workloads, costly=costly, why=why, model=name,
                       sweep=sweep or list(SWEEP_KB))


RAW = ["seq", "pdd-single", "pdd-multi", "rand16k", "mmap-rand"]
MODEL_CLASSES = {c.name: c for c in [
    _model_class("tiny-stick", ["probe"],
                 "every KiB read costs 68 ms, so what matters is how much a probe reads",
                 sweep=[4, 8, 16, 32, 64, 128, 256, 512, 1024]),
    _model_class("usb-stick", RAW, "1 ms a command and commands of 120 KiB: small windows waste "
                 "commands"),
    _model_class("hdd-7200", RAW, "seeks only when a command jumps, and its cache reads ahead: "
                 "one stream is fast at any window, interleaved ones want large windows, random "
                 "mmap reads small ones"),
    _model_class("ssd-ctrl", RAW, "250 us a command: full bandwidth only with large commands, "
                 "while its size suggests a small window"),
]}


# USB sticks are marked non-rotational: radaemon gives "usb" transport the
# kernel default capped by size, and a loop device cannot show transport usb
# without udevd; a non-rotational device without optimal I/O size takes the
# same path, so the daemon decides as it would for the real stick.
THROTTLED_CLASSES = {c.name: c for c in [
    DeviceClass(
        "thr-tiny-stick", "a 505 KiB USB stick at 15 kB/s (old camera card, cheap key)",
        size=505 * KiB, rotational=False, iops=50, bps=15_000, max_sectors_kb=120,
        costly=True, workloads=["probe"],
        # Every probe costs 2 to 22 s here; the sweep stops at 1 MiB to save
        # minutes, and 4 MiB is measured as its own mode.
        sweep=[4, 8, 16, 32, 64, 128, 256, 512, 1024],
        why="every KiB read costs 70 ms, so what matters is how much a probe reads"),
    DeviceClass(
        "thr-usb-stick", "an 8 GiB USB 2 stick: 30 MB/s, costly commands of at most 120 KiB",
        size=8 * GiB, rotational=False, iops=250, bps=30_000_000, max_sectors_kb=120,
        costly=True, workloads=["seq", "pdd-single", "pdd-multi", "rand16k", "mmap-rand"],
        why="full bandwidth needs every command full, so small windows lose"),
    DeviceClass(
        "thr-hdd", "a 1 TiB hard disk: rotational, ~150 IOPS, ~180 MB/s",
        size=1 * TiB, rotational=True, iops=150, bps=180_000_000,
        costly=True, workloads=["seq", "pdd-single", "pdd-multi", "rand16k", "mmap-rand"],
        why="every request pays a seek: large windows pay for sequential work, "
            "and cost random mmap work dearly"),
    DeviceClass(
        "thr-ssd-ctrl", "a 22 GB SSD behind a controller with a heavy cost per command: "
                    "400 IOPS, 300 MB/s",
        size=22_000_000_000, rotational=False, iops=400, bps=300_000_000,
        costly=True, workloads=["seq", "pdd-single", "pdd-multi", "rand16k", "mmap-rand"],
        why="full bandwidth only with requests of 768 KiB and more, while its size "
            "suggests a small window"),
    # Unthrottled, a loop device here is CPU-bound, and on this 2-core VM
    # the same run varied threefold with other work on the machine; 400 MB/s
    # is what it sustains at every window, so the device, not the machine's
    # mood, sets the score.
    DeviceClass(
        "thr-nvme", "a fast NVMe-like device: cheap commands (20000 IOPS), 400 MB/s",
        size=512 * GiB, rotational=False, iops=20_000, bps=400_000_000,
        workloads=["seq", "pdd-single", "pdd-multi", "rand16k", "mmap-rand"],
        why="commands are cheap, so a small window reaches full bandwidth and a large "
            "one only wastes reads"),
]}


CLASSES = {**MODEL_CLASSES, **THROTTLED_CLASSES}


class Device:
    """One emulated device: a loop device set up as its class says."""

    def __init__(self, machine, cls):
        self.machine = machine
        self.cls = cls
        if cls.model:
            self._attach_model(machine, cls)
        else:
            image = machine.sparse_file(f"{cls.name}.img", cls.size)
            self.name = machine.new_loop(image)
            self.attach_kb = read_kb(self.name)
            write_sysfs(self.name, "queue/rotational", int(cls.rotational))
            if cls.max_sectors_kb:
                write_sysfs(self.name, "queue/max_sectors_kb", cls.max_sectors_kb)
            # A loop device takes its rotational flag from the backing disk: tell
            # udev (and any radaemon) that the device changed, as docs/design.md asks.
            write_sysfs(self.name, "uevent", "change")
        self.node = f"/dev/{self.name}"
        self.devnum = sysfs(self.name, "dev")
        self.reset()
        self.groups = {}

    def _attach_model(self, machine, cls):
        """The model serves the device; its server runs in the bench's own
        cgroup, never in a workload's."""
        while True:
            index = machine.unused_indices(1)[0]
            try:
                loop_control(LOOP_CTL_ADD, index)
            except FileExistsError:
                continue
            break
        machine.track_loop(index)
        self.name = f"loop{index}"
        machine.on_exit(lambda: model.detach(self.name, quiet=True))
        # The loop driver's value before the model class is configured.
        record = model.attach(cls.model, index=index, builddir=machine.builddir)
        self.attach_kb = read_kb(self.name)
        self.params = record["params"]

    def reset(self):
        """Puts read_ahead_kb where the kernel leaves a fresh device of this class."""
        set_kb(self.name, self.cls.kernel_kb)

    def cgroup(self, mem_bytes=None):
        """The cgroup a workload runs in: this class's throttle, and a memory limit."""
        if mem_bytes not in self.groups:
            # The device's name too: fs.py has two devices of a class at once
            # (ext4 and xfs on one class, or btrfs over two).
            tag = f"{self.cls.name}-{self.name}" + (f"-{mem_bytes // MiB}M" if mem_bytes else "")
            self.groups[mem_bytes] = self.machine.cgroup(
                tag, self.devnum, self.cls.iops, self.cls.bps, mem_bytes)
        return self.groups[mem_bytes]

    def describe(self):
        cls = self.cls
        return {"class": cls.name, "emulates": cls.emulates, "device": self.name,
                "size": cls.size, "rotational": cls.rotational, "iops": cls.iops,
                "bps": cls.bps, "max_sectors_kb": int(sysfs(self.name, "queue/max_sectors_kb")),
                "kernel_kb": cls.kernel_kb, "attach_kb": self.attach_kb, "costly": cls.costly,
                "why": cls.why, "model": getattr(self, "params", None),
                "scheduler": sysfs(self.name, "queue/scheduler")}
