#!/usr/bin/env python3
"""The file-system suite: real tools on ext4, xfs and btrfs over the costly classes, and FUSE.

The raw suite (run.py) reads block devices; users read files. Here each
cell is a (device class, file system, workload): the class's throttled loop
device gets a file system with a source-like tree and big files, and real
tools read them with a cold cache (the file system is mounted afresh before
every run, which drops its page cache):

  tar         tar -c of the tree (one jump per file on the disk), piped to wc
  pcat        cat over disjoint folders, 3 readers at once
  pdd-single  4 dd bs=4k readers of one big file, started together
  pdd-multi   4 dd bs=4k readers of 4 different big files
  mmap-rand   random 4 KiB mmap reads of a 1 GiB file, 256 MiB page cache
  phase       a scan of a big file, random mmap lookups in another, the scan again
  cat1        cat of one big file
  cat4        cat of 4 different big files at once
  dd1         one dd bs=4k reader of one big file (the window is all it reads ahead)
  sb-seqrd    sysbench fileio seqrd: 16 KiB reads, 1 thread, over 4 files of 256 MiB
  sb-rndrd    sysbench fileio rndrd: random 16 KiB reads, 4 threads, the same files
  pgbench     pgbench -S (select-only) on a scale-50 database (750 MB), 4 clients
  sqlite      random primary-key lookups in a 1 GB SQLite table (python3's sqlite3)

mmap-rand, phase and the last four run in a 256 MiB memory cgroup: their
data is larger than the page cache, as a database's is. pgbench's server is
a PostgreSQL cluster of the bench's own on the file system under test (never
the machine's), reached through a unix socket in the temporary directory; it
is stopped before every fresh mount and started again after it, in the
memory cgroup.

File systems: ext4, xfs, btrfs (one device) and btrfs2 (two devices of the
class, data raid0, metadata raid1). A btrfs file is read ahead with its
mount's bdi, not the disk: there the sweep sets /sys/class/bdi/btrfs-N after
every mount (each mount makes a new bdi), the kernel's value is 4096, and
radaemon gets the mount point in bdis= beside the disks.

fuse is a network file system over a link instead of a device class:
tests/ra-testfs (from the build tree) serving 1 GiB files, each read request
paying a round trip and then its turn on one shared link (--links, LINKS
below). Its knob is the mount's bdi (/sys/class/bdi/0:N, set after every
mount as for btrfs); the kernel's value is min(128, the server's INIT
answer), 128 here. Every workload but tar and pcat runs on it.

Modes: fixed values (the sweep, whose best is the oracle) and radaemon in
repeat mode: a fresh daemon with an empty state on the device as the kernel
leaves it, then the same workload --repeat-runs times, every run scored
(what a nightly backup sees).

  bench/fs.py --classes hdd-7200 --fs ext4 --workloads tar,mmap-rand
  bench/fs.py --classes usb-stick,hdd-7200 --fs btrfs,btrfs2 --workloads pcat,tar
  bench/fs.py --fs fuse --links sshfs-1gbe,sshfs-wan --workloads cat1,cat4,mmap-rand
  bench/fs.py --report-only bench/results/X-fs.json
  bench/fs.py --user                 what users see (users.py): every cell with no
                                     wait and with an idle start, runs 1 and 2-5
                                     scored, 3 iterations with fresh daemons
  bench/fs.py --user --quick         ssd-ctrl, ext4, dd1 and mmap-rand, 2 iterations

Every run is capped at --runtime seconds (throughput over the time it ran).
Run as root from a build tree; it makes loop devices 5000-5999 and
radaemon-bench-* cgroups, mounts under its temporary directory, and removes
all of it when it ends. Hold /run/radaemon-bench.lock while measuring.
"""
import argparse
import contextlib
import errno
import json
import os
import pwd
import re
import shutil
import statistics
import subprocess
import sys
import time

import model
import modes as modes_
import users
from classes import CLASSES, Device
from daemon import Daemon, warn_if_foreign_daemon
from machine import Interrupted, Machine, log, read_kb, set_kb, wait_idle
from report import multiplot_header, run_gnuplot

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1024 ** 2
FOLDERS = 6
SMALL_PER_FOLDER = 20   # files of 1 MiB
LARGE_PER_FOLDER = 3    # files of 4 MiB
BIG_FILES = 4           # of BIG_MIB each, for dd and the phase scans
BIG_MIB = 256
MMAP_MIB = 1024
MEM_LIMIT = 256 * MiB
# Their data is larger than MEM_LIMIT, as a database's is larger than the
# memory it gets; a run that passes the end of the data (sb-seqrd on a fast
# class) reads the disk again, not the page cache.
MEM_LIMITED = {"mmap-rand", "phase", "sb-seqrd", "sb-rndrd", "pgbench", "sqlite"}

# sysbench fileio: 4 files of 256 MiB (1 GiB, four times the memory cgroup),
# buffered (sysbench's default: no O_DIRECT) reads of 16 KiB. seqrd with one
# thread, the single stream the kernel's readahead follows; rndrd with 4,
# a small database's worth of concurrent random reads. A fixed seed: every
# rndrd run reads the same blocks.
SB_OPTIONS = ["--file-num=4", "--file-total-size=1G", "--file-block-size=16384"]
SB_THREADS = {"sb-seqrd": 1, "sb-rndrd": 4}

# pgbench: PostgreSQL 15 (Debian 12's), a cluster of our own. Scale 50 is
# 5 million accounts, 750 MB with the primary key: three times the memory
# cgroup. shared_buffers is small, so the page cache does the caching.
PG_BIN = "/usr/lib/postgresql/15/bin"
PG_PORT = 54329  # names the socket in our own directory; no TCP
PG_SCALE = 50
PG_CLIENTS, PG_JOBS = 4, 2
PG_CONF = """
listen_addresses = ''
port = {port}
unix_socket_directories = '{sockdir}'
max_connections = 20
shared_buffers = 16MB
autovacuum = off
# A scratch cluster, loaded once: pgbench -i's COPY skips the WAL with
# wal_level minimal, and nothing is worth an fsync.
wal_level = minimal
max_wal_senders = 0
fsync = off
synchronous_commit = off
full_page_writes = off
"""

# sqlite: one table, an INTEGER PRIMARY KEY (the rowid b-tree) and a
# 1000-byte blob; four rows fill a 4 KiB page, so 1 million rows are 1.03 GB.
SQLITE_ROWS = 1_000_000
SQLITE_MAKE = f"""
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {SQLITE_ROWS})
INSERT INTO t SELECT i, randomblob(1000) FROM n;
"""

# Random primary-key lookups for a time; SQLite's defaults (no mmap, a 2 MB
# cache of its own) read pages with pread.
SQLITE_READER = r"""
import random, sqlite3, sys, time
path, seconds, rows = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
rnd = random.Random(7)
end = time.monotonic() + seconds
n = 0
while time.monotonic() < end:
    db.execute("SELECT v FROM t WHERE id = ?", (rnd.randint(1, rows),)).fetchone()
    n += 1
print(n)
"""

# A random mmap reader: accesses per second over a time, or a fixed count.
MMAP_READER = r"""
import mmap, os, random, sys, time
path, seconds, count = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_RDONLY)
size = os.lseek(fd, 0, os.SEEK_END)
m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
rnd = random.Random(7)
end = time.monotonic() + seconds
n = 0
while time.monotonic() < end and (count == 0 or n < count):
    m[rnd.randrange(0, size // 4096) * 4096]
    n += 1
print(n)
"""

WORKLOADS = {
    "tar": ("MB/s", "tar -c of a source-like tree (6 folders, 120 files of 1 MiB, 18 of 4 MiB)"),
    "pcat": ("MB/s", "cat over disjoint folders, 3 readers at once"),
    "pdd-single": ("MB/s", "4 dd bs=4k readers of one 256 MiB file, started together"),
    "pdd-multi": ("MB/s", "4 dd bs=4k readers of 4 different 256 MiB files"),
    "mmap-rand": ("IOPS", "random 4 KiB mmap reads of a 1 GiB file with a 256 MiB page cache"),
    "phase": ("1/s", "scan 256 MiB (dd bs=4k), 400 random mmap lookups in a 1 GiB file, "
                     "the scan again; scored 100 / seconds"),
    "cat1": ("MB/s", "cat of one big file (256 MiB; 1 GiB on fuse)"),
    "cat4": ("MB/s", "cat of 4 different big files at once"),
    "dd1": ("MB/s", "one dd bs=4k reader of one big file"),
    "sb-seqrd": ("MB/s", "sysbench fileio seqrd, 16 KiB buffered reads, 1 thread, 4 files of "
                         "256 MiB, 256 MiB page cache"),
    "sb-rndrd": ("MB/s", "sysbench fileio rndrd, random 16 KiB buffered reads, 4 threads, "
                         "the same files and page cache"),
    "pgbench": ("tps", f"pgbench -S (select-only), scale {PG_SCALE} (750 MB), "
                       f"{PG_CLIENTS} clients, shared_buffers 16MB, 256 MiB page cache; "
                       "the server restarted cold before every run"),
    "sqlite": ("1/s", "random primary-key lookups in a 1 GB SQLite table (1000-byte blobs), "
                      "python3's sqlite3, 256 MiB page cache"),
}

# What each workload runs beyond coreutils, and the Debian package it is in.
# install-deps --tests installs all but postgresql-15: installing it creates the
# machine's cluster 15/main and starts it, a server fs.py never uses.
TOOLS = {"sb-seqrd": ("sysbench", "sysbench"), "sb-rndrd": ("sysbench", "sysbench"),
         "pgbench": (os.path.join(PG_BIN, "postgres"), "postgresql-15"),
         "sqlite": ("sqlite3", "sqlite3")}


# Workloads another suite defines (bench/memory.py: N cats in a memory limit):
# name -> (memory limit in bytes or None, run(machine, fs, group, runtime)
# -> (score, seconds)). measure() puts the run in a cgroup of that limit.
EXTRA_WORKLOADS = {}


def missing_tool(workload):
    """What to tell when the workload's tool is not installed, else None."""
    tool, package = TOOLS.get(workload, (None, None))
    if tool is None or shutil.which(tool):
        return None
    if package == "postgresql-15":
        return (f"{workload} needs PostgreSQL 15's server ({PG_BIN}): apt-get install "
                "postgresql-15 (it creates and starts a cluster 15/main; stop it with "
                "pg_ctlcluster 15 main stop, fs.py runs a cluster of its own)")
    return f"{workload} needs {tool}: apt-get install {package}, or ./install-deps --tests"


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True)


# What each file system is made with. btrfs2: data striped over two devices
# of the class (raid0), metadata mirrored, as a two-disk desktop array is.
MKFS = {"ext4": "mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1",
        "xfs": "mkfs.xfs -q -f",
        "btrfs": "mkfs.btrfs -q -f",
        "btrfs2": "mkfs.btrfs -q -f -d raid0 -m raid1"}
BTRFS_KERNEL_KB = 4096  # what the kernel gives a btrfs bdi, whatever is beneath


def needs(workloads):
    """The parts of the data set the workloads read: tree, big files, mmap
    file, sysbench's files, the PostgreSQL cluster, the SQLite database."""
    w = set(workloads)
    return {"tree": bool(w & {"tar", "pcat"}),
            "big": bool(w & {"pdd-single", "pdd-multi", "phase", "cat1", "cat4", "dd1"}),
            "mmap": bool(w & {"mmap-rand", "phase"}),
            "sysbench": bool(w & {"sb-seqrd", "sb-rndrd"}),
            "pgbench": "pgbench" in w,
            "sqlite": "sqlite" in w}


class Postgres:
    """A PostgreSQL cluster of the bench's own, for pgbench.

    Its data directory is on the file system under test; it listens on a
    unix socket only, in a directory of the bench's temporary directory, so
    it meets no other server (the machine's own cluster stays as it is).
    The server runs as user postgres, which initdb and pg_ctl insist on.
    """

    def __init__(self, machine, data, sockdir):
        self.machine = machine
        self.data = data
        self.sockdir = sockdir  # one per file system: --fs ext4,xfs makes two clusters
        self.logfile = os.path.join(self.sockdir, "server.log")
        self.user = pwd.getpwnam("postgres")
        # Before FsDevice's unmount (cleanups run in reverse): a server left
        # running by an error keeps the file system busy.
        machine.on_exit(self.stop)

    def _become(self, group):
        """For preexec_fn: into group (as root, who may), then user postgres."""
        def become():
            if group:
                group.join()
            os.setgroups([])
            os.setgid(self.user.pw_gid)
            os.setuid(self.user.pw_uid)
        return become

    def run(self, argv, group=None):
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": self.user.pw_dir}
        p = subprocess.run(argv, preexec_fn=self._become(group), env=env, cwd="/",
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({p.returncode}): "
                               f"{(p.stderr or p.stdout).strip()}")

    def create(self):
        # The temporary directory is root's and 0700: the server must pass
        # through it to its data directory and its socket (it lists nothing).
        os.chmod(self.machine.tmp, 0o711)
        for d in (self.sockdir, self.data):
            os.makedirs(d, mode=0o700)
            os.chown(d, self.user.pw_uid, self.user.pw_gid)
        self.run([os.path.join(PG_BIN, "initdb"), "-D", self.data, "-U", "postgres",
                   "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"])
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(PG_CONF.format(port=PG_PORT, sockdir=self.sockdir))

    def start(self, group=None):
        """Starts the server in group (its memory limit holds the server's
        page cache and backends, not only pgbench's); returns when it accepts."""
        self.run([os.path.join(PG_BIN, "pg_ctl"), "start", "-w", "-t", "300", "-s",
                   "-D", self.data, "-l", self.logfile], group)

    def stop(self):
        """Stops the server if it runs (postmaster.pid is there); fast, or
        else immediate (no shutdown checkpoint: nothing is worth keeping)."""
        if not os.path.exists(os.path.join(self.data, "postmaster.pid")):
            return
        pg_ctl = [os.path.join(PG_BIN, "pg_ctl"), "stop", "-w", "-s", "-D", self.data]
        try:
            self.run(pg_ctl + ["-m", "fast", "-t", "120"])
        except RuntimeError as e:
            log(f"fs: {e}; stopping it immediately")
            self.run(pg_ctl + ["-m", "immediate", "-t", "60"])

    @contextlib.contextmanager
    def running(self, group=None):
        self.start(group)
        try:
            yield
        finally:
            self.stop()

    def pgbench(self, *args):
        """pgbench's command line (a list) against this server."""
        return [os.path.join(PG_BIN, "pgbench"), "-h", self.sockdir, "-p", str(PG_PORT),
                "-U", "postgres", *args, "postgres"]


class FsDevice:
    """A class's loop device (two for btrfs2) with a file system and its data.

    The knob is what reads of its files are read ahead with: the disk's
    queue/read_ahead_kb for ext4 and xfs, the bdi's for btrfs
    (/sys/class/bdi/btrfs-N/read_ahead_kb, a new bdi at every mount).
    """

    def __init__(self, machine, cls, fstype, workloads=tuple(WORKLOADS)):
        self.machine = machine
        self.fstype = fstype
        self.btrfs = fstype.startswith("btrfs")
        self.on_bdi = self.btrfs  # the knob is the mount's bdi, not the disk
        self.devices = [Device(machine, cls) for _ in range(2 if fstype == "btrfs2" else 1)]
        self.device = self.devices[0]
        self.mnt = machine.path(f"mnt-{cls.name}-{fstype}")
        os.makedirs(self.mnt)
        self.mounted = False
        self.bdi = None          # btrfs: the bdi of the current mount
        self.bdis_seen = []      # btrfs: every bdi it had, in order
        self.kb_at_mount = None  # btrfs: what the bdi held when the mount returned
        self.fixed_kb = None     # btrfs: the value a fixed run sets after every mount
        self.postgres = None     # pgbench's cluster, once populate() made it
        sh(f"{MKFS[fstype]} {' '.join(d.node for d in self.devices)} >/dev/null")
        if self.btrfs:
            self.uuid = subprocess.run(["blkid", "-p", "-s", "UUID", "-o", "value", self.device.node],
                                       check=True, capture_output=True, text=True).stdout.strip()
            # mkfs.btrfs and mount register the devices with the kernel: forget
            # them (after the unmount, before the loop devices go), or a stale
            # entry for this UUID outlives the run.
            machine.on_exit(self.forget)
        machine.on_exit(self.umount)
        self.mount()
        self.populate(needs(workloads))

    @property
    def name(self):
        return self.device.name

    @property
    def names(self):
        return [d.name for d in self.devices]

    @property
    def knob(self):
        """The name of what is read ahead with: the disk, or the bdi."""
        return self.bdi if self.btrfs else self.name

    @property
    def cell_class(self):
        return self.device.cls.name

    @property
    def kernel_kb(self):
        """The kernel's value for what the cell's files are read ahead with."""
        return BTRFS_KERNEL_KB if self.btrfs else self.device.cls.kernel_kb

    def path(self, name):
        """A file of the data set: tree, big0..big3, mmap."""
        return os.path.join(self.mnt, name)

    def cgroup(self, mem_bytes=None):
        return self.device.cgroup(mem_bytes)

    def read_knob(self):
        """The knob's read_ahead_kb; None while no bdi is mounted."""
        if not self.on_bdi:
            return read_kb(self.name)
        try:
            with open(f"/sys/class/bdi/{self.bdi}/read_ahead_kb") as f:
                return int(f.read())
        except (FileNotFoundError, TypeError):
            return None

    def knob_path(self):
        """The knob's sysfs file, for a shell line that writes it between phases."""
        if not self.on_bdi:
            return f"/sys/block/{self.name}/queue/read_ahead_kb"
        return f"/sys/class/bdi/{self.bdi}/read_ahead_kb"

    def set_knob(self, kb):
        if not self.on_bdi:
            set_kb(self.name, kb)
            return
        with open(f"/sys/class/bdi/{self.bdi}/read_ahead_kb", "w") as f:
            f.write(str(kb))
        if self.read_knob() != kb:
            raise RuntimeError(f"{self.bdi}: wrote {kb} to read_ahead_kb, the kernel holds {self.read_knob()}")

    def timeline_read(self):
        """For a Timeline: the disk's value, or (bdi, value) while one is mounted."""
        if not self.on_bdi:
            return read_kb(self.name)
        bdi, kb = self.bdi, self.read_knob()
        return None if kb is None else (bdi, kb)

    def mount(self):
        # Every run mounts afresh (a cold cache), and ext4's lazyinit thread would
        # then read beside the workload: noinit_itable, no zeroing of inode
        # tables; no_prefetch_block_bitmaps, no reading of every group's block
        # bitmap (a seek across the disk each: it made tar runs on hdd-7200 take
        # 5.6 s instead of 2.1 whenever it overlapped them, 468 commands more).
        # noatime: the first read of each file would otherwise write its inode back.
        # btrfs: nodiscard, or since 6.2 a non-rotational device with discard
        # (a loop device has it) gets discard=async, whose trims would run
        # beside the workload; device= names every device, so a mount does not
        # depend on udev having scanned them.
        if self.fstype == "ext4":
            opts = "-o noatime,noinit_itable,no_prefetch_block_bitmaps "
        elif self.btrfs:
            opts = "-t btrfs -o " + ",".join(["noatime", "nodiscard"] +
                                             [f"device={d.node}" for d in self.devices]) + " "
        else:
            opts = "-o noatime "
        sh(f"mount {opts}{self.device.node} {self.mnt}")
        self.mounted = True
        if self.btrfs:
            # Each mount makes a new bdi (btrfs-N, N never reused).
            self.bdi = os.path.basename(os.readlink(f"/sys/fs/btrfs/{self.uuid}/bdi"))
            self.bdis_seen.append(self.bdi)
            self.kb_at_mount = self.read_knob()
            if self.fixed_kb is not None:
                self.set_knob(self.fixed_kb)

    def umount(self):
        if self.mounted:
            p = subprocess.run(["umount", self.mnt], capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError(f"cannot unmount {self.mnt}: {p.stderr.strip()}")
            self.mounted = False
            self.bdi = None

    def forget(self):
        for d in self.devices:
            if os.path.exists(d.node):
                subprocess.run(["btrfs", "device", "scan", "--forget", d.node],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def released(self):
        """Whether no superblock holds the devices any more: an exclusive open
        fails with EBUSY while a file system on them is mounted anywhere."""
        for d in self.devices:
            try:
                os.close(os.open(d.node, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC))
            except OSError as e:
                if e.errno == errno.EBUSY:
                    return False
                raise
        return True

    def cold(self):
        """A cold page cache for this file system alone (and the devices' own)."""
        self.umount()
        # A copy of the mount in another mount namespace (a test's unshare -m
        # while it was mounted) keeps the superblock and its page cache alive:
        # the next mount would read from memory (seen: a 256 MiB dd at
        # 1.9 GB/s on a 270 MB/s model). main() runs fs.py in a namespace of
        # its own so that none is made; this catches any other holder.
        deadline = time.monotonic() + 10
        while not self.released():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{' '.join(self.names)}: still held after umount (a mount "
                                   "elsewhere?): a fresh mount would not have a cold cache")
            time.sleep(0.1)
        for d in self.devices:
            wait_idle(d.name)
            subprocess.run(["blockdev", "--flushbufs", d.node], check=True)
        self.mount()

    def model_stats(self):
        """The model's counters for each device ({} for a throttled class)."""
        if not self.device.cls.model:
            return {}
        return {d.name: model.stats(d.name) for d in self.devices}

    def populate(self, need):
        """Only the parts the workloads read: on usb-stick the model writes at
        8 MB/s, and the whole set (2.2 GiB) took 5 minutes per file system."""
        log(f"fs: writing the data set ({', '.join(k for k, v in need.items() if v)}) "
            f"on {self.fstype} over {' '.join(self.names)}")
        if need["tree"]:
            tree = os.path.join(self.mnt, "tree")
            for d in range(FOLDERS):
                folder = os.path.join(tree, f"src{d}")
                os.makedirs(folder)
                for i in range(SMALL_PER_FOLDER):
                    sh(f"head -c {MiB} /dev/urandom >{folder}/file{i}.c")
                for i in range(LARGE_PER_FOLDER):
                    sh(f"head -c {4 * MiB} /dev/urandom >{folder}/blob{i}.o")
        if need["big"]:
            for i in range(BIG_FILES):
                sh(f"dd if=/dev/zero of={self.mnt}/big{i} bs=1M count={BIG_MIB} status=none")
        if need["mmap"]:
            sh(f"dd if=/dev/zero of={self.mnt}/mmap bs=1M count={MMAP_MIB} status=none")
        if need["sysbench"]:
            os.makedirs(self.path("sysbench"))
            subprocess.run(["sysbench", "fileio", *SB_OPTIONS, "prepare"], cwd=self.path("sysbench"),
                           check=True, stdout=subprocess.DEVNULL)
        if need["pgbench"]:
            self.postgres = Postgres(self.machine, self.path("postgres"),
                                     self.machine.path(f"pg-{self.cell_class}-{self.fstype}"))
            self.postgres.create()
            with self.postgres.running():
                self.postgres.run(self.postgres.pgbench("-i", "-q", "-s", str(PG_SCALE)))
        if need["sqlite"]:
            subprocess.run(["sqlite3", self.path("sqlite.db")], input=SQLITE_MAKE, text=True,
                           check=True, stdout=subprocess.DEVNULL)
        sh("sync")

    def server(self, workload, group):
        """What serves the workload from this file system while it runs:
        pgbench's PostgreSQL, started in group after the fresh mount (the
        cold cache is the server's too) and stopped before the next one."""
        if workload == "pgbench":
            return self.postgres.running(group)
        return contextlib.nullcontext()

    def close(self):
        if self.postgres:
            self.postgres.stop()
        self.umount()
        if self.btrfs:
            self.forget()


# FUSE's cells: a network file system over a link, modeled by tests/ra-testfs.
# Every read request pays a round trip (round trips overlap) and then its
# turn on one link that all requests share (--delay-us, --bandwidth-mbs).
# sshfs-1gbe: sshfs to a server on the same switch. 1 GbE carries at most
# 1460/1538 of its 125 MB/s as TCP payload (118.7 MB/s); SSH's framing and
# cipher take a few more: 110 MB/s. 0.4 ms: a LAN ping (~0.15 ms) plus the
# SFTP server's read from its page cache and both ends' SSH.
# sshfs-wan: the same to a server 20 ms away behind a 100 Mbit/s line
# (11.9 MB/s of TCP payload, 11 through SSH): a remote office, a VPS.
LINKS = {
    "sshfs-1gbe": {"delay_us": 400, "bandwidth_mbs": 110,
                   "about": "sshfs over 1 GbE: 0.4 ms round trip, 110 MB/s"},
    "sshfs-wan": {"delay_us": 20000, "bandwidth_mbs": 11,
                  "about": "sshfs over a 100 Mbit/s WAN: 20 ms round trip, 11 MB/s"},
}
FUSE_KERNEL_KB = 128  # min(128, the server's INIT answer); ra-testfs answers the kernel's offer
FUSE_FILE_MIB = 1024
FUSE_WORKLOADS = ("pdd-single", "pdd-multi", "mmap-rand", "phase", "cat1", "cat4", "dd1")


class FuseFs:
    """ra-testfs over a link (LINKS), with FsDevice's interface.

    The knob is the mount's bdi, /sys/class/bdi/<maj>:<min> of its
    anonymous device: a new bdi at every mount, whose number is often
    reused. ra-testfs returns once the server has answered INIT, which
    lowers the bdi to the server's value: a fixed value is written after.
    """

    def __init__(self, machine, link, builddir):
        self.machine = machine
        self.fstype = "fuse"
        self.btrfs = False
        self.on_bdi = True
        self.link = link
        self.binary = os.path.join(builddir, "tests", "ra-testfs")
        if not os.access(self.binary, os.X_OK):
            raise RuntimeError(f"no {self.binary}: build it (make -C build tests/ra-testfs, "
                               "libfuse3 needed)")
        self.devices = []
        self.names = []
        self.mnt = machine.path(f"mnt-fuse-{link}")
        os.makedirs(self.mnt)
        self.mounted = False
        self.bdi = None
        self.bdis_seen = []
        self.kb_at_mount = None
        self.fixed_kb = None
        self.groups = {}
        machine.on_exit(self.umount)
        self.mount()

    cell_class = property(lambda self: self.link)
    knob = property(lambda self: self.bdi)
    kernel_kb = FUSE_KERNEL_KB
    read_knob = FsDevice.read_knob
    set_knob = FsDevice.set_knob
    knob_path = FsDevice.knob_path
    timeline_read = FsDevice.timeline_read

    def path(self, name):
        """big0..big3 are file-000..file-003, mmap is file-004 (1 GiB each)."""
        index = 4 if name == "mmap" else int(name[len("big"):])
        return os.path.join(self.mnt, f"file-{index:03d}")

    def cgroup(self, mem_bytes=None):
        """No device to throttle: the link is the server's. A memory limit only."""
        if mem_bytes not in self.groups:
            tag = f"fuse-{self.link}" + (f"-{mem_bytes // MiB}M" if mem_bytes else "")
            self.groups[mem_bytes] = self.machine.cgroup(tag, None, mem_bytes=mem_bytes)
        return self.groups[mem_bytes]

    def mount(self):
        link = LINKS[self.link]
        subprocess.run([self.binary, "--files", "5", "--size-mib", str(FUSE_FILE_MIB),
                        "--delay-us", str(link["delay_us"]),
                        "--bandwidth-mbs", str(link["bandwidth_mbs"]), self.mnt], check=True)
        self.mounted = True
        st = os.stat(self.mnt)
        self.bdi = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        self.bdis_seen.append(self.bdi)
        self.kb_at_mount = self.read_knob()
        if self.fixed_kb is not None:
            self.set_knob(self.fixed_kb)

    umount = FsDevice.umount
    server = FsDevice.server  # nothing: pgbench does not run here

    def cold(self):
        """A fresh mount: a new superblock, an empty page cache."""
        self.umount()
        self.mount()

    def model_stats(self):
        return {}

    def close(self):
        self.umount()


def timed(machine, group, argv, runtime):
    """Runs argv (a shell line) in group, at most runtime s: (stdout, seconds)."""
    t0 = time.monotonic()
    child = machine.spawn(["timeout", "-s", "INT", str(runtime), "bash", "-c", argv],
                          preexec_fn=group.join, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    out, err = child.communicate()
    machine.stop(child)
    seconds = time.monotonic() - t0
    if child.returncode not in (0, 124, 130):
        raise RuntimeError(f"{argv} failed ({child.returncode}): {err.decode(errors='replace')}")
    return out.decode(), err.decode(), seconds


def dd_bytes(err):
    """Bytes copied, summed over every dd's summary on stderr. Several dd
    share the pipe, and dd writes a summary and its newline in two writes:
    another's summary can land on the same line, so every one is found
    wherever it is, not one a line (2 of 200 runs of four dd lost one)."""
    return sum(int(n) for n in re.findall(r"(\d+) bytes? (?:\([^)]*\) )?copied", err))


def sysbench_read_mbs(out):
    """MB/s read, from sysbench fileio's "read, MiB/s:" line."""
    for line in out.splitlines():
        if line.strip().startswith("read, MiB/s:"):
            return float(line.split(":")[1]) * MiB / 1e6
    raise RuntimeError(f"no read throughput in sysbench's output: {out[-500:]}")


def pgbench_tps(out):
    """Transactions per second, without pgbench's connection time."""
    for line in out.splitlines():
        if line.startswith("tps = ") and "without initial connection time" in line:
            return float(line.split()[2])
    raise RuntimeError(f"no tps in pgbench's output: {out[-500:]}")


def wait_for_daemon(fs, daemon, since, timeout=5):
    """radaemon mode on a bdi: the daemon decides a new bdi when it sees the
    mount in mountinfo. Waits for its decision line on this mount's bdi in
    its log past offset since (a FUSE bdi's number comes again at a later
    mount; a user's job starts seconds after its mount, not microseconds),
    at most timeout s; returns the seconds waited, None when nothing came."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if f"{fs.bdi}: read_ahead_kb " in daemon.output()[since:]:
            return round(time.monotonic() - t0, 3)
        time.sleep(0.005)
    return None


def run_workload(machine, fs, workload, group, runtime, phase_kb=None):
    """Runs workload on the freshly mounted fs in group: (score, seconds)."""
    mnt = fs.mnt
    reader = machine.path("mmap_reader.py")
    sqlite_reader = machine.path("sqlite_reader.py")
    for path, text in ((reader, MMAP_READER), (sqlite_reader, SQLITE_READER)):
        with open(path, "w") as f:
            f.write(text)
    # The counting wc ignores the SIGINT that ends a capped run (timeout signals
    # the whole group): it then prints what came through before the readers died.
    count = "(trap '' INT; wc -c)"
    if workload in EXTRA_WORKLOADS:
        score, s = EXTRA_WORKLOADS[workload][1](machine, fs, group, runtime)
    elif workload == "tar":
        out, _, s = timed(machine, group, f"tar -cf - -C {mnt} tree | {count}", runtime)
        score = int(out.split()[0]) / s / 1e6
    elif workload == "pcat":
        groups = [" ".join(f"{mnt}/tree/src{d}/*" for d in range(k, FOLDERS, 3)) for k in range(3)]
        line = " & ".join(f"(cat {g} | {count})" for g in groups) + "; wait"
        out, _, s = timed(machine, group, line, runtime)
        score = sum(int(x) for x in out.split()) / s / 1e6
    elif workload in ("pdd-single", "pdd-multi", "dd1"):
        files = [fs.path("big0")] * 4 if workload == "pdd-single" else \
            [fs.path("big0")] if workload == "dd1" else [fs.path(f"big{i}") for i in range(4)]
        line = " & ".join(f"dd if={f} of=/dev/null bs=4k" for f in files) + "; wait"
        _, err, s = timed(machine, group, line, runtime)
        score = dd_bytes(err) / s / 1e6
    elif workload == "mmap-rand":
        out, _, s = timed(machine, group, f"python3 {reader} {fs.path('mmap')} {runtime} 0", runtime + 30)
        score = int(out.split()[0]) / min(s, runtime)
    elif workload == "phase":
        # phase_kb (scan, lookups): the window written just before each
        # phase opens its file, as only a tuner that knew the phases ahead could.
        knob = [f"echo {kb} >{fs.knob_path()} && " for kb in phase_kb] if phase_kb else ["", ""]
        line = (f"{knob[0]}dd if={fs.path('big1')} of=/dev/null bs=4k status=none && "
                f"{knob[1]}python3 {reader} {fs.path('mmap')} 1000 400 >/dev/null && "
                f"{knob[0]}dd if={fs.path('big2')} of=/dev/null bs=4k status=none")
        _, _, s = timed(machine, group, line, 10 * runtime)
        score = 100 / s
    elif workload in ("cat1", "cat4"):
        files = [fs.path(f"big{i}") for i in range(1 if workload == "cat1" else 4)]
        line = " & ".join(f"(cat {f} | {count})" for f in files) + "; wait"
        out, _, s = timed(machine, group, line, runtime)
        score = sum(int(x) for x in out.split()) / s / 1e6
    elif workload in ("sb-seqrd", "sb-rndrd"):
        line = (f"cd {fs.path('sysbench')} && sysbench fileio {' '.join(SB_OPTIONS)} "
                f"--file-test-mode={workload[3:]} --threads={SB_THREADS[workload]} "
                f"--time={runtime} --rand-seed=7 run")
        out, _, s = timed(machine, group, line, runtime + 30)
        score = sysbench_read_mbs(out)
    elif workload == "pgbench":
        line = " ".join(fs.postgres.pgbench("-S", "-n", "-T", str(runtime), "-c", str(PG_CLIENTS),
                                            "-j", str(PG_JOBS)))
        out, _, s = timed(machine, group, line, runtime + 60)
        score = pgbench_tps(out)
    elif workload == "sqlite":
        out, _, s = timed(machine, group, f"python3 {sqlite_reader} {fs.path('sqlite.db')} "
                          f"{runtime} {SQLITE_ROWS}", runtime + 30)
        score = int(out.split()[0]) / min(s, runtime)
    else:
        raise ValueError(workload)
    return score, s


def wait_for_calibration(fs, daemon, since, timeout):
    """Repeat mode, before run 1: the idle time a new disk has between its
    mount and its first job. Waits until the daemon's log (past offset since)
    ends a calibration of each of the cell's disks (calibrated, stopped,
    failed), at most timeout s, and returns what it said. The log, not
    D-Bus: the bench's daemon has no bus; its lines are what `racontrol
    show` would report (the figures are ra_calib_describe()'s)."""
    t0 = time.monotonic()
    ends = ("calibrated with", "calibration stopped", "cannot calibrate",
            "calibration read nothing", "cannot start its calibration")
    lines = []
    while True:
        lines = [line.strip() for line in daemon.output()[since:].splitlines()
                 if any(f"{n}: calibrat" in line or f"{n}: cannot" in line for n in fs.names)]
        done = [n for n in fs.names if any(line.find(f"{n}: ") >= 0 and any(e in line for e in ends)
                                           for line in lines)]
        if len(done) == len(fs.names) or time.monotonic() - t0 >= timeout:
            break
        time.sleep(0.05)
    waited = round(time.monotonic() - t0, 2)
    # The decision follows the "calibrated" line in the same turn of the
    # daemon's loop; a moment for it to reach sysfs.
    time.sleep(0.2)
    figures = [line.split(" ms: ", 1)[1].rstrip(".") for line in lines
               if "calibrated with" in line and " ms: " in line]
    return {"calibrated": len(figures) == len(fs.names), "started": any("calibrating:" in x for x in lines),
            "calibration": figures, "waited_s": waited, "timeout_s": timeout,
            "kb_before_run1": fs.read_knob(), "log": lines}


def idle_wait(fs, daemon, since, idle_s):
    """The user suite's idle start: idle_s seconds of nothing after run 1's
    mount, then what the daemon's log says of a calibration meanwhile."""
    time.sleep(idle_s)
    out = wait_for_calibration(fs, daemon, since, 0) if fs.names else {"kb_before_run1": fs.read_knob()}
    out["waited_s"] = idle_s
    return out


def measure(machine, fs, workload, runtime, daemon=None, phase_kb=None, settle=None):
    """One scored run on a fresh mount; settle(since), if given, runs between
    the mount and the workload and its answer is the run's "settle"."""
    since = len(daemon.output()) if daemon else 0
    fs.cold()
    settled = settle(since) if settle else None
    waited = wait_for_daemon(fs, daemon, since) if fs.on_bdi and daemon else None
    extra = EXTRA_WORKLOADS.get(workload)
    group = fs.cgroup(extra[0] if extra else MEM_LIMIT if workload in MEM_LIMITED else None)
    kb_at_open = fs.read_knob()
    disk_kb = [read_kb(n) for n in fs.names]
    with fs.server(workload, group):
        counted = fs.model_stats()
        score, s = run_workload(machine, fs, workload, group, runtime, phase_kb)
        after = fs.model_stats()
    # kb_at_open: the knob (the disk, or for btrfs this mount's bdi) when the
    # workload started; every file it opens takes the knob's value then.
    r = {"score": score, "seconds": round(s, 2), "kb_at_open": kb_at_open, "kb_after": fs.read_knob()}
    if settled is not None:
        r["settle"] = settled
    if fs.on_bdi:
        # The bdi read with, what the kernel gave it at mount (the fixed value
        # and the daemon's come after), and the disks beneath, unused for data.
        r.update(bdi=fs.bdi, kb_at_mount=fs.kb_at_mount, disk_kb=disk_kb)
        if daemon:
            r["daemon_wait_s"] = waited
    if counted:
        # What the model served this run: commands, seeks, cache hits, bytes
        # (summed over the devices; per device too when there are two).
        per = {n: {k: after[n][k] - counted[n].get(k, 0) for k in
                   ("reads", "read_bytes", "writes", "seeks", "skips", "cache_hits")} for n in after}
        r["device"] = {k: sum(p[k] for p in per.values()) for k in next(iter(per.values()))}
        if len(per) > 1:
            r["devices"] = per
    return r


def fix_knob(fs, kb):
    """The knob at kb for the runs that follow."""
    if fs.on_bdi:
        # The bdi is set after every mount (measure's fresh mount makes a new
        # one); the disks stay where the kernel leaves them.
        fs.fixed_kb = kb
        for d in fs.devices:
            d.reset()
    else:
        set_kb(fs.name, kb)


def run_fixed(machine, fs, workload, kb, runtime):
    fix_knob(fs, kb)
    r = measure(machine, fs, workload, runtime)
    if r["kb_at_open"] != kb or r["kb_after"] != kb:
        raise RuntimeError(f"{fs.knob}: read_ahead_kb was {r['kb_at_open']} at open and "
                           f"{r['kb_after']} after, not {kb}")
    return r


def run_phase_follow(machine, fs, scans, lookups, runtime, repeat):
    """The phase workload with a window per phase, set as each phase opens
    its file: {"scan,lookups": [runs]}. Its best against the best fixed value
    bounds what any tuner of this knob could gain by following the phases."""
    out = {}
    for scan in scans:
        for lookup in lookups:
            fix_knob(fs, scan)
            runs = [measure(machine, fs, "phase", runtime, phase_kb=(scan, lookup))
                    for _ in range(repeat)]
            if any(r["kb_after"] != scan for r in runs):
                raise RuntimeError(f"{fs.knob}: read_ahead_kb not {scan} after the last scan")
            out[f"{scan},{lookup}"] = runs
            log(f"  phase windows {scan}/{lookup}/{scan} KiB: " + " ".join(f"{r['score']:.4g}" for r in runs))
    fs.fixed_kb = None
    return out


def run_repeat(machine, fs, workload, runs, runtime, builddir, interval_ms, tag, calib_wait=0,
               idle_s=0):
    """A fresh daemon with an empty state on a device as the kernel leaves it; runs scored.

    calib_wait > 0: a real new disk sits idle for seconds between its mount
    and its first job, and radaemon uses them to calibrate it (a file takes
    its window at open, so this is the only chance to change run 1's). The
    daemon first samples the disk once (it would have seen it arrive), then
    run 1's fresh mount (a disk used within the minute: a rotational one may
    be measured), then up to calib_wait s until the daemon's calibration
    ended, then the job.

    idle_s > 0 (the user suite's idle start): after run 1's fresh mount the
    device sits idle idle_s seconds, whatever the daemon does, then the job."""
    fs.fixed_kb = None
    for d in fs.devices:
        d.reset()
    if fs.on_bdi:
        # The bdi as the kernel leaves it: a fresh mount, no fixed value.
        fs.cold()
    # btrfs, FUSE: the daemon manages the bdi of our mount point (bdis=) beside the disks.
    daemon = Daemon(machine, builddir, fs.names, tag=tag, interval_ms=interval_ms,
                    bdis=[fs.mnt] if fs.on_bdi else ())
    fresh = daemon.state_empty()
    daemon.start()
    results = []
    calibration = None
    try:
        with modes_.Timeline(fs.knob, read=fs.timeline_read) as timeline:
            if calib_wait > 0 and fs.names:
                time.sleep(1.5 * (interval_ms or 1000) / 1000)
            for i in range(runs):
                settle = None
                if i == 0 and calib_wait > 0 and fs.names:
                    settle = lambda since: wait_for_calibration(fs, daemon, since, calib_wait)
                elif i == 0 and idle_s > 0:
                    settle = lambda since: idle_wait(fs, daemon, since, idle_s)
                results.append(measure(machine, fs, workload, runtime, daemon=daemon, settle=settle))
                if "settle" in results[-1]:
                    calibration = results[-1].pop("settle")
        daemon.check_tracing()
    finally:
        daemon.stop()
    names = fs.names + (fs.bdis_seen if fs.on_bdi else [])
    decisions = [line.strip() for line in daemon.output().splitlines()
                 if any(f"{n}:" in line for n in names)]
    out = {"runs": results, "timeline": timeline.changes, "decisions": decisions,
           "state_fresh": fresh,
           "calibration_log": [line for line in decisions if ": calibrat" in line]}
    if calibration is not None:
        out["calibration"] = calibration
    return out


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def run_cell(machine, fs, workload, sweep, args):
    log(f"cell {fs.cell_class}/{fs.fstype}/{workload} on {' '.join(fs.names) or fs.mnt}")
    # The kernel's value is always measured: the no-worse-than-default target needs it.
    sweep = sorted(set(sweep) | {fs.kernel_kb})
    load_before = loadavg()
    points = {}
    # --oracle-from: the model classes are deterministic models, so a cell's
    # fixed values measured earlier stand; only the values they lack are run.
    earlier = args.oracle_cells.get((fs.cell_class, fs.fstype, workload))
    if earlier:
        points = {int(k): v for k, v in earlier["points"].items()}
        log(f"  fixed values from {args.oracle_from}: " + " ".join(
            f"{k}:{statistics.median(r['score'] for r in v):.4g}" for k, v in sorted(points.items())))
    for kb in sweep:
        if kb in points:
            continue
        points[kb] = [run_fixed(machine, fs, workload, kb, args.runtime) for _ in range(args.repeat)]
        log(f"  {kb} KiB: " + " ".join(f"{r['score']:.4g}" for r in points[kb]))
    cell = {"class": fs.cell_class, "fs": fs.fstype, "workload": workload,
            "unit": WORKLOADS[workload][0], "devices": fs.names,
            "knob": "bdi" if fs.on_bdi else "disk", "kernel_kb": fs.kernel_kb,
            "points": {str(k): v for k, v in sorted(points.items())}}
    if earlier:
        cell["oracle_from"] = {"json": args.oracle_from, "date": args.oracle_date,
                               "values": sorted(int(k) for k in earlier["points"])}
    if workload == "phase" and args.phase_follow:
        scans, lookups = ([int(x) for x in part.split(",")] for part in args.phase_follow.split("/"))
        cell["phase_follow"] = run_phase_follow(machine, fs, scans, lookups, args.runtime, args.repeat)
    if fs.fstype == "fuse":
        cell["link"] = LINKS[fs.link]
    if fs.on_bdi:
        # What the kernel gave each fresh mount's bdi in the fixed runs (before the
        # fixed value was written): 4096 is what the report's default row assumes.
        cell["kernel_bdi_kb"] = sorted({r["kb_at_mount"] for v in points.values() for r in v})
    if args.repeat_runs:
        tag = f"daemon-{fs.cell_class}-{fs.fstype}-{workload}"
        cell["radaemon"] = run_repeat(machine, fs, workload, args.repeat_runs, args.runtime,
                                      args.builddir, args.interval_ms, tag, args.calib_wait)
        calib = cell["radaemon"].get("calibration")
        if calib:
            log(f"  calibration: {'; '.join(calib['calibration']) or 'none'} after {calib['waited_s']} s, "
                f"{calib['kb_before_run1']} KiB before run 1")
        log("  radaemon: " + " ".join(f"{r['score']:.4g}@{r['kb_at_open']}"
                                      for r in cell["radaemon"]["runs"]))
    # The machine is shared (2 cores): a high load is said beside the numbers.
    cell["load"] = [load_before, loadavg()]
    log(f"  load average (1, 5, 15 min) before {load_before}, after {cell['load'][1]}")
    return cell


def user_cell(machine, fs, workload, sweep, args, cell, iteration):
    """One iteration of the user suite on a cell (users.py): this iteration's
    rounds of the fixed values, then each start mode under a fresh daemon."""
    if cell is None:
        log(f"cell {fs.cell_class}/{fs.fstype}/{workload} on {' '.join(fs.names) or fs.mnt}")
        cell = {"class": fs.cell_class, "fs": fs.fstype, "workload": workload,
                "unit": WORKLOADS[workload][0], "devices": fs.names,
                "knob": "bdi" if fs.on_bdi else "disk", "kernel_kb": fs.kernel_kb,
                "points": {}, "user": [], "load": []}
        earlier = args.oracle_cells.get((fs.cell_class, fs.fstype, workload))
        if earlier:
            cell["points"] = dict(earlier["points"])
            cell["oracle_from"] = {"json": args.oracle_from, "date": args.oracle_date,
                                   "values": sorted(int(k) for k in earlier["points"])}
    load_before = loadavg()
    borrowed = set(cell.get("oracle_from", {}).get("values", []))
    for _ in users.fixed_rounds(iteration, args.iterations, args.repeat):
        for kb in sorted(set(sweep) | {fs.kernel_kb}):
            if kb not in borrowed:
                cell["points"].setdefault(str(kb), []).append(
                    run_fixed(machine, fs, workload, kb, args.runtime))
    for start in args.starts:
        tag = f"user-{iteration}-{start}-{fs.cell_class}-{fs.fstype}-{workload}"
        entry = run_repeat(machine, fs, workload, args.user_runs, args.runtime, args.builddir,
                           args.interval_ms, tag, idle_s=args.idle_s if start == "idle" else 0)
        entry.update(start=start, iteration=iteration, calibration_settle=entry.pop("calibration", None),
                     calibration=entry.pop("calibration_log"))
        cell["user"].append(entry)
        log(f"  iteration {iteration + 1}/{args.iterations} {start}: " + " ".join(
            f"{r['score']:.4g}@{r['kb_at_open']}" for r in entry["runs"]))
    cell["load"].append([load_before, loadavg()])
    return cell


def user_markdown(data):
    """The user suite's report (users.py), file-system suite."""
    u = data["user"]
    lines = [f"# File-system suite as users see it, {data['date']}, Linux {data['kernel']}", "",
             f"Command: `{data['command']}`" + (f", {data['duration_s'] / 60:.1f} minutes"
                                                 if "duration_s" in data else "") + ".", ""]
    if data.get("quick"):
        lines += ["**A --quick run: it checks the machinery; its numbers are not results.**", ""]
    loads = [x for c in data["cells"] for pair in c.get("load", []) for x in (pair[0][0], pair[1][0])]
    if loads:
        lines += [f"Load average (1 min) between cells: {min(loads):.2f}-{max(loads):.2f}.", ""]
    lines += users.intro(u["iterations"], u["starts"], u["idle_s"], u["runs"], data["runtime"])
    lines += ["Each run mounts the file system afresh (a cold page cache). The iterations are "
              "nested in each (class, file system), whose data set is written once; every "
              "iteration's daemon is a new one with an empty state. The fixed values' rounds "
              "(`--repeat`) are spread over the iterations."
              + (" Fixed values of cells marked in the JSON `oracle_from` come from "
                 f"`{data['oracle_from']}`, not this invocation." if data.get("oracle_from") else ""),
              ""]
    targets = [("file-system suite, no wait, runs 2-5 together", "nowait", "rest", 0.90, 0.95, None, ()),
               ("file-system suite, no wait, first runs (reported)", "nowait", "first", None, None,
                None, ()),
               ("idle start, sequential cells' first run", "idle", "first", 0.85, None, None,
                tuple(SEQUENTIAL))]
    lines += users.markdown(data["cells"], unscored=UNSCORED, targets=targets)
    return "\n".join(lines) + "\n"


def score_cell(cell):
    """The oracle, the kernel default, and radaemon's runs against them."""
    med = {int(k): statistics.median(r["score"] for r in v) for k, v in cell["points"].items()}
    best_kb = max(med, key=med.get)
    default_kb = cell.get("kernel_kb", 128)
    out = {"oracle_kb": best_kb, "oracle": med[best_kb], "default_kb": default_kb,
           "default": med.get(default_kb), "medians": med}
    if "radaemon" in cell:
        runs = [r["score"] for r in cell["radaemon"]["runs"]]
        out["runs"] = runs
        out["last_ratio"] = runs[-1] / med[best_kb]
        # Run 1 opens at whatever radaemon decided before any job: its prior,
        # or what a calibration measured.
        out["first_ratio"] = runs[0] / med[best_kb]
        out["run_ratios"] = [r / med[best_kb] for r in runs]
        # Five runs together against five at the best fixed value: total work over total time.
        out["together_ratio"] = len(runs) / sum(1 / r for r in runs) / med[best_kb]
        if med.get(default_kb):
            out["worst_vs_default"] = min(runs) / med[default_kb]
    # How far apart a fixed value's own repeats are, (max - min) / median, the
    # widest over the sweep: a ratio closer to 1 than this is noise.
    spreads = {int(k): (max(x) - min(x)) / statistics.median(x)
               for k, v in cell["points"].items() for x in [[r["score"] for r in v]] if len(x) > 1}
    if spreads:
        out["fixed_spread"] = max(spreads.values())
        out["fixed_spread_kb"] = max(spreads, key=spreads.get)
    return out


def plot_script(title, cells, png):
    """gnuplot: one panel per workload, the fixed values' median and min-max
    against the window, radaemon's runs numbered at the window they opened
    with, and the kernel's value."""
    s = multiplot_header(len(cells), png, f"{title}: score against read_ahead_kb (fixed: median and "
                         "min-max; radaemon: runs 1-5 at the window each opened with)", 520, 400)
    s += ["set yrange [0:*]", "set key below font ',8'"]
    for i, cell in enumerate(cells):
        points = sorted((int(k), [r["score"] for r in v]) for k, v in cell["points"].items())
        s += [f"$f{i} << EOD"] + [f"{k} {statistics.median(v)} {min(v)} {max(v)}"
                                  for k, v in points] + ["EOD"]
        plot = [f"$f{i} using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 0.6 lc rgb '#777777' "
                "title 'fixed value'"]
        kernel = [(k, v) for k, v in points if k == cell.get("kernel_kb")]
        if kernel:
            s += [f"$k{i} << EOD", f"{kernel[0][0]} {statistics.median(kernel[0][1])}", "EOD"]
            plot.append(f"$k{i} using 1:2 with points pt 9 ps 2.2 lc rgb '#1f5fbf' "
                        f"title 'kernel ({kernel[0][0]})'")
        runs = [(n + 1, r) for n, r in enumerate(cell.get("radaemon", {}).get("runs", []))
                if r.get("kb_at_open")]
        if runs:
            s += [f"$r{i} << EOD"] + [f"{r['kb_at_open']} {r['score']} {n}" for n, r in runs] + ["EOD"]
            plot += [f"$r{i} using 1:2 with points pt 5 ps 1.1 lc rgb '#d02020' title 'radaemon run'",
                     f"$r{i} using 1:2:3 with labels offset 0.9,0.6 font ',8' tc rgb '#d02020' notitle"]
        s += [f"set title '{cell['workload']} ({cell['unit']}, higher is better)'",
              f"set ylabel '{cell['unit']}'", "plot " + ", ".join(plot)]
    s.append("unset multiplot")
    return "\n".join(s) + "\n"


def plots(data, directory, stem):
    """One PNG per (class, fs) beside the report; {title: file name}, empty without gnuplot."""
    out = {}
    pairs = []
    for c in data["cells"]:
        if (c["class"], c["fs"]) not in pairs:
            pairs.append((c["class"], c["fs"]))
    for cls, fstype in pairs:
        cells = [c for c in data["cells"] if (c["class"], c["fs"]) == (cls, fstype)]
        png = f"{stem}-{cls}-{fstype}.png"
        if not run_gnuplot(plot_script(f"{fstype} on {cls}", cells, os.path.join(directory, png)), png):
            log("fs.py: no gnuplot (Debian package gnuplot-nox): the report has no plots")
            return {}
        out[f"{fstype} on {cls}"] = png
    return out


def markdown(data, pngs=None):
    lines = [f"# File-system suite, {data['date']}, Linux {data['kernel']}", "",
             f"Command: `{data['command']}`", "",
             "Each run starts with the file system mounted afresh (a cold page cache) and is "
             f"capped at {data['runtime']} s. The oracle is the best median of the fixed values "
             "measured; radaemon runs in repeat mode: a fresh daemon with an empty state, then "
             f"the workload {data['repeat_runs']} times, every run scored (what a nightly job "
             "sees). *together* is the runs' total work over their total time against the "
             "oracle's.", ""]
    if data.get("calib_wait"):
        lines += [f"Before run 1 the device sat idle after its fresh mount until radaemon had "
                  f"calibrated it (at most {data['calib_wait']:g} s), as a new disk does before its "
                  "first job; *calibration* is what that run opened with and how long it waited.", ""]
    if data.get("oracle_from"):
        lines += [f"Fixed values marked * are from `{data['oracle_from']}`, not measured again: the "
                  "model classes are deterministic models of a device.", ""]
    lines += ["| class | fs | workload | unit | fixed (median) | oracle | calibration | radaemon runs "
              "(KiB at open) | first/oracle | last/oracle | together/oracle | worst/default | "
              "fixed spread |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for cell in data["cells"]:
        s = score_cell(cell)
        fixed = " ".join(f"{k}:{statistics.median(r['score'] for r in v):.3g}"
                         for k, v in cell["points"].items())
        runs = " ".join(f"{r['score']:.3g}({r['kb_at_open']})"
                        for r in cell.get("radaemon", {}).get("runs", []))
        fmt = lambda x: f"{x:.2f}" if x is not None else "-"
        calib = cell.get("radaemon", {}).get("calibration")
        if calib:
            calib = (f"{'yes' if calib['calibrated'] else 'no'}: {calib['kb_before_run1']} KiB "
                     f"after {calib['waited_s']:g} s")
        spread = (f"{s['fixed_spread']:.0%} ({s['fixed_spread_kb']})" if "fixed_spread" in s else "-")
        star = "*" if "oracle_from" in cell else ""
        lines.append(f"| {cell['class']} | {cell['fs']} | {cell['workload']} | {cell['unit']} | "
                     f"{fixed}{star} | {s['oracle']:.3g} @ {s['oracle_kb']} | {calib or '-'} | {runs} | "
                     f"{fmt(s.get('first_ratio'))} | {fmt(s.get('last_ratio'))} | "
                     f"{fmt(s.get('together_ratio'))} | {fmt(s.get('worst_vs_default'))} | {spread} |")
    lines += [""] + targets_markdown(data["cells"])
    follow = [c for c in data["cells"] if "phase_follow" in c]
    if follow:
        lines += [""] + phase_follow_markdown(follow)
    btrfs = [c for c in data["cells"] if c["fs"].startswith("btrfs")]
    if btrfs:
        lines += [""] + btrfs_markdown(data, btrfs)
    fuse = [c for c in data["cells"] if c["fs"] == "fuse"]
    if fuse:
        lines += [""] + fuse_markdown(fuse)
    for title, png in (pngs or {}).items():
        lines += ["", f"![{title}]({png})"]
    lines += ["", "Workloads:", ""] + [f"- `{w}` ({u}): {d}" for w, (u, d) in WORKLOADS.items()]
    return "\n".join(lines) + "\n"


# Streams that a larger window serves: run 1 at the prior costs them most.
SEQUENTIAL = {"tar", "pcat", "pdd-single", "pdd-multi", "cat1", "cat4", "dd1", "sb-seqrd"}
# Their fixed values drift with the order they ran in (2026-11-24's notes):
# no oracle to judge against until they are repeated in shuffled order.
UNSCORED = {"pgbench": "its fixed values drift with run order (one run each, not monotonic)",
            "sqlite": "its fixed values rise with every run in the order they ran"}


def targets_markdown(cells):
    """Issue 26's targets over the cells radaemon ran in: each sequential
    cell's first run >= 0.85 of its best fixed value and the first runs'
    geometric mean >= 0.90; every cell's runs together >= 0.90 and their
    geometric mean >= 0.95; no run below half the kernel default's score."""
    scored = [(c, score_cell(c)) for c in cells if "radaemon" in c and c["workload"] not in UNSCORED]
    left = sorted({c["workload"] for c in cells if "radaemon" in c and c["workload"] in UNSCORED})
    if not scored:
        return []
    name = lambda c: f"{c['class']}/{c['fs']}/{c['workload']}"
    lines = ["Targets (issue 26):", ""]

    def line(what, items, target, key, below):
        miss = [f"{name(c)} {s[key]:.2f}" for c, s in items if below(s[key])]
        return (f"- {what}: {len(items) - len(miss)} of {len(items)} cells"
                + (f" (not: {', '.join(miss)})" if miss else "") + f" [target {target}]")

    seq = [(c, s) for c, s in scored if c["workload"] in SEQUENTIAL]
    if seq:
        lines.append(line("sequential cells' first run >= 0.85 of the best fixed value", seq, "every one",
                          "first_ratio", lambda x: x < 0.85))
    geo1 = statistics.geometric_mean([s["first_ratio"] for _, s in scored])
    lines.append(f"- first runs' geometric mean {geo1:.3f} [target 0.90: "
                 f"{'met' if geo1 >= 0.90 else f'missed by {0.90 - geo1:.3f}'}]")
    lines.append(line("runs together >= 0.90 of the best fixed value", scored, "every one",
                      "together_ratio", lambda x: x < 0.90))
    geo = statistics.geometric_mean([s["together_ratio"] for _, s in scored])
    lines.append(f"- runs together, geometric mean {geo:.3f} [target 0.95: "
                 f"{'met' if geo >= 0.95 else f'missed by {0.95 - geo:.3f}'}]")
    half = [(c, s) for c, s in scored if "worst_vs_default" in s]
    lines.append(line("no run below half the kernel default's score (the fixed "
                      f"{', '.join(sorted({str(s['default_kb']) for _, s in half}))} KiB)",
                      half, "every one", "worst_vs_default", lambda x: x < 0.5))
    below = [f"{name(c)} {s['worst_vs_default']:.2f}" for c, s in half if s["worst_vs_default"] < 0.95]
    lines.append(f"- (issue 10's: no run more than 5 % below the kernel's value in {len(half) - len(below)} "
                 f"of {len(half)}" + (f"; not: {', '.join(below)}" if below else "") + ")")
    for w in left:
        lines.append(f"- not scored: `{w}`, {UNSCORED[w]}")
    return lines


def phase_follow_markdown(cells):
    """What a window per phase gains over the best single fixed value."""
    lines = ["## phase: a window per phase", "",
             "The phase workload again, with the window written just before each phase opens its "
             "file (scan, lookups, scan): what a tuner that knew each phase in advance could do, "
             "since a file takes its window when it is opened. Its best against the best single "
             "fixed value bounds what following the phases can gain on this device.", "",
             "| class | fs | best fixed | best per phase (scan/lookups KiB) | gain | every pair (median) |",
             "|---|---|---|---|---|---|"]
    for c in cells:
        s = score_cell(c)
        med = {k: statistics.median(r["score"] for r in v) for k, v in c["phase_follow"].items()}
        best = max(med, key=med.get)
        lines.append(f"| {c['class']} | {c['fs']} | {s['oracle']:.3g} @ {s['oracle_kb']} | "
                     f"{med[best]:.3g} @ {best.replace(',', '/')} | {med[best] / s['oracle']:.2f}x | "
                     + " ".join(f"{k.replace(',', '/')}:{v:.3g}" for k, v in med.items()) + " |")
    return lines


def _spread(runs):
    scores = [r["score"] for r in runs]
    return f"{statistics.median(scores):.3g} [{min(scores):.3g}-{max(scores):.3g}]"


def _served(runs):
    """What the model served in a run, median over runs: commands and MB read."""
    dev = [r["device"] for r in runs if "device" in r]
    if not dev:
        return "-"
    return (f"{statistics.median(d['reads'] for d in dev):.0f} cmds, "
            f"{statistics.median(d['read_bytes'] for d in dev) / 1e6:.0f} MB")


def btrfs_markdown(data, cells):
    """The btrfs cells: the bdi's value swept, the kernel's 4096, radaemon against both."""
    given = sorted({kb for c in cells for kb in c.get("kernel_bdi_kb", [])})
    lines = ["## btrfs: the bdi's read_ahead_kb", "",
             "A file on btrfs is read ahead with its mount's bdi (`/sys/class/bdi/btrfs-N`), not "
             "the disk's `queue/read_ahead_kb`, and every mount makes a new bdi. A fixed run "
             "writes its value to the new bdi after each fresh mount; the disks stay at the "
             "kernel's 128 KiB. The kernel's own value is the *kernel* column: the fresh mounts "
             f"of the fixed runs held {', '.join(map(str, given)) or '?'} KiB before the value was "
             "written. radaemon gets the disks and `bdis = <mount point>`, and sets each new "
             "bdi itself; a run starts once its decision on the new bdi is in its log (at most "
             f"5 s; waited {_waits(cells)}).", ""]
    return lines + bdi_table(cells, "btrfs")


def _waits(cells):
    """How long the runs waited for radaemon's decision on each new bdi."""
    waits = [r.get("daemon_wait_s") for c in cells for r in c.get("radaemon", {}).get("runs", [])]
    known = [w for w in waits if w is not None]
    return ((f"{min(known):.3f}-{max(known):.3f} s" if known else "-")
            + (f", {len(waits) - len(known)} runs without a decision" if None in waits else ""))


def fuse_markdown(cells):
    """The FUSE cells: ra-testfs over a modeled link, its bdi swept."""
    links = {c["class"]: c["link"]["about"] for c in cells}
    lines = ["## FUSE: the bdi's read_ahead_kb", "",
             "`tests/ra-testfs` serves 1 GiB files over a modeled link: every read request pays "
             "a round trip (they overlap) and then its turn on one link all requests share. "
             + " ".join(f"`{k}`: {v}." for k, v in links.items())
             + " A file on FUSE is read ahead with its mount's bdi (`/sys/class/bdi/0:N`), a new "
             "one at every mount; the kernel gives it min(128, the server's INIT answer), 128 "
             "here. A fixed run writes its value after each fresh mount (ra-testfs returns once "
             "INIT is answered). radaemon gets `bdis = <mount point>` and no disk; a run starts "
             f"once its decision on the new bdi is in its log (waited {_waits(cells)}).", ""]
    return lines + bdi_table(cells, "FUSE")


def bdi_table(cells, what):
    """The bdi cells against the kernel's value and the best fixed one."""
    kernel = "/".join(sorted({str(c["kernel_kb"]) for c in cells}))
    lines = [f"| class | fs | workload | unit | kernel {kernel} | best fixed | radaemon runs (bdi KiB at open) "
             "| run/best | together/best | worst/kernel | load before, after |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    met_best = met_default = 0
    for c in cells:
        s = score_cell(c)
        runs = c.get("radaemon", {}).get("runs", [])
        at_kernel = c["points"].get(str(c["kernel_kb"]), [])
        best = c["points"][str(s["oracle_kb"])]
        fmt = lambda x: f"{x:.2f}" if x is not None else "-"
        load = c.get("load")
        lines.append(
            f"| {c['class']} | {c['fs']} | {c['workload']} | {c['unit']} | "
            f"{_spread(at_kernel) if at_kernel else '-'} | {s['oracle_kb']}: {_spread(best)} | "
            + " ".join(f"{r['score']:.3g}({r['kb_at_open']})" for r in runs) + " | "
            + " ".join(f"{x:.2f}" for x in s.get("run_ratios", [])) + " | "
            f"{fmt(s.get('together_ratio'))} | {fmt(s.get('worst_vs_default'))} | "
            + (f"{load[0][0]:.2f}, {load[1][0]:.2f}" if load else "-") + " |")
        met_best += s.get("together_ratio", 0) >= 0.90
        met_default += s.get("worst_vs_default", 0) >= 0.95
    n = sum("radaemon" in c for c in cells)
    lines += ["", f"Targets: every {what} cell at least 0.90 of its best fixed bdi value (runs "
                  f"together): {met_best} of {n}; no radaemon run more than 5 % below the kernel's "
                  f"{kernel}: {met_default} of {n}.", "",
              "Every fixed value (median [min-max]; what the model served, median of the runs):", ""]
    for c in cells:
        lines.append(f"- {c['class']} {c['fs']} {c['workload']}: " + "; ".join(
            f"{k}: {_spread(v)} ({_served(v)})" for k, v in c["points"].items()))
        if "radaemon" in c:
            lines.append("  - radaemon: " + "; ".join(
                f"{r['score']:.3g} at {r['kb_at_open']} on {r.get('bdi')} ({_served([r])})"
                for r in c["radaemon"]["runs"]))
            # Its decisions without their reasons (the JSON has the whole log lines).
            lines += [f"    - `{line.split('): ', 1)[0]})`"
                      for line in c["radaemon"]["decisions"] if ": read_ahead_kb " in line]
    return lines


def own_mount_namespace(script):
    """Re-executes script (with our arguments) in a mount namespace of its own,
    unless this is it already: a helper's `unshare -m` would otherwise copy
    our mounts, and a copy keeps the file system's page cache through our
    "fresh" mounts. Mounts made outside still reach us (slave); the daemon
    under test is our child."""
    if not os.environ.get("RA_BENCH_OWN_NS"):
        os.environ["RA_BENCH_OWN_NS"] = "1"
        os.execvp("unshare", ["unshare", "--mount", "--propagation", "slave",
                              sys.executable, os.path.abspath(script)] + sys.argv[1:])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--classes", help="comma-separated (default hdd-7200,ssd-ctrl)")
    p.add_argument("--fs", help=f"of {', '.join(MKFS)}, fuse (default ext4,xfs)")
    p.add_argument("--links", default="sshfs-1gbe", help=f"fuse's links, of {', '.join(LINKS)}")
    p.add_argument("--workloads", help="comma-separated (default all)")
    p.add_argument("--sweep", help="fixed values, KiB (default 16,128,512,2048,8192)")
    p.add_argument("--repeat", type=int, default=1, help="runs of every fixed value")
    p.add_argument("--repeat-runs", type=int, default=5, help="radaemon's scored runs (0: none)")
    p.add_argument("--runtime", type=int, help="seconds a run may take at most (default 10)")
    p.add_argument("--phase-follow", metavar="SCANS/LOOKUPS",
                   help="the phase workload also with a window per phase, every pair of "
                        "SCANS and LOOKUPS (KiB, comma-separated), e.g. 128,2048,8192/4,16,128")
    p.add_argument("--interval-ms", type=int)
    p.add_argument("--builddir", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--results", default=os.path.join(HERE, "results"))
    p.add_argument("--report-only", metavar="JSON")
    p.add_argument("--oracle-from", metavar="JSON",
                   help="the fixed values of matching cells (class, fs, workload) from an earlier "
                        "results JSON, not measured again (the model classes are deterministic)")
    p.add_argument("--calib-wait", type=float, default=15,
                   help="repeat mode: seconds at most between run 1's mount and its job for the "
                        "daemon to calibrate the new disk (0: the job at once)")
    p.add_argument("--user", action="store_true",
                   help="the user suite (users.py): every cell with no wait and with an idle start, "
                        "runs 1 and 2-5 scored, the whole suite --iterations times")
    p.add_argument("--quick", action="store_true",
                   help="with --user: ssd-ctrl, ext4, dd1 and mmap-rand, 3 s runs, 3 fixed values, "
                        "2 iterations (minutes; checks the machinery)")
    p.add_argument("--iterations", type=int,
                   help=f"--user: runs of the whole suite (default {users.ITERATIONS}; --quick 2)")
    p.add_argument("--starts", default=",".join(users.START_MODES),
                   help="--user: start modes, comma-separated: nowait, idle")
    p.add_argument("--idle-s", type=float, default=users.IDLE_S,
                   help="--user: seconds the device sits idle before its first job in idle mode")
    p.add_argument("--user-runs", type=int, default=users.USER_RUNS,
                   help="--user: scored jobs per cell and start mode")
    args = p.parse_args()
    quick = args.quick
    defaults = {"classes": "ssd-ctrl" if quick else "hdd-7200,ssd-ctrl",
                "fs": "ext4" if quick else "ext4,xfs",
                "workloads": "dd1,mmap-rand" if quick else ",".join(WORKLOADS),
                "sweep": "16,128,2048" if quick else "16,128,512,2048,8192",
                "runtime": 3 if quick else 10,
                "iterations": 2 if quick else users.ITERATIONS}
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if quick and not args.user:
        p.error("--quick is the user suite's (--user)")
    if args.user:
        try:
            args.starts = users.parse_starts(args.starts)
        except ValueError as e:
            p.error(str(e))
        if args.user_runs < 2:
            p.error("--user-runs must be 2 or more (run 1, then runs 2-N)")
    args.builddir = os.path.abspath(args.builddir)
    args.oracle_cells, args.oracle_date = {}, None
    if args.oracle_from:
        with open(args.oracle_from) as f:
            earlier = json.load(f)
        args.oracle_date = earlier.get("date")
        args.oracle_cells = {(c["class"], c["fs"], c["workload"]): c for c in earlier["cells"]
                             if c.get("points")}

    if args.report_only:
        # The plots are made again beside the JSON.
        with open(args.report_only) as f:
            data = json.load(f)
        directory, stem = os.path.split(args.report_only[:-len(".json")])
        if "user" in data:
            print(user_markdown(data), end="")
            return
        print(markdown(data, plots(data, directory or ".", stem)), end="")
        return
    if os.geteuid() != 0:
        sys.exit("fs.py: run as root")
    own_mount_namespace(__file__)
    classes = [c for c in args.classes.split(",") if c]
    for c in classes:
        if c not in CLASSES:
            sys.exit(f"fs.py: unknown class {c}")
    workloads = [w for w in args.workloads.split(",") if w]
    for w in workloads:
        if w not in WORKLOADS:
            sys.exit(f"fs.py: unknown workload {w} (have {', '.join(WORKLOADS)})")
        if missing_tool(w):
            sys.exit(f"fs.py: {missing_tool(w)}")
    sweep = [int(x) for x in args.sweep.split(",") if x]
    fstypes = [f for f in args.fs.split(",") if f]
    for f in fstypes:
        if f not in MKFS and f != "fuse":
            sys.exit(f"fs.py: unknown file system {f} (have {', '.join(MKFS)}, fuse)")
        if f == "btrfs2" and any(not CLASSES[c].model for c in classes):
            # The throttle of a thr-* class is on one device's number only.
            sys.exit("fs.py: btrfs2 needs model classes (the thr-* throttle is per device)")
    links = [x for x in args.links.split(",") if x] if "fuse" in fstypes else []
    for x in links:
        if x not in LINKS:
            sys.exit(f"fs.py: unknown link {x} (have {', '.join(LINKS)})")
    if links and set(workloads) - set(FUSE_WORKLOADS):
        # ra-testfs serves big files only, no tree.
        sys.exit(f"fs.py: fuse runs {', '.join(FUSE_WORKLOADS)} only")

    stem = time.strftime("%Y-%m-%d-%H%M") + f"-{os.uname().release}-fs" \
        + ("-user" if args.user else "") + ("-quick" if quick else "")
    os.makedirs(args.results, exist_ok=True)
    data = {"date": time.strftime("%Y-%m-%d %H:%M"), "kernel": os.uname().release,
            "command": " ".join(["fs.py"] + sys.argv[1:]), "runtime": args.runtime,
            "repeat_runs": args.repeat_runs, "calib_wait": args.calib_wait,
            "oracle_from": args.oracle_from, "cells": []}
    json_path = os.path.join(args.results, stem + ".json")
    started = time.monotonic()
    if args.user:
        n = len([1 for _ in classes for f in fstypes if f != "fuse"]) + len(links)
        cells = [None] * (n * len(workloads))
        est = users.estimate_s(cells, args.iterations, args.starts, args.idle_s, args.user_runs,
                               args.runtime + 1.5, len(set(sweep) | {128}), args.repeat)
        data.update(quick=quick, user={"iterations": args.iterations, "starts": args.starts,
                                       "idle_s": args.idle_s, "runs": args.user_runs,
                                       "estimate_s": round(est)})
        log(f"fs.py: user suite, {len(cells)} cells x {len(args.starts)} start modes x "
            f"{args.iterations} iterations: at most about {est / 60:.0f} minutes "
            "(runs capped at --runtime; most end sooner), plus writing each data set")
    warn_if_foreign_daemon()
    with Machine() as machine:
        machine.builddir = args.builddir
        # (device class, file system) pairs, then FUSE's links: --classes is not theirs.
        made = [lambda c=c, f=f: FsDevice(machine, CLASSES[c], f, workloads)
                for c in classes for f in fstypes if f != "fuse"]
        made += [lambda x=x: FuseFs(machine, x, args.builddir) for x in links]
        for make in made:
            fs = make()
            try:
                if args.user:
                    mine = {}
                    for it in range(args.iterations):
                        for w in workloads:
                            mine[w] = user_cell(machine, fs, w, sweep, args, mine.get(w), it)
                            if it == 0:
                                data["cells"].append(mine[w])
                            data["duration_s"] = time.monotonic() - started
                            with open(json_path, "w") as f:
                                json.dump(data, f, indent=1)
                else:
                    for w in workloads:
                        data["cells"].append(run_cell(machine, fs, w, sweep, args))
                        with open(json_path, "w") as f:
                            json.dump(data, f, indent=1)
            finally:
                fs.close()
    data["duration_s"] = time.monotonic() - started
    with open(json_path, "w") as f:
        json.dump(data, f, indent=1)
    report = user_markdown(data) if args.user else markdown(data, plots(data, args.results, stem))
    with open(os.path.join(args.results, stem + ".md"), "w") as f:
        f.write(report)
    print(report, end="")
    log(f"fs.py: wrote {json_path[:-5]}.md")


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, Interrupted):
        sys.exit("fs.py: interrupted; everything it made is removed")
