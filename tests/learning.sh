#!/bin/bash
# The adaptive policy on an emulated device with costly commands (400 IOPS,
# 300 MB/s): sequential readers that open the device again and again make
# radaemon raise the window; random mmap faults on a fresh device bring a
# large window down. Both are reported on D-Bus with their workload.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_tracefs
ra_start_bus

ra_new_loop seq 4G
seq=$LOOP
ra_set_rotational "$seq" 0
ra_new_loop rnd 64G
rnd=$LOOP
ra_set_rotational "$rnd" 1
udevadm settle
ra_throttle ssd "$seq" 400 300000000
ra_throttle ssd2 "$rnd" 400 300000000
ra_config <<CONF
[daemon]
devices = $seq $rnd
interval_ms = 500
state_dir = $T/state
CONF
ra_start_daemon
ra_daemon_log_has "Tracing .*block requests through" || ra_fail "the tracer is not on"
prior_seq=$(ra_kb "$seq")
prior_rnd=$(ra_kb "$rnd")

property() { "$RACONTROL" show "$1" --json | python3 -c "import json, sys; print(json.load(sys.stdin)['$2'])"; }

# run_watching DEV WANT command...: runs a workload and notes whether D-Bus
# ever called DEV's workload WANT while it ran.
seen=
run_watching() {
	local dev=$1 want=$2 pid
	shift 2
	"$@" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		[[ $(property "$dev" workload) == "$want" ]] && seen=1
		sleep 0.2
	done
	wait "$pid" || ra_fail "the workload failed: $*"
}

# Sequential: each run is a new open, so it reads with the window in force then.
for run in $(seq 10); do
	blockdev --flushbufs "/dev/$seq"
	run_watching "$seq" sequential ra_in_cgroup ssd \
		dd if="/dev/$seq" of=/dev/null bs=4k count=$((128 * 256)) skip=$((run * 128 * 256)) status=none
	kb=$(ra_kb "$seq")
	ra_log "run $run: $seq at $kb KiB"
	((kb >= 4 * prior_seq)) && break
done
[[ -n $seen ]] || ra_fail "$seq: D-Bus never called the workload sequential"
((kb >= 4 * prior_seq)) || ra_fail "$seq: sequential reads left it at $kb KiB (prior $prior_seq)"
[[ $(property "$seq" source) == learned ]] || ra_fail "$seq: the source is not 'learned'"
ra_daemon_log_has "^$seq: read_ahead_kb $prior_seq -> [0-9]+ KiB \(learned, on learning\): Sequential reads fill every" ||
	ra_fail "$seq: no logged reason for the raise"
grep -q "learned=" "$T/state/state" || ra_fail "what was learned is not stored"
ra_ok "sequential: $seq raised from $prior_seq to $kb KiB, with a reason"

# Random mmap faults on the other device.
seen=
for run in $(seq 6); do
	run_watching "$rnd" random ra_in_cgroup ssd2 python3 "$RA_SRCDIR/tests/mmap-faults.py" "/dev/$rnd" 2
	kb=$(ra_kb "$rnd")
	ra_log "run $run: $rnd at $kb KiB"
	((kb <= 16)) && break
done
[[ -n $seen ]] || ra_fail "$rnd: D-Bus never called the workload random"
((kb <= 16)) || ra_fail "$rnd: random mmap reads left it at $kb KiB (prior $prior_rnd)"
ra_daemon_log_has "^$rnd: read_ahead_kb $prior_rnd -> $kb KiB \(learned, on learning\): Random reads dominate" ||
	ra_fail "$rnd: no logged reason for the cut"
ra_ok "random mmap: $rnd cut from $prior_rnd to $kb KiB, with a reason"

# What was learned comes back after a restart, before any read.
ra_stop_daemon
echo 2560 >"/sys/block/$rnd/queue/read_ahead_kb"
ra_start_daemon
[[ $(ra_kb "$rnd") == "$kb" ]] || ra_fail "$rnd: after a restart $(ra_kb "$rnd") KiB, not the learned $kb"
ra_ok "the learned value is back after a restart"
ra_stop_daemon
