# shellcheck shell=bash
# "A && ok ... || fail ...": ok and note only append a line, and never fail.
# shellcheck disable=SC2015
# Sourced by tests/vm-guest.sh: devices that lie about themselves, made by the
# kernel's scsi_debug (in Debian's kernel) one configuration per load: an
# optimal I/O size of 32 MiB (Azure's NVMe disks, USB bridges), host-managed
# zoned, 4 KiB logical blocks, a slow device, a device whose every read fails,
# and two units with one WWN and different models (cheap bridges). For each:
# what the udev helper and radaemon set and why, whether radaemon calibrated
# it, whether anything radaemon read woke a kernel error, that radaemon
# answers and that systemctl stop ends (timed). "table-lie: ..." lines are
# docs/devices-that-lie.md's table.
#
# Each load is a device radaemon meets for the first time. scsi_debug names
# the disk by its SCSI host's number, which the kernel gives again after a
# rmmod, so every load has one WWN: radaemon's state of the previous case is
# dropped (radaemon stopped) before the next, except between the two units
# of the shared-WWN case, where keeping them apart is what is checked.

LIE_SYSFS=/sys/bus/pseudo/drivers/scsi_debug
LIE_STOP_MAX=20 # seconds: only a hang (a read without a deadline) takes longer
LIE_PIN=1348    # KiB: the first unit's pin in the shared-WWN case, no value radaemon picks
LIE_ENDS='calibrated|cannot calibrate|calibration (stopped|read nothing)'

kmsg() { echo "radaemon-vm: $*" >/dev/kmsg; }
# lie_disk MODEL: the kernel name of the scsi_debug disk of that model.
lie_disk() {
	local d
	for d in /sys/block/sd*; do
		[[ $(cat "$d/device/model" 2>/dev/null) == "$1"* ]] && basename "$d" && return 0
	done
	return 1
}
# lie_errors MARKER DEV: what the kernel logged about DEV since MARKER that says
# a command failed.
lie_errors() {
	dmesg | sed -n "/radaemon-vm: $1\$/,\$p" | grep -wF "$2" |
		grep -iE 'error|fail|sense|illegal|invalid|unaligned|zone' || true
}
# lie_commands DEV: "F of D failed": the SCSI commands DEV completed since
# sd's probe (which zeroes the error count) and how many of them failed.
lie_commands() {
	local q=/sys/block/$1/device
	echo "$(($(cat "$q/ioerr_cnt" 2>/dev/null || echo -1))) of $(($(cat "$q/iodone_cnt" 2>/dev/null || echo -1))) failed"
}
# lie_set_delay JIFFIES: every command of the loaded scsi_debug takes that long
# (scsi_debug refuses a change while commands are queued).
lie_set_delay() {
	wait_for "echo $1 >$LIE_SYSFS/delay 2>/dev/null" 30
}

# lie_stop LABEL DEV: systemctl stop radaemon, timed, into LIE_STOP (seconds).
lie_stop() {
	local t0=$EPOCHREALTIME rc=0
	timeout $((LIE_STOP_MAX * 3)) systemctl stop radaemon || rc=$?
	LIE_STOP=$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $t0 }")
	((rc == 0)) && awk "BEGIN { exit !($LIE_STOP < $LIE_STOP_MAX) }" &&
		ok "$1 ($2): systemctl stop radaemon took $LIE_STOP s" ||
		fail "$1 ($2): systemctl stop radaemon took $LIE_STOP s (bound $LIE_STOP_MAX s; exit $rc, 124 is timeout's): $(systemctl status --no-pager radaemon | tail -n 5)"
}

# lie_unload LABEL DEV: the disk deleted, then the module removed; nothing may
# hold either.
lie_unload() {
	if [[ -n $2 && -e /sys/block/$2 ]]; then
		timeout 60 sh -c "echo 1 >/sys/block/$2/device/delete" || fail "$1 ($2): deleting the disk took over 60 s"
		udevadm settle --timeout=60
	fi
	if timeout 60 modprobe -r scsi_debug; then
		return 0
	fi
	fail "$1 ($2): scsi_debug could not be removed (refcnt $(cat /sys/module/scsi_debug/refcnt 2>/dev/null)): held by $(find /proc/[0-9]*/fd -maxdepth 1 -lname "/dev/$2*" 2>/dev/null | head -n 3 | tr '\n' ' ')"
	return 1
}

# lie_load LABEL PRODUCT PARAMS...: loads scsi_debug as one disk of model
# PRODUCT, waits for udev and for radaemon's object, and sets LIE_DEV and
# LIE_CURSOR (radaemon's journal before the load).
lie_load() {
	local label=$1 product=$2
	shift 2
	LIE_DEV=
	LIE_CURSOR=$(cursor)
	kmsg "load $product"
	if ! timeout 120 modprobe scsi_debug inq_vendor=RADAEMON "inq_product=$product" "$@"; then
		fail "$label: modprobe scsi_debug $*: $(dmesg | tail -n 5)"
		return 1
	fi
	if ! wait_for "lie_disk $product >/dev/null" 60; then
		fail "$label: no disk of model $product 60 s after modprobe scsi_debug $*: $(dmesg | tail -n 5)"
		lie_unload "$label" ""
		return 1
	fi
	LIE_DEV=$(lie_disk "$product")
	udevadm settle --timeout=180
	wait_for "[[ -n \$(prop $LIE_DEV target_kb) ]]" 30 ||
		fail "$label ($LIE_DEV): radaemon has no object for it 30 s after udevadm settle"
	# From here only radaemon reads the disk: what the kernel logs is its doing.
	kmsg "settled $product"
	LIE_SETTLED_CMDS=$(lie_commands "$LIE_DEV")
	return 0
}

# lie_calibration LABEL DEV: radaemon's calibration of DEV since LIE_CURSOR, if
# it starts one by itself (it does soon, for a disk it has seen idle), once it
# ends; "none" when none started within 20 s. Into LIE_CALIB.
lie_calibration() {
	LIE_CALIB=none
	wait_for "journal_since '$LIE_CURSOR' $2 | grep -q ': calibrating'" 20 || return 0
	if ! wait_for "timeout 10 racontrol show $2 >/dev/null" 5; then
		fail "$1 ($2): racontrol show does not answer while radaemon calibrates it"
	fi
	wait_for "journal_since '$LIE_CURSOR' $2 | grep -qE '$LIE_ENDS'" 90
	LIE_CALIB=$(journal_since "$LIE_CURSOR" "$2" | grep -E "$LIE_ENDS" | tail -n1)
	LIE_CALIB=${LIE_CALIB:-started, and not ended within 90 s}
	LIE_CALIB=${LIE_CALIB#"$2": }
}

# lie_record LABEL DEV PRODUCT: the common checks, and the table's row.
lie_record() {
	local label=$1 dev=$2 product=$3 helper sys target errs q=/sys/block/$2/queue
	helper=$(helper_kb "$dev")
	sys=$(kb "$dev")
	target=$(prop "$dev" target_kb)
	[[ -n $helper ]] && ok "$label ($dev): the udev helper wrote $helper KiB" ||
		fail "$label ($dev): the udev helper wrote nothing (no RADAEMON_FIRST_KB)"
	[[ -n $target && $target == "$sys" ]] &&
		ok "$label ($dev): radaemon and sysfs agree on $sys KiB ($(prop "$dev" source)): $(prop "$dev" reason)" ||
		fail "$label ($dev): sysfs $sys KiB, radaemon '$target' ($(prop "$dev" source)): $(prop "$dev" reason)"
	timeout 10 racontrol show "$dev" >/dev/null && ok "$label ($dev): racontrol show answers" ||
		fail "$label ($dev): racontrol show does not answer within 10 s"
	errs=$(lie_errors "settled $product" "$dev")
	[[ -z $errs ]] && ok "$label ($dev): nothing radaemon read woke a kernel error (calibration: $LIE_CALIB)" ||
		fail "$label ($dev): the kernel logged errors while only radaemon read it (calibration: $LIE_CALIB): $(head -n 4 <<<"$errs" | tr '\n' ' ')"
	say "state: $label ($dev): SCSI commands at settle: $LIE_SETTLED_CMDS; now: $(lie_commands "$dev")"
	say "table-lie: $label | $dev | $(cat "$q/optimal_io_size") | $(cat "$q/logical_block_size") | $(cat "$q/zoned") | $helper | $target $(prop "$dev" source) | $(prop "$dev" reason) | $LIE_CALIB | $(grep -c . <<<"$errs") | $(lie_errors "load $product" "$dev" | grep -c .)"
}

# lie_next LABEL DEV: the timed stop, the disk and the module removed, and
# what radaemon keeps of DEV's identity dropped, before radaemon starts again.
lie_next() {
	local identity
	identity=$(prop "$2" identity)
	lie_stop "$1" "$2"
	lie_unload "$1" "$2"
	[[ -z $identity ]] || sed -i "/^device ${identity//\//\\/} /d" /var/lib/radaemon/state 2>/dev/null
	systemctl start radaemon
	wait_for "systemctl is-active --quiet radaemon" 30 || fail "radaemon did not start again after $1"
}

# lie_case LABEL PRODUCT PARAMS...: one device, loaded, checked, removed.
lie_case() {
	local label=$1 product=$2
	shift 2
	lie_load "$label" "$product" "$@" || return 0
	lie_calibration "$label" "$LIE_DEV"
	lie_record "$label" "$LIE_DEV" "$product"
	case $product in
	RA-IOOPT)
		local io_opt kernel_kb
		io_opt=$(cat "/sys/block/$LIE_DEV/queue/optimal_io_size")
		kernel_kb=$((io_opt * 2 / 1024))
		[[ $(kb "$LIE_DEV") =~ ^[0-9]+$ ]] && ((io_opt > 0 && $(kb "$LIE_DEV") < kernel_kb)) &&
			ok "$label ($LIE_DEV): the kernel's window for io_opt $io_opt (2 × io_opt, $kernel_kb KiB) did not stand: $(kb "$LIE_DEV") KiB" ||
			fail "$label ($LIE_DEV): io_opt $io_opt, read_ahead_kb $(kb "$LIE_DEV") (the kernel's would be $kernel_kb)"
		;;
	RA-ZONED)
		[[ $(cat "/sys/block/$LIE_DEV/queue/zoned") == host-managed ]] ||
			fail "$label ($LIE_DEV): the kernel sees it as $(cat "/sys/block/$LIE_DEV/queue/zoned")"
		[[ $LIE_CALIB == none ]] && ok "$label ($LIE_DEV): radaemon does not calibrate a host-managed zoned disk" ||
			fail "$label ($LIE_DEV): radaemon calibrated a host-managed zoned disk, which refuses reads past a zone's write pointer: $LIE_CALIB"
		;;
	RA-BADREAD)
		# Its calibration may start before udevadm settle ends, where the
		# kernel's errors are not told apart from the probes': the
		# calibration itself is what is checked (on main it started, read,
		# and failed with ENODATA).
		[[ $LIE_CALIB == none ]] && ok "$label ($LIE_DEV): radaemon does not read a disk whose reads failed ($(lie_commands "$LIE_DEV")): $(journal_since "$LIE_CURSOR" "$LIE_DEV" | grep -F 'not calibrated' | tail -n1)" ||
			fail "$label ($LIE_DEV): radaemon calibrated a disk whose reads had failed ($LIE_SETTLED_CMDS at settle): $LIE_CALIB"
		;;
	RA-SLOW) lie_slow_stop "$label" "$LIE_DEV" ;;
	esac
	lie_next "$label" "$LIE_DEV"
}

# lie_slow_stop LABEL DEV: every command now takes 3 s (a disk retrying a
# sector); radaemon calibrates it on request, answers meanwhile, and
# systemctl stop in the middle of a read ends within the bound.
lie_slow_stop() {
	local label="$1, 3 s a command" dev=$2 hz c pid
	hz=$(sed -n 's/^CONFIG_HZ=//p' "/boot/config-$(uname -r)")
	lie_set_delay $((3 * ${hz:-250})) || fail "$label: scsi_debug's delay did not change"
	c=$(cursor)
	timeout 120 racontrol calibrate "$dev" >/dev/null 2>&1 &
	pid=$!
	if wait_for "journal_since '$c' $dev | grep -q ': calibrating'" 30; then
		sleep 1
		timeout 10 racontrol show "$dev" >/dev/null && ok "$label ($dev): racontrol show answers during a calibration read" ||
			fail "$label ($dev): racontrol show does not answer within 10 s during a calibration read"
		lie_stop "$label, during a calibration read" "$dev"
	else
		fail "$label ($dev): racontrol calibrate started no calibration: $(journal_since "$c" "$dev" | tail -n 2)"
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	lie_set_delay 1 || fail "$label: scsi_debug's delay did not come back"
	systemctl start radaemon
	wait_for "systemctl is-active --quiet radaemon" 30 || fail "radaemon did not start again after $label"
}

# lie_shared_wwn: two units of one WWN and size, and different models, one
# after the other; the first pinned. The second is another device: not the
# first one's identity, pin or calibration.
lie_shared_wwn() {
	local label="one WWN, two models" a b wwn_a wwn_b id_a id_b params=(virtual_gb=512 dev_size_mb=64)
	lie_load "$label, first" RA-SAME-A "${params[@]}" || return 0
	a=$LIE_DEV
	lie_calibration "$label, first" "$a"
	lie_record "$label, first (RA-SAME-A)" "$a" RA-SAME-A
	wwn_a=$(udevadm info -q property -n "/dev/$a" | sed -n 's/^ID_WWN=//p')
	id_a=$(prop "$a" identity)
	racontrol set "$a" "$LIE_PIN" >/dev/null || fail "$label: racontrol set $a $LIE_PIN"
	wait_for "[[ \$(prop $a source) == pinned ]]" 10 || fail "$label: the pin did not reach $a"
	# Removed while radaemon runs: it lets go of the disk.
	timeout 60 sh -c "echo 1 >/sys/block/$a/device/delete" || fail "$label: deleting $a took over 60 s"
	udevadm settle --timeout=60
	wait_for "[[ -z \$(prop $a target_kb) ]]" 20 && ok "$label: radaemon dropped $a when it was deleted" ||
		fail "$label: radaemon still shows $a after its deletion"
	lie_unload "$label, first" "$a" && ok "$label: scsi_debug removed under a running radaemon"

	lie_load "$label, second" RA-SAME-B "${params[@]}" || return 0
	b=$LIE_DEV
	lie_calibration "$label, second" "$b"
	lie_record "$label, second (RA-SAME-B)" "$b" RA-SAME-B
	wwn_b=$(udevadm info -q property -n "/dev/$b" | sed -n 's/^ID_WWN=//p')
	id_b=$(prop "$b" identity)
	say "state: shared WWN: $a (RA-SAME-A) WWN $wwn_a identity $id_a; $b (RA-SAME-B) WWN $wwn_b identity $id_b"
	if [[ -z $wwn_a || $wwn_a != "$wwn_b" ]]; then
		fail "$label: scsi_debug gave the two units WWNs '$wwn_a' and '$wwn_b': the case was not made"
	elif [[ $id_a != "$id_b" && $(prop "$b" source) != pinned && $(kb "$b") != "$LIE_PIN" ]]; then
		ok "$label: $b (RA-SAME-B) is kept apart from $a (RA-SAME-A): identity $id_b, not $id_a; $(kb "$b") KiB ($(prop "$b" source)), not the first's pin"
	else
		fail "$label: $b (RA-SAME-B) is taken for $a (RA-SAME-A), same WWN $wwn_b: identity $id_b (first $id_a), $(kb "$b") KiB ($(prop "$b" source): $(prop "$b" reason)); the first was pinned to $LIE_PIN"
	fi
	lie_next "$label" "$b"
}

# lie_cases: every case, one load each.
lie_cases() {
	local gb=(virtual_gb=512 dev_size_mb=64)
	modprobe -n scsi_debug 2>/dev/null || {
		fail "this kernel has no scsi_debug module"
		return 0
	}
	lie_case "io_opt 32 MiB" RA-IOOPT "${gb[@]}" sector_size=512 opt_blks=65535
	lie_case "host-managed zoned" RA-ZONED dev_size_mb=256 zbc=managed zone_size_mb=16
	lie_case "4 KiB logical blocks" RA-4KN "${gb[@]}" sector_size=4096
	lie_case "slow, 0.5 s a command" RA-SLOW "${gb[@]}" ndelay=500000000
	# opts=2: medium errors on every read of the range, here all of it.
	lie_case "every read fails" RA-BADREAD "${gb[@]}" opts=2 medium_error_start=0 medium_error_count=$((512 * 2097152))
	lie_shared_wwn
}
