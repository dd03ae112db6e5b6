#!/usr/bin/env python3
"""Merges the runs of a suite done class by class, and compares each cell
under the device model with the same cell under the old throttle.

  compare.py merge OUT.json RUN.json...        one results file of many runs
  compare.py compare MODEL.json THROTTLE.json  a Markdown table on stdout
  compare.py users OLD.json NEW.json           two --user runs (run.py or fs.py), cell by cell

The comparison shows per cell the oracle (the best fixed window) and the
kernel default's score (default / oracle) under both emulations, and what
radaemon chose and scored, so a reader sees which conclusions were the
throttle's.
"""
import json
import math
import sys

import report
import users

# The model class each throttled class stood for.
THROTTLED_NAME = {"hdd-7200": "hdd", "ssd-ctrl": "ssd-ctrl", "usb-stick": "usb-stick",
                  "tiny-stick": "tiny-stick"}


def merge(out, paths):
    runs = [json.load(open(p)) for p in paths]
    data = runs[0]
    for r in runs[1:]:
        data["classes"].update(r["classes"])
        data["workloads"].update(r["workloads"])
        data["cells"] += r["cells"]
        data["duration_s"] += r["duration_s"]
    data["command"] = " + ".join(r["command"] for r in runs)
    data["machine"]["load_end"] = runs[-1]["machine"].get("load_end", "?")
    with open(out, "w") as f:
        json.dump(data, f, indent=1)


def cell_summary(data):
    out = {}
    for cell in data["cells"]:
        a = report.analyse(cell, data["classes"])
        if "oracle" not in a:
            continue
        default = a.get("default")
        higher = a["higher"]
        o = a["oracle"][1]["median"]
        d = default[1]["median"] if default else math.nan
        score = (d / o if higher else o / d) if default and o and d else math.nan
        rad = a.get("radaemon")
        out[(cell["class"], cell["workload"])] = {
            "oracle_kb": a["oracle"][0], "oracle": o, "unit": a["unit"], "default_score": score,
            "radaemon_kb": rad[0] if rad else None, "vs_oracle": a.get("vs_oracle")}
    return out


def compare(model_path, throttle_path):
    model, throttle = (json.load(open(p)) for p in (model_path, throttle_path))
    m, t = cell_summary(model), cell_summary(throttle)
    rows = ["| cell | oracle, model | oracle, throttle | default/oracle, model | "
            "default/oracle, throttle | radaemon, model | radaemon, throttle |",
            "|---|---|---|---|---|---|---|"]
    for (cls, wl), mc in m.items():
        tc = t.get((THROTTLED_NAME.get(cls, cls), wl))

        def fmt_oracle(c):
            return f"{report.kb_label(c['oracle_kb'])}: {report.fmt(c['oracle'], c['unit'])} {c['unit']}"

        def fmt_rad(c):
            if c["radaemon_kb"] is None:
                return "–"
            return f"{report.kb_label(c['radaemon_kb'])}, {c['vs_oracle']:.2f}"
        rows.append(f"| {cls}/{wl} | {fmt_oracle(mc)} | {fmt_oracle(tc) if tc else '–'} | "
                    f"{mc['default_score']:.2f} | {tc['default_score']:.2f} | " if tc else
                    f"| {cls}/{wl} | {fmt_oracle(mc)} | – | {mc['default_score']:.2f} | – | ")
        rows[-1] += f"{fmt_rad(mc)} | {fmt_rad(tc) if tc else '–'} |"
    print("\n".join(rows))


def compare_users(old_path, new_path):
    """Two user-suite results side by side: per cell and start mode the worst
    first run and the worst runs 2-5 over the iterations, each against its
    own invocation's oracle; then the geometric means' range."""
    (old, old_means, old_its), (new, new_means, new_its) = (
        users.analyse(json.load(open(p))["cells"]) for p in (old_path, new_path))

    def worst(row, which):
        xs = [v[which] for v in row["by_iteration"].values() if v[which] is not None]
        return f"{min(xs):.2f}" if xs else "–"
    rows = ["| cell | mode | old worst first | new worst first | old worst 2-5 | new worst 2-5 |",
            "|---|---|---|---|---|---|"]
    for key in sorted(set(old) | set(new)):
        o, n = old.get(key), new.get(key)
        rows.append(f"| {key[0]} | {key[1]} | " + " | ".join(
            worst(r, w) if r else "–" for w in ("first", "rest") for r in (o, n)) + " |")
    rows += ["", "| mode | score | old geometric means | new geometric means |", "|---|---|---|---|"]
    for start in users.START_MODES:
        for which in ("first", "run2", "rest"):
            o = [users.fmt(old_means.get((i, start, which))) for i in old_its]
            n = [users.fmt(new_means.get((i, start, which))) for i in new_its]
            if set(o + n) - {"-"}:
                rows.append(f"| {start} | {which} | {', '.join(o)} | {', '.join(n)} |")
    print("\n".join(rows))


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "merge":
        merge(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "users":
        compare_users(sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
