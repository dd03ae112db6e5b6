#!/usr/bin/env python3
"""Loop device chores the shell cannot do: /dev/loop-control.

  loopdev.py add N          create /dev/loopN (a free loop device, no file)
  loopdev.py remove N       delete /dev/loopN once it is detached and closed
  loopdev.py unused START   print the first index >= START with no loop device
  loopdev.py attach-as UID N FILE
                            attach FILE, opened as user UID, to a new /dev/loopN,
                            read-only: as udisks does with the descriptor a
                            user hands it (root cannot open a file of a FUSE
                            server a user runs, the user can)
"""
import errno
import fcntl
import os
import pwd
import socket
import sys
import time

LOOP_CTL_ADD = 0x4C80
LOOP_CTL_REMOVE = 0x4C81
LOOP_SET_FD = 0x4C00


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


def open_as(uid, path):
    """A descriptor of path, opened by a child that is uid through and
    through: FUSE lets a process into a user's mount only when its real,
    effective and saved ids are all the user's."""
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        try:
            parent.close()
            gid = pwd.getpwuid(uid).pw_gid
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            socket.send_fds(child, [b"x"], [fd])
            os._exit(0)
        except OSError as e:
            print(f"loopdev.py: {path}: {e}", file=sys.stderr)
            os._exit(1)
    child.close()
    _, fds, _, _ = socket.recv_fds(parent, 1, 1)
    parent.close()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not fds:
        sys.exit(1)
    return fds[0]


def attach_as(uid, index, path):
    fd = open_as(uid, path)
    control(LOOP_CTL_ADD, index)
    loop = os.open(f"/dev/loop{index}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.ioctl(loop, LOOP_SET_FD, fd)
    finally:
        os.close(loop)
        os.close(fd)


def main(argv):
    if len(argv) == 5 and argv[1] == "attach-as":
        attach_as(int(argv[2]), int(argv[3]), argv[4])
        return
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
