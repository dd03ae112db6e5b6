#!/bin/bash
# What radaemon.service relies on, with systemd's side played by this test:
# READY=1 once the disks are tuned, STATUS=, RELOADING=1 and READY=1 around
# a SIGHUP, STOPPING=1 at the end; WATCHDOG=1 from the event loop, never
# further apart than WATCHDOG_USEC; "<N>" priority prefixes when stderr is
# the journal (JOURNAL_STREAM).
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup

ra_new_loop tiny 505K
tiny=$LOOP
udevadm settle
ra_config <<CONF
[daemon]
devices = $tiny
state_dir = $T/state
CONF

# A notify socket that logs each message as one line: "SECONDS MESSAGE".
python3 - "$T/notify.sock" "$T/notify.log" <<'PY' &
import socket, sys, time
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        msg = sock.recv(4096).decode(errors="replace").strip().replace("\n", "|")
        log.write(f"{time.monotonic():.3f} {msg}\n")
PY
RA_PIDS+=($!)
ra_wait_for "[[ -S $T/notify.sock ]]" || ra_fail "the notify socket did not appear"

# As systemd starts it: no --foreground, stderr is the journal, a watchdog of 1 s.
: >"$T/daemon.log"
stream=$(stat -c '%d:%i' "$T/daemon.log")
JOURNAL_STREAM=$stream NOTIFY_SOCKET=$T/notify.sock WATCHDOG_USEC=1000000 \
	"$RADAEMON" --config "$T/radaemon.conf" 2>>"$T/daemon.log" &
DAEMON_PID=$!

notified() { grep -qE "^[0-9.]+ $1\$" "$T/notify.log" 2>/dev/null; }
ra_wait_for "notified READY=1" || ra_fail "no READY=1: $(cat "$T/notify.log")"
[[ $(ra_kb "$tiny") == 4 ]] || ra_fail "READY=1 came before $tiny was tuned"
ra_wait_for "notified 'STATUS=Managing 1 disk\.'" || ra_fail "no STATUS=: $(cat "$T/notify.log")"
ra_ok "READY=1 after coldplug, then STATUS="

ra_daemon_log_has '^<6>Managing 1 disk\.$' || ra_fail "no <6> prefix with JOURNAL_STREAM: $(cat "$T/daemon.log")"
ra_daemon_log_has "^<6>$tiny: read_ahead_kb [0-9]+ -> 4 KiB" || ra_fail "the decision is not logged at <6>"
if grep -qv '^<[0-7]>' "$T/daemon.log"; then
	ra_fail "a line without a priority prefix: $(grep -v '^<[0-7]>' "$T/daemon.log" | head -n 1)"
fi
ra_ok "every log line carries a journal priority"

ra_wait_for "(( \$(grep -c ' WATCHDOG=1\$' '$T/notify.log') >= 5 ))" ||
	ra_fail "fewer than 5 WATCHDOG=1 in ${RA_TIMEOUT}s: $(cat "$T/notify.log")"
python3 - "$T/notify.log" <<'PY' || ra_fail "the watchdog was not kept: $(cat "$T/notify.log")"
import sys
times = [float(line.split()[0]) for line in open(sys.argv[1]) if line.split()[1:] == ["WATCHDOG=1"]]
gaps = [b - a for a, b in zip(times, times[1:])]
print(f"notify.sh: {len(times)} pings, longest gap {max(gaps):.3f} s")
assert max(gaps) < 1.0, gaps
PY
ra_ok "WATCHDOG=1 from the idle event loop, always within WATCHDOG_USEC"

kill -HUP "$DAEMON_PID"
ra_wait_for "grep -A3 RELOADING=1 '$T/notify.log' | grep -q ' READY=1\$'" ||
	ra_fail "no RELOADING=1 then READY=1 after SIGHUP: $(cat "$T/notify.log")"
ra_ok "SIGHUP: RELOADING=1, then READY=1"

ra_stop_daemon TERM
ra_wait_for "notified STOPPING=1" || ra_fail "no STOPPING=1: $(cat "$T/notify.log")"
ra_ok "SIGTERM: STOPPING=1 and exit status 0"
