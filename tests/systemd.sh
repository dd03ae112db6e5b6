#!/bin/bash
# radaemon as a distribution runs it: the Debian package built from this tree,
# installed in a Debian 12 root and booted by a real systemd as PID 1
# (systemd-nspawn), with the real system bus, polkit and the journal. Inside:
# systemctl enable --now brings the unit to active (running) under its whole
# sandbox, which cannot write /sys/power/state or the top of tracefs but
# can write read_ahead_kb, of a disk plugged in later too; it tunes a loop
# device this test made on the host; racontrol
# answers over the system bus; a stopped radaemon is started by D-Bus
# activation; an unprivileged user is refused while polkit runs; systemctl
# reload reloads; systemctl stop puts the disk back (restore_on_exit); the
# journal holds each decision with its fields and catalog entry; a
# SIGKILLed radaemon is restarted and its tracefs instance removed;
# racontrol metrics passes promtool and node_exporter serves what the timer
# wrote; systemd-analyze security scores at most 2.0.
#
# The root is built once by mmdebstrap from Debian's packages and kept in
# RA_IMAGE_CACHE (/var/cache/radaemon-tests); the container boots it with a
# tmpfs overlay (--volatile=overlay), so it stays as built. Its udevd, udev
# coldplug and sysctl units are masked: it shares the host's kernel, and
# would otherwise trigger and set up every disk of the host. The host's
# udevd and its database serve it instead, as on a machine with one udevd.
#
# ./run-tests runs this once, after tests/package.sh: it builds a package
# and boots a machine, which make check (run twice, plain and with ASan, and
# again by distcheck) should not do each time.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || ra_skip "needs root to boot a container"
for tool in mmdebstrap systemd-nspawn dpkg-buildpackage promtool prometheus-node-exporter curl nsenter; do
	command -v "$tool" >/dev/null || ra_skip "$tool is not installed (./install-deps --tests installs it)"
done
# Building the root (the first run) and the package take minutes, not seconds.
((RA_TEST_LIMIT >= 900)) || RA_TEST_LIMIT=900
# The machine's own namespaces: mmdebstrap fetches packages, the container
# is the machine's (lib.sh, ra_own_namespaces).
RA_MACHINE_NAMESPACES=1
ra_setup
started=$SECONDS

# --- the root ------------------------------------------------------------------
# Rebuilt when missing, or when what this test puts into it changes (the stamp).
cache=${RA_IMAGE_CACHE:-/var/cache/radaemon-tests}
image=$cache/bookworm-systemd-1
user_uid=4242
masked="systemd-udevd.service systemd-udevd-control.socket systemd-udevd-kernel.socket
	systemd-udev-trigger.service systemd-udev-settle.service systemd-sysctl.service
	systemd-binfmt.service systemd-modules-load.service"
# libinih1 is the package's one dependency beyond these: dpkg -i installs none.
# shellcheck disable=SC2016 # $1 is mmdebstrap's: the root being built
ra_cached_root "$image" "the Debian 12 root" --variant=apt --include=systemd,systemd-sysv,dbus,udev,polkitd,libinih1 \
	--customize-hook='chroot "$1" systemctl mask '"${masked//[$'\n\t']/ }" \
	--customize-hook="chroot \"\$1\" useradd --create-home --uid $user_uid ratest"

# --- the package -----------------------------------------------------------------
# tests/package.sh runs the unit tests in the package build; not again here.
ra_build_package "$T/pkg" nocheck
ra_ok "built $(basename "$RA_DEB")"

# --- the disk and the container --------------------------------------------------
ra_new_loop tiny 505K
loop=$LOOP
udevadm settle
original=$(ra_kb "$loop")
[[ $original != 4 ]] || ra_fail "$loop starts at 4 KiB, what radaemon would set: the test would prove nothing"

# Without systemd on the host, systemd-nspawn makes its cgroups (payload,
# supervisor) below the one it runs in: a cgroup of this test's in each
# hierarchy systemd uses (cgroup v2, or v1's name=systemd and, in the hybrid
# layout, v2 at unified/ beside it), removed afterwards.
cgroups=()
if [[ -e /sys/fs/cgroup/cgroup.controllers ]]; then
	cgroups=(/sys/fs/cgroup/radaemon-test-systemd)
else
	for h in /sys/fs/cgroup/unified /sys/fs/cgroup/systemd; do
		[[ ! -d $h ]] || cgroups+=("$h/radaemon-test-systemd")
	done
fi
machine=radaemon-test
NSPAWN_PID=
CT=
stop_container() {
	if [[ -n $NSPAWN_PID ]]; then
		# SIGTERM: nspawn asks the container's systemd to shut down cleanly.
		kill -TERM "$NSPAWN_PID" 2>/dev/null || true
		local deadline=$((SECONDS + 60))
		while kill -0 "$NSPAWN_PID" 2>/dev/null && ((SECONDS < deadline)); do
			sleep 0.2
		done
		kill -KILL "$NSPAWN_PID" 2>/dev/null || true
		wait "$NSPAWN_PID" 2>/dev/null || true
		NSPAWN_PID=
	fi
	local cg
	for cg in "${cgroups[@]}"; do
		[[ -d $cg ]] || continue
		find "$cg" -depth -mindepth 1 -type d -exec rmdir {} \; 2>/dev/null || true
		rmdir "$cg" 2>/dev/null || ra_log "WARNING: could not remove $cg"
	done
	grep -q " $T/" /proc/self/mountinfo && ra_log "WARNING: still mounted: $(grep " $T/" /proc/self/mountinfo)"
	return 0
}
RA_HOOKS+=(stop_container)

mkdir -p "$T/textfile"
(
	for cg in "${cgroups[@]}"; do
		mkdir -p "$cg"
		echo "$BASHPID" >"$cg/cgroup.procs"
	done
	export SYSTEMD_NSPAWN_API_VFS_WRITABLE=1
	exec setsid systemd-nspawn --quiet --boot --directory="$image" --volatile=overlay \
		--register=no --keep-unit --machine="$machine" --console=passive \
		--bind-ro="$T/pkg:/root/pkg" --bind-ro=/run/udev --bind="/dev/$loop" \
		--bind="$T/textfile:/var/lib/prometheus/node-exporter"
) >"$T/nspawn.log" 2>&1 &
NSPAWN_PID=$!

# The container's PID 1: the systemd that nspawn started.
ra_wait_for "CT=\$(ps --ppid $NSPAWN_PID -o pid= -o comm= | awk '\$2 == \"systemd\" {print \$1}'); [[ -n \$CT ]]" ||
	ra_fail "systemd-nspawn started no systemd: $(cat "$T/nspawn.log")"
ct() { nsenter --target "$CT" --all env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
as_user() { ct setpriv --reuid=$user_uid --regid=$user_uid --clear-groups "$@"; }
RA_TIMEOUT=60 ra_wait_for "[[ \$(ct systemctl is-system-running 2>/dev/null) =~ ^(running|degraded)$ ]]" ||
	ra_fail "the container did not boot: $(ct systemctl --failed --no-pager 2>&1; cat "$T/nspawn.log")"
[[ $(ct systemctl is-system-running) == running ]] ||
	ra_fail "the container booted degraded: $(ct systemctl --failed --no-pager)"
ra_ok "booted Debian 12 with systemd as PID 1 in $((SECONDS - started)) s since the start"

# --- install and start -------------------------------------------------------------
# Before the package is there: a drop-in that gives radaemon only the test's
# loop device (every disk of the host is in the container's /sys), and that
# puts it back when radaemon stops.
ct mkdir -p /etc/radaemon/radaemon.conf.d
printf '[daemon]\ndevices = %s\nbdis =\nrestore_on_exit = yes\n' "$loop" |
	ct tee /etc/radaemon/radaemon.conf.d/50-test.conf >/dev/null
# systemd mounts tracefs on a host (sys-kernel-tracing.mount), where radaemon
# learns from block requests; nspawn's fresh /sys has none.
ct mount -t tracefs nodev /sys/kernel/tracing || ra_fail "cannot mount tracefs in the container"
# The package enables the unit; the test starts it itself.
printf '#!/bin/sh\nexit 101\n' | ct tee /usr/sbin/policy-rc.d >/dev/null
ct chmod 755 /usr/sbin/policy-rc.d
ct sh -c 'dpkg -i /root/pkg/radaemon_*.deb' >"$T/dpkg.log" 2>&1 || ra_fail "dpkg -i in the container: $(cat "$T/dpkg.log")"
ct rm /usr/sbin/policy-rc.d
ct systemctl is-active --quiet radaemon && ra_fail "radaemon runs before systemctl enable --now"

ct systemctl enable --now radaemon >"$T/enable.log" 2>&1 ||
	ra_fail "systemctl enable --now radaemon: $(cat "$T/enable.log"; ct journalctl -b --no-pager -n 40)"
# Type=notify: enable --now returns once radaemon sent READY=1.
state=$(ct systemctl show radaemon -p ActiveState -p SubState -p Type -p WatchdogUSec -p NRestarts | sort | paste -sd ' ')
[[ $state == "ActiveState=active NRestarts=0 SubState=running Type=notify WatchdogUSec=3min" ]] ||
	ra_fail "radaemon is '$state', want active (running), notify, 3min: $(ct journalctl -u radaemon --no-pager)"
ra_ok "systemctl enable --now: radaemon is active (running), Type=notify, WatchdogSec=3min"

# Every hardening line in force: PID 1 complained about none of them, and the
# process has what the unit gives it.
ct journalctl -b --no-pager _PID=1 -o cat | grep -i 'radaemon.service' | grep -viE 'start|stop|reload|deactivated|consumed' >"$T/pid1.log" || true
[[ ! -s $T/pid1.log ]] || ra_fail "systemd says about radaemon.service: $(cat "$T/pid1.log")"
pid=$(ct systemctl show radaemon -p MainPID --value)
status=$(ct cat "/proc/$pid/status")
# CAP_SYS_PTRACE (bit 19) alone: open files reached through pidfd_getfd().
for want in 'CapEff:.0000000000080000' 'CapBnd:.0000000000080000' 'NoNewPrivs:.1' 'Seccomp:.2'; do
	grep -qE "^$want$" <<<"$status" || ra_fail "radaemon's /proc/$pid/status lacks $want: $status"
done
[[ $(ct cat "/proc/$pid/environ" | tr '\0' '\n' | grep -c '^NOTIFY_SOCKET=\|^WATCHDOG_USEC=') == 2 ]] ||
	ra_fail "radaemon runs without NOTIFY_SOCKET and WATCHDOG_USEC"
# This kernel has the readahead tracepoints: in its sandbox radaemon must see
# reads per file as well as block requests.
ct journalctl -u radaemon --no-pager -o cat | grep -q '^Tracing readahead per file and block requests through' ||
	ra_fail "radaemon does not trace reads per file and block requests in its sandbox: $(ct journalctl -u radaemon --no-pager -o cat)"
ra_ok "no capability but CAP_SYS_PTRACE, no new privileges, a seccomp filter, the watchdog armed, block requests traced"

# --- /sys read-only but for what radaemon writes ---------------------------------
# test -w asks access(2), which answers EROFS on a read-only mount: nothing
# is written, nothing suspends. Root in the container may write both outside
# radaemon's mount namespace, so a refusal inside is the unit's.
in_radaemon() { ct nsenter --target "$pid" --mount "$@"; }
# kprobe_events and dynamic_events where the kernel has them (this one may
# have neither); set_event, the top instance's, is always there.
for file in /sys/power/state /sys/kernel/tracing/set_event /sys/kernel/tracing/kprobe_events \
	/sys/kernel/tracing/dynamic_events; do
	[[ $file != *_events ]] || ct test -e "$file" || continue
	ct test -w "$file" || ra_fail "$file is not writable in the container: the test would prove nothing"
	in_radaemon test -w "$file" && ra_fail "radaemon.service may write $file"
done
ra_new_loop hot 505K
hot=$LOOP
udevadm settle
bdi=$(cat "/sys/block/$loop/dev")
for file in "/sys/block/$loop/queue/read_ahead_kb" "/sys/block/$hot/queue/read_ahead_kb" \
	"/sys/class/bdi/$bdi/read_ahead_kb" "/sys/kernel/tracing/instances/radaemon.$pid/tracing_on" \
	/proc/sys/vm/page-cluster; do
	# nspawn may leave /proc/sys read-only: not the unit's doing.
	ct test -w "$file" || [[ $file != /proc/* ]] || continue
	in_radaemon test -w "$file" || ra_fail "radaemon.service may not write $file"
done
ra_ok "radaemon.service may not write /sys/power/state or the top of tracefs; it may write read_ahead_kb (of $hot, plugged after the start, too), its bdi's, its tracefs instance and vm.page-cluster"

# --- tunes the host's loop device ------------------------------------------------
ra_wait_kb "$loop" 4
ra_ok "$loop (505 KiB, made on the host) went from $original to 4 KiB"

# --- the journal: fields, MESSAGE_ID and the catalog ---------------------------
decision_id=d1830d4dbd63498dbf42a1d29f13f6ec
pin_id=3b6de856f8784cc7a14423ad779da934
restore_id=0d72be0517fd4b4e89c91d89a8cad4e3
external_id=b63aea1a5f6d465d95999d80e50aaff2
# journal_has ID KB SOURCE: journalctl finds, by the disk's field, a message
# of that kind with those fields.
journal_has() {
	ct journalctl --no-pager -u radaemon "RADAEMON_DEVICE=$loop" "MESSAGE_ID=$1" \
		-o export >"$T/journal.txt" 2>&1 || true
	grep -qx "RADAEMON_KB=$2" "$T/journal.txt" && grep -qx "RADAEMON_SOURCE=$3" "$T/journal.txt"
}
ra_wait_for "journal_has $decision_id 4 prior" ||
	ra_fail "journalctl -u radaemon RADAEMON_DEVICE=$loop finds no decision with KB 4, SOURCE prior: $(ct journalctl --no-pager -u radaemon -o verbose)"
grep -q "^MESSAGE=$loop: read_ahead_kb $original -> 4 KiB (prior, on coldplug)" "$T/journal.txt" ||
	ra_fail "the decision's message: $(grep ^MESSAGE= "$T/journal.txt")"
ct journalctl --no-pager -x -u radaemon "RADAEMON_DEVICE=$loop" >"$T/journal-x.txt" 2>&1
grep -q "Subject: radaemon set the readahead of $loop to 4 KiB" "$T/journal-x.txt" ||
	ra_fail "journalctl -x shows no catalog entry: $(cat "$T/journal-x.txt")"
# Other lines stay lines on the stream, with their priority.
ct journalctl --no-pager -u radaemon -p info -o export | grep -q '^MESSAGE=Managing 1 disk\.' ||
	ra_fail "no 'Managing 1 disk.' in the journal"
ra_ok "journalctl -u radaemon RADAEMON_DEVICE=$loop: the decision (MESSAGE_ID, KB 4, SOURCE prior), explained by journalctl -x"

# --- racontrol over the real system bus -------------------------------------------
ct racontrol status >"$T/status.txt" 2>&1 || ra_fail "racontrol status: $(cat "$T/status.txt")"
grep -qE "^$loop .* 4 +4 +prior " "$T/status.txt" || ra_fail "racontrol status: $(cat "$T/status.txt")"
as_user racontrol show "$loop" >"$T/show.txt" 2>&1 || ra_fail "racontrol show as a user: $(cat "$T/show.txt")"
grep -q 'Source: *prior' "$T/show.txt" || ra_fail "racontrol show as a user: $(cat "$T/show.txt")"
ra_ok "racontrol status (root) and show (user $user_uid) over the system bus"

# --- polkit: refuses an unprivileged user, then authorizes them by a rule -----
# polkitd is not running yet: D-Bus activation starts it when radaemon asks.
rc=0
as_user racontrol set "$loop" 64 >"$T/set.txt" 2>&1 || rc=$?
((rc == 1)) || ra_fail "racontrol set as user $user_uid exited $rc, want 1: $(cat "$T/set.txt")"
grep -qi 'not permitted' "$T/set.txt" || ra_fail "racontrol set as a user says: $(cat "$T/set.txt")"
ct systemctl is-active --quiet polkit || ra_fail "polkit is not running: radaemon refused without asking it"
ct journalctl -u radaemon --no-pager -o cat | grep 'polkit' && ra_fail "radaemon could not ask polkit"
[[ $(ra_kb "$loop") == 4 ]] || ra_fail "$loop is at $(ra_kb "$loop") KiB after a refused set"
ra_ok "user $user_uid is refused by polkit (polkit.service active), $loop stays at 4 KiB"

# An administrator's rule lets the user: polkit, not radaemon, said no above.
cat <<'RULE' | ct tee /etc/polkit-1/rules.d/50-radaemon-test.rules >/dev/null
polkit.addRule(function(action, subject) {
	if (action.id == "org.radaemon.ReadAhead1.manage" && subject.user == "ratest")
		return polkit.Result.YES;
});
RULE
ra_wait_for "as_user racontrol set --runtime $loop 16 >'$T/set.txt' 2>&1" ||
	ra_fail "racontrol set as user $user_uid, allowed by a polkit rule: $(cat "$T/set.txt")"
ra_wait_kb "$loop" 16
as_user racontrol auto "$loop" >"$T/auto.txt" 2>&1 || ra_fail "racontrol auto as user $user_uid: $(cat "$T/auto.txt")"
ra_wait_kb "$loop" 4
journal_has $pin_id 16 pinned || ra_fail "no pin message for $loop in the journal: $(cat "$T/journal.txt")"
ct rm /etc/polkit-1/rules.d/50-radaemon-test.rules
ra_ok "with a polkit rule for them, user $user_uid pins $loop to 16 KiB and hands it back"

# --- systemctl reload ------------------------------------------------------------------
printf '[device:%s]\nread_ahead_kb = 64\n' "$loop" | ct tee /etc/radaemon/radaemon.conf.d/60-pin.conf >/dev/null
ct systemctl reload radaemon || ra_fail "systemctl reload radaemon failed"
ra_wait_kb "$loop" 64
[[ $(ct systemctl show radaemon -p MainPID --value) == "$pid" ]] || ra_fail "systemctl reload restarted radaemon"
ra_ok "systemctl reload: the new configuration pins $loop to 64 KiB, same process"

# --- a change behind its back -------------------------------------------------
echo 128 >"/sys/block/$loop/queue/read_ahead_kb"
ra_wait_for "journal_has $external_id 128 external" ||
	ra_fail "no external change of $loop in the journal: $(ct journalctl --no-pager -u radaemon -o cat | tail)"
ra_ok "the host's write of 128 KiB to $loop is in the journal as an external change"

# --- metrics -------------------------------------------------------------------------
ct racontrol metrics >"$T/metrics.txt" 2>&1 || ra_fail "racontrol metrics: $(cat "$T/metrics.txt")"
promtool check metrics <"$T/metrics.txt" >"$T/promtool.txt" 2>&1 || ra_fail "promtool check metrics: $(cat "$T/promtool.txt")"
[[ ! -s $T/promtool.txt ]] || ra_fail "promtool check metrics: $(cat "$T/promtool.txt")"
grep -qE "^radaemon_device_decisions_total\{device=\"$loop\"\} [1-9]" "$T/metrics.txt" ||
	ra_fail "racontrol metrics counts no decision for $loop: $(cat "$T/metrics.txt")"
ra_ok "racontrol metrics: promtool check metrics is clean ($(grep -vc '^#' "$T/metrics.txt") samples)"

[[ $(ct systemctl is-enabled radaemon-metrics.timer) == enabled ]] || ra_fail "the package did not enable radaemon-metrics.timer"
ct systemctl start radaemon-metrics.timer
ra_wait_for "[[ -s $T/textfile/radaemon.prom ]]" ||
	ra_fail "radaemon-metrics.timer wrote nothing: $(ct systemctl status --no-pager radaemon-metrics.service)"
left=$(find "$T/textfile" -mindepth 1 ! -name radaemon.prom)
[[ -z $left ]] || ra_fail "radaemon-metrics.service left other files: $left"
# node_exporter as Debian packages it, reading the directory the timer writes.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$T/textfile" >"$T/node-exporter.log" 2>&1 &
RA_PIDS+=($!)
ra_wait_for "curl -sf http://127.0.0.1:$port/metrics >'$T/scraped.txt'" ||
	ra_fail "node_exporter did not answer: $(cat "$T/node-exporter.log")"
grep -qE "^radaemon_device_read_ahead_bytes\{device=\"$loop\",source=\"external\",workload=\"[a-z]+\"\} 131072$" "$T/scraped.txt" ||
	ra_fail "node_exporter serves no read_ahead_kb of $loop: $(grep -E '^radaemon|textfile' "$T/scraped.txt")"
grep -qx 'node_textfile_scrape_error 0' "$T/scraped.txt" || ra_fail "node_exporter: $(grep textfile "$T/scraped.txt")"
kill "${RA_PIDS[-1]}"
wait "${RA_PIDS[-1]}" 2>/dev/null || true
ra_ok "radaemon-metrics.timer wrote radaemon.prom; node_exporter serves $(grep -c '^radaemon_' "$T/scraped.txt") radaemon samples"

# --- stop restores ----------------------------------------------------------------------
ct systemctl stop radaemon
ra_wait_kb "$loop" "$original"
ct journalctl -u radaemon --no-pager -o cat | grep -q 'restore_on_exit' || ra_fail "no restore_on_exit line in the journal"
journal_has $restore_id "$original" original || ra_fail "no restore message for $loop in the journal: $(cat "$T/journal.txt")"
ra_ok "systemctl stop: restore_on_exit put $loop back to $original KiB"

# --- D-Bus activation ---------------------------------------------------------------------
ct systemctl is-active --quiet radaemon && ra_fail "radaemon still runs after systemctl stop"
ct racontrol show "$loop" >"$T/show2.txt" 2>&1 || ra_fail "racontrol show did not start radaemon: $(cat "$T/show2.txt")"
[[ $(ct systemctl is-active radaemon) == active ]] || ra_fail "radaemon is not active after a D-Bus call"
grep -q 'Source: *config' "$T/show2.txt" || ra_fail "racontrol show after activation: $(cat "$T/show2.txt")"
ra_wait_kb "$loop" 64
ra_ok "stopped, racontrol show started radaemon through D-Bus activation"

# --- a crash -------------------------------------------------------------------------------
# Restart=on-failure starts it again; the killed one's tracefs instance, still
# tracing, is gone (ExecStopPost=, and the new radaemon's start).
pid=$(ct systemctl show radaemon -p MainPID --value)
ct test -d "/sys/kernel/tracing/instances/radaemon.$pid" || ra_fail "radaemon $pid has no tracefs instance"
ct systemctl kill --signal=KILL radaemon
ra_wait_for "[[ \$(ct systemctl show radaemon -p MainPID --value) != $pid && \$(ct systemctl is-active radaemon) == active ]]" ||
	ra_fail "radaemon was not restarted after SIGKILL: $(ct systemctl status --no-pager radaemon)"
ct test -d "/sys/kernel/tracing/instances/radaemon.$pid" && ra_fail "the killed radaemon's tracefs instance is still there"
ra_ok "killed, radaemon was restarted and its tracefs instance removed"

# --- systemd-analyze security -------------------------------------------------------------
ct systemd-analyze security --no-pager radaemon >"$T/security.txt" 2>&1 || true
score=$(sed -n 's/^→ Overall exposure level for radaemon.service: \([0-9.]*\).*/\1/p' "$T/security.txt")
[[ -n $score ]] || ra_fail "systemd-analyze security gave no score: $(tail "$T/security.txt")"
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || ra_fail "systemd-analyze security: $score, want <= 2.0: $(grep '✗' "$T/security.txt")"
ra_ok "systemd-analyze security radaemon inside: $score"

# --- shut down -------------------------------------------------------------------------------
stop_container
[[ $(ra_kb "$loop") == "$original" ]] || ra_fail "$loop is at $(ra_kb "$loop") KiB after the shutdown, want $original"
ra_ok "the container shut down cleanly; $loop is back at $original KiB; $((SECONDS - started)) s in all"
