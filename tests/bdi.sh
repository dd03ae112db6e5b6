#!/bin/bash
# The bdis of btrfs file systems, on one device and on two: each is found
# when it is mounted and forgotten when it is unmounted, takes its prior from
# the devices beneath (not the kernel's 4 MiB), is pinned by [bdi:GLOB] and
# over D-Bus under the file system's UUID across mounts, and is put back by
# Restore. A btrfs outside bdis= is never touched. Then 200 mounts: the value
# is radaemon's every time, and how soon after mount(2) returned is counted.
# Named by its bdi, a btrfs is decided before mount(2) returns.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
command -v mkfs.btrfs >/dev/null || ra_fail "mkfs.btrfs is missing: ./install-deps --tests installs btrfs-progs"
ra_setup
ra_start_bus

ra_new_loop a 8G
a=$LOOP
ra_new_loop b 8G
b=$LOOP
ra_set_rotational "$a" 1
ra_set_rotational "$b" 1
udevadm settle
mkdir "$T/mnt" "$T/mnt2" "$T/other"
ra_config <<CONF
[daemon]
devices = $a $b
bdis = $T/mnt $T/mnt2 $T/fuse
state_dir = $T/state
CONF
ra_start_daemon

prop() {
	local path
	path=$(ra_busctl call org.radaemon.ReadAhead1 /org/radaemon/ReadAhead1 org.radaemon.ReadAhead1.Manager \
		GetDevice s "$1" | cut -d'"' -f2)
	ra_busctl get-property org.radaemon.ReadAhead1 "$path" org.radaemon.ReadAhead1.Device "$2" | cut -d' ' -f2-
}
show() { "$RACONTROL" show "$1" --json; }
mount_btrfs() {
	mount -t btrfs "$1" "$2" || ra_fail "cannot mount $1 at $2"
	RA_MOUNTS+=("$2")
}
umount_btrfs() {
	umount "$1" || ra_fail "cannot unmount $1"
	unset 'RA_MOUNTS[-1]'
}

# One device: the disk's prior, not 4 MiB.
mkfs.btrfs -q -f "/dev/$a" >/dev/null
mount_btrfs "/dev/$a" "$T/mnt"
bdi=$(ra_btrfs_bdi "/dev/$a")
disk_prior=$(ra_kb "$a")
ra_wait_for "show $bdi >/dev/null 2>&1" || ra_fail "no object for $bdi after mounting: $("$RACONTROL" status)"
show "$bdi" >"$T/show.json"
python3 - "$T/show.json" "$T/mnt" "$disk_prior" <<'PY' || ra_fail "$bdi on D-Bus: $(cat "$T/show.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kind"] == "bdi" and d["file_system"] == "btrfs" and d["mount_point"] == sys.argv[2], d
assert d["transport"] == "btrfs" and d["identity"].startswith("btrfs:"), d
assert d["source"] == "prior" and d["target_kb"] == int(sys.argv[3]), d
assert "slowest device" in d["reason"], d
PY
ra_wait_for "[[ \$(ra_bdi_kb $bdi) == $disk_prior ]]" || ra_fail "$bdi holds $(ra_bdi_kb "$bdi"), not $disk_prior"
[[ $(prop "$bdi" Beneath) == "1 \"$a\"" ]] || ra_fail "$bdi Beneath is $(prop "$bdi" Beneath)"
"$RACONTROL" status | grep -qE "^$bdi +btrfs .* $disk_prior +prior" || ra_fail "status: $("$RACONTROL" status)"
ra_ok "btrfs on $a: $bdi at $disk_prior KiB, $a's prior, not the kernel's 4096"

# Unmounted: forgotten. A btrfs outside bdis= is left alone.
umount_btrfs "$T/mnt"
ra_wait_log "^$bdi: unmounted"
mount_btrfs "/dev/$a" "$T/other"
other=$(ra_btrfs_bdi "/dev/$a")
sleep 1 # a mount the daemon handles is handled within milliseconds: give it a second
[[ $(ra_bdi_kb "$other") == 4096 ]] || ra_fail "$other outside bdis= was changed to $(ra_bdi_kb "$other")"
show "$other" >/dev/null 2>&1 && ra_fail "$other outside bdis= is managed"
umount_btrfs "$T/other"
ra_ok "unmounted: $bdi forgotten; $other at $T/other (not in bdis=) left at 4096"

# Two devices striped: twice the window; mirrored: one device's.
mkfs.btrfs -q -f -d raid0 -m raid1 "/dev/$a" "/dev/$b" >/dev/null
mount_btrfs "/dev/$a" "$T/mnt2"
bdi=$(ra_btrfs_bdi "/dev/$a")
ra_wait_for "[[ \$(ra_bdi_kb $bdi) == $((2 * disk_prior)) ]]" ||
	ra_fail "raid0 over two: $bdi holds $(ra_bdi_kb "$bdi"), not $((2 * disk_prior)): $(show "$bdi")"
umount_btrfs "$T/mnt2"
# raid0 over two partitions of one disk: a stripe read one at a time.
ra_new_loop c 8G
c=$LOOP
ra_set_rotational "$c" 1
python3 - "$T/c.img" <<'PY'
import struct, sys
half = (8 << 30) // 512 // 2
part = lambda start, n: struct.pack("<B3sB3sII", 0, b"\0" * 3, 0x83, b"\0" * 3, start, n)
with open(sys.argv[1], "r+b") as f:
    f.seek(446)
    f.write(part(2048, half - 2048) + part(half, half) + bytes(32) + b"\x55\xaa")
PY
partx -a "/dev/$c" || ra_fail "cannot add the partitions of $c"
udevadm settle
mkfs.btrfs -q -f -d raid0 -m raid1 "/dev/${c}p1" "/dev/${c}p2" >/dev/null
mount_btrfs "/dev/${c}p1" "$T/mnt2"
bdi=$(ra_btrfs_bdi "/dev/${c}p1")
ra_wait_for "show $bdi >/dev/null 2>&1" || ra_fail "no object for $bdi"
[[ $(prop "$bdi" Beneath) == "1 \"$c\"" ]] || ra_fail "$bdi Beneath is $(prop "$bdi" Beneath), not $c once"
ra_wait_for "[[ \$(ra_bdi_kb $bdi) == $disk_prior ]]" ||
	ra_fail "raid0 over two partitions of $c: $bdi holds $(ra_bdi_kb "$bdi"), not $disk_prior: $(show "$bdi")"
umount_btrfs "$T/mnt2"
btrfs device scan --forget "/dev/${c}p1" "/dev/${c}p2" 2>/dev/null || true
partx -d "/dev/$c" || ra_fail "cannot remove the partitions of $c"
mkfs.btrfs -q -f -d raid1 -m raid1 "/dev/$a" "/dev/$b" >/dev/null
mount_btrfs "/dev/$b" "$T/mnt2"
bdi=$(ra_btrfs_bdi "/dev/$b")
ra_wait_for "[[ \$(ra_bdi_kb $bdi) == $disk_prior ]]" ||
	ra_fail "raid1 over two: $bdi holds $(ra_bdi_kb "$bdi"), not $disk_prior: $(show "$bdi")"
uuid=$(show "$bdi" | python3 -c 'import json, sys; print(json.load(sys.stdin)["identity"])')
ra_ok "two devices: raid0 $((2 * disk_prior)) KiB, raid1 $disk_prior KiB; raid0 over two partitions of one disk $disk_prior KiB"

# A pin over D-Bus is kept under the file system's UUID: the next mount has it.
"$RACONTROL" set "$bdi" 1024 >/dev/null || ra_fail "racontrol set $bdi 1024 failed"
[[ $(ra_bdi_kb "$bdi") == 1024 ]] || ra_fail "$bdi is $(ra_bdi_kb "$bdi") after set 1024"
grep -qE "^device $uuid original=4096 pin=1024$" "$T/state/state" ||
	ra_fail "the pin and the kernel's original are not in the state: $(cat "$T/state/state")"
umount_btrfs "$T/mnt2"
mount_btrfs "/dev/$b" "$T/mnt2"
bdi=$(ra_btrfs_bdi "/dev/$b")
ra_wait_for "[[ \$(ra_bdi_kb $bdi) == 1024 ]]" || ra_fail "remounted: $bdi is $(ra_bdi_kb "$bdi"), not the pinned 1024"
"$RACONTROL" auto "$bdi" >/dev/null || ra_fail "racontrol auto $bdi failed"
ra_wait_for "[[ \$(ra_bdi_kb $bdi) == $disk_prior ]]" || ra_fail "auto: $bdi is $(ra_bdi_kb "$bdi")"
ra_ok "pin: 1024 KiB kept under $uuid across a remount (new bdi $bdi); auto hands it back"

# The configuration pins by mount point; Restore puts the kernel's value back.
ra_config <<CONF
[daemon]
devices = $a $b
bdis = $T/mnt $T/mnt2 $T/fuse
state_dir = $T/state
[bdi:$T/mnt2]
read_ahead_kb = 768
CONF
"$RACONTROL" reload >/dev/null || ra_fail "reload failed"
ra_wait_for "[[ \$(ra_bdi_kb $bdi) == 768 ]]" || ra_fail "[bdi:$T/mnt2] read_ahead_kb = 768: $bdi is $(ra_bdi_kb "$bdi")"
"$RACONTROL" restore >/dev/null || ra_fail "racontrol restore failed"
[[ $(ra_bdi_kb "$bdi") == 4096 ]] || ra_fail "restore: $bdi is $(ra_bdi_kb "$bdi"), not the kernel's 4096"
"$RACONTROL" reload >/dev/null || ra_fail "reload failed"
umount_btrfs "$T/mnt2"
ra_ok "[bdi:$T/mnt2] pins 768 KiB at a reload; restore puts back 4096"

# 200 mounts: radaemon's value every time. Counted, not timed: how often it
# was there when mount(2) returned, and when the test first looked.
at_return=0
for ((i = 0; i < 200; i++)); do
	mount -t btrfs "/dev/$b" "$T/mnt2" || ra_fail "mount $i failed"
	RA_MOUNTS+=("$T/mnt2")
	bdi=$(ra_btrfs_bdi "/dev/$b")
	[[ $(ra_bdi_kb "$bdi") == 768 ]] && at_return=$((at_return + 1))
	ra_wait_for "[[ \$(ra_bdi_kb $bdi) == 768 ]]" || ra_fail "mount $i: $bdi is $(ra_bdi_kb "$bdi"), not 768"
	umount "$T/mnt2" || ra_fail "umount $i failed"
	unset 'RA_MOUNTS[-1]'
done
ra_ok "200 mounts: 768 KiB every time; in place at the first look after mount(2) in $at_return of 200"

# Named by bdi name or type, a btrfs is decided while mount(2) runs: from the
# kernel's uevent for its bdi and the link btrfs makes to it, before the mount
# is in mountinfo. Mounted in a mount namespace of its own, it never is in
# radaemon's: only that way can it be decided, and it is forgotten when its
# bdi goes. The name is foreseen: the next bdi made this way is btrfs-(N+1)
# after btrfs-N.
mount_btrfs "/dev/$b" "$T/other"
n=$(ra_btrfs_bdi "/dev/$b")
n=${n#btrfs-}
umount_btrfs "$T/other"
ra_config <<CONF
[daemon]
devices = $a $b
bdis = $T/mnt $T/mnt2 $T/fuse btrfs-$((n + 1))
state_dir = $T/state
CONF
"$RACONTROL" reload >/dev/null || ra_fail "reload failed"
bdi=btrfs-$((n + 1))
# shellcheck disable=SC2016 # expanded by the inner shell, from its arguments
unshare -m --propagation private bash -c '
	mount -t btrfs "/dev/$1" "$2" || exit 1
	[[ -e /sys/class/bdi/$3 ]] || { umount "$2"; exit 2; }
	for ((i = 0; i < 500; i++)); do
		[[ $(cat "/sys/class/bdi/$3/read_ahead_kb") == "$4" ]] && break
		sleep 0.01
	done
	umount "$2"
	((i < 500)) || exit 3' early "$b" "$T/other" "$bdi" "$disk_prior"
case $? in
0) ;;
2) ra_fail "the mount made another bdi than $bdi: another came between" ;;
3) ra_fail "$bdi, mounted where radaemon cannot see it, stayed at the kernel's value, not $disk_prior" ;;
*) ra_fail "cannot mount /dev/$b in a mount namespace of its own" ;;
esac
ra_wait_log "^$bdi: unmounted"
grep -q "^$bdi: btrfs being mounted (btrfs:" "$T/daemon.log" || ra_fail "$bdi: $(grep "^$bdi" "$T/daemon.log")"
grep -q "^$bdi: read_ahead_kb 4096 -> $disk_prior KiB (prior, on mount)" "$T/daemon.log" ||
	ra_fail "$bdi: $(grep "^$bdi" "$T/daemon.log")"
ra_ok "$bdi named in bdis=, mounted out of radaemon's sight: $disk_prior KiB while mount(2) ran, forgotten after"

# FUSE: the window the server left at INIT (64 KiB here) is the prior, even
# when radaemon sees the mount before the server answered; a pin raises it.
mkdir "$T/fuse"
"$RA_BUILDDIR/tests/ra-testfs" --files 2 --size-mib 16 --max-readahead-kb 64 "$T/fuse" ||
	ra_fail "ra-testfs did not mount"
RA_MOUNTS+=("$T/fuse")
fuse=$(mountpoint -d "$T/fuse")
ra_wait_for "show $fuse 2>/dev/null | grep -q '\"target_kb\":64'" ||
	ra_fail "FUSE bdi $fuse: $(show "$fuse" 2>&1)"
show "$fuse" >"$T/show.json"
python3 - "$T/show.json" "$T/fuse" <<'PY' || ra_fail "FUSE bdi on D-Bus: $(cat "$T/show.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kind"] == "bdi" and d["file_system"] == "fuse.ra-testfs" and d["mount_point"] == sys.argv[2], d
assert d["transport"] == "fuse" and d["source"] == "prior" and "server" in d["reason"], d
assert d["identity"] == "fuse:fuse.ra-testfs:ra-testfs@" + sys.argv[2], d
PY
[[ $(ra_bdi_kb "$fuse") == 64 ]] || ra_fail "FUSE bdi $fuse holds $(ra_bdi_kb "$fuse"), not the server's 64"
"$RACONTROL" set "$fuse" 1024 >/dev/null || ra_fail "racontrol set $fuse 1024 failed"
[[ $(ra_bdi_kb "$fuse") == 1024 ]] || ra_fail "FUSE bdi $fuse is $(ra_bdi_kb "$fuse") after set 1024"
cat "$T/fuse/file-001" >/dev/null || ra_fail "cannot read from ra-testfs"
umount "$T/fuse" || ra_fail "cannot unmount $T/fuse"
unset 'RA_MOUNTS[-1]'
ra_wait_log "^$fuse: unmounted"
ra_ok "FUSE: $fuse at the server's 64 KiB (prior), pinned to 1024, forgotten at umount"

# The pin holds at the next mount, and is written before a server slow to
# answer INIT (300 ms late here) has answered: the answer lowers it to
# min(1024, 64), and radaemon writes it again rather than yield to it.
lowered=$(grep -c "lowered the window to 64 KiB at INIT" "$T/daemon.log" || true)
"$RA_BUILDDIR/tests/ra-testfs" --files 1 --size-mib 16 --max-readahead-kb 64 --init-delay-ms 300 "$T/fuse" ||
	ra_fail "ra-testfs --init-delay-ms 300 did not mount"
RA_MOUNTS+=("$T/fuse")
fuse=$(mountpoint -d "$T/fuse")
ra_wait_for "(( \$(grep -c 'lowered the window to 64 KiB at INIT' $T/daemon.log) > $lowered ))" ||
	ra_fail "FUSE bdi $fuse: INIT's answer not seen as the server's: $(grep "^$fuse:" "$T/daemon.log" | tail -3)"
ra_wait_for "[[ \$(ra_bdi_kb $fuse) == 1024 ]]" ||
	ra_fail "FUSE bdi $fuse is $(ra_bdi_kb "$fuse") after INIT, not the pin's 1024"
umount "$T/fuse" || ra_fail "cannot unmount $T/fuse"
unset 'RA_MOUNTS[-1]'
ra_ok "FUSE: the pin, written before INIT and lowered by the answer to 64, written again"

# ra-testfs's link: a bad --bandwidth-mbs is refused by name, and 16 MiB
# through 16 MB/s take a second at least, whatever the window.
for bad in 0 100001 12x; do
	rc=0
	out=$("$RA_BUILDDIR/tests/ra-testfs" --bandwidth-mbs="$bad" "$T/fuse" 2>&1) || rc=$?
	[[ $rc == 2 && $out == *"--bandwidth-mbs must be an integer from 1 to 100000, not '$bad'"* ]] ||
		ra_fail "ra-testfs --bandwidth-mbs=$bad: exit $rc, '$out'"
done
"$RA_BUILDDIR/tests/ra-testfs" --files 1 --size-mib 16 --bandwidth-mbs 16 "$T/fuse" ||
	ra_fail "ra-testfs --bandwidth-mbs 16 did not mount"
RA_MOUNTS+=("$T/fuse")
start=$EPOCHREALTIME
cat "$T/fuse/file-000" >/dev/null || ra_fail "cannot read from ra-testfs at 16 MB/s"
ms=$(((${EPOCHREALTIME/./} - ${start/./}) / 1000))
umount "$T/fuse" || ra_fail "cannot unmount $T/fuse"
unset 'RA_MOUNTS[-1]'
((ms >= 1000)) || ra_fail "16 MiB at --bandwidth-mbs 16 took $ms ms, not 1049 or more"
ra_ok "ra-testfs --bandwidth-mbs: bad values refused; 16 MiB at 16 MB/s in $ms ms"
ra_stop_daemon

# The udev helper, as the rule runs it on a btrfs bdi's "add" (by hand here:
# the bdi's name is known only once it exists, and the rule's allow-list is
# the configuration's): the same prior as radaemon's, without radaemon.
mkfs.btrfs -q -f "/dev/$a" >/dev/null
mount_btrfs "/dev/$a" "$T/mnt"
bdi=$(ra_btrfs_bdi "/dev/$a")
printf '[daemon]\ndevices = %s\nbdis = %s\nstate_dir = %s\n' "$a" "$bdi" "$T/helper-state" >"$T/helper.conf"
out=$(ACTION=add "$RA_BUILDDIR/udev/radaemon-udev" --config "$T/helper.conf" --bdi "$bdi" 2>"$T/helper.err") ||
	ra_fail "radaemon-udev --bdi $bdi failed: $(cat "$T/helper.err")"
[[ $out == *"RADAEMON_FIRST_KB=$disk_prior"* && $out == *"RADAEMON_ORIGINAL_KB=4096"* ]] ||
	ra_fail "radaemon-udev --bdi $bdi printed '$out' ($(cat "$T/helper.err"))"
[[ $(ra_bdi_kb "$bdi") == "$disk_prior" ]] || ra_fail "radaemon-udev --bdi: $bdi is $(ra_bdi_kb "$bdi")"
out=$("$RA_BUILDDIR/udev/radaemon-udev" --config "$T/helper.conf" --bdi btrfs-nonesuch 2>&1) ||
	ra_fail "radaemon-udev --bdi of an unknown bdi failed: $out"
umount_btrfs "$T/mnt"
ra_ok "radaemon-udev --bdi $bdi: $disk_prior KiB from 4096 without radaemon, as radaemon decides"
