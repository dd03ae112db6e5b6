#!/bin/bash
# What one machine learned, every machine of a fleet starts from: racontrol
# export writes what radaemon learned for a disk as a udev hwdb record keyed
# by the disk's model; with it compiled into udev's hwdb, the shipped rule
# sets RADAEMON_FLEET_KB for a disk of that model attached later, the udev
# helper writes it before anything opens the disk, and radaemon shows the
# source "fleet" until a pin (or learning here) comes before it. A change
# event reads a new hwdb value again. A disk without a model is not
# exported, and says why.
#
# Loop devices have no model: test rules give this test's loops one. Each
# odd model gets a record that the helper finds for that model and for no
# other (checked with udev's own hwdb, through the helper and through
# systemd-hwdb): non-ASCII bytes, a quote, spaces and a leading dash, glob
# characters and a backslash; a model with a '#', which no hwdb record can
# hold, is left out with a comment.
#
# The machine's hwdb and udevd are never touched: the test runs in a mount
# and network namespace of its own (lib.sh, ra_own_namespaces), with its own
# udevd, and the hwdb.bin there is the test's.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
[[ -f $RA_BUILDDIR/udev/60-radaemon.rules ]] || ra_fail "no udev/60-radaemon.rules; run make first"
command -v systemd-hwdb >/dev/null || ra_skip "systemd-hwdb is not installed"
# The process that ran the test, in the machine's namespaces (ra_own_namespaces
# exec()s unshare in the test's own process): where the machine's files show.
outside=/proc/$PPID
[[ -n ${RA_OWN_NAMESPACES:-} && $(readlink /proc/self/ns/mnt) != "$(readlink "$outside/ns/mnt")" ]] ||
	ra_fail "not in a mount namespace of the test's own: it would bind its hwdb.bin over the machine's"

# The first hwdb.bin libudev would read (sd-hwdb's order): the one to mask.
hwdb_path=
for p in /etc/systemd/hwdb/hwdb.bin /etc/udev/hwdb.bin /usr/lib/systemd/hwdb/hwdb.bin /lib/systemd/hwdb/hwdb.bin \
	/lib/udev/hwdb.bin; do
	[[ -e $p ]] && hwdb_path=$p && break
done
[[ -n $hwdb_path ]] || ra_skip "no hwdb.bin on this machine to bind the test's over"

# hwdb_install: the machine's records and this test's, compiled into a new
# file $T/hwdb.N.bin, bound over the last in the test's namespace; the
# helper reads it on its next run.
mkdir -p "$T/hwroot/etc/udev/hwdb.d"
for d in /usr/lib/udev/hwdb.d /lib/udev/hwdb.d /etc/udev/hwdb.d; do
	if [[ -d $d ]]; then
		cp -n "$d"/*.hwdb "$T/hwroot/etc/udev/hwdb.d/" 2>/dev/null || true
	fi
done
hwdb_n=0
hwdb_install() {
	systemd-hwdb update --strict --root="$T/hwroot" 2>"$T/hwdb.log" ||
		ra_fail "systemd-hwdb update failed: $(cat "$T/hwdb.log")"
	hwdb_n=$((hwdb_n + 1))
	cp "$T/hwroot/etc/udev/hwdb.bin" "$T/hwdb.$hwdb_n.bin"
	mount --bind "$T/hwdb.$hwdb_n.bin" "$hwdb_path" || ra_fail "cannot bind the test's hwdb.bin"
	RA_MOUNTS+=("$hwdb_path")
	local inode
	inode=$(stat -L -c %i "$outside/root$hwdb_path") || ra_fail "cannot see the machine's $hwdb_path"
	[[ $inode != $(stat -c %i "$T/hwdb.$hwdb_n.bin") ]] || ra_fail "the test's hwdb.bin shows outside its namespace"
}

# Unused loop devices, named before any exists: the learner, the later disk
# of the same model, one of another model, one with no model; the odd
# models, which learned; a model with a '#'; two near the odd ones.
loops=()
next=1000
for _ in $(seq 12); do
	next=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused "$next")
	loops+=("loop$next")
	next=$((next + 1))
done
learner=${loops[0]} later=${loops[1]} other=${loops[2]} nomodel=${loops[3]}
odd=("${loops[@]:4:5}")
hash=${loops[9]} near=("${loops[@]:10:2}")
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
# What radaemon learned before on the learner, the model-less disk, the odd
# models (each its own value) and the one with a '#'.
printf 'device loop:%s learned=2048\ndevice loop:%s learned=1024\n' "$T/learner.img" "$T/nomodel.img" \
	>"$T/state/state"
for i in "${!odd[@]}"; do
	printf 'device loop:%s learned=%d\n' "$T/${odd[i]}.img" $((1028 + 4 * i)) >>"$T/state/state"
done
printf 'device loop:%s learned=512\n' "$T/$hash.img" >>"$T/state/state"

# The models, as 60-persistent-storage.rules sets them for real disks; the
# odd ones from a file each, byte for byte (a rule's own strings could not
# hold them all): vendor, model and revision.
model='Fleet Disk [7]*'
odd_vendor=(radaemon-test $'\xc3\x9c' radaemon-test -v 'back\slash')
odd_model=($'\xc3\x84\xc3\x96' $'\xc3\x9f\xc3\xa9' 'it'\''s "quoted"' '-dash  two spaces' 'glob*?[x]\y')
odd_revision=(1.00 $'\xc3\xa8' 1.0 -1 '[')
for i in "${!odd[@]}"; do
	printf 'ID_VENDOR=%s\nID_MODEL=%s\nID_REVISION=%s\n' "${odd_vendor[i]}" "${odd_model[i]}" "${odd_revision[i]}" \
		>"$T/model-${odd[i]}"
done
# Near the odd ones: a record that is wider than its model would match them.
printf 'ID_VENDOR=radaemon-test\nID_MODEL=%s\nID_REVISION=1.00\n' $'\xc3\x84\xc3\x9c' >"$T/model-${near[0]}"
printf 'ID_VENDOR=back\\slash\nID_MODEL=%s\nID_REVISION=[\n' 'globab[x]\y' >"$T/model-${near[1]}"
odd_fence=$(
	IFS='|'
	echo "${odd[*]}|${near[*]}"
)
ra_udev_rule 60-radaemon-local-test.rules <<RULES
SUBSYSTEM=="block", KERNEL=="$learner|$later", ENV{ID_VENDOR}="radaemon-test", ENV{ID_MODEL}="$model", ENV{ID_REVISION}="1.0"
SUBSYSTEM=="block", KERNEL=="$other", ENV{ID_VENDOR}="radaemon-test", ENV{ID_MODEL}="Other Disk", ENV{ID_REVISION}="1.0"
SUBSYSTEM=="block", KERNEL=="$hash", ENV{ID_VENDOR}="radaemon-test", ENV{ID_MODEL}="Fleet Disk #7", ENV{ID_REVISION}="1.0"
SUBSYSTEM=="block", KERNEL=="$odd_fence", IMPORT{file}="$T/model-%k"
RULES

# The shipped rule, with this build's helper and configuration, for our loops only.
ra_shipped_rule "$fence"

ra_start_bus
ra_start_daemon
ra_new_loop learner 64M "${learner#loop}"
ra_new_loop nomodel 64M "${nomodel#loop}"
ra_new_loop "$hash" 64M "${hash#loop}"
for dev in "${odd[@]}"; do
	ra_new_loop "$dev" 64M "${dev#loop}"
done
udevadm settle
for dev in "$learner" "$nomodel" "$hash" "${odd[@]}"; do
	ra_wait_for "[[ \$(ra_property $dev source) == learned ]]" ||
		ra_fail "the learned value was not restored on $dev: $(ra_property "$dev" source)"
done
[[ $(ra_property "$learner" model) == "$model" ]] ||
	ra_fail "$learner: D-Bus says Model '$(ra_property "$learner" model)', want '$model'"
for i in "${!odd[@]}"; do
	[[ $(ra_property "${odd[i]}" model) == "${odd_model[i]}" ]] ||
		ra_fail "${odd[i]}: D-Bus says Model '$(ra_property "${odd[i]}" model)', want '${odd_model[i]}'"
done

# udev_prop DEV KEY: the property udev recorded for DEV, or nothing.
udev_prop() { udevadm info --query=property --name="/dev/$1" | sed -n "s/^$2=//p"; }

# Export: one record for the learner and for each odd model, a comment for
# the disk without a model and for the one with a '#'.
"$RACONTROL" export >"$T/fleet.hwdb" || ra_fail "racontrol export failed"
match='radaemon:vradaemon-test:mFleet Disk [[]7][*]:r1.0:*'
grep -qxF "$match" "$T/fleet.hwdb" || ra_fail "no record for '$model' in: $(cat "$T/fleet.hwdb")"
[[ $(grep -A1 -xF "$match" "$T/fleet.hwdb" | tail -n 1) == " RADAEMON_FLEET_KB=2048" ]] ||
	ra_fail "the record does not set RADAEMON_FLEET_KB=2048: $(cat "$T/fleet.hwdb")"
grep -qE "^# $learner \(loop:.*\) on .*: 2048 KiB\. " "$T/fleet.hwdb" || ra_fail "no comment on the learner"
grep -qE "^# $nomodel: not exported: it has no model" "$T/fleet.hwdb" ||
	ra_fail "no comment on $nomodel, which has no model: $(cat "$T/fleet.hwdb")"
grep -qE "^# $hash: not exported: .*'#'" "$T/fleet.hwdb" ||
	ra_fail "no comment on $hash, whose model has a '#': $(cat "$T/fleet.hwdb")"
[[ $(grep -c '^RADAEMON\|^radaemon:' "$T/fleet.hwdb") == $((1 + ${#odd[@]})) ]] ||
	ra_fail "not one record for each model: $(cat "$T/fleet.hwdb")"
ra_ok "export: $learner's 2048 KiB for '$model', each odd model's; $nomodel and $hash skipped, with the reason"

# Its arguments, and what it says when it cannot.
ra_expect 1 "$nomodel was not exported" export "$nomodel"
grep -q "^# $nomodel: not exported: it has no model" "$T/out" || ra_fail "no comment for $nomodel: $(cat "$T/out")"
ra_expect 1 "$hash was not exported" export "$hash"
ra_expect 1 "no such device|No such device|not managed" export loop999999
ra_expect 2 "export has no --json" --json export
ra_expect 2 "only go with export" status --current
ra_expect 2 "only go with export" show "$learner" --no-revision
"$RACONTROL" export --no-revision "$learner" >"$T/out" || ra_fail "export --no-revision failed"
grep -qxF 'radaemon:vradaemon-test:mFleet Disk [[]7][*]:r*:*' "$T/out" || ra_fail "--no-revision: $(cat "$T/out")"
ra_ok "export DEV, --no-revision, and clear errors for what it cannot do"

# Shipped to this "machine": the file in hwdb.d, compiled, read by the helper.
cp "$T/fleet.hwdb" "$T/hwroot/etc/udev/hwdb.d/60-radaemon-fleet.hwdb"
hwdb_install
[[ $(systemd-hwdb query --root="$T/hwroot" "radaemon:vradaemon-test:m$model:r1.0:") == RADAEMON_FLEET_KB=2048 ]] ||
	ra_fail "hwdb does not find the record for '$model'"

# Each odd model's record, as udev's hwdb reads it: it finds the model's
# own key, and not the keys near it.
for i in "${!odd[@]}"; do
	key="radaemon:v${odd_vendor[i]}:m${odd_model[i]}:r${odd_revision[i]}:"
	[[ $(systemd-hwdb query --root="$T/hwroot" "$key") == "RADAEMON_FLEET_KB=$((1028 + 4 * i))" ]] ||
		ra_fail "hwdb finds '$(systemd-hwdb query --root="$T/hwroot" "$key")' for '$key': $(cat "$T/fleet.hwdb")"
done
for key in $'radaemon:vradaemon-test:m\xc3\x84\xc3\x9c:r1.00:' 'radaemon:vback\slash:mglobab[x]\y:r[:' \
	'radaemon:vradaemon-test:mOther Disk:r1.0:' 'radaemon:vradaemon-test:mit'\''s:r1.0:' \
	'radaemon:v-v:m-dash two spaces:r-1:'; do
	[[ -z $(systemd-hwdb query --root="$T/hwroot" "$key") ]] ||
		ra_fail "hwdb finds '$(systemd-hwdb query --root="$T/hwroot" "$key")' for '$key', a model of no record"
done
ra_ok "systemd-hwdb finds each odd model's record for its model only"

# A disk of the same model, attached later, starts at the fleet's value:
# the helper finds it in udev's hwdb, writes it, and radaemon keeps it.
ra_new_loop later 64M "${later#loop}"
ra_new_loop other 64M "${other#loop}"
for dev in "${near[@]}"; do
	ra_new_loop "$dev" 64M "${dev#loop}"
done
udevadm settle
[[ $(udev_prop "$later" RADAEMON_FLEET_KB) == 2048 ]] ||
	ra_fail "$later: udev has RADAEMON_FLEET_KB '$(udev_prop "$later" RADAEMON_FLEET_KB)', want 2048"
[[ $(udev_prop "$later" RADAEMON_FIRST_KB) == 2048 && $(udev_prop "$later" RADAEMON_SOURCE) == fleet ]] ||
	ra_fail "$later: the helper wrote $(udev_prop "$later" RADAEMON_FIRST_KB) ($(udev_prop "$later" RADAEMON_SOURCE))"
ra_wait_for "[[ \$(ra_property $later source) == fleet ]]" ||
	ra_fail "$later: radaemon says source $(ra_property "$later" source), want fleet"
ra_wait_kb "$later" 2048
ra_property "$later" reason | grep -q "fleet learned for this model" ||
	ra_fail "$later: the reason does not say where 2048 KiB came from: $(ra_property "$later" reason)"
for dev in "$other" "${near[@]}"; do
	[[ -z $(udev_prop "$dev" RADAEMON_FLEET_KB) && $(ra_property "$dev" source) == prior ]] ||
		ra_fail "$dev, another model, got '$(udev_prop "$dev" RADAEMON_FLEET_KB)' ($(ra_property "$dev" source))"
done
ra_ok "$later, the same model attached later: helper and radaemon at the fleet's 2048 KiB; $other ${near[*]}: prior"

# Each odd model's disk, on its next event: the helper's lookup finds its
# own record, with the properties' bytes as they are.
for i in "${!odd[@]}"; do
	echo change >"/sys/block/${odd[i]}/uevent"
done
udevadm settle
for i in "${!odd[@]}"; do
	[[ $(udev_prop "${odd[i]}" RADAEMON_FLEET_KB) == $((1028 + 4 * i)) ]] ||
		ra_fail "${odd[i]} ('${odd_model[i]}'): RADAEMON_FLEET_KB '$(udev_prop "${odd[i]}" RADAEMON_FLEET_KB)', want $((1028 + 4 * i))"
done
ra_ok "the helper finds each odd model's own record: ${odd_model[*]}"

# What the learner learned here still comes first on the learner.
echo change >"/sys/block/$learner/uevent"
udevadm settle
[[ $(udev_prop "$learner" RADAEMON_FLEET_KB) == 2048 ]] || ra_fail "$learner has no RADAEMON_FLEET_KB from hwdb"
ra_wait_for "[[ \$(ra_property $learner source) == learned ]]" ||
	ra_fail "$learner: source $(ra_property "$learner" source) over what it learned"
ra_ok "$learner: learned here comes before the fleet's value"

# A pin comes first; without it the fleet's value is back.
"$RACONTROL" set "$later" 256 --runtime >/dev/null || ra_fail "racontrol set failed"
ra_wait_kb "$later" 256
[[ $(ra_property "$later" source) == pinned ]] || ra_fail "$later: a pin is not the source"
"$RACONTROL" auto "$later" >/dev/null || ra_fail "racontrol auto failed"
ra_wait_kb "$later" 2048
ra_ok "a pin comes before the fleet's value, which is back after auto"

# A new fleet value, from the value in force on the learner (--current), is
# read on the next change event: by the helper and by radaemon.
"$RACONTROL" set "$learner" 512 --runtime >/dev/null || ra_fail "racontrol set failed"
"$RACONTROL" export --current "$learner" >"$T/hwroot/etc/udev/hwdb.d/60-radaemon-fleet.hwdb" ||
	ra_fail "export --current failed"
grep -qx " RADAEMON_FLEET_KB=512" "$T/hwroot/etc/udev/hwdb.d/60-radaemon-fleet.hwdb" ||
	ra_fail "export --current: $(cat "$T/hwroot/etc/udev/hwdb.d/60-radaemon-fleet.hwdb")"
hwdb_install
echo change >"/sys/block/$later/uevent"
udevadm settle
[[ $(udev_prop "$later" RADAEMON_FIRST_KB) == 512 ]] ||
	ra_fail "$later: the helper wrote $(udev_prop "$later" RADAEMON_FIRST_KB) after the change, want 512"
ra_wait_for "[[ \$(ra_property $later target_kb) == 512 && \$(ra_property $later source) == fleet ]]" ||
	ra_fail "$later: radaemon wants $(ra_property "$later" target_kb) ($(ra_property "$later" source)), want 512"
ra_wait_kb "$later" 512
ra_ok "export --current, and a change event: $later at the fleet's new 512 KiB"

ra_stop_daemon
