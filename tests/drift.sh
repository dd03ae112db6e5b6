#!/bin/bash
# read_ahead_kb changed behind radaemon's back (no uevent) is noticed within
# one sampling interval: with external_changes = yield radaemon leaves it and
# reports Source=external until the device changes; with reassert it writes
# its value again, but gives in to someone who keeps changing it.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus

ra_new_loop tiny 505K
tiny=$LOOP
udevadm settle
ra_config <<CONF
[daemon]
devices = $tiny
interval_ms = 200
state_dir = $T/state
CONF
ra_start_daemon
[[ $(ra_kb "$tiny") == 4 ]] || ra_fail "$tiny not tuned to 4 KiB"

source_of() { "$RACONTROL" show "$tiny" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["source"])'; }
source_is_external() { [[ $(source_of) == external ]]; }
source_is_prior() { [[ $(source_of) == prior ]]; }

# yield (the default)
echo 768 >"/sys/block/$tiny/queue/read_ahead_kb"
ra_wait_for source_is_external || ra_fail "the external change was not noticed"
ra_daemon_log_has "^$tiny: read_ahead_kb went from 4 to 768 KiB behind radaemon's back; leaving it \(external_changes = yield\)\.$" ||
	ra_fail "no log line for the external change"
sleep 0.6
[[ $(ra_kb "$tiny") == 768 ]] || ra_fail "radaemon did not yield: $(ra_kb "$tiny") KiB"
[[ $(grep -c "behind radaemon's back" "$T/daemon.log") == 1 ]] || ra_fail "the external change was logged more than once"
ra_ok "yield: Source=external, the value left at 768 KiB, one log line"

# A uevent means the kernel re-read the device: radaemon's value applies again.
echo change >"/sys/block/$tiny/uevent"
ra_wait_kb "$tiny" 4
ra_wait_for source_is_prior || ra_fail "the source did not go back to prior"
ra_ok "a change event ends the yielding"

# reassert
ra_config <<CONF
[daemon]
devices = $tiny
interval_ms = 200
state_dir = $T/state
[policy]
external_changes = reassert
CONF
kill -HUP "$DAEMON_PID"
ra_wait_log "Configuration reloaded"
for _ in 1 2 3; do
	echo 768 >"/sys/block/$tiny/queue/read_ahead_kb"
	ra_wait_kb "$tiny" 4
done
[[ $(grep -c "writing 4 KiB again (external_changes = reassert)" "$T/daemon.log") == 3 ]] ||
	ra_fail "expected three logged reasserts"
ra_ok "reassert: written back within an interval, each time logged"

# A fourth change within the minute: radaemon stops fighting.
echo 768 >"/sys/block/$tiny/queue/read_ahead_kb"
ra_wait_log "changed behind radaemon's back 4 times within a minute; leaving it at 768 KiB"
sleep 0.6
[[ $(ra_kb "$tiny") == 768 && $(source_of) == external ]] || ra_fail "radaemon kept fighting"
ra_ok "someone who keeps changing it is left to it"
ra_stop_daemon
