#!/bin/bash
# The tracer reads a CPU's trace buffer when the kernel says it is half
# full, not only once an interval: with an interval of an hour, the events of
# a burst of reads larger than a CPU's buffer are read while it runs. Events
# the kernel overwrites before they can be read (here: while the daemon is
# stopped) are counted and said in the log.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_tracefs
command -v taskset >/dev/null || ra_fail "taskset is not installed"

ra_new_loop burst 1G
dev=$LOOP
udevadm settle
config() {
	ra_config <<CONF
[daemon]
devices = $dev
interval_ms = $1
state_dir = $T/state
CONF
}
# start_daemon MS: a daemon sampling every MS ms, its instance in $instance,
# its device filter set (at the first samples: traced reads show in the log).
start_daemon() {
	config "$1"
	ra_start_daemon
	ra_daemon_log_has "Tracing .*block requests through" || ra_fail "the tracer is not on"
	instance=$(sed -nE 's/.*Tracing .* through (.*)\.$/\1/p' "$T/daemon.log" | tail -n 1)
	[[ -d $instance/per_cpu ]] || ra_fail "no instance at '$instance'"
	[[ -e $instance/buffer_percent ]] ||
		ra_skip_for_kernel "buffer_percent" "its trace buffers cannot wake a reader at a fill level"
	ra_wait_for "small_reads; grep -qE '^$dev: .* traced [1-9][0-9]* requests' '$T/daemon.log'" ||
		ra_fail "$dev: no traced reads with an interval of 300 ms"
}
# read_events, lost_events: what the instance's buffers handed to the daemon
# so far, and what the kernel overwrote unread.
read_events() { cat "$instance"/per_cpu/cpu*/stats | awk -F: '$1 == "read events" { n += $2 } END { print n + 0 }'; }
lost_events() { cat "$instance"/per_cpu/cpu*/stats | awk -F: '$1 == "overrun" { n += $2 } END { print n + 0 }'; }
# small_reads: a few direct 4 KiB reads.
small_reads() { dd if="/dev/$dev" of=/dev/null bs=4k count=16 iflag=direct status=none; }
# burst N: N direct 4 KiB reads from CPU 0, so that they fill its buffer (a
# record is under 100 bytes: 20,000 of them are more than 512 KiB).
burst() { taskset -c 0 dd if="/dev/$dev" of=/dev/null bs=4k count="$1" iflag=direct status=none; }
# A stopped daemon would not see the TERM of the cleanup.
cont_daemon() { [[ -z $DAEMON_PID ]] || kill -CONT "$DAEMON_PID" 2>/dev/null || true; }
RA_HOOKS+=(cont_daemon)

start_daemon 300
# The next sample an hour away: reads go on until a sample after the reload
# has seen them, the last one before the hour (a reload does not move it).
small_reads_forever() { while :; do small_reads; sleep 0.05; done; }
small_reads_forever &
RA_PIDS+=($!)
config 3600000
mark=$(wc -l <"$T/daemon.log")
kill -HUP "$DAEMON_PID"
ra_wait_for "tail -n +$((mark + 1)) '$T/daemon.log' | sed -n '/Configuration reloaded/,\$p' | grep -qE '^$dev: .* traced'" ||
	ra_fail "no sample after the reload"
kill "${RA_PIDS[-1]}"
wait "${RA_PIDS[-1]}" 2>/dev/null || true
unset 'RA_PIDS[-1]'

# Before, the buffers were read at the samples only: nothing until the hour is up.
before=$(read_events)
burst 20000
ra_wait_for "((\$(read_events) > before))" ||
	ra_fail "none of the events of 20000 reads was read while the next sample was an hour away"
ra_ok "$(($(read_events) - before)) events of 20000 reads were read while the next sample was an hour away"
ra_stop_daemon

# Losses: stopped, the daemon cannot read, and the kernel overwrites. Said at
# the next sample, with what they were out of.
start_daemon 300
kill -STOP "$DAEMON_PID"
burst 40000
kill -CONT "$DAEMON_PID"
lost=$(lost_events)
((lost > 0)) || ra_fail "the kernel overwrote nothing while the daemon was stopped"
ra_wait_log "^Tracing lost [1-9][0-9]* of [1-9][0-9]* events in the last [0-9]+ s: the kernel overwrote them"
said=$(sed -nE 's/^Tracing lost ([0-9]+) of.*/\1/p' "$T/daemon.log" | head -n 1)
((said <= $(lost_events))) || ra_fail "said $said lost, the kernel counts $(lost_events)"
ra_ok "the kernel counted $lost lost while the daemon was stopped; said: $(grep -m1 '^Tracing lost' "$T/daemon.log")"

ra_stop_daemon

# A disk that comes while the daemon runs is traced from when it is managed,
# not from the next sample (an hour away here), whose filter would have
# dropped its reads until then.
late=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused 1000)
ra_config <<CONF
[daemon]
devices = $dev loop$late
interval_ms = 3600000
state_dir = $T/state
CONF
ra_start_daemon
ra_daemon_log_has "Tracing .*block requests through" || ra_fail "the tracer is not on"
instance=$(sed -nE 's/.*Tracing .* through (.*)\.$/\1/p' "$T/daemon.log" | tail -n 1)
filter=$instance/events/block/block_rq_issue/filter
kdev() { IFS=: read -r major minor <"/sys/block/$1/dev" && echo $(((major << 20) | minor)); }
ra_wait_for "grep -q 'dev == $(kdev "$dev")' '$filter'" ||
	ra_fail "$dev is not in the block filter after the start: $(cat "$filter")"
ra_new_loop late 64M "$late"
udevadm settle
ra_wait_log "^loop$late: read_ahead_kb "
ra_wait_for "grep -q 'dev == $(kdev "loop$late")' '$filter'" ||
	ra_fail "loop$late, managed, is not in the block filter before the next sample: $(cat "$filter")"
ra_ok "loop$late traced from when it was managed: $(cat "$filter")"
ra_stop_daemon
