"""What the bench makes on this machine, and how it is undone.

Loop devices (indices from 5000 on, so the test suite's 1000-3999 are never
touched), cgroups named radaemon-bench-*, child processes, a scratch
directory, and tracefs at /sys/kernel/tracing where nothing (systemd, on a
booted machine) has mounted it. Machine owns them all and removes them in
reverse order when the run ends, also on an error, Ctrl-C or SIGTERM.
"""
import errno
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

LOOP_CTL_ADD = 0x4C80
LOOP_CTL_REMOVE = 0x4C81
BLKFLSBUF = 0x1261
# Ours: 5000-5999. The test suite uses 1000-3999, and other work on this
# machine has been seen at 6000 and above.
FIRST_INDEX, LAST_INDEX = 5000, 5999
CGROUP_PREFIX = "radaemon-bench-"
CGROUP_ROOT = "/sys/fs/cgroup"
TRACEFS = "/sys/kernel/tracing"


def run(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def log(message):
    print(message, file=sys.stderr, flush=True)


# --- sysfs -------------------------------------------------------------------

def sysfs(name, attr):
    with open(f"/sys/block/{name}/{attr}") as f:
        return f.read().strip()


def write_sysfs(name, attr, value):
    with open(f"/sys/block/{name}/{attr}", "w") as f:
        f.write(str(value))


def read_kb(name):
    return int(sysfs(name, "queue/read_ahead_kb"))


def set_kb(name, kb):
    write_sysfs(name, "queue/read_ahead_kb", kb)
    if read_kb(name) != kb:
        raise RuntimeError(f"{name}: wrote {kb} to read_ahead_kb, the kernel holds {read_kb(name)}")


def read_stat(name):
    """(read requests, KiB read) so far, from /sys/block/<dev>/stat."""
    fields = sysfs(name, "stat").split()
    return int(fields[0]), int(fields[2]) / 2


def wait_idle(name, timeout=120):
    """Waits until the device has no request in flight."""
    deadline = time.monotonic() + timeout
    while sysfs(name, "inflight").split() != ["0", "0"]:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{name} stays busy")
        time.sleep(0.01)


def drop_cache(name):
    """Drops this device's page cache only (BLKFLSBUF), not the machine's."""
    fd = os.open(f"/dev/{name}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, BLKFLSBUF, 0)
    finally:
        os.close(fd)


# --- loop devices ------------------------------------------------------------

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
                log(f"bench: cannot remove loop{index}: {e}")
                return
            time.sleep(0.02)


def wait_detached(index, timeout=10):
    """A detach takes effect when the last opener (udevd's probe) closes."""
    deadline = time.monotonic() + timeout
    while sysfs(f"loop{index}", "size") != "0":
        if time.monotonic() > deadline:
            raise TimeoutError(f"loop{index} stays attached")
        time.sleep(0.005)


# --- cgroups -----------------------------------------------------------------

def cgroup_version():
    if os.path.exists(f"{CGROUP_ROOT}/blkio/blkio.throttle.read_iops_device"):
        return 1
    if os.path.exists(f"{CGROUP_ROOT}/cgroup.controllers"):
        return 2
    raise RuntimeError("no blkio (cgroup v1) or io (cgroup v2) controller is mounted")


class Cgroup:
    """Where a workload runs: a read throttle on one device and a memory limit.

    cgroup v1 keeps them in two hierarchies (blkio, memory); cgroup v2 in one
    directory (io.max, memory.max). A process joins by writing its pid.
    """

    def __init__(self, name, version):
        self.name = CGROUP_PREFIX + name
        self.version = version
        self.dirs = []

    def _mkdir(self, path):
        os.mkdir(path)
        self.dirs.append(path)
        return path

    def create(self, devnum, iops=None, bps=None, mem_bytes=None):
        if self.version == 1:
            blkio = self._mkdir(f"{CGROUP_ROOT}/blkio/{self.name}")
            if iops:
                self._write(blkio, "blkio.throttle.read_iops_device", f"{devnum} {iops}")
            if bps:
                self._write(blkio, "blkio.throttle.read_bps_device", f"{devnum} {bps}")
            if mem_bytes:
                memory = self._mkdir(f"{CGROUP_ROOT}/memory/{self.name}")
                self._write(memory, "memory.limit_in_bytes", mem_bytes)
            return
        # cgroup v2 (untested on the reference machine, which has v1).
        enabled = open(f"{CGROUP_ROOT}/cgroup.subtree_control").read().split()
        if "io" not in enabled or "memory" not in enabled:
            raise RuntimeError(
                f"enable io and memory in {CGROUP_ROOT}/cgroup.subtree_control first")
        group = self._mkdir(f"{CGROUP_ROOT}/{self.name}")
        limits = [f"riops={iops}" if iops else "", f"rbps={bps}" if bps else ""]
        if any(limits):
            self._write(group, "io.max", f"{devnum} " + " ".join(x for x in limits if x))
        if mem_bytes:
            self._write(group, "memory.max", mem_bytes)

    @staticmethod
    def _write(directory, key, value):
        with open(f"{directory}/{key}", "w") as f:
            f.write(str(value))

    def join(self):
        """Moves the calling process in (run in the child, before exec)."""
        for d in self.dirs:
            self._write(d, "cgroup.procs", os.getpid())

    def remove(self, timeout=10):
        for d in reversed(self.dirs):
            deadline = time.monotonic() + timeout
            while os.path.exists(d):
                try:
                    os.rmdir(d)
                except OSError as e:
                    # EBUSY while an exiting child is still listed.
                    if e.errno != errno.EBUSY or time.monotonic() > deadline:
                        log(f"bench: cannot remove {d}: {e}")
                        break
                    time.sleep(0.05)
        self.dirs = []


# --- tracefs -----------------------------------------------------------------

def tracefs_mounted():
    return os.path.exists(os.path.join(TRACEFS, "tracing_on"))


def mount_tracefs():
    """Mounts tracefs where systemd mounts it at boot (sys-kernel-tracing.mount),
    so the daemon can follow requests as it would on a systemd machine.
    Returns True if we mounted it (and must unmount it), False if it was there
    or the kernel has none."""
    if tracefs_mounted():
        return False
    p = subprocess.run(["mount", "-t", "tracefs", "tracefs", TRACEFS],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        log(f"bench: no tracefs ({p.stderr.decode(errors='replace').strip()}): "
            "radaemon runs on its counters only")
        return False
    return True


# --- the owner of it all -----------------------------------------------------

def only_logs(directory, names):
    """What RA_BENCH_KEEP leaves out of a copy: all but directories and logs."""
    return [n for n in names
            if not n.endswith(".log") and not os.path.isdir(os.path.join(directory, n))]


class Interrupted(BaseException):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C, so every finally block runs."""


def _interrupt(signum, frame):
    raise Interrupted(signal.Signals(signum).name)


class Machine:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="radaemon-bench.")
        self.loops = []
        self.cgroups = []
        self.children = []
        self.cgroup_version = cgroup_version()
        self.mounted_tracefs = False
        self.cleanups = []
        self.builddir = None

    def __enter__(self):
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _interrupt)
        self.mounted_tracefs = mount_tracefs()
        return self

    def __exit__(self, *exc):
        # A second Ctrl-C must not leave half of the machine behind.
        signals = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        signal.pthread_sigmask(signal.SIG_BLOCK, signals)
        try:
            for child in reversed(self.children):
                self.stop(child)
            for group in reversed(self.cgroups):
                group.remove()
            for cleanup in reversed(self.cleanups):
                try:
                    cleanup()
                except Exception as e:  # the rest must still be undone
                    log(f"bench: cleanup failed: {e}")
            for index in reversed(self.loops):
                remove_loop(index)
            keep = os.environ.get("RA_BENCH_KEEP")
            if keep:
                try:
                    shutil.copytree(self.tmp, keep, dirs_exist_ok=True, symlinks=True,
                                    ignore=only_logs)
                except OSError as e:
                    log(f"bench: cannot keep the logs in {keep}: {e}")
            shutil.rmtree(self.tmp, ignore_errors=True)
            if self.mounted_tracefs:
                subprocess.run(["umount", TRACEFS])
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)

    def on_exit(self, cleanup):
        """Runs cleanup when the run ends, before the loop devices go."""
        self.cleanups.append(cleanup)

    def path(self, name):
        return os.path.join(self.tmp, name)

    # Children are stopped at the end if their owner did not stop them.
    def spawn(self, argv, **kwargs):
        child = subprocess.Popen(argv, **kwargs)
        self.children.append(child)
        return child

    def stop(self, child, timeout=10):
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        if child in self.children:
            self.children.remove(child)

    def cgroup(self, name, devnum, iops=None, bps=None, mem_bytes=None):
        group = Cgroup(f"{os.getpid()}-{name}", self.cgroup_version)
        self.cgroups.append(group)  # first, so a half-made one is removed too
        group.create(devnum, iops, bps, mem_bytes)
        return group

    def unused_indices(self, n, start=FIRST_INDEX):
        found, index = [], start
        while len(found) < n:
            if index > LAST_INDEX:
                raise RuntimeError(f"no {n} free loop indices from {start} to {LAST_INDEX}")
            if not os.path.exists(f"/sys/block/loop{index}") and index not in self.loops:
                found.append(index)
            index += 1
        return found

    def track_loop(self, index):
        if index not in self.loops:
            self.loops.append(index)

    def new_loop(self, image, direct_io=True):
        """A new loop device over image; returns its kernel name.

        Direct I/O on the backing file keeps a second page cache (the
        backing file's) out of the measurement and out of the memory limit.
        """
        while True:
            index = self.unused_indices(1)[0]
            try:
                loop_control(LOOP_CTL_ADD, index)
            except FileExistsError:
                continue  # someone else took it just now
            break
        self.track_loop(index)
        dio = ["--direct-io=on"] if direct_io else []
        run("losetup", *dio, f"/dev/loop{index}", image)
        return f"loop{index}"

    def sparse_file(self, name, size):
        path = self.path(name)
        with open(path, "wb") as f:
            f.truncate(size)
        return path
