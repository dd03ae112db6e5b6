#!/bin/bash
# Paths instead of device names: racontrol show PATH names the object whose
# window the files under PATH read with (the disk under an ext4, the bdi of
# a btrfs), with the mount; set and auto take a path too; a [path:PATH]
# section pins or bounds whatever PATH is on, follows an unmount and a mount
# again, and bounds a btrfs bdi. A path on tmpfs or proc, or on a disk
# radaemon does not manage, is a clear error.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
command -v mkfs.btrfs >/dev/null || ra_fail "mkfs.btrfs is missing: ./install-deps installs btrfs-progs"
ra_setup
ra_start_bus

ra_new_loop a 2G
a=$LOOP
ra_new_loop b 2G
b=$LOOP
udevadm settle
mkdir "$T/a" "$T/b"
mkfs.ext4 -q -F "/dev/$a" >/dev/null
mkfs.btrfs -q -f "/dev/$b" >/dev/null
mount "/dev/$a" "$T/a" || ra_fail "cannot mount $a"
RA_MOUNTS+=("$T/a")
mkdir "$T/a/data"
echo hello >"$T/a/data/file"
ra_config <<CONF
[daemon]
devices = $a $b
bdis = $T/b $T/fuse
state_dir = $T/state

[path:$T/a/data]
read_ahead_kb = 384

[path:$T/b/db]
max_kb = 64
CONF
ra_start_daemon
prior_b=$(ra_kb "$b")

# The section found the ext4's disk at start.
ra_wait_for "[[ \$(ra_kb $a) == 384 ]]" || ra_fail "$a holds $(ra_kb "$a"), not [path:]'s 384"
ra_daemon_log_has "\[path:$T/a/data\]: its files read with $a's window" || ra_fail "no log line for the section"
ra_ok "[path:$T/a/data] set $a, the disk its ext4 is on, to 384 KiB at start"

# show PATH: the object, the mount, the value and its reason.
"$RACONTROL" show "$T/a/data/file" >"$T/show.txt" || ra_fail "show PATH failed: $(cat "$T/show.txt")"
grep -q "^$T/a/data/file: its files read with $a's window (ext4 on /dev/$a, mounted at $T/a)" "$T/show.txt" ||
	ra_fail "show PATH: $(cat "$T/show.txt")"
grep -q "384" "$T/show.txt" || ra_fail "show PATH has no value: $(cat "$T/show.txt")"
(cd "$T/a/data" && "$RACONTROL" show --json .) >"$T/show.json" || ra_fail "show . failed"
python3 - "$T/show.json" "$T/a/data" "$T/a" "$a" <<'PY' || ra_fail "show --json PATH: $(cat "$T/show.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["path"] == "." and d["mount_point"] == sys.argv[3] and d["file_system"] == "ext4", d
assert d["device"]["name"] == sys.argv[4] and d["device"]["read_ahead_kb"] == 384, d
assert d["device"]["source"] == "config", d
PY
ra_ok "show PATH and show --json . name $a, its mount and its value"

# set PATH and auto PATH pin and release the disk.
"$RACONTROL" set "$T/a/data" 512 --runtime >/dev/null || ra_fail "set PATH failed"
[[ $(ra_kb "$a") == 512 ]] || ra_fail "set PATH: $a holds $(ra_kb "$a")"
"$RACONTROL" auto "$T/a/data" >/dev/null || ra_fail "auto PATH failed"
ra_wait_for "[[ \$(ra_kb $a) == 384 ]]" || ra_fail "auto PATH: $a holds $(ra_kb "$a"), not 384"
ra_ok "set PATH pinned $a to 512 KiB, auto PATH gave it back to the section's 384"

# Unmounted, the section is for the root's disk (not managed); mounted again, for $a again.
umount "$T/a"
unset 'RA_MOUNTS[-1]'
ra_wait_for "[[ \$(ra_kb $a) != 384 ]]" || ra_fail "$a kept the section's 384 after the unmount"
unmounted_kb=$(ra_kb "$a")
mount "/dev/$a" "$T/a" || ra_fail "cannot mount $a again"
RA_MOUNTS+=("$T/a")
ra_wait_for "[[ \$(ra_kb $a) == 384 ]]" || ra_fail "$a holds $(ra_kb "$a") after the mount, not 384"
ra_ok "the section left $a at the unmount (to $unmounted_kb KiB) and took it again at the mount"

# btrfs: the bdi, bounded by a section on a directory inside it.
mount "/dev/$b" "$T/b" || ra_fail "cannot mount $b"
RA_MOUNTS+=("$T/b")
mkdir "$T/b/db"
bdi=$(basename "$(readlink "/sys/fs/btrfs/$(btrfs filesystem show --raw "/dev/$b" | sed -n 's/.*uuid: //p')/bdi")")
ra_wait_for "\"$RACONTROL\" show $bdi >/dev/null 2>&1" || ra_fail "no object for $bdi"
"$RACONTROL" show "$T/b/db" >"$T/show.txt" || ra_fail "show btrfs PATH: $(cat "$T/show.txt")"
grep -q "its files read with the bdi $bdi's window (btrfs on /dev/$b" "$T/show.txt" ||
	ra_fail "show btrfs PATH: $(cat "$T/show.txt")"
ra_wait_for "[[ \$(cat /sys/class/bdi/$bdi/read_ahead_kb) == 64 ]]" ||
	ra_fail "$bdi holds $(cat "/sys/class/bdi/$bdi/read_ahead_kb"), not the section's max_kb 64 (prior $prior_b)"
ra_ok "show PATH on btrfs names $bdi; [path:$T/b/db] max_kb 64 bounds it"
umount "$T/b"
unset 'RA_MOUNTS[-1]'

# FUSE: the bdi of the mount's anonymous dev, which a section pins.
mkdir "$T/fuse"
"$RA_BUILDDIR/tests/ra-testfs" --files 2 --size-mib 16 "$T/fuse" || ra_fail "ra-testfs did not mount"
RA_MOUNTS+=("$T/fuse")
fuse=$(mountpoint -d "$T/fuse")
ra_wait_for "\"$RACONTROL\" show $fuse >/dev/null 2>&1" || ra_fail "no object for the FUSE bdi $fuse"
"$RACONTROL" show "$T/fuse/file-001" >"$T/show.txt" || ra_fail "show FUSE PATH: $(cat "$T/show.txt")"
grep -q "its files read with the bdi $fuse's window (fuse.ra-testfs on ra-testfs" "$T/show.txt" ||
	ra_fail "show FUSE PATH: $(cat "$T/show.txt")"
"$RACONTROL" set "$T/fuse/file-001" 32 --runtime >/dev/null || ra_fail "set FUSE PATH failed"
[[ $(cat "/sys/class/bdi/$fuse/read_ahead_kb") == 32 ]] || ra_fail "set FUSE PATH: $fuse not at 32"
umount "$T/fuse"
unset 'RA_MOUNTS[-1]'
ra_ok "show and set PATH on a FUSE mount act on its bdi $fuse"

# Clear errors, exit 1.
for p in /proc /nonexistent/x; do
	rc=0
	"$RACONTROL" show "$p" 2>"$T/err" || rc=$?
	((rc == 1)) || ra_fail "show $p exited $rc"
	[[ -s $T/err ]] || ra_fail "show $p said nothing"
done
grep -q "No such file" "$T/err" || ra_fail "show /nonexistent/x: $(cat "$T/err")"
rc=0
"$RACONTROL" show "$T" 2>"$T/err" || rc=$?
if ((rc != 1)) || ! grep -q "which radaemon does not manage" "$T/err"; then
	ra_fail "show $T (not managed): $(cat "$T/err")"
fi
ra_ok "a path on proc, a missing path and one on an unmanaged disk: exit 1, one line why"

# Bash completes a path where a device goes.
# shellcheck source=racontrol/racontrol.bash-completion
source "$RA_SRCDIR/racontrol/racontrol.bash-completion"
COMP_WORDS=(racontrol show "$T/a/da")
COMP_CWORD=2
_racontrol
[[ " ${COMPREPLY[*]} " == *" $T/a/data "* ]] || ra_fail "completion of $T/a/da: ${COMPREPLY[*]}"
ra_ok "bash completes racontrol show $T/a/da to $T/a/data"

ra_stop_daemon
