#!/bin/bash
# The value each device had before radaemon is stored before radaemon first
# writes, so it can be put back: by racontrol restore (then radaemon only
# observes, until a reload), after a crash, and at exit with
# restore_on_exit = yes.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus

ra_new_loop tiny 505K
tiny=$LOOP
ra_new_loop big 64G
big=$LOOP
udevadm settle
echo 1024 >"/sys/block/$big/queue/read_ahead_kb"
orig_tiny=$(ra_kb "$tiny")
orig_big=$(ra_kb "$big")
ra_config <<CONF
[daemon]
devices = $tiny $big
state_dir = $T/state
CONF
ra_start_daemon
[[ $(ra_kb "$tiny") != "$orig_tiny" ]] || ra_fail "the test needs radaemon to change $tiny"
grep -q "^device loop:$T/tiny.img original=$orig_tiny$" "$T/state/state" || ra_fail "no original for $tiny: $(cat "$T/state/state")"
grep -q "^device loop:$T/big.img original=$orig_big$" "$T/state/state" || ra_fail "no original for $big"
ra_ok "originals stored before the first write: $tiny $orig_tiny KiB, $big $orig_big KiB"

# racontrol restore: back to the originals, then observe.
out=$("$RACONTROL" restore) || ra_fail "racontrol restore failed: $out"
[[ $out == "Put 2 disks back to their values before radaemon;"* ]] || ra_fail "restore said: $out"
[[ $(ra_kb "$tiny") == "$orig_tiny" && $(ra_kb "$big") == "$orig_big" ]] || ra_fail "restore did not put the originals back"
[[ $("$RACONTROL" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["mode"])') == observe ]] ||
	ra_fail "radaemon does not observe after restore"
echo change >"/sys/block/$tiny/uevent"
ra_wait_log "^$tiny: change event"
[[ $(ra_kb "$tiny") == "$orig_tiny" ]] || ra_fail "radaemon wrote $tiny again after restore"
"$RACONTROL" reload >/dev/null
ra_wait_kb "$tiny" 4
ra_ok "restore puts the originals back and observes until a reload"

# A crash loses nothing: the originals are on disk.
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
DAEMON_PID=
ra_start_daemon
"$RACONTROL" restore >/dev/null || ra_fail "restore after a crash failed"
[[ $(ra_kb "$tiny") == "$orig_tiny" && $(ra_kb "$big") == "$orig_big" ]] || ra_fail "the originals were lost in the crash"
ra_ok "after SIGKILL, restore still knows the originals"

# Restored stays restored, also across a restart, until a reload.
ra_stop_daemon
ra_start_daemon
[[ $(ra_kb "$tiny") == "$orig_tiny" ]] || ra_fail "a restart after restore wrote $tiny again"
"$RACONTROL" reload >/dev/null
ra_wait_kb "$tiny" 4
ra_ok "restored survives a restart; a reload ends it"
ra_stop_daemon

# restore_on_exit = yes: SIGTERM puts them back.
ra_config <<CONF
[daemon]
devices = $tiny $big
state_dir = $T/state
restore_on_exit = yes
CONF
ra_start_daemon
[[ $(ra_kb "$tiny") == 4 ]] || ra_fail "$tiny not tuned"
ra_stop_daemon TERM
[[ $(ra_kb "$tiny") == "$orig_tiny" && $(ra_kb "$big") == "$orig_big" ]] || ra_fail "restore_on_exit did not put the originals back"
ra_daemon_log_has "Put 2 disks back to their values before radaemon \(restore_on_exit\)" || ra_fail "restore_on_exit not logged"
ra_ok "restore_on_exit puts the originals back at exit"
