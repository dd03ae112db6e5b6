#!/bin/bash
# The manual pages: mandoc -Tlint finds nothing at warning level, and each
# page covers its subject: every option, verb, configuration key and
# section, D-Bus method, property and error, udev property, source of a
# value, workload, kind of device and of bdi, bdi identity, state file key,
# environment variable the daemon reads, and key of racontrol's JSON there
# is.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
command -v mandoc >/dev/null || ra_skip "mandoc is not installed"
T=$(mktemp -d /tmp/radaemon-test.XXXXXX)
trap 'rm -rf "$T"' EXIT

man=$RA_BUILDDIR/man
pages=(radaemon.8 radaemon-udev.8 racontrol.1 radaemon.conf.5 org.radaemon.ReadAhead1.5 radaemon-metrics.service.8)
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

mapfile -t metrics < <(grep -ohE '"radaemon_[a-z_]+' "$RA_SRCDIR/racontrol/verb-metrics.c" | tr -d '"' | sort -u)
((${#metrics[@]} >= 9)) || ra_fail "cannot read the metrics from racontrol/verb-metrics.c"
covers racontrol.1 "${metrics[@]}"
mapfile -t ids < <(grep -oE '"[0-9a-f]{32}"' "$RA_SRCDIR/daemon/ra-log.c" | tr -d '"')
((${#ids[@]} == 5)) || ra_fail "expected 5 MESSAGE_IDs in daemon/ra-log.c, found ${ids[*]}"
covers radaemon.8 "${ids[@]}" RADAEMON_DEVICE= RADAEMON_KB= RADAEMON_SOURCE=
for id in "${ids[@]}"; do
	grep -qx -- "-- $id" "$RA_SRCDIR/systemd/radaemon.catalog" || ra_fail "systemd/radaemon.catalog has no entry for $id"
done
ra_ok "every metric in racontrol(1); every MESSAGE_ID in radaemon(8) and the catalog"

mapfile -t keys < <(sed -n 's/^#\? *\([a-z_]\+\) = .*/\1/p' "$RA_BUILDDIR/etc/radaemon.conf" | sort -u)
((${#keys[@]} >= 8)) || ra_fail "cannot read the keys from etc/radaemon.conf"
covers radaemon.conf.5 "${keys[@]}" "[daemon]" "[policy]" "[device:GLOB]" "[bdi:GLOB]"
ra_ok "every configuration key: ${keys[*]}"

xml=$RA_SRCDIR/daemon/org.radaemon.ReadAhead1.xml
mapfile -t names < <(grep -oE '<(method|property) name="[A-Za-z]+"' "$xml" | sed 's/.*name="\(.*\)"/\1/' | sort -u)
mapfile -t errors < <(grep -ohE 'org\.radaemon\.ReadAhead1\.Error\.[A-Za-z]+' "$RA_SRCDIR/common/ra-dbus.h" | sort -u)
covers org.radaemon.ReadAhead1.5 "${names[@]}" "${errors[@]}" org.radaemon.ReadAhead1.Manager \
	org.radaemon.ReadAhead1.Device org.freedesktop.DBus.Error.AccessDenied org.radaemon.ReadAhead1.manage
ra_ok "every D-Bus method, property and error: ${#names[@]} names, ${#errors[@]} errors"

mapfile -t props < <(grep -ohE '"RADAEMON_[A-Z_]+"' "$RA_SRCDIR/common/ra-device.c" | tr -d '"' | sort -u)
((${#props[@]} == 6)) || ra_fail "expected 6 RADAEMON_* properties in common/ra-device.c, found ${props[*]}"
covers radaemon.8 "${props[@]}"
covers radaemon-udev.8 "${props[@]}" RADAEMON_FIRST_KB RADAEMON_SOURCE 60-radaemon-local.rules
ra_ok "every udev property, in radaemon(8) and radaemon-udev(8)"

mapfile -t sources < <(grep -oE '\[RA_SOURCE_[A-Z]+\] = "[a-z]+"' "$RA_SRCDIR/common/ra-policy.c" | sed 's/.*"\(.*\)"/\1/')
((${#sources[@]} == 8)) || ra_fail "expected 8 sources in common/ra-policy.c, found ${sources[*]}"
mapfile -t workloads < <(grep -oE '\[RA_WORKLOAD_[A-Z]+\] = "[a-z]+"' "$RA_SRCDIR/common/ra-adapt.c" | sed 's/.*"\(.*\)"/\1/')
((${#workloads[@]} == 4)) || ra_fail "expected 4 workloads in common/ra-adapt.c, found ${workloads[*]}"
for page in radaemon.8 racontrol.1 org.radaemon.ReadAhead1.5; do
	covers "$page" "${sources[@]}" "${workloads[@]}"
done
ra_ok "every source (${sources[*]}) and workload (${workloads[*]})"

# What a Device object is (Kind), which file system a bdi serves (Transport,
# racontrol's KIND column), and the identities a bdi's pins are kept under.
mapfile -t kinds < <(grep -oE '\[RA_KIND_[A-Z]+\] = "[a-z]+"' "$RA_SRCDIR/daemon/ra-disk.c" | sed 's/.*"\(.*\)"/\1/')
((${#kinds[@]} == 3)) || ra_fail "expected 3 kinds in daemon/ra-disk.c, found ${kinds[*]}"
mapfile -t bdi_kinds < <(grep -oE '\[RA_BDI_[A-Z]+\] = "[a-z]+"' "$RA_SRCDIR/common/ra-bdi.c" | sed 's/.*"\(.*\)"/\1/')
((${#bdi_kinds[@]} == 5)) || ra_fail "expected 5 bdi kinds in common/ra-bdi.c, found ${bdi_kinds[*]}"
mapfile -t identities < <(grep -oE 'asprintf\(ret, "[a-z]+:' "$RA_SRCDIR/common/ra-bdi.c" | sed 's/.*"//')
((${#identities[@]} == 4)) || ra_fail "expected 4 bdi identities in common/ra-bdi.c, found ${identities[*]}"
covers org.radaemon.ReadAhead1.5 "${kinds[@]}" "${bdi_kinds[@]}" "${identities[@]}"
covers racontrol.1 "${kinds[@]}" "${bdi_kinds[@]}"
covers radaemon.8 "${bdi_kinds[@]}" "${identities[@]}"
ra_ok "every kind (${kinds[*]}), bdi kind (${bdi_kinds[*]}) and bdi identity (${identities[*]})"

mapfile -t state_keys < <(grep -ohE 'strncmp\(word, "[a-z_]+=",' "$RA_SRCDIR"/common/ra-state*.c | sed 's/.*"\(.*\)",/\1/')
((${#state_keys[@]} >= 3)) || ra_fail "cannot read the keys of the state file from common/ra-state*.c"
covers radaemon.8 "${state_keys[@]}"
mapfile -t environment < <(grep -ohE 'getenv\("[A-Z_]+"\)' "$RA_SRCDIR"/daemon/*.c | sed 's/getenv("\(.*\)")/\1/' | sort -u)
((${#environment[@]} >= 2)) || ra_fail "cannot read the environment variables from daemon/*.c"
covers radaemon.8 "${environment[@]}"
ra_ok "every state file key (${state_keys[*]}) and environment variable (${environment[*]}) in radaemon(8)"

mapfile -t json < <({
	grep -ohE 'json_key\("[a-z_]+"' "$RA_SRCDIR"/racontrol/*.c | sed 's/json_key("\(.*\)"/\1/'
	grep -ohE '\\"[a-z_]+\\":' "$RA_SRCDIR"/racontrol/*.c | sed 's/\\"//g; s/:$//'
} | sort -u)
((${#json[@]} >= 20)) || ra_fail "cannot read the JSON keys from racontrol/*.c"
quoted=()
for key in "${json[@]}"; do
	quoted+=("\"$key\"")
done
covers racontrol.1 "${quoted[@]}"
ra_ok "every key of racontrol's JSON: ${#json[@]} keys"
