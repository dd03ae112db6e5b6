#!/bin/bash
# A random reader beside a stream on one device (issue 45, item 1): the
# device's window serves the stream, and the random reader's file alone is
# cut. On ext4 over bench/devmodel's 7200 rpm disk, a reader streams one
# file while another faults at random in a mapped one, both opened at the
# disk's prior; radaemon keeps the disk's window above the kernel's default
# (the stream reads in order, filling each window) and gives the random
# reader's file the least window, by lending the device's knob that window
# for as long as POSIX_FADV_NORMAL takes.
#
# Counted, not timed: the window (ra_pages) of each readahead of the two
# files, from a tracefs instance of the test's own (readahead:
# page_cache_ra_order, which both a stream's readahead and a fault's
# read-around go through).
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
for f in stream random; do
	dd if=/dev/urandom of="$T/mnt/$f" bs=1M count=768 status=none || ra_fail "cannot write $f"
done
sync
echo 3 >/proc/sys/vm/drop_caches

trace=/sys/kernel/tracing/instances/radaemon-test-open-files-alone-$$
remove_trace() { [[ ! -d $trace ]] || rmdir "$trace"; }
RA_HOOKS+=(remove_trace)
mkdir "$trace" || ra_fail "cannot make the tracefs instance $trace"
ino_stream=$(stat -c %i "$T/mnt/stream") ino_random=$(stat -c %i "$T/mnt/random")
read -r major minor <<<"$(stat -c '%t %T' "/dev/$disk")"
echo "s_dev == $(((16#$major << 20) | 16#$minor)) && (i_ino == $ino_stream || i_ino == $ino_random)" \
	>"$trace/events/readahead/page_cache_ra_order/filter"
echo 1 >"$trace/events/readahead/page_cache_ra_order/enable"
echo 16384 >"$trace/buffer_size_kb"
# windows INODE: the windows, in pages, of that file's readaheads, as they changed.
windows() { sed -nE "s/.* ino=$(printf %x "$1") .* ra_pages=([0-9]+).*/\1/p" "$trace/trace" | uniq | tr '\n' ' '; }

ra_config <<CONF
[daemon]
devices = $disk
state_dir = $T/state

[policy]
calibrate = no
CONF
ra_start_daemon
ra_daemon_log_has "Tracing readahead per file" || ra_fail "the page cache is not traced"
prior=$(ra_kb "$disk")
((prior > 128)) || ra_fail "$disk: a prior of $prior KiB, not the rotational one above the kernel's default"

# The stream: 1 MiB reads as fast as the disk gives them, for 30 s at most.
python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
end = time.monotonic() + 30
while time.monotonic() < end and os.read(fd, 1 << 20):
    pass
' "$T/mnt/stream" &
stream=$!
RA_PIDS+=("$stream")
python3 "$RA_SRCDIR/tests/mmap-faults.py" "$T/mnt/random" 30 &
random=$!
RA_PIDS+=("$random")

line=
for _ in $(seq 100); do
	line=$(grep -m 1 -E "^$disk: python3 \(pid $random\) reads $T/mnt/random under the $prior KiB it opened with; now [0-9]+ KiB: its random reads bring whole windows beside streams that fill theirs, so for it alone\.$" "$T/daemon.log") && break
	sleep 0.2
done
[[ -n $line ]] || ra_fail "the random reader's file was not cut alone in 20 s: $(grep "^$disk:" "$T/daemon.log" | tail -n 8 | tr '\n' ' ')"
ra_log "$line"
ra_log "$(grep -m 1 "read at random beside streams" "$T/daemon.log")"
sleep 3
kb=$(ra_kb "$disk")
kill "$stream" "$random" 2>/dev/null
wait "$stream" "$random" 2>/dev/null || true

read -r -a r <<<"$(windows "$ino_random")"
read -r -a s <<<"$(windows "$ino_stream")"
ra_log "windows (pages) of the random reader: ${r[*]}; of the stream: ${s[*]}; $disk at $kb KiB"
((${#r[@]} >= 2 && r[0] == prior / 4 && r[-1] == 1)) ||
	ra_fail "the random reader's windows went ${r[*]}, not from the prior's $((prior / 4)) pages to 1"
((kb > 128)) || ra_fail "$disk went to $kb KiB: the stream's window was cut with the random reader's"
for x in "${s[@]}"; do
	((x > 32)) || ra_fail "the stream read with $x pages: it was cut with the random reader (${s[*]})"
done
ra_ok "the random reader's file alone went from $prior KiB to 4; the stream kept ${s[-1]} pages, $disk $kb KiB"
ra_stop_daemon
