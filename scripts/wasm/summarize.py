#!/usr/bin/env python3
"""Summarizes scripts/wasm/measure.sh's output (stdin or a file): per voice and per side
(native, each page build), the median and min-max of the time to first audio and its
parts, the RTF, the load and voice times, and the page's sizes and memory.

    scripts/wasm/measure.sh CKPT 2 DIST... | tee measure.log
    scripts/wasm/summarize.py measure.log
"""

import json
import re
import statistics
import sys
from collections import defaultdict


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    med = statistics.median(values)
    fmt = (lambda v: f"{v:.3f}") if max(values) < 10 else (lambda v: f"{v:.0f}")
    return f"{fmt(med)} ({fmt(min(values))}-{fmt(max(values))}, n={len(values)})"


def main():
    text = open(sys.argv[1]).read() if len(sys.argv) > 1 else sys.stdin.read()
    groups = defaultdict(lambda: defaultdict(list))
    side = None
    for line in text.splitlines():
        m = re.match(r"# round \d+, voice (\S+): (native|headless Chromium, (\S+))", line)
        if m:
            side = (m.group(1), m.group(3) or "native")
            continue
        if line.startswith("#"):
            print(line)
            continue
        if not line.startswith("{") or side is None:
            continue
        d = json.loads(line)
        g = groups[side]
        for k, v in d.items():
            if isinstance(v, dict):
                for k2, v2 in v.items():
                    g[f"{k}.{k2}"].append(v2)
            elif isinstance(v, (int, float)):
                g[k].append(v)
    for (voice, who), g in sorted(groups.items()):
        print(f"== voice {voice}, {who}")
        for k in sorted(g):
            print(f"   {k}: {spread(g[k])}")


if __name__ == "__main__":
    main()
