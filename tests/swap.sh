#!/bin/bash
# vm.page-cluster with real swap: a zram device and a swap file on an
# emulated rotational disk (a loop device with direct I/O, queue/rotational
# = 1). radaemon sees them come and go (swapon/swapoff), sets the prior of
# the class in use, learns from a process in a memory cgroup that re-reads
# more than its limit sequentially (grows) and at random (shrinks), takes
# pins, yields to someone else's value, and puts the original back (Restore,
# restore_on_exit). The machine's swap and page-cluster are left as found.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
# Swap and page-cluster are the whole machine's: a bench measuring swap-in
# meanwhile would measure this test. Benches hold this lock while they
# measure; it is taken before ra_setup, whose watchdog would count a long
# bench as a hang.
exec 8>/run/radaemon-bench.lock
flock 8
ra_setup
for tool in mkswap swapon swapoff mkfs.ext4; do
	command -v "$tool" >/dev/null || ra_skip "$tool is not installed"
done
if [[ ! -e /sys/class/zram-control ]] && command -v modprobe >/dev/null; then
	modprobe zram num_devices=0 2>/dev/null || true
fi
[[ -e /sys/class/zram-control/hot_add ]] || ra_skip "the kernel has no zram"
[[ -e /proc/sys/vm/page-cluster ]] || ra_skip "the kernel has no swap"
memcg=/sys/fs/cgroup/memory
[[ -e $memcg/memory.limit_in_bytes ]] || ra_skip "no cgroup v1 memory controller"
[[ $(sed 1d /proc/swaps | wc -l) == 0 ]] ||
	ra_fail "this machine has swap of its own: the test needs to be the only one swapping ($(cat /proc/swaps))"

page_cluster() { cat /proc/sys/vm/page-cluster; }
saved_pc=$(page_cluster)
ZRAM=
SWAPS=()
MOUNTED=
WORKLOAD=
put_back() {
	local s
	# Its pages must not hold swapoff up.
	if [[ -n $WORKLOAD ]]; then
		kill "$WORKLOAD" 2>/dev/null || true
		wait "$WORKLOAD" 2>/dev/null || true
	fi
	for s in "${SWAPS[@]}"; do
		swapoff "$s" 2>/dev/null || true
	done
	[[ -z $MOUNTED ]] || umount "$MOUNTED" || ra_log "WARNING: could not unmount $MOUNTED"
	if [[ -n $ZRAM ]]; then
		echo 1 >"/sys/block/zram$ZRAM/reset" 2>/dev/null || true
		echo "$ZRAM" >/sys/class/zram-control/hot_remove || ra_log "WARNING: could not remove zram$ZRAM"
	fi
	[[ ! -d $memcg/radaemon-test-swap ]] || rmdir "$memcg/radaemon-test-swap" ||
		ra_log "WARNING: could not remove $memcg/radaemon-test-swap"
	echo "$saved_pc" >/proc/sys/vm/page-cluster
}
RA_HOOKS+=(put_back)

# A zram device of our own, and a rotational disk with ext4 and a swap file on it.
ZRAM=$(cat /sys/class/zram-control/hot_add)
echo 192M >"/sys/block/zram$ZRAM/disksize"
mkswap "/dev/zram$ZRAM" >/dev/null
ra_new_loop rot 400M
rot=$LOOP
losetup --direct-io=on "/dev/$rot"
ra_set_rotational "$rot" 1
mkfs.ext4 -q "/dev/$rot"
mkdir "$T/mnt"
mount "/dev/$rot" "$T/mnt"
MOUNTED=$T/mnt
dd if=/dev/zero of="$T/mnt/swapfile" bs=1M count=256 status=none
chmod 600 "$T/mnt/swapfile"
mkswap "$T/mnt/swapfile" >/dev/null
udevadm settle

mkdir "$T/state"
ra_config <<CONF
[daemon]
devices = $rot
state_dir = $T/state
interval_ms = 250
[swap]
manage = yes
CONF
ra_start_bus
ra_start_daemon

swap_prop() { ra_busctl get-property org.radaemon.ReadAhead1 /org/radaemon/ReadAhead1/swap org.radaemon.ReadAhead1.Swap "$1"; }
wait_pc() {
	ra_wait_for "[[ \$(page_cluster) == $1 ]]" || ra_fail "page-cluster is $(page_cluster), want $1 ($2)"
}

ra_wait_log "^Swap: No swap area is active"
[[ $(page_cluster) == "$saved_pc" ]] || ra_fail "page-cluster changed without swap"
[[ $(swap_prop TargetPageCluster) == "i -1" ]] || ra_fail "a target without swap: $(swap_prop TargetPageCluster)"
ra_ok "no swap: page-cluster left at $saved_pc, nothing wanted"

# zram: RAM, one page a fault.
swapon -p 100 "/dev/zram$ZRAM"
SWAPS+=("/dev/zram$ZRAM")
wait_pc 0 "zram"
ra_wait_log "^Swap: /dev/zram$ZRAM is on \(zram$ZRAM, zram, priority 100\)"
grep -qx "swap original=$saved_pc" "$T/state/state" || ra_fail "the original is not stored: $(cat "$T/state/state")"
"$RACONTROL" show swap >"$T/show" || ra_fail "racontrol show swap failed"
grep -q "^Device: *  /dev/zram$ZRAM on zram$ZRAM (zram), priority 100" "$T/show" || ra_fail "show swap: $(cat "$T/show")"
grep -q "^Source: *  prior" "$T/show" || ra_fail "show swap: $(cat "$T/show")"
"$RACONTROL" status | grep -q "^swap: vm.page-cluster 0, target 0 (prior, 1 area, zram)" ||
	ra_fail "status has no swap line: $("$RACONTROL" status)"
ra_ok "zram swapon seen through /proc/swaps: page-cluster 0, the original $saved_pc stored"

# The rotational swap file, at a higher priority: it is what the kernel fills first.
swapon -p 200 "$T/mnt/swapfile"
SWAPS+=("$T/mnt/swapfile")
wait_pc 5 "a rotational swap file at the highest priority"
ra_wait_log "^Swap: $T/mnt/swapfile is on \($rot, rotational, priority 200\)"
[[ $(swap_prop ActiveClass) == 's "rotational"' ]] || ra_fail "active class $(swap_prop ActiveClass)"
"$RACONTROL" --json show swap | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["page_cluster"] == 5 and s["target_page_cluster"] == 5, s
assert sorted(d["class"] for d in s["devices"]) == ["rotational", "zram"], s
' || ra_fail "show swap --json is not what the daemon holds"
ra_ok "swap file on a rotational loop device: page-cluster 5"

# A process that needs 3 times its memory limit, re-reading sequentially: read-ahead pages are used.
mkdir "$memcg/radaemon-test-swap"
echo 80M >"$memcg/radaemon-test-swap/memory.limit_in_bytes"
workload() {
	# shellcheck disable=SC2016 # $$ is the inner shell's
	exec sh -c 'echo $$ >"$0/cgroup.procs" && exec python3 "$@"' "$memcg/radaemon-test-swap" \
		"$RA_SRCDIR/tests/swap-workload.py" "$@"
}
stop_workload() {
	kill "$WORKLOAD"
	wait "$WORKLOAD" 2>/dev/null || true
	WORKLOAD=
}
learned_pc() { sed -n 's/.*learned-rotational=\([0-9]*\).*/\1/p' "$T/state/state"; }
workload 240 seq 40 >"$T/seq.log" &
WORKLOAD=$!
up="^Swap: vm.page-cluster 5 -> 6 \(learned, on learning\): [0-9]+ % of [0-9]+ pages read ahead were used, in requests of [0-9]+ KiB"
RA_TIMEOUT=$((60 * RA_SLOWDOWN)) ra_wait_for "ra_daemon_log_has '$up'" ||
	ra_fail "sequential swap-in did not grow page-cluster: $(page_cluster); $(grep -c pass "$T/seq.log") passes"
stop_workload
ra_wait_for "[[ \$(learned_pc) == 6 ]]" || ra_fail "the learned value is not stored: $(cat "$T/state/state")"
ra_ok "sequential re-reads in a memory cgroup: page-cluster learned up from 5 to 6, stored for rotational swap"

# The same at random: the kernel's own window shrinks when read-ahead pages
# go unused, and what little is read ahead is mostly wasted. Nothing says
# grow; radaemon judges so, in words.
before=$(page_cluster)
judged="^Swap: judged at [0-9]+: (Swap-in read [0-9]+ pages with almost no readahead|Only [0-9]+ % of)"
n_before=$(grep -cE "$judged" "$T/daemon.log" || true)
workload 240 rand 40 >"$T/rand.log" &
WORKLOAD=$!
RA_TIMEOUT=$((60 * RA_SLOWDOWN)) ra_wait_for "(( \$(grep -cE '$judged' '$T/daemon.log') >= $((n_before + 3)) ))" ||
	ra_fail "random swap-in was never judged useless for readahead; $(grep -c pass "$T/rand.log") passes"
stop_workload
(($(page_cluster) <= before)) || ra_fail "random swap-in raised page-cluster from $before to $(page_cluster)"
ra_ok "random re-reads: judged '$(grep -E "$judged" "$T/daemon.log" | tail -n 1 | cut -d: -f3- | cut -c2-60)...', page-cluster $before -> $(page_cluster)"

# swapoff: the rotational file goes, zram is what is left.
swapoff "$T/mnt/swapfile"
wait_pc 0 "zram alone again"
ra_wait_log "^Swap: $T/mnt/swapfile is off\.$"
ra_ok "swapoff seen: back to zram's 0"

# Pins, with their range.
"$RACONTROL" set swap 2 >/dev/null || ra_fail "racontrol set swap 2 failed"
[[ $(page_cluster) == 2 ]] || ra_fail "page-cluster $(page_cluster) after set swap 2"
grep -qE "^swap original=$saved_pc pin=2( |\$)" "$T/state/state" || ra_fail "the pin is not stored: $(cat "$T/state/state")"
[[ $(swap_prop Source) == 's "pinned"' ]] || ra_fail "source $(swap_prop Source) after a pin"
out=$("$RACONTROL" set swap 11 2>&1) && ra_fail "page-cluster 11 was accepted"
[[ $out == "racontrol: bad value: swap: page-cluster must be from 0 to 10, not 11." ]] || ra_fail "set swap 11: $out"
out=$("$RACONTROL" set swap x 2>&1) && ra_fail "page-cluster x was accepted"
"$RACONTROL" auto swap >/dev/null || ra_fail "racontrol auto swap failed"
[[ $(page_cluster) == 0 ]] || ra_fail "page-cluster $(page_cluster) after auto swap"
grep -qE "^swap original=$saved_pc( learned-rotational=[0-9]+)?\$" "$T/state/state" || ra_fail "the pin stayed stored: $(cat "$T/state/state")"
ra_ok "set swap 2 pins and stores, 11 is refused, auto swap hands it back"

# Someone else's value is left alone.
echo 5 >/proc/sys/vm/page-cluster
ra_wait_for "[[ \$(swap_prop Source) == 's \"external\"' ]]" || ra_fail "source $(swap_prop Source) after an outside write"
sleep 1
[[ $(page_cluster) == 5 ]] || ra_fail "radaemon overwrote someone else's page-cluster"
ra_ok "an outside write to page-cluster: radaemon yields (Source external)"

# Restore puts the original back and observes; a reload ends that.
"$RACONTROL" restore >/dev/null || ra_fail "racontrol restore failed"
[[ $(page_cluster) == "$saved_pc" ]] || ra_fail "page-cluster $(page_cluster) after restore, want $saved_pc"
"$RACONTROL" reload >/dev/null || ra_fail "racontrol reload failed"
wait_pc 0 "after a reload"
ra_ok "restore puts $saved_pc back; reload, and radaemon decides again"

# Observe mode decides and writes nothing; restore_on_exit puts the original back at exit.
ra_stop_daemon
echo "$saved_pc" >/proc/sys/vm/page-cluster
ra_start_daemon --observe
ra_wait_log "^Swap: would change vm.page-cluster $saved_pc -> 0 \(prior, on start; observe mode\)"
[[ $(page_cluster) == "$saved_pc" ]] || ra_fail "observe mode wrote page-cluster"
ra_stop_daemon
cat >>"$T/radaemon.conf" <<CONF
[swap]
page_cluster = 1
[daemon]
restore_on_exit = yes
CONF
ra_start_daemon
[[ $(page_cluster) == 1 ]] || ra_fail "page-cluster $(page_cluster), want 1 from [swap] page_cluster"
ra_stop_daemon
[[ $(page_cluster) == "$saved_pc" ]] || ra_fail "page-cluster $(page_cluster) after restore_on_exit"
ra_ok "observe mode writes nothing; [swap] page_cluster = 1 applies; restore_on_exit puts $saved_pc back"
