#!/bin/bash
# A bad configuration is refused with file:line at start; at reload it is
# refused and the old one kept; a good reload takes effect.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup

ra_new_loop tiny 505K
tiny=$LOOP
before=$(ra_kb "$tiny")

# At start: refused, with every bad line named, and exit status 1.
cat >"$T/bad.conf" <<CONF
[daemon]
devices = $tiny
mode = sometimes
[policy]
max_kb = 5
CONF
rc=0
"$RADAEMON" --foreground --config "$T/bad.conf" >"$T/start.log" 2>&1 || rc=$?
((rc == 1)) || ra_fail "a bad config gave exit status $rc, want 1"
grep -qx "$T/bad.conf:3: mode must be 'auto' or 'observe', not 'sometimes'" "$T/start.log" ||
	ra_fail "no file:line error for line 3: $(cat "$T/start.log")"
grep -q "^$T/bad.conf:5: max_kb must be a multiple of 4" "$T/start.log" ||
	ra_fail "no file:line error for line 5: $(cat "$T/start.log")"
[[ $(ra_kb "$tiny") == "$before" ]] || ra_fail "a refused start changed $tiny"
ra_ok "bad config refused at start with file:line"

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
