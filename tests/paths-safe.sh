#!/bin/bash
# [path:] sections resolved safely (issue 47, item 4). A user who owns a
# directory under a configured path swaps it for a link to another disk:
# the link is not root's, so the section names nothing, and the
# administrator's value does not move onto that disk. And a [path:] below a
# FUSE mount whose server does not answer: the lookup runs in a child with
# a deadline of 2 s, so radaemon answers on the bus, and while that lookup
# has not returned no other starts (one warning, however many mount changes);
# it holds none of radaemon's descriptors, so the next radaemon starts.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
[[ -c /dev/fuse && -x $RA_BUILDDIR/tests/ra-testfs ]] || ra_skip "no /dev/fuse or no tests/ra-testfs"
id nobody >/dev/null 2>&1 || ra_skip "no user nobody"
ra_setup
ra_start_bus

ra_new_loop a 256M
a=$LOOP
ra_new_loop b 256M
b=$LOOP
udevadm settle
mkdir "$T/a" "$T/b" "$T/fuse" "$T/m"
for dev in "$a" "$b"; do
	mkfs.ext4 -q -F "/dev/$dev" >/dev/null
done
mount "/dev/$a" "$T/a" || ra_fail "cannot mount $a"
RA_MOUNTS+=("$T/a")
mount "/dev/$b" "$T/b" || ra_fail "cannot mount $b"
RA_MOUNTS+=("$T/b")
mkdir -p "$T/b/users/alice/data"
chown -R nobody "$T/b/users/alice"
ra_config <<CONF
[daemon]
devices = $a $b
bdis = $T/fuse
state_dir = $T/state

[path:$T/b/users/alice/data]
read_ahead_kb = 4096

[path:$T/fuse/data/db]
read_ahead_kb = 64
CONF
ra_start_daemon
ra_wait_kb "$b" 4096
before_a=$(ra_kb "$a")

# --- a user's link swapped in --------------------------------------------------------
runuser -u nobody -- sh -c "rmdir '$T/b/users/alice/data' && ln -s '$T/a' '$T/b/users/alice/data'" ||
	ra_fail "nobody could not swap in a link"
# A mount change has the sections looked up again.
mount -t tmpfs none "$T/m" || ra_fail "cannot mount a tmpfs"
RA_MOUNTS+=("$T/m")
ra_wait_log "\[path:$T/b/users/alice/data\]: (a link on its way|its files read with)"
sleep 1
[[ $(ra_kb "$a") == "$before_a" ]] || ra_fail "$a went from $before_a to $(ra_kb "$a") KiB through nobody's link"
ra_daemon_log_has "\[path:$T/b/users/alice/data\]: a link on its way is not root's" ||
	ra_fail "the log does not say why the section names nothing"
ra_ok "nobody's link to $a is not followed: $a stays at $before_a KiB"
umount "$T/m" && unset 'RA_MOUNTS[-1]'

# --- a FUSE server that does not answer a lookup --------------------------------------
touch "$T/stall"
release() { rm -f "$T/stall"; }
RA_HOOKS+=(release)
"$RA_BUILDDIR/tests/ra-testfs" --files 1 --size-mib 1 --stall-while "$T/stall" "$T/fuse" ||
	ra_fail "ra-testfs did not mount"
RA_MOUNTS+=("$T/fuse")
ra_wait_log "looking up their paths took longer than 2000 ms"
start=$SECONDS
timeout 5 "$RACONTROL" status >/dev/null || ra_fail "racontrol status did not answer while a lookup hangs"
for i in 1 2 3; do
	mount -t tmpfs none "$T/m" || ra_fail "cannot mount a tmpfs"
	timeout 5 "$RACONTROL" status >/dev/null || ra_fail "racontrol status did not answer after mount change $i"
	umount "$T/m"
done
took=$((SECONDS - start))
warnings=$(grep -ac "looking up their paths took longer" "$T/daemon.log")
((warnings == 1)) || ra_fail "$warnings lookups timed out, want 1 (one stuck at most)"
kill -0 "$DAEMON_PID" || ra_fail "radaemon died"
ra_ok "status answers while the lookup hangs; 6 mount changes in $took s, one lookup given up on"

# The stuck lookup outlives radaemon; it holds none of its descriptors, so
# the next radaemon takes the state directory's lock and starts.
ra_stop_daemon
ra_start_daemon
ra_ok "radaemon starts again while the last one's lookup is still stuck"

# The server answers again: the next mount change looks the paths up again.
rm -f "$T/stall"
sleep 0.5
mount -t tmpfs none "$T/m" || ra_fail "cannot mount a tmpfs"
umount "$T/m"
ra_wait_log "the lookup of their paths that did not return has ended"
ra_ok "once it returned, the sections are looked up again"
ra_stop_daemon
