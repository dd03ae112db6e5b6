#!/bin/bash
# A udev rule that writes a bdi's window during the bdi's own "add", as
# nfs-common's nfsrahead does for NFS (this kernel has no NFS client: a
# btrfs bdi stands in, decided by radaemon as mount(2) runs, before udevd
# has finished the "add"). The rule's value is the bdi's starting value, not
# a change behind radaemon's back: radaemon's decision is written once udevd
# is done, nothing is written after it, every log line agrees with sysfs,
# and the log says who set what. A write after the "add" is external.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
command -v mkfs.btrfs >/dev/null || ra_fail "mkfs.btrfs is missing: ./install-deps --tests installs btrfs-progs"
ra_setup
ra_start_bus

ra_new_loop a 8G
a=$LOOP
udevadm settle
mkdir "$T/mnt"
mkfs.btrfs -q -f "/dev/$a" >/dev/null || ra_fail "mkfs.btrfs $a failed"
ra_config <<CONF
[daemon]
devices = $a
bdis = $T/mnt
state_dir = $T/state
CONF
ra_start_daemon

# As nfsrahead: 132 KiB, written a moment into the "add", after radaemon's
# early write. Only btrfs bdis, and only while this test runs.
ra_udev_rule 60-radaemon-test-rahead.rules <<'RULE'
SUBSYSTEM=="bdi", ACTION=="add", KERNEL=="btrfs-*", RUN+="/bin/sh -c 'sleep 0.3; echo 132 >/sys/class/bdi/%k/read_ahead_kb'"
RULE

mount -t btrfs "/dev/$a" "$T/mnt" || ra_fail "cannot mount $a"
RA_MOUNTS+=("$T/mnt")
bdi=$(ra_btrfs_bdi "/dev/$a")
udevadm settle
ra_wait_log "^$bdi: read_ahead_kb 132 -> [0-9]+ KiB \(prior, on udev\)" ||
	ra_fail "$bdi: radaemon did not write its value after the rule's: $(grep "^$bdi:" "$T/daemon.log")"
want=$(sed -nE "s/^$bdi: read_ahead_kb 132 -> ([0-9]+) KiB \(prior, on udev\).*/\1/p" "$T/daemon.log" | tail -n 1)
# Two intervals: no write, no yield afterwards.
sleep 2.5
kb=$(ra_bdi_kb "$bdi")
[[ $kb == "$want" ]] || ra_fail "$bdi: sysfs holds $kb KiB, radaemon wrote $want: $(grep "^$bdi:" "$T/daemon.log")"
ra_daemon_log_has "^$bdi: read_ahead_kb went from [0-9]+ to 132 KiB during its udev add event \(a udev rule" ||
	ra_fail "$bdi: the rule's write is not logged as the bdi's starting value: $(grep "^$bdi:" "$T/daemon.log")"
ra_daemon_log_has "^$bdi: .*behind radaemon's back" &&
	ra_fail "$bdi: the rule's write was taken as external: $(grep "^$bdi:" "$T/daemon.log")"
writes=$(grep -cE "^$bdi: read_ahead_kb [0-9]+ -> [0-9]+ KiB" "$T/daemon.log")
((writes <= 2)) || ra_fail "$bdi: $writes writes, a fight: $(grep "^$bdi:" "$T/daemon.log")"
# Every "stays at" names what sysfs holds now (nothing else wrote since).
if grep -E "^$bdi: read_ahead_kb stays at" "$T/daemon.log" | grep -vq "stays at $kb KiB"; then
	ra_fail "$bdi: a 'stays at' line disagrees with sysfs ($kb): $(grep "^$bdi:" "$T/daemon.log")"
fi
[[ $(ra_property "$bdi" read_ahead_kb) == "$kb" ]] || ra_fail "$bdi: racontrol show disagrees with sysfs ($kb)"
ra_ok "$bdi: the rule's 132 KiB taken as the starting value, radaemon's $want written after it, settled in $writes writes"

# After the "add", a write is somebody else's, and radaemon yields to it.
echo 136 >"/sys/class/bdi/$bdi/read_ahead_kb"
ra_wait_log "^$bdi: read_ahead_kb went from $want to 136 KiB behind radaemon's back; leaving it" ||
	ra_fail "$bdi: a write after the add was not external: $(grep "^$bdi:" "$T/daemon.log")"
sleep 1.5
[[ $(ra_bdi_kb "$bdi") == 136 ]] || ra_fail "$bdi: $(ra_bdi_kb "$bdi") KiB, not the external 136"
ra_ok "$bdi: a write after the add is external (136 KiB kept)"
umount "$T/mnt" || ra_fail "cannot unmount $T/mnt"
unset 'RA_MOUNTS[-1]'
ra_stop_daemon
