#!/bin/bash
# Disks that appear while the daemon runs are tuned: a new loop device (udev
# "add"), a file attached to a free loop device and a rotational flag that
# changes (udev "change", where the kernel re-raises readahead), and a
# removal is noticed.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup

added=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused 1000)
free=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused $((added + 1)))
ra_config <<CONF
[daemon]
devices = loop$added loop$free
CONF
ra_start_daemon
ra_daemon_log_has "^Managing 0 disks\.$" || ra_fail "expected no disks at start"

# add: losetup on an index that does not exist creates the device.
truncate -s 505K "$T/tiny.img"
RA_LOOPS+=("$added")
losetup "/dev/loop$added" "$T/tiny.img"
ra_wait_kb "loop$added" 4
ra_wait_log "^loop$added: add event"
ra_ok "add: loop$added tuned to 4 KiB"

# change: a free loop device first has no medium, then gets a file.
ra_new_free_loop
[[ $LOOP == "loop$free" ]] || ra_fail "expected loop$free, got $LOOP"
ra_wait_log "^loop$free: No medium"
truncate -s 64G "$T/big.img"
losetup "/dev/loop$free" "$T/big.img"
ra_wait_for "[[ \$(ra_kb loop$free) != 2560 ]] && grep -q '^loop$free: read_ahead_kb' '$T/daemon.log'" ||
	ra_fail "loop$free was not tuned after its file was attached"
first=$(ra_kb "loop$free")
ra_ok "change (attach): loop$free tuned to $first KiB"

# change: the rotational flag flips; the new value follows.
rot=$(cat "/sys/block/loop$free/queue/rotational")
ra_set_rotational "loop$free" $((1 - rot))
ra_wait_for "[[ \$(ra_kb loop$free) != $first ]]" ||
	ra_fail "loop$free stayed at $first KiB after rotational became $((1 - rot))"
ra_ok "change (rotational $rot -> $((1 - rot))): loop$free now $(ra_kb "loop$free") KiB"

# change: the kernel re-raises the value on re-attach; the daemon puts it back.
want=$(ra_kb "loop$added")
losetup -d "/dev/loop$added"
losetup "/dev/loop$added" "$T/tiny.img"
ra_wait_kb "loop$added" "$want"
writes=$(grep -cE "^loop$added: read_ahead_kb [0-9]+ -> $want KiB" "$T/daemon.log")
((writes >= 2)) || ra_fail "loop$added: expected a second write after re-attach, saw $writes"
ra_ok "change (re-attach): loop$added back at $want KiB"

# remove: the disk is forgotten.
ra_remove_loop "loop$added"
ra_wait_log "^loop$added: removed\.$"
ra_ok "remove: loop$added forgotten"

ra_stop_daemon
