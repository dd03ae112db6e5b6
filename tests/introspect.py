#!/usr/bin/env python3
"""Compares the running daemon's D-Bus introspection with the XML we ship.

  introspect.py API.xml LIVE.xml INTERFACE

Methods (with argument names, types and directions), signals and properties
(with types and access) of INTERFACE must be the same in both files.
Exits 1 and prints every difference otherwise.
"""
import sys
import xml.etree.ElementTree as ET


def describe(path, interface):
    root = ET.parse(path).getroot()
    for iface in root.iter("interface"):
        if iface.get("name") != interface:
            continue
        members = set()
        for kind in ("method", "signal"):
            for m in iface.findall(kind):
                args = tuple((a.get("name"), a.get("type"), a.get("direction", "in" if kind == "method" else ""))
                             for a in m.findall("arg"))
                members.add((kind, m.get("name"), args))
        for p in iface.findall("property"):
            members.add(("property", p.get("name"), (p.get("type"), p.get("access"))))
        return members
    sys.exit(f"introspect.py: {path} has no interface {interface}")


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    api, live, interface = argv[1:]
    want, have = describe(api, interface), describe(live, interface)
    for m in sorted(want - have, key=str):
        print(f"{interface}: in {api} but not in the daemon: {m}")
    for m in sorted(have - want, key=str):
        print(f"{interface}: in the daemon but not in {api}: {m}")
    sys.exit(0 if want == have else 1)


if __name__ == "__main__":
    main(sys.argv)
