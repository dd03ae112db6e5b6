#!/bin/bash
# Records the block-device stacks the named devices are part of, up through
# holders/ and down through slaves/, as a tests/sysfs/*.tree manifest on
# stdout: the links, the attributes the stack code reads (common/ra-stack-*.c),
# and the empty holders/ and slaves/ directories. tests/test-stack.c builds a
# tree from it.
#
#   tests/sysfs/record.sh [--root DIR] DEVICE... > tests/sysfs/NAME.tree
#
# A manifest rather than the tree itself: make dist packs with "tar -h",
# which turns sysfs's relative links into copies and fails on dangling ones.
#
# Lines: "d PATH", "f PATH CONTENTS" (written with a newline, as sysfs does)
# and "l PATH TARGET", with PATH relative to the root.
set -eu

root=/sys
if [ "${1:-}" = --root ]; then
	root=$2
	shift 2
fi
(($# > 0)) || {
	echo "usage: $0 [--root DIR] DEVICE..." >&2
	exit 2
}
root=$(cd "$root" && pwd -P)

attrs=(size removable queue/rotational queue/optimal_io_size queue/max_sectors_kb
	queue/read_ahead_kb dm/name dm/uuid md/level md/raid_disks md/chunk_size md/layout)

declare -A seen=()
queue=("$@")
lines=()

# The links in dir/sub (holders, slaves), or the empty directory.
record_links() {
	local dir=$1 rel=$2 link
	local -a links=()

	[ -d "$dir" ] || return 0
	shopt -s nullglob
	links=("$dir"/*)
	shopt -u nullglob
	if ((${#links[@]} == 0)); then
		lines+=("d $rel")
		return 0
	fi
	for link in "${links[@]}"; do
		lines+=("l $rel/${link##*/} $(readlink "$link")")
	done
}

# Queues the whole device behind a slave or holder link: a partition's disk is its parent directory.
queue_linked() {
	local link=$1 name target

	name=${link##*/}
	if [ -e "$root/block/$name" ]; then
		queue+=("$name")
	else
		target=$(realpath "$link")
		queue+=("$(basename "$(dirname "$target")")")
	fi
}

while ((${#queue[@]} > 0)); do
	name=${queue[0]}
	queue=("${queue[@]:1}")
	[ -z "${seen[$name]:-}" ] || continue
	seen[$name]=1

	[ -e "$root/block/$name" ] || {
		echo "$0: no block device $name under $root" >&2
		exit 1
	}
	dir=$(realpath "$root/block/$name")
	rel=${dir#"$root"/}
	lines+=("l block/$name $(readlink "$root/block/$name")")

	for attr in "${attrs[@]}"; do
		[ -f "$dir/$attr" ] && lines+=("f $rel/$attr $(cat "$dir/$attr")")
	done
	record_links "$dir/slaves" "$rel/slaves"
	record_links "$dir/holders" "$rel/holders"

	for part in "$dir"/*/partition; do
		[ -f "$part" ] || continue
		pdir=${part%/partition}
		lines+=("f $rel/${pdir##*/}/partition $(cat "$part")")
		lines+=("f $rel/${pdir##*/}/size $(cat "$pdir/size")")
		record_links "$pdir/holders" "$rel/${pdir##*/}/holders"
		for link in "$pdir"/holders/*; do
			[ -e "$link" ] && queue_linked "$link"
		done
	done
	for link in "$dir"/slaves/* "$dir"/holders/*; do
		[ -e "$link" ] && queue_linked "$link"
	done
done

if [ "$root" = /sys ]; then
	echo "# recorded by tests/sysfs/record.sh $* on Linux $(uname -r)"
else
	echo "# recorded by tests/sysfs/record.sh $*"
fi
printf '%s\n' "${lines[@]}" | LC_ALL=C sort -k2,2 -s
