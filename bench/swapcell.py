"""Swap-in on a device: how long a process takes to touch its memory again
after the kernel swapped it out to that device, at each vm.page-cluster.

The process runs in a memory cgroup (v1) whose limit is a quarter of its
working set, so touching it all swaps most of it out; it then re-reads it
sequentially, and that re-read is timed. The device is the only swap the
kernel uses while this runs (the highest priority), and everything is put
back: swap off, the cgroup removed, page-cluster restored.
"""
import contextlib
import os
import subprocess
import sys
import time

PAGE_CLUSTER = "/proc/sys/vm/page-cluster"
MEMCG = "/sys/fs/cgroup/memory"

CHILD = r"""
import mmap, sys, time
size = int(sys.argv[1])
m = mmap.mmap(-1, size)
for i in range(0, size, 4096):
    m[i] = 1
print("ready", flush=True)
sys.stdin.readline()
t = time.monotonic()
s = 0
for i in range(0, size, 4096):
    s += m[i]
print(time.monotonic() - t, flush=True)
"""


@contextlib.contextmanager
def swap_on(node):
    subprocess.run(["mkswap", node], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["swapon", "-p", "32767", node], check=True)
    try:
        yield
    finally:
        subprocess.run(["swapoff", node], check=True)


@contextlib.contextmanager
def page_cluster():
    with open(PAGE_CLUSTER) as f:
        saved = f.read().strip()
    try:
        yield lambda v: open(PAGE_CLUSTER, "w").write(str(v))
    finally:
        with open(PAGE_CLUSTER, "w") as f:
            f.write(saved)


@contextlib.contextmanager
def memory_cgroup(limit):
    """A memory cgroup (v1) limited to limit bytes, removed afterwards."""
    path = f"{MEMCG}/radaemon-bench-swap-{os.getpid()}"
    os.mkdir(path)
    try:
        with open(f"{path}/memory.limit_in_bytes", "w") as f:
            f.write(str(limit))
        yield path
    finally:
        for _ in range(100):
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.05)


def reread_seconds(cgroup, working):
    def join():
        with open(f"{cgroup}/tasks", "w") as f:
            f.write(str(os.getpid()))
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(working)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, preexec_fn=join)
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the swap workload did not start")
        child.stdin.write("go\n")
        child.stdin.flush()
        seconds = float(child.stdout.readline())
    finally:
        child.kill()
        child.wait()
    return seconds


def sequential_swapin(dev, working, clusters):
    """{page-cluster: seconds to re-read working bytes swapped out to dev}."""
    times = {}
    with swap_on(f"/dev/{dev}"), page_cluster() as set_cluster, memory_cgroup(working // 4) as cg:
        for pc in clusters:
            set_cluster(pc)
            times[pc] = reread_seconds(cg, working)
    return times
