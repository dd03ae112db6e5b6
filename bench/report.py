"""The report: a Markdown file and one gnuplot PNG per device class.

Everything here works from the results JSON alone, so a report can be
re-rendered (run.py --report-only FILE.json) without measuring again.
"""
import math
import os
import statistics
import subprocess

# The targets the adaptive policy (later work) must reach; shown, not enforced.
TARGET_CELL, TARGET_GEOMEAN, TARGET_VS_DEFAULT, TARGET_PROBE_KIB = 0.90, 0.95, 0.95, 24
TARGET_DECISION_S = 10
SEQUENTIAL = ("seq", "pdd-single", "pdd-multi")


def stats(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def fmt(x, unit):
    if unit == "MB/s":
        return f"{x:.3g}" if x < 100 else f"{x:.0f}"
    return f"{x:.0f}"


def fmt_spread(s, unit):
    if s["min"] == s["max"]:
        return fmt(s["median"], unit)
    return f"{fmt(s['median'], unit)} [{fmt(s['min'], unit)}–{fmt(s['max'], unit)}]"


def kb_label(kb):
    return f"{kb // 1024} MiB" if kb >= 1024 and kb % 1024 == 0 else f"{kb} KiB"


def analyse(cell, classes):
    """Medians, oracle and ratios of one cell."""
    unit, higher = cell["unit"], cell["higher_is_better"]
    better = max if higher else min
    points = {int(kb): stats([r["score"] for r in runs]) for kb, runs in cell["points"].items()}
    cls = classes[cell["class"]]
    out = {"points": points, "unit": unit, "higher": higher}
    if "sweep" in cell["modes"] and points:
        kb = better(points, key=lambda k: points[k]["median"])
        out["oracle"] = (kb, points[kb])
    if "default" in cell["modes"]:
        out["default"] = (cls["kernel_kb"], points[cls["kernel_kb"]])
    if "4mib" in cell["modes"]:
        out["4mib"] = (4096, points[4096])
    if cell["radaemon"]:
        runs = cell["radaemon"]
        kbs = [r["kb_at_open"] for r in runs]
        out["radaemon"] = (statistics.mode(kbs), stats([r["score"] for r in runs]))
        out["radaemon_kbs"] = sorted(set(kbs))

    def ratio(a, b):  # how good a is relative to b: 1.0 = as good, below = worse
        a, b = a[1]["median"], b[1]["median"]
        if higher:
            return a / b if b else math.nan
        return b / a if a else (1.0 if b == 0 else math.nan)

    if "radaemon" in out and "oracle" in out:
        out["vs_oracle"] = ratio(out["radaemon"], out["oracle"])
    if "radaemon" in out and "default" in out:
        out["vs_default"] = ratio(out["radaemon"], out["default"])
    if "radaemon" in out and "4mib" in out:
        out["vs_4mib"] = ratio(out["radaemon"], out["4mib"])
    return out


def geomean(xs):
    xs = [x for x in xs if x and not math.isnan(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else math.nan


# --- Markdown ----------------------------------------------------------------

def results_table(data, analysed):
    unit_note = {"MB/s": "MB/s", "IOPS": "IOPS", "KiB": "KiB read, lower is better"}
    lines = ["| class | workload | unit | oracle value | oracle | default | 4 MiB | "
             "radaemon value | radaemon | radaemon / oracle | radaemon / default |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for cell, a in zip(data["cells"], analysed):
        u = a["unit"]

        def col(key):
            return fmt_spread(a[key][1], u) if key in a else "–"

        rkb = "–"
        if "radaemon" in a:
            rkb = ", ".join(str(k) for k in a["radaemon_kbs"])
        row = [cell["class"], cell["workload"], unit_note[u],
               str(a["oracle"][0]) if "oracle" in a else "–", col("oracle"),
               f"{col('default')} ({a['default'][0]})" if "default" in a else "–",
               col("4mib"), rkb, col("radaemon"),
               f"{a['vs_oracle']:.2f}" if "vs_oracle" in a else "–",
               f"{a['vs_default']:.2f}" if "vs_default" in a else "–"]
        lines.append("| " + " | ".join(row) + " |")
    ratios = [a["vs_oracle"] for a in analysed if "vs_oracle" in a]
    if ratios:
        lines.append("")
        lines.append(f"Geometric mean of radaemon / oracle over {len(ratios)} cells: "
                     f"**{geomean(ratios):.3f}**.")
    return lines


def targets(data, analysed):
    vs_oracle = [(c, a["vs_oracle"]) for c, a in zip(data["cells"], analysed) if "vs_oracle" in a]
    vs_default = [(c, a["vs_default"]) for c, a in zip(data["cells"], analysed)
                  if "vs_default" in a]
    probes = [a["radaemon"][1]["median"] for c, a in zip(data["cells"], analysed)
              if c["class"] == "tiny-stick" and c["workload"] == "probe" and "radaemon" in a]
    if not vs_oracle and not vs_default:
        return []

    def verdict(ok):
        return "met" if ok else "**not met**"

    def cells(pairs):
        return ", ".join(f"{c['class']}/{c['workload']} {r:.2f}" for c, r in pairs) or "none"

    low = [(c, r) for c, r in vs_oracle if r < TARGET_CELL]
    worse = [(c, r) for c, r in vs_default if r < TARGET_VS_DEFAULT]
    costly_seq = [(c, a["vs_default"]) for c, a in zip(data["cells"], analysed)
                  if "vs_default" in a and c["workload"] in SEQUENTIAL
                  and data["classes"][c["class"]].get("costly")]
    not_better = [(c, r) for c, r in costly_seq if r <= 1.0]
    vs_4mib = [(c, a["vs_4mib"]) for c, a in zip(data["cells"], analysed)
               if "vs_4mib" in a and c["workload"] == "mmap-rand"]
    times = [t for c in data["cells"] for t in decision_times(c)]
    g = geomean([r for _, r in vs_oracle])
    lines = ["| target | result | verdict |", "|---|---|---|"]
    if vs_oracle:
        lines.append(f"| every cell ≥ {TARGET_CELL:.2f} of the oracle | below: {cells(low)} "
                     f"| {verdict(not low)} |")
        lines.append(f"| geometric mean ≥ {TARGET_GEOMEAN:.2f} | {g:.3f} "
                     f"| {verdict(g >= TARGET_GEOMEAN)} |")
    if vs_default:
        lines.append(f"| no cell more than 5 % worse than the kernel default | worse: "
                     f"{cells(worse)} | {verdict(not worse)} |")
    if costly_seq:
        lines.append(f"| better than the kernel default on the sequential cells of the "
                     f"costly-command devices | not better: {cells(not_better)} "
                     f"| {verdict(not not_better)} |")
    if vs_4mib:
        lines.append(f"| better than a fixed 4 MiB on the random mmap cells | "
                     f"{cells(vs_4mib)} | {verdict(all(r > 1.0 for _, r in vs_4mib))} |")
    if times:
        lines.append(f"| a decision within {TARGET_DECISION_S} s of a sustained workload | "
                     f"first learned value after {statistics.median(times):.1f} s median, "
                     f"{max(times):.1f} s at most ({len(times)} runs) "
                     f"| {verdict(max(times) <= TARGET_DECISION_S)} |")
    if probes:
        lines.append(f"| tiny stick probe reads ≤ {TARGET_PROBE_KIB} KiB | {probes[0]:.0f} KiB "
                     f"| {verdict(probes[0] <= TARGET_PROBE_KIB)} |")
    return lines


def sweep_tables(data, analysed):
    """Per class: every fixed value's median [min–max], one column per workload."""
    lines = []
    for cname in data["classes"]:
        cells = [(c, a) for c, a in zip(data["cells"], analysed) if c["class"] == cname]
        if not cells:
            continue
        kbs = sorted({kb for _, a in cells for kb in a["points"]})
        units = ", ".join(f"{c['workload']} in {a['unit']}" for c, a in cells)
        lines += ["", f"**{cname}** ({units})",
                  "", "| read_ahead_kb | " + " | ".join(c["workload"] for c, _ in cells) + " |",
                  "|---:|" + "---:|" * len(cells)]
        for kb in kbs:
            row = []
            for _, a in cells:
                s = a["points"].get(kb)
                mark = " ★" if "oracle" in a and a["oracle"][0] == kb else ""
                row.append(fmt_spread(s, a["unit"]) + mark if s else "")
            lines.append(f"| {kb} | " + " | ".join(row) + " |")
    return lines


def timeline_text(r):
    """"128 KiB, 512 KiB at 3.1 s, ...": the values of one run, from the training's start."""
    steps = r.get("timeline") or [(0, r["kb_at_open"])]
    return ", ".join(f"{kb} KiB" + (f" at {t:.1f} s" if t > 0 else "") for t, kb in steps)


def decision_times(cell):
    return [r["decision_s"] for r in cell["radaemon"] if r.get("decision_s") is not None]


def decisions(data):
    """Per cell: the values of each run over time, and the first run's reasons."""
    lines = []
    for cell in data["cells"]:
        runs = cell["radaemon"]
        if not runs:
            continue
        lines.append(f"- **{cell['class']}/{cell['workload']}**: "
                     + "; ".join(f"run {i + 1}: {timeline_text(r)}" for i, r in enumerate(runs)))
        for d in runs[0]["decisions"]:
            if "read_ahead_kb" in d:
                lines.append(f"  - `{d}`")
    return lines


def overhead_markdown(o):
    lines = []
    if "hotplug" in o:
        lines += ["Hotplug: from udevd's event to the value read back from sysfs "
                  "(an upper bound: our own polling counts against radaemon).", "",
                  "| event | n | median | p90 | max |", "|---|---:|---:|---:|---:|"]
        for kind, r in o["hotplug"].items():
            lines.append(f"| {kind} | {r['n']} | {r['median']:.2f} ms | {r['p90']:.2f} ms "
                         f"| {r['max']:.2f} ms |")
        lines.append("")
    if "rss" in o:
        lines += ["Idle memory:", "", "| devices | VmRSS | anon | file | peak |",
                  "|---:|---:|---:|---:|---:|"]
        for r in o["rss"]:
            lines.append(f"| {r['devices']} | {r['VmRSS_KiB']} KiB | {r['RssAnon_KiB']} KiB "
                         f"| {r['RssFile_KiB']} KiB | {r['VmHWM_KiB']} KiB |")
        lines.append("")
    if "cpu" in o:
        c = o["cpu"]
        lines += [f"Daemon CPU, sampling every {c['interval_ms']} ms, over {c['window_s']} s "
                  "(busy: every device reads 4 KiB O_DIRECT requests at the rate shown; "
                  "the reader's own CPU is not counted):", "",
                  "| devices | traced | load | daemon CPU | share of one core |",
                  "|---:|---|---|---:|---:|"]
        for r in c["rows"]:
            traced = "yes" if r.get("traced") else "no"
            lines.append(f"| {r['devices']} | {traced} | idle | {r['cpu_ms_per_s']:.3f} ms/s "
                         f"| {r['cpu_ms_per_s'] / 10:.3f} % |")
            for b in r.get("busy", []):
                lines.append(f"| {r['devices']} | {traced} | {b['requests_per_s']:.0f} requests/s "
                             f"| {b['cpu_ms_per_s']:.3f} ms/s | {b['core_percent']:.3f} % |")
        if c["available"]:
            lines.append("")
            lines.append(f"Per busy device and sample: **{c['us_per_device_sample']:.1f} µs**.")
        else:
            lines.append("")
            lines.append(f"Per sampled device: **not available**: {c['why']}.")
        lines.append("")
    if "status" in o:
        s = o["status"]
        if s["available"]:
            lines += ["`racontrol status` latency:", "", "| devices | calls | median | p90 | max |",
                      "|---:|---:|---:|---:|---:|"]
            for r in s["rows"]:
                lines.append(f"| {r['devices']} | {r['n']} | {r['median']:.1f} ms "
                             f"| {r['p90']:.1f} ms | {r['max']:.1f} ms |")
        else:
            lines.append(f"`racontrol status` latency: **not available**: {s['why']}.")
        lines.append("")
    if "tracing" in o:
        lines += tracing_markdown(o["tracing"])
    if "coldplug" in o:
        lines += ["Coldplug: from exec to READY=1, every device to be written (2560 -> 4 KiB):",
                  "", "| devices | runs | median | min–max |", "|---:|---:|---:|---:|"]
        for r in o["coldplug"]:
            lines.append(f"| {r['devices']} | {r['n']} | {r['median']:.1f} ms "
                         f"| {r['min']:.1f}–{r['max']:.1f} ms |")
        lines.append("")
    if "openfiles" in o:
        lines += openfiles_markdown(o["openfiles"])
    return lines


def openfiles_markdown(t):
    """overhead.py openfiles: following a new window with many descriptors open."""
    if not t["available"]:
        return [f"Open files: **not available**: {t['why']}.", ""]
    lines = ["Open files followed: a reader holding N descriptors faults at random in a file opened "
             "at a 1024 KiB pin; racontrol set 16 (ext4 on a loop device over /dev/shm):", "",
             "| descriptors | run | followed | looked at | follow (daemon's timing) | steps "
             "| daemon CPU, 1 s | racontrol set | VmRSS |", "|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in t["rows"]:
        follow = f"{r['follow_ms']:.1f} ms" if "follow_ms" in r else "–"
        steps = (f"{r['steps']}, {r['follow_ms'] / r['steps']:.0f} ms each on average, over "
                 f"{r['elapsed_ms']:.0f} ms") if "steps" in r else "1"
        lines.append(f"| {r['descriptors']} | {r['run']} | {'yes' if r['followed'] else 'no'} "
                     f"| {r.get('scanned', 0)} | {follow} | {steps} | {r['daemon_cpu_ms']:.1f} ms "
                     f"| {r['set_ms']:.1f} ms | {r.get('VmRSS_KiB', 0)} KiB |")
    lines.append("")
    return lines


def tracing_markdown(t):
    """overhead.py tracing: the reader and the daemon, without and with tracing."""
    if not t["available"]:
        return [f"Tracing cost: **not available**: {t['why']}.", ""]
    pace = f"paced at {t['rate_mbs']:.0f} MB/s" if t["rate_mbs"] else "as fast as they go"
    lines = [f"Tracing cost: one reader of {t['files']} files of {t['file_mib']} MiB on ext4 over "
             f"{t['device']} (a loop device over a file in /dev/shm), 128 KiB read(2) calls "
             f"{pace}, read_ahead_kb {t['kb']} in both modes (radaemon pinned "
             f"to it), {t['rounds']} blocks of {t['passes']} passes each way, alternating. "
             f"radaemon traced {t.get('evidence', '?')}. CPU per GB read: the reader's user + "
             "system time (the readahead tracepoints fire in its context), the whole machine's "
             "busy time (also the loop device's workers, where requests complete, and whatever "
             "else runs), radaemon's CPU from schedstat (utime + stime from /proc, in clock "
             "ticks, in brackets), including the drain of what the block left (1.5 s after it). "
             "Events: what radaemon's trace instance handed over, and what it lost to a full "
             "buffer (overrun), per GB read.", "",
             "| case | radaemon | MB/s | reader CPU/GB (user+sys) | machine busy CPU/GB "
             "| radaemon CPU/GB | radaemon, share of a core | events/GB | lost |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for case, c in t["cases"].items():
        for mode in ("off", "on"):
            r = c[mode]
            gb = r["bytes"] / 1e9
            if mode == "on":
                seen = r["events"] + r["lost"]
                daemon = (f"{r['daemon_sched_s'] / gb * 1000:.1f} ms ({r['daemon_cpu_s'] / gb * 1000:.0f}) | "
                          f"{r['daemon_sched_s'] / r['seconds'] * 100:.2f} % | "
                          f"{r['events'] / gb:.0f} | {r['lost'] / gb:.0f} "
                          f"({r['lost'] / seen * 100 if seen else 0:.0f} %)")
            else:
                daemon = "– | – | – | –"
            lines.append(f"| {case} | {'tracing' if mode == 'on' else 'not running'} "
                         f"| {r['bytes'] / r['seconds'] / 1e6:.0f} "
                         f"| {(r['utime'] + r['stime']) / gb * 1000:.0f} ms "
                         f"({r['utime'] / gb * 1000:.0f}+{r['stime'] / gb * 1000:.0f}) "
                         f"| {r['machine_busy_s'] / gb * 1000:.0f} ms | {daemon} |")
    lines.append("")
    return lines


def markdown(data, plots):
    m, t = data["machine"], data["timing"]
    classes = data["classes"]
    analysed = [analyse(c, classes) for c in data["cells"]]
    lines = [f"# radaemon benchmark: {m['date']}, Linux {m['kernel']}", "",
             f"{m['radaemon']} at commit {m['commit']}; {data['preset']} run "
             f"(`{data['command']}`), {data['duration_s'] / 60:.1f} minutes.", "",
             "## Machine", "",
             f"- {m['cpu']}, {m['cores']} cores, {m['ram_gib']:.0f} GiB RAM",
             f"- Linux {m['kernel']} ({m['kernel_version']}), Debian {m['debian']}, "
             f"{m['fio']}, Python {m['python']}, cgroup v{m['cgroup']}",
             f"- load average at start {m['load_start']}, at end {m.get('load_end', '?')} "
             "(other work shares this machine)", "",
             "## Results", "",
             f"Each score is the median of {t['repeat']} runs, with [min–max]. A run is "
             f"{t['runtime']} s of the workload (the probe: one probe) in a new process that "
             "opens the device afresh, after the device's page cache was dropped. "
             "Scores: MB/s and IOPS, higher is better; the probe's KiB read from the device, "
             "lower is better (its ratios are inverted, so below 1 is always worse). "
             f"The oracle is the best fixed value (sweep: {data['sweep_note']}); "
             "default is the kernel's 128 KiB; 4 MiB is tuned's throughput-performance. "
             f"radaemon: a fresh daemon per run, {t.get('train_runs', 1)} training runs of "
             f"{t['train']} s of the same workload on the same device, each opening it afresh, "
             "then the measured run; \"radaemon value\" is the "
             "read_ahead_kb the measured run opened the device with.", ""]
    lines += results_table(data, analysed)
    tg = targets(data, analysed)
    if tg:
        lines += ["", "### Targets of the adaptive policy", ""]
        lines += tg
    if any(c["radaemon"] for c in data["cells"]):
        lines += ["", "### What radaemon decided", "",
                  "The value in sysfs over time, from the start of the training (polled "
                  "every 20 ms), and the daemon's log lines of the first run:", ""]
        lines += decisions(data)
    lines += ["", "## Score against read_ahead_kb", "",
              "Median [min–max] of every fixed value; ★ marks the oracle."]
    lines += sweep_tables(data, analysed)
    for cname, png in plots.items():
        lines += ["", f"![{cname}]({png})"]
    lines += ["", "## Device classes", "",
              "| class | emulates | size | rotational | read IOPS | read bandwidth | "
              "max_sectors_kb | loop's own read_ahead_kb |",
              "|---|---|---:|---|---:|---:|---:|---:|"]
    for c in classes.values():
        bw = f"{c['bps'] / 1e6:g} MB/s" if c["bps"] else "unthrottled"
        lines.append(f"| {c['class']} | {c['emulates']} | {human_size(c['size'])} | "
                     f"{'yes' if c['rotational'] else 'no'} | {c['iops'] or 'unthrottled'} | "
                     f"{bw} | {c['max_sectors_kb']} | {c['attach_kb']} |")
    lines += ["", "| workload | what | unit | page cache limit |", "|---|---|---|---|"]
    for w in data["workloads"].values():
        limit = f"{w['mem_bytes'] // 2 ** 20} MiB" if w["mem_bytes"] else "none"
        lines.append(f"| {w['name']} | {w['summary']} | {w['unit']} | {limit} |")
    if data.get("overhead"):
        lines += ["", "## Overhead", ""] + overhead_markdown(data["overhead"])
    lines += ["", "## How it was measured", ""] + [f"- {n}" for n in data["notes"]]
    return "\n".join(lines) + "\n"


def human_size(n):
    for unit, size in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n / 1e9:g} GB" if n >= 2 ** 20 else f"{n / 1024:g} KiB"


# --- plots -------------------------------------------------------------------

def multiplot_header(panels, png, title, width, height):
    """gnuplot's first lines for a PNG of panels, each width x height, one
    to three a row, every one against read_ahead_kb on a log scale."""
    cols = 1 if panels == 1 else 2 if panels <= 4 else 3
    rows = math.ceil(panels / cols)
    return [f"set terminal pngcairo noenhanced size {width * cols},{height * rows} font 'sans,9'",
            f"set output '{png}'",
            f"set multiplot layout {rows},{cols} title '{title}'",
            "set logscale x 2", "set xrange [2:16384]", "set grid",
            "set xtics ('4' 4, '16' 16, '64' 64, '256' 256, '1M' 1024, '4M' 4096)",
            "set xlabel 'read_ahead_kb'"]


def run_gnuplot(script, png):
    """Draws png; False where gnuplot is not installed."""
    try:
        p = subprocess.run(["gnuplot"], input=script.encode(), stderr=subprocess.PIPE)
    except FileNotFoundError:
        return False
    if p.returncode != 0:
        raise RuntimeError(f"gnuplot failed on {png}: {p.stderr.decode(errors='replace')}")
    return True


def gnuplot_script(cname, cells, png):
    s = multiplot_header(len(cells), png, f"{cname}: score against read_ahead_kb "
                         "(median and min-max of the runs)", 560, 440)
    s += ["set key below font ',8' spacing 0.9", "set bmargin 7"]
    for i, (cell, a) in enumerate(cells):
        def block(name, pts):
            return ([f"$d{i}_{name} << EOD"] +
                    [f"{kb} {p['median']} {p['min']} {p['max']}" for kb, p in pts] + ["EOD"])

        sweep = sorted(a["points"].items())
        s += block("sweep", sweep)
        plot = [f"$d{i}_sweep using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 0.6 lc rgb '#777777' "
                "title 'fixed value'"]
        style = {"oracle": ("pt 6 ps 2.6 lw 2 lc rgb '#2a9d2a'", "oracle"),
                 "default": ("pt 9 ps 2.4 lc rgb '#1f5fbf'", "kernel default"),
                 "4mib": ("pt 11 ps 1.8 lc rgb '#d08000'", "4 MiB (tuned)"),
                 "radaemon": ("pt 5 ps 1.2 lc rgb '#d02020'", "radaemon")}
        for key, (pt, title) in style.items():
            if key in a:
                kb, p = a[key]
                s += block(key, [(kb, p)])
                plot.append(f"$d{i}_{key} using 1:2:3:4 with yerrorbars {pt} "
                            f"title '{title} ({kb})'")
        better = "higher" if a["higher"] else "lower"
        unit = "KiB read from the device" if a["unit"] == "KiB" else a["unit"]
        s += [f"set title '{cell['workload']}: {unit}, {better} is better'",
              f"set ylabel '{unit}'", "set yrange [0:*]", "plot " + ", ".join(plot)]
    s.append("unset multiplot")
    return "\n".join(s) + "\n"


def plots(data, directory, stem):
    """One PNG per device class; returns {class: file name}, empty without gnuplot."""
    out = {}
    analysed = [analyse(c, data["classes"]) for c in data["cells"]]
    for cname in data["classes"]:
        cells = [(c, a) for c, a in zip(data["cells"], analysed)
                 if c["class"] == cname and a["points"]]
        if not cells:
            continue
        png = f"{stem}-{cname}.png"
        if not run_gnuplot(gnuplot_script(cname, cells, os.path.join(directory, png)), png):
            return {}
        out[cname] = png
    return out
