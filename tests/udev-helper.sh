#!/bin/bash
# The udev helper on its own, with the environment udev would give it: it
# decides as radaemon does (prior, udev properties, stored pins keyed by the
# identity the properties give, devices=/ignore=, observe mode), prints only
# KEY=value lines, exits 0 when there is nothing to do and 1 on a bad
# configuration, and never opens the device.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
HELPER=$RA_BUILDDIR/udev/radaemon-udev
[[ -x $HELPER ]] || ra_fail "no helper at $HELPER; run make first"

ra_new_loop tiny 505K
tiny=$LOOP
ra_new_loop outside 505K
outside=$LOOP
ra_new_free_loop
empty=$LOOP
udevadm settle
ra_config <<CONF
[daemon]
devices = $tiny $empty
state_dir = $T/state
CONF
mkdir "$T/state"
kernel_kb=$(ra_kb "$tiny")
((kernel_kb > 8)) || ra_fail "$tiny starts at $kernel_kb KiB; the test needs the kernel's value"

# helper [VAR=value...] -- ARGS: runs it as udev would for an "add", with
# only the environment given; sets rc, and leaves stdout and stderr in files.
helper() {
	local env=(ACTION=add DEVTYPE=disk)
	while [[ $1 != -- ]]; do
		env+=("$1")
		shift
	done
	shift
	rc=0
	env -i "${env[@]}" "$HELPER" "$@" >"$T/out" 2>"$T/err" || rc=$?
}

# reset: the kernel's value back, as before any decision.
reset() { echo "$kernel_kb" >"/sys/block/$tiny/queue/read_ahead_kb"; }

# expect_set KB SOURCE [ORIGINAL]: exit 0, exactly the three lines (the value
# before the helper, the kernel's by default), and the value in sysfs.
expect_set() {
	((rc == 0)) || ra_fail "exit status $rc, want 0: $(cat "$T/err")"
	printf 'RADAEMON_ORIGINAL_KB=%s\nRADAEMON_FIRST_KB=%s\nRADAEMON_SOURCE=%s\n' "${3:-$kernel_kb}" "$1" "$2" |
		cmp -s - "$T/out" ||
		ra_fail "stdout is '$(cat "$T/out")', want RADAEMON_ORIGINAL_KB=${3:-$kernel_kb}, RADAEMON_FIRST_KB=$1 and RADAEMON_SOURCE=$2"
	[[ $(ra_kb "$tiny") == "$1" ]] || ra_fail "$tiny is at $(ra_kb "$tiny") KiB, want $1"
}

# expect_nothing DEV KB: exit 0, no output for udev, the value untouched.
expect_nothing() {
	((rc == 0)) || ra_fail "exit status $rc, want 0: $(cat "$T/err")"
	[[ ! -s $T/out ]] || ra_fail "stdout is '$(cat "$T/out")', want nothing"
	[[ $(ra_kb "$1") == "$2" ]] || ra_fail "$1 went to $(ra_kb "$1") KiB, want $2 untouched"
}

helper -- --config "$T/radaemon.conf" "$tiny"
expect_set 4 prior
grep -q "^radaemon-udev: $tiny: read_ahead_kb $kernel_kb -> 4 KiB (prior, on add): 505 KiB device: " "$T/err" ||
	ra_fail "no decision with a reason on stderr: $(cat "$T/err")"
ra_ok "prior: $tiny set to 4 KiB, three lines for udev, the reason on stderr"

# What an earlier event of this plug recorded stays the original.
reset
helper RADAEMON_ORIGINAL_KB=1000 -- --config "$T/radaemon.conf" "$tiny"
expect_set 4 prior 1000
ra_ok "RADAEMON_ORIGINAL_KB from udev's database is handed on unchanged"

reset
helper RADAEMON_READ_AHEAD_KB=256 -- --config "$T/radaemon.conf" "$tiny"
expect_set 256 udev
reset
helper RADAEMON_MIN_KB=16 -- --config "$T/radaemon.conf" "$tiny"
expect_set 16 prior
reset
helper RADAEMON_READ_AHEAD_KB=6 RADAEMON_MIN_KB=32 -- --config "$T/radaemon.conf" "$tiny"
expect_set 32 prior
grep -q "ignoring RADAEMON_READ_AHEAD_KB=6 from udev" "$T/err" || ra_fail "no warning for a bad property: $(cat "$T/err")"
ra_ok "RADAEMON_READ_AHEAD_KB and RADAEMON_MIN_KB honoured; a bad value is ignored with a warning"

for value in 1 yes true on; do
	reset
	helper "RADAEMON_IGNORE=$value" -- --config "$T/radaemon.conf" "$tiny"
	expect_nothing "$tiny" "$kernel_kb"
done
ra_ok "RADAEMON_IGNORE leaves $tiny alone"

# Stored pins, under the identity radaemon uses: the backing file, or the
# serial number udev passes in the environment, which comes first.
printf 'device loop:%s pin=64\ndevice serial:RA-TEST-1 pin=128\n' "$T/tiny.img" >"$T/state/state"
reset
helper -- --config "$T/radaemon.conf" "$tiny"
expect_set 64 pinned
reset
helper ID_SERIAL=RA-TEST-1 -- --config "$T/radaemon.conf" "$tiny"
expect_set 128 pinned
# A line of a later release is passed over; a bad value costs that value.
printf 'garbage\nmore loop:%s seen=never\n' "$T/tiny.img" >>"$T/state/state"
reset
helper -- --config "$T/radaemon.conf" "$tiny"
expect_set 64 pinned
grep -q "line 4: seen=" "$T/err" || ra_fail "a bad value in the state is not reported: $(cat "$T/err")"
! grep -q "line 3: " "$T/err" || ra_fail "a later release's line is reported: $(cat "$T/err")"
rm "$T/state/state"
ra_ok "stored pins honoured, by backing file and by serial; a bad state value costs that value"

# Years of AppImage mounts: 100,000 other identities. The helper reads only
# its own; a bound only a parse of the whole file crosses (c544f82: minutes).
awk -v img="$T/tiny.img" 'BEGIN {
	for (i = 0; i < 100000; i++) {
		id = sprintf("fuse:fuse.App%d.AppImage:App%d.AppImage@/home/u/.mount_%06d", i, i, i)
		printf "device %s original=128\nmore %s seen=%d\n", id, id, 1700000000 + i
		if (i == 50000)
			printf "device loop:%s pin=64\n", img
	} }' >"$T/state/state"
reset
start=$(date +%s%N)
helper -- --config "$T/radaemon.conf" "$tiny"
ms=$((($(date +%s%N) - start) / 1000000))
expect_set 64 pinned
((ms < 5000 * RA_SLOWDOWN)) || ra_fail "the helper took $ms ms with 100,000 stored identities"
rm "$T/state/state"
ra_ok "100,000 stored identities: the pin found in $ms ms"

# Disks radaemon would not touch are not touched.
before=$(ra_kb "$outside")
helper -- --config "$T/radaemon.conf" "$outside"
expect_nothing "$outside" "$before"
reset
helper DEVTYPE=partition -- --config "$T/radaemon.conf" "$tiny"
expect_nothing "$tiny" "$kernel_kb"
helper -- --config "$T/radaemon.conf" "$empty"
expect_nothing "$empty" "$(ra_kb "$empty")"
grep -q "No medium" "$T/err" || ra_fail "no word about the missing medium: $(cat "$T/err")"
ra_remove_loop "$empty"
helper -- --config "$T/radaemon.conf" "$empty"
((rc == 0)) || ra_fail "a device that is gone: exit status $rc, want 0"
[[ ! -s $T/out ]] || ra_fail "a device that is gone: stdout is '$(cat "$T/out")'"
ra_ok "not in devices=, a partition, no medium and a device that is gone: nothing done"

# Observe mode decides and writes nothing; so does a bad [daemon] line, as radaemon at start.
ra_config <<CONF
[daemon]
devices = $tiny
mode = observe
CONF
helper -- --config "$T/radaemon.conf" "$tiny"
((rc == 0)) || ra_fail "observe mode: exit status $rc, want 0: $(cat "$T/err")"
[[ $(cat "$T/out") == "RADAEMON_ORIGINAL_KB=$kernel_kb" ]] || ra_fail "observe mode: stdout is '$(cat "$T/out")'"
[[ $(ra_kb "$tiny") == "$kernel_kb" ]] || ra_fail "observe mode wrote $(ra_kb "$tiny") KiB"
grep -q "would set read_ahead_kb $kernel_kb -> 4 KiB" "$T/err" || ra_fail "observe mode says nothing: $(cat "$T/err")"
ra_config <<CONF
[daemon]
devices = $tiny
mode = never
CONF
helper -- --config "$T/radaemon.conf" "$tiny"
((rc == 0)) || ra_fail "a bad [daemon] line: exit status $rc, want 0: $(cat "$T/err")"
[[ $(ra_kb "$tiny") == "$kernel_kb" ]] || ra_fail "a bad [daemon] line: $tiny written, $(ra_kb "$tiny") KiB"
grep -q "radaemon.conf:3: mode must be" "$T/err" || ra_fail "the error is not named: $(cat "$T/err")"
grep -q "would set read_ahead_kb" "$T/err" || ra_fail "a bad [daemon] line: not observing: $(cat "$T/err")"
# A bad line in a [device:] section costs that section: the prior applies.
ra_config <<CONF
[daemon]
devices = $tiny
[device:$tiny]
read_ahead_kb = 5
CONF
helper -- --config "$T/radaemon.conf" "$tiny"
((rc == 0)) || ra_fail "a bad section: exit status $rc, want 0: $(cat "$T/err")"
grep -q "radaemon.conf:4: read_ahead_kb must be" "$T/err" || ra_fail "the error is not named: $(cat "$T/err")"
[[ $(ra_kb "$tiny") == 4 ]] || ra_fail "a bad section: $tiny at $(ra_kb "$tiny") KiB, want its prior 4"
reset
ra_ok "observe mode writes nothing, nor does a bad [daemon] line; a bad section costs itself alone"

# Usage errors: 2.
for args in "" "--config" "--bogus $tiny" "../$tiny" "$tiny $tiny"; do
	# shellcheck disable=SC2086 # args are meant to split
	helper -- $args
	((rc == 2)) || ra_fail "radaemon-udev $args: exit status $rc, want 2"
	[[ ! -s $T/out ]] || ra_fail "radaemon-udev $args printed to stdout"
done
"$HELPER" --help | grep -q "^Usage: radaemon-udev" || ra_fail "no help"
ra_ok "usage errors exit 2 and print nothing to stdout"

# It reads sysfs and two small files; it never opens the device node, so a
# slow device cannot hold udev up.
if command -v strace >/dev/null; then
	ra_config <<CONF
[daemon]
devices = $tiny
state_dir = $T/state
CONF
	reset
	# LeakSanitizer cannot run under ptrace: in a sanitizer build it would fail the helper.
	env -i ACTION=add DEVTYPE=disk ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=open,openat,openat2 -o "$T/strace" \
		"$HELPER" --config "$T/radaemon.conf" "$tiny" >/dev/null 2>&1 || ra_fail "the helper failed under strace"
	if grep -E '"/dev/' "$T/strace"; then
		ra_fail "the helper opened a device node"
	fi
	ra_ok "no device node opened"
else
	ra_skip "strace is not installed"
fi
