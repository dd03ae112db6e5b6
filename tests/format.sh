#!/bin/bash
# The C sources follow the one .clang-format in the root.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

command -v clang-format >/dev/null || ra_skip "clang-format is not installed"
cd "$RA_SRCDIR" || ra_fail "no source tree at $RA_SRCDIR"
mapfile -t files < <(find common daemon racontrol tests bench udev -name '*.[ch]' 2>/dev/null | sort)
((${#files[@]} > 0)) || ra_fail "no C sources found under $RA_SRCDIR"
clang-format --dry-run --Werror "${files[@]}" || ra_fail "run: clang-format -i ${files[*]}"
ra_ok "${#files[@]} files formatted"
