#!/bin/bash
# Learning from the page cache, file by file, on ext4 over an emulated 1 TiB
# rotational disk (150 IOPS, 180 MB/s): a tar of a tree (one jump per file on
# the disk, each file read in order) never takes the disk below 128 KiB and
# ends at 2 MiB or more; random mmap reads of a big file on a fresh disk,
# as fast as the device serves them, still bring the window low (they are
# not throttled: radaemon judges the device time a window wastes, and a
# cgroup's limit is not the device's; tests/random-cut.sh does it on a
# modelled 7200 rpm disk); where tracefs is not mounted at start, the
# daemon mounts it and learns (or D-Bus says why it cannot); D-Bus and
# racontrol show what the workload was judged from.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus


# fs NAME DEV: ext4 on DEV, mounted at $T/NAME.
fs() {
	mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "/dev/$2" || ra_fail "mkfs.ext4 $2 failed"
	mkdir -p "$T/$1"
	mount "/dev/$2" "$T/$1" || ra_fail "cannot mount $2"
	RA_MOUNTS+=("$T/$1")
}

# remount NAME DEV: a cold page cache for that file system alone.
remount() {
	umount "$T/$1" || ra_fail "cannot unmount $2"
	mount "/dev/$2" "$T/$1" || ra_fail "cannot mount $2 again"
}

ra_new_loop tree 1T
tree=$LOOP
ra_set_rotational "$tree" 1
ra_new_loop rnd 1T
rnd=$LOOP
ra_set_rotational "$rnd" 1
udevadm settle
ra_throttle hdd "$tree" 150 180000000

# A source-like tree: 6 folders of 1 MiB files and a few of 4 MiB.
fs tree "$tree"
for d in 0 1 2 3 4 5; do
	mkdir "$T/tree/src$d"
	for i in $(seq 20); do
		head -c $((1 << 20)) /dev/urandom >"$T/tree/src$d/file$i.c"
	done
	for i in 1 2 3; do
		head -c $((4 << 20)) /dev/urandom >"$T/tree/src$d/blob$i.o"
	done
done
fs rnd "$rnd"
dd if=/dev/zero of="$T/rnd/big" bs=1M count=1024 status=none || ra_fail "cannot write the big file"
sync

ra_config <<CONF
[daemon]
devices = $tree $rnd
interval_ms = 500
state_dir = $T/state
CONF

# Where tracefs is not mounted, the daemon mounts it itself and says so.
unmounted_at_start=
mountpoint -q /sys/kernel/tracing || unmounted_at_start=1
ra_start_daemon
if [[ -n $unmounted_at_start ]]; then
	ra_daemon_log_has "tracefs was not mounted: mounted it at /sys/kernel/tracing" ||
		ra_fail "tracefs was not mounted, and the daemon did not say it mounted it"
	ra_ok "tracefs was not mounted at start: the daemon mounted it and said so"
else
	ra_log "tracefs was mounted already: the daemon's own mount is not exercised here"
fi
ra_daemon_log_has "Tracing readahead per file and block requests through" || ra_fail "the page-cache events are not on"
evidence=$(ra_busctl get-property org.radaemon.ReadAhead1 /org/radaemon/ReadAhead1 \
	org.radaemon.ReadAhead1.Manager Evidence)
[[ $evidence == 's "readahead"' ]] || ra_fail "Evidence on D-Bus is $evidence, not readahead"
off=$(ra_busctl get-property org.radaemon.ReadAhead1 /org/radaemon/ReadAhead1 \
	org.radaemon.ReadAhead1.Manager LearningOff)
[[ $off == 's ""' ]] || ra_fail "LearningOff on D-Bus is $off while learning works"
ra_ok "Evidence is readahead on D-Bus, and learning is on"

prior=$(ra_kb "$tree")
property() { "$RACONTROL" show "$1" --json | python3 -c "import json, sys; print(json.load(sys.stdin)['$2'])"; }

# run_watching DEV command...: runs a workload, noting the least window and the evidence seen meanwhile.
lowest=$prior
evidences=
run_watching() {
	local dev=$1 pid kb
	shift
	"$@" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		kb=$(ra_kb "$dev")
		((kb < lowest)) && lowest=$kb
		evidences+=" $(property "$dev" evidence)"
		sleep 0.2
	done
	wait "$pid" || ra_fail "the workload failed: $*"
}

tar_tree() { tar -cf - -C "$T/tree" . | cat >/dev/null; }
for run in $(seq 12); do
	remount tree "$tree"
	start=$SECONDS
	run_watching "$tree" ra_in_cgroup hdd bash -c "$(declare -f tar_tree); T=$T tar_tree"
	kb=$(ra_kb "$tree")
	ra_log "tar run $run: $((SECONDS - start)) s, $tree at $kb KiB (least $lowest KiB)"
	((kb >= 2048)) && break
done
((lowest >= 128)) || ra_fail "$tree: a tar of a tree took the window down to $lowest KiB"
((kb >= 2048)) || ra_fail "$tree: tar runs left it at $kb KiB (prior $prior)"
[[ $evidences == *readahead* ]] || ra_fail "$tree: the workload was never judged from readahead:$evidences"
# The raise is either a trial, where the files fill the windows they run
# under and the loop device's traced model says its reads cost little (the
# cgroup's throttle sits above the requests traced: 5 us a command), or
# growth on that model (or a calibration's) where the machine is busy
# enough that the loop device's own copying costs it 300 us a command (CI,
# 4170bfa: "306 us a command, 502.6 MiB/s"). Either is a reason on the
# files' page-cache evidence, logged with the raise.
ra_daemon_log_has "^$tree: read_ahead_kb [0-9]+ -> [0-9]+ KiB \(learned, on learning\): Sequential reads (fill every [0-9]+ KiB window the files run under|cost the device [0-9]+ ms a second, .* \(its (traced|calibrated) model\))" ||
	ra_fail "$tree: no logged reason for the raise"
"$RACONTROL" show "$tree" | grep -q "judged from readahead per file" || ra_fail "racontrol show does not say what the workload was judged from"
"$RACONTROL" show "$tree" | grep -q "^Learning: *from readahead per file" || ra_fail "racontrol show does not say what learning sees"
ra_ok "tar: $tree from $prior to $kb KiB, never below $lowest KiB"

# Random mmap reads of a big file on the other disk, fresh, unthrottled: the
# windows they read for nothing take most of the device's time, and the window
# comes down.
prior_rnd=$(ra_kb "$rnd")
for run in $(seq 6); do
	remount rnd "$rnd"
	python3 "$RA_SRCDIR/tests/mmap-faults.py" "$T/rnd/big" 3 || ra_fail "the mmap reader failed"
	kb=$(ra_kb "$rnd")
	ra_log "mmap run $run: $rnd at $kb KiB"
	((kb <= 16)) && break
done
((kb <= 16)) || ra_fail "$rnd: random mmap reads left it at $kb KiB (prior $prior_rnd)"
ra_daemon_log_has "^$rnd: read_ahead_kb $prior_rnd -> $kb KiB \(learned, on learning\): Random reads dominate .* mmap faults" ||
	ra_fail "$rnd: no logged reason for the cut"
ra_ok "random mmap: $rnd cut from $prior_rnd to $kb KiB, with a reason"
ra_stop_daemon

# Where tracefs cannot be had (not mounted, and no CAP_SYS_ADMIN to mount it,
# as under the unit's sandbox), D-Bus and racontrol say why learning is off.
if [[ -n $unmounted_at_start ]]; then
	mountpoint -q /sys/kernel/tracing && umount /sys/kernel/tracing
	: >"$T/daemon.log"
	setpriv --bounding-set=-sys_admin -- "$RADAEMON" --foreground --debug --config "$T/radaemon.conf" \
		>>"$T/daemon.log" 2>&1 &
	DAEMON_PID=$!
	ra_wait_for "grep -q '^Managing' '$T/daemon.log'" || ra_fail "the daemon did not start"
	mountpoint -q /sys/kernel/tracing && ra_fail "the daemon mounted tracefs without CAP_SYS_ADMIN"
	off=$(ra_busctl get-property org.radaemon.ReadAhead1 /org/radaemon/ReadAhead1 \
		org.radaemon.ReadAhead1.Manager LearningOff)
	[[ $off == *"cannot see reads to learn from"* ]] || ra_fail "LearningOff on D-Bus is $off without tracefs"
	"$RACONTROL" status | head -n 1 | grep -q "^Learning is off: " || ra_fail "racontrol status does not say learning is off"
	"$RACONTROL" show "$tree" | grep -q "^Learning: *off: " || ra_fail "racontrol show does not say learning is off"
	ra_stop_daemon
	ra_ok "without a usable tracefs: LearningOff says why ($off), and racontrol status and show too"
else
	ra_log "tracefs was mounted already: learning without it is not exercised here"
fi
