"""mmap-faults.py PATH SECONDS: random 4 KiB reads of PATH through a shared
mapping for SECONDS, one page fault at a time (random mmap work, as a database
or a search index does it)."""
import mmap
import os
import random
import sys
import time

path, seconds = sys.argv[1], float(sys.argv[2])
fd = os.open(path, os.O_RDONLY)
size = os.lseek(fd, 0, os.SEEK_END)
m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
end = time.monotonic() + seconds
while time.monotonic() < end:
    m[random.randrange(0, size // 4096) * 4096]
