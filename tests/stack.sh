#!/bin/bash
# Stacked block devices: a device-mapper linear device over a loop device
# that claims a 16 MiB optimal I/O size gets the loop device's prior, not
# the kernel's 32 MiB; an md RAID0 over two loop devices twice one's prior.
# D-Bus shows each one's stack. Both are bio-based (block_rq_issue fires only
# on the loop devices beneath): direct reads of each are classified from its
# own bios (block_bio_queue), none lost or counted twice. ./run-tests runs it
# through tests/vm.sh, on Debian 12's kernel, which has both; on a kernel
# with neither it is skipped and says so by name.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

have_dm() { [[ -e /sys/class/misc/device-mapper ]]; }
have_md() { [[ -e /proc/mdstat ]]; }
if ! have_dm && ! have_md; then
	ra_skip_for_kernel "device mapper and md" \
		"no /sys/class/misc/device-mapper and no /proc/mdstat; the stack code runs on recorded trees in test-stack"
fi
# The machine's own udevd (the VM guest's): dmsetup and lvm wait on udev
# cookies that 95-dm-notify.rules completes, once per udevd that runs it; a
# second udevd of the test's own would complete each twice (lib.sh,
# ra_own_namespaces).
RA_MACHINE_NAMESPACES=1
ra_setup
command -v fio >/dev/null || ra_fail "fio is not installed"
ra_tracefs
ra_start_bus

prop() {
	local path
	path=$(ra_busctl call org.radaemon.ReadAhead1 /org/radaemon/ReadAhead1 org.radaemon.ReadAhead1.Manager \
		GetDevice s "$1" | cut -d'"' -f2)
	ra_busctl get-property org.radaemon.ReadAhead1 "$path" org.radaemon.ReadAhead1.Device "$2" | cut -d' ' -f2-
}

# 100 GiB each (sparse): the size caps (128 KiB at 2 GiB, doubling each 4x)
# leave a loop device's prior of 512 KiB alone (512 from 32 GiB) and twice
# it on the RAID0 of two (1024 from 128 GiB; md's metadata takes a little).
ra_new_loop a 100G
a=$LOOP
ra_new_loop b 100G
b=$LOOP
# The dm device has a loop device of its own: one that dm holds cannot be
# an md member as well (mdadm --create: device busy).
ra_new_loop c 100G
c=$LOOP
udevadm settle
names=("$a" "$b" "$c")

if have_dm; then
	command -v dmsetup >/dev/null || ra_fail "the kernel has device mapper but dmsetup is missing"
	dm=radaemon-test-$$
	dmsetup create "$dm" --table "0 $(blockdev --getsz "/dev/$c") linear /dev/$c 0" ||
		ra_fail "dmsetup create failed"
	undo_dm() { dmsetup remove "$dm" 2>/dev/null || true; }
	RA_HOOKS+=(undo_dm)
	udevadm settle
	dmname=$(basename "$(readlink -f "/dev/mapper/$dm")")
	names+=("$dmname")
fi
if have_md; then
	command -v mdadm >/dev/null || ra_fail "the kernel has md but mdadm is missing"
	md=/dev/md/radaemon-test-$$
	mdadm --create "$md" --run --level=0 --raid-devices=2 "/dev/$a" "/dev/$b" >"$T/mdadm.log" 2>&1 ||
		ra_fail "mdadm --create failed: $(cat "$T/mdadm.log")"
	undo_md() { mdadm --stop "$md" >/dev/null 2>&1 || true; }
	RA_HOOKS+=(undo_md)
	udevadm settle
	mdname=$(basename "$(readlink -f "$md")")
	names+=("$mdname")
fi

# The config's allow-list takes loop devices only: dm and md by their own lines.
ra_config <<CONF
[daemon]
devices = $a $b
state_dir = $T/state
CONF
sed -i "s/^devices = .*/devices = ${names[*]}/" "$T/radaemon.conf"
ra_start_daemon
prior=$(ra_kb "$a")

if have_dm; then
	ra_wait_kb "$dmname" "$prior"
	[[ $(prop "$dmname" Stack) == *"$dmname"*"on $c"* ]] || ra_fail "$dmname Stack: $(prop "$dmname" Stack)"
	ra_ok "dm linear over $c: $prior KiB, $c's prior"
	ra_traced_run "$dmname" sequential --rw=read --bs=128k --rate=16m
	ra_traced_run "$dmname" random --rw=randread --bs=4k --rate_iops=200
fi
if have_md; then
	# Each of the two disks gets its prior, and at least a whole chunk: the
	# loop devices are rotational on 6.1 (prior 512 KiB, mdadm's chunk 512
	# KiB), non-rotational from 6.11 on (prior 128 KiB).
	chunk=$(($(cat "/sys/block/$mdname/md/chunk_size") / 1024))
	want=$((2 * (prior > chunk ? prior : chunk)))
	ra_wait_kb "$mdname" "$want"
	[[ $(prop "$mdname" Stack) == *"raid0"* ]] || ra_fail "$mdname Stack: $(prop "$mdname" Stack)"
	ra_ok "md raid0 over $a and $b: $want KiB, 2 × the larger of their prior ($prior KiB) and the chunk ($chunk KiB)"
	ra_traced_run "$mdname" sequential --rw=read --bs=128k --rate=16m
fi
ra_stop_daemon
