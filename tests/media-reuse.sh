#!/bin/bash
# Issue 44: one daemon, one loop device, media one after another, as
# `losetup -f` hands a freed loop device to the next image (one kernel name
# and devnum, a new diskseq and backing file). What one medium's requests
# taught (its request classes and the fit from them) decides nothing for the
# next: a 7200 rpm disk streamed, whose read cache answers part of the
# stream at the bus's speed, then another such disk read at random through
# mmap; a USB stick streamed, then an SSD behind a controller read at random.
# And what caches answer fast is not the medium either: the first disk read
# at random right after its stream (a database after a backup), its model
# from the stream whose completions the loop's worker may see late.
# Each random reader is cut well within its job
# (the issue asks for 5 s; a timed test checks a generous 15 s, as
# random-cut.sh does, and prints what it took). No calibration: the model
# of each medium is its own traced requests, the one that was carried over.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_tracefs
ra_start_bus

ra_devmodel_attach hdd-7200
dev=$DEV
ra_config <<CONF
[daemon]
devices = $dev
state_dir = $T/state

[policy]
calibrate = no
CONF
ra_start_daemon
ra_daemon_log_has "Tracing .*block requests through" || ra_fail "the tracer is not on"

# The medium in $dev becomes one of class $1, and the daemon has seen it.
replace() {
	local seq
	seq=$(cat "/sys/block/$dev/diskseq")
	"${RA_DEVMODEL[@]}" replace "$dev" "$1" >/dev/null || ra_fail "cannot put a $1 in $dev"
	udevadm settle -t 10 || true
	(($(cat "/sys/block/$dev/diskseq") != seq)) || ra_fail "$dev: the same diskseq after another medium"
	ra_wait_for "\"\$RACONTROL\" show $dev 2>/dev/null | grep -q '$1-'" ||
		ra_fail "$dev: the daemon did not see the $1: $("$RACONTROL" show "$dev" 2>&1 | tr '\n' ' ')"
}

# Reads $2 MiB of $dev in order through the page cache, from a cold cache.
stream() {
	blockdev --flushbufs "/dev/$dev"
	dd if="/dev/$dev" of=/dev/null bs=1M count="$2" status=none || ra_fail "cannot read the $1 in $dev"
	ra_log "$1 streamed: $(ra_kb "$dev") KiB; $(grep "^$dev: modelled" "$T/daemon.log" | tail -n 1)"
}

# Random mmap reads of the $1 in $dev for up to 30 s: cut to $2 KiB or less within 15 s.
random_cut() {
	local prior reader start cut kb took
	prior=$(ra_kb "$dev")
	((prior > $2)) || ra_fail "$dev: the $1 starts at $prior KiB, nothing to cut"
	python3 "$RA_SRCDIR/tests/mmap-faults.py" "/dev/$dev" 30 &
	reader=$!
	start=$(date +%s.%N)
	cut=
	while kill -0 "$reader" 2>/dev/null; do
		kb=$(ra_kb "$dev")
		if ((kb <= $2)); then
			cut=$(date +%s.%N)
			break
		fi
		sleep 0.2
	done
	kill "$reader" 2>/dev/null || true
	wait "$reader" 2>/dev/null || true
	[[ -n $cut ]] ||
		ra_fail "$dev: 30 s of random mmap reads of the $1 left it at $(ra_kb "$dev") KiB (from $prior): $(grep "^$dev: " "$T/daemon.log" | tail -n 3 | tr '\n' ' ')"
	took=$(python3 -c "print(f'{$cut - $start:.1f}')")
	ra_log "$1 at random: $prior -> $kb KiB $took s into the job: $(grep "^$dev: read_ahead_kb .* -> $kb KiB" "$T/daemon.log" | tail -n 1)"
	python3 -c "import sys; sys.exit(0 if $cut - $start <= 15 else 1)" ||
		ra_fail "$dev: the $1 cut to $kb KiB only $took s into the job"
	ra_ok "$1 in $dev at random: $prior -> $kb KiB within $took s"
}

stream hdd-7200 1024
# Its stream filled its windows a moment ago: no lower than the kernel's
# 128 KiB yet (scans and lookups taking turns, ra-adapt.h), but that at once.
random_cut hdd-7200 128
replace hdd-7200
random_cut hdd-7200 16
replace usb-stick
stream usb-stick 128
replace ssd-ctrl
random_cut ssd-ctrl 16
ra_stop_daemon
