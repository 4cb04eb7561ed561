#!/usr/bin/env python3
"""Line coverage per crate from an lcov file (`cargo llvm-cov --lcov`), with and without the
ISA-specific code this host cannot run.

    cargo llvm-cov --workspace --lcov --output-path target/coverage.lcov
    python3 scripts/dev/coverage.py target/coverage.lcov

Excluded as "ISA paths the host lacks" (and listed): whole files `avx512.rs` / `neon.rs` the
host cannot run, and every function marked `#[target_feature(enable = "avx512...")]` (or
`"neon"`) in other files, found by matching the function's braces. The host's ISA comes from
/proc/cpuinfo (x86_64) or the machine name (aarch64).
"""

from __future__ import annotations

import platform
import re
import sys
from collections import defaultdict
from pathlib import Path


def host_has(isa: str) -> bool:
    if isa == "neon":
        return platform.machine() in ("aarch64", "arm64")
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return re.search(rf"\b{isa}\b", flags) is not None


def lacking() -> list[str]:
    out = []
    if not host_has("avx512f"):
        out.append("avx512")
    if not host_has("neon"):
        out.append("neon")
    return out


def isa_lines(path: Path, isas: list[str]) -> set[int]:
    """1-based lines of functions whose target_feature names one of `isas`."""
    if path.name in {f"{isa}.rs" for isa in isas}:
        return set(range(1, len(path.read_text().splitlines()) + 2))
    lines = path.read_text().splitlines()
    skip: set[int] = set()
    i = 0
    while i < len(lines):
        m = re.search(r'#\[target_feature\(enable\s*=\s*"([^"]+)"', lines[i])
        if m and any(m.group(1).startswith(isa) for isa in isas):
            j = i
            depth = 0
            opened = False
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                opened = opened or "{" in lines[j]
                if opened and depth <= 0:
                    break
                j += 1
            skip.update(range(i + 1, j + 2))
            i = j
        i += 1
    return skip


def main() -> None:
    lcov = Path(sys.argv[1] if len(sys.argv) > 1 else "target/coverage.lcov")
    isas = lacking()
    totals = defaultdict(lambda: [0, 0, 0, 0])  # all: found, hit; without ISA: found, hit
    excluded_files = defaultdict(int)
    current = None
    skip: set[int] = set()
    for line in lcov.read_text().splitlines():
        if line.startswith("SF:"):
            current = Path(line[3:])
            m = re.search(r"crates/([^/]+)/src/", str(current))
            crate = m.group(1) if m else None
            skip = isa_lines(current, isas) if crate else set()
        elif line.startswith("DA:") and current is not None and crate:
            no, count = line[3:].split(",")[:2]
            hit = int(count) > 0
            t = totals[crate]
            t[0] += 1
            t[1] += hit
            if int(no) in skip:
                excluded_files[str(current).split("crates/")[-1]] += 1
            else:
                t[2] += 1
                t[3] += hit
    print(f"host lacks: {', '.join(isas) or 'nothing'}")
    print("| crate | lines | covered | without ISA paths the host lacks |")
    print("|---|---|---|---|")
    for crate, (f, h, f2, h2) in sorted(totals.items()):
        print(f"| {crate} | {f} | {100 * h / f:.1f}% | {100 * h2 / f2:.1f}% ({f2} lines) |")
    if excluded_files:
        print("\nexcluded (ISA paths the host lacks):")
        for name, n in sorted(excluded_files.items()):
            print(f"  {name}: {n} lines")


if __name__ == "__main__":
    main()
