"""Workloads, and one measurement of one workload on one device.

Every workload reads the raw block device with buffered I/O, the only kind
readahead applies to. Each measurement is a new process that opens the
device afresh, because a file takes the readahead size when it is opened.
fio runs with fadvise_hint=0: its default hints (POSIX_FADV_SEQUENTIAL
doubles the window, FADV_RANDOM and MADV_RANDOM switch readahead off) would
measure fio, not read_ahead_kb. The random-pattern seed is fio's fixed
default, so every mode of a cell does the same reads.
"""
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

from machine import drop_cache, read_kb, read_stat, wait_idle

GiB = 1024 ** 3
MiB = 1024 ** 2

# The blkid-style probe: 1 KiB at 0, then 16 KiB at byte 1536, one open.
PROBE = """
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_CLOEXEC)
os.pread(fd, 1024, 0)
os.pread(fd, 16384, 1536)
os.close(fd)
"""


@dataclass
class Workload:
    name: str
    summary: str
    unit: str                 # MB/s, IOPS, or KiB read from the device
    higher_is_better: bool
    mem_bytes: int | None     # page cache limit (memory cgroup), or none

    def argv(self, dev, size, runtime, output):
        """The command that does the work once; output receives fio's JSON."""
        fio = ["fio", "--name=bench", f"--filename={dev}", "--direct=0", "--invalidate=0",
               "--fadvise_hint=0", "--time_based", f"--runtime={runtime}", "--group_reporting",
               "--output-format=json", f"--output={output}"]
        data_set = min(4 * GiB, size)
        quarter = size // 4 // MiB * MiB
        return {
            "probe": [sys.executable, "-c", PROBE, dev],
            "seq": fio + ["--ioengine=psync", "--rw=read", "--bs=4k"],
            "pdd-single": fio + ["--ioengine=psync", "--rw=read", "--bs=4k", "--numjobs=4"],
            "pdd-multi": fio + ["--ioengine=psync", "--rw=read", "--bs=4k", "--numjobs=4",
                                f"--size={quarter}", f"--offset_increment={quarter}"],
            "rand16k": fio + ["--ioengine=psync", "--rw=randread", "--bs=16k", "--numjobs=4",
                              f"--size={data_set}"],
            "mmap-rand": fio + ["--ioengine=mmap", "--rw=randread", "--bs=4k",
                                f"--size={data_set}"],
        }[self.name]

    def score(self, output, dev_kib):
        if self.name == "probe":
            return dev_kib
        with open(output) as f:
            read = json.load(f)["jobs"][0]["read"]
        return read["bw_bytes"] / 1e6 if self.unit == "MB/s" else read["iops"]


WORKLOADS = {w.name: w for w in [
    Workload("seq", "one sequential reader, 4 KiB reads (cat, cp, a backup)",
             "MB/s", True, None),
    Workload("pdd-single", "paralleldd-single: 4 readers of the same data, started together",
             "MB/s", True, None),
    Workload("pdd-multi", "paralleldd-multi: 4 sequential readers of 4 different regions",
             "MB/s", True, None),
    Workload("rand16k", "sysbench fileio rndrd: random 16 KiB reads by 4 threads over 4 GiB, "
             "256 MiB page cache", "IOPS", True, 256 * MiB),
    Workload("mmap-rand", "random 4 KiB mmap reads over 4 GiB with a 256 MiB page cache "
             "(every fault reads a window around it)", "IOPS", True, 256 * MiB),
    Workload("probe", "blkid-style probe: 1 KiB at 0, then 16 KiB at 1536, "
             "scored by KiB read from the device", "KiB", False, None),
]}


def measure(machine, device, workload, runtime):
    """Runs workload once on device, as it is set now, and scores it.

    The device's page cache is dropped first; the kernel also drops it at
    the last close, and the close waits for readahead still in flight, so
    the KiB read include the tail of the last window.
    """
    name = device.name
    group = device.cgroup(workload.mem_bytes)
    output = machine.path("fio.json")
    if os.path.exists(output):
        os.unlink(output)

    wait_idle(name)
    drop_cache(name)
    kb_at_open = read_kb(name)
    _, kib0 = read_stat(name)
    t0 = time.monotonic()
    child = machine.spawn(workload.argv(device.node, device.cls.size, runtime, output),
                          preexec_fn=group.join, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    _, err = child.communicate()
    machine.stop(child)
    seconds = time.monotonic() - t0
    if child.returncode != 0:
        raise RuntimeError(f"{workload.name} on {name} failed: {err.decode(errors='replace')}")
    wait_idle(name)
    _, kib1 = read_stat(name)
    dev_kib = kib1 - kib0
    return {"score": workload.score(output, dev_kib), "dev_kib": dev_kib,
            "kb_at_open": kb_at_open, "kb_after": read_kb(name), "seconds": round(seconds, 3)}
