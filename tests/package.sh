#!/bin/bash
# The Debian package, on this machine: dpkg-buildpackage -us -uc -b builds it
# from a copy of the source tree (so nothing lands beside the checkout);
# dpkg -i installs it; dpkg -L lists every file the package holds and each
# is there; the installed rule and helper set the first value of a new disk
# once udevadm settle returns; systemd-analyze verify is clean on the
# installed unit; dpkg -r and dpkg --purge leave nothing behind.
#
# ./run-tests runs this once, after make check: it is slow, and it installs
# into the real system. It leaves no radaemon package installed, and while the
# package is installed a drop-in limits it to this test's loop device, so no
# other disk on the machine is touched.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || ra_skip "needs root for dpkg -i"
command -v dpkg-buildpackage >/dev/null || ra_skip "dpkg-dev is not installed"
[[ -f $RA_SRCDIR/debian/control ]] || ra_skip "no debian/ directory in $RA_SRCDIR"
if dpkg-query -W -f '${db:Status-Status}' radaemon 2>/dev/null | grep -qvx not-installed; then
	ra_fail "a radaemon package is on this machine; this test installs and purges its own: dpkg --purge radaemon first"
fi
# The machine's own namespaces: the package is installed for the machine's
# udevd, whose rule this test checks (lib.sh, ra_own_namespaces).
RA_MACHINE_NAMESPACES=1
ra_setup

# --- build -------------------------------------------------------------------
ra_build_package "$T/src"
deb=$RA_DEB
grep -q '^PASS: tests/test-policy' "$T/src/build.log" || ra_fail "the package build did not run the unit tests"
ra_ok "built $(basename "$deb") from a copy of the source tree"

# What the package holds, as dpkg-deb sees it: files and links, no directories.
dpkg-deb --fsys-tarfile "$deb" | tar -tf - | sed -n 's|^\./|/|; /[^/]$/p' | sort >"$T/contents"
for f in /usr/sbin/radaemon /usr/bin/racontrol /lib/udev/radaemon-udev /lib/udev/rules.d/60-radaemon.rules \
	/lib/systemd/system/radaemon.service /lib/systemd/system/radaemon-metrics.service \
	/lib/systemd/system/radaemon-metrics.timer /usr/lib/systemd/catalog/radaemon.catalog \
	/usr/share/man/man8/radaemon-metrics.service.8.gz /lib/systemd/system/radaemon-prefetch@.service \
	/usr/share/dbus-1/system.d/org.radaemon.ReadAhead1.conf \
	/usr/share/dbus-1/system-services/org.radaemon.ReadAhead1.service \
	/usr/share/dbus-1/interfaces/org.radaemon.ReadAhead1.xml /usr/share/polkit-1/actions/org.radaemon.ReadAhead1.policy \
	/etc/radaemon/radaemon.conf /usr/share/man/man8/radaemon.8.gz /usr/share/man/man1/racontrol.1.gz \
	/usr/share/man/man5/radaemon.conf.5.gz /usr/share/man/man5/org.radaemon.ReadAhead1.5.gz \
	/usr/share/man/man8/radaemon-udev.8.gz /usr/share/bash-completion/completions/racontrol; do
	grep -qx "$f" "$T/contents" || ra_fail "the package lacks $f"
done

# --- install -----------------------------------------------------------------
# Before the rule is live: a drop-in that limits radaemon to one loop device
# of ours, so no other disk's event reaches the helper with devices = *.
index=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused 1000)
dropin=/etc/radaemon/radaemon.conf.d/zz-radaemon-package-test.conf
made_etc=
[[ -d /etc/radaemon ]] || made_etc=1
undo() {
	if dpkg-query -W -f '${db:Status-Status}' radaemon 2>/dev/null | grep -qvx not-installed; then
		dpkg --purge radaemon >>"$T/dpkg.log" 2>&1
	fi
	rm -f "$dropin"
	rmdir /etc/radaemon/radaemon.conf.d 2>/dev/null || true
	[[ -z $made_etc ]] || rmdir /etc/radaemon 2>/dev/null || true
	udevadm control --reload 2>/dev/null || true
}
RA_HOOKS+=(undo)
mkdir -p "${dropin%/*}"
printf '[daemon]\ndevices = loop%s\nbdis =\n' "$index" >"$dropin"

dpkg -i "$deb" >"$T/dpkg.log" 2>&1 || ra_fail "dpkg -i failed: $(cat "$T/dpkg.log")"
[[ $(dpkg-query -W -f '${db:Status-Status}' radaemon) == installed ]] || ra_fail "radaemon is not installed after dpkg -i"
ra_ok "dpkg -i $(basename "$deb")"

# dpkg -L lists every file of the package, and every file it lists is there.
dpkg -L radaemon | sort >"$T/listed"
missing=$(comm -23 "$T/contents" "$T/listed")
[[ -z $missing ]] || ra_fail "dpkg -L does not list: $missing"
while read -r path; do
	[[ -e $path || -L $path ]] || ra_fail "dpkg -L lists $path, which is not there"
done <"$T/listed"
ra_ok "dpkg -L lists all $(wc -l <"$T/contents") files, and each is there"

radaemon --version | grep -q "^radaemon " || ra_fail "the installed radaemon does not run"
racontrol --version | grep -q "^radaemon " || ra_fail "the installed racontrol does not run"
for page in radaemon racontrol radaemon.conf org.radaemon.ReadAhead1 radaemon-udev radaemon-metrics.service; do
	man -w "$page" >/dev/null 2>&1 || ra_fail "man $page finds no page"
done
[[ $(systemctl is-enabled radaemon.service 2>/dev/null) == enabled ]] || ra_fail "the package did not enable radaemon.service"
[[ $(systemctl is-enabled radaemon-metrics.timer 2>/dev/null) == enabled ]] || ra_fail "the package did not enable radaemon-metrics.timer"
for unit in radaemon.service radaemon-metrics.timer radaemon-metrics.service; do
	if ! systemd-analyze verify "/lib/systemd/system/$unit" >"$T/verify.log" 2>&1 || [[ -s $T/verify.log ]]; then
		ra_fail "systemd-analyze verify on the installed $unit: $(cat "$T/verify.log")"
	fi
done
ra_ok "installed programs run, man finds every page, the units are enabled and verify clean"

# The installed rule and helper: a new disk has its first value once udev settles.
udevadm control --reload
ra_new_loop tiny 505K "$index"
udevadm settle
[[ $(ra_kb "$LOOP") == 4 ]] || ra_fail "$LOOP (505 KiB) is at $(ra_kb "$LOOP") KiB with the package's rule, want 4"
udevadm info --query=property --name="/dev/$LOOP" | grep -qx RADAEMON_FIRST_KB=4 ||
	ra_fail "udev recorded no RADAEMON_FIRST_KB=4 for $LOOP"
ra_ok "the installed rule set $LOOP to 4 KiB before udevadm settle returned"

# --- remove and purge ----------------------------------------------------------
dpkg -r radaemon >>"$T/dpkg.log" 2>&1 || ra_fail "dpkg -r failed: $(tail "$T/dpkg.log")"
[[ -f /etc/radaemon/radaemon.conf ]] || ra_fail "dpkg -r removed the configuration; only --purge should"
while read -r path; do
	[[ ! -e $path && ! -L $path ]] || ra_fail "dpkg -r left $path"
done < <(grep -vx /etc/radaemon/radaemon.conf "$T/contents")
udevadm control --reload
rm -f "$dropin"
rmdir /etc/radaemon/radaemon.conf.d
mkdir -p /var/lib/radaemon # as systemd's StateDirectory= would have made it
echo "device name:x pin=64" >/var/lib/radaemon/state
dpkg --purge radaemon >>"$T/dpkg.log" 2>&1 || ra_fail "dpkg --purge failed: $(tail "$T/dpkg.log")"
dpkg-query -W -f '${db:Status-Status}' radaemon 2>/dev/null | grep -qvx not-installed &&
	ra_fail "radaemon is still known to dpkg after --purge"
for path in $(cat "$T/contents") /etc/radaemon /var/lib/radaemon /etc/systemd/system/multi-user.target.wants/radaemon.service \
	/etc/systemd/system/dbus-org.radaemon.ReadAhead1.service /etc/systemd/system/timers.target.wants/radaemon-metrics.timer; do
	[[ ! -e $path && ! -L $path ]] || ra_fail "dpkg --purge left $path"
done
ra_ok "dpkg -r keeps the configuration; dpkg --purge leaves nothing"
