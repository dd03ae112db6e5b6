#!/bin/bash
# Anyone may look; only root may change. As nobody, every read works, and
# racontrol set, racontrol auto, racontrol reload and raw SetReadAhead calls
# are refused with AccessDenied, leaving sysfs as it was. A flood of
# unprivileged calls (1,000 a second for 10 s) while polkit hangs leaves
# decisions on time: root's calls, a hotplugged disk's tuning, and another
# user's call, which nobody's pending checks do not count against.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus
id nobody >/dev/null 2>&1 || ra_skip "no user nobody"

ra_new_loop tiny 505K
tiny=$LOOP
hot=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused $((${tiny#loop} + 1)))
ra_config <<CONF
[daemon]
devices = $tiny loop$hot
state_dir = $T/state
CONF
ra_start_daemon

as_nobody() { runuser -u nobody -- env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" "$@"; }

as_nobody "$RACONTROL" status >"$T/out" || ra_fail "nobody cannot run status: $(cat "$T/out")"
grep -q "^$tiny " "$T/out" || ra_fail "nobody's status does not list $tiny"
as_nobody "$RACONTROL" show "$tiny" --json | python3 -c 'import json,sys; json.load(sys.stdin)' ||
	ra_fail "nobody cannot run show --json"
as_nobody busctl --address="$DBUS_SYSTEM_BUS_ADDRESS" get-property org.radaemon.ReadAhead1 \
	"/org/radaemon/ReadAhead1/device/$tiny" org.radaemon.ReadAhead1.Device ReadAheadKB >/dev/null ||
	ra_fail "nobody cannot read a property"
ra_ok "nobody may read"

before=$(ra_kb "$tiny")
for verb in "set $tiny 64" "set $tiny 64 --runtime" "auto $tiny" "reload"; do
	rc=0
	# shellcheck disable=SC2086 # verb is meant to split
	as_nobody "$RACONTROL" $verb >"$T/out" 2>&1 || rc=$?
	((rc == 1)) || ra_fail "racontrol $verb as nobody: status $rc, want 1"
	grep -q "^racontrol: not permitted: " "$T/out" || ra_fail "racontrol $verb as nobody: $(cat "$T/out")"
done
# busctl says only "Access denied"; dbus-send shows the error's name and the daemon's words.
for call in "Manager SetReadAhead sub $tiny 64 true" "Manager ClearPin s $tiny" "Manager Reload"; do
	# shellcheck disable=SC2086 # call is meant to split
	if as_nobody busctl --address="$DBUS_SYSTEM_BUS_ADDRESS" call org.radaemon.ReadAhead1 \
		/org/radaemon/ReadAhead1 org.radaemon.ReadAhead1.$call 2>"$T/out"; then
		ra_fail "busctl $call as nobody succeeded"
	fi
	grep -q "Access denied" "$T/out" || ra_fail "busctl $call: $(cat "$T/out")"
done
denied="Error org.freedesktop.DBus.Error.AccessDenied: Only root may change radaemon's settings (uid 65534 may not)."
for call in "/org/radaemon/ReadAhead1 org.radaemon.ReadAhead1.Manager.SetReadAhead string:$tiny uint32:64 boolean:false" \
	"/org/radaemon/ReadAhead1/device/$tiny org.radaemon.ReadAhead1.Device.SetReadAhead uint32:64 boolean:true" \
	"/org/radaemon/ReadAhead1/device/$tiny org.radaemon.ReadAhead1.Device.ClearPin"; do
	# shellcheck disable=SC2086 # call is meant to split
	out=$(as_nobody dbus-send --system --print-reply --dest=org.radaemon.ReadAhead1 $call 2>&1) &&
		ra_fail "$call as nobody succeeded"
	[[ $out == "$denied" ]] || ra_fail "$call as nobody: $out"
done
[[ $(ra_kb "$tiny") == "$before" ]] || ra_fail "a refused call changed $tiny to $(ra_kb "$tiny") KiB"
[[ ! -s $T/state/state ]] || ! grep -q pin= "$T/state/state" || ra_fail "a refused call stored a pin"
ra_ok "nobody may not change anything; sysfs and the state file unchanged"

# Root may.
"$RACONTROL" set "$tiny" 64 >/dev/null || ra_fail "root cannot set"
[[ $(ra_kb "$tiny") == 64 ]] || ra_fail "root's set did not apply"
ra_ok "root may change"

# A flood of unprivileged calls, while polkit hangs: a peer that owns its name
# and never answers. Each call needs polkit's word; root's never does.
sed -i 's|</busconfig>|<policy user="root"><allow own="org.freedesktop.PolicyKit1"/></policy>\
<policy context="default"><allow send_destination="org.freedesktop.PolicyKit1"/></policy></busconfig>|' "$T/bus.conf"
kill -HUP "$BUS_PID"
python3 "$RA_SRCDIR/tests/bus-flood.py" black-hole org.freedesktop.PolicyKit1 "$T/polkit.ready" >"$T/polkit.log" 2>&1 &
RA_PIDS+=($!)
ra_wait_for "[[ -s $T/polkit.ready ]]" || ra_fail "the hanging polkit could not take its name: $(cat "$T/polkit.log")"
as_nobody python3 "$RA_SRCDIR/tests/bus-flood.py" flood 1000 10 org.radaemon.ReadAhead1 /org/radaemon/ReadAhead1 \
	org.radaemon.ReadAhead1.Manager Reload >"$T/flood.log" 2>&1 &
flood=$!
RA_PIDS+=("$flood")
sleep 2
# A generous bound: only a loop that waits for polkit would cross it.
start=$SECONDS
timeout 10 "$RACONTROL" set "$tiny" 128 >"$T/out" 2>&1 || ra_fail "root's set during the flood: $(cat "$T/out")"
[[ $(ra_kb "$tiny") == 128 ]] || ra_fail "root's set during the flood did not apply"
ra_new_loop hot 505K "$hot"
ra_wait_kb "loop$hot" 4
ra_ok "during the flood, root set $tiny in $((SECONDS - start)) s or less and loop$hot was tuned on hotplug"
# Another user's call is not refused for nobody's checks: it is asked about (and,
# polkit hanging, refused after polkit's 5 s).
rc=0
runuser -u daemon -- busctl --address="$DBUS_SYSTEM_BUS_ADDRESS" call org.radaemon.ReadAhead1 \
	/org/radaemon/ReadAhead1 org.radaemon.ReadAhead1.Manager Reload >"$T/other.out" 2>&1 || rc=$?
((rc != 0)) || ra_fail "user daemon's Reload succeeded with polkit hanging: $(cat "$T/other.out")"
if grep -qi "too many" "$T/other.out"; then
	ra_fail "user daemon's call was refused for nobody's pending checks: $(cat "$T/other.out")"
fi
ra_ok "user daemon's call during nobody's flood went to polkit: $(cat "$T/other.out")"
wait "$flood" || ra_fail "the flood failed: $(cat "$T/flood.log")"
read -r _ sent _ answered <"$T/flood.log"
((sent >= 5000 && answered == sent)) || ra_fail "the flood: $(cat "$T/flood.log")"
grep -q "^org.freedesktop.DBus.Error.LimitsExceeded [0-9]" "$T/flood.log" ||
	ra_fail "no call was refused for too many polkit checks pending: $(cat "$T/flood.log")"
kill -0 "$DAEMON_PID" || ra_fail "the daemon died in the flood"
ra_ok "the flood: $(paste -sd ' ' "$T/flood.log")"
ra_stop_daemon
