#!/bin/bash
# The shell scripts (build, CI, tests, bench, packaging) pass shellcheck.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

command -v shellcheck >/dev/null || ra_skip "shellcheck is not installed"
cd "$RA_SRCDIR" || ra_fail "no source tree at $RA_SRCDIR"
mapfile -t files < <(
	ls install-deps run-radaemon run-tests autogen.sh .ci/run racontrol/racontrol.bash-completion debian/postrm 2>/dev/null
	find tests bench -name '*.sh' 2>/dev/null | sort
)
shellcheck -x "${files[@]}" || ra_fail "shellcheck found problems"
ra_ok "${#files[@]} scripts clean"
