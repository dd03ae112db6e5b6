#!/bin/bash
# The installed radaemon.service: systemd-analyze verify finds nothing wrong
# (its ExecStart and every man page of Documentation= exist), its exposure
# in systemd-analyze security is at most 2.5, it has what the issue asks of
# it, and it has none of the settings that would stop radaemon working; /sys
# is read-only but for what radaemon writes.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
command -v systemd-analyze >/dev/null || ra_skip "systemd-analyze is not installed"
[[ -n ${RA_INSTALL_DIRS:-} ]] || ra_skip "run from make check: RA_INSTALL_DIRS says where files go"

declare -A dir
for kv in $RA_INSTALL_DIRS; do
	dir[${kv%%=*}]=${kv#*=}
done

root=$T/root
env -u MAKEFLAGS -u MFLAGS "${MAKE:-make}" -s -C "$RA_BUILDDIR" install DESTDIR="$root" >"$T/install.log" 2>&1 ||
	ra_fail "make install failed: $(tail "$T/install.log")"
unit=$root${dir[systemdsystemunitdir]}/radaemon.service

# verify checks ExecStart=, ExecReload= and Documentation= against this machine: point
# them at what was installed, and change nothing else.
mkdir "$T/verify"
sed "s|^ExecStart=|ExecStart=$root|; s|^ExecReload=|ExecReload=$root|" "$unit" >"$T/verify/radaemon.service"
MANPATH=$root${dir[mandir]} systemd-analyze verify "$T/verify/radaemon.service" >"$T/verify.log" 2>&1 ||
	ra_fail "systemd-analyze verify: $(cat "$T/verify.log")"
[[ ! -s $T/verify.log ]] || ra_fail "systemd-analyze verify: $(cat "$T/verify.log")"
ra_ok "systemd-analyze verify: clean"

systemd-analyze security --offline=yes "$unit" >"$T/security.log" 2>&1 || true
exposure=$(sed -n 's/^→ Overall exposure level for radaemon.service: \([0-9.]*\) .*/\1/p' "$T/security.log")
[[ -n $exposure ]] || ra_fail "no exposure level: $(tail -n 5 "$T/security.log")"
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.5) }' || ra_fail "exposure $exposure, want <= 2.5: $(grep '✗' "$T/security.log")"
systemd-analyze security --offline=yes --threshold=25 "$unit" >/dev/null 2>&1 ||
	ra_fail "systemd-analyze security --threshold=25 refuses the unit"
ra_ok "systemd-analyze security --offline=yes: exposure $exposure"

# The contract of the unit (radaemon(8) describes it).
for line in Type=notify BusName=org.radaemon.ReadAhead1 "ExecReload=${dir[bindir]}/racontrol reload" \
	Restart=on-failure StateDirectory=radaemon "Documentation=man:radaemon(8) man:radaemon.conf(5) man:racontrol(1)" \
	ProtectSystem=strict ProtectHome=yes NoNewPrivileges=yes "RestrictAddressFamilies=AF_UNIX AF_NETLINK" \
	IPAddressDeny=any SystemCallFilter=@system-service MemoryDenyWriteExecute=yes LockPersonality=yes \
	RestrictRealtime=yes CapabilityBoundingSet=CAP_SYS_PTRACE TasksMax=16 MemoryMax=128M WantedBy=multi-user.target; do
	grep -qxF "$line" "$unit" || ra_fail "the unit lacks $line"
done
grep -qE '^WatchdogSec=[1-9]' "$unit" || ra_fail "the unit has no WatchdogSec="
ra_ok "the unit has what radaemon.service promises"

# Each of these would stop radaemon working; see the comments in the unit.
for bad in PrivateNetwork PrivateDevices; do
	if grep -qiE "^$bad=(yes|true|on|1)\$" "$unit"; then
		ra_fail "the unit sets $bad=: see its comments for what that would break"
	fi
done
# /sys is read-only (ProtectKernelTunables=) but for the knobs radaemon writes,
# on disks that appear later too.
for line in ProtectKernelTunables=yes ReadWritePaths=/proc/sys/vm/page-cluster ReadWritePaths=/sys/devices \
	"ReadOnlyPaths=-/sys/devices/system -/sys/devices/virtual" \
	"ReadWritePaths=-/sys/devices/virtual/block -/sys/devices/virtual/bdi" \
	ReadWritePaths=-/sys/kernel/tracing/instances; do
	grep -qxF "$line" "$unit" || ra_fail "the unit lacks $line"
done
grep -qE '^ExecStopPost=.*rmdir /sys/kernel/tracing/instances/radaemon\.' "$unit" ||
	ra_fail "the unit does not remove radaemon's tracefs instance when it stops"
ra_ok "nothing in it keeps radaemon from read_ahead_kb, udev events or block devices; the rest of /sys read-only"

# radaemon-prefetch@.service: a template for racontrol prefetch of one tree,
# verified as an instance (a template alone cannot be), read-only.
template=$root${dir[systemdsystemunitdir]}/radaemon-prefetch@.service
[[ -f $template ]] || ra_fail "radaemon-prefetch@.service is not installed"
sed "s|^ExecStart=|ExecStart=$root|" "$template" >"$T/verify/radaemon-prefetch@tmp.service"
MANPATH=$root${dir[mandir]} systemd-analyze verify "$T/verify/radaemon-prefetch@tmp.service" >"$T/verify.log" 2>&1 ||
	ra_fail "systemd-analyze verify radaemon-prefetch@tmp.service: $(cat "$T/verify.log")"
[[ ! -s $T/verify.log ]] || ra_fail "systemd-analyze verify radaemon-prefetch@tmp.service: $(cat "$T/verify.log")"
for line in "ExecStart=${dir[bindir]}/racontrol prefetch --always %f" Type=oneshot RequiresMountsFor=%f \
	ProtectSystem=strict ProtectHome=read-only PrivateDevices=yes PrivateNetwork=yes NoNewPrivileges=yes \
	CapabilityBoundingSet=CAP_DAC_READ_SEARCH RestrictAddressFamilies=none TimeoutStartSec=2h WantedBy=multi-user.target; do
	grep -qxF "$line" "$template" || ra_fail "radaemon-prefetch@.service lacks $line"
done
cp "$template" "$T/verify/radaemon-prefetch@srv-mail.service"
systemd-analyze security --offline=yes "$T/verify/radaemon-prefetch@srv-mail.service" >"$T/security.log" 2>&1 || true
exposure=$(sed -n 's/^→ Overall exposure level for radaemon-prefetch@srv-mail.service: \([0-9.]*\) .*/\1/p' "$T/security.log")
[[ -n $exposure ]] || ra_fail "prefetch unit: no exposure level: $(tail -n 5 "$T/security.log")"
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' ||
	ra_fail "prefetch unit: exposure $exposure, want <= 2.0: $(grep '✗' "$T/security.log")"
ra_ok "radaemon-prefetch@.service: verify clean, read-only sandbox, exposure $exposure"
