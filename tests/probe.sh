#!/bin/bash
# Where udev has not probed a disk, radaemon asks libblkid for its file
# system, and reads no more than a few KiB doing so: a page on a small
# device, where blkid -p alone reads tens of KiB (and 1 MiB on a large one,
# through the kernel's 2560 KiB readahead).
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
command -v mke2fs >/dev/null || ra_skip "mke2fs is not installed"

sectors_read() { awk '{ print $3 }' "/sys/block/$1/stat"; }

for spec in tiny:505K:8 big:64M:16; do
	IFS=: read -r name size limit_kb <<<"$spec"
	truncate -s "$size" "$T/$name.img"
	mke2fs -q -F -b 1024 "$T/$name.img"
	ra_new_loop "$name" "$size" # keeps the file's contents
	dev=$LOOP
	udevadm settle
	blockdev --flushbufs "/dev/$dev"

	before=$(sectors_read "$dev")
	type=$("$RA_BUILDDIR/tests/probe-device" "$dev")
	after=$(sectors_read "$dev")
	read_kb=$(((after - before) / 2))

	[[ $type == ext2 ]] || ra_fail "$dev: probe found '$type', want ext2"
	((read_kb <= limit_kb)) || ra_fail "$dev ($size): the probe read $read_kb KiB, want <= $limit_kb"
	ra_ok "$dev ($size, read_ahead_kb $(ra_kb "$dev")): found $type reading $read_kb KiB"
done
