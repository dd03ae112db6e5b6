#!/bin/bash
# racontrol prefetch on ext4, xfs and btrfs over loop devices: after it, a
# walk of a 10,000-file tree reads (almost) nothing from the device, as the
# device's own read counter shows; a tree the caller may not read is not
# warmed; bad paths, a file, vanishing entries, a full budget and Ctrl-C get
# one clear line and no crash. It needs no daemon and no bus.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ra_setup

declare -A DEVS

# Other users may read through $T: prefetch runs as nobody below.
chmod 755 "$T"
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/no-bus-here

for tool in mkfs.xfs mkfs.btrfs runuser fincore; do
	command -v "$tool" >/dev/null || ra_fail "$tool is not installed: run ./install-deps --tests"
done

reads() { awk '{ print $1 }' "/sys/block/$1/stat"; }

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# make_tree DIR DIRS FILES: DIRS directories of FILES small files each, fast.
make_tree() {
	python3 - "$@" <<'PY'
import os, sys
root, dirs, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in range(dirs):
    path = os.path.join(root, f"d{d:03d}")
    os.makedirs(path, exist_ok=True)
    for f in range(files):
        fd = os.open(os.path.join(path, f"file-{f:05d}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"x" * 200)
        os.close(fd)
PY
}

# walk_reads DEV DIR: device reads a full metadata walk of DIR costs.
walk_reads() {
	local before
	before=$(reads "$1")
	find "$2" -ls >/dev/null
	echo $(($(reads "$1") - before))
}

# A warm walk may still meet a few reads (a journal, an atime); another
# test's drop_caches between prefetch and walk would undo the warming, so
# a test that sees many reads tries again before it fails.
ALMOST_NOTHING=8

check_fs() {
	local fs=$1 dev mnt cold warm attempt rc out
	ra_new_loop "$fs" 1G
	dev=$LOOP
	DEVS[$fs]=$dev
	mnt=$T/$fs
	mkdir -p "$mnt"
	case $fs in
	ext4) mkfs.ext4 -q -F "/dev/$dev" ;;
	xfs) mkfs.xfs -q -f "/dev/$dev" ;;
	btrfs) mkfs.btrfs -q -f "/dev/$dev" >/dev/null ;;
	esac
	mount "/dev/$dev" "$mnt"
	RA_MOUNTS+=("$mnt")
	chmod 755 "$mnt"
	mkdir "$mnt/public" "$mnt/secret"
	make_tree "$mnt/public" 40 250 # 10,000 files
	make_tree "$mnt/secret" 8 250
	chmod 700 "$mnt/secret"
	# A journal holds what was just written in memory until it is checkpointed:
	# only a fresh mount makes the tree cold for drop_caches.
	umount "$mnt"
	mount "/dev/$dev" "$mnt"

	# The cold walk reads: without that, "nothing after prefetch" proves nothing.
	drop_caches
	cold=$(walk_reads "$dev" "$mnt/public")
	((cold > ALMOST_NOTHING * 4)) || ra_fail "$fs: a cold walk read only $cold times; the test cannot see warming"

	# The loop device is rotational and this tree fresh: xfs and btrfs list its
	# files in inode order already, so a walk reads as cheaply by itself, and
	# prefetch leaves the lookups to it; ext4 lists in hash order, and
	# prefetch does them.
	drop_caches
	out=$("$RACONTROL" prefetch --json "$mnt/public") || ra_fail "$fs: prefetch failed: $out"
	python3 - "$fs" "$out" <<'PY' || ra_fail "$fs: --json says: $out"
import json, sys
fs, j = sys.argv[1], json.loads(sys.argv[2])
p = j["paths"][0]
assert p["rotational"] is True, p
if fs == "ext4":
    assert p["left_to_the_walk"] is None and j["files"] >= 10040 and j["skipped"] == 0, j
else:
    # Decided from the first directories read (2048 neighbours): the others are
    # left unread, their files are not looked up.
    assert "inode order already" in p["left_to_the_walk"], p
    assert 1 < j["directories"] < 41 and j["files"] < 100 and j["skipped"] >= 2000, j
PY
	if [[ $fs != ext4 ]]; then
		cold=$(walk_reads "$dev" "$mnt/public")
		((cold > ALMOST_NOTHING)) || ra_fail "$fs: prefetch left the lookups to the walk, but it read only $cold times"
	fi
	ra_ok "$fs: on a rotational disk, prefetch without --always: $(echo "$out" | grep -o '"left_to_the_walk":[^,]\{0,40\}')"

	for attempt in 1 2 3; do
		drop_caches
		out=$("$RACONTROL" prefetch --always --json "$mnt/public") || ra_fail "$fs: prefetch failed: $out"
		warm=$(walk_reads "$dev" "$mnt/public")
		((warm > ALMOST_NOTHING)) || break
		ra_log "$fs: attempt $attempt: the walk after prefetch read $warm times; again"
	done
	((warm <= ALMOST_NOTHING)) || ra_fail "$fs: the walk after prefetch read $warm times (cold: $cold)"
	python3 - "$fs" "$out" <<'PY' || ra_fail "$fs: --json says: $out"
import json, sys
fs, j = sys.argv[1], json.loads(sys.argv[2])
want = "inode"
p = j["paths"][0]
assert p["filesystem"] == fs and p["order"] == want and p["reason"], p
# Root may read the device: ext4's metadata is read ahead there, in few commands.
assert (p["device_readahead"] is not None) == (fs == "ext4"), p
# The disk beneath is known, also under btrfs's anonymous device number.
assert p["rotational"] in (True, False), p
assert p["left_to_the_walk"] is None, p
assert j["files"] >= 10040 and j["directories"] == 41 and j["skipped"] == 0, j
assert j["errors"] == 0 and j["denied"] == 0 and not j["interrupted"], j
PY
	ra_ok "$fs: a cold walk read $cold times, after prefetch $warm ($(echo "$out" | grep -o '"order":"[a-z]*"'))"

	# As nobody: the secret tree is not warmed (the root walk of it still
	# reads), the public one is; a line says what was denied, and it is no failure.
	for attempt in 1 2 3; do
		drop_caches
		rc=0
		runuser -u nobody -- "$RACONTROL" prefetch --always "$mnt" >"$T/out" 2>"$T/err" || rc=$?
		((rc == 0)) || ra_fail "$fs: prefetch as nobody: status $rc: $(cat "$T/err")"
		warm=$(walk_reads "$dev" "$mnt/public")
		((warm > ALMOST_NOTHING)) || break
	done
	((warm <= ALMOST_NOTHING)) || ra_fail "$fs: as nobody, the public tree was not warmed ($warm reads)"
	! grep -q "read ahead from" "$T/out" || ra_fail "$fs: nobody read ahead from the device: $(cat "$T/out")"
	# ext4's lost+found is root's too.
	grep -qE "^racontrol: prefetch: [12] entries not warmed: permission denied \($mnt/(secret|lost\+found): Permission denied\)$" \
		"$T/err" || ra_fail "$fs: as nobody: $(cat "$T/err")"
	cold=$(walk_reads "$dev" "$mnt/secret")
	((cold > ALMOST_NOTHING)) || ra_fail "$fs: the tree nobody may not read was warmed ($cold reads)"
	ra_ok "$fs: as nobody, the readable tree is warmed, the secret one not ($cold reads for it later)"
}

check_fs ext4
check_fs xfs
check_fs btrfs

# Where its directories do not list files in inode order (files renamed into
# place, as a mail store does), xfs's lookups are sorted and done.
mnt=$T/xfs
python3 - "$mnt/moved" <<'PY'
import os, random, sys
root = sys.argv[1]
os.makedirs(os.path.join(root, "stage"))
os.makedirs(os.path.join(root, "box"))
names = [f"m{i:05d}" for i in range(2000)]
for n in names:
    open(os.path.join(root, "stage", n), "w").close()
random.Random(7).shuffle(names)
for n in names:
    os.rename(os.path.join(root, "stage", n), os.path.join(root, "box", n))
PY
out=$("$RACONTROL" prefetch --json "$mnt/moved/box") || ra_fail "xfs: prefetch of moved files failed: $out"
python3 -c 'import json, sys; j = json.loads(sys.argv[1]); p = j["paths"][0]
assert p["left_to_the_walk"] is None and j["files"] == 2000 and j["skipped"] == 0, j' "$out" ||
	ra_fail "xfs: files renamed into place were not looked up: $out"
ra_ok "xfs: files renamed into place are looked up in inode order without --always"

# Where the disk is not rotational, many lookups in flight at once beat a
# walk: btrfs is warmed without --always.
dev=${DEVS[btrfs]}
echo 0 >"/sys/block/$dev/queue/rotational"
for attempt in 1 2 3; do
	drop_caches
	out=$("$RACONTROL" prefetch --json "$T/btrfs/public") || ra_fail "btrfs: prefetch failed: $out"
	warm=$(walk_reads "$dev" "$T/btrfs/public")
	((warm > ALMOST_NOTHING)) || break
done
echo 1 >"/sys/block/$dev/queue/rotational"
((warm <= ALMOST_NOTHING)) || ra_fail "btrfs, not rotational: the walk after prefetch read $warm times: $out"
python3 -c 'import json, sys; j = json.loads(sys.argv[1]); p = j["paths"][0]
assert p["rotational"] is False and p["left_to_the_walk"] is None and j["threads"] == 16, j' "$out" ||
	ra_fail "btrfs, not rotational: --json says: $out"
ra_ok "btrfs on a disk that is not rotational: warmed without --always, 16 threads"

# The contract's errors, on the last file system (btrfs) and its loop device.
mnt=$T/btrfs
ra_expect 1 "^racontrol: prefetch: $mnt/nowhere: No such file or directory$" prefetch "$mnt/nowhere"
ra_expect 1 "^racontrol: prefetch: $mnt/public/d000/file-00000 is not a directory$" prefetch "$mnt/public/d000/file-00000"
ra_expect 1 "No such file or directory" prefetch "$mnt/public" "$mnt/nowhere"
ra_expect 2 "^racontrol: prefetch takes at least 1 argument" prefetch
ra_expect 2 "^racontrol: --threads takes a number from 1 to 1024, not 'many'" prefetch --threads many "$mnt"
ra_expect 2 "^racontrol: --budget takes a size" prefetch --data --budget 1.5G "$mnt"
ra_expect 2 "^racontrol: --budget only goes with prefetch --data" prefetch --budget 1M "$mnt"
ra_expect 2 "^racontrol: --data, --always, --threads and --budget only go with prefetch" status --data
ra_expect 2 "^racontrol: --data, --always, --threads and --budget only go with prefetch" status --always
ra_ok "bad paths, a file and usage errors: one line each, status 1 or 2"

# --data reads contents ahead, in the budget; a full budget is said in one line.
mkdir "$mnt/big"
for i in 1 2 3 4 5 6 7 8; do
	head -c 1M /dev/urandom >"$mnt/big/f$i"
done
resident() { fincore --bytes --noheadings --output RES "$mnt"/big/f* | awk '{ s += $1 } END { print s }'; }
# readahead(2) only queues the reads: wait for the page cache to hold them.
for attempt in 1 2 3; do
	drop_caches
	"$RACONTROL" prefetch --data "$mnt/big" >"$T/out" 2>"$T/err" || ra_fail "prefetch --data: $(cat "$T/err")"
	grep -q "^Read ahead 8 files, 8.0 MiB" "$T/out" || ra_fail "prefetch --data said: $(cat "$T/out")"
	# shellcheck disable=SC2016 # ra_wait_for evals it
	! ra_wait_for '[[ $(resident) == 8388608 ]]' || break
done
[[ $(resident) == 8388608 ]] || ra_fail "after prefetch --data the files are not in the page cache: $(fincore "$mnt"/big/f*)"
# readahead(2) may drop a read it cannot queue at once: try again, as above.
for attempt in 1 2 3; do
	drop_caches
	ra_expect 0 "^racontrol: prefetch: the page-cache budget of 2.5 MiB is full; 6 files \(6.0 MiB\) not read ahead$" \
		prefetch --data --budget 2560K "$mnt/big"
	grep -q "^Read ahead 2 files, 2.0 MiB" "$T/out" || ra_fail "prefetch --data --budget 2560K said: $(cat "$T/out")"
	# shellcheck disable=SC2016 # ra_wait_for evals it
	! ra_wait_for '[[ $(resident) -ge 2097152 ]]' || break
done
(($(resident) >= 2097152)) || ra_fail "--budget 2560K: two files are not in the page cache: $(fincore "$mnt"/big/f*)"
(($(resident) <= 2560 * 1024)) || ra_fail "--budget 2560K left $(resident) bytes in the page cache"
ra_ok "--data reads ahead within the budget and says when the budget is full"

# Entries that vanish between getdents64 and statx are counted, not errors.
# The walk runs cold behind a throttle (a slow disk), so that rm, unthrottled,
# removes entries it has listed and not yet looked up. On ext4, whose tree
# prefetch walks in inode order; the remover goes from the other end (rm -rf
# would sort by inode too, and trail prefetch's reads).
mnt=$T/ext4
dev=${DEVS[ext4]}
ra_throttle prefetch "$dev" 100 10000000
vanished=0
for attempt in 1 2 3 4 5; do
	make_tree "$mnt/churn" 1 20000
	umount "$mnt"
	mount "/dev/$dev" "$mnt"
	rc=0
	ra_in_cgroup prefetch "$RACONTROL" prefetch --json --threads 1 "$mnt/churn" >"$T/out" 2>"$T/err" &
	pid=$!
	sleep "0.$attempt"
	python3 - "$mnt/churn/d000" <<'PY'
import os, sys
for e in sorted(os.scandir(sys.argv[1]), key=lambda e: e.inode(), reverse=True):
    os.unlink(e.path)
PY
	rm -rf "$mnt/churn"
	wait "$pid" || rc=$?
	((rc == 0)) || ra_fail "prefetch of a vanishing tree: status $rc: $(cat "$T/err")"
	vanished=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["vanished"])' <"$T/out")
	((vanished == 0)) || break
done
((vanished > 0)) || ra_fail "five attempts, and prefetch never met a vanished entry"
[[ ! -s $T/err ]] || ra_fail "vanished entries made noise: $(cat "$T/err")"
ra_ok "$vanished vanished entries counted, status 0, nothing on stderr"

# Ctrl-C: stops, prints what was done, says so, status 1. A throttled cold
# walk of the tree takes seconds, so the signal comes in the middle of it: on
# ext4, as nobody, who cannot read ahead from the device (root can, and is
# done in a second). setpriv, not runuser, so that $! is racontrol itself.
mnt=$T/ext4
umount "$mnt"
mount "/dev/$dev" "$mnt"
# A shell starts background jobs with SIGINT ignored; a terminal's Ctrl-C
# meets the default, so that is restored first. Not through ra_in_cgroup, a
# function: in the background it is a subshell, and $! would be that.
# shellcheck disable=SC2016 # $$ is the inner shell's
sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' /sys/fs/cgroup/blkio/radaemon-test-prefetch \
	setpriv --reuid=65534 --regid=65534 --clear-groups env --default-signal=INT "$RACONTROL" prefetch --threads 2 "$mnt/public" >"$T/out" 2>"$T/err" &
pid=$!
sleep 1
kill -INT "$pid" 2>/dev/null || true
rc=0
wait "$pid" || rc=$?
((rc == 1)) || ra_fail "prefetch after SIGINT: status $rc, want 1: $(cat "$T/err" "$T/out")"
grep -q "^racontrol: prefetch: interrupted; the summary above is what was done$" "$T/err" ||
	ra_fail "no word of the interruption: $(cat "$T/err")"
grep -q "^Looked up [0-9]* files" "$T/out" || ra_fail "no summary after SIGINT: $(cat "$T/out")"
ra_ok "Ctrl-C stops the walk cleanly: $(grep '^Looked up' "$T/out")"
