#!/usr/bin/env python3
"""Loop device chores the shell cannot do: /dev/loop-control.

  loopdev.py add N          create /dev/loopN (a free loop device, no file)
  loopdev.py remove N       delete /dev/loopN once it is detached and closed
  loopdev.py unused START   print the first index >= START with no loop device
"""
import errno
import fcntl
import os
import sys
import time

LOOP_CTL_ADD = 0x4C80
LOOP_CTL_REMOVE = 0x4C81


def control(request, index):
    fd = os.open("/dev/loop-control", os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, request, index)
    finally:
        os.close(fd)


def remove(index, timeout=10):
    """Removes the device; udevd may still hold it open for a moment after a detach."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            control(LOOP_CTL_REMOVE, index)
            return
        except OSError as e:
            if e.errno == errno.ENODEV:
                return
            if e.errno != errno.EBUSY or time.monotonic() > deadline:
                raise
        time.sleep(0.02)


def unused(start):
    index = start
    while os.path.exists(f"/sys/block/loop{index}"):
        index += 1
    return index


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    verb, arg = argv[1], argv[2]
    if verb == "add":
        control(LOOP_CTL_ADD, int(arg))
    elif verb == "remove":
        remove(int(arg))
    elif verb == "unused":
        print(unused(int(arg)))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
