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
# Loop devices have no model: a test rule gives this test's loops one, with
# a space and a '#' that hwdb would misread if export did not mask them. The
# machine's hwdb is never touched: this test's udevd runs in a mount
# namespace of its own, where the hwdb.bin udevd reads is the test's.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup
[[ -f $RA_BUILDDIR/udev/60-radaemon.rules ]] || ra_fail "no udev/60-radaemon.rules; run make first"
[[ -n $UDEVD_PID ]] || ra_skip "a udevd this test did not start is running: it needs its own, to give it a hwdb"
command -v systemd-hwdb >/dev/null || ra_skip "systemd-hwdb is not installed"

# The first hwdb.bin udevd would read (sd-hwdb's order): the one to mask.
hwdb_path=
for p in /etc/systemd/hwdb/hwdb.bin /etc/udev/hwdb.bin /usr/lib/systemd/hwdb/hwdb.bin /lib/systemd/hwdb/hwdb.bin \
	/lib/udev/hwdb.bin; do
	[[ -e $p ]] && hwdb_path=$p && break
done
[[ -n $hwdb_path ]] || ra_skip "no hwdb.bin on this machine for udevd to read"

# hwdb_compile: the machine's records and this test's, into a new file
# $T/hwdb.N.bin as $HWDB: one that is bound stays, since the kernel mounts
# nothing over a file that systemd-hwdb has since replaced.
mkdir -p "$T/hwroot/etc/udev/hwdb.d"
for d in /usr/lib/udev/hwdb.d /lib/udev/hwdb.d /etc/udev/hwdb.d; do
	if [[ -d $d ]]; then
		cp -n "$d"/*.hwdb "$T/hwroot/etc/udev/hwdb.d/" 2>/dev/null || true
	fi
done
HWDB=
hwdb_n=0
hwdb_compile() {
	systemd-hwdb update --strict --root="$T/hwroot" 2>"$T/hwdb.log" ||
		ra_fail "systemd-hwdb update failed: $(cat "$T/hwdb.log")"
	hwdb_n=$((hwdb_n + 1))
	HWDB=$T/hwdb.$hwdb_n.bin
	cp "$T/hwroot/etc/udev/hwdb.bin" "$HWDB"
}

# Our udevd again, in a mount namespace of its own with the test's hwdb.bin
# over the machine's; killed at the end like any udevd a test starts, and
# the namespace with it.
kill "$UDEVD_PID"
wait "$UDEVD_PID" 2>/dev/null || true
UDEVD_PID=
hwdb_compile
for udevd in /lib/systemd/systemd-udevd /usr/lib/systemd/systemd-udevd; do
	[[ -x $udevd ]] && break
done
# shellcheck disable=SC2016 # the inner shell's arguments
unshare --mount --propagation private sh -c 'mount --bind "$1" "$2" && exec "$3"' sh \
	"$HWDB" "$hwdb_path" "$udevd" >"$T/udevd.log" 2>&1 &
UDEVD_PID=$!
ra_wait_for ra_udevd_runs || ra_fail "udevd did not start in its namespace: $(cat "$T/udevd.log")"
[[ $(stat -c %i "$hwdb_path") != $(stat -c %i "$HWDB") ]] ||
	ra_fail "the test's hwdb.bin shows outside its namespace"

# hwdb_install: compiles the records again and has udevd read them: the new
# file bound over the last in udevd's namespace.
hwdb_install() {
	hwdb_compile
	nsenter -t "$UDEVD_PID" -m mount --bind "$HWDB" "$hwdb_path" ||
		ra_fail "cannot bind the new hwdb.bin in udevd's namespace"
	udevadm control --reload || ra_fail "udevadm control --reload failed"
}

# Five unused loop devices, named before any exists: the learner, the later
# disk of the same model, one of another model, one with no model, one more.
loops=()
next=1000
for _ in 1 2 3 4; do
	next=$(python3 "$RA_SRCDIR/tests/loopdev.py" unused "$next")
	loops+=("loop$next")
	next=$((next + 1))
done
learner=${loops[0]} later=${loops[1]} other=${loops[2]} nomodel=${loops[3]}
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
# What radaemon learned before on the learner and the model-less disk.
printf 'device loop:%s learned=2048\ndevice loop:%s learned=1024\n' "$T/learner.img" "$T/nomodel.img" \
	>"$T/state/state"

# The models, as 60-persistent-storage.rules sets them for real disks.
model='Fleet Disk #7'
ra_udev_rule 60-radaemon-local-test.rules <<RULES
SUBSYSTEM=="block", KERNEL=="$learner|$later", ENV{ID_VENDOR}="radaemon-test", ENV{ID_MODEL}="$model", ENV{ID_REVISION}="1.0"
SUBSYSTEM=="block", KERNEL=="$other", ENV{ID_VENDOR}="radaemon-test", ENV{ID_MODEL}="Other Disk", ENV{ID_REVISION}="1.0"
RULES

# The shipped rule, with this build's helper and configuration, for our loops only.
ra_shipped_rule "$fence"

ra_start_bus
ra_start_daemon
ra_new_loop learner 64M "${learner#loop}"
ra_new_loop nomodel 64M "${nomodel#loop}"
udevadm settle
ra_wait_for "[[ \$(ra_property $learner source) == learned && \$(ra_property $nomodel source) == learned ]]" ||
	ra_fail "the learned values were not restored: $learner $(ra_property "$learner" source)"
[[ $(ra_property "$learner" model) == "$model" ]] ||
	ra_fail "$learner: D-Bus says Model '$(ra_property "$learner" model)', want '$model'"

# udev_prop DEV KEY: the property udev recorded for DEV, or nothing.
udev_prop() { udevadm info --query=property --name="/dev/$1" | sed -n "s/^$2=//p"; }

# Export: one record for the learner, a comment for the disk without a model.
"$RACONTROL" export >"$T/fleet.hwdb" || ra_fail "racontrol export failed"
match='radaemon:vradaemon-test:mFleet?Disk??7:r1.0:*'
grep -qxF "$match" "$T/fleet.hwdb" || ra_fail "no record for '$model' in: $(cat "$T/fleet.hwdb")"
[[ $(grep -A1 -xF "$match" "$T/fleet.hwdb" | tail -n 1) == " RADAEMON_FLEET_KB=2048" ]] ||
	ra_fail "the record does not set RADAEMON_FLEET_KB=2048: $(cat "$T/fleet.hwdb")"
grep -qE "^# $learner \(loop:.*\) on .*: 2048 KiB\. " "$T/fleet.hwdb" || ra_fail "no comment on the learner"
grep -qE "^# $nomodel: not exported: it has no model" "$T/fleet.hwdb" ||
	ra_fail "no comment on $nomodel, which has no model: $(cat "$T/fleet.hwdb")"
[[ $(grep -c '^RADAEMON\|^radaemon:' "$T/fleet.hwdb") == 1 ]] || ra_fail "more than one record: $(cat "$T/fleet.hwdb")"
ra_ok "export: $learner's 2048 KiB for '$model'; $nomodel skipped, with the reason"

# Its arguments, and what it says when it cannot.
ra_expect 1 "$nomodel was not exported" export "$nomodel"
grep -q "^# $nomodel: not exported: it has no model" "$T/out" || ra_fail "no comment for $nomodel: $(cat "$T/out")"
ra_expect 1 "no such device|No such device|not managed" export loop999999
ra_expect 2 "export has no --json" --json export
ra_expect 2 "only go with export" status --current
ra_expect 2 "only go with export" show "$learner" --no-revision
"$RACONTROL" export --no-revision "$learner" >"$T/out" || ra_fail "export --no-revision failed"
grep -qxF 'radaemon:vradaemon-test:mFleet?Disk??7:r*:*' "$T/out" || ra_fail "--no-revision: $(cat "$T/out")"
ra_ok "export DEV, --no-revision, and clear errors for what it cannot do"

# Shipped to this "machine": the file in hwdb.d, compiled, read by udevd.
cp "$T/fleet.hwdb" "$T/hwroot/etc/udev/hwdb.d/60-radaemon-fleet.hwdb"
hwdb_install
[[ $(systemd-hwdb query --root="$T/hwroot" "radaemon:vradaemon-test:m$model:r1.0:") == RADAEMON_FLEET_KB=2048 ]] ||
	ra_fail "hwdb does not find the record for '$model'"

# A disk of the same model, attached later, starts at the fleet's value:
# udev's hwdb sets it, the helper writes it, radaemon keeps it.
ra_new_loop later 64M "${later#loop}"
ra_new_loop other 64M "${other#loop}"
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
[[ -z $(udev_prop "$other" RADAEMON_FLEET_KB) && $(ra_property "$other" source) == prior ]] ||
	ra_fail "$other, another model, got '$(udev_prop "$other" RADAEMON_FLEET_KB)' ($(ra_property "$other" source))"
ra_ok "$later, the same model attached later: helper and radaemon at the fleet's 2048 KiB; $other: prior"

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
