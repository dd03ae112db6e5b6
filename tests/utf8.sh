#!/bin/bash
# Names that are not UTF-8: a loop device whose backing file's name has the
# bytes 0xff 0xfe, and a FUSE file system mounted at such a path from such a
# source. D-Bus takes only valid UTF-8, so the daemon escapes the bytes as
# \xNN (as systemd does) and every client keeps working: GetManagedObjects,
# racontrol status, show and monitor all answer and show the escaped names,
# and the daemon's log stays UTF-8 too.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
[[ -x $RA_BUILDDIR/tests/ra-testfs ]] || ra_skip "no tests/ra-testfs: configure found no libfuse3"
[[ -e /dev/fuse ]] || ra_skip_for_kernel fuse "no /dev/fuse"
ra_setup
ra_start_bus

bad=$'\xff\xfe'
escaped='\xff\xfe'
ra_new_loop "file$bad" 1M
loop=$LOOP
fuse=$T/fuse$bad
mkdir "$fuse"
udevadm settle
ra_config <<CONF
[daemon]
devices = $loop
bdis = $fuse
state_dir = $T/state
CONF
ra_start_daemon

"$RA_BUILDDIR/tests/ra-testfs" --files 1 --size-mib 1 --max-readahead-kb 64 "$fuse" -o "fsname=src$bad" ||
	ra_fail "ra-testfs did not mount at $fuse"
RA_MOUNTS+=("$fuse")
bdi=$(mountpoint -d "$fuse")
ra_wait_for "'$RACONTROL' show $bdi >/dev/null 2>&1" || ra_fail "no object for $bdi: $("$RACONTROL" status 2>&1)"

# Every object at once, as any D-Bus client asks: one bad name used to fail it for all.
ra_busctl --json=short call org.radaemon.ReadAhead1 /org/radaemon/ReadAhead1 \
	org.freedesktop.DBus.ObjectManager GetManagedObjects >"$T/objects.json" 2>"$T/objects.err" ||
	ra_fail "GetManagedObjects failed: $(cat "$T/objects.err")"
python3 - "$T/objects.json" "$loop" "$bdi" "$T" "$escaped" <<'PY' || ra_fail "GetManagedObjects: $(cat "$T/objects.json")"
import json, sys
path, loop, bdi, tmp, esc = sys.argv[1:]
objects = json.load(open(path))["data"][0]
devs = {}
for ifaces in objects.values():
    props = ifaces.get("org.radaemon.ReadAhead1.Device")
    if props:
        devs[props["Name"]["data"]] = {k: v["data"] for k, v in props.items()}
assert devs[loop]["Identity"] == f"loop:{tmp}/file{esc}.img", devs[loop]["Identity"]
assert devs[bdi]["MountPoint"] == f"{tmp}/fuse{esc}", devs[bdi]["MountPoint"]
assert devs[bdi]["Identity"] == f"fuse:fuse.ra-testfs:src{esc}@{tmp}/fuse{esc}", devs[bdi]["Identity"]
PY
ra_ok "GetManagedObjects answers, with the bytes escaped as $escaped"

"$RACONTROL" status >"$T/status.txt" 2>&1 || ra_fail "racontrol status failed: $(cat "$T/status.txt")"
for dev in "$loop" "$bdi"; do
	grep -q "^$dev " "$T/status.txt" || ra_fail "racontrol status lacks $dev: $(cat "$T/status.txt")"
done
"$RACONTROL" status --json >"$T/status.json" || ra_fail "racontrol status --json failed"
"$RACONTROL" show "$bdi" >"$T/show.txt" || ra_fail "racontrol show $bdi failed"
grep -qF "$T/fuse$escaped" "$T/show.txt" || ra_fail "racontrol show $bdi: $(cat "$T/show.txt")"
"$RACONTROL" show "$loop" --json >"$T/show.json" || ra_fail "racontrol show $loop --json failed"
python3 - "$T/status.json" "$T/show.json" "$loop" "$bdi" "$T" "$escaped" <<'PY' ||
import json, sys
status, show, loop, bdi, tmp, esc = sys.argv[1:]
devs = {d["name"]: d for d in json.load(open(status, encoding="utf-8"))["devices"]}
assert devs[bdi]["mount_point"] == f"{tmp}/fuse{esc}", devs[bdi]
assert devs[loop]["identity"] == f"loop:{tmp}/file{esc}.img", devs[loop]
assert json.load(open(show, encoding="utf-8"))["identity"] == devs[loop]["identity"]
PY
	ra_fail "racontrol status --json: $(cat "$T/status.json")"
ra_ok "racontrol status and show print both, escaped"

# The monitor lists the present devices once it has subscribed, then signals.
"$RACONTROL" monitor --json >"$T/monitor.json" 2>&1 &
monitor=$!
ra_wait_for "grep -q '\"event\":\"present\",\"device\":\"$bdi\"' '$T/monitor.json'" ||
	ra_fail "the monitor did not show $bdi: $(cat "$T/monitor.json")"
"$RACONTROL" set "$bdi" 128 --runtime >/dev/null || ra_fail "racontrol set $bdi 128 failed"
ra_wait_for "grep -q '\"event\":\"changed\",\"device\":\"$bdi\"' '$T/monitor.json'" ||
	ra_fail "the monitor saw no change of $bdi: $(cat "$T/monitor.json")"
kill "$monitor"
wait "$monitor" || ra_fail "racontrol monitor did not exit 0 on SIGTERM: $(cat "$T/monitor.json")"
python3 - "$T/monitor.json" <<'PY' || ra_fail "racontrol monitor --json: $(cat "$T/monitor.json")"
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    json.loads(line)
PY
rc=0
timeout 2 "$RACONTROL" monitor >"$T/monitor.txt" 2>&1 || rc=$?
((rc == 124)) || ra_fail "racontrol monitor exited with $rc: $(cat "$T/monitor.txt")"
grep -q "$bdi" "$T/monitor.txt" || ra_fail "racontrol monitor did not show $bdi: $(cat "$T/monitor.txt")"
ra_ok "racontrol monitor shows them and their changes"

# The log is UTF-8 too, and names the mount point as the bus does.
ra_wait_log "fuse\\\\xff\\\\xfe"
python3 -c 'import sys; open(sys.argv[1], encoding="utf-8").read()' "$T/daemon.log" ||
	ra_fail "the daemon's log is not UTF-8"
ra_ok "the daemon's log is UTF-8 and shows $escaped"

umount "$fuse" || ra_fail "cannot unmount $fuse"
unset 'RA_MOUNTS[-1]'
ra_stop_daemon
