#!/bin/bash
# Sixteen `cat` of sixteen files on ext4 over a 7200 rpm disk (bench/devmodel's
# hdd-7200), in a memory cgroup limited to 64 MiB, as a container runs them:
# each stream holds its window and the next in memory, and at the 1024 KiB
# prior they hold 32 MiB, half the limit. radaemon reads the readers' limit
# from their cgroup: sixteen windows fit a quarter of it up to 512 KiB, and
# the disk's turns do not grow it past that over three jobs (before, they
# took 8192 KiB at once: every job read seven times slower than at the
# kernel's 128 KiB). The same streams with no limit are not cut.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_tracefs
ra_start_bus
[[ -e /sys/fs/cgroup/memory/memory.limit_in_bytes ]] || ra_skip "no cgroup v1 memory controller"

ra_devmodel_attach hdd-7200
dev=$DEV
mkdir "$T/mnt"
mkfs.ext4 -q -F "/dev/$dev" >/dev/null || ra_fail "mkfs.ext4 on $dev failed"
mount "/dev/$dev" "$T/mnt" || ra_fail "cannot mount $dev"
RA_MOUNTS+=("$T/mnt")
for i in $(seq 0 15); do
	dd if=/dev/zero of="$T/mnt/f$i" bs=1M count=48 status=none || ra_fail "cannot write f$i"
done
umount "$T/mnt" || ra_fail "cannot unmount $T/mnt"
unset 'RA_MOUNTS[-1]'

mem=/sys/fs/cgroup/memory/radaemon-test-mem-$$
mkdir "$mem"
CGROUPS+=("$mem")
echo $((64 << 20)) >"$mem/memory.limit_in_bytes"

ra_config <<CONF
[daemon]
devices = $dev
state_dir = $T/state
CONF
ra_start_daemon
ra_daemon_log_has "Tracing readahead per file" || ra_fail "the page cache is not traced"

# One job: sixteen readers at once, on a fresh mount (a cold cache), in group
# (a memory cgroup's directory, or empty for none).
job() {
	local group=$1 pids=() i
	mount "/dev/$dev" "$T/mnt" || ra_fail "cannot mount $dev"
	RA_MOUNTS+=("$T/mnt")
	for i in $(seq 0 15); do
		if [[ -n $group ]]; then
			# shellcheck disable=SC2016 # $$ is the inner shell's
			sh -c 'echo $$ >"$0/cgroup.procs" && exec cat "$1"' "$group" "$T/mnt/f$i" >/dev/null &
		else
			cat "$T/mnt/f$i" >/dev/null &
		fi
		pids+=($!)
	done
	wait "${pids[@]}" || ra_fail "a reader failed"
	umount "$T/mnt" || ra_fail "cannot unmount $T/mnt"
	unset 'RA_MOUNTS[-1]'
}

prior=$(ra_kb "$dev")
for run in 1 2 3; do
	job "$mem"
	kb=$(ra_kb "$dev")
	ra_log "run $run in 64 MiB: $kb KiB"
	((kb <= 512)) || ra_fail "$dev: $kb KiB after run $run of sixteen streams in 64 MiB (prior $prior): $(grep "^$dev: read_ahead_kb" "$T/daemon.log" | tr '\n' ' ')"
done
if grep -E "^$dev: read_ahead_kb 512 -> ([0-9]{4,}|[6-9][0-9][0-9]) KiB" "$T/daemon.log"; then
	ra_fail "$dev: grown past what the readers' memory holds"
fi
ra_ok "sixteen streams in 64 MiB: $prior KiB at first, $kb KiB after three jobs"

ra_log "$(grep "^$dev: read_ahead_kb" "$T/daemon.log")"

# No limit: the machine's memory holds any window of sixteen streams, and
# nothing is cut for it (what the turns then make of it, the bench measures:
# bench/memory.py).
ra_stop_daemon
ra_config <<CONF
[daemon]
devices = $dev
state_dir = $T/state2
CONF
ra_start_daemon
job ""
job ""
kb=$(ra_kb "$dev")
if grep -E "^$dev: read_ahead_kb .*(may hold|read again)" "$T/daemon.log"; then
	ra_fail "$dev: cut for memory with no limit"
fi
((kb >= prior)) || ra_fail "$dev: sixteen streams with no limit left it at $kb KiB, below the $prior KiB prior"
ra_ok "sixteen streams with no limit: $kb KiB, nothing cut for memory"
ra_stop_daemon
