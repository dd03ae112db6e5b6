#!/bin/bash
# Bio-based devices: a zram device has no blk-mq queue, so block_rq_issue
# never fires for it; its reads are seen as bios (block_bio_queue). Managed
# beside a loop device (request-based), sequential direct reads of it are
# called sequential and random ones random, from traced bios; each device's
# traced reads are at most the reads its counters show (a loop device's bios
# are not counted on top of its requests), and nearly all of them.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
command -v fio >/dev/null || ra_fail "fio is not installed"
ra_tracefs
[[ -e /sys/kernel/tracing/events/block/block_bio_queue ]] ||
	ra_skip_for_kernel "block_bio_queue tracepoint" "no events/block/block_bio_queue in tracefs"
ra_start_bus

ra_new_zram 128M
zram=$ZRAM
ra_new_loop l 128M
loop=$LOOP
udevadm settle
[[ ! -e /sys/block/$zram/mq && -e /sys/block/$loop/mq ]] ||
	ra_fail "$zram should have no mq directory and $loop one"
# Data to read back: reads of pages never written cost zram nothing.
dd if=/dev/urandom of="/dev/$zram" bs=1M count=64 oflag=direct status=none

# zram is in the default ignore list: this config manages its own one only.
ra_config <<CONF
[daemon]
devices = $zram $loop
ignore =
interval_ms = 500
state_dir = $T/state
CONF
ra_start_daemon
ra_daemon_log_has "Tracing .*block requests through" || ra_fail "the tracer is not on"
ra_wait_log "Tracing the bios of 1 bio-based devices"
ra_ok "block_bio_queue is on for $zram"

ra_traced_run "$zram" sequential --rw=read --bs=128k --rate=16m
ra_traced_run "$zram" random --rw=randread --bs=4k --rate_iops=200
# The loop device's bios fire block_bio_queue too: they are not its requests.
ra_traced_run "$loop" sequential --rw=read --bs=128k --rate=16m

ra_stop_daemon
