"""mmap-faults.py PATH SECONDS [KNOB KB] [--count FILE] [--advise sequential]:
random 4 KiB reads of PATH through a shared mapping for SECONDS, one page
fault at a time (random mmap work, as a database or a search index does it).
With KNOB (a read_ahead_kb file) and KB, it stops early once KNOB holds KB or
less. --count writes the faults made so far to FILE every 16 faults;
--advise sequential maps with MADV_SEQUENTIAL (a program choosing its own
pattern); --rate makes at most that many faults a second; --fork-thread
makes the faults in a thread of a child forked after the mapping (the
descriptor inherited; the reads named by a thread's id), the parent waiting
for it (the child dies with it)."""
import argparse
import ctypes
import mmap
import os
import random
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("path")
parser.add_argument("seconds", type=float)
parser.add_argument("knob", nargs="?")
parser.add_argument("stop_kb", nargs="?", type=int, default=0)
parser.add_argument("--count")
parser.add_argument("--advise", choices=["sequential"])
parser.add_argument("--rate", type=float)
parser.add_argument("--fork-thread", action="store_true")
args = parser.parse_args()


def cut():
    with open(args.knob) as f:
        return int(f.read()) <= args.stop_kb


def count(faults):
    with open(args.count + ".new", "w") as f:
        f.write(f"{faults}\n")
    os.replace(args.count + ".new", args.count)


fd = os.open(args.path, os.O_RDONLY)
size = os.lseek(fd, 0, os.SEEK_END)
m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
if args.advise == "sequential":
    m.madvise(mmap.MADV_SEQUENTIAL)


def faults_loop():
    end = time.monotonic() + args.seconds
    faults = 0
    while time.monotonic() < end:
        m[random.randrange(0, size // 4096) * 4096]
        faults += 1
        if args.rate:
            time.sleep(1 / args.rate)
        if args.count and faults % 16 == 0:
            count(faults)
        if args.knob and faults % 64 == 0 and cut():
            break


if not args.fork_thread:
    faults_loop()
elif (child := os.fork()) == 0:
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, 9)
    t = threading.Thread(target=faults_loop)
    t.start()
    t.join()
    os._exit(0)
else:
    os.waitpid(child, 0)
