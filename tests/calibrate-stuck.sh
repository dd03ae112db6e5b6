#!/bin/bash
# Calibrations that users' servers could leave stuck (issue 47, item 3). A
# calibration given up on leaves a process that can be killed only when its
# read returns, so: radaemon does not calibrate, on its own, a loop device
# over a file of a FUSE server a user runs; and while one calibration's read
# is stuck, no other starts on radaemon's own, so that three loop devices
# over the files of one server that stopped answering leave one stuck
# process, not three. Once the read returns, calibrations start again.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus
[[ -c /dev/fuse && -x $RA_BUILDDIR/tests/ra-testfs ]] || ra_skip "no /dev/fuse or no tests/ra-testfs"
id nobody >/dev/null 2>&1 || ra_skip "no user nobody"
nobody=$(id -u nobody)

# --- a loop device over a file of a FUSE server that nobody runs ------------------
cp "$RA_BUILDDIR/tests/ra-testfs" "$T/ra-testfs"
chmod 755 "$T/ra-testfs"
mkdir "$T/user-fuse"
chown nobody "$T/user-fuse"
runuser -u nobody -- "$T/ra-testfs" --files 1 --size-mib 64 "$T/user-fuse" ||
	ra_fail "nobody could not mount ra-testfs"
RA_MOUNTS+=("$T/user-fuse")
grep -q " $T/user-fuse .*user_id=$nobody" /proc/self/mountinfo ||
	ra_fail "the mount is not nobody's: $(grep user-fuse /proc/self/mountinfo)"
index=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused 1000)
RA_LOOPS+=("$index")
python3 "$RA_SRCDIR/tests/loopdev.py" attach-as "$nobody" "$index" "$T/user-fuse/file-000" ||
	ra_fail "cannot attach nobody's file to loop$index"
user_loop=loop$index

# --- three loop devices over the files of a server that will stop answering -------
ra_stalled_loops 3
# nobody's too goes before its mount does.
remove_user_loop() { ra_remove_loop "$user_loop"; }
RA_HOOKS+=(remove_user_loop)
udevadm settle -t 10 || true

ra_config <<CONF
[daemon]
devices = $user_loop ${STALLED[*]}
interval_ms = 500
state_dir = $T/state

[policy]
calibrate = yes
CONF
touch "$T/stall"
ra_start_daemon

ra_wait_log "^$user_loop: not calibrated: it is a loop device over a file of a FUSE server a user runs"
ra_ok "$user_loop (a file of nobody's FUSE server): $(grep -a "^$user_loop: not calibrated" "$T/daemon.log")"

# The first calibration waits on the server; after its 10 s deadline it is
# given up on, and then, for longer than another deadline, none other starts.
RA_TIMEOUT=$((40 * RA_SLOWDOWN)) ra_wait_log "did not answer a calibration's read"
sleep 15
started=$(grep -ac ": calibrating: direct reads" "$T/daemon.log" || true)
abandoned=$(grep -ac "did not answer a calibration's read" "$T/daemon.log" || true)
stuck=0
for pid in $(pgrep -P "$DAEMON_PID" || true); do
	[[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == D ]] && stuck=$((stuck + 1))
done
((started == 1 && abandoned == 1 && stuck <= 1)) ||
	ra_fail "$started calibrations started, $abandoned given up on, $stuck processes stuck in a read: $(grep -a calibrat "$T/daemon.log")"
ra_ok "one calibration given up on, none other started in 15 s after it, $stuck process stuck"

# The server answers again: the stuck read returns, and the next disk calibrates.
rm -f "$T/stall"
ra_wait_log "has returned at last; calibrations start again"
ra_wait_log "^loop[0-9]+: calibrated with"
ra_ok "once the read returned: $(grep -a "calibrated with" "$T/daemon.log" | head -n 1 | cut -c1-80)..."
ra_stop_daemon
