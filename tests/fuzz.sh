#!/bin/bash
# The fuzz targets over their corpus (tests/corpus/<target>): as regression
# tests in every build, and for RA_FUZZ_SECONDS each under libFuzzer in a
# build made with --enable-fuzzing (the sanitizer build of run-tests).
# bench/fuzz.sh runs them for minutes and grows the corpus.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

T=$(mktemp -d /tmp/radaemon-fuzz.XXXXXX)
trap 'rm -rf "$T"' EXIT
seconds=${RA_FUZZ_SECONDS:-10}

for target in fuzz-config fuzz-stat fuzz-state fuzz-udev-props fuzz-trace fuzz-pcache fuzz-swaps fuzz-vmstat fuzz-mounts fuzz-ext4 fuzz-fleet; do
	bin=$RA_BUILDDIR/tests/$target
	corpus=$RA_SRCDIR/tests/corpus/$target
	[[ -x $bin ]] || ra_fail "no $bin; run make check"
	[[ -d $corpus ]] || ra_fail "no corpus $corpus"
	if [[ ${RA_FUZZING:-no} == yes ]]; then
		# libFuzzer adds what it finds to the first directory: not to the source tree.
		mkdir "$T/$target"
		"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
			"$T/$target" "$corpus" >"$T/$target.log" 2>&1 ||
			ra_fail "$target found a problem: $(tail -n 40 "$T/$target.log")"
		ra_ok "$target: $(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$T/$target.log") in ${seconds}s, no finding"
	else
		out=$("$bin" "$corpus") || ra_fail "$target failed on its corpus: $out"
		ra_ok "$out"
	fi
done
