#!/usr/bin/env python3
"""Records the page-cache fixtures of test-pcache: what the kernel's readahead
and filemap tracepoints say, as binary trace_pipe_raw pages, while real tools
read from an ext4 file system on a loop device with a cold cache.

    tests/pcache/record.py /dev/loopN MOUNTPOINT OUTDIR

As root, with tracefs mounted at /sys/kernel/tracing. MOUNTPOINT holds ext4
on /dev/loopN; the files it needs are made there. OUTDIR gets format/ (the
format files, header_page) and one <workload>.raw per workload (the pages of
every CPU, one after another, read_ahead_kb 128 while recorded), and for
tar and mmap-rand also <workload>-filemap.raw with only
mm_filemap_add_to_page_cache, what older kernels have.
"""
import mmap
import os
import random
import shutil
import sqlite3
import subprocess
import sys

TRACING = "/sys/kernel/tracing"
EVENTS = ["readahead/page_cache_sync_ra", "readahead/page_cache_async_ra",
          "readahead/page_cache_ra_order", "readahead/page_cache_ra_unbounded",
          "filemap/mm_filemap_fault", "filemap/mm_filemap_add_to_page_cache"]


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def drop_caches():
    os.sync()
    write("/proc/sys/vm/drop_caches", "3")


def make_files(mnt):
    tree = os.path.join(mnt, "tree")
    if not os.path.isdir(tree):
        rnd = random.Random(1)
        for d in "abc":
            os.makedirs(os.path.join(tree, d))
            for i in range(8):
                size = 256 * 1024 if i % 4 else 1024 * 1024
                with open(os.path.join(tree, d, f"f{i}"), "wb") as f:
                    f.write(rnd.randbytes(size))
    big = os.path.join(mnt, "big")
    if not os.path.exists(big):
        with open(big, "wb") as f:
            for _ in range(64):
                f.write(os.urandom(1024 * 1024))
    db = os.path.join(mnt, "db.sqlite")
    if not os.path.exists(db):
        c = sqlite3.connect(db)
        c.execute("create table t (k integer primary key, v blob)")
        c.executemany("insert into t values (?, ?)", ((k, os.urandom(200)) for k in range(100000)))
        c.commit()
        c.close()
    os.sync()


def workloads(mnt):
    def tar():
        subprocess.run(f"tar -cf - -C {mnt} tree | cat >/dev/null", shell=True, check=True)

    def cat():
        subprocess.run(" & ".join(f"cat {mnt}/tree/{d}/* >/dev/null" for d in "abc") + "; wait",
                       shell=True, check=True)

    def dd():
        subprocess.run(["dd", f"if={mnt}/big", "of=/dev/null", "bs=4k", "count=4096", "status=none"],
                       check=True)

    def mmap_rand():
        with open(f"{mnt}/big", "rb") as f:
            m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
            rnd = random.Random(2)
            for _ in range(200):
                m[rnd.randrange(0, len(m) // 4096) * 4096]
            m.close()

    def sqlite():
        c = sqlite3.connect(f"file:{mnt}/db.sqlite?mode=ro", uri=True)
        rnd = random.Random(3)
        for _ in range(200):
            c.execute("select v from t where k = ?", (rnd.randrange(100000),)).fetchone()
        c.close()

    return {"tar": tar, "cat": cat, "dd": dd, "mmap-rand": mmap_rand, "sqlite": sqlite}


def drain(inst):
    pages = b""
    for cpu in sorted(os.listdir(f"{inst}/per_cpu")):
        fd = os.open(f"{inst}/per_cpu/{cpu}/trace_pipe_raw", os.O_RDONLY | os.O_NONBLOCK)
        try:
            while True:
                try:
                    page = os.read(fd, 4096)
                except BlockingIOError:
                    break
                if not page:
                    break
                pages += page.ljust(4096, b"\0")
        finally:
            os.close(fd)
    return pages


def main():
    dev, mnt, out = sys.argv[1:4]
    st = os.stat(dev)
    kdev = os.major(st.st_rdev) << 20 | os.minor(st.st_rdev)
    make_files(mnt)
    os.makedirs(f"{out}/format", exist_ok=True)
    shutil.copyfile(f"{TRACING}/events/header_page", f"{out}/format/header_page")
    for e in EVENTS:
        shutil.copyfile(f"{TRACING}/events/{e}/format", f"{out}/format/{e.split('/')[1]}")

    name = os.path.basename(dev)
    write(f"/sys/block/{name}/queue/read_ahead_kb", "128")
    inst = f"{TRACING}/instances/radaemon-record"
    os.mkdir(inst)
    try:
        write(f"{inst}/buffer_size_kb", "2048")
        for events, suffix, only in ((EVENTS[:5], "", None), (EVENTS[5:], "-filemap", ("tar", "mmap-rand"))):
            for e in events:
                write(f"{inst}/events/{e}/filter", f"s_dev == {kdev}")
                write(f"{inst}/events/{e}/enable", "1")
            for wl, fn in workloads(mnt).items():
                if only and wl not in only:
                    continue
                drop_caches()
                drain(inst)
                fn()
                with open(f"{out}/{wl}{suffix}.raw", "wb") as f:
                    f.write(drain(inst))
            for e in events:
                write(f"{inst}/events/{e}/enable", "0")
    finally:
        for e in EVENTS:
            write(f"{inst}/events/{e}/enable", "0")
        os.rmdir(inst)


if __name__ == "__main__":
    main()
