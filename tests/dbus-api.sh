#!/bin/bash
# The D-Bus API as docs/design.md and daemon/org.radaemon.ReadAhead1.xml say: what
# racontrol status --json prints, parsed by a real JSON parser; introspection
# equal to the XML; every bad input answered with the right error while the
# daemon keeps running; signals for added, changed and removed devices; ten
# clients at once.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus

ra_new_loop tiny 505K
tiny=$LOOP
ra_new_loop big 64G
big=$LOOP
ra_set_rotational "$big" 1
udevadm settle
ra_config <<CONF
[daemon]
devices = $tiny $big
state_dir = $T/state
CONF
ra_start_daemon
ra_daemon_log_has "Serving org.radaemon.ReadAhead1 on the system bus" || ra_fail "the daemon is not on the bus"

# status --json, field by field.
"$RACONTROL" status --json >"$T/status.json" || ra_fail "racontrol status --json failed"
python3 - "$T/status.json" "$tiny" "$big" "$T" <<'PY' || ra_fail "status --json is wrong: $(cat "$T/status.json")"
import json, sys
path, tiny, big, tmp = sys.argv[1:]
doc = json.load(open(path))
assert doc["mode"] == "auto", doc["mode"]
# This kernel has the readahead tracepoints, and lib.sh mounts tracefs.
assert doc["evidence"] == "readahead", doc["evidence"]
assert doc["learning_off"] == "", doc["learning_off"]
assert isinstance(doc["version"], str) and doc["version"], doc["version"]
devs = {d["name"]: d for d in doc["devices"]}
assert sorted(devs) == sorted([tiny, big]), sorted(devs)
types = {"name": str, "kind": str, "mount_point": str, "file_system": str, "stack": str,
         "node": str, "identity": str, "size_bytes": int, "rotational": bool,
         "removable": bool, "transport": str, "vendor": str, "model": str, "revision": str,
         "read_ahead_kb": int, "target_kb": int, "source": str,
         "reason": str, "read_bytes_per_sec": int, "avg_read_request_bytes": int, "workload": str,
         "evidence": str, "calibration": str, "calibrated_usec": int, "cost_model": str,
         "cost_model_source": str,
         "calibrating": bool}
for d in doc["devices"]:
    assert set(d) == set(types), set(d) ^ set(types)
    for key, kind in types.items():
        assert type(d[key]) is kind, (key, d[key])
    sysfs = int(open(f"/sys/block/{d['name']}/queue/read_ahead_kb").read())
    assert d["read_ahead_kb"] == sysfs, (d["name"], d["read_ahead_kb"], sysfs)
    assert d["node"] == "/dev/" + d["name"], d["node"]
    assert (d["kind"], d["mount_point"], d["file_system"], d["stack"]) == ("disk", "", "", ""), d
    assert d["transport"] == "loop", d["transport"]
    # udev names no hardware for a loop device.
    assert (d["vendor"], d["model"], d["revision"]) == ("", "", ""), d
    assert d["source"] == "prior", d["source"]
    assert d["reason"].endswith(".") and len(d["reason"]) > 20, d["reason"]
    assert d["workload"] in ("idle", "sequential", "random", "mixed"), d["workload"]
    assert d["evidence"] in ("none", "block", "page-cache", "readahead"), d["evidence"]
t, b = devs[tiny], devs[big]
assert t["size_bytes"] == 505 * 1024 and t["target_kb"] == 4, t
assert t["identity"] == f"loop:{tmp}/tiny.img", t["identity"]
assert b["size_bytes"] == 64 << 30 and b["rotational"] is True and b["target_kb"] > 4, b
PY
ra_ok "status --json parses and every field is right"

# The running daemon implements exactly the XML.
api=$RA_SRCDIR/daemon/org.radaemon.ReadAhead1.xml
ra_busctl introspect --xml-interface org.radaemon.ReadAhead1 /org/radaemon/ReadAhead1 >"$T/manager.xml"
ra_busctl introspect --xml-interface org.radaemon.ReadAhead1 "/org/radaemon/ReadAhead1/device/$tiny" >"$T/device.xml"
python3 "$RA_SRCDIR/tests/introspect.py" "$api" "$T/manager.xml" org.radaemon.ReadAhead1.Manager ||
	ra_fail "the Manager interface differs from the XML"
python3 "$RA_SRCDIR/tests/introspect.py" "$api" "$T/device.xml" org.radaemon.ReadAhead1.Device ||
	ra_fail "the Device interface differs from the XML"
grep -q 'org.freedesktop.DBus.ObjectManager' "$T/manager.xml" || ra_fail "no ObjectManager on the manager"
ra_ok "introspection matches the XML"

# Bad input: each call fails with the right error, and nothing changes.
# dbus-send prints the error's name; busctl only its message.
# expect_error ERROR-NAME PATH METHOD [ARGS...]
expect_error() {
	local want=$1 path=$2 method=$3 out
	shift 3
	if out=$(dbus-send --system --print-reply --dest=org.radaemon.ReadAhead1 "$path" "$method" "$@" 2>&1); then
		ra_fail "$method $* succeeded: $out"
	fi
	[[ $out == "Error $want"* ]] || ra_fail "$method $*: '$out', want $want"
}
MGR=/org/radaemon/ReadAhead1
SET=org.radaemon.ReadAhead1.Manager.SetReadAhead
NO_DEVICE=org.radaemon.ReadAhead1.Error.NoSuchDevice
INVALID=org.radaemon.ReadAhead1.Error.InvalidValue
before=$(ra_kb "$tiny")
expect_error "$NO_DEVICE: No managed device 'sdzz'." $MGR $SET string:sdzz uint32:64 boolean:true
expect_error "$NO_DEVICE: No managed device '../../etc'." $MGR $SET string:../../etc uint32:64 boolean:true
expect_error "$NO_DEVICE" $MGR org.radaemon.ReadAhead1.Manager.GetDevice string:
expect_error "$NO_DEVICE" $MGR org.radaemon.ReadAhead1.Manager.ClearPin "string:$tiny/../$big"
for kb in 0 3 5 8196 16386 4294967295; do
	expect_error "$INVALID: $tiny: the value must be a multiple of 4 from 4 to 8192 KiB, not $kb." \
		$MGR $SET "string:$tiny" "uint32:$kb" boolean:true
done
expect_error "$INVALID" "$MGR/device/$tiny" org.radaemon.ReadAhead1.Device.SetReadAhead uint32:3 boolean:false
# Wrong types and arity are refused before any handler runs.
expect_error org.freedesktop.DBus.Error.InvalidArgs $MGR $SET "string:$tiny" string:64 boolean:true
expect_error org.freedesktop.DBus.Error.InvalidArgs $MGR $SET "string:$tiny" uint32:64
expect_error org.freedesktop.DBus.Error.InvalidArgs $MGR $SET "string:$tiny" int64:-4 boolean:true
expect_error org.freedesktop.DBus.Error.InvalidArgs $MGR org.radaemon.ReadAhead1.Manager.GetDevice uint32:7
expect_error org.freedesktop.DBus.Error.InvalidArgs $MGR org.radaemon.ReadAhead1.Manager.ClearPin
expect_error org.freedesktop.DBus.Error.UnknownMethod $MGR org.radaemon.ReadAhead1.Manager.Explode
expect_error org.freedesktop.DBus.Error.UnknownObject "$MGR/device/sdzz" org.radaemon.ReadAhead1.Device.ClearPin
# And the same through busctl, as an administrator would type them.
for args in "sub $tiny 3 true" "ssb $tiny 64 true" "sb $tiny true" "subs $tiny 64 true extra"; do
	# shellcheck disable=SC2086 # args are meant to split
	if ra_busctl call org.radaemon.ReadAhead1 $MGR org.radaemon.ReadAhead1.Manager SetReadAhead $args 2>"$T/busctl.err"; then
		ra_fail "busctl SetReadAhead $args succeeded"
	fi
	grep -qE "multiple of 4|Invalid arguments" "$T/busctl.err" || ra_fail "busctl SetReadAhead $args: $(cat "$T/busctl.err")"
done
[[ $(ra_kb "$tiny") == "$before" ]] || ra_fail "a refused call changed $tiny"
kill -0 "$DAEMON_PID" || ra_fail "the daemon died on bad input"
"$RACONTROL" status >/dev/null || ra_fail "the daemon stopped answering after bad input"
ra_ok "bad input refused with the right errors; the daemon keeps running"

# Signals: a monitor sees a pin (PropertiesChanged), a new disk and a removal.
"$RACONTROL" monitor --json >"$T/monitor.json" 2>&1 &
monitor=$!
# It prints every device once it has subscribed: from then on nothing is missed.
ra_wait_for "grep -q '\"event\":\"present\",\"device\":\"$big\"' '$T/monitor.json'" ||
	ra_fail "the monitor did not show the present devices: $(cat "$T/monitor.json")"
"$RACONTROL" set "$tiny" 64 --runtime >/dev/null || ra_fail "set --runtime failed"
ra_new_loop extra 1M
extra=$LOOP
ra_config <<CONF
[daemon]
devices = $tiny $big $extra
state_dir = $T/state
CONF
kill -HUP "$DAEMON_PID"
ra_wait_for "grep -q '\"event\":\"added\",\"device\":\"$extra\"' '$T/monitor.json'" || ra_fail "no 'added' signal for $extra"
ra_remove_loop "$extra"
ra_wait_for "grep -q '\"event\":\"removed\",\"device\":\"$extra\"' '$T/monitor.json'" || ra_fail "no 'removed' signal for $extra"
kill "$monitor"
wait "$monitor" || ra_fail "racontrol monitor did not exit 0 on SIGTERM"
python3 - "$T/monitor.json" "$tiny" <<'PY' || ra_fail "monitor output is wrong: $(cat "$T/monitor.json")"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
pins = [e for e in events if e["event"] == "changed" and e["device"] == sys.argv[2]]
assert any(e["properties"].get("ReadAheadKB") == 64 and e["properties"].get("Source") == "pinned" for e in pins), pins
PY
ra_ok "PropertiesChanged, InterfacesAdded and InterfacesRemoved seen by racontrol monitor"

# Ten clients at once are all answered.
pids=()
for i in $(seq 10); do
	"$RACONTROL" status --json >"$T/status.$i" 2>&1 &
	pids+=($!)
done
for i in $(seq 10); do
	wait "${pids[$((i - 1))]}" || ra_fail "racontrol status $i of 10 failed: $(cat "$T/status.$i")"
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/status.$i" || ra_fail "status $i is not JSON"
done
ra_ok "ten racontrol status at once all answered"

ra_stop_daemon
