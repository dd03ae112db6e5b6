# shellcheck shell=bash
# Shared by the integration tests: they run the real daemon against loop
# devices they create, with a real udevd, and put everything back afterwards.
#
# A test sources this file, calls ra_setup, and uses the helpers below. Only
# loop devices made with ra_new_loop are touched: every daemon a test starts
# has an allow-list of exactly those (and of zram devices made with
# ra_new_zram).

set -euo pipefail

RA_SRCDIR=${RA_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
RA_BUILDDIR=${RA_BUILDDIR:-$RA_SRCDIR}
RADAEMON=$RA_BUILDDIR/daemon/radaemon
# Under make check-valgrind the daemon and racontrol run under valgrind.
VALGRIND_RUN=$RA_SRCDIR/tests/valgrind-run
RA_TIMEOUT=${RA_TIMEOUT:-10}
# A whole test that runs longer than this has hung: it fails, and cleans up.
RA_TEST_LIMIT=${RA_TEST_LIMIT:-300}

T=
LOOP= # set by ra_new_loop and ra_new_free_loop for the caller
export LOOP
DAEMON_PID=
UDEVD_PID=
BUS_PID=
CGROUPS=()
TRACEFS_MOUNTED=
RA_LOOPS=()
RA_ZRAMS=()       # indexes of the zram devices ra_new_zram made
RA_ZRAM_MODULE= # set when this test loaded the zram module
RA_RULES=()     # udev rule files this test installed
RA_RULES_MKDIR= # set when this test created /run/udev/rules.d
RA_PIDS=()      # other background processes this test started
RA_MOUNTS=()    # mount points this test mounted, unmounted last first
RA_HOOKS=()     # functions ra_cleanup calls first, to undo what a test did
RA_OWN_DIRS=()  # directories of the test's own outside $T, whose mount points bdis= may name

ra_log() { printf '%s: %s\n' "$(basename "$0")" "$*"; }

# A test that cannot run here says why and exits 77, unless the caller said
# every test must run (CI), where a skip is a failure.
ra_skip() {
	ra_log "SKIP: $*"
	if [[ ${RA_TESTS_NO_SKIP:-0} == 1 ]]; then
		ra_log "RA_TESTS_NO_SKIP=1: a skip here is a failure"
		exit 1
	fi
	exit 77
}

# ra_skip_for_kernel FEATURE WHY: the one skip allowed in CI, for a kernel
# feature this machine lacks (the caller has checked that it does). It is
# named in the test's log and listed in $RA_SKIPPED_FEATURES, which
# run-tests prints at the end: skipped, not passed, and not failed.
ra_skip_for_kernel() {
	ra_log "SKIP: this kernel has no $1: $2"
	[[ -z ${RA_SKIPPED_FEATURES:-} ]] || printf '%s: %s (%s)\n' "$(basename "$0")" "$1" "$2" >>"$RA_SKIPPED_FEATURES"
	exit 77
}

ra_fail() {
	ra_log "FAIL: $*" >&2
	if [[ -n $T && -s $T/daemon.log ]]; then
		echo "--- daemon log:" >&2
		tail -n 60 "$T/daemon.log" >&2
	fi
	exit 1
}

ra_ok() { ra_log "ok: $*"; }

# Polls a shell condition until it holds or RA_TIMEOUT seconds pass. The
# timeout only bounds a hang; no test asserts on how fast anything is.
ra_wait_for() {
	local deadline=$((SECONDS + RA_TIMEOUT))
	until eval "$1"; do
		((SECONDS < deadline)) || return 1
		sleep 0.02
	done
}

ra_kb() { cat "/sys/block/$1/queue/read_ahead_kb"; }
# ra_bdi_kb NAME: a bdi's read_ahead_kb ("btrfs-3", "0:52").
ra_bdi_kb() { cat "/sys/class/bdi/$1/read_ahead_kb"; }
# ra_btrfs_bdi PATH: the bdi of the btrfs on PATH, one of its devices or where it is mounted.
ra_btrfs_bdi() { basename "$(readlink "/sys/fs/btrfs/$(btrfs filesystem show --raw "$1" | sed -n 's/.*uuid: //p')/bdi")"; }

ra_wait_kb() {
	ra_wait_for "[[ \$(ra_kb $1) == $2 ]]" ||
		ra_fail "$1: read_ahead_kb is $(ra_kb "$1"), expected $2"
}

# ra_own_namespaces: runs the test again, from the start, in a mount and a
# network namespace of its own, with an empty /run/udev, so that it starts a
# udevd of its own (ra_start_udevd) beside any the machine runs, as every
# installed system does, and without disturbing it:
# - udevd's control socket, queue and database are in /run/udev: udevadm in
#   the test talks to the test's udevd only, and rules, reloads and a hwdb
#   bound over the machine's stay in the test's namespace;
# - the kernel sends its uevents to every network namespace, so both udevds
#   see the test's devices; each sends what it made of an event only to its
#   own namespace, so the test's daemon never gets the machine's udevd's
#   view of them, and nothing on the machine gets the test's. The machine's
#   udevd runs its own rules on the test's loop devices, as on any loop
#   device anyone attaches; the test's rules are fenced to the test's devices;
# - the test's mounts stay in its namespace, and go with it.
# A test that checks the machine itself (its udevd, its systemd, a package
# installed on it) sets RA_MACHINE_NAMESPACES=1 before ra_setup.
ra_own_namespaces() {
	[[ ${RA_MACHINE_NAMESPACES:-0} != 1 ]] || return 0
	if [[ -z ${RA_OWN_NAMESPACES:-} ]]; then
		command -v unshare >/dev/null || ra_skip "unshare is not installed (util-linux)"
		export RA_OWN_NAMESPACES=1
		exec unshare --mount --net --propagation private -- "$BASH" "$0"
	fi
	mkdir -p /run/udev
	mount -t tmpfs -o mode=0755,size=64M radaemon-test-udev /run/udev ||
		ra_fail "cannot mount an empty /run/udev in the test's namespace"
	ip link set lo up 2>/dev/null || true
}

ra_setup() {
	[[ $(id -u) == 0 ]] || ra_skip "needs root for loop devices and sysfs"
	[[ -w /dev/loop-control ]] || ra_skip "no /dev/loop-control"
	[[ -x $RADAEMON ]] || ra_fail "no daemon at $RADAEMON; run make first"
	ra_own_namespaces

	T=$(mktemp -d /tmp/radaemon-test.XXXXXX)
	trap ra_cleanup EXIT

	# Under make check-valgrind, racontrol runs under valgrind too: a script,
	# so that runuser and background jobs can run it like the binary.
	if [[ ${RA_VALGRIND:-0} == 1 ]]; then
		printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$VALGRIND_RUN" "$RACONTROL" >"$T/racontrol"
		chmod 755 "$T/racontrol"
		RACONTROL=$T/racontrol
	fi

	# One integration test at a time: they share udevd and the loop range.
	exec 9>/run/radaemon-tests.lock
	flock 9
	# A daemon mounts tracefs where it is not mounted (and unmounts it at
	# exit); one that is killed cannot: the test leaves tracefs as it found it.
	mountpoint -q /sys/kernel/tracing || TRACEFS_MOUNTED=1
	ra_watchdog
	ra_start_udevd
}

# ra_watchdog: a test that hangs fails after RA_TEST_LIMIT seconds instead of
# holding up the suite. The watchdog kills what the test waits on, so that the
# shell gets to run its USR1 trap: ra_fail, then ra_cleanup as on any failure.
ra_watchdog() {
	local main=$$ limit=$((RA_TEST_LIMIT * RA_SLOWDOWN))
	trap 'ra_fail "still running after ${RA_TEST_LIMIT}s: it hangs"' USR1
	(
		exec 9>&- # the lock is the test's, not the watchdog's
		for ((i = 0; i < limit; i++)); do
			sleep 1
			kill -0 "$main" 2>/dev/null || exit 0
		done
		kill -USR1 "$main" 2>/dev/null || exit 0
		sleep 1
		pkill -TERM -P "$main" 2>/dev/null || true
	) &
}

ra_udevd_runs() { udevadm control --ping -t 1 >/dev/null 2>&1; }

ra_start_udevd() {
	ra_udevd_runs && return 0
	local udevd
	for udevd in /lib/systemd/systemd-udevd /usr/lib/systemd/systemd-udevd; do
		[[ -x $udevd ]] && break
	done
	[[ -x $udevd ]] || ra_skip "systemd-udevd is not installed"
	"$udevd" >"$T/udevd.log" 2>&1 &
	UDEVD_PID=$!
	ra_wait_for ra_udevd_runs || ra_fail "udevd did not start"
}

# ra_new_loop NAME SIZE [INDEX]: attaches a sparse file as a new loop device
# and sets LOOP to its kernel name. Without INDEX, the first unused one from 1000.
ra_new_loop() {
	local name=$1 size=$2 index=${3:-}
	[[ -n $index ]] || index=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused 1000)
	truncate -s "$size" "$T/$name.img"
	RA_LOOPS+=("$index")
	losetup "/dev/loop$index" "$T/$name.img"
	LOOP=loop$index
}

# ra_new_free_loop: a loop device with no file (size 0), as LOOP.
ra_new_free_loop() {
	local index
	index=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused 1000)
	RA_LOOPS+=("$index")
	python3 "$RA_SRCDIR/tests/loopdev.py" add "$index"
	LOOP=loop$index
}

# Detaches and deletes a loop device. A detach while udevd still has the
# device open only takes effect at its close, so removal waits for that.
ra_remove_loop() {
	local index=${1#loop}
	[[ -e /sys/block/loop$index ]] || return 0
	losetup -d "/dev/loop$index" 2>/dev/null || true
	python3 "$RA_SRCDIR/tests/loopdev.py" remove "$index" ||
		ra_log "WARNING: could not remove loop$index"
}

# ra_stalled_loops N: N read-only loop devices (direct I/O where the loop
# driver takes it) over the files of a ra-testfs at $T/fuse whose reads wait
# while $T/stall exists, as STALLED: a disk over a server that stopped
# answering. At the end the reads go again and the devices are detached
# before the mount goes.
STALLED=()
ra_release_stalled() {
	local dev
	rm -f "$T/stall"
	for dev in "${STALLED[@]}"; do
		ra_remove_loop "$dev"
	done
}
ra_stalled_loops() {
	local i index
	[[ -c /dev/fuse && -x $RA_BUILDDIR/tests/ra-testfs ]] || ra_skip "no /dev/fuse or no tests/ra-testfs"
	mkdir "$T/fuse"
	"$RA_BUILDDIR/tests/ra-testfs" --files "$1" --size-mib 64 --stall-while "$T/stall" "$T/fuse" ||
		ra_fail "ra-testfs did not mount"
	RA_MOUNTS+=("$T/fuse")
	RA_HOOKS+=(ra_release_stalled)
	for ((i = 0; i < $1; i++)); do
		index=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused 1000)
		RA_LOOPS+=("$index")
		losetup -r --direct-io=on "/dev/loop$index" "$T/fuse/file-00$i" 2>/dev/null ||
			losetup -r "/dev/loop$index" "$T/fuse/file-00$i" || ra_fail "cannot attach a loop device to ra-testfs"
		STALLED+=("loop$index")
	done
}

# ra_user_dir NAME DEPTH: a directory for an unprivileged user's FUSE mounts,
# as U, owned by nobody once the test has made what it needs in it
# (ra_user_dir_give); under /srv, as /tmp's mounts are never stored
# (ra_state_entry_is_stored()). LONG is DEPTH directories of 250 bytes below
# it (mount points of thousands of bytes). Every mount beneath U is
# unmounted at the end through fusermount3 (root cannot look into a user's
# FUSE mount without allow_other). ra_as_nobody runs a command as nobody.
ra_as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
ra_remove_user_dir() {
	local m
	# mountinfo writes a newline or an ESC in a name as \012, \033: printf %b reads them.
	awk -v u="$U" '$5 == u || index($5, u "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while IFS= read -r m; do
			fusermount3 -u -z "$(printf '%b' "$m")" 2>/dev/null || true
		done
	rm -rf "$U"
}
ra_user_dir() {
	local i
	[[ -u $(command -v fusermount3 || echo /nonexistent) ]] || ra_skip "no setuid fusermount3"
	command -v setpriv >/dev/null || ra_skip "setpriv is not installed"
	U=$(mktemp -d "/srv/radaemon-$1.XXXXXX")
	RA_HOOKS+=(ra_remove_user_dir)
	RA_OWN_DIRS+=("$U")
	LONG=$U
	for ((i = 0; i < $2; i++)); do
		LONG=$LONG/$(printf 'd%.0s' {1..250})
	done
	mkdir -p "$LONG"
}
ra_user_dir_give() { chown -R nobody:nogroup "$U"; }

# ra_new_zram SIZE: a new zram device of SIZE (bio-based: no blk-mq queue)
# as ZRAM, removed again on exit. Devices that were there are left alone.
ZRAM=
export ZRAM
ra_new_zram() {
	local index
	if [[ ! -e /sys/class/zram-control/hot_add ]] && command -v modprobe >/dev/null; then
		# num_devices=0: every device there is then one of ours.
		modprobe zram num_devices=0 2>/dev/null && RA_ZRAM_MODULE=1
	fi
	[[ -e /sys/class/zram-control/hot_add ]] ||
		ra_skip_for_kernel zram "no /sys/class/zram-control, and no zram module to load"
	index=$(cat /sys/class/zram-control/hot_add)
	RA_ZRAMS+=("$index")
	echo "$1" >"/sys/block/zram$index/disksize"
	ZRAM=zram$index
}

ra_remove_zrams() {
	local index
	for index in "${RA_ZRAMS[@]}"; do
		# Busy while udevd still has it open: once more after it closed it.
		echo "$index" >/sys/class/zram-control/hot_remove 2>/dev/null ||
			{ udevadm settle 2>/dev/null; echo "$index" >/sys/class/zram-control/hot_remove; } ||
			ra_log "WARNING: could not remove zram$index"
	done
	RA_ZRAMS=()
	[[ -z $RA_ZRAM_MODULE ]] || modprobe -r zram || ra_log "WARNING: could not unload zram"
}

# Loop devices take their rotational flag from the backing disk; set it and
# tell udev, as docs/design.md describes.
ra_set_rotational() {
	echo "$2" >"/sys/block/$1/queue/rotational"
	echo change >"/sys/block/$1/uevent"
}

# ra_config: writes $T/radaemon.conf from stdin. The [daemon] devices= line
# must name only loop (and zram) devices this test made, and bdis= only mount points
# below $T (none when the test says nothing), so nothing else is touched.
# vm.page-cluster is the whole machine's: unless the test has a [swap]
# section of its own, its daemon leaves it alone (manage = no, appended).
# Nor does it calibrate disks, unless the test says calibrate=.
ra_config() {
	cat >"$T/radaemon.conf"
	grep -q '^\[swap\]' "$T/radaemon.conf" || printf '\n[swap]\nmanage = no\n' >>"$T/radaemon.conf"
	# A calibration reads each new disk once and changes its value an
	# interval later: only tests/calibrate.sh, which says calibrate=, has one.
	grep -qE '^calibrate *=' "$T/radaemon.conf" || printf '\n[policy]\ncalibrate = no\n' >>"$T/radaemon.conf"
	# The state of the test's own, never the machine's /var/lib/radaemon (nor, in
	# distcheck, an install prefix with no var/lib, where no original could be saved).
	grep -qE '^state_dir *=' "$T/radaemon.conf" || printf '\n[daemon]\nstate_dir = %s\n' "$T/state" >>"$T/radaemon.conf"
	# -a: a mount point may be any bytes, which grep would call binary (tests/utf8.sh).
	local line word dir
	grep -qaE '^devices *=' "$T/radaemon.conf" || ra_fail "test config has no devices= allow-list"
	# With the indented lines that continue it (a long list).
	line=$(LC_ALL=C awk '/^devices *=/ { sub(/^[^=]*=/, ""); on = 1; print; next }
		on && /^[ \t]+[^ \t]/ && !/=/ { print; next } { on = 0 }' "$T/radaemon.conf")
	for word in $line; do
		[[ $word =~ ^loop[0-9]+$ ]] && continue
		[[ $word =~ ^zram([0-9]+)$ && " ${RA_ZRAMS[*]} " == *" ${BASH_REMATCH[1]} "* ]] && continue
		ra_fail "test config allows '$word', not a single loop device or a zram device of the test's"
	done
	# bdis (btrfs, FUSE, NFS mounts) are managed only where the test says:
	# mount points of its own, below $T, or the name of a btrfs bdi not made
	# yet (the next ones the test's own mounts will make).
	if line=$(grep -aE '^bdis *=' "$T/radaemon.conf"); then
		for word in ${line#*=}; do
			[[ $word =~ ^btrfs-[0-9]+$ && ! -e /sys/class/bdi/$word ]] && continue
			[[ $word == "$T"/* ]] && continue
			# Outside /tmp, whose mounts are never stored: a directory the test made (tests/fuse-quota.sh).
			for dir in "${RA_OWN_DIRS[@]}"; do
				[[ $word == "$dir"/* ]] && continue 2
			done
			ra_fail "test config allows bdi '$word', not a mount point below $T"
		done
	else
		# At the end, so the line numbers a test expects in errors stay.
		printf '\n[daemon]\nbdis =\n' >>"$T/radaemon.conf"
	fi
}

# ra_start_bus: a private system bus whose policy is the project's own file,
# as DBUS_SYSTEM_BUS_ADDRESS for the daemon, racontrol and busctl.
ra_start_bus() {
	chmod 755 "$T" # other users talk to it too
	cat >"$T/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$T/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_destination="org.freedesktop.DBus"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
  </policy>
  <include>$RA_SRCDIR/daemon/org.radaemon.ReadAhead1.conf</include>
</busconfig>
CONF
	dbus-daemon --config-file="$T/bus.conf" --nofork --nopidfile >"$T/bus.log" 2>&1 &
	BUS_PID=$!
	export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/system_bus_socket
	ra_wait_for "[[ -S $T/system_bus_socket ]]" || ra_fail "dbus-daemon did not start"
}

export RACONTROL=$RA_BUILDDIR/racontrol/racontrol
# Everything takes this many times longer under valgrind.
RA_SLOWDOWN=1
[[ ${RA_VALGRIND:-0} != 1 ]] || RA_SLOWDOWN=6
RA_TIMEOUT=$((RA_TIMEOUT * RA_SLOWDOWN))

# busctl against the private bus, with the daemon's name filled in.
ra_busctl() { busctl --address="$DBUS_SYSTEM_BUS_ADDRESS" "$@"; }

# ra_tracefs: block tracepoints for the daemon, as systemd mounts them on a
# real system. Mounted here only if they are not, and unmounted afterwards.
ra_tracefs() {
	[[ -d /sys/kernel/tracing/instances ]] && return 0
	mount -t tracefs nodev /sys/kernel/tracing || ra_skip "cannot mount tracefs"
}

# ra_throttle NAME DEV IOPS BPS: a blkio cgroup (v1) that gives DEV a cost per
# command (IOPS) and a media bandwidth (BPS), as docs/design.md's emulation does.
# Run a workload in it with ra_in_cgroup NAME command...
ra_throttle() {
	local dir=/sys/fs/cgroup/blkio/radaemon-test-$1 devnum
	[[ -e /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]] || ra_skip "no cgroup v1 blkio throttle"
	devnum=$(cat "/sys/block/$2/dev")
	mkdir "$dir"
	CGROUPS+=("$dir")
	echo "$devnum $3" >"$dir/blkio.throttle.read_iops_device"
	echo "$devnum $4" >"$dir/blkio.throttle.read_bps_device"
}

ra_in_cgroup() {
	local dir=/sys/fs/cgroup/blkio/radaemon-test-$1
	shift
	# shellcheck disable=SC2016 # $$ is the inner shell's
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$dir" "$@"
}

ra_start_daemon() {
	# Emptied here, not by the background job's redirection, which could come
	# after the wait below has already seen the last daemon's "Managing".
	: >"$T/daemon.log"
	"$VALGRIND_RUN" "$RADAEMON" --foreground --debug --config "$T/radaemon.conf" "$@" >>"$T/daemon.log" 2>&1 &
	DAEMON_PID=$!
	ra_wait_for "grep -q '^Managing' '$T/daemon.log'" || ra_fail "the daemon did not start"
}

# Stops the daemon with a signal (TERM by default) and fails unless it exits 0.
ra_stop_daemon() {
	local sig=${1:-TERM} rc=0
	[[ -n $DAEMON_PID ]] || return 0
	kill "-$sig" "$DAEMON_PID"
	wait "$DAEMON_PID" || rc=$?
	DAEMON_PID=
	((rc == 0)) || ra_fail "the daemon exited with $rc after SIG$sig"
}

ra_daemon_log_has() { grep -qE "$1" "$T/daemon.log"; }

ra_wait_log() {
	local deadline=$((SECONDS + RA_TIMEOUT))
	until grep -qE -- "$1" "$T/daemon.log"; do
		((SECONDS < deadline)) || ra_fail "the daemon never logged /$1/"
		sleep 0.02
	done
}

# ra_property DEV KEY: one field of racontrol show --json.
ra_property() { "$RACONTROL" show "$1" --json | python3 -c "import json, sys; print(json.load(sys.stdin)['$2'])"; }

# ra_traced DEV FROM: the reads the tracer saw on DEV, summed over the debug
# log's interval lines after line FROM (idle intervals, under 4 reads, log
# none).
ra_traced() {
	tail -n "+$(($2 + 1))" "$T/daemon.log" |
		sed -nE "s/^$1: .* traced ([0-9]+) requests, .*/\\1/p" | awk '{ n += $1 } END { print n + 0 }'
}

# ra_traced_run DEV WANT fio-arguments...: a paced direct-I/O fio job of 4 s
# on the first 64 MiB of DEV. Fails unless D-Bus called DEV's workload WANT
# while it ran, from block evidence, and unless the tracer saw 90 to 100 %
# of the reads DEV's own counters show: none lost, none counted twice (a
# request-based disk's bios are not its requests; a device's own requests
# are not the disk's beneath).
ra_traced_run() {
	local dev=$1 want=$2 pid mark before after seen='' n
	shift 2
	command -v fio >/dev/null || ra_fail "fio is not installed"
	ra_wait_for "[[ \$(ra_property $dev workload) == idle ]]" || ra_fail "$dev is not idle before the run"
	mark=$(wc -l <"$T/daemon.log")
	before=$(awk '{ print $1 }' "/sys/block/$dev/stat")
	fio --name=r --filename="/dev/$dev" --direct=1 --ioengine=psync --size=64m --time_based --runtime=4 \
		--randrepeat=0 --output=/dev/null "$@" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		[[ $(ra_property "$dev" workload) == "$want" ]] && seen=1
		sleep 0.2
	done
	wait "$pid" || ra_fail "fio failed on $dev: $*"
	after=$(awk '{ print $1 }' "/sys/block/$dev/stat")
	ra_wait_for "[[ \$(ra_property $dev workload) == idle ]]" || ra_fail "$dev: still busy after the run"
	[[ -n $seen ]] || ra_fail "$dev: D-Bus never called the workload $want ($*)"
	[[ $(ra_property "$dev" evidence) == block ]] || ra_fail "$dev: evidence $(ra_property "$dev" evidence)"
	n=$(ra_traced "$dev" "$mark")
	((n <= after - before)) || ra_fail "$dev: traced $n reads, its counters show $((after - before))"
	((n * 10 >= (after - before) * 9)) || ra_fail "$dev: traced only $n of $((after - before)) reads"
	ra_ok "$dev: $want, $n of $((after - before)) reads traced ($*)"
}

# ra_udev_rule NAME: installs stdin as /run/udev/rules.d/NAME for this test
# only (removed again on exit, whatever happens) and has udevd load it. A
# rule must match only this test's loop devices. Not in a pipeline: the file
# must be remembered by this shell, not a subshell.
ra_udev_rule() {
	local path=/run/udev/rules.d/$1
	[[ $BASHPID == "$$" ]] || ra_fail "ra_udev_rule $1 in a subshell: it would outlive the test"
	if [[ ! -d /run/udev/rules.d ]]; then
		mkdir /run/udev/rules.d
		RA_RULES_MKDIR=1
	fi
	RA_RULES+=("$path")
	cat >"$path"
	udevadm control --reload || ra_fail "udevadm control --reload failed"
}

# ra_shipped_rule FENCE: the shipped rule, with this build's helper and
# the test's configuration, for the kernel names FENCE matches only.
ra_shipped_rule() {
	local helper="$RA_BUILDDIR/udev/radaemon-udev --config $T/radaemon.conf"
	sed -E "s|IMPORT\{program\}=\"[^ \"]*/radaemon-udev |IMPORT{program}=\"$helper |" \
		"$RA_BUILDDIR/udev/60-radaemon.rules" >"$T/rule"
	grep -qF "IMPORT{program}=\"$helper \$kernel\"" "$T/rule" || ra_fail "cannot point the rule at the build's helper"
	{
		echo "KERNEL!=\"$1\", GOTO=\"radaemon_end\""
		cat "$T/rule"
	} >"$T/fenced.rules"
	ra_udev_rule 60-radaemon-test.rules <"$T/fenced.rules"
}

# The bench's device models (bench/devmodel): ra_devmodel_attach CLASS sets
# DEV to the loop device of a new model of CLASS, detached at the end;
# ra_devmodel_stat DEV KEY is what the model counted (commands, bytes, seeks).
RA_DEVMODEL_SERVER=$RA_BUILDDIR/bench/ra-devmodel
RA_DEVMODEL=(python3 "$RA_SRCDIR/bench/devmodel" --builddir "$RA_BUILDDIR")
RA_DEVMODELS=()
# A file system on a modelled disk holds its loop device: unmounted first, or
# the detach fails and leaves the model's server running.
ra_devmodel_detach_all() {
	local dev
	ra_undo_mounts
	for dev in "${RA_DEVMODELS[@]}"; do
		"${RA_DEVMODEL[@]}" detach "$dev" 2>/dev/null || true
	done
}
ra_devmodel_attach() {
	local out
	[[ -x $RA_DEVMODEL_SERVER ]] ||
		ra_fail "no $RA_DEVMODEL_SERVER: configure found no libfuse3 (install-deps --tests installs libfuse3-dev)"
	((${#RA_DEVMODELS[@]})) || RA_HOOKS+=(ra_devmodel_detach_all)
	out=$("${RA_DEVMODEL[@]}" attach "$1") || ra_fail "attach $1 failed"
	DEV=$(basename "$(tail -n 1 <<<"$out")")
	RA_DEVMODELS+=("$DEV")
	udevadm settle -t 10 || true
}
ra_devmodel_stat() { "${RA_DEVMODEL[@]}" stats "$1" | awk -v k="$2" '$1 == k { print $2 }'; }

# ra_expect STATUS PATTERN racontrol-arguments...: racontrol exits with
# STATUS and says one line on stderr that matches PATTERN (an ERE); its
# output is left in $T/out, its line in $T/err.
ra_expect() {
	local want=$1 pattern=$2 rc=0
	shift 2
	"$RACONTROL" "$@" >"$T/out" 2>"$T/err" || rc=$?
	((rc == want)) || ra_fail "racontrol $*: status $rc, want $want ($(cat "$T/err"))"
	[[ $(wc -l <"$T/err") == 1 ]] || ra_fail "racontrol $*: not one line: $(cat "$T/err")"
	grep -qE -- "$pattern" "$T/err" || ra_fail "racontrol $*: '$(cat "$T/err")' does not match /$pattern/"
}

# ra_undo_mounts: unmounts what the test listed in RA_MOUNTS, last first (a
# lazy unmount where something still holds it); ra_cleanup does it too.
ra_undo_mounts() {
	local i
	for ((i = ${#RA_MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${RA_MOUNTS[i]}" 2>/dev/null || umount -l "${RA_MOUNTS[i]}" 2>/dev/null ||
			ra_log "WARNING: could not unmount ${RA_MOUNTS[i]}"
	done
	RA_MOUNTS=()
}

ra_cleanup() {
	local rc=$? index rule pid hook dir
	for hook in "${RA_HOOKS[@]}"; do
		"$hook" || ra_log "WARNING: $hook failed"
	done
	ra_undo_mounts
	if [[ -n $DAEMON_PID ]]; then
		kill "$DAEMON_PID" 2>/dev/null || true
		wait "$DAEMON_PID" 2>/dev/null || true
	fi
	for pid in "${RA_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	# Rules go before the loop devices, so no event of theirs meets them.
	if ((${#RA_RULES[@]} > 0)); then
		for rule in "${RA_RULES[@]}"; do
			rm -f "$rule"
		done
		[[ -z $RA_RULES_MKDIR ]] || rmdir /run/udev/rules.d 2>/dev/null || true
		udevadm control --reload 2>/dev/null || true
	fi
	for index in "${RA_LOOPS[@]}"; do
		ra_remove_loop "$index"
	done
	ra_remove_zrams
	for dir in "${CGROUPS[@]}"; do
		rmdir "$dir" 2>/dev/null || ra_log "WARNING: could not remove $dir"
	done
	if [[ -n $BUS_PID ]]; then
		kill "$BUS_PID" 2>/dev/null || true
		wait "$BUS_PID" 2>/dev/null || true
	fi
	if [[ -n $UDEVD_PID ]]; then
		kill "$UDEVD_PID" 2>/dev/null || true
		wait "$UDEVD_PID" 2>/dev/null || true
	fi
	if [[ -n $TRACEFS_MOUNTED ]] && mountpoint -q /sys/kernel/tracing; then
		umount /sys/kernel/tracing 2>/dev/null || ra_log "WARNING: could not unmount tracefs"
	fi
	[[ -n $T ]] && rm -rf "$T"
	exit "$rc"
}

# The Debian release the tests that build a root build it from (mmdebstrap,
# tests/builddeps.sh, tests/vm.sh): RA_DEBIAN=bookworm (Debian 12, the
# default) or trixie (Debian 13). ./run-tests runs those tests for both.
RA_DEBIAN=${RA_DEBIAN:-bookworm}
# ra_debian_version: the number of the release RA_DEBIAN names, for messages.
ra_debian_version() {
	case $RA_DEBIAN in
	bookworm) echo 12 ;;
	trixie) echo 13 ;;
	*) ra_fail "RA_DEBIAN=$RA_DEBIAN: bookworm (Debian 12) or trixie (Debian 13)" ;;
	esac
}

# ra_cached_root DIR WHAT MMDEBSTRAP_ARGS...: a root of RA_DEBIAN's release
# that mmdebstrap builds into DIR once and later runs reuse: rebuilt only when
# DIR lacks the stamp of a finished build (a test changes what goes in by
# changing the number in DIR's name). DIR's name starts with the release's
# name, so that no root of one release is taken for the other's. mmdebstrap
# runs in namespaces of its own, so nothing it mounts in the root outlives it
# (a /proc left mounted in it was seen). WHAT names the root in messages.
ra_cached_root() {
	local dir=$1 what=$2 start=$SECONDS
	shift 2
	ra_debian_version >/dev/null
	[[ $(basename "$dir") == "$RA_DEBIAN"-* ]] ||
		ra_fail "the root $dir is not named for RA_DEBIAN=$RA_DEBIAN, the release it would be built from"
	[[ ! -f $dir/.radaemon-test-image ]] || return 0
	mkdir -p "$(dirname "$dir")"
	rm -rf "$dir.tmp"
	if ! unshare --mount --propagation private --pid --fork --kill-child \
		mmdebstrap "$@" "$RA_DEBIAN" "$dir.tmp" >"$T/mmdebstrap.log" 2>&1; then
		rm -rf "$dir.tmp"
		ra_fail "mmdebstrap could not build $what: $(tail -n 20 "$T/mmdebstrap.log")"
	fi
	touch "$dir.tmp/.radaemon-test-image"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	ra_ok "built $what in $dir in $((SECONDS - start)) s"
}

# ra_copy_source DIR: the source tree a package is built from, copied to DIR:
# in a git checkout the tracked files and new ones, as they are in the
# working tree; elsewhere (a dist tarball) all but build/.
ra_copy_source() {
	mkdir -p "$1"
	if git -C "$RA_SRCDIR" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$RA_SRCDIR" ls-files -z --cached --others --exclude-standard |
			(cd "$RA_SRCDIR" && tar --null -T - -cf -) | tar -C "$1" -xf -
	else
		tar -C "$RA_SRCDIR" --exclude=./build --exclude=./.git -cf - . | tar -C "$1" -xf -
	fi
}

# ra_build_package DIR [DEB_BUILD_OPTIONS...]: builds the Debian package with
# dpkg-buildpackage -us -uc -b from a copy of the source tree in DIR/radaemon
# (so nothing lands beside the checkout), and sets RA_DEB to the .deb made.
# The build log is DIR/build.log.
ra_build_package() {
	local dir=$1 src=$1/radaemon
	shift
	ra_copy_source "$src"
	(cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc) $*" dpkg-buildpackage -us -uc -b) >"$dir/build.log" 2>&1 ||
		ra_fail "dpkg-buildpackage failed: $(tail -n 30 "$dir/build.log")"
	RA_DEB=$(echo "$dir"/radaemon_*_"$(dpkg --print-architecture)".deb)
	[[ -f $RA_DEB ]] || ra_fail "dpkg-buildpackage made no package: $(ls "$dir")"
}
