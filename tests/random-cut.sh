#!/bin/bash
# Issue 29: random mmap reads on the bench's modelled 7200 rpm disk
# (bench/devmodel's hdd-7200, never calibrated: the cost model assumed for a
# rotational disk) at its prior are cut to 16 KiB or less well within the
# job, as the windows they read cost most of the disk's time. The issue asks
# for 5 s; a timed test checks a generous bound only (15 s of a 30 s job),
# which the count it replaced (1,024 faults, 20 s at the 50 a second the
# issue measured) did not meet. The time it took is printed.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_tracefs
ra_start_bus

ra_devmodel_attach hdd-7200
disk=$DEV
ra_config <<CONF
[daemon]
devices = $disk
state_dir = $T/state

[policy]
calibrate = no
CONF
ra_start_daemon
ra_daemon_log_has "Tracing .*block requests through" || ra_fail "the tracer is not on"
prior=$(ra_kb "$disk")
((prior > 128)) || ra_fail "$disk: a prior of $prior KiB, not the rotational one above the kernel's default"

python3 "$RA_SRCDIR/tests/mmap-faults.py" "/dev/$disk" 30 &
reader=$!
start=$(date +%s.%N)
cut=
while kill -0 "$reader" 2>/dev/null; do
	kb=$(ra_kb "$disk")
	if ((kb <= 16)); then
		cut=$(date +%s.%N)
		break
	fi
	sleep 0.2
done
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null || true
[[ -n $cut ]] || ra_fail "$disk: 30 s of random mmap reads left it at $(ra_kb "$disk") KiB (prior $prior)"
took=$(python3 -c "print(f'{$cut - $start:.1f}')")
ra_log "$disk: $prior -> $kb KiB $took s into the job: $(grep "^$disk: read_ahead_kb .* -> $kb KiB" "$T/daemon.log" | tail -n 1)"
python3 -c "import sys; sys.exit(0 if $cut - $start <= 15 else 1)" ||
	ra_fail "$disk: cut to $kb KiB only $took s into the job"
ra_daemon_log_has "^$disk: read_ahead_kb [0-9]+ -> $kb KiB \(learned, on learning\): Random reads dominate .* of its time" ||
	ra_fail "$disk: no logged reason in device time for the cut"
ra_ok "random mmap on hdd-7200: $prior -> $kb KiB within $took s, judged in device time"
ra_stop_daemon
