#!/bin/bash
# A calibration cannot hang radaemon (issue 30, item 7). A device that stops
# answering (a loop device over a file of ra-testfs --stall-while: its reads
# wait, uninterruptibly, until the test lets them go) gets an answer to
# Calibrate() within the read deadline, with an error that says so; radaemon
# answers racontrol status meanwhile, calibrates other disks, refuses that
# one again at once, and exits on SIGTERM in a bounded time while the read is
# still stuck. And disks of 4 KiB and 16 KiB logical blocks calibrate: every
# read is a whole number of their blocks.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus
[[ -c /dev/fuse && -x $RA_BUILDDIR/tests/ra-testfs ]] || ra_skip "no /dev/fuse or no tests/ra-testfs"

# Generous bounds that only a hang crosses: the daemon's read deadline is 10 s
# (racontrol's own timeout 30 s). Under valgrind everything but the deadline is slower.
ANSWER_LIMIT=25
STOP_LIMIT=$((10 * RA_SLOWDOWN))
QUICK=$((5 * RA_SLOWDOWN))

# new_sector_loop NAME BYTES: a 64 MiB loop device of BYTES logical blocks, as LOOP.
new_sector_loop() {
	local index
	index=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused 1000)
	truncate -s 64M "$T/$1.img"
	RA_LOOPS+=("$index")
	losetup --sector-size "$2" "/dev/loop$index" "$T/$1.img" || ra_skip "losetup --sector-size $2 failed"
	LOOP=loop$index
}

# new_stalling_loop: a direct-I/O loop device over a file of ra-testfs, as LOOP;
# its reads wait while $T/stall exists.
new_stalling_loop() {
	local index
	mkdir "$T/fuse"
	"$RA_BUILDDIR/tests/ra-testfs" --files 1 --size-mib 64 --stall-while "$T/stall" "$T/fuse" ||
		ra_fail "ra-testfs did not mount"
	RA_MOUNTS+=("$T/fuse")
	index=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused 1000)
	RA_LOOPS+=("$index")
	losetup -r --direct-io=on "/dev/loop$index" "$T/fuse/file-000" 2>/dev/null ||
		losetup -r "/dev/loop$index" "$T/fuse/file-000" || ra_fail "cannot attach a loop device to ra-testfs"
	LOOP=loop$index
	RA_HOOKS+=(release_stall)
}

# Lets the stuck reads go, and detaches the loop device before the mount goes.
release_stall() {
	rm -f "$T/stall"
	[[ -z ${stalled:-} ]] || ra_remove_loop "$stalled"
}

new_sector_loop lbs4k 4096
lbs4k=$LOOP
new_sector_loop lbs16k 16384
lbs16k=$LOOP
new_stalling_loop
stalled=$LOOP
udevadm settle -t 10 || true

ra_config <<CONF
[daemon]
devices = $lbs4k $lbs16k $stalled
interval_ms = 500
state_dir = $T/state

[policy]
calibrate = no
CONF
ra_start_daemon

# --- every read a whole number of the disk's logical blocks ------------------------------
for dev in "$lbs4k" "$lbs16k"; do
	out=$("$RACONTROL" calibrate "$dev" 2>&1) ||
		ra_fail "$dev ($(cat "/sys/block/$dev/queue/logical_block_size")-byte blocks) did not calibrate: $out"
	[[ $out == "$dev: "*"us a command"* ]] || ra_fail "$dev: racontrol calibrate said '$out'"
	ra_ok "$dev, $(cat "/sys/block/$dev/queue/logical_block_size")-byte blocks: $(head -n 1 <<<"$out")"
done

# --- a device that never answers ---------------------------------------------------
touch "$T/stall"
start=$SECONDS
"$RACONTROL" calibrate "$stalled" >"$T/calibrate.out" 2>&1 &
caller=$!
RA_PIDS+=("$caller")
ra_wait_for "[[ \$(ra_property $stalled calibrating) == True ]]" ||
	ra_fail "$stalled: no calibration under way"
sleep 1
timeout "$QUICK" "$RACONTROL" status >/dev/null || ra_fail "racontrol status did not answer during a stuck calibration"
rc=0
wait "$caller" || rc=$?
took=$((SECONDS - start))
out=$(cat "$T/calibrate.out")
((took <= ANSWER_LIMIT)) || ra_fail "$stalled: Calibrate() answered after $took s: $out"
((rc != 0)) || ra_fail "$stalled: a calibration of a device that never answers succeeded: $out"
[[ $out == *"did not answer"* ]] || ra_fail "$stalled: Calibrate() said '$out'"
ra_ok "$stalled: Calibrate() of a stuck device answered after $took s: $out"

timeout "$QUICK" "$RACONTROL" status >/dev/null || ra_fail "racontrol status did not answer after a stuck calibration"
[[ $(ra_property "$stalled" calibrating) == False ]] || ra_fail "$stalled: still calibrating after the answer"
out=$(timeout "$QUICK" "$RACONTROL" calibrate "$lbs4k" 2>&1) ||
	ra_fail "$lbs4k: no calibration while $stalled's read is stuck: $out"
if out=$(timeout "$QUICK" "$RACONTROL" calibrate "$stalled" 2>&1); then
	ra_fail "$stalled: calibrated again while its read is stuck: $out"
fi
[[ $out == *"has not returned"* ]] || ra_fail "$stalled: a second Calibrate() said '$out'"
ra_ok "status answers, $lbs4k calibrates, $stalled is refused at once: $out"

# --- SIGTERM while the read is stuck: radaemon exits in a bounded time ----------------
# Should it not, the stall ends after a while all the same, so that the test ends.
(
	sleep $((STOP_LIMIT + 5))
	rm -f "$T/stall"
) &
releaser=$!
RA_PIDS+=("$releaser")
start=$SECONDS
kill -TERM "$DAEMON_PID"
rc=0
wait "$DAEMON_PID" || rc=$?
DAEMON_PID=
took=$((SECONDS - start))
[[ -e $T/stall ]] || ra_fail "radaemon exited only once the stuck read returned ($took s after SIGTERM)"
((took <= STOP_LIMIT)) || ra_fail "radaemon took $took s to exit on SIGTERM"
((rc == 0)) || ra_fail "radaemon exited with $rc on SIGTERM"
grep -q "did not answer" "$T/daemon.log" || ra_fail "the log does not say the device did not answer"
ra_ok "SIGTERM with a read still stuck: radaemon exited in $took s"
kill "$releaser" 2>/dev/null || true
release_stall
