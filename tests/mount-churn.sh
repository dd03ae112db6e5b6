#!/bin/bash
# What a user mounts costs them, not everyone (issue 47, item 5): an
# unprivileged user holds more FUSE mounts than radaemon manages of one
# user's, then mounts and unmounts as fast as fusermount3 goes at names with
# a newline, an ESC and 3,800 bytes. radaemon manages 64 of theirs, says at
# most RA_USER_LOG_BURST lines a minute about them and how many it left out,
# and root's disk is tuned and logged meanwhile as ever. Its CPU and memory
# are printed, not judged: a timed test asserts no number.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus
ra_new_loop a 64M

ra_user_dir churn 15
mkdir "$U/held"
odd=("$U/m"$'\n'"<0>radaemon: forged" "$U/m"$'\e[2J' "$LONG/m")
for m in "${odd[@]}"; do
	mkdir "$m"
done
held=70
for i in $(seq -w 1 $held); do
	mkdir "$U/held/m$i"
done
ra_user_dir_give

ra_config <<CONF
[daemon]
devices = $LOOP
bdis = $U/*
state_dir = $T/state
CONF
# As ra_start_daemon, its stderr taken for the journal: each line has its level ("<6>").
: >"$T/daemon.log"
stream=$(stat -c '%d:%i' "$T/daemon.log")
JOURNAL_STREAM=$stream "$VALGRIND_RUN" "$RADAEMON" --debug --config "$T/radaemon.conf" >>"$T/daemon.log" 2>&1 &
DAEMON_PID=$!
ra_wait_for "grep -q '^<6>Managing' '$T/daemon.log'" || ra_fail "the daemon did not start: $(cat "$T/daemon.log")"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat"; }
info_lines() { grep -c '^<[0-6]>' "$T/daemon.log" || true; }
bdis_managed() {
	"$RACONTROL" status --json | python3 -c "
import json, sys
print(sum(1 for d in json.load(sys.stdin)['devices'] if d.get('kind') == 'bdi'))"
}

# --- held at once: more than radaemon manages of one user's ----------------------------------
for i in $(seq -w 1 $held); do
	ra_as_nobody "$RA_BUILDDIR/tests/ra-testfs" --files 1 --size-mib 1 "$U/held/m$i" ||
		ra_fail "nobody cannot mount ra-testfs at $U/held/m$i"
done
ra_wait_for "ra_daemon_log_has 'has 64 FUSE mounts managed'" || ra_fail "no word of the per-user cap: $(tail "$T/daemon.log")"
sleep 1
n=$(bdis_managed)
((n == 64)) || ra_fail "radaemon manages $n of nobody's $held mounts, not 64"
n=$(grep -c 'has 64 FUSE mounts managed' "$T/daemon.log") || true
((n == 1)) || ra_fail "the cap was told $n times, not once"
ra_ok "nobody holds $held FUSE mounts: radaemon manages 64, and said so once"
# One of the 64 unmounted: one of those left over is managed in its place.
ra_as_nobody fusermount3 -u "$U/held/m01" || ra_fail "nobody cannot unmount $U/held/m01"
ra_wait_for "[[ \$(bdis_managed) == 64 ]] && ! grep -q ' $U/held/m01 ' /proc/self/mountinfo" ||
	ra_fail "after an unmount at the cap radaemon manages $(bdis_managed) of nobody's mounts, not 64"
for i in $(seq -w 2 $held); do
	ra_as_nobody fusermount3 -u "$U/held/m$i" || ra_fail "nobody cannot unmount $U/held/m$i"
done
ra_wait_for "[[ \$(bdis_managed) == 0 ]]" || ra_fail "nobody's mounts are still managed after their unmount"

# --- churn -----------------------------------------------------------------------------------
lines0=$(info_lines)
ticks0=$(cpu_ticks)
start=$SECONDS
cycles=0
while ((SECONDS - start < 20)); do
	for m in "${odd[@]}"; do
		ra_as_nobody "$RA_BUILDDIR/tests/ra-testfs" --files 1 --size-mib 1 "$m" || ra_fail "nobody cannot mount at $m"
		ra_as_nobody fusermount3 -u "$m" || ra_fail "nobody cannot unmount $m"
		cycles=$((cycles + 1))
	done
	# Root's disk meanwhile: a pin is applied and said as ever.
	if ((cycles == 30)); then
		"$RACONTROL" set "$LOOP" 256 >/dev/null || ra_fail "racontrol set $LOOP 256 during the churn"
	fi
done
took=$((SECONDS - start))
ra_wait_for "[[ \$(bdis_managed) == 0 ]]" || ra_fail "a churned mount is still managed after its unmount"
ticks=$(($(cpu_ticks) - ticks0))
lines=$(($(info_lines) - lines0))
hz=$(getconf CLK_TCK)
cpu_pct=$((ticks * 100 / hz / took))
ra_log "churn: $cycles mounts and unmounts in $took s; radaemon used $((ticks * 1000 / hz)) ms of CPU" \
	"($cpu_pct % of one), logged $lines lines at info or above, peak RSS" \
	"$(awk '/^VmHWM:/ { print $2 }' "/proc/$DAEMON_PID/status") KiB"

[[ $(ra_kb "$LOOP") == 256 ]] || ra_fail "$LOOP holds $(ra_kb "$LOOP") KiB, not its pin's 256"
grep -q "^<6>$LOOP: read_ahead_kb [0-9]* -> 256 KiB (pinned" "$T/daemon.log" ||
	ra_fail "root's pin of $LOOP was not said at info level: $(grep "$LOOP" "$T/daemon.log")"
# Two windows at most in 20 s of churn: a budget each, and one line each for what was left out.
((lines <= 2 * 30 + 4)) || ra_fail "$lines lines at info level for nobody's churn of $cycles mounts"
RA_TIMEOUT=70 ra_wait_for "ra_daemon_log_has '^<6>[0-9]+ lines about the FUSE mounts of uid 65534 were left out'" ||
	ra_fail "what was left out of the log was not said"
ra_stop_daemon
ra_log "state: $(wc -c <"$T/state/state") bytes"
ra_ok "nobody's churn of $cycles mounts: $lines lines at info level ($cpu_pct % of a CPU), root's pin said"
