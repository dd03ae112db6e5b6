#!/bin/bash
# The package builds from its Build-Depends alone, as a distribution's build
# root builds it. A clean Debian root (mmdebstrap --variant=buildd: the
# essential packages, apt and build-essential, nothing else) gets what
# apt-get build-dep reads from debian/control, without Recommends; then
# dpkg-buildpackage -us -uc -b builds the package, unit tests included, as an
# unprivileged user. A library or tool that configure, the build or the unit
# tests need and debian/control does not name fails here. tests/package.sh
# cannot see one: it builds on this machine, where everything is installed.
#
# The release is RA_DEBIAN's: bookworm (Debian 12, the default) or trixie
# (Debian 13); each has its own root, download cache and lock.
#
# The root is built once by mmdebstrap and kept in RA_IMAGE_CACHE
# (/var/cache/radaemon-tests). Each run builds on an overlay over it, in a
# mount and a PID namespace of its own: the root stays as built, and every
# mount and process of the build ends with the namespace. The .debs apt
# downloads are kept beside the root, so a later run downloads only what
# changed; they are installed afresh every time.
#
# ./run-tests runs this once for each release, beside tests/package.sh: it
# downloads and builds for minutes, which make check (run plain, with ASan
# and by distcheck) should not do each time.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
version=$(ra_debian_version)

[[ $(id -u) == 0 ]] || ra_fail "needs root to build a root, mount an overlay and chroot"
for tool in mmdebstrap unshare chroot; do
	command -v "$tool" >/dev/null || ra_fail "$tool is not installed (./install-deps --tests installs it)"
done
[[ -f $RA_SRCDIR/debian/control ]] || ra_fail "no debian/control in $RA_SRCDIR"
if ! grep -qw overlay /proc/filesystems; then
	modprobe overlay 2>/dev/null || true
	grep -qw overlay /proc/filesystems || ra_skip_for_kernel overlayfs "the build root is an overlay over the cached one"
fi
# Building the root (the first run), the downloads and the build take minutes.
((RA_TEST_LIMIT >= 900)) || RA_TEST_LIMIT=900
# Not ra_setup: this test needs no udevd, loop device or daemon of this tree.
T=$(mktemp -d /tmp/radaemon-test.XXXXXX)
trap ra_cleanup EXIT
cache=${RA_IMAGE_CACHE:-/var/cache/radaemon-tests}
mkdir -p "$cache"
# One run at a time builds the root and fills the download cache.
exec 9>"$cache/$RA_DEBIAN-buildd.lock"
flock 9
ra_watchdog
started=$SECONDS

# --- the root ----------------------------------------------------------------
# Rebuilt when missing, or when what this test puts into it changes (the
# number in its name). mmdebstrap runs in namespaces of its own too: the
# mounts it makes in the root cannot outlive it.
image=$cache/$RA_DEBIAN-buildd-1
debs=$cache/$RA_DEBIAN-buildd-debs
builder=4243
# shellcheck disable=SC2016 # $1 is mmdebstrap's: the root being built
ra_cached_root "$image" "the Debian $version build root" --variant=buildd \
	--customize-hook="chroot \"\$1\" groupadd --gid $builder builder" \
	--customize-hook="chroot \"\$1\" useradd --create-home --uid $builder --gid $builder builder"
mkdir -p "$debs/partial"

# --- the build -----------------------------------------------------------------
# The source at /build/radaemon, owned by the user who builds it; the .deb
# lands beside it, in $T/build.
ra_copy_source "$T/build/radaemon"
chown -R "$builder:$builder" "$T/build"
mkdir "$T/upper" "$T/work" "$T/root"

# in_root: runs in the new namespaces. Mounts the overlay, /proc, a minimal
# /dev, the source and the download cache; installs the Build-Depends as root
# and builds as the user. Each step's output goes to its own log in $T.
in_root() {
	set -euo pipefail
	local root=$T/root node
	mount -t overlay overlay -o "lowerdir=$image,upperdir=$T/upper,workdir=$T/work" "$root"
	mount -t proc proc "$root/proc"
	mount -t tmpfs -o mode=755,nosuid dev "$root/dev"
	for node in null zero full random urandom tty; do
		touch "$root/dev/$node"
		mount --bind "/dev/$node" "$root/dev/$node"
	done
	ln -s /proc/self/fd "$root/dev/fd"
	mkdir "$root/dev/shm" "$root/build"
	mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"
	mount --bind "$T/build" "$root/build"
	mount --bind "$debs" "$root/var/cache/apt/archives"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf"

	local clean=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive)
	# The root must lack something the package needs, or the test would
	# prove nothing.
	if chroot "$root" "${clean[@]}" sh -c 'cd /build/radaemon && dpkg-checkbuilddeps' >"$T/before.log" 2>&1; then
		echo "the clean root already satisfies the Build-Depends" >"$T/step"
		return 1
	fi
	echo "apt-get update" >"$T/step"
	chroot "$root" "${clean[@]}" apt-get update >"$T/apt.log" 2>&1
	echo "apt-get build-dep" >"$T/step"
	chroot "$root" "${clean[@]}" sh -c 'cd /build/radaemon && apt-get build-dep -y --no-install-recommends ./' \
		>>"$T/apt.log" 2>&1
	# Keeps the download cache to what the mirror still has.
	chroot "$root" "${clean[@]}" apt-get autoclean >>"$T/apt.log" 2>&1
	date +%s >"$T/installed"
	echo "dpkg-buildpackage" >"$T/step"
	chroot --userspec="$builder:$builder" "$root" "${clean[@]}" HOME=/home/builder \
		DEB_BUILD_OPTIONS="parallel=$(nproc)" \
		sh -c 'cd /build/radaemon && dpkg-buildpackage -us -uc -b' >"$T/build.log" 2>&1
	echo "done" >"$T/step"
}

export T image debs builder
build_started=$(date +%s)
unshare --mount --propagation private --pid --fork --kill-child \
	bash -c "$(declare -f in_root); in_root" >"$T/in-root.log" 2>&1 || true
step=$(cat "$T/step" 2>/dev/null || echo "setting up the root")
case $step in
done) ;;
"the clean root already satisfies the Build-Depends")
	ra_fail "$step: $(cat "$T/before.log")" ;;
"apt-get update" | "apt-get build-dep")
	ra_fail "$step failed in the clean root: $(tail -n 30 "$T/apt.log")" ;;
dpkg-buildpackage)
	# After a failed configure, dh prints all of config.log: its error first.
	ra_fail "dpkg-buildpackage failed with only the Build-Depends installed: $(
		grep -m 10 -E -A 2 '^configure: error:' "$T/build.log" || true
		tail -n 5 "$T/build.log"
	)" ;;
*)
	ra_fail "$step failed: $(cat "$T/in-root.log")" ;;
esac
installed=$(cat "$T/installed")
ra_ok "apt-get build-dep installed the Build-Depends in $((installed - build_started)) s"
grep -q '^PASS: tests/test-policy' "$T/build.log" || ra_fail "the package build did not run the unit tests"
# Where the files go comes from the .pc files of systemd, udev and D-Bus;
# without one, configure falls back to a path below the prefix, quietly: the
# build passes and the package puts files where nothing looks. A fallback
# shows in configure's summary as the unexpanded ${prefix} or ${datadir}.
# (polkit's is left to its fallback on purpose: the same path, without
# polkit's development files and all of GLib's.)
for dir in 'systemd units' 'journal catalog' 'udev rules, helper' 'D-Bus policy' 'D-Bus activation' 'D-Bus interfaces'; do
	line=$(grep -m 1 "^  $dir: " "$T/build.log") || ra_fail "configure's summary has no '$dir'"
	[[ $line != *"\${"* ]] || ra_fail "configure found no .pc file for $dir in the Build-Depends, and fell back: $line"
done
deb=$(echo "$T"/build/radaemon_*_"$(dpkg --print-architecture)".deb)
[[ -f $deb ]] || ra_fail "dpkg-buildpackage made no package: $(ls "$T/build")"
ra_ok "built $(basename "$deb") as user $builder in $(($(date +%s) - installed)) s, unit tests passed"

# The namespace took its mounts and processes with it.
if grep -q " $T/" /proc/self/mountinfo; then
	ra_fail "still mounted: $(grep " $T/" /proc/self/mountinfo)"
fi
ra_ok "built from its Build-Depends alone in a clean Debian $version ($RA_DEBIAN) root, $((SECONDS - started)) s in all"
