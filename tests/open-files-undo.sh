#!/bin/bash
# A stream that a growth of its device's window took along goes back when a
# cut undoes that growth (issue 45: a trial refuted, a pin cleared), and
# racontrol show says so. A reader opens its file on ext4 at a pinned
# 512 KiB and reads it in order, filling each window; the pin goes to 2048
# (it follows: it reads in order), then back to 512: its reads are no
# random waste and it holds its pages, so only the undoing takes it back.
# Pins make the changes: what learning would do meanwhile stays out.
#
# Counted, not timed: the window (ra_pages) of each of its readaheads, from
# a tracefs instance of the test's own (readahead:page_cache_ra_order).
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_tracefs
ra_start_bus

ra_new_loop undo 2G
disk=$LOOP
mkdir "$T/mnt"
mkfs.ext4 -q -F "/dev/$disk" >/dev/null || ra_fail "mkfs.ext4 on $disk failed"
mount "/dev/$disk" "$T/mnt" || ra_fail "cannot mount $disk"
RA_MOUNTS+=("$T/mnt")
dd if=/dev/urandom of="$T/mnt/stream" bs=1M count=768 status=none || ra_fail "cannot write the file"
sync
echo 3 >/proc/sys/vm/drop_caches

trace=/sys/kernel/tracing/instances/radaemon-test-open-files-undo-$$
remove_trace() { [[ ! -d $trace ]] || rmdir "$trace"; }
RA_HOOKS+=(remove_trace)
mkdir "$trace" || ra_fail "cannot make the tracefs instance $trace"
ino=$(stat -c %i "$T/mnt/stream")
read -r major minor <<<"$(stat -c '%t %T' "/dev/$disk")"
echo "s_dev == $(((16#$major << 20) | 16#$minor)) && i_ino == $ino" >"$trace/events/readahead/page_cache_ra_order/filter"
echo 1 >"$trace/events/readahead/page_cache_ra_order/enable"
echo 16384 >"$trace/buffer_size_kb"
windows() { sed -nE "s/.* ino=$(printf %x "$ino") .* ra_pages=([0-9]+).*/\1/p" "$trace/trace"; }

ra_config <<CONF
[daemon]
devices = $disk
state_dir = $T/state
CONF
ra_start_daemon
ra_daemon_log_has "Tracing readahead per file" || ra_fail "the page cache is not traced"
set_kb() {
	"$RACONTROL" set "$disk" "$1" --runtime >/dev/null || ra_fail "racontrol set $disk $1 failed"
	ra_wait_for "[[ \$(ra_kb $disk) == $1 ]]" || ra_fail "$disk is at $(ra_kb "$disk") KiB, not the pin's $1"
}
set_kb 512
# wait_line REGEX: up to 5 s for the daemon to log it.
wait_line() {
	local i
	for i in $(seq 250); do
		grep -qE -- "$1" "$T/daemon.log" && return 0
		sleep 0.02
	done
	return 1
}

# 128 KiB every 4 ms, about 30 MB/s, for up to 25 s: a stream that lasts.
python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
end = time.monotonic() + 25
while time.monotonic() < end and os.read(fd, 128 << 10):
    time.sleep(0.004)
' "$T/mnt/stream" &
reader=$!
RA_PIDS+=("$reader")
sleep 3

set_kb 2048
wait_line "^$disk: python3 \(pid $reader\) reads $T/mnt/stream under the 512 KiB it opened with; now 2048 KiB: it reads in order, filling each window\.$" ||
	ra_fail "the stream did not follow the growth to 2048 KiB: $(grep "^$disk:" "$T/daemon.log" | tail -n 5 | tr '\n' ' ')"
sleep 3
set_kb 512
wait_line "^$disk: python3 \(pid $reader\) reads $T/mnt/stream under the 2048 KiB radaemon gave it; now 512 KiB: the growth that gave it that window was undone\.$" ||
	ra_fail "the stream did not go back to 512 KiB with the pin: $(grep "^$disk:" "$T/daemon.log" | tail -n 5 | tr '\n' ' ')"
sleep 2
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null || true

# Its windows, in pages: 128 (512 KiB), then 512 (2048 KiB), then 128 again.
read -r -a w <<<"$(windows | uniq | tr '\n' ' ')"
ra_log "the stream's windows, in pages, as they changed: ${w[*]}"
[[ ${w[*]} == "128 512 128" ]] || ra_fail "the stream's windows went ${w[*]}, not 128 512 128"
"$RACONTROL" show "$disk" | grep -qE "^Open files: +$T/mnt/stream, read by python3 \(pid $reader\): 2048 -> 512 KiB at .*, the growth that gave it its window was undone \(closed since\)$" ||
	ra_fail "racontrol show does not say the growth was undone: $("$RACONTROL" show "$disk" | grep -A2 '^Open files')"
ra_ok "a stream the growth to 2048 KiB took along went back to 512 KiB with the cut that undid it"
ra_stop_daemon
