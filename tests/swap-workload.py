#!/usr/bin/env python3
"""A process whose working set exceeds its memory cgroup, re-reading it.

  swap-workload.py MIB PATTERN [PASSES]

Maps MIB MiB of anonymous memory and writes every page (so it is swapped
out once the cgroup's limit is reached), then re-reads it PASSES times
(default 1) in PATTERN:

  seq   every page in order
  rand  a random quarter of the pages, in random order
  mix   a sequential walk of the first half interleaved with random pages
        of the second half (a quarter of the pages in all)

Prints one line of JSON per pass: {"pass": N, "seconds": S, "pages": P}.
With --wait it says {"filled": PAGES} once the memory is written, and waits
for a line on stdin before every pass (the caller sets page-cluster or reads
counters meanwhile); end of input ends it.
"""
import json
import mmap
import random
import sys
import time

PAGE = mmap.PAGESIZE


def order(pages, pattern, rng):
    if pattern == "seq":
        return range(pages)
    if pattern == "rand":
        return rng.sample(range(pages), pages // 4)
    if pattern == "mix":
        half = pages // 2
        seq = range(0, pages // 8)
        rand = rng.sample(range(half, pages), pages // 8)
        return [p for pair in zip(seq, rand) for p in pair]
    sys.exit(f"swap-workload.py: unknown pattern {pattern}")


def main(argv):
    wait = "--wait" in argv
    argv = [a for a in argv if a != "--wait"]
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    mib, pattern = int(argv[1]), argv[2]
    passes = int(argv[3]) if len(argv) == 4 else 1
    pages = mib * 1024 * 1024 // PAGE
    mem = mmap.mmap(-1, pages * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    # Different contents in every page: neither zero nor same-filled, which zram would keep without data.
    for p in range(pages):
        mem[p * PAGE:p * PAGE + 8] = p.to_bytes(8, "little")
    rng = random.Random(12)
    if wait:
        print(json.dumps({"filled": pages}), flush=True)
    for n in range(passes):
        if wait and not sys.stdin.readline():
            break
        seq = order(pages, pattern, rng)
        start = time.monotonic()
        total = 0
        for p in seq:
            total += mem[p * PAGE]
        print(json.dumps({"pass": n, "seconds": time.monotonic() - start, "pages": len(seq)}), flush=True)
    mem.close()


if __name__ == "__main__":
    main(sys.argv)
