#!/bin/bash
# Without udevd, radaemon asks libblkid what a disk holds (issue 47, item 6).
# A disk whose reads wait on a server that stopped answering (a loop device
# over the file of a FUSE server, its cache dropped) held radaemon's start in
# that read: no "Managing", no bus, until the watchdog. Now the probe runs in
# a child with a deadline of 1 s; radaemon starts, answers, decides the
# disk without its file system, says so once, and probes no other disk
# while that read waits.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus
ra_stalled_loops 2
# Then no udevd, as in a container: the test's own stops, and what it knew
# of the disks (in the test's own /run/udev) goes with it.
udevadm settle -t 10 || true
kill "$UDEVD_PID"
wait "$UDEVD_PID" 2>/dev/null || true
UDEVD_PID=
rm -rf /run/udev/data
! ra_udevd_runs || ra_fail "a udevd still answers"

ra_config <<CONF
[daemon]
devices = ${STALLED[*]}
state_dir = $T/state
CONF
# What the kernel's partition scan read is dropped: libblkid's reads go to the server.
for dev in "${STALLED[@]}"; do
	blockdev --flushbufs "/dev/$dev"
done
touch "$T/stall"
start=$SECONDS
ra_start_daemon
ra_ok "radaemon started in $((SECONDS - start)) s with ${STALLED[*]} not answering"
out=$(timeout 5 "$RACONTROL" status 2>&1) || ra_fail "racontrol status did not answer: $out"
n=$(grep -c "libblkid's probe did not answer in 1000 ms" "$T/daemon.log") || true
((n == 1)) || ra_fail "$n warnings of a probe that did not answer, not 1: $(cat "$T/daemon.log")"
ra_daemon_log_has "^${STALLED[1]}: not probed: another device's probe still waits on its read\.|^${STALLED[0]}: not probed: another device's probe still waits on its read\." ||
	ra_fail "the second disk was probed while the first probe's read waited"
stuck=0
for pid in $(pgrep -P "$DAEMON_PID" || true); do
	[[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == D ]] && stuck=$((stuck + 1))
done
((stuck <= 1)) || ra_fail "$stuck probes stuck in a read, not 1 at most"
for dev in "${STALLED[@]}"; do
	[[ $(ra_property "$dev" target_kb) -gt 0 ]] ||
		ra_fail "$dev was not decided"
done
ra_ok "status answered; one probe given up on, $stuck process stuck in its read, the other disk not probed meanwhile"
rm -f "$T/stall"
ra_stop_daemon
