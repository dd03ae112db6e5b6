#!/usr/bin/env python3
"""Checks what radaemon did under strace against its unit's sandbox.

  syscalls.py UNIT STRACE-FILE

UNIT is radaemon.service; STRACE-FILE what `strace -ff -o` wrote for the
daemon's pid (from the execve of radaemon on). Fails, naming each, on:
  - a system call outside SystemCallFilter= (group names expanded with
    `systemd-analyze syscall-filter`, as systemd does);
  - a socket of a family outside RestrictAddressFamilies=;
  - memory both writable and executable (MemoryDenyWriteExecute=);
  - a device node opened for writing (DeviceAllow=block-* r);
  - a namespace (RestrictNamespaces=) or an exec after its own: it forks
    only a calibration's process (a thread stuck in a read would keep it
    from exiting), which runs radaemon's own code;
  - personality changes (LockPersonality=), realtime scheduling
    (RestrictRealtime=).
"""
import re
import subprocess
import sys


def syscall_groups():
    """{"@group": [names and @subgroups]} from systemd-analyze."""
    out = subprocess.run(["systemd-analyze", "syscall-filter"], check=True, capture_output=True, text=True).stdout
    groups, current = {}, None
    for line in out.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), [])
        elif current is not None and line.strip() and not line.strip().startswith("#"):
            current.append(line.strip())
    return groups


def expand(item, groups, seen=None):
    seen = seen if seen is not None else set()
    if not item.startswith("@"):
        return {item}
    if item in seen:
        return set()
    seen.add(item)
    names = set()
    for sub in groups.get(item, []):
        names |= expand(sub, groups, seen)
    return names


def unit_settings(path, key):
    values = []
    for line in open(path):
        if line.startswith(key + "="):
            values.append(line[len(key) + 1 :].strip())
    return values


def allowed_syscalls(unit, groups):
    """The allow-list, less what later deny-lists take out; None without one."""
    allowed = None
    for value in unit_settings(unit, "SystemCallFilter"):
        names = set().union(*(expand(item, groups) for item in value.lstrip("~").split()))
        if value.startswith("~"):
            if allowed is None:
                sys.exit("syscalls.py: only an allow-list followed by deny-lists is handled")
            allowed -= names
        else:
            allowed = (allowed or set()) | names
    return allowed


def main(unit, trace):
    groups = syscall_groups()
    allowed = allowed_syscalls(unit, groups)
    families = set(" ".join(unit_settings(unit, "RestrictAddressFamilies")).split())
    problems, used, execs = [], set(), 0

    for line in open(trace):
        m = re.match(r"(\w+)\((.*)", line)
        if not m:
            continue
        name, args = m.groups()
        used.add(name)
        if allowed is not None and name not in allowed:
            problems.append(f"system call outside SystemCallFilter=: {line.strip()}")
        if name in ("socket", "socketpair"):
            family = args.split(",")[0].strip()
            if families and family not in families:
                problems.append(f"socket family outside RestrictAddressFamilies=: {line.strip()}")
        if name in ("mmap", "mprotect", "pkey_mprotect") and "PROT_WRITE" in args and "PROT_EXEC" in args:
            problems.append(f"writable and executable memory: {line.strip()}")
        if name in ("unshare", "setns") or (name in ("clone", "clone3") and "CLONE_NEW" in args):
            problems.append(f"radaemon should not change namespaces: {line.strip()}")
        execs += name in ("execve", "execveat")
        if name in ("execve", "execveat") and execs > 1:
            problems.append(f"radaemon should run nothing else: {line.strip()}")
        if name in ("open", "openat", "openat2") and '"/dev/' in args and ("O_WRONLY" in args or "O_RDWR" in args):
            if not re.search(r'"/dev/(null|zero|full|random|urandom)"', args):
                problems.append(f"a device opened for writing, outside DeviceAllow=: {line.strip()}")
        if name == "personality" and not args.startswith("0xffffffff"):
            problems.append(f"personality change: {line.strip()}")
        if name in ("sched_setscheduler", "sched_setattr") and ("SCHED_FIFO" in args or "SCHED_RR" in args):
            problems.append(f"realtime scheduling: {line.strip()}")

    for p in problems:
        print(p)
    print(f"syscalls.py: {len(used)} different system calls, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
