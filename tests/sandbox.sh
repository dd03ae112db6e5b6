#!/bin/bash
# radaemon keeps working inside the sandbox of radaemon.service, as far as
# that can be built without systemd: a file system read-only but for /dev,
# /proc, /sys and the state directory (ProtectSystem=strict,
# ProtectControlGroups=), empty home directories (ProtectHome=), /proc
# without other users' processes (ProtectProc=), /proc/sys read-only but for
# vm.page-cluster, /sys read-only but for /sys/devices (less its system and
# virtual devices, but block and bdi) and tracefs' instances
# (ProtectKernelTunables=, ReadOnlyPaths=, ReadWritePaths=), one capability
# (CAP_SYS_PTRACE) and no new privileges (CapabilityBoundingSet=, NoNewPrivileges=),
# UMask=0077. In there it tunes at start and on hotplug, stores a pin, refuses nobody, reloads and stops.
# At start it removes the tracefs instance a crashed radaemon left, though
# another process has its pid now.
# strace meanwhile records every system call, checked against the unit's
# SystemCallFilter=, RestrictAddressFamilies=, MemoryDenyWriteExecute=,
# DeviceAllow=, RestrictNamespaces=, LockPersonality= and RestrictRealtime=
# (tests/syscalls.py), which only systemd itself could enforce.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
for tool in strace setpriv unshare; do
	command -v "$tool" >/dev/null || ra_skip "$tool is not installed"
done
unit=$RA_BUILDDIR/systemd/radaemon.service
[[ -f $unit ]] || ra_fail "no $unit; run make first"
# systemd mounts tracefs before the unit (Wants=, After=sys-kernel-tracing.mount).
ra_tracefs
ra_start_bus

# A crashed radaemon's instance, whose pid another process has now.
sleep 600 &
reused=$!
RA_PIDS+=("$reused")
stale=/sys/kernel/tracing/instances/radaemon.$reused
mkdir "$stale"
remove_stale() { [[ ! -d $stale ]] || rmdir "$stale"; }
RA_HOOKS+=(remove_stale)
echo 1 >"$stale/events/block/block_rq_issue/enable"

ra_new_loop tiny 505K
tiny=$LOOP
ra_new_loop big 64G
big=$LOOP
hot=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused $((${big#loop} + 1)))
udevadm settle
mkdir "$T/state"
ra_config <<CONF
[daemon]
devices = $tiny $big loop$hot
state_dir = $T/state

[policy]
calibrate = yes
CONF

cat >"$T/sandbox" <<'SH'
# sandbox STATE-DIR COMMAND...: runs COMMAND in a new mount namespace that
# looks to it as radaemon.service's would.
set -eu
state=$1
shift

mount --bind "$state" "$state"
# The unit's ReadWritePaths= and ReadOnlyPaths= below /sys, each a mount of its own.
rw="/sys/devices /sys/devices/virtual/block /sys/devices/virtual/bdi /sys/kernel/tracing/instances"
for path in /sys/devices /sys/devices/system /sys/devices/virtual /sys/devices/virtual/block \
	/sys/devices/virtual/bdi /sys/kernel/tracing/instances; do
	mount --bind "$path" "$path"
done
awk '{ print $5 }' /proc/self/mountinfo | sort -u | while read -r mp; do
	case " $rw " in *" $mp "*) continue ;; esac
	case $mp in
	"$state" | /dev | /dev/* | /proc | /proc/*) continue ;;
	esac
	mount -o remount,bind,ro "$mp" 2>/dev/null || true
done
for home in /home /root /run/user; do
	[ ! -d "$home" ] || mount -t tmpfs -o ro,mode=000 tmpfs "$home"
done
mount -t proc -o hidepid=invisible proc /proc
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
mount --bind /proc/sys/vm/page-cluster /proc/sys/vm/page-cluster
mount -o remount,bind,rw /proc/sys/vm/page-cluster

# The sandbox must hold before anything runs in it.
if touch /etc/.radaemon-sandbox 2>/dev/null; then
	rm -f /etc/.radaemon-sandbox
	echo "sandbox: /etc is writable" >&2
	exit 1
fi
if cat /proc/sys/vm/swappiness 2>/dev/null >/proc/sys/vm/swappiness; then
	echo "sandbox: /proc/sys is writable" >&2
	exit 1
fi
for file in /sys/power/state /sys/kernel/tracing/set_event /sys/kernel/tracing/kprobe_events \
	/sys/kernel/tracing/dynamic_events /sys/devices/system/cpu/cpu1/online; do
	if [ -e "$file" ] && [ -w "$file" ]; then
		echo "sandbox: $file is writable" >&2
		exit 1
	fi
done
cat /proc/sys/vm/page-cluster >/proc/sys/vm/page-cluster || { echo "sandbox: page-cluster is read-only" >&2; exit 1; }
touch "$state/.probe" && rm "$state/.probe"

umask 077
exec setpriv --no-new-privs --bounding-set=-all,+sys_ptrace --inh-caps=-all --ambient-caps=-all -- "$@"
SH

# LeakSanitizer cannot run under ptrace: in a sanitizer build it would fail the daemon.
ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS} \
	strace -ff -qq -o "$T/trace" unshare --mount --propagation private sh "$T/sandbox" "$T/state" \
	"$RADAEMON" --foreground --debug --config "$T/radaemon.conf" >"$T/daemon.log" 2>&1 &
tracer=$!
# strace's child becomes the daemon (unshare, sh and setpriv each exec the
# next); on failure the cleanup stops it before strace, which would detach.
ra_wait_for "[[ -n \$(ps -o pid= --ppid $tracer) ]]" || ra_fail "strace started nothing"
DAEMON_PID=$(ps -o pid= --ppid "$tracer" | tr -d ' ')
RA_PIDS+=("$tracer")
ra_wait_for "grep -q '^Managing' '$T/daemon.log'" || ra_fail "the daemon did not start in the sandbox"
# Once more now that it runs: one pid, the daemon's, whatever ps saw before the execs.
DAEMON_PID=$(ps -o pid= --ppid "$tracer" | head -n1 | tr -d ' ')
[[ $(cat "/proc/$DAEMON_PID/comm") == radaemon ]] || ra_fail "strace's child $DAEMON_PID is $(cat "/proc/$DAEMON_PID/comm")"
# CAP_SYS_PTRACE (bit 19) alone, for open files (pidfd_getfd()).
grep -q CapEff:.0000000000080000 "/proc/$DAEMON_PID/status" ||
	ra_fail "the daemon has other capabilities than CAP_SYS_PTRACE: $(grep -E 'Cap|NoNewPrivs' "/proc/$DAEMON_PID/status" | tr '\n' ' ')"
grep -q 'NoNewPrivs:.1' "/proc/$DAEMON_PID/status" || ra_fail "the daemon may gain privileges"

[[ $(ra_kb "$tiny") == 4 ]] || ra_fail "$tiny is at $(ra_kb "$tiny") KiB, want 4"
ra_wait_for "[[ \$(ra_kb $big) != 2560 ]]" || ra_fail "$big was not tuned"
ra_ok "coldplug in the sandbox: $tiny at 4 KiB, $big at $(ra_kb "$big") KiB, with CAP_SYS_PTRACE alone"
[[ ! -d $stale ]] || ra_fail "the stale instance radaemon.$reused is still there; pid $reused is $(cat "/proc/$reused/comm")"
ra_ok "the stale tracefs instance radaemon.$reused removed at start, though pid $reused runs"

ra_new_loop hot 505K "$hot"
ra_wait_kb "loop$hot" 4
ra_ok "hotplug in the sandbox: loop$hot tuned on its udev event"

"$RACONTROL" set "$big" 1024 >/dev/null || ra_fail "racontrol set failed in the sandbox: $(tail -n 5 "$T/daemon.log")"
grep -qE "^device loop:$T/big.img original=[0-9]+ pin=1024$" "$T/state/state" || ra_fail "the pin was not stored: $(cat "$T/state/state")"
[[ $(ra_kb "$big") == 1024 ]] || ra_fail "$big is at $(ra_kb "$big") KiB after set 1024"
out=$(runuser -u nobody -- env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" "$RACONTROL" set "$tiny" 64 2>&1) &&
	ra_fail "nobody could set a pin"
[[ $out == "racontrol: not permitted: Only root may change radaemon's settings (uid 65534 may not)." ]] ||
	ra_fail "nobody was refused with the wrong words: $out"
ra_ok "a pin stored in the state directory; nobody refused by uid, with /proc hidden"

# The one kernel tunable it writes: vm.page-cluster, through a runtime pin.
saved_pc=$(cat /proc/sys/vm/page-cluster)
put_back_pc() { echo "$saved_pc" >/proc/sys/vm/page-cluster; }
RA_HOOKS+=(put_back_pc)
pc=$((saved_pc == 1 ? 2 : 1))
"$RACONTROL" set swap "$pc" --runtime >/dev/null || ra_fail "racontrol set swap failed in the sandbox: $(tail -n 5 "$T/daemon.log")"
[[ $(cat /proc/sys/vm/page-cluster) == "$pc" ]] || ra_fail "page-cluster is $(cat /proc/sys/vm/page-cluster) after set swap $pc"
put_back_pc
ra_ok "vm.page-cluster written from the sandbox"

# A calibration: a process of its own, direct reads at idle I/O priority.
out=$("$RACONTROL" calibrate "$tiny" 2>&1) || ra_fail "racontrol calibrate failed in the sandbox: $out"
ra_ok "a calibration in the sandbox: $out"

kill -HUP "$DAEMON_PID"
ra_wait_log "^Configuration reloaded\.$"
kill -TERM "$DAEMON_PID"
rc=0
wait "$tracer" || rc=$?
DAEMON_PID=
((rc == 0)) || ra_fail "the daemon exited with $rc in the sandbox"
# Expected: without CAP_NET_ADMIN the udev receive buffer stays at
# net.core.rmem_max (see the unit). Nothing else may hit a wall.
grep -q "^Cannot enlarge the udev receive buffer" "$T/daemon.log" || ra_fail "the daemon had CAP_NET_ADMIN after all"
if grep -v "^Cannot enlarge the udev receive buffer" "$T/daemon.log" |
	grep -iE "cannot|denied|read-only|not permitted|does not seem"; then
	ra_fail "the daemon met the sandbox's walls (above)"
fi
ra_ok "reload and stop in the sandbox; no warning in the log"

# From the execve of radaemon on: what systemd's filters would have seen.
# The exact path: other processes' arguments name files below /tmp/radaemon-test.*.
trace=$(grep -lF "execve(\"$RADAEMON\"" "$T"/trace.* | head -n 1)
[[ -n $trace ]] || ra_fail "no trace holds the execve of $RADAEMON"
awk -v exe="execve(\"$RADAEMON\"" 'index($0, exe) == 1 { on = 1 } on' "$trace" >"$T/daemon.trace"
[[ -s $T/daemon.trace ]] || ra_fail "no trace of the daemon"
# Its threads' and processes' own traces (a calibration's), where strace -ff put them.
for tid in $(grep -E '^clone3?\(' "$T/daemon.trace" | grep -oE '= [0-9]+$' | tr -d '= '); do
	cat "$T/trace.$tid" >>"$T/daemon.trace"
done
grep -q '^ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE' "$T/daemon.trace" ||
	ra_fail "no calibration process at idle I/O priority in the trace: $(grep -E '^(clone|ioprio)' "$T/daemon.trace")"
python3 "$RA_SRCDIR/tests/syscalls.py" "$unit" "$T/daemon.trace" || ra_fail "the daemon did what the unit forbids (above)"
ra_ok "every system call, socket and mapping within the unit's filters"
