"""The bench's device model: emulated devices that behave like the devices
they are named after.

Each modelled device is a file, /disk, that bench/ra-devmodel serves in a
FUSE mount; a loop device attached to it with direct I/O is the block device
a workload reads. The block layer above stays real (uevents, sysfs, the
scheduler, merging), and the server sees the commands a device would see and
answers each when the modelled device would: a disk seeks only when a
command jumps and reads ahead into its cache while idle; flash costs a
command overhead plus the transfer. The classes and the source of every
figure are in bench/classes/*.conf; `real` is no model but a loop device with
direct I/O over a file on this machine's own disk.

Used by bench/devmodel (the command line) and by the bench's suites.
"""
import errno
import glob
import json
import os
import signal
import subprocess
import time

from machine import LOOP_CTL_ADD, LOOP_CTL_REMOVE, loop_control, sysfs, write_sysfs

HERE = os.path.dirname(os.path.abspath(__file__))
CLASS_DIR = os.path.join(HERE, "classes")
RUN_DIR = "/run/radaemon-devmodel"
IMAGE_DIR = "/var/tmp/radaemon-devmodel"
# bench/devmodel's own loop indices: the test suite uses 1000-3999 and the
# bench 5000-5999, and passes its own index.
FIRST_INDEX, LAST_INDEX = 4000, 4999
# The emulation's own round trip that the server credits to a command finding
# the device idle (ra-devmodel --transit-us): a little under the 110-130 us a
# 4 KiB command takes here with every modelled cost zero (validate.py's zero
# class), so a command at queue depth 1 costs what the model says, not that
# plus the round trip. RA_DEVMODEL_TRANSIT_US=0 turns it off.
TRANSIT_US = int(os.environ.get("RA_DEVMODEL_TRANSIT_US", "100"))

REAL = {
    "name": "real", "kind": "real", "size": 1 << 30, "rotational": None,
    "max_sectors_kb": None, "queue": None,
    "emulates": "no model: a loop device with direct I/O over a file on this machine's own disk (vda)",
    "sources": ["measured: what a real device here does, with the VM's own disk and host beneath"],
}


class ModelError(Exception):
    pass


def find_server(builddir=None):
    """bench/ra-devmodel in a build tree: the one given, RA_BUILDDIR, or ./build."""
    candidates = [builddir, os.environ.get("RA_BUILDDIR"), os.path.join(HERE, "..", "build"),
                  os.getcwd()]
    for d in candidates:
        if d:
            path = os.path.join(d, "bench", "ra-devmodel")
            if os.access(path, os.X_OK):
                return os.path.abspath(path)
    raise ModelError("no bench/ra-devmodel in a build tree: build with libfuse3 "
                     "(configure says 'bench device model: yes'), or pass --builddir")


def class_file(name):
    path = os.path.join(CLASS_DIR, f"{name}.conf")
    if not os.path.exists(path):
        raise ModelError(f"no class '{name}': the classes are {', '.join(class_names())}")
    return path


def class_names():
    return sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(CLASS_DIR, "*.conf"))) + ["real"]


def describe(name, builddir=None):
    """A class's parameters and sources, as the server reads them."""
    if name == "real":
        return dict(REAL)
    out = subprocess.run([find_server(builddir), "--check", class_file(name)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise ModelError(out.stderr.strip())
    return json.loads(out.stdout)


def classes(builddir=None):
    return [describe(n, builddir) for n in class_names()]


# --- loop devices ------------------------------------------------------------

def _new_index():
    for index in range(FIRST_INDEX, LAST_INDEX + 1):
        if os.path.exists(f"/sys/block/loop{index}"):
            continue
        try:
            loop_control(LOOP_CTL_ADD, index)
        except FileExistsError:
            continue
        return index
    raise ModelError(f"no free loop index from {FIRST_INDEX} to {LAST_INDEX}")


def _wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise ModelError(f"timed out: {what}")
        time.sleep(0.01)


def _record_path(dev):
    return os.path.join(RUN_DIR, f"{dev}.json")


def _write_real_image(path, size):
    """Data on the disk, not holes: a read of a hole never reaches a device."""
    if os.path.exists(path) and os.path.getsize(path) == size:
        return
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=4M", f"count={size >> 22}",
                    "oflag=direct", "status=none"], check=True)


# --- attach and detach -------------------------------------------------------

def attach(name, index=None, builddir=None, scheduler=None):
    """Starts the model of class name and attaches a loop device to it.

    index: the loop index to use (made if missing; the caller removes it),
    or None for one of bench/devmodel's own, removed again by detach().
    Returns the record: device name, class parameters, server pid, paths.
    """
    params = describe(name, builddir)
    os.makedirs(RUN_DIR, exist_ok=True)
    os.makedirs(IMAGE_DIR, exist_ok=True)
    own_index = index is None
    if own_index:
        index = _new_index()
    elif not os.path.exists(f"/sys/block/loop{index}"):
        loop_control(LOOP_CTL_ADD, index)
    dev = f"loop{index}"
    record = {"device": dev, "node": f"/dev/{dev}", "class": name, "params": params,
              "own_index": own_index, "pid": None, "mount": None, "image": None, "dir": None}
    try:
        if name == "real":
            record["image"] = os.path.join(IMAGE_DIR, f"real-{dev}.img")
            _write_real_image(record["image"], params["size"])
            backing = record["image"]
        else:
            record["dir"] = os.path.join(RUN_DIR, dev)
            # The loop device's backing file, so its identity (loop:<path>): a
            # medium of its own for each attach, as images one after another.
            record["mount"] = os.path.join(record["dir"], f"{name}-{time.monotonic_ns()}")
            record["image"] = os.path.join(IMAGE_DIR, f"{name}-{dev}.img")
            os.makedirs(record["mount"], exist_ok=True)
            log = open(os.path.join(record["dir"], "server.log"), "w")
            # A session of its own: Ctrl-C on the caller's terminal reaches the
            # caller, which detaches in order, not the server under the device.
            record["transit_us"] = TRANSIT_US
            server = subprocess.Popen([find_server(builddir), "--transit-us", str(TRANSIT_US),
                                       class_file(name), record["image"], record["mount"]], stdin=subprocess.DEVNULL, stdout=log,
                                      stderr=log, start_new_session=True)
            log.close()
            record["pid"] = server.pid
            _save(record)

            def mounted():
                if server.poll() is not None:
                    with open(os.path.join(record["dir"], "server.log")) as f:
                        raise ModelError(f"the model of {name} stopped: {f.read().strip()}")
                return os.path.ismount(record["mount"])
            _wait(mounted, 10, f"the model of {name} to mount at {record['mount']}")
            backing = os.path.join(record["mount"], "disk")
        _save(record)
        subprocess.run(["losetup", "--direct-io=on", record["node"], backing], check=True,
                       stdout=subprocess.DEVNULL)
        if sysfs(dev, "loop/dio") != "1":
            raise ModelError(f"{dev}: the loop driver refused direct I/O on {backing}")
        _configure(dev, params, scheduler)
    except BaseException:
        detach(dev, quiet=True)
        raise
    return record


def _configure(dev, params, scheduler):
    """The block device as the class says, and a change event so udev (and
    radaemon) see it as it is meant to be."""
    if params["rotational"] is not None:
        write_sysfs(dev, "queue/rotational", int(params["rotational"]))
    if params["max_sectors_kb"]:
        hw = int(sysfs(dev, "queue/max_hw_sectors_kb"))
        write_sysfs(dev, "queue/max_sectors_kb", min(hw, params["max_sectors_kb"]))
    if params["kind"] != "real":
        # What the kernel gives a SATA or USB device with one hardware queue.
        scheduler = scheduler or "mq-deadline"
    if scheduler:
        write_sysfs(dev, "queue/scheduler", scheduler)
    write_sysfs(dev, "uevent", "change")


def _save(record):
    tmp = _record_path(record["device"]) + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f)
    os.rename(tmp, _record_path(record["device"]))


def load(dev):
    dev = os.path.basename(dev)
    try:
        with open(_record_path(dev)) as f:
            return json.load(f)
    except FileNotFoundError:
        raise ModelError(f"{dev} is not a device bench/devmodel attached") from None


def replace(dev, name, builddir=None, scheduler=None):
    """Another medium in the same kernel device: dev's model is detached and
    stopped, and a new one of class name attached to the same loop device,
    as `losetup -f` hands a freed loop device to the next image. The kernel
    device stays (its name, devnum and sysfs directory); its diskseq moves.
    Returns the new record; detach() undoes it as it would have dev's."""
    record = load(dev)
    detach(dev, keep_loop=True)
    new = attach(name, index=int(record["device"][4:]), builddir=builddir, scheduler=scheduler)
    new["own_index"] = record["own_index"]
    _save(new)
    return new


def detach(dev, quiet=False, keep_loop=False):
    """Undoes attach(): the loop device (unless keep_loop: detached, not
    removed), the mount, the server, the image."""
    dev = os.path.basename(dev)
    try:
        record = load(dev)
    except ModelError:
        if quiet:
            record = {"device": dev, "own_index": False}
        else:
            raise
    index = int(dev[4:])
    if os.path.exists(f"/sys/block/{dev}"):
        subprocess.run(["losetup", "-d", f"/dev/{dev}"], stderr=subprocess.DEVNULL)
        # The detach takes effect when the last opener (udev's probe) closes.
        _wait(lambda: not os.path.exists(f"/sys/block/{dev}") or sysfs(dev, "size") == "0",
              10, f"{dev} to detach")
    if record.get("mount") and os.path.ismount(record["mount"]):
        subprocess.run(["umount", record["mount"]], check=True)
    if record.get("pid"):
        _stop_server(record["pid"])
    for path in (record.get("image"), os.path.join(record.get("dir") or "/nonexistent", "server.log")):
        if path and os.path.exists(path):
            os.unlink(path)
    for path in (record.get("mount"), record.get("dir")):
        if path and os.path.isdir(path):
            os.rmdir(path)
    if record.get("own_index") and not keep_loop:
        _remove_loop(index)
    if os.path.exists(_record_path(dev)):
        os.unlink(_record_path(dev))


def _stop_server(pid):
    def gone():
        try:
            finished, _ = os.waitpid(pid, os.WNOHANG)
            return finished == pid
        except ChildProcessError:  # not ours (bench/devmodel attach ran earlier)
            try:
                os.kill(pid, 0)
                return False
            except ProcessLookupError:
                return True
    try:
        _wait(gone, 10, f"the model server {pid} to stop")
    except ModelError:
        os.kill(pid, signal.SIGKILL)


def _remove_loop(index):
    deadline = time.monotonic() + 10
    while os.path.exists(f"/sys/block/loop{index}"):
        try:
            loop_control(LOOP_CTL_REMOVE, index)
        except OSError as e:
            if e.errno not in (errno.EBUSY, errno.ENODEV) or time.monotonic() > deadline:
                raise ModelError(f"cannot remove loop{index}: {e}") from None
            time.sleep(0.02)


def stats(dev):
    """What the model counted for dev: commands, seeks, cache hits, bytes."""
    record = load(dev)
    if not record.get("mount"):
        return {}
    with open(os.path.join(record["mount"], "stats")) as f:
        return {k: int(v) for k, v in (line.split() for line in f if line.strip())}
