#!/bin/bash
# Only the disks in devices= and not in ignore= are touched: at start, on
# udev events, and after a reload that narrows the list.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup

ra_new_loop managed 505K
managed=$LOOP
ra_new_loop outside 505K
outside=$LOOP
ra_new_loop ignored 505K
ignored=$LOOP
before_outside=$(ra_kb "$outside")
before_ignored=$(ra_kb "$ignored")

ra_config <<CONF
[daemon]
devices = $managed $ignored
ignore = $ignored
CONF
ra_start_daemon
ra_wait_kb "$managed" 4

# Events for the others are seen and dropped.
echo change >"/sys/block/$outside/uevent"
echo change >"/sys/block/$ignored/uevent"
echo change >"/sys/block/$managed/uevent"
udevadm settle
ra_wait_log "^$managed: change event"
[[ $(ra_kb "$outside") == "$before_outside" ]] || ra_fail "$outside (not in devices=) was changed"
[[ $(ra_kb "$ignored") == "$before_ignored" ]] || ra_fail "$ignored (in ignore=) was changed"
if ra_daemon_log_has "^($outside|$ignored): read_ahead_kb"; then
	ra_fail "a disk outside the allow-list was written"
fi
ra_ok "$outside and $ignored untouched at start and on change"

# A reload that drops the managed disk: it is forgotten, and left as it is.
ra_config <<CONF
[daemon]
devices = $outside
ignore = $outside
CONF
kill -HUP "$DAEMON_PID"
ra_wait_log "^$managed: no longer managed"
echo 128 >"/sys/block/$managed/queue/read_ahead_kb"
echo change >"/sys/block/$managed/uevent"
udevadm settle
ra_wait_log "^$managed: change event"
[[ $(ra_kb "$managed") == 128 ]] || ra_fail "$managed was written after leaving the allow-list"
ra_ok "a disk leaving the allow-list is no longer touched"

ra_stop_daemon
