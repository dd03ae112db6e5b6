#!/bin/bash
# racontrol's own contract: one-line errors with exit status 1 when the
# daemon or the bus is not there or a device is unknown, 2 for usage errors,
# and the verbs that work without a device.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup

# Usage errors: 2, before any bus is needed.
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/no-bus-here
ra_expect 2 "unknown verb 'frobnicate'" frobnicate
ra_expect 2 "show takes 1 argument; usage: racontrol show DEV" show
ra_expect 2 "set takes 2 arguments" set loop0
ra_expect 2 "unknown option '--bogus'" --bogus status
ra_expect 2 "--runtime only goes with set" status --runtime
ra_expect 2 "'12k' is not a size in KiB" set loop0 12k
"$RACONTROL" --help | grep -q "^Usage: racontrol" || ra_fail "no help"
"$RACONTROL" --version | grep -q "^radaemon " || ra_fail "no version"
ra_ok "usage errors exit 2 with one line"

# No bus, then a bus without the daemon: 1, and say which.
ra_expect 1 "cannot connect to the system bus" status
ra_start_bus
ra_expect 1 "radaemon is not running" status
ra_expect 1 "radaemon is not running" monitor
ra_expect 1 "radaemon is not running" set loop0 64
ra_ok "no bus and no daemon reported in one line"

ra_new_loop tiny 505K
tiny=$LOOP
ra_config <<CONF
[daemon]
devices = $tiny
state_dir = $T/state
CONF
ra_start_daemon
ra_expect 1 "no such device: radaemon manages no disk or bdi named 'sdzz'" show sdzz
ra_expect 1 "no such device" set sdzz 64
ra_expect 1 "no such device" auto sdzz
ra_expect 1 "bad value: $tiny: the value must be a multiple of 4 from 4 to 8192 KiB, not 6" set "$tiny" 6
ra_expect 1 "bad value: 99999999999 KiB is far too large" set "$tiny" 99999999999
ra_ok "no such device and bad values reported in one line"

# status is the default verb; reload reloads; --json everywhere is JSON.
"$RACONTROL" >"$T/out" || ra_fail "racontrol with no verb failed"
grep -q "^DEVICE " "$T/out" || ra_fail "no status table header: $(cat "$T/out")"
grep -q "^$tiny " "$T/out" || ra_fail "$tiny is not in the status table: $(cat "$T/out")"
[[ $("$RACONTROL" reload) == "Configuration reloaded." ]] || ra_fail "reload did not say so"
ra_wait_log "Reload requested over D-Bus by uid 0"
for verb in "status" "show $tiny" "set $tiny 16" "set $tiny 32 --runtime" "auto $tiny" "reload"; do
	# shellcheck disable=SC2086 # verb is meant to split
	"$RACONTROL" --json $verb | python3 -c 'import json, sys; json.load(sys.stdin)' ||
		ra_fail "racontrol --json $verb is not JSON"
done
ra_ok "every verb's --json parses"

# metrics: Prometheus' text format, which promtool accepts, counting the
# values written (4 KiB at start, then 16, 32 and back to 4 above).
ra_expect 2 "metrics has no --json" --json metrics
command -v promtool >/dev/null || ra_skip "promtool (package prometheus) is not installed"
"$RACONTROL" metrics >"$T/metrics" || ra_fail "racontrol metrics failed"
promtool check metrics <"$T/metrics" >"$T/promtool" 2>&1 || ra_fail "promtool check metrics: $(cat "$T/promtool")"
[[ ! -s $T/promtool ]] || ra_fail "promtool check metrics: $(cat "$T/promtool")"
for want in 'radaemon_devices_managed 1' "radaemon_device_decisions_total{device=\"$tiny\"} 4" \
	"radaemon_device_read_ahead_bytes{device=\"$tiny\",source=\"prior\",workload=\"idle\"} 4096" 'radaemon_state_error 0'; do
	grep -qxF "$want" "$T/metrics" || ra_fail "racontrol metrics lacks '$want': $(cat "$T/metrics")"
done
ra_ok "racontrol metrics: promtool check metrics is clean, 4 decisions counted"

# A bad configuration through reload: refused, exit 1, the daemon keeps the old one.
ra_config <<CONF
[daemon]
devices = $tiny
mode = never
CONF
ra_expect 1 "The configuration is invalid" reload
kill -0 "$DAEMON_PID" || ra_fail "the daemon died on a bad reload"
ra_ok "a bad reload is refused"
ra_stop_daemon
