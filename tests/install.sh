#!/bin/bash
# make install DESTDIR=... puts exactly the expected files where systemd,
# udev, D-Bus and polkit look for them, with every path in them expanded;
# systemctl --root enables and disables the unit (with its D-Bus alias);
# make uninstall leaves no file behind.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
command -v systemctl >/dev/null || ra_skip "systemctl is not installed"
[[ -n ${RA_INSTALL_DIRS:-} ]] || ra_skip "run from make check: RA_INSTALL_DIRS says where files go"

declare -A dir
for kv in $RA_INSTALL_DIRS; do
	dir[${kv%%=*}]=${kv#*=}
done

root=$T/root
make_in_build() { env -u MAKEFLAGS -u MFLAGS "${MAKE:-make}" -s -C "$RA_BUILDDIR" "$@"; }
make_in_build install DESTDIR="$root" >"$T/install.log" 2>&1 || ra_fail "make install failed: $(tail "$T/install.log")"

# Exactly these, and nothing else.
cat >"$T/expected" <<EOF
${dir[sbindir]}/radaemon
${dir[bindir]}/racontrol
${dir[udevdir]}/radaemon-udev
${dir[udevdir]}/rules.d/60-radaemon.rules
${dir[systemdsystemunitdir]}/radaemon.service
${dir[systemdsystemunitdir]}/radaemon-metrics.service
${dir[systemdsystemunitdir]}/radaemon-metrics.timer
${dir[catalogdir]}/radaemon.catalog
${dir[systemdsystemunitdir]}/radaemon-prefetch@.service
${dir[dbuspolicydir]}/org.radaemon.ReadAhead1.conf
${dir[dbussystemservicedir]}/org.radaemon.ReadAhead1.service
${dir[dbusinterfacesdir]}/org.radaemon.ReadAhead1.xml
${dir[polkitactiondir]}/org.radaemon.ReadAhead1.policy
${dir[sysconfdir]}/radaemon/radaemon.conf
${dir[mandir]}/man1/racontrol.1
${dir[mandir]}/man5/radaemon.conf.5
${dir[mandir]}/man5/org.radaemon.ReadAhead1.5
${dir[mandir]}/man8/radaemon.8
${dir[mandir]}/man8/radaemon-udev.8
${dir[mandir]}/man8/radaemon-metrics.service.8
${dir[bashcompletiondir]}/racontrol
EOF
sed 's|//*|/|g' "$T/expected" | sort >"$T/expected.sorted"
(cd "$root" && find . -type f -o -type l) | sed 's|^\.||' | sort >"$T/installed"
diff -u "$T/expected.sorted" "$T/installed" || ra_fail "make install installed other files than expected"
ra_ok "$(wc -l <"$T/installed") files installed, as expected"

at() { echo "$root${dir[$1]}/$2"; }
for f in "$(at sbindir radaemon)" "$(at bindir racontrol)" "$(at udevdir radaemon-udev)"; do
	[[ -x $f ]] || ra_fail "$f is not executable"
done
# The journal catalog's @FIELD@ are the journal's own, filled in by journalctl.
if grep -rlI --exclude=radaemon.catalog '@[a-zA-Z_]*@' "$root"; then
	ra_fail "unexpanded @placeholders@ in the files above"
fi
unit=$(at systemdsystemunitdir radaemon.service)
grep -qx "ExecStart=${dir[sbindir]}/radaemon" "$unit" || ra_fail "ExecStart is not ${dir[sbindir]}/radaemon"
grep -qF "IMPORT{program}=\"${dir[udevdir]}/radaemon-udev \$kernel\"" "$(at udevdir rules.d/60-radaemon.rules)" ||
	ra_fail "the rule does not run ${dir[udevdir]}/radaemon-udev"
activation=$(at dbussystemservicedir org.radaemon.ReadAhead1.service)
for line in Name=org.radaemon.ReadAhead1 Exec=/bin/false User=root SystemdService=dbus-org.radaemon.ReadAhead1.service; do
	grep -qx "$line" "$activation" || ra_fail "the D-Bus activation file lacks $line"
done
grep -qx "Alias=dbus-org.radaemon.ReadAhead1.service" "$unit" || ra_fail "the unit lacks the alias D-Bus activation uses"
ra_ok "paths expanded; the unit, the rule and the activation file point at what was installed"

# With the usual prefix, every directory is one its consumer reads.
if [[ ${dir[prefix]} == /usr ]]; then
	systemd-analyze unit-paths | grep -qx "${dir[systemdsystemunitdir]}" ||
		ra_fail "systemd does not read ${dir[systemdsystemunitdir]}"
	[[ ${dir[udevdir]}/rules.d =~ ^(/usr)?/lib/udev/rules.d$ ]] || ra_fail "udev does not read ${dir[udevdir]}/rules.d"
	[[ ${dir[dbuspolicydir]} == /usr/share/dbus-1/system.d ]] || ra_fail "dbus-daemon does not read ${dir[dbuspolicydir]}"
	[[ ${dir[dbussystemservicedir]} =~ ^(/usr/share|/usr/local/share|/lib)/dbus-1/system-services$ ]] ||
		ra_fail "dbus-daemon does not read ${dir[dbussystemservicedir]}"
	[[ ${dir[polkitactiondir]} == /usr/share/polkit-1/actions ]] || ra_fail "polkit does not read ${dir[polkitactiondir]}"
	ra_ok "systemd, udev, D-Bus and polkit read the directories used"
fi

# systemctl --root wants a root below which the unit is in a standard place.
base=${dir[systemdsystemunitdir]%/lib/systemd/system}
[[ $base != "${dir[systemdsystemunitdir]}" ]] || ra_fail "cannot find a root for ${dir[systemdsystemunitdir]}"
sysroot=$root$base
systemctl --root="$sysroot" enable radaemon.service >"$T/enable.log" 2>&1 || ra_fail "systemctl enable: $(cat "$T/enable.log")"
[[ $(systemctl --root="$sysroot" is-enabled radaemon.service) == enabled ]] || ra_fail "radaemon.service is not enabled"
for link in multi-user.target.wants/radaemon.service dbus-org.radaemon.ReadAhead1.service; do
	[[ -L $sysroot/etc/systemd/system/$link ]] || ra_fail "systemctl enable made no $link"
	[[ $(readlink "$sysroot/etc/systemd/system/$link") == /lib/systemd/system/radaemon.service ]] ||
		ra_fail "$link points at $(readlink "$sysroot/etc/systemd/system/$link")"
done
ra_ok "systemctl --root enable: multi-user.target.wants and the D-Bus alias"
systemctl --root="$sysroot" disable radaemon.service >"$T/disable.log" 2>&1 || ra_fail "systemctl disable: $(cat "$T/disable.log")"
[[ -z $(find "$sysroot/etc/systemd" -type l) ]] || ra_fail "systemctl disable left links behind"
ra_ok "systemctl --root disable removes them"

make_in_build uninstall DESTDIR="$root" >"$T/uninstall.log" 2>&1 || ra_fail "make uninstall failed: $(tail "$T/uninstall.log")"
left=$(cd "$root" && find . -type f -o -type l)
[[ -z $left ]] || ra_fail "make uninstall left: $left"
ra_ok "make uninstall leaves no file"
