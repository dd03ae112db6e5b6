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
# Its udev helper reads the configuration, which says nothing of --observe:
# the state directory tells it, while the daemon runs.
[[ -e $T/state/observing ]] || ra_fail "--observe left no word for the udev helper in $T/state"
rc=0
env -i ACTION=change DEVTYPE=disk "$RA_BUILDDIR/udev/radaemon-udev" --config "$T/radaemon.conf" "$tiny" \
	>"$T/out" 2>"$T/err" || rc=$?
((rc == 0)) || ra_fail "the udev helper under --observe: exit status $rc: $(cat "$T/err")"
[[ $(ra_kb "$tiny") == "$before" ]] || ra_fail "the udev helper under --observe wrote $(ra_kb "$tiny") KiB"
grep -q "observe mode" "$T/err" || ra_fail "the udev helper says nothing of observe mode: $(cat "$T/err")"
ra_stop_daemon
[[ ! -e $T/state/observing ]] || ra_fail "$T/state/observing outlived the daemon"
ra_ok "--observe writes nothing, nor does its udev helper"

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
