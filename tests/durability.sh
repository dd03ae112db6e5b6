#!/bin/bash
# No acknowledged pin is lost: the daemon is killed with SIGKILL at random
# moments while a client pins values as fast as it can, and every time it
# comes back with each device's last acknowledged pin (or a call that
# was in flight at one of the kills since) and a state file that parses,
# readable by root only, without what the killed saves left behind.
# And a disk's original that cannot be saved (a read-only or full state
# directory) stops radaemon's first write to it, rather than being lost.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus

devices=()
for i in 1 2 3; do
	ra_new_loop "d$i" 64M
	devices+=("$LOOP")
done
udevadm settle
ra_config <<CONF
[daemon]
devices = ${devices[*]}
state_dir = $T/state
CONF

# pinner: pins random values to random devices; logs each call before it is
# made ("sent") and after it is acknowledged ("acked"), and why a call failed.
# Stopped with SIGTERM, it ends after the call it is making and its log line,
# so that no call of a killed pinner lands on the next daemon and no
# acknowledgement goes unrecorded.
pinner() {
	local dev kb stop=0
	trap 'stop=1' TERM
	while ((!stop)); do
		dev=${devices[RANDOM % ${#devices[@]}]}
		kb=$(((RANDOM % 2048 + 2) * 4))
		echo "$dev $kb" >>"$T/sent"
		if "$RACONTROL" set "$dev" "$kb" >/dev/null 2>>"$T/errors"; then
			echo "$dev $kb" >>"$T/acked"
		fi
	done
}

touch "$T/sent" "$T/acked" "$T/errors"
ra_start_daemon
rounds=15
for round in $(seq "$rounds"); do
	pinner &
	pinner_pid=$!
	ms=$(((RANDOM % 500) * RA_SLOWDOWN))
	sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null || true
	DAEMON_PID=
	kill "$pinner_pid"
	wait "$pinner_pid" 2>/dev/null || true

	# What a crash during a save leaves, and a file an earlier release wrote 0644.
	: >"$T/state/.state.Crash1"
	if [[ -e $T/state/state ]]; then
		chmod 0644 "$T/state/state"
	fi
	ra_start_daemon
	if ra_daemon_log_has "/state: line [0-9]+: |that line is skipped|Cannot read $T/state"; then
		ra_fail "round $round: the state file did not parse"
	fi
	[[ ! -e $T/state/.state.Crash1 ]] || ra_fail "round $round: the temporary file of a crashed save stays"
	if [[ -e $T/state/state && $(stat -c %a "$T/state/state") != 600 ]]; then
		ra_fail "round $round: the state file is $(stat -c %a "$T/state/state"), not 600"
	fi
	for dev in "${devices[@]}"; do
		acked=$(awk -v d="$dev" '$1 == d { v = $2 } END { print v }' "$T/acked")
		[[ -n $acked ]] || continue
		# Every call since the last acknowledged one failed, but each round's
		# call in flight at its kill may have been stored first, and nothing
		# after it (the daemon was gone) replaced it: any of them may be there.
		unacked=$(awk -v d="$dev" -v a="$acked" '$1 == d { v[++n] = $2 } END {
			for (i = n; i > 0 && v[i] != a; i--) printf " %s", v[i] }' "$T/sent")
		now=$("$RACONTROL" show "$dev" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["source"], d["target_kb"])')
		[[ $now == "pinned $acked" || ($now == pinned\ * && " $unacked " == *" ${now#pinned } "*) ]] ||
			ra_fail "round $round: $dev is '$now', the last acknowledged pin was $acked" \
				"(unacknowledged since:${unacked:- none}; racontrol said: $(tail -n 3 "$T/errors" | tr '\n' ' '))"
	done
done
n=$(wc -l <"$T/acked")
((n > rounds)) || ra_fail "only $n pins were acknowledged in $rounds rounds: the test did not test much"
ra_ok "$rounds SIGKILLs during $n acknowledged pins: none lost, the state file always parsed, 0600, no temporary file left"
ra_stop_daemon

# The original must be on disk before radaemon's first write: with a state
# directory that is read-only, then full, the new disk keeps its value, the
# log says why (once), StateError says what failed; once the directory can
# be written, the next decision writes, with the original saved first.
unsaved_original() {
	local kind=$1 dir=$T/unsaved want tiny orig error
	ra_new_loop "unsaved-$kind" 505K
	tiny=$LOOP
	udevadm settle
	orig=$(ra_kb "$tiny")
	rm -rf "$dir"
	mkdir "$dir"
	if [[ $kind == read-only ]]; then
		mount --bind "$dir" "$dir"
		RA_MOUNTS+=("$dir")
		mount -o remount,ro,bind "$dir"
		want="Read-only file system"
	else
		mount -t tmpfs -o size=4k tmpfs "$dir"
		RA_MOUNTS+=("$dir")
		dd if=/dev/zero of="$dir/filler" bs=4k count=1 status=none 2>/dev/null || true
		want="No space left on device"
	fi
	ra_config <<CONF
[daemon]
devices = $tiny
state_dir = $dir
CONF
	ra_start_daemon
	ra_wait_log "^$tiny: not writing 4 KiB to read_ahead_kb: the original values cannot be saved first \\($want\\); it keeps $orig KiB"
	[[ $(ra_kb "$tiny") == "$orig" ]] || ra_fail "$kind: $tiny was written ($(ra_kb "$tiny") KiB) before its original was saved"
	error=$("$RACONTROL" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state_error"])')
	[[ $error == "Cannot write $dir/state: $want" ]] || ra_fail "$kind: StateError is '$error'"
	echo change >"/sys/block/$tiny/uevent"
	ra_wait_for "[[ \$(grep -c '^$tiny: change event' '$T/daemon.log') -ge 1 ]]" || ra_fail "$kind: no change event"
	udevadm settle
	[[ $(ra_kb "$tiny") == "$orig" ]] || ra_fail "$kind: $tiny was written at the next decision"
	[[ $(grep -c "^$tiny: not writing" "$T/daemon.log") == 1 ]] || ra_fail "$kind: not logged exactly once"
	ra_undo_mounts
	echo change >"/sys/block/$tiny/uevent"
	ra_wait_kb "$tiny" 4
	grep -q "^device loop:$T/unsaved-$kind.img original=$orig$" "$dir/state" ||
		ra_fail "$kind: the original is not in the state file: $(cat "$dir/state")"
	ra_stop_daemon
	ra_ok "a $kind state directory: $tiny kept $orig KiB until its original was saved, then 4 KiB"
}
unsaved_original read-only
unsaved_original full
