#!/bin/bash
# Faults radaemon must live through, each logged once and not in a loop: a
# read_ahead_kb that cannot be written, a state directory that is read-only
# or full (tuning goes on; D-Bus says so), the system bus going away and
# coming back, and lost udev events (an overrun of the monitor's buffer).
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus


ra_new_loop tiny 505K
tiny=$LOOP
ra_new_loop other 505K
other=$LOOP
udevadm settle
mkdir "$T/state"
ra_config <<CONF
[daemon]
devices = $tiny $other
interval_ms = 200
state_dir = $T/state
CONF

state_error() { "$RACONTROL" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state_error"])'; }

# 1. An attribute that refuses writes: one warning however often we try.
attr=/sys/block/$tiny/queue/read_ahead_kb
cat "$attr" >"$T/ra_file"
mount --bind "$T/ra_file" "$attr"
RA_MOUNTS+=("$attr")
mount -o remount,ro,bind "$attr"
ra_start_daemon
for i in 1 2 3; do
	echo change >"/sys/block/$tiny/uevent"
done
udevadm settle
ra_wait_for "[[ \$(grep -c '^$tiny: change event' '$T/daemon.log') -ge 3 ]]" || ra_fail "the change events did not arrive"
[[ $(grep -c "^$tiny: cannot write 4 KiB to read_ahead_kb: Read-only file system" "$T/daemon.log") == 1 ]] ||
	ra_fail "a failing write was not logged exactly once"
[[ $(ra_kb "$other") == 4 ]] || ra_fail "the other disk was not tuned"
ra_undo_mounts
echo change >"/sys/block/$tiny/uevent"
ra_wait_kb "$tiny" 4
ra_daemon_log_has "^$tiny: read_ahead_kb can be written again\.$" || ra_fail "the recovery was not logged"
ra_ok "a read-only attribute: one warning, the rest tuned, recovery logged"
ra_stop_daemon

# 2. A read-only state directory, then a full one: tuning goes on for the
# disks whose originals are on disk already, D-Bus says why. (A disk whose
# original cannot be saved is not written: tests/durability.sh.)
originals() { printf 'device loop:%s original=2560\ndevice loop:%s original=128\n' "$T/tiny.img" "$T/other.img"; }
for kind in read-only full; do
	rm -rf "$T/state"
	mkdir "$T/state"
	if [[ $kind == read-only ]]; then
		originals >"$T/state/state"
		mount --bind "$T/state" "$T/state"
		RA_MOUNTS+=("$T/state")
		mount -o remount,ro,bind "$T/state"
		want="Read-only file system"
	else
		mount -t tmpfs -o size=4k tmpfs "$T/state"
		RA_MOUNTS+=("$T/state")
		originals >"$T/state/state"
		dd if=/dev/zero of="$T/state/filler" bs=4k count=1 status=none 2>/dev/null || true
		want="No space left on device"
	fi
	echo 2560 >"/sys/block/$tiny/queue/read_ahead_kb"
	ra_start_daemon
	[[ $(ra_kb "$tiny") == 4 ]] || ra_fail "$kind state directory: $tiny not tuned"
	rc=0
	"$RACONTROL" set "$tiny" 64 >"$T/out" 2>&1 || rc=$?
	((rc == 1)) || ra_fail "$kind: a persistent pin that cannot be stored succeeded"
	grep -q "Cannot store the pin" "$T/out" || ra_fail "$kind: racontrol said: $(cat "$T/out")"
	[[ $(state_error) == "Cannot write $T/state/state: $want" ]] || ra_fail "$kind: StateError is '$(state_error)'"
	[[ $(ra_kb "$tiny") == 4 ]] || ra_fail "$kind: a pin that was refused changed the value"
	"$RACONTROL" set "$tiny" 64 --runtime >/dev/null || ra_fail "$kind: a runtime pin failed"
	[[ $(ra_kb "$tiny") == 64 ]] || ra_fail "$kind: the runtime pin was not applied"
	[[ $(grep -c "Cannot write $T/state/state" "$T/daemon.log") == 1 ]] || ra_fail "$kind: not logged exactly once"
	ra_undo_mounts
	"$RACONTROL" set "$tiny" 64 >/dev/null || ra_fail "$kind: the pin fails after the state directory is back"
	[[ -z $(state_error) ]] || ra_fail "$kind: StateError stays after a good save"
	ra_daemon_log_has "state can be written again" || ra_fail "$kind: the recovery was not logged"
	"$RACONTROL" auto "$tiny" >/dev/null
	ra_stop_daemon
	ra_ok "a $kind state directory: tuning goes on, StateError on D-Bus, one warning, recovery"
done

# 3. The system bus goes away and comes back.
ra_start_daemon
kill "$BUS_PID"
wait "$BUS_PID" 2>/dev/null || true
ra_wait_log "Lost the system bus"
echo 2560 >"/sys/block/$other/queue/read_ahead_kb"
echo change >"/sys/block/$other/uevent"
ra_wait_kb "$other" 4
rm -f "$T/system_bus_socket"
ra_start_bus
answers() { "$RACONTROL" status >/dev/null 2>&1; }
RA_TIMEOUT=20 ra_wait_for answers || ra_fail "radaemon did not come back on the bus"
ra_daemon_log_has "Back, serving org.radaemon.ReadAhead1 on the system bus" || ra_fail "the reconnection was not logged"
[[ $(grep -c "Lost the system bus" "$T/daemon.log") == 1 ]] || ra_fail "the loss was logged more than once"
ra_ok "the bus went away (tuning went on) and came back (re-registered)"
ra_stop_daemon

# 4. Lost udev events: a tiny receive buffer, the daemon stopped while events pile up.
RADAEMON_UDEV_BUFFER_BYTES=4096 ra_start_daemon
kill -STOP "$DAEMON_PID"
losetup -d "/dev/$other"
truncate -s 64G "$T/replaced.img"
losetup "/dev/$other" "$T/replaced.img"
echo 1 >"/sys/block/$other/queue/rotational"
for i in $(seq 200); do
	echo change >"/sys/block/$tiny/uevent"
done
udevadm settle
kill -CONT "$DAEMON_PID"
ra_wait_log "Missed udev events \(receive buffer overrun\); re-reading every disk\."
ra_wait_kb "$other" 512
ra_daemon_log_has "^$other: read_ahead_kb [0-9]+ -> 512 KiB \(prior, on overrun\)" || ra_fail "$other was not re-read after the overrun"
kill -0 "$DAEMON_PID" || ra_fail "the daemon died"
ra_ok "an overrun of the udev buffer is noticed and every disk re-read"
ra_stop_daemon
