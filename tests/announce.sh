#!/bin/bash
# Every change of a device object's properties is announced on the bus, once:
# with a bus monitor on the objects, each of these must bring exactly one
# PropertiesChanged on the device (or swap) object carrying the new value:
# a value someone else wrote to sysfs (noticed by the sampler), a change
# event making radaemon write, a pin and its end, a FUSE server's INIT
# answer lowering its bdi's window, vm.page-cluster written by someone else
# and by radaemon, and Restore. A client that follows the signals, not
# `racontrol show`, must see what radaemon sees.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
# vm.page-cluster is the whole machine's, as in swap.sh: no bench measures
# swap-in while this test changes it.
exec 8>/run/radaemon-bench.lock
flock 8
ra_setup
ra_start_bus

PC=$RA_SRCDIR/tests/props-changed.py
MISSED=()
MARK=0

# Each case that is not announced exactly once is said, and the test goes on
# to the next, so that one run names all of them; it fails at the end.
missed() {
	ra_log "FAIL: $*" >&2
	MISSED+=("$*")
}

ra_busctl monitor --json=short \
	--match "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'" \
	>"$T/monitor.json" 2>"$T/monitor.err" &
RA_PIDS+=($!)
ra_wait_for "grep -q 'Monitoring bus message stream' '$T/monitor.err'" ||
	ra_fail "busctl monitor did not start: $(cat "$T/monitor.err")"

# Signals are counted from here on.
mark() { MARK=$(python3 "$PC" --lines "$T/monitor.json"); }
count() { python3 "$PC" "$T/monitor.json" "$MARK" "$@"; }
path_of() {
	ra_busctl call org.radaemon.ReadAhead1 /org/radaemon/ReadAhead1 org.radaemon.ReadAhead1.Manager \
		GetDevice s "$1" | cut -d'"' -f2
}

# expect_once WHAT PATH PROPERTY VALUE [PROPERTY VALUE...]: after the action
# since mark, one PropertiesChanged on PATH carries PROPERTY=VALUE; waited
# for, then some sampling intervals later still only one carries PROPERTY at
# all (a change is not said twice), and so for each further pair.
expect_once() {
	local what=$1 path=$2 n
	shift 2
	if ! ra_wait_for "(( \$(count '$path' '$1' '$2') >= 1 ))"; then
		missed "$what: no PropertiesChanged on $path with $1=$2; it carried: $(python3 "$PC" --dump "$T/monitor.json" "$MARK" "$path")"
		return 0
	fi
	sleep 1
	while (($# >= 2)); do
		n=$(count "$path" "$1")
		if ((n != 1)) || (($(count "$path" "$1" "$2") != 1)); then
			missed "$what: $n PropertiesChanged on $path carried $1, want one with $1=$2: $(python3 "$PC" --dump "$T/monitor.json" "$MARK" "$path")"
			return 0
		fi
		shift 2
	done
	ra_ok "$what: one PropertiesChanged on $path"
}

ra_new_loop tiny 505K
tiny=$LOOP
udevadm settle
orig_tiny=$(ra_kb "$tiny")
mkdir "$T/fuse"

# Swap, where this machine lets the test have it to itself: a zram device.
swap=
manage=no
if [[ -e /proc/sys/vm/page-cluster && $(sed 1d /proc/swaps | wc -l) == 0 ]] && command -v mkswap >/dev/null &&
	{ [[ -e /sys/class/zram-control/hot_add ]] || modinfo zram >/dev/null 2>&1; }; then
	swap=1
	manage=yes
	saved_pc=$(cat /proc/sys/vm/page-cluster)
	put_back() {
		[[ -z $ZRAM ]] || swapoff "/dev/$ZRAM" 2>/dev/null || true
		echo "$saved_pc" >/proc/sys/vm/page-cluster
	}
	RA_HOOKS+=(put_back)
	ra_new_zram 64M
	mkswap "/dev/$ZRAM" >/dev/null
else
	ra_log "the swap cases do not run here: no vm.page-cluster, swap already in use, or no zram"
fi

ra_config <<CONF
[daemon]
devices = $tiny
bdis = $T/fuse
interval_ms = 200
state_dir = $T/state
[swap]
manage = $manage
CONF
ra_start_daemon
[[ $(ra_kb "$tiny") == 4 ]] || ra_fail "$tiny not tuned to 4 KiB"
[[ $orig_tiny != 2048 ]] || ra_fail "the test needs $tiny's own value to differ from 2048 KiB"
dev=$(path_of "$tiny")
[[ $dev == /org/radaemon/ReadAhead1/device/* ]] || ra_fail "no object for $tiny: $dev"

# Someone else writes the window: the sampler notices, radaemon yields.
mark
echo 2048 >"/sys/block/$tiny/queue/read_ahead_kb"
expect_once "an external write" "$dev" ReadAheadKB 2048 Source external

# A change event: radaemon decides again and writes.
mark
echo change >"/sys/block/$tiny/uevent"
expect_once "a decision on a change event" "$dev" ReadAheadKB 4 Source prior
[[ $(ra_kb "$tiny") == 4 ]] || ra_fail "$tiny is $(ra_kb "$tiny") KiB after the change event"

# A pin over D-Bus, and its end.
mark
"$RACONTROL" set "$tiny" 64 --runtime >/dev/null || ra_fail "racontrol set $tiny 64 failed"
expect_once "a pin" "$dev" ReadAheadKB 64 Source pinned
mark
"$RACONTROL" auto "$tiny" >/dev/null || ra_fail "racontrol auto $tiny failed"
expect_once "the end of a pin" "$dev" ReadAheadKB 4 Source prior

# A FUSE server that answers INIT late, lowering its bdi's window to 32 KiB
# after radaemon has found (and published) the bdi.
if [[ -c /dev/fuse && -x $RA_BUILDDIR/tests/ra-testfs ]]; then
	mark
	"$RA_BUILDDIR/tests/ra-testfs" --files 1 --size-mib 1 --max-readahead-kb 32 --init-delay-ms 500 "$T/fuse" ||
		ra_fail "ra-testfs did not mount"
	RA_MOUNTS+=("$T/fuse")
	fuse=$(mountpoint -d "$T/fuse")
	ra_wait_for "path_of $fuse >/dev/null 2>&1" || ra_fail "no object for the FUSE bdi $fuse"
	fpath=$(path_of "$fuse")
	ra_wait_log "^$fuse: the FUSE server lowered the window to 32 KiB at INIT"
	[[ $(ra_bdi_kb "$fuse") == 32 ]] ||
		ra_fail "the FUSE bdi $fuse holds $(ra_bdi_kb "$fuse") KiB, not the server's 32"
	expect_once "a FUSE server's INIT answer" "$fpath" ReadAheadKB 32 TargetKB 32
	ra_undo_mounts
	ra_wait_log "^$fuse: unmounted"
else
	missed "a FUSE server's INIT answer: not run, no /dev/fuse or no tests/ra-testfs"
fi

if [[ -n $swap ]]; then
	sw=/org/radaemon/ReadAhead1/swap
	pc() { cat /proc/sys/vm/page-cluster; }
	# radaemon writes zram's 0 once the swap area is on; then someone else writes 5.
	mark
	swapon "/dev/$ZRAM"
	ra_wait_for "[[ \$(pc) == 0 ]]" || ra_fail "page-cluster is $(pc) with zram swap, want 0"
	if [[ $saved_pc != 0 ]]; then
		expect_once "vm.page-cluster written by radaemon" "$sw" PageCluster 0 TargetPageCluster 0
	else
		sleep 1
	fi
	mark
	echo 5 >/proc/sys/vm/page-cluster
	expect_once "vm.page-cluster written by someone else" "$sw" PageCluster 5 Source external
	mark
	"$RACONTROL" set swap 2 --runtime >/dev/null || ra_fail "racontrol set swap 2 failed"
	expect_once "vm.page-cluster pinned" "$sw" PageCluster 2 Source pinned
fi

# Restore: the window before radaemon, and page-cluster, put back.
mark
"$RACONTROL" restore >/dev/null || ra_fail "racontrol restore failed"
[[ $(ra_kb "$tiny") == "$orig_tiny" ]] || ra_fail "restore left $tiny at $(ra_kb "$tiny") KiB"
expect_once "a restore" "$dev" ReadAheadKB "$orig_tiny"
if [[ -n $swap ]]; then
	[[ $saved_pc == 2 ]] || expect_once "a restore of vm.page-cluster" "$sw" PageCluster "$saved_pc"
	swapoff "/dev/$ZRAM"
fi
ra_stop_daemon

((${#MISSED[@]} == 0)) || ra_fail "${#MISSED[@]} change(s) not announced exactly once: $(printf '\n  %s' "${MISSED[@]}")"
