#!/bin/bash
# Disks attached before the daemon starts are tuned at start: a 505 KiB
# device gets a tiny window, a 64 GiB rotational one a large one, partitions
# are left alone, and SIGTERM and SIGINT end the daemon cleanly.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup

ra_new_loop tiny 505K
tiny=$LOOP
ra_new_loop big 64G
big=$LOOP
ra_set_rotational "$big" 1

# A partitioned disk: the disk is managed, its partition never. This kernel
# may parse no partition tables, so the partition is added by hand.
ra_new_loop parted 64M
parted=$LOOP
addpart "/dev/$parted" 1 2048 4096
ra_wait_for "[[ -d /sys/block/$parted/${parted}p1 ]]" || ra_fail "$parted has no partition"
udevadm settle

# The kernel gives loop devices 2560 KiB: the daemon must move both.
[[ $(ra_kb "$tiny") -gt 8 ]] || ra_fail "$tiny starts at $(ra_kb "$tiny") KiB; the test needs the kernel's value"

ra_config <<CONF
[daemon]
devices = $tiny $big $parted
CONF
ra_start_daemon

# Coldplug is done when the daemon says it is ready: no waiting.
kb_tiny=$(ra_kb "$tiny")
kb_big=$(ra_kb "$big")
((kb_tiny <= 8)) || ra_fail "$tiny (505 KiB) has $kb_tiny KiB, want <= 8"
((kb_big > kb_tiny)) || ra_fail "$big (64 GiB, rotational) has $kb_big KiB, not more than $kb_tiny"
((kb_big >= 512 && kb_big <= 1024)) || ra_fail "$big has $kb_big KiB, want 512..1024"
ra_ok "coldplug: $tiny=$kb_tiny KiB, $big=$kb_big KiB"

# Each decision is logged with its reason.
ra_daemon_log_has "^$tiny: read_ahead_kb [0-9]+ -> $kb_tiny KiB \(prior, on coldplug\): 505 KiB device: .+\.$" ||
	ra_fail "no decision with a reason for $tiny"
ra_daemon_log_has "^$big: read_ahead_kb [0-9]+ -> $kb_big KiB \(prior, on coldplug\): 64 GiB device: .*rotational" ||
	ra_fail "no decision with a reason for $big"
ra_daemon_log_has "^Managing 3 disks\.$" || ra_fail "the daemon does not manage exactly the three disks"
if ra_daemon_log_has "${parted}p1"; then
	ra_fail "the partition ${parted}p1 was considered"
fi
ra_ok "decisions logged with reasons; partition ignored"

ra_stop_daemon TERM
ra_daemon_log_has "Received SIGTERM, exiting" || ra_fail "no exit message after SIGTERM"

# SIGINT (Ctrl-C) ends it as cleanly.
ra_start_daemon
ra_stop_daemon INT
ra_daemon_log_has "Received SIGINT, exiting" || ra_fail "no exit message after SIGINT"
ra_ok "SIGTERM and SIGINT exit 0"

# A partition appearing while the daemon runs is not even looked at.
ra_start_daemon
addpart "/dev/$parted" 2 8192 4096
udevadm settle
echo change >"/sys/block/$parted/uevent"
ra_wait_log "^$parted: change event"
if ra_daemon_log_has "${parted}p2"; then
	ra_fail "the partition ${parted}p2 was considered"
fi
ra_stop_daemon
ra_ok "hotplugged partition ignored"
