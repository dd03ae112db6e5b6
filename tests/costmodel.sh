#!/bin/bash
# A busy device never calibrated is modelled from its own requests: an
# ssd-ctrl (seed 004's SSD behind a heavy controller) with calibrate = no,
# read directly at every calibration size, gets a cost model fitted from the
# completions the tracer sees, shown by racontrol show and on D-Bus as
# traced, and stored with its identity (traced= in the state file); its
# window is still decided as before (no calibration, so its prior).
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus
ra_devmodel_attach ssd-ctrl
dev=$DEV
ra_config <<CONF
[daemon]
devices = $dev
interval_ms = 500
state_dir = $T/state

[policy]
calibrate = no
CONF
ra_start_daemon
ra_wait_for "[[ \$(ra_property $dev workload) == idle ]]" || ra_fail "$dev is not idle before the reads"
[[ -z $(ra_property "$dev" cost_model_source) ]] || ra_fail "$dev: a cost model before any read"

# Six reads of each size, each somewhere new: the fastest of each is its cost.
offset=0
for kb in 4 16 64 256 1024; do
	for _ in 1 2 3 4 5 6; do
		dd if="/dev/$dev" of=/dev/null bs="${kb}k" count=1 skip=$((offset / kb)) iflag=direct status=none ||
			ra_fail "dd of $kb KiB failed"
		offset=$((offset + 2048))
	done
done

ra_wait_for "[[ \$(ra_property $dev cost_model_source) == traced ]]" ||
	ra_fail "$dev: no model from its reads: cost_model '$(ra_property "$dev" cost_model_source)': $(tail -n 20 "$T/daemon.log")"
# The reads' requests may reach the tracer over two intervals: the model is
# made from the first's (the 4 KiB reads alone, no command cost yet) and
# refined by the next.
ra_wait_for "'$RACONTROL' show $dev | grep -qE '^Cost model: +[0-9]+ us a command'" || true
"$RACONTROL" show "$dev" >"$T/show" || ra_fail "racontrol show failed"
grep -qE '^Cost model: +[0-9]+ us a command, .* \(from its own requests\)$' "$T/show" ||
	ra_fail "racontrol show says no model: $(cat "$T/show")"
grep -qE '^Calibration: +none$' "$T/show" || ra_fail "a traced model shown as a calibration: $(cat "$T/show")"
command_us=$(ra_busctl get-property org.radaemon.ReadAhead1 "/org/radaemon/ReadAhead1/device/$dev" \
	org.radaemon.ReadAhead1.Device CommandUSec | cut -d' ' -f2)
# Only what a hang or a wrong unit would cross: the figures are for bench/.
((command_us > 0 && command_us < 100000)) || ra_fail "$dev: CommandUSec $command_us"
[[ $(ra_property "$dev" calibrated_usec) == 0 && -z $(ra_property "$dev" calibration) ]] ||
	ra_fail "$dev: a traced model shown as a calibration"
[[ $(ra_property "$dev" source) != calibrated ]] || ra_fail "$dev: decided as calibrated"
ra_daemon_log_has "^$dev: modelled from its own requests \(.*\): " || ra_fail "$dev: no log of its model"

# Stored with the identity (at the end of an interval), and shown again after a restart.
ra_wait_for "grep -qE ' traced=[0-9]+:[0-9]+:[0-9]+:0:' '$T/state/state'" ||
	ra_fail "no traced= in the state file: $(cat "$T/state/state")"
ra_stop_daemon
ra_start_daemon
ra_wait_for "[[ \$(ra_property $dev cost_model_source) == traced ]]" || ra_fail "$dev: its model was not kept"
ra_ok "$dev (ssd-ctrl, never calibrated): $(grep -E '^Cost model' "$T/show")"
