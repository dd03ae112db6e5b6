#!/bin/bash
# In observe mode (--observe, or mode = observe) the daemon decides and
# reports, and writes nothing.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup

ra_new_loop tiny 505K
tiny=$LOOP
before=$(ra_kb "$tiny")
((before != 4)) || ra_fail "the test needs a starting value other than 4 KiB"

ra_config <<CONF
[daemon]
devices = $tiny
CONF
ra_start_daemon --observe
ra_daemon_log_has "in observe mode: nothing is written" || ra_fail "observe mode not announced"
ra_daemon_log_has "^$tiny: would change read_ahead_kb $before -> 4 KiB" || ra_fail "no decision reported"
echo change >"/sys/block/$tiny/uevent"
ra_wait_log "^$tiny: change event"
[[ $(ra_kb "$tiny") == "$before" ]] || ra_fail "--observe wrote $(ra_kb "$tiny") KiB"
ra_stop_daemon
ra_ok "--observe writes nothing"

ra_config <<CONF
[daemon]
devices = $tiny
mode = observe
CONF
ra_start_daemon
ra_daemon_log_has "^$tiny: would change read_ahead_kb $before -> 4 KiB" || ra_fail "no decision reported"
[[ $(ra_kb "$tiny") == "$before" ]] || ra_fail "mode = observe wrote $(ra_kb "$tiny") KiB"
ra_stop_daemon
ra_ok "mode = observe writes nothing"
