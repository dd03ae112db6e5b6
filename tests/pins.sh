#!/bin/bash
# Pins set with racontrol survive a daemon restart and a re-plug of the same
# device (same backing file, another loop device), and are listed by racontrol
# status while the device is away (to root only: nobody is told none);
# racontrol auto hands the device back;
# --runtime pins last only until the daemon stops.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus

ra_new_loop tiny 505K
tiny=$LOOP
ra_new_loop big 64G
big=$LOOP
ra_set_rotational "$big" 1
replug=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused $((${big#loop} + 1)))
udevadm settle
ra_config <<CONF
[daemon]
devices = $tiny $big loop$replug
state_dir = $T/state
CONF
ra_start_daemon
prior_big=$(ra_kb "$big")

# A persistent pin is on disk once racontrol returns.
out=$("$RACONTROL" set "$tiny" 64) || ra_fail "racontrol set failed: $out"
[[ $out == "$tiny: pinned to 64 KiB; the pin survives restarts, re-plugs and remounts." ]] || ra_fail "unexpected output: $out"
[[ $(ra_kb "$tiny") == 64 ]] || ra_fail "$tiny is $(ra_kb "$tiny") KiB after set 64"
grep -qE "^device loop:$T/tiny.img original=[0-9]+ pin=64$" "$T/state/state" ||
	ra_fail "the pin is not in the state file: $(cat "$T/state/state")"
"$RACONTROL" show "$tiny" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["source"] == "pinned" and d["target_kb"] == 64 and d["read_ahead_kb"] == 64, d' ||
	ra_fail "show does not report the pin"
ra_ok "set: $tiny pinned to 64 KiB and stored"

# A runtime pin is applied but not stored.
"$RACONTROL" set "$big" 256 --runtime >/dev/null || ra_fail "set --runtime failed"
[[ $(ra_kb "$big") == 256 ]] || ra_fail "$big is $(ra_kb "$big") KiB after set 256 --runtime"
if grep -q "big.img.*pin=" "$T/state/state"; then
	ra_fail "a --runtime pin was stored"
fi

# Restart: the kernel's value is put back first, so only the daemon can restore the pin.
ra_stop_daemon
echo 2560 >"/sys/block/$tiny/queue/read_ahead_kb"
echo 2560 >"/sys/block/$big/queue/read_ahead_kb"
ra_start_daemon
[[ $(ra_kb "$tiny") == 64 ]] || ra_fail "after a restart $tiny is $(ra_kb "$tiny") KiB, not the pinned 64"
[[ $(ra_kb "$big") == "$prior_big" ]] || ra_fail "after a restart the --runtime pin on $big is still there"
ra_ok "restart: the stored pin is back, the runtime pin is gone"

# Re-plug: the same backing file on another loop device brings its pin along.
ra_remove_loop "$tiny"
ra_wait_log "^$tiny: removed"
# Absent, its pin is still listed, as pins are never forgotten.
out=$("$RACONTROL" status) || ra_fail "racontrol status failed: $out"
grep -qxF "  loop:$T/tiny.img: 64 KiB" <<<"$out" || ra_fail "status does not list the absent device's pin: $out"
"$RACONTROL" status --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["absent_pins"] == [{"identity": "loop:" + sys.argv[1] + "/tiny.img", "pin_kb": 64}], d["absent_pins"]' "$T" ||
	ra_fail "status --json does not list the absent device's pin"
ra_ok "absent: racontrol status lists the pin of $T/tiny.img"
# The identity names someone's image file (or a disk's serial): root's only.
as_nobody() { runuser -u nobody -- env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" "$@"; }
out=$(as_nobody busctl --address="$DBUS_SYSTEM_BUS_ADDRESS" get-property org.radaemon.ReadAhead1 \
	/org/radaemon/ReadAhead1 org.radaemon.ReadAhead1.Manager AbsentPins 2>&1) ||
	ra_fail "nobody cannot read AbsentPins: $out"
[[ $out == "a(su) 0" ]] || ra_fail "nobody is told the absent pins: $out"
out=$(busctl --address="$DBUS_SYSTEM_BUS_ADDRESS" get-property org.radaemon.ReadAhead1 \
	/org/radaemon/ReadAhead1 org.radaemon.ReadAhead1.Manager AbsentPins 2>&1) ||
	ra_fail "root cannot read AbsentPins: $out"
[[ $out == "a(su) 1 \"loop:$T/tiny.img\" 64" ]] || ra_fail "root's AbsentPins: $out"
out=$(as_nobody "$RACONTROL" status 2>&1) || ra_fail "nobody's racontrol status failed: $out"
if grep -qF "tiny.img" <<<"$out"; then
	ra_fail "nobody's racontrol status names the absent device: $out"
fi
grep -qxF "Pins of devices not present are shown to root only." <<<"$out" ||
	ra_fail "nobody's racontrol status does not say why it lists no pins: $out"
as_nobody "$RACONTROL" status --json | python3 -c '
import json, sys
assert json.load(sys.stdin)["absent_pins"] == []' || ra_fail "nobody's status --json lists absent pins"
ra_ok "absent: its pin is root's to see, nobody is told none"
ra_new_loop tiny 505K "$replug"
[[ $LOOP == "loop$replug" ]] || ra_fail "expected loop$replug, got $LOOP"
ra_wait_kb "loop$replug" 64
ra_ok "re-plug: the pin followed $T/tiny.img to loop$replug"

# auto: back to radaemon's own value, and gone from the state file.
out=$("$RACONTROL" auto "loop$replug") || ra_fail "racontrol auto failed: $out"
ra_wait_kb "loop$replug" 4
if grep -q "tiny.img.*pin=" "$T/state/state"; then
	ra_fail "the pin is still stored after auto"
fi
ra_stop_daemon
echo 2560 >"/sys/block/loop$replug/queue/read_ahead_kb"
ra_start_daemon
[[ $(ra_kb "loop$replug") == 4 ]] || ra_fail "after auto and a restart loop$replug is $(ra_kb "loop$replug") KiB"
ra_ok "auto: the pin is cleared for good"

# The state file holds each device once, its original value, and only the stored pins.
"$RACONTROL" set "$big" 1024 >/dev/null || ra_fail "set failed"
grep -v -e '^#' -e '^more ' "$T/state/state" | sort >"$T/state.lines"
printf '%s\n' "device loop:$T/big.img original=2560 pin=1024" "device loop:$T/tiny.img original=2560" "version 2" >"$T/state.want"
diff -u "$T/state.want" "$T/state.lines" || ra_fail "unexpected state file"
# When each was last seen, on a line of its own.
for img in big tiny; do
	grep -qE "^more loop:$T/$img.img seen=[0-9]+$" "$T/state/state" || ra_fail "no seen= for $img.img: $(cat "$T/state/state")"
done
compgen -G "$T/state/.state.*" >/dev/null && ra_fail "a temporary state file was left behind"
ra_ok "the state file holds exactly the stored pins"

# A pin right after somebody's write, before radaemon has sampled it: the
# pin is what stands (it ends yielding), not the write.
echo 2048 >"/sys/block/$big/queue/read_ahead_kb"
out=$("$RACONTROL" set --runtime "$big" 512) || ra_fail "racontrol set after an external write failed: $out"
ra_wait_kb "$big" 512
sleep 1.5
[[ $(ra_kb "$big") == 512 && $(ra_property "$big" source) == pinned ]] ||
	ra_fail "$big is at $(ra_kb "$big") KiB ($(ra_property "$big" source)) after a pin that followed an external write"
ra_ok "a pin given right after somebody's write stands"

ra_stop_daemon
