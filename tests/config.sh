#!/bin/bash
# A bad line costs its section at start, not the start (a daemon that does
# not start at boot tunes nothing): every bad line named with file:line, a
# [device:] section with an error left out while the others apply, and a
# bad [daemon] or [policy] line starts radaemon in observe mode, which writes
# nothing. At reload a bad configuration is refused and the old one kept; a
# good reload takes effect.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup

ra_new_loop tiny 505K
tiny=$LOOP
before=$(ra_kb "$tiny")

ra_new_loop other 64M
other=$LOOP
udevadm settle

# start_bad WHAT: radaemon on $T/bad.conf, running once it says Managing; it fails naming WHAT.
start_bad() {
	"$RADAEMON" --foreground --config "$T/bad.conf" >"$T/start.log" 2>&1 &
	DAEMON_PID=$!
	ra_wait_for "grep -q '^Managing' '$T/start.log'" || ra_fail "$1 kept radaemon from starting: $(cat "$T/start.log")"
}

# At start, a bad global line: every bad line named, and radaemon runs in observe mode.
cat >"$T/bad.conf" <<CONF
[daemon]
devices = $tiny $other
state_dir = $T/state
mode = sometimes
[policy]
max_kb = 5
calibrate = no
[swap]
manage = no
CONF
start_bad "a bad global line"
grep -qx "$T/bad.conf:4: mode must be 'auto' or 'observe', not 'sometimes'" "$T/start.log" ||
	ra_fail "no file:line error for line 4: $(cat "$T/start.log")"
grep -q "^$T/bad.conf:6: max_kb must be a multiple of 4" "$T/start.log" ||
	ra_fail "no file:line error for line 6: $(cat "$T/start.log")"
grep -q "radaemon starts in observe mode" "$T/start.log" || ra_fail "the log does not say it observes: $(cat "$T/start.log")"
[[ $(ra_kb "$tiny") == "$before" ]] || ra_fail "a start in observe mode changed $tiny"
ra_stop_daemon
ra_ok "a bad [daemon] and [policy] line: named with file:line, radaemon started in observe mode, $tiny untouched"

# A bad line in a [device:] section costs that section; the others apply.
cat >"$T/bad.conf" <<CONF
[daemon]
devices = $tiny $other
state_dir = $T/state
[policy]
calibrate = no
[swap]
manage = no
[device:$tiny]
read_ahead_kb = 5
[device:$other]
read_ahead_kb = 384
CONF
start_bad "a bad section"
grep -q "^$T/bad.conf:9: read_ahead_kb must be a multiple of 4" "$T/start.log" ||
	ra_fail "no file:line error for line 9: $(cat "$T/start.log")"
grep -q "^\[device:$tiny\]: left out, for the error in it" "$T/start.log" ||
	ra_fail "the log does not say the section is left out: $(cat "$T/start.log")"
ra_wait_kb "$other" 384
[[ $(ra_kb "$tiny") != 5 ]] || ra_fail "$tiny took the bad section's value"
ra_stop_daemon
ra_ok "a bad [device:$tiny] section left out, [device:$other] applied (384 KiB)"

# A missing --config file is an error too, not silent defaults.
rc=0
"$RADAEMON" --config "$T/missing.conf" >"$T/start.log" 2>&1 || rc=$?
((rc == 1)) || ra_fail "a missing config file gave status $rc, want 1"
grep -q "missing.conf: No such file or directory" "$T/start.log" ||
	ra_fail "a missing config file was not reported: $(cat "$T/start.log")"

# Usage errors are status 2.
rc=0
"$RADAEMON" --no-such-option >"$T/start.log" 2>&1 || rc=$?
((rc == 2)) || ra_fail "an unknown option gave status $rc, want 2"
ra_ok "missing file and bad options refused"

# Reload: a pin from the config, then a bad file that must not undo it.
ra_config <<CONF
[daemon]
devices = $tiny
CONF
ra_start_daemon
ra_wait_kb "$tiny" 4

ra_config <<CONF
[daemon]
devices = $tiny
[device:$tiny]
read_ahead_kb = 256
CONF
kill -HUP "$DAEMON_PID"
ra_wait_kb "$tiny" 256
ra_daemon_log_has "^$tiny: read_ahead_kb 4 -> 256 KiB \(config, on reload\)" || ra_fail "reload not logged"
ra_ok "good reload applied"

ra_config <<CONF
[daemon]
devices = $tiny
interval_ms = often
CONF
kill -HUP "$DAEMON_PID"
ra_wait_log "keeping the previous configuration"
ra_daemon_log_has "^$T/radaemon.conf:3: interval_ms must be" || ra_fail "bad reload without file:line"
echo change >"/sys/block/$tiny/uevent"
ra_wait_log "^$tiny: change event"
[[ $(ra_kb "$tiny") == 256 ]] || ra_fail "the old config was not kept: $(ra_kb "$tiny") KiB"
kill -0 "$DAEMON_PID" || ra_fail "the daemon died on a bad reload"
ra_ok "bad reload refused, old config kept"

ra_stop_daemon
