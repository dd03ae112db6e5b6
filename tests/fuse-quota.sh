#!/bin/bash
# What a user mounts is bounded in the state file (issue 47): an unprivileged
# user's 24 FUSE mounts outside /tmp, each unmounted again, leave 16 stored,
# under their owner; four at mount points of 2,000 bytes leave nothing.
# radaemon tunes them all the same.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
ra_start_bus
ra_new_loop a 64M

ra_user_dir quota 8
for i in $(seq -w 1 24); do
	mkdir "$U/m$i"
done
for i in 1 2 3 4; do
	mkdir "$LONG/m$i"
done
ra_user_dir_give

ra_config <<CONF
[daemon]
devices = $LOOP
bdis = $U/*
state_dir = $T/state
CONF
ra_start_daemon

mount_user() {
	ra_as_nobody "$RA_BUILDDIR/tests/ra-testfs" --files 1 --size-mib 1 "$1" || ra_fail "nobody cannot mount ra-testfs at $1"
	local dev
	dev=$(ra_as_nobody mountpoint -d "$1")
	ra_wait_log "^$dev: fuse.ra-testfs at " || ra_fail "$1 ($dev) was not found"
}

# One at a time, each found before the next.
for i in $(seq -w 1 24); do
	mount_user "$U/m$i"
done
for i in 1 2 3 4; do
	mount_user "$LONG/m$i"
done
for m in "$U"/m* "$LONG"/m*; do
	ra_as_nobody fusermount3 -u "$m" || ra_fail "nobody cannot unmount $m"
done
ra_wait_for "[[ \$(grep -c ': unmounted\.$' '$T/daemon.log') -ge 28 ]]" || ra_fail "not all unmounts seen"
ra_stop_daemon

state=$T/state/state
[[ -f $state ]] || ra_fail "no state file"
n=$(grep -c "^device fuse:fuse.ra-testfs:ra-testfs@$U/m[0-9]* " "$state") || true
((n == 16)) || ra_fail "$n of nobody's mounts stored, not 16: $(cat "$state")"
n=$(grep -c "^more fuse:fuse.ra-testfs:ra-testfs@$U/m[0-9]* .*owner=65534" "$state") || true
((n == 16)) || ra_fail "$n of nobody's mounts stored with their owner, not 16: $(cat "$state")"
! grep -q "dddd" "$state" || ra_fail "an identity of 2,000 bytes was stored"
ra_daemon_log_has "its identity is longer than the 1024 bytes radaemon stores" ||
	ra_fail "a long identity was not told of"
ra_ok "nobody's 24 FUSE mounts: 16 stored with their owner, the long ones none"
