#!/bin/bash
# One daemon per state directory. A second radaemon on the first one's
# state directory (here one that found no bus, as a radaemon started by hand
# beside the system's would) does not start: it says which directory and
# which daemon holds it, and exits before tidying, loading or writing
# anything. The first one's state file is untouched and it goes on tuning;
# once it has stopped, the directory is free again.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus

ra_new_loop tiny 505K
tiny=$LOOP
ra_config <<CONF
[daemon]
devices = $tiny
state_dir = $T/state
CONF
ra_start_daemon
"$RACONTROL" set "$tiny" 64 >/dev/null || ra_fail "racontrol set failed"
grep -q "tiny.img.*pin=64" "$T/state/state" || ra_fail "the pin was not stored"
cp -p "$T/state/state" "$T/state.before"
# What a save under way leaves for a moment (.state.XXXXXX): only its own
# daemon may remove it. The idle first daemon saves nothing meanwhile.
echo "a save under way" >"$T/state/.state.Tmp123"

rc=0
DBUS_SYSTEM_BUS_ADDRESS="unix:path=$T/no-bus" timeout 20 "$VALGRIND_RUN" "$RADAEMON" --foreground \
	--config "$T/radaemon.conf" >"$T/second.log" 2>&1 || rc=$?
((rc != 0 && rc != 124)) || ra_fail "the second daemon did not refuse to start (status $rc): $(cat "$T/second.log")"
grep -qxF "Not starting: another radaemon (pid $DAEMON_PID) holds $T/state, its state directory." "$T/second.log" ||
	ra_fail "the second daemon did not say who holds $T/state: $(cat "$T/second.log")"
if grep -q "^Managing" "$T/second.log"; then
	ra_fail "the second daemon started managing: $(cat "$T/second.log")"
fi
ra_ok "a second daemon on $T/state refuses to start and names the first ($DAEMON_PID)"

cmp -s "$T/state/state" "$T/state.before" || ra_fail "the second daemon changed the first one's state file"
[[ -e $T/state/.state.Tmp123 ]] || ra_fail "the second daemon removed the first one's temporary file"
kill -0 "$DAEMON_PID" || ra_fail "the first daemon is gone"
[[ $(ra_kb "$tiny") == 64 ]] || ra_fail "$tiny is $(ra_kb "$tiny") KiB, not the first daemon's pin"
"$RACONTROL" set "$tiny" 128 >/dev/null || ra_fail "the first daemon does not answer"
grep -q "tiny.img.*pin=128" "$T/state/state" || ra_fail "the first daemon no longer stores its pins"
ra_ok "the first daemon's state survives, and it goes on storing"

# The lock goes with its daemon; the lock file it leaves holds no one.
ra_stop_daemon
ra_start_daemon
[[ $(ra_kb "$tiny") == 128 ]] || ra_fail "after a restart $tiny is $(ra_kb "$tiny") KiB, not 128"
ra_ok "after the first daemon stops, the next one starts on $T/state"
ra_stop_daemon
