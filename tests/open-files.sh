#!/bin/bash
# A device's new window reaches the files already open (issue 45, item 2).
# A file takes its window when it is opened: a random mmap reader that opened
# its file on ext4 over bench/devmodel's 7200 rpm disk at the disk's prior
# read the prior's whole window around every fault to the end of its job,
# though radaemon cut the disk a few seconds in. Now its own description
# follows the cut (pidfd_getfd, POSIX_FADV_NORMAL), in a PID namespace of its
# own too: its faults read the cut's window. A second reader, which mapped
# its file with MADV_SEQUENTIAL, chose its own pattern and keeps the window it opened with; with
# open_files = leave the first keeps it too. A reader whose faults a
# forked child's thread makes is followed as well.
#
# Counted, not timed: the window (ra_pages) of each readahead of the two
# files, from a tracefs instance of the test's own (readahead:
# page_cache_ra_order, which an mmap fault's read-around goes through, and
# page_cache_sync_ra, which a MADV_SEQUENTIAL mapping's faults do). Not
# pages a fault brings: after about a hundred faults that miss the cache,
# the kernel stops reading around for a file (mmap_miss), whatever its window.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_tracefs
ra_start_bus

ra_devmodel_attach hdd-7200
disk=$DEV
mkdir "$T/mnt"
mkfs.ext4 -q -F "/dev/$disk" >/dev/null || ra_fail "mkfs.ext4 on $disk failed"
mount "/dev/$disk" "$T/mnt" || ra_fail "cannot mount $disk"
RA_MOUNTS+=("$T/mnt")
for f in plain own; do
	dd if=/dev/urandom of="$T/mnt/$f" bs=1M count=512 status=none || ra_fail "cannot write $f"
done
sync

trace=/sys/kernel/tracing/instances/radaemon-test-open-files-$$
remove_trace() { [[ ! -d $trace ]] || rmdir "$trace"; }
RA_HOOKS+=(remove_trace)
mkdir "$trace" || ra_fail "cannot make the tracefs instance $trace"
# Inode numbers repeat across file systems: the disk's own (s_dev is the kernel's major << 20 | minor).
ino_plain=$(stat -c %i "$T/mnt/plain") ino_own=$(stat -c %i "$T/mnt/own")
read -r major minor <<<"$(stat -c '%t %T' "/dev/$disk")"
s_dev=$(((16#$major << 20) | 16#$minor))
for event in page_cache_ra_order page_cache_sync_ra; do
	echo "s_dev == $s_dev && (i_ino == $ino_plain || i_ino == $ino_own)" >"$trace/events/readahead/$event/filter"
	echo 1 >"$trace/events/readahead/$event/enable"
done
echo 16384 >"$trace/buffer_size_kb"

# The windows file (plain or own) read with, in order, since the trace was
# last emptied.
windows() {
	local ino
	ino=$(printf %x "$([[ $1 == plain ]] && echo "$ino_plain" || echo "$ino_own")")
	sed -nE "s/.* dev=$((16#$major)):$((16#$minor)) ino=$ino .* ra_pages=([0-9]+).*/\1/p" "$trace/trace"
}

# One job: the readers open their files at the disk's prior, on a cold
# cache; returns once the disk was cut and the first reader was followed,
# or 30 s passed. The second (with own) reads 20 faults a second: its reads
# are asked for, and a larger share of them would make the cut a close call
# (the waste's share of the disk's time decides it).
job() {
	local followed=$1 with_own=$2 fork=${3:-}
	echo 3 >/proc/sys/vm/drop_caches
	: >"$trace/trace"
	prior=$(ra_kb "$disk")
	((prior > 128)) || ra_fail "$disk: a prior of $prior KiB, not the rotational one above the kernel's default"
	if $followed; then
		# In a PID namespace of its own, as in a container: the page cache names it by
		# its pid out here.
		unshare --pid --fork --kill-child python3 "$RA_SRCDIR/tests/mmap-faults.py" "$T/mnt/plain" 60 ${fork:+"$fork"} &
		RA_PIDS+=("$!")
		ra_wait_for "pgrep -P $! >/dev/null" || ra_fail "the reader in its own PID namespace did not start"
		plain=$(pgrep -P $!)
	else
		python3 "$RA_SRCDIR/tests/mmap-faults.py" "$T/mnt/plain" 60 &
		plain=$!
	fi
	RA_PIDS+=("$plain")
	own=
	if $with_own; then
		python3 "$RA_SRCDIR/tests/mmap-faults.py" "$T/mnt/own" 60 --advise sequential \
			--rate 20 &
		own=$!
		RA_PIDS+=("$own")
	fi
	# --fork-thread: the faults are a forked child's, made by a thread of its.
	follower=$plain
	if [[ -n $fork ]]; then
		# By its name: a python3 that is a shim (pyenv's) runs children of its own first.
		ra_wait_for "pgrep -x python3 -P $plain >/dev/null" || ra_fail "the reader's child did not start"
		follower=$(pgrep -x python3 -P "$plain")
	fi
	start=$SECONDS
	for _ in $(seq 150); do
		kb=$(ra_kb "$disk")
		if ((kb <= 16)) && { ! $followed || grep -q "^$disk: python3 (pid $follower) reads" "$T/daemon.log"; }; then
			break
		fi
		sleep 0.2
	done
	((kb <= 16)) || ra_fail "$disk: 30 s of random mmap reads left it at $kb KiB (prior $prior): $(grep -E "^$disk: (read_ahead_kb|.*learn)" "$T/daemon.log" | tr '\n' ' ')"
	ra_log "$disk: $prior -> $kb KiB $((SECONDS - start)) s into the job"
}

# SIGKILL: the init of a PID namespace ignores a TERM from outside it.
stop_readers() {
	kill -KILL "$plain" $own 2>/dev/null
	wait "$plain" $own 2>/dev/null || true
}

ra_config <<CONF
[daemon]
devices = $disk
state_dir = $T/state

[policy]
calibrate = no
CONF
ra_start_daemon
ra_daemon_log_has "Tracing readahead per file" || ra_fail "the page cache is not traced"

job true true
line=$(grep -m 1 "^$disk: python3 (pid $plain) reads" "$T/daemon.log") ||
	ra_fail "$disk: cut to $kb KiB, and the open file of reader $plain was not followed: $(grep "^$disk:" "$T/daemon.log" | tr '\n' ' ')"
ra_log "$line"
[[ $line =~ "under the $prior KiB it opened with; now "[0-9]+" KiB: its random reads bring whole windows." ]] ||
	ra_fail "the line does not say the windows and why: $line"
sleep 2
read -r -a w <<<"$(windows plain | tr '\n' ' ')"
read -r -a v <<<"$(windows own | tr '\n' ' ')"
ra_log "windows of the plain reader's readaheads (pages): ${w[*]:0:3} ... ${w[*]: -3} (${#w[@]}); of the MADV_SEQUENTIAL reader's: ${#v[@]}, $(printf '%s\n' "${v[@]}" | sort -u | tr '\n' ' ')"
# A cut may come in steps (512 -> 64 -> 4): the windows never grow back, and
# the last is the disk's now.
kb=$(ra_kb "$disk") old=$((prior / 4)) prev=$((prior / 4))
for x in "${w[@]}"; do
	((x <= prev)) || ra_fail "the plain reader read with $x pages after it had read with $prev: ${w[*]}"
	prev=$x
done
((prev == kb / 4)) || ra_fail "the plain reader's last readaheads were of $prev pages, not the cut's $((kb / 4)): ${w[*]}"
((${#v[@]} > 0)) || ra_fail "no readahead of the MADV_SEQUENTIAL reader was traced"
for x in "${v[@]}"; do
	((x == old)) || ra_fail "the MADV_SEQUENTIAL reader read with $x pages, not the $old it opened with: its window was changed"
done
! grep -q "(pid $own)" "$T/daemon.log" || ra_fail "the MADV_SEQUENTIAL reader was touched: $(grep "(pid $own)" "$T/daemon.log")"
ra_ok "the open file followed the cut to $kb KiB; the reader that chose its pattern kept $prior KiB"

# racontrol show lists it, to root and to its reader's user, and under a path it is beneath only.
"$RACONTROL" show "$disk" >"$T/show" || ra_fail "racontrol show $disk failed"
grep -qE "^Open files: +$T/mnt/plain, read by python3 \(pid $plain\): $prior -> [0-9]+ KiB at .*, its random reads brought whole windows$" "$T/show" ||
	ra_fail "racontrol show does not list the followed file: $(grep -A3 '^Open files' "$T/show" || tail -n 3 "$T/show")"
"$RACONTROL" show "$T/mnt" | grep -q "^Open files: .*/mnt/plain, " || ra_fail "racontrol show $T/mnt does not list $T/mnt/plain"
! "$RACONTROL" show "$T/mnt/own" | grep -q "^Open files" || ra_fail "racontrol show $T/mnt/own lists a file not under it"
"$RACONTROL" show "$disk" --json | python3 -c '
import json, sys
f = json.load(sys.stdin)["open_files"]
assert [x["pid"] for x in f] == [int(sys.argv[1])] and f[0]["why"] == "random" and f[0]["open"] and f[0]["uid"] == 0, f' "$plain" ||
	ra_fail "racontrol show --json: open_files is not the one followed file"
runuser -u nobody -- env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" "$RACONTROL" show "$disk" >"$T/show-nobody" ||
	ra_fail "nobody cannot run racontrol show: $(cat "$T/show-nobody")"
! grep -q "^Open files" "$T/show-nobody" || ra_fail "nobody is told of root's open file: $(grep "^Open files" "$T/show-nobody")"
stop_readers
"$RACONTROL" show "$disk" | grep -qE "^Open files: +$T/mnt/plain, .*whole windows \(closed since\)$" ||
	ra_fail "racontrol show does not say the reader closed its file: $("$RACONTROL" show "$disk" | grep -A2 '^Open files')"
ra_ok "racontrol show lists the followed file (to root, not to nobody; under its path), and that it was closed"
ra_stop_daemon

# open_files = leave: the files keep what they opened with (a state of its
# own: nothing learned above is kept).
ra_config <<CONF
[daemon]
devices = $disk
state_dir = $T/state-leave

[policy]
calibrate = no

[device:$disk]
open_files = leave
CONF
ra_start_daemon
job false false
sleep 2
read -r -a w <<<"$(windows plain | tr '\n' ' ')"
ra_log "open_files = leave: windows of the reader's readaheads at $kb KiB: $(printf '%s\n' "${w[@]}" | sort -u | tr '\n' ' ')(${#w[@]})"
((${#w[@]} > 0)) || ra_fail "no readahead of the reader was traced"
for x in "${w[@]}"; do
	((x == prior / 4)) || ra_fail "open_files = leave, and the reader read with $x pages, not the $((prior / 4)) it opened with"
done
! grep -q "(pid $plain) reads" "$T/daemon.log" || ra_fail "open_files = leave, and reader $plain was followed"
ra_ok "open_files = leave: the open file kept its $prior KiB"
stop_readers
ra_stop_daemon

# The faults made by a thread of a child the reader forked after mapping
# the file: the trace names the thread; its process holds a copy of the
# descriptor, of the same open file, whose window follows.
ra_config <<CONF
[daemon]
devices = $disk
state_dir = $T/state-fork

[policy]
calibrate = no
CONF
ra_start_daemon
job true false --fork-thread
line=$(grep -m 1 "^$disk: python3 (pid $follower) reads" "$T/daemon.log") ||
	ra_fail "$disk: cut to $kb KiB, and the forked child $follower's thread's file was not followed: $(grep "^$disk:" "$T/daemon.log" | tr '\n' ' ')"
sleep 2
read -r -a w <<<"$(windows plain | tr '\n' ' ')"
((${#w[@]} > 0 && w[-1] == kb / 4)) ||
	ra_fail "the forked child's last readaheads were not of the cut's $((kb / 4)) pages: ${w[*]}"
ra_ok "a forked child's thread's faults: its copy of the descriptor followed the cut to $kb KiB ($line)"
stop_readers
ra_stop_daemon
