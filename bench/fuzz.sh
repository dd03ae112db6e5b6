#!/bin/bash
# Fuzzes every parser for minutes under libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer, keeps in tests/corpus/<target> what adds
# coverage, and writes bench/results/<date>-<kernel>-fuzz.md.
#
#   bench/fuzz.sh                      300 s per target: about 27 minutes
#   RA_FUZZ_SECONDS=20 bench/fuzz.sh   a short look (its report: -fuzz-quick.md)
#   bench/fuzz.sh fuzz-config          only the targets named
#
# The targets are those tests/fuzz.sh runs. The build is build-fuzz/ in the
# source tree (RA_FUZZ_BUILDDIR for another), configured with CC=clang
# --enable-sanitizers --enable-fuzzing when it is not yet; an existing one is
# reused and brought up to date. libFuzzer writes its finds to a scratch
# directory; afterwards -merge=1 copies into the corpus only those that add
# coverage to it. A crash, leak, timeout or excess memory fails the script;
# its reproducer is kept in <builddir>/fuzz-findings/<target>/ and named.
set -euo pipefail

srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=${RA_FUZZ_BUILDDIR:-$srcdir/build-fuzz}
seconds=${RA_FUZZ_SECONDS:-300}
limits=(-timeout=10 -rss_limit_mb=1024)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

log() { printf 'fuzz.sh: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

[[ $seconds =~ ^[1-9][0-9]*$ ]] || die "RA_FUZZ_SECONDS must be a number of seconds, not '$seconds'"

# One list of targets: the loop of tests/fuzz.sh.
read -r -a all_targets < <(sed -n 's/^for target in \(.*\); do$/\1/p' "$srcdir/tests/fuzz.sh")
((${#all_targets[@]} > 0)) || die "cannot find the list of targets in tests/fuzz.sh"
targets=("$@")
((${#targets[@]} > 0)) || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
	[[ " ${all_targets[*]} " == *" $target "* ]] || die "no fuzz target '$target' (${all_targets[*]})"
done

# --- the build --------------------------------------------------------------

if [[ -f $builddir/config.status ]]; then
	if ! grep -q -- "--enable-fuzzing" "$builddir/config.status" ||
		! grep -q -- "--enable-sanitizers" "$builddir/config.status"; then
		die "$builddir is not configured with --enable-sanitizers --enable-fuzzing"
	fi
else
	log "configuring $builddir (clang, sanitizers, libFuzzer)"
	[[ -x $srcdir/configure ]] || "$srcdir/autogen.sh"
	mkdir -p "$builddir"
	(cd "$builddir" && "$srcdir/configure" CC=clang --enable-sanitizers --enable-fuzzing) \
		>"$builddir/fuzz-configure.log" 2>&1 ||
		die "configure failed; see $builddir/fuzz-configure.log"
fi
log "building ${targets[*]} in $builddir"
make -C "$builddir" -j"$(nproc)" "${targets[@]/#/tests/}" >"$builddir/fuzz-make.log" 2>&1 ||
	die "the build failed; see $builddir/fuzz-make.log"

# --- fuzzing ----------------------------------------------------------------

scratch=$(mktemp -d /tmp/radaemon-fuzz.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
findings=$builddir/fuzz-findings
date=$(date +%Y-%m-%d)
kernel=$(uname -r)
# Before the merge changes the corpus.
commit=$(git -C "$srcdir" describe --always --dirty 2>/dev/null || echo '?')
version=$(sed -n 's/^#define PACKAGE_STRING "\(.*\)"$/\1/p' "$builddir/config.h")

# The last "cov: N ft: N" libFuzzer printed: edges and features it reached.
coverage() { grep -o 'cov: [0-9]* ft: [0-9]*' "$1" | tail -n 1 | awk '{ print $2, $4 }'; }
final_stat() { sed -n "s/^stat::$2: *//p" "$1" | tail -n 1; }

rows=()
failed=()
for target in "${targets[@]}"; do
	bin=$builddir/tests/$target
	corpus=$srcdir/tests/corpus/$target
	[[ -d $corpus ]] || die "no corpus $corpus"
	mkdir -p "$scratch/$target/new" "$findings/$target"
	before=$(find "$corpus" -type f | wc -l)
	log "$target: ${seconds}s over $before corpus files"

	# New inputs go to the first directory, the scratch one.
	status=0
	"$bin" -max_total_time="$seconds" "${limits[@]}" -print_final_stats=1 \
		-artifact_prefix="$findings/$target/" "$scratch/$target/new" "$corpus" \
		>"$scratch/$target/fuzz.log" 2>&1 || status=$?
	cp "$scratch/$target/fuzz.log" "$findings/$target/last-run.log"
	execs=$(final_stat "$scratch/$target/fuzz.log" number_of_executed_units)
	rate=$(final_stat "$scratch/$target/fuzz.log" average_exec_per_sec)
	found=$(find "$scratch/$target/new" -type f | wc -l)
	read -r cov ft < <(coverage "$scratch/$target/fuzz.log") || true

	if ((status != 0)); then
		artifact=$(grep -o "Test unit written to [^ ]*" "$scratch/$target/fuzz.log" |
			tail -n 1 | sed 's/^Test unit written to //')
		log "$target: FINDING (exit $status); reproducer: ${artifact:-none written}"
		log "$target: log: $findings/$target/last-run.log"
		grep -m 1 -E "ERROR: |runtime error: |SUMMARY: " "$scratch/$target/fuzz.log" >&2 || true
		failed+=("$target")
		rows+=("| $target | ${execs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | $found | not merged | $before | finding: \`${artifact:-?}\` |")
		continue
	fi

	# Only what adds coverage to the corpus joins it.
	"$bin" -merge=1 "${limits[@]}" "$corpus" "$scratch/$target/new" \
		>"$scratch/$target/merge.log" 2>&1 ||
		die "$target: the merge failed: $(tail -n 20 "$scratch/$target/merge.log")"
	after=$(find "$corpus" -type f | wc -l)
	added=$((after - before))
	printf '%s: %s executions in %ss (%s/s), cov %s ft %s, %s new inputs found, %s added to the corpus (%s -> %s files), no finding\n' \
		"$target" "${execs:-?}" "$seconds" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$found" \
		"$added" "$before" "$after"
	rows+=("| $target | ${execs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | $found | $added | $before → $after | no finding |")
done

# --- the report -------------------------------------------------------------

suffix=
((seconds == 300)) || suffix=-quick
report=$srcdir/bench/results/$date-$kernel-fuzz$suffix.md
mkdir -p "$srcdir/bench/results"
{
	printf '# radaemon fuzzing: %s, Linux %s\n\n' "$date" "$kernel"
	printf '%s at commit %s; bench/fuzz.sh, %s s per target under libFuzzer with ' \
		"${version:-radaemon}" "$commit" "$seconds"
	printf 'AddressSanitizer and UndefinedBehaviorSanitizer (%s), ' "$(clang --version | head -n 1)"
	printf '%s, on %s cores.\n\n' "${limits[*]}" "$(nproc)"
	cat <<'EOF'
Each target starts from its corpus in tests/corpus/<target>; what it finds
goes to a scratch directory, and `-merge=1` then adds to the corpus only the
inputs that add coverage to it. cov: edges reached, ft: features (edges with
hit counts), at the end of the run.

| target | executions | per second | cov | ft | new inputs found | added to the corpus | corpus files | result |
|---|---:|---:|---:|---:|---:|---:|---:|---|
EOF
	printf '%s\n' "${rows[@]}"
} >"$report"
log "wrote $report"

if ((${#failed[@]} > 0)); then
	die "findings in ${failed[*]}: reproducers in $findings"
fi
