#!/bin/bash
# Names with control bytes: a FUSE file system, which any user may mount
# (fusermount3 is setuid), at a path holding a newline followed by a line of
# the daemon's own form at the emergency level, and an escape sequence that
# clears a terminal. The daemon's log and racontrol's output for people show
# them as \xNN, so neither forges a line nor reaches root's terminal raw;
# the bus and racontrol's JSON carry the name as it is.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
[[ -x $RA_BUILDDIR/tests/ra-testfs ]] || ra_skip "no tests/ra-testfs: configure found no libfuse3"
[[ -e /dev/fuse ]] || ra_skip_for_kernel fuse "no /dev/fuse"
ra_setup
ra_start_bus

forged='<0>FORGED radaemon: sda is failing'
name=$'fuse-x\n'"$forged"$'\e[2J\e[H'
fuse=$T/$name
mkdir "$fuse"
ra_new_loop disk 1M
ra_config <<CONF
[daemon]
devices = $LOOP
bdis = $T/fuse-x*
CONF
ra_start_daemon

"$RA_BUILDDIR/tests/ra-testfs" --files 1 --size-mib 1 --max-readahead-kb 64 "$fuse" -o "fsname=src"$'\r\e[31m' ||
	ra_fail "ra-testfs did not mount at $fuse"
RA_MOUNTS+=("$fuse")
bdi=$(mountpoint -d "$fuse")
ra_wait_for "'$RACONTROL' show $bdi >/dev/null 2>&1" || ra_fail "no object for $bdi: $("$RACONTROL" status 2>&1)"

# no_forgery FILE WHAT: no line of FILE is the forged one, and no ESC, CR or other C0 byte but newline is there.
no_forgery() {
	if grep -aqE '^(<0>)?FORGED' "$1"; then
		ra_fail "$2 has a forged line: $(grep -anE 'FORGED' "$1")"
	fi
	if LC_ALL=C grep -aqP '[\x00-\x09\x0b-\x1f\x7f]' "$1"; then
		ra_fail "$2 holds control bytes: $(od -c "$1" | grep -E '033|\\r' | head -3)"
	fi
}

ra_wait_log 'fuse-x\\x0a<0>FORGED'
no_forgery "$T/daemon.log" "the daemon's log"
ra_ok "the daemon's log shows the mount point as fuse-x\\x0a<0>FORGED...\\x1b[2J"

"$RACONTROL" status >"$T/status.txt" 2>&1 || ra_fail "racontrol status failed: $(cat "$T/status.txt")"
grep -qF 'fuse-x\x0a<0>FORGED radaemon: sda is failing\x1b[2J\x1b[H' "$T/status.txt" ||
	ra_fail "racontrol status does not show the escaped mount point: $(cat -A "$T/status.txt")"
no_forgery "$T/status.txt" "racontrol status"
"$RACONTROL" show "$bdi" >"$T/show.txt" 2>&1 || ra_fail "racontrol show $bdi failed: $(cat "$T/show.txt")"
grep -qF 'src\x0d\x1b[31m' "$T/show.txt" || ra_fail "racontrol show does not show the escaped source: $(cat -A "$T/show.txt")"
no_forgery "$T/show.txt" "racontrol show"
"$RACONTROL" show "$fuse" >"$T/show-path.txt" 2>&1 || ra_fail "racontrol show PATH failed: $(cat "$T/show-path.txt")"
no_forgery "$T/show-path.txt" "racontrol show PATH"
rc=0
timeout 2 "$RACONTROL" monitor >"$T/monitor.txt" 2>&1 || rc=$?
((rc == 124)) || ra_fail "racontrol monitor exited with $rc: $(cat "$T/monitor.txt")"
grep -q "$bdi" "$T/monitor.txt" || ra_fail "racontrol monitor did not show $bdi: $(cat "$T/monitor.txt")"
no_forgery "$T/monitor.txt" "racontrol monitor"
ra_ok "racontrol status, show and monitor show the names escaped"

"$RACONTROL" status --json >"$T/status.json" || ra_fail "racontrol status --json failed"
python3 - "$T/status.json" "$bdi" "$fuse" <<'PY' || ra_fail "racontrol status --json: $(cat "$T/status.json")"
import json, sys
status, bdi, fuse = sys.argv[1:]
devs = {d["name"]: d for d in json.load(open(status, encoding="utf-8"))["devices"]}
assert devs[bdi]["mount_point"] == fuse, devs[bdi]
PY
ra_ok "the bus and racontrol --json carry the mount point as it is"

umount "$fuse" || ra_fail "cannot unmount $fuse"
unset 'RA_MOUNTS[-1]'
ra_stop_daemon
