#!/bin/bash
# Four readers of four files on btrfs over a 7200 rpm disk (bench/devmodel's
# hdd-7200, never calibrated) take turns on the disk, a jump at each turn:
# the btrfs bdi, whose window serves them, grows on those turns without a
# trial, as the disk beneath xfs does (its requests are traced under the
# disk's devnum, and the bdi takes the turns from it). Before, the bdi grew
# by trials (512 -> 2048 KiB in the bench's first job, 8192 in the second).
# A timed test checks a bound only a hang would cross (20 s) and prints the
# time it took.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
command -v mkfs.btrfs >/dev/null || ra_fail "mkfs.btrfs is missing: ./install-deps --tests installs btrfs-progs"
ra_setup
ra_tracefs
ra_start_bus

ra_devmodel_attach hdd-7200
dev=$DEV
mkdir "$T/mnt"
mkfs.btrfs -q -f "/dev/$dev" >/dev/null || ra_fail "mkfs.btrfs on $dev failed"
mount -t btrfs "/dev/$dev" "$T/mnt" || ra_fail "cannot mount $dev"
RA_MOUNTS+=("$T/mnt")
for i in 0 1 2 3; do
	dd if=/dev/zero of="$T/mnt/big$i" bs=1M count=64 status=none || ra_fail "cannot write big$i"
done
umount "$T/mnt" || ra_fail "cannot unmount $T/mnt"
unset 'RA_MOUNTS[-1]'

ra_config <<CONF
[daemon]
devices = $dev
bdis = $T/mnt
state_dir = $T/state
CONF
ra_start_daemon
ra_daemon_log_has "Tracing .*block requests through" || ra_fail "the tracer is not on"

# Mounted afresh, with nothing of it in the page cache.
mount -t btrfs "/dev/$dev" "$T/mnt" || ra_fail "cannot mount $dev"
RA_MOUNTS+=("$T/mnt")
bdi=$(ra_btrfs_bdi "$T/mnt")
ra_wait_for "'$RACONTROL' show $bdi >/dev/null 2>&1" || ra_fail "no object for $bdi: $("$RACONTROL" status)"
ra_wait_log "^$bdi: read_ahead_kb"
prior=$(ra_bdi_kb "$bdi")
((prior < 4096)) || ra_fail "$bdi: a prior of $prior KiB, already 4 MiB"

readers=()
for i in 0 1 2 3; do
	dd if="$T/mnt/big$i" of=/dev/null bs=4k status=none &
	readers+=($!)
done
start=${EPOCHREALTIME/./}
grown=
while kill -0 "${readers[@]}" 2>/dev/null; do
	if (($(ra_bdi_kb "$bdi") >= 4096)); then
		grown=${EPOCHREALTIME/./}
		break
	fi
	((${EPOCHREALTIME/./} - start <= 20000000)) || break
	sleep 0.05
done
kb=$(ra_bdi_kb "$bdi")
kill "${readers[@]}" 2>/dev/null || true
wait "${readers[@]}" 2>/dev/null || true
ra_log "$bdi: $(grep "^$bdi: read_ahead_kb" "$T/daemon.log" | tr '\n' ' ')"
[[ -n $grown ]] || ra_fail "$bdi: four readers in turns left it at $kb KiB (prior $prior)"
grep -E "^$bdi: read_ahead_kb $prior -> [0-9]+ KiB .*take turns on the disk.*without a trial" "$T/daemon.log" >/dev/null ||
	ra_fail "$bdi: grown, but not on the disk's turns"
took=$(python3 -c "print(f'{($grown - $start) / 1e6:.2f}')")
ra_ok "btrfs on hdd-7200: $bdi $prior -> $kb KiB on the disk's turns, $took s after four readers began"
umount "$T/mnt" || ra_fail "cannot unmount $T/mnt"
unset 'RA_MOUNTS[-1]'
ra_stop_daemon
