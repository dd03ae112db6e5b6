#!/bin/bash
# The manual pages: mandoc -Tlint finds nothing at warning level, and each
# page covers its subject: every option, verb, configuration key, D-Bus
# method, property and error, and udev property there is.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
command -v mandoc >/dev/null || ra_skip "mandoc is not installed"
T=$(mktemp -d /tmp/radaemon-test.XXXXXX)
trap 'rm -rf "$T"' EXIT

man=$RA_BUILDDIR/man
pages=(radaemon.8 radaemon-udev.8 racontrol.1 radaemon.conf.5 org.radaemon.ReadAhead1.5)
for page in "${pages[@]}"; do
	[[ -f $man/$page ]] || ra_fail "no $man/$page; run make first"
	mandoc -Tlint -W warning "$man/$page" >"$T/lint" 2>&1 || ra_fail "mandoc -Tlint $page: $(cat "$T/lint")"
	[[ ! -s $T/lint ]] || ra_fail "mandoc -Tlint $page: $(cat "$T/lint")"
	mandoc -Tascii "$man/$page" | sed "s/.\x08//g" >"$T/$page.txt"
done
ra_ok "${#pages[@]} pages lint-clean at warning level"

# covers PAGE WORD...: each word appears in the rendered page.
covers() {
	local page=$1 word
	shift
	for word in "$@"; do
		grep -qF -- "$word" "$T/$page.txt" || ra_fail "$page does not mention $word"
	done
}

mapfile -t options < <("$RA_BUILDDIR/daemon/radaemon" --help | grep -oE -- '--[a-z-]+' | sort -u)
covers radaemon.8 "${options[@]}"
mapfile -t options < <("$RA_BUILDDIR/udev/radaemon-udev" --help | grep -oE -- '--[a-z-]+' | sort -u)
covers radaemon-udev.8 "${options[@]}"
mapfile -t options < <("$RA_BUILDDIR/racontrol/racontrol" --help | grep -oE -- '--[a-z-]+' | sort -u)
mapfile -t verbs < <("$RA_BUILDDIR/racontrol/racontrol" --help | sed -n 's/^  \([a-z]\+\) .*/\1/p')
((${#verbs[@]} >= 6)) || ra_fail "cannot read the verbs from racontrol --help"
covers racontrol.1 "${options[@]}" "${verbs[@]}"
ra_ok "every option of radaemon, radaemon-udev and racontrol, and every verb"

mapfile -t keys < <(sed -n 's/^#\? *\([a-z_]\+\) = .*/\1/p' "$RA_BUILDDIR/etc/radaemon.conf" | sort -u)
((${#keys[@]} >= 8)) || ra_fail "cannot read the keys from etc/radaemon.conf"
covers radaemon.conf.5 "${keys[@]}" "[daemon]" "[policy]" "[device:GLOB]"
ra_ok "every configuration key: ${keys[*]}"

xml=$RA_SRCDIR/daemon/org.radaemon.ReadAhead1.xml
mapfile -t names < <(grep -oE '<(method|property) name="[A-Za-z]+"' "$xml" | sed 's/.*name="\(.*\)"/\1/' | sort -u)
mapfile -t errors < <(grep -ohE 'org\.radaemon\.ReadAhead1\.Error\.[A-Za-z]+' "$RA_SRCDIR/common/ra-dbus.h" | sort -u)
covers org.radaemon.ReadAhead1.5 "${names[@]}" "${errors[@]}" org.radaemon.ReadAhead1.Manager \
	org.radaemon.ReadAhead1.Device org.freedesktop.DBus.Error.AccessDenied org.radaemon.ReadAhead1.manage
ra_ok "every D-Bus method, property and error: ${#names[@]} names, ${#errors[@]} errors"

mapfile -t props < <(grep -ohE '"RADAEMON_[A-Z_]+"' "$RA_SRCDIR/common/ra-device.c" | tr -d '"' | sort -u)
((${#props[@]} == 4)) || ra_fail "expected 4 RADAEMON_* properties in common/ra-device.c, found ${props[*]}"
covers radaemon.8 "${props[@]}"
covers radaemon-udev.8 "${props[@]}" RADAEMON_FIRST_KB RADAEMON_SOURCE 60-radaemon-local.rules
ra_ok "every udev property, in radaemon(8) and radaemon-udev(8)"
