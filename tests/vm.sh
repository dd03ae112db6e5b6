#!/bin/bash
# radaemon on the kernel and the storage stacks users run: a Debian
# release's own kernel (linux-image-amd64, from Debian's packages, never
# installed on the host) booted by qemu-system-x86_64 on a root of the same
# release with its real systemd and udevd, the radaemon package built from
# this tree (on this machine), and lvm2,
# cryptsetup, mdadm and nfs-kernel-server. qemu gives it the disks users
# have: rotational and non-rotational SCSI disks of 1 TiB (virtio-scsi with
# rotation_rate 7200 or 1), a virtio-blk disk, and a 505 KiB USB stick.
# Inside, tests/vm-guest.sh builds LVM, LUKS2, md RAID0/1/5, a deep stack,
# and NFS over loopback, and checks what the udev helper, radaemon and sysfs
# say, checks the unit under the guest's systemd (systemd-analyze), and
# with RA_VM_LIE=1 loads scsi_debug as devices that lie about themselves
# (tests/vm-lie.sh: ./run-tests asks for it on Debian 13, see
# docs/devices-that-lie.md);
# it reboots once to check what survives a reboot. Its results, and
# radaemon's journal, come back through a folder shared over 9p.
#
# The release is RA_DEBIAN's: bookworm (Debian 12, kernel 6.1, systemd 252,
# the default) or trixie (Debian 13, kernel 6.12, systemd 257); the checks
# are the same. ./run-tests runs both.
#
# The root is built once by mmdebstrap into an ext4 image kept in
# RA_IMAGE_CACHE (/var/cache/radaemon-tests), with the kernel and initramfs
# beside it; the guest boots it with writes kept in memory (snapshot=on), so
# it stays as built. KVM where it boots a guest, software emulation
# otherwise. ./run-tests runs this once for each release, after
# tests/systemd.sh.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
version=$(ra_debian_version)

[[ $(id -u) == 0 ]] || ra_skip "needs root to build the root image"
for tool in qemu-system-x86_64 mmdebstrap mkfs.ext4 dpkg-buildpackage python3; do
	command -v "$tool" >/dev/null || ra_fail "$tool is not installed (./install-deps --tests installs it)"
done
((RA_TEST_LIMIT >= 3600)) || RA_TEST_LIMIT=3600
started=$SECONDS

T=$(mktemp -d /var/tmp/radaemon-vm.XXXXXX)
QEMU_PID=
vm_cleanup() {
	local rc=$?
	if [[ -n $QEMU_PID ]]; then
		kill "$QEMU_PID" 2>/dev/null || true
		wait "$QEMU_PID" 2>/dev/null || true
	fi
	rm -rf "$T"
	exit "$rc"
}
trap vm_cleanup EXIT
ra_watchdog

# --- the root image -------------------------------------------------------------------------
# Rebuilt when missing, or when what goes into it changes (the name's number).
cache=${RA_IMAGE_CACHE:-/var/cache/radaemon-tests}
image=$cache/$RA_DEBIAN-vm-2
if [[ ! -f $image/.radaemon-test-image ]]; then
	root=$image.root
	# libinih1 is the package's one dependency beyond these: dpkg -i installs none.
	packages=systemd,systemd-sysv,dbus,udev,polkitd,libinih1,linux-image-amd64,initramfs-tools
	packages+=,lvm2,cryptsetup-bin,mdadm,nfs-kernel-server,nfs-common,e2fsprogs,xfsprogs,fio,python3,kmod,procps
	ra_cached_root "$root" "the VM's Debian $version root" --variant=apt --include="$packages"
	printf 'LABEL=vmroot / ext4 rw,errors=remount-ro 0 1\n' >"$root/etc/fstab"
	printf 'host /mnt/host 9p trans=virtio,version=9p2000.L,msize=262144 0 0\n' >>"$root/etc/fstab"
	mkdir -p "$root/mnt/host"
	echo radaemon-vm >"$root/etc/hostname"
	# The guest runs what the host shares, once the system is up.
	cat >"$root/etc/systemd/system/ra-vm-run.service" <<-'UNIT'
		[Unit]
		Description=radaemon's VM test: runs /mnt/host/run
		After=multi-user.target
		RequiresMountsFor=/mnt/host
		[Service]
		Type=oneshot
		ExecStart=/bin/bash /mnt/host/run
		StandardOutput=journal+console
		StandardError=journal+console
		[Install]
		WantedBy=multi-user.target
	UNIT
	mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
	ln -sf /etc/systemd/system/ra-vm-run.service "$root/etc/systemd/system/multi-user.target.wants/ra-vm-run.service"
	rm -rf "$image.tmp"
	mkdir -p "$image.tmp"
	cp "$root"/boot/vmlinuz-* "$image.tmp/vmlinuz"
	cp "$root"/boot/initrd.img-* "$image.tmp/initrd.img"
	rm -f "$root/.radaemon-test-image"
	mkfs.ext4 -q -F -L vmroot -d "$root" "$image.tmp/root.img" 4G >"$T/mkfs.log" 2>&1 ||
		ra_fail "mkfs.ext4 -d: $(cat "$T/mkfs.log")"
	rm -rf "$root"
	touch "$image.tmp/.radaemon-test-image"
	rm -rf "$image"
	mv "$image.tmp" "$image"
	ra_ok "made the VM's image $image/root.img in $((SECONDS - started)) s"
fi

# --- the package, and what the guest runs -------------------------------------------------
ra_build_package "$T/pkg" nocheck
share=$T/share
mkdir -p "$share/pkg"
cp "$RA_DEB" "$share/pkg/"
cp "$RA_SRCDIR/tests/vm-guest.sh" "$share/run"
cp "$RA_SRCDIR/tests/vm-learn.sh" "$share/learn"
cp "$RA_SRCDIR/tests/vm-lie.sh" "$share/lie"
cp "$RA_SRCDIR/tests/mmap-faults.py" "$share/"
# tests/stack.sh runs in the guest from this tree and its build, shared
# read-only at the same paths.
src=$(cd "$RA_SRCDIR" && pwd)
build=$(cd "$RA_BUILDDIR" && pwd)
printf 'RA_SRCDIR=%s\nRA_BUILDDIR=%s\nRA_VM_LIE=%s\n' "$src" "$build" "${RA_VM_LIE:-0}" >"$share/env"
ra_ok "built $(basename "$RA_DEB")"

# --- the disks ------------------------------------------------------------------------------
# disk ID SIZE ROTATION_RATE: a virtio-scsi disk with serial ID (sparse file).
disks=()
disk() {
	truncate -s "$2" "$T/$1.img"
	disks+=(-drive "file=$T/$1.img,format=raw,if=none,id=drv-$1,cache=unsafe"
		-device "scsi-hd,drive=drv-$1,id=$1,serial=$1,rotation_rate=$3")
}
for id in hdd1 hdd2 hdd3 r1a r1b r5a r5b r5c; do
	disk "$id" 1T 7200
done
disk ssd1 256G 1
disk ssd2 256G 1
truncate -s 64G "$T/vblk1.img"
truncate -s 505K "$T/stick.img"
disks+=(-drive "file=$T/vblk1.img,format=raw,if=none,id=drv-vblk1,cache=unsafe"
	-device "virtio-blk-pci,drive=drv-vblk1,serial=vblk1"
	-drive "file=$T/stick.img,format=raw,if=none,id=drv-stick,cache=unsafe"
	-device "usb-storage,drive=drv-stick,id=stick,serial=stick1")

# --- boot --------------------------------------------------------------------------------------
# boot ACCEL: starts qemu in the background. Under emulation with one CPU:
# with two, Debian's 6.1 twice hung for minutes in a soft lockup (CI runs;
# once in block writeback, once in text_poke_bp() while radaemon enabled a
# tracepoint, CPU 1 waiting on an IPI to CPU 0), code patching across
# emulated CPUs, not anything radaemon or the suite asks.
boot() {
	local cpus=2
	[[ $1 == kvm ]] || cpus=1
	: >"$T/console.log"
	qemu-system-x86_64 -accel "$1" -cpu max -m 3072 -smp "$cpus" -nodefaults -display none \
		-kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
		-append "root=LABEL=vmroot rw console=ttyS0 panic=-1 systemd.show_status=0" \
		-drive "file=$image/root.img,format=raw,if=virtio,snapshot=on,cache=unsafe" \
		-device virtio-scsi-pci,id=scsi -device qemu-xhci,id=xhci "${disks[@]}" \
		-virtfs "local,path=$share,mount_tag=host,security_model=none" \
		-virtfs "local,path=$src,mount_tag=src,security_model=none,readonly=on" \
		-virtfs "local,path=$build,mount_tag=build,security_model=none,readonly=on" \
		-qmp "unix:$T/qmp.sock,server=on,wait=off" \
		-serial "file:$T/console.log" >"$T/qemu.log" 2>&1 &
	QEMU_PID=$!
}

# qmp COMMAND ID: one command to qemu's monitor (device_del).
qmp() {
	python3 - "$T/qmp.sock" "$1" "$2" <<-'PY'
		import json, socket, sys
		s = socket.socket(socket.AF_UNIX)
		s.connect(sys.argv[1])
		f = s.makefile("rw")
		f.readline()
		def call(name, **args):
		    f.write(json.dumps({"execute": name, "arguments": args}) + "\n")
		    f.flush()
		    while True:
		        r = json.loads(f.readline())
		        if "return" in r or "error" in r:
		            return r
		call("qmp_capabilities")
		r = call(sys.argv[2], id=sys.argv[3])
		sys.exit("error" in r and str(r["error"]) or 0)
	PY
}

accel=tcg
if [[ -r /dev/kvm && -w /dev/kvm ]]; then
	# /dev/kvm may be there and not run a guest (nested virtualization):
	# KVM is used where the kernel prints within 30 s.
	boot kvm
	# (bash reports a qemu that aborts on a KVM it cannot use: not news here)
	if RA_TIMEOUT=30 ra_wait_for "grep -q 'Linux version' '$T/console.log' || ! kill -0 $QEMU_PID 2>/dev/null" 2>/dev/null &&
		kill -0 "$QEMU_PID" 2>/dev/null; then
		accel=kvm
	else
		kill "$QEMU_PID" 2>/dev/null || true
		wait "$QEMU_PID" 2>/dev/null || true
		ra_log "KVM did not boot the guest within 30 s: software emulation"
	fi
fi
[[ $accel == kvm ]] || boot tcg
booted=$SECONDS

# The guest runs to its power-off; it asks for a disk's removal in request.
# Its two boots took 15 to 22 minutes under software emulation (Debian 12
# and 13, the machine loaded by other work); 50 minutes is what only a hang
# takes.
deadline=$((SECONDS + 3000))
while kill -0 "$QEMU_PID" 2>/dev/null; do
	if ((SECONDS > deadline)); then
		ra_log "the guest is still running after 50 minutes: stopping it"
		break
	fi
	# A task in D state for 10 minutes is a hung guest kernel, not a slow
	# one: the run stops there rather than at the deadline.
	if grep -qE 'blocked for more than ([6-9][0-9]{2}|[0-9]{4,}) seconds' "$T/console.log"; then
		ra_log "the guest's kernel reports a task blocked for over 600 s: stopping it;" \
			"its first report: $(grep -m1 -A30 'blocked for more than' "$T/console.log")"
		break
	fi
	if [[ -s $share/request ]]; then
		read -r command id <"$share/request"
		rm -f "$share/request"
		qmp "$command" "$id" >>"$T/qmp.log" 2>&1 || ra_log "qmp $command $id: $(cat "$T/qmp.log")"
	fi
	sleep 0.5
done
if kill -0 "$QEMU_PID" 2>/dev/null; then
	kill "$QEMU_PID"
fi
wait "$QEMU_PID" 2>/dev/null || true
QEMU_PID=

# --- the results ----------------------------------------------------------------------------
# ra_fail shows the end of daemon.log: the guest's journal for radaemon.
cat "$share"/journal-phase*.txt >"$T/daemon.log" 2>/dev/null || true
[[ -s $share/results ]] || ra_fail "the guest wrote no results ($accel): $(tail -n 40 "$T/console.log")"
sed -n 's/^kernel: /kernel in the guest: /p' "$share/results" | head -n1
cat "$share/results"
grep -q '^phase 2: done' "$share/results" ||
	ra_fail "the guest did not finish both boots ($accel): $(tail -n 40 "$T/console.log")"
if grep -q '^FAIL' "$share/results"; then
	ra_fail "$(grep -c '^FAIL' "$share/results") checks failed in the guest: $(grep '^FAIL' "$share/results")"
fi
ra_ok "every check passed on Debian $version's $(sed -n 's/^kernel: \([^ ]*\).*/\1/p' "$share/results") ($accel): $(grep -c '^ok' "$share/results") checks, $((SECONDS - booted)) s after the boot began, $((SECONDS - started)) s in all"
