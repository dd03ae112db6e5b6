#!/usr/bin/env python3
# Counts the PropertiesChanged signals that `busctl monitor --json=short`
# wrote to FILE after its line FROM, on object PATH, that carry PROPERTY
# (with VALUE, when given, compared as text). Prints the count.
#
#   props-changed.py FILE FROM PATH PROPERTY [VALUE]
#   props-changed.py --lines FILE    (the number of complete lines now)
#   props-changed.py --dump FILE FROM PATH   (what those signals carried)
import json
import sys


def signals(path, start):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    # The last element is "" after a complete line, or a line busctl is still writing.
    for line in lines[start:-1]:
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("member") != "PropertiesChanged":
            continue
        _, changed, invalidated = msg["payload"]["data"]
        yield msg["path"], changed, invalidated


def main(argv):
    if argv[1] == "--lines":
        with open(argv[2], encoding="utf-8") as f:
            print(f.read().count("\n"))
        return 0
    if argv[1] == "--dump":
        for path, changed, invalidated in signals(argv[2], int(argv[3])):
            if path == argv[4]:
                print({k: v["data"] for k, v in changed.items()}, invalidated or "")
        return 0
    file, start, obj, prop = argv[1], int(argv[2]), argv[3], argv[4]
    value = argv[5] if len(argv) > 5 else None
    n = 0
    for path, changed, _ in signals(file, start):
        if path != obj or prop not in changed:
            continue
        if value is None or str(changed[prop]["data"]) == value:
            n += 1
    print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
