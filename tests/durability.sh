#!/bin/bash
# No acknowledged pin is lost: the daemon is killed with SIGKILL at random
# moments while a client pins values as fast as it can, and every time it
# comes back with each device's last acknowledged pin (or a call that
# was in flight at one of the kills since) and a state file that parses,
# readable by root only, without what the killed saves left behind.
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
