"""mmap-faults.py PATH SECONDS [KNOB KB]: random 4 KiB reads of PATH through a
shared mapping for SECONDS, one page fault at a time (random mmap work, as a
database or a search index does it). With KNOB (a read_ahead_kb file) and KB,
it stops early once KNOB holds KB or less."""
import mmap
import os
import random
import sys
import time

path, seconds = sys.argv[1], float(sys.argv[2])
knob, stop_kb = (sys.argv[3], int(sys.argv[4])) if len(sys.argv) > 4 else (None, 0)


def cut():
    with open(knob) as f:
        return int(f.read()) <= stop_kb


fd = os.open(path, os.O_RDONLY)
size = os.lseek(fd, 0, os.SEEK_END)
m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
end = time.monotonic() + seconds
faults = 0
while time.monotonic() < end:
    m[random.randrange(0, size // 4096) * 4096]
    faults += 1
    if knob and faults % 64 == 0 and cut():
        break
