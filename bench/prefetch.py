#!/usr/bin/env python3
"""bench/prefetch.py: is a cold walk of a big tree faster after `racontrol prefetch`?

For each file system (ext4, xfs, btrfs) an image holds 100,000 files in one
directory (flat/) and 100,000 in a tree of 100 directories (tree/), written
in place (fresh) or renamed into place in a shuffled order (aged). On an
emulated rotational disk, with cold caches each time, every command runs
alone and after `racontrol prefetch` of the same directory; the time and the
device's read commands and bytes (/sys/block/<dev>/stat) of the whole are
recorded, so a gain is explained by fewer, larger, better-ordered commands.

Emulations:
  throttle   a read-only loop device over the image, the workload in a blkio
             cgroup (v1) at 150 read IOPS and 180 MB/s (docs/design.md,
             "Measuring devices one does not have"); the throttle charges
             every bio before merging
  devmodel   bench/devmodel's hdd-7200 class: the image served by the
             command-level model (seeks, rotation, a segmented cache)

Usage (root, from a source tree with a build in ./build):
  bench/prefetch.py [--emulations throttle,devmodel] [--fs ext4,xfs,btrfs]
                    [--commands ls-flat,find-tree,...] [--files N] [--quick]

Images are kept in /var/tmp/radaemon-prefetch-bench and reused. Each file
system's measurement holds /run/radaemon-bench.lock (a few minutes). The
report goes to bench/results/<date>-<kernel>-prefetch.md (and .json).
"""
import argparse
import fcntl
import json
import os
import platform
import random
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402
import model  # noqa: E402

IMAGE_DIR = "/var/tmp/radaemon-prefetch-bench"
IMAGE_SIZE = 4 << 30
CGROUP = "/sys/fs/cgroup/blkio/radaemon-bench-prefetch"
LOCK = "/run/radaemon-bench.lock"
MOUNT = "/run/radaemon-prefetch-bench"
# Away from run.py (the bottom of 5000-5999) and scale.py (the top); devmodel: 4000-4999.
# LOOP_INDEX: the throttled device; + 1: the model's; + 2: building an image.
LOOP_INDEX = 5450

COMMANDS = {
    "ls-flat": ("flat", "ls -l flat"),
    "find-flat": ("flat", "find flat -ls"),
    "du-flat": ("flat", "du -s flat"),
    "ls-tree": ("tree", "ls -lR tree"),
    "find-tree": ("tree", "find tree -ls"),
    "du-tree": ("tree", "du -s tree"),
}
QUICK = ["ls-flat", "find-tree"]


def run(*cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def make_files(root, files, layout):
    """flat/: files in one directory; tree/: 10 x 10 directories of files/100.

    fresh: each file created where it stays, so a directory lists its files in
    the order their inodes were allocated (on xfs and btrfs; ext4 lists in
    hash order anyway). aged: every file created in one staging directory,
    then renamed to its place in a shuffled order, as a mail store or a
    package cache moves files: a directory then lists them in no order its
    inode numbers follow."""
    payload = b"x" * 100

    def create(path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, payload)
        os.close(fd)

    dirs = [os.path.join(root, "tree", f"d{a}", f"e{b}") for a in range(10) for b in range(10)]
    for d in [os.path.join(root, "flat")] + dirs:
        os.makedirs(d)
    places = [os.path.join(root, "flat", f"file-{i:06d}-of-the-tree") for i in range(files)]
    places += [os.path.join(dirs[i // (files // 100)], f"file-{i:06d}-of-the-tree") for i in range(files)]
    if layout == "fresh":
        for p in places:
            create(p)
        return
    stage = os.path.join(root, "stage")
    os.makedirs(stage)
    staged = [os.path.join(stage, str(i)) for i in range(len(places))]
    for p in staged:
        create(p)
    moves = list(zip(staged, places))
    random.Random(13).shuffle(moves)
    for src, dst in moves:
        os.rename(src, dst)
    os.rmdir(stage)


def image(fs, files, layout):
    """The image of fs with its two trees, made once and reused."""
    path = os.path.join(IMAGE_DIR, f"{fs}-{files}{'' if layout == 'fresh' else '-' + layout}.img")
    if os.path.exists(path):
        return path
    os.makedirs(IMAGE_DIR, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.truncate(IMAGE_SIZE)
    # A loop device of its own, never one of the machine's free ones.
    index = LOOP_INDEX + 2
    node = f"/dev/loop{index}"
    if not os.path.exists(f"/sys/block/loop{index}"):
        model.loop_control(model.LOOP_CTL_ADD, index)
    run("losetup", node, tmp)
    try:
        mkfs = {"ext4": ["mkfs.ext4", "-q", "-F", "-N", str(files * 2 + 65536)],
                "xfs": ["mkfs.xfs", "-q", "-f"],
                "btrfs": ["mkfs.btrfs", "-q", "-f"]}[fs]
        run(*mkfs, node, stdout=subprocess.DEVNULL)
        mnt = os.path.join(IMAGE_DIR, f"{fs}.mnt")
        os.makedirs(mnt, exist_ok=True)
        run("mount", node, mnt)
        try:
            print(f"prefetch bench: writing {2 * files} files on {fs} ({layout})", file=sys.stderr)
            make_files(mnt, files, layout)
        finally:
            run("umount", mnt)
            os.rmdir(mnt)
    finally:
        machine.remove_loop(index)
    os.rename(tmp, path)
    return path


def dev_reads(dev):
    fields = open(f"/sys/block/{dev}/stat").read().split()
    return int(fields[0]), int(fields[2]) * 512


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")


def measure(dev, mnt, shell, cgroup, cold=True):
    """Cold caches (unless not cold), then shell in mnt (in cgroup, if any): seconds, commands, bytes."""
    if cold:
        drop_caches()
    r0, b0 = dev_reads(dev)
    prefix = f'echo $$ >"{cgroup}/cgroup.procs" && ' if cgroup else ""
    t0 = time.monotonic()
    # A session of its own, so that an interrupted bench stops the whole command.
    proc = subprocess.Popen(["sh", "-c", prefix + f"cd '{mnt}' && {{ {shell}; }} >/dev/null"],
                            start_new_session=True)
    try:
        if proc.wait() != 0:
            raise RuntimeError(f"'{shell}' failed with status {proc.returncode}")
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    elapsed = time.monotonic() - t0
    r1, b1 = dev_reads(dev)
    return {"seconds": round(elapsed, 2), "reads": r1 - r0, "bytes": b1 - b0}


def measure_fs(fs, layout, emulation, files, commands, racontrol, builddir):
    path = image(fs, files, layout)
    mnt = os.path.join(MOUNT, fs)
    os.makedirs(mnt, exist_ok=True)
    record = None
    cgroup = None
    node = None
    results = []
    try:
        if emulation == "throttle":
            node = f"/dev/loop{LOOP_INDEX}"
            if not os.path.exists(node):
                model.loop_control(model.LOOP_CTL_ADD, LOOP_INDEX)
            run("losetup", "-r", node, path)
            dev = f"loop{LOOP_INDEX}"
            with open(f"/sys/block/{dev}/queue/rotational", "w") as f:
                f.write("1")
            os.makedirs(CGROUP, exist_ok=True)
            cgroup = CGROUP
            devnum = open(f"/sys/block/{dev}/dev").read().strip()
            with open(f"{CGROUP}/blkio.throttle.read_iops_device", "w") as f:
                f.write(f"{devnum} 150")
            with open(f"{CGROUP}/blkio.throttle.read_bps_device", "w") as f:
                f.write(f"{devnum} 180000000")
        else:
            index = LOOP_INDEX + 1
            # The model serves what is in its image: the file system, copied in.
            os.makedirs(model.IMAGE_DIR, exist_ok=True)
            run("cp", "--sparse=always", path, os.path.join(model.IMAGE_DIR, f"hdd-7200-loop{index}.img"))
            record = model.attach("hdd-7200", index=index, builddir=builddir)
            dev = record["device"]
            node = record["node"]
        run("mount", "-o", "ro", node, mnt)
        for name in commands:
            tree, shell = COMMANDS[name]
            row = {"fs": fs, "layout": layout, "emulation": emulation, "command": shell}
            row["alone"] = measure(dev, mnt, shell, cgroup)
            # The same cold start, then the prefetch and the command in one shell;
            # racontrol's --json says how long its own part took.
            out = os.path.join(MOUNT, "prefetch.json")
            row["prefetch"] = measure(dev, mnt, f"{racontrol} prefetch --json {tree} >'{out}' && {shell}", cgroup)
            with open(out) as f:
                said = json.load(f)
            os.unlink(out)
            row["left_to_the_walk"] = said["paths"][0]["left_to_the_walk"] is not None
            row["prefetch_seconds"] = round(said["seconds"], 2)
            row["speedup"] = round(row["alone"]["seconds"] / row["prefetch"]["seconds"], 2)
            # Everything cached: what no prefetch can beat.
            row["warm"] = measure(dev, mnt, shell, cgroup, cold=False)
            print(json.dumps(row), file=sys.stderr)
            results.append(row)
    finally:
        subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL)
        if record:
            model.detach(record["device"])
        elif node:
            machine.remove_loop(LOOP_INDEX)
        if cgroup:
            os.rmdir(cgroup)
    return results


def mib(b):
    return f"{b / 1048576:.1f}"


def report(results, files, out):
    lines = [f"# racontrol prefetch: cold walks of {files:,} files, alone and after prefetch", "",
             f"Kernel {platform.release()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
             "Each cell starts with dropped caches; reads and MiB are the device's read commands and bytes "
             "(/sys/block/<dev>/stat) for the whole command (prefetch included).", "",
             "*prefetch s* is the time `racontrol prefetch` took by its own `--json` (*aside*: it left the "
             "lookups to the walk); *together* is prefetch and command in one shell, cold; *warm* is the "
             "command again with everything cached, so *bound* (alone / warm) is the most any prefetch "
             "could gain.", "",
             "| emulation | fs | tree | command | alone s | reads | MiB | prefetch s | together s | reads | MiB "
             "| speedup | warm s | bound |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        a, p = r["alone"], r["prefetch"]
        aside = " (aside)" if r["left_to_the_walk"] else ""
        split = f"{r['prefetch_seconds']:.2f}{aside}"
        warm = f"{r['warm']['seconds']:.2f} | {a['seconds'] / max(r['warm']['seconds'], 0.01):.1f}x"
        lines.append(f"| {r['emulation']} | {r['fs']} | {r['layout']} | `{r['command']}` | {a['seconds']:.1f} | {a['reads']} | "
                     f"{mib(a['bytes'])} | {split} | {p['seconds']:.1f} | {p['reads']} | {mib(p['bytes'])} | "
                     f"{r['speedup']:.2f}x | {warm} |")
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(out + ".json", "w") as f:
        json.dump(results, f, indent=1)
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--emulations", default="throttle,devmodel")
    p.add_argument("--fs", default="ext4,xfs,btrfs")
    p.add_argument("--commands", default=",".join(COMMANDS))
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    p.add_argument("--files", type=int, default=100000)
    p.add_argument("--layouts", default="fresh,aged", help="fresh: files written in place; aged: renamed into place")
    p.add_argument("--builddir", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--out")
    p.add_argument("--no-lock", action="store_true",
                   help=f"the caller holds {LOCK} (flock {LOCK} bench/prefetch.py --no-lock ...)")
    args = p.parse_args()

    racontrol = os.path.abspath(os.path.join(args.builddir, "racontrol", "racontrol"))
    if not os.access(racontrol, os.X_OK):
        sys.exit(f"prefetch bench: no {racontrol}; build first")
    commands = QUICK if args.quick else args.commands.split(",")
    out = args.out or os.path.join(HERE, "results", time.strftime("%Y-%m-%d-") + platform.release() +
                                   ("-prefetch-quick" if args.quick else "-prefetch"))
    results = []
    layouts = args.layouts.split(",")
    for fs in args.fs.split(","):
        for layout in layouts:
            image(fs, args.files, layout)  # made outside the lock: it measures nothing
    for emulation in args.emulations.split(","):
        for fs in args.fs.split(","):
            with open(LOCK, "w") as lock:
                if not args.no_lock:
                    fcntl.flock(lock, fcntl.LOCK_EX)
                for layout in layouts:
                    results += measure_fs(fs, layout, emulation, args.files, commands, racontrol, args.builddir)
    report(results, args.files, out)


if __name__ == "__main__":
    main()
