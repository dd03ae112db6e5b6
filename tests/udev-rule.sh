#!/bin/bash
# The shipped udev rule sets the first value while radaemon is not running:
# once udevadm settle returns, a 505 KiB loop device is at <= 8 KiB; an
# administrator's earlier rule with RADAEMON_READ_AHEAD_KB=256 wins,
# RADAEMON_MAX_KB bounds the prior, RADAEMON_IGNORE=1 leaves a device alone;
# a pin radaemon stored is honoured; and a re-attach (a "change" where the
# kernel raises the value again) is put right. The rule is the built one,
# pointed at this build's helper and a test configuration, and fenced to this
# test's loop devices; it lives in /run/udev/rules.d only while the test runs.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
[[ -f $RA_BUILDDIR/udev/60-radaemon.rules ]] || ra_fail "no udev/60-radaemon.rules; run make first"

# Five unused loop devices, named before any exists.
loops=()
next=1000
for _ in 1 2 3 4 5; do
	next=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused "$next")
	loops+=("loop$next")
	next=$((next + 1))
done
tiny=${loops[0]} pinned=${loops[1]} bounded=${loops[2]} ignored=${loops[3]} stored=${loops[4]}
fence=$(
	IFS='|'
	echo "${loops[*]}"
)

ra_config <<CONF
[daemon]
devices = ${loops[*]}
state_dir = $T/state
CONF
mkdir "$T/state"
echo "device loop:$T/stored.img pin=64" >"$T/state/state"

# The administrator's rules, in a file that sorts before 60-radaemon*.rules.
ra_udev_rule 60-radaemon-local-test.rules <<RULES
SUBSYSTEM=="block", KERNEL=="$pinned", ENV{RADAEMON_READ_AHEAD_KB}="256"
SUBSYSTEM=="block", KERNEL=="$bounded", ENV{RADAEMON_MAX_KB}="64"
SUBSYSTEM=="block", KERNEL=="$ignored", ENV{RADAEMON_IGNORE}="1"
RULES

# The shipped rule, with this build's helper and configuration, for our loops only.
ra_shipped_rule "$fence"

# The daemon is not running: whatever happens below is the rule's doing.
ra_new_loop tiny 505K "${tiny#loop}"
ra_new_loop pinned 505K "${pinned#loop}"
ra_new_loop bounded 64G "${bounded#loop}"
ra_new_loop ignored 505K "${ignored#loop}"
ra_new_loop stored 505K "${stored#loop}"
udevadm settle

# udev_prop DEV KEY: the property udev recorded for DEV, or nothing.
udev_prop() { udevadm info --query=property --name="/dev/$1" | sed -n "s/^$2=//p"; }

# expect DEV KB SOURCE: the value is in place and udev recorded who set it.
expect() {
	[[ $(ra_kb "$1") == "$2" ]] || ra_fail "$1: read_ahead_kb is $(ra_kb "$1") after settle, want $2"
	[[ $(udev_prop "$1" RADAEMON_FIRST_KB) == "$2" ]] ||
		ra_fail "$1: RADAEMON_FIRST_KB is '$(udev_prop "$1" RADAEMON_FIRST_KB)', want $2"
	[[ $(udev_prop "$1" RADAEMON_SOURCE) == "$3" ]] ||
		ra_fail "$1: RADAEMON_SOURCE is '$(udev_prop "$1" RADAEMON_SOURCE)', want $3"
}

kb=$(ra_kb "$tiny")
((kb <= 8)) || ra_fail "$tiny (505 KiB) is at $kb KiB after settle, want <= 8"
expect "$tiny" 4 prior
ra_ok "$tiny (505 KiB) at $kb KiB once udevadm settle returned, radaemon not running"

expect "$pinned" 256 udev
ra_ok "RADAEMON_READ_AHEAD_KB=256 from an earlier rule wins: $pinned at 256 KiB"

expect "$bounded" 64 prior
ra_ok "RADAEMON_MAX_KB=64 bounds the prior: $bounded (64 GiB) at 64 KiB"

expect "$stored" 64 pinned
ra_ok "the pin radaemon stored for $T/stored.img is honoured: $stored at 64 KiB"

kb=$(ra_kb "$ignored")
((kb > 8)) || ra_fail "$ignored has RADAEMON_IGNORE=1 but is at $kb KiB"
[[ -z $(udev_prop "$ignored" RADAEMON_FIRST_KB) ]] || ra_fail "$ignored has RADAEMON_IGNORE=1 but the helper ran"
# An odd value of the administrator's own survives a change event.
echo 1000 >"/sys/block/$ignored/queue/read_ahead_kb"
echo change >"/sys/block/$ignored/uevent"
udevadm settle
[[ $(ra_kb "$ignored") == 1000 ]] || ra_fail "$ignored has RADAEMON_IGNORE=1 but went to $(ra_kb "$ignored") KiB"
ra_ok "RADAEMON_IGNORE=1 leaves $ignored alone, on add and on change"

# change: a re-attach makes the kernel raise the value again; the rule puts it back.
losetup -d "/dev/$tiny"
losetup "/dev/$tiny" "$T/tiny.img"
udevadm settle
[[ $(ra_kb "$tiny") == 4 ]] || ra_fail "$tiny is at $(ra_kb "$tiny") KiB after a re-attach, want 4"
ra_ok "re-attach ('change'): $tiny back at 4 KiB"

# Nothing of radaemon ran but the helper.
[[ ! -s $T/daemon.log ]] || ra_fail "the daemon ran"
ra_ok "only the helper ran"

# The helper wrote first, but radaemon still learns what the kernel had.
kernel_kb=$(udev_prop "$bounded" RADAEMON_ORIGINAL_KB)
[[ -n $kernel_kb && $kernel_kb != 64 ]] || ra_fail "$bounded: RADAEMON_ORIGINAL_KB is '$kernel_kb'"
echo change >"/sys/block/$bounded/uevent"
udevadm settle
[[ $(udev_prop "$bounded" RADAEMON_ORIGINAL_KB) == "$kernel_kb" ]] ||
	ra_fail "$bounded: a later event changed RADAEMON_ORIGINAL_KB to $(udev_prop "$bounded" RADAEMON_ORIGINAL_KB)"
ra_start_bus
ra_start_daemon
grep -q "^device loop:$T/bounded.img original=$kernel_kb$" "$T/state/state" ||
	ra_fail "radaemon stored another original for $bounded: $(cat "$T/state/state")"
ra_ok "the original radaemon stores is the kernel's $kernel_kb KiB, not the helper's 64"

# After Restore() the helper writes nothing either, until a reload.
"$RACONTROL" restore >/dev/null || ra_fail "racontrol restore failed"
[[ $(ra_kb "$bounded") == "$kernel_kb" ]] || ra_fail "restore did not put $bounded back"
echo change >"/sys/block/$bounded/uevent"
udevadm settle
[[ $(ra_kb "$bounded") == "$kernel_kb" ]] || ra_fail "the helper wrote $bounded again after a restore"
ra_stop_daemon
ra_start_daemon
[[ $(ra_kb "$bounded") == "$kernel_kb" ]] || ra_fail "radaemon wrote $bounded again after a restore and a restart"
"$RACONTROL" reload >/dev/null
ra_wait_kb "$bounded" 64
ra_ok "after restore neither the helper nor a restarted radaemon writes, until a reload"
ra_stop_daemon
