#!/usr/bin/env python3
"""Loop device chores the shell cannot do: /dev/loop-control.

  loopdev.py add N          create /dev/loopN (a free loop device, no file)
  loopdev.py remove N       delete /dev/loopN, which must be detached
  loopdev.py unused START   print the first index >= START with no loop device
"""
import fcntl
import os
import sys

LOOP_CTL_ADD = 0x4C80
LOOP_CTL_REMOVE = 0x4C81


def control(request, index):
    fd = os.open("/dev/loop-control", os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, request, index)
    finally:
        os.close(fd)


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
        control(LOOP_CTL_REMOVE, int(arg))
    elif verb == "unused":
        print(unused(int(arg)))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
