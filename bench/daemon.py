"""Runs the radaemon under test with an allow-list of the bench's devices."""
import os
import re
import socket
import subprocess
import time

from machine import TRACEFS, log, tracefs_mounted


class DaemonFailed(RuntimeError):
    pass


def unit_environment():
    """The Environment= settings of systemd/radaemon.service.in.

    The bench runs the daemon as systemd would, so that what it measures
    (memory above all) is what a user of the unit gets.
    """
    unit = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "systemd",
                        "radaemon.service.in")
    env = {}
    with open(unit) as f:
        for line in f:
            if line.startswith("Environment="):
                key, _, value = line.strip()[len("Environment="):].partition("=")
                env[key] = value
    return env


class Daemon:
    """One radaemon process: its own config, state directory and log.

    Readiness is READY=1 on our own $NOTIFY_SOCKET, sent after the coldplug
    walk, so start() also times the coldplug.
    """

    def __init__(self, machine, builddir, names, tag="daemon", interval_ms=None, env=None,
                 log_levels=False, bdis=(), extra="", debug=False):
        self.machine = machine
        self.binary = os.path.join(builddir, "daemon", "radaemon")
        if not os.access(self.binary, os.X_OK):
            raise DaemonFailed(f"no daemon at {self.binary}; build it first")
        self.names = list(names)
        # Mount points of the bench's own whose bdis (btrfs, FUSE) it manages; none by default.
        self.bdis = list(bdis)
        # More of the config file, after [daemon]: [bdi:GLOB] pins, say.
        self.extra = extra
        self.dir = machine.path(tag)
        os.makedirs(os.path.join(self.dir, "state"), exist_ok=True)
        self.config = os.path.join(self.dir, "radaemon.conf")
        self.log = os.path.join(self.dir, "daemon.log")
        self.interval_ms = interval_ms
        self.env = dict(unit_environment(), **(env or {}))
        # Each log line starts with <level>, as under systemd: the daemon does
        # so when stderr is the stream JOURNAL_STREAM names, unless --foreground.
        self.log_levels = log_levels
        # --debug: what a measurement reads from the daemon's debug lines.
        self.debug = debug
        self.process = None
        self.traced = False

    def state_empty(self):
        """Whether the state directory holds nothing: a daemon that has
        learned nothing (the bench's user suite insists on it)."""
        return not os.listdir(os.path.join(self.dir, "state"))

    def write_config(self):
        # Ten names a line: long lists continue on indented lines.
        # No names (a FUSE bench: bdis only): devices= cannot be empty, and
        # its default is every disk; a name no disk has keeps them all out.
        names = self.names or ["radaemon-bench-no-disk"]
        rows = [" ".join(names[i:i + 10]) for i in range(0, len(names), 10)]
        lines = ["[daemon]", "devices = " + "\n    ".join(rows),
                 "bdis = " + " ".join(self.bdis),
                 f"state_dir = {os.path.join(self.dir, 'state')}"]
        if self.interval_ms:
            lines.append(f"interval_ms = {self.interval_ms}")
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n" + self.extra)

    def start(self, timeout=30):
        """Starts the daemon and returns the seconds from exec to READY=1."""
        self.write_config()
        self.traced = tracefs_mounted()
        notify_path = os.path.join(self.dir, "notify")
        if os.path.exists(notify_path):
            os.unlink(notify_path)
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        try:
            notify.bind(notify_path)
            env = dict(os.environ, NOTIFY_SOCKET=notify_path, **self.env)
            argv = [self.binary, "--config", self.config]
            # Every decision's reason and each model refit (bench/README.md).
            if self.debug or os.environ.get("RA_BENCH_DEBUG"):
                argv.append("--debug")
            with open(self.log, "w") as out:
                if self.log_levels:
                    st = os.fstat(out.fileno())
                    env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
                else:
                    argv.insert(1, "--foreground")
                t0 = time.monotonic()
                self.process = self.machine.spawn(argv, stdout=out, stderr=subprocess.STDOUT,
                                                  env=env)
            deadline = t0 + timeout
            while True:
                notify.settimeout(0.05)
                try:
                    message = notify.recv(4096).decode(errors="replace")
                except socket.timeout:
                    message = ""
                if "READY=1" in message.split("\n"):
                    return time.monotonic() - t0
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise DaemonFailed("the daemon did not get ready:\n" + self.output())
        finally:
            notify.close()

    def stop(self):
        if self.process:
            self.machine.stop(self.process)
            self.process = None

    def check_tracing(self):
        """Raises if tracefs went away while the daemon ran: it then learned
        nothing more, and a score of its run measures only its first value.
        (Something else unmounted it: a test run at the same time, say.)"""
        if self.traced and not tracefs_mounted():
            raise DaemonFailed(f"tracefs at {TRACEFS} was unmounted while the daemon ran: "
                               "the run is void; measure on a quiet machine")

    @property
    def pid(self):
        return self.process.pid

    def output(self):
        try:
            with open(self.log) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def managing(self):
        """The number in the daemon's "Managing N disks" line, or None."""
        m = re.search(r"Managing (\d+) disk", self.output())
        return int(m.group(1)) if m else None

    def decisions(self, name):
        """The daemon's log lines about one device, in order."""
        return [line.strip() for line in self.output().splitlines() if f"{name}:" in line]

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


def warn_if_foreign_daemon():
    """Another radaemon managing every disk would retune ours mid-measurement."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "radaemon":
                    log(f"bench: note: a radaemon (pid {pid}) runs already; fixed values are "
                        "checked after every measurement, so a retuned device is caught")
                    return
        except OSError:
            continue
