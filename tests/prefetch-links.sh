#!/bin/bash
# A user who owns a tree root prefetches swaps its directories for links
# while the walk runs (issue 47, item 6): every directory and --data file is
# opened from the root's descriptor with openat2(RESOLVE_BENEATH |
# RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV), so racontrol prefetch, run by root,
# never reads what the links point at: a root-only directory here, whose
# file's pages must stay out of the page cache. Before, directories and
# --data files were opened by their whole path, with only the last
# component not followed.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
command -v setpriv >/dev/null || ra_skip "setpriv is not installed"
command -v fincore >/dev/null || ra_skip "fincore (util-linux) is not installed"
ra_setup

U=$(mktemp -d /srv/radaemon-plinks.XXXXXX)
RA_OWN_DIRS+=("$U")
remove_dir() {
	[[ -z ${swapper:-} ]] || kill "$swapper" 2>/dev/null || true
	[[ -z ${swapper:-} ]] || wait "$swapper" 2>/dev/null || true
	rm -rf "$U"
}
RA_HOOKS+=(remove_dir)
secret=$U/secret
tree=$U/tree
chmod 0755 "$U"
mkdir -p "$secret" "$tree"
chmod 0700 "$secret"
head -c 1M /dev/urandom >"$secret/f"
for i in $(seq -w 1 200); do
	mkdir "$tree/d$i"
	head -c 8K /dev/urandom >"$tree/d$i/f"
done
chown -R nobody:nogroup "$tree"

uncache() { python3 -c "import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)" "$1"; }
cached_pages() { fincore --noheadings --raw --output PAGES "$1"; }
sync "$secret/f"
uncache "$secret/f"
(($(cached_pages "$secret/f") == 0)) || ra_skip "this file system keeps $secret/f in the page cache after POSIX_FADV_DONTNEED"

# nobody swaps every directory for a link to the secret one, holds the links
# a while, and puts the directories back, over and over.
setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 - "$tree" "$secret" <<'PY' &
import os, sys, time
os.chdir(sys.argv[1])
names = sorted(n for n in os.listdir(".") if not n.endswith(".x"))
while True:
    for n in names:
        os.rename(n, n + ".x")
        os.symlink(sys.argv[2], n)
    time.sleep(0.2)
    for n in names:
        os.unlink(n)
        os.rename(n + ".x", n)
    time.sleep(0.05)
PY
swapper=$!
RA_PIDS+=("$swapper")
runs=0 errors=0
for _ in $(seq 20); do
	if "$RACONTROL" prefetch --data --always "$tree" >"$T/prefetch.out" 2>&1; then
		:
	else
		errors=$((errors + 1))
	fi
	runs=$((runs + 1))
	n=$(cached_pages "$secret/f")
	((n == 0)) || ra_fail "run $runs: racontrol prefetch read $n pages of $secret/f through nobody's links: $(cat "$T/prefetch.out")"
done
kill -0 "$swapper" 2>/dev/null || ra_fail "nobody's swapping of directories for links stopped"
ra_ok "$runs prefetch walks of nobody's tree while it swapped directories for links: nothing read beyond it ($errors runs said an error: $(tail -n1 "$T/prefetch.out"))"
