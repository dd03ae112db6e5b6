#!/bin/bash
# A quiet start: on a machine with 100 loop devices without a file (snap-based
# systems have dozens) and three disks, radaemon's start fits on one screen.
# The empty devices are summed up in one line instead of one line each, and a
# device's own lines start when it gets a medium.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup

EMPTY=100
# The most a start may say here: the three decisions, the summary, the
# "Managing" line and what a machine without tracefs or swap adds, with room.
MAX_LINES=25

ra_new_loop tiny 505K
tiny=$LOOP
ra_new_loop big 64G
big=$LOOP
ra_new_loop mid 1G
mid=$LOOP
devices="$tiny $big $mid"

index=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused 1000)
empty=()
for ((i = 0; i < EMPTY; i++)); do
	index=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused "$index")
	RA_LOOPS+=("$index")
	python3 "$RA_SRCDIR/tests/loopdev.py" add "$index"
	empty+=("loop$index")
	# Ten to a line: the configuration's lines are short; indented ones continue the list.
	((i % 10 == 0)) && devices+=$'\n\t'
	devices+=" loop$index"
	index=$((index + 1))
done
# Every "add" handled before the start: the start's log is the subject here.
udevadm settle
for dev in "${empty[@]}"; do
	[[ $(cat "/sys/block/$dev/size") == 0 ]] || ra_fail "$dev has a medium; the test needs it empty"
done

ra_config <<CONF
[daemon]
devices = $devices
state_dir = $T/state
CONF

# As an administrator starts it: no --debug, so the log is what the journal gets.
: >"$T/daemon.log"
"$VALGRIND_RUN" "$RADAEMON" --foreground --config "$T/radaemon.conf" >>"$T/daemon.log" 2>&1 &
DAEMON_PID=$!
ra_wait_for "grep -q '^Managing' '$T/daemon.log'" || ra_fail "the daemon did not start"
# Whatever a start says just after "Managing" belongs to it too.
sleep 1
cp "$T/daemon.log" "$T/start.log"
echo "--- the start's log:"
cat "$T/start.log"
echo "---"

lines=$(wc -l <"$T/start.log")
((lines <= MAX_LINES)) || ra_fail "the start wrote $lines lines, more than a screen ($MAX_LINES)"
ra_ok "the start wrote $lines lines"

if grep -qE '^loop[0-9]+: No medium' "$T/start.log"; then
	ra_fail "an empty device has a line of its own: $(grep -cE '^loop[0-9]+: No medium' "$T/start.log") of them"
fi
summary=$(grep -E "^[0-9]+ devices? ha(s|ve) no medium" "$T/start.log") ||
	ra_fail "no line sums up the devices without a medium"
[[ $(wc -l <<<"$summary") == 1 ]] || ra_fail "more than one summary line: $summary"
[[ $summary =~ ^$EMPTY\ devices\ have\ no\ medium\ \(.+\)\;\ they\ are\ tuned\ when\ one\ arrives\.$ ]] ||
	ra_fail "the summary does not count the $EMPTY empty devices: $summary"
ra_ok "one summary line: $summary"
for dev in $tiny $big $mid; do
	grep -qE "^$dev: read_ahead_kb " "$T/start.log" || ra_fail "$dev's decision is not in the start's log"
done
ra_ok "the three disks' decisions are there"

# A device's own lines start when it has a medium.
first=${empty[0]}
truncate -s 1G "$T/late.img"
losetup "/dev/$first" "$T/late.img"
ra_wait_log "^$first: read_ahead_kb [0-9]+ -> [0-9]+ KiB \(prior, on change\)"
ra_ok "$first is tuned once a file is attached: $(grep -E "^$first: read_ahead_kb" "$T/daemon.log")"

ra_stop_daemon
