#!/bin/bash
# Identities that cannot collide: three loop devices a udev rule gives one
# serial and one model, two of one size and one of another. The two that
# report one identity are kept apart (neither takes the pin stored under
# it, and the log says so); the third, of another size, has an identity of
# its own. A pin an earlier radaemon stored under the serial alone is taken
# by none of them while all three are present, and by the only one present
# in a start where it is alone.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus

indexes=()
next=1000
for _ in 1 2 3; do
	next=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused "$next")
	indexes+=("$next")
	next=$((next + 1))
done
a=loop${indexes[0]} b=loop${indexes[1]} c=loop${indexes[2]}
ra_udev_rule 59-radaemon-identity-test.rules <<RULES
SUBSYSTEM=="block", KERNEL=="$a|$b|$c", ENV{ID_SERIAL}="RA-SAME", ENV{ID_MODEL}="RAMODEL"
RULES
ra_new_loop a 64M "${indexes[0]}"
ra_new_loop b 64M "${indexes[1]}"
ra_new_loop c 128M "${indexes[2]}"
udevadm settle
shared="serial:RA-SAME/RAMODEL/$((64 << 20))"
mkdir "$T/state"
printf 'device %s pin=64\ndevice serial:RA-SAME pin=48\n' "$shared" >"$T/state/state"
ra_config <<CONF
[daemon]
devices = $a $b $c
state_dir = $T/state
CONF

ra_start_daemon
id_a=$(ra_property "$a" identity)
id_b=$(ra_property "$b" identity)
id_c=$(ra_property "$c" identity)
[[ $id_a == "$shared@name:$a" && $id_b == "$shared@name:$b" ]] ||
	ra_fail "two devices reporting $shared are not kept apart: '$id_a', '$id_b'"
[[ $id_c == "serial:RA-SAME/RAMODEL/$((128 << 20))" ]] || ra_fail "$c, of another size: identity '$id_c'"
for dev in "$a" "$b" "$c"; do
	[[ $(ra_property "$dev" source) != pinned ]] || ra_fail "$dev took a pin stored for another device: $(ra_property "$dev" reason)"
done
ra_daemon_log_has "^$a: 1 other present device reports $shared: kept apart as $shared@name:$a" ||
	ra_fail "the clash is not logged for $a"
ra_daemon_log_has "^$b: 1 other present device reports $shared: kept apart as $shared@name:$b" ||
	ra_fail "the clash is not logged for $b"
ra_daemon_log_has "^$c: 3 present devices report serial:RA-SAME, which an earlier radaemon kept values under" ||
	ra_fail "the old key's ambiguity is not logged"
grep -q "^device serial:RA-SAME pin=48$" "$T/state/state" || ra_fail "the old key did not wait: $(cat "$T/state/state")"
ra_ok "$a and $b kept apart ($id_a, $id_b), $c on its own ($id_c); no pin taken, the old key waits"

# The helper decides alike, from udev's database.
for dev in "$a" "$c"; do
	out=$(env -i ACTION=change DEVTYPE=disk ID_SERIAL=RA-SAME ID_MODEL=RAMODEL \
		"$RA_BUILDDIR/udev/radaemon-udev" --config "$T/radaemon.conf" "$dev" 2>&1) ||
		ra_fail "the helper failed for $dev: $out"
	[[ $out == *RADAEMON_SOURCE=* && $out != *RADAEMON_SOURCE=pinned* ]] || ra_fail "the helper for $dev: $out"
done
ra_ok "the udev helper gives none of them a stored pin either"

# Alone, a device takes what the old key held (the first start of this
# radaemon: nothing is stored under its new identity yet).
ra_stop_daemon
ra_remove_loop "${indexes[0]}"
ra_remove_loop "${indexes[1]}"
udevadm settle
echo "device serial:RA-SAME pin=48" >"$T/state/state"
ra_start_daemon
ra_wait_kb "$c" 48
[[ $(ra_property "$c" source) == pinned ]] || ra_fail "$c: $(ra_property "$c" source), not pinned by the old key"
ra_daemon_log_has "^$c: what was stored under serial:RA-SAME is kept under serial:RA-SAME/RAMODEL/$((128 << 20)) from now on" ||
	ra_fail "the move of the old key is not logged"
ra_stop_daemon
grep -q "^device serial:RA-SAME pin=" "$T/state/state" && ra_fail "the old key stays after it moved"
ra_ok "alone, $c takes the pin stored under the serial alone, once"
