#!/usr/bin/env python3
"""Interleaved model-load times (and peak RSS) of several ways of loading one model, e.g.
the f32 checkpoint against a pre-quantized one (`export-model`) and quantizing at load:

    python3 scripts/bench/load_ab.py --cli target/release/pocket-tts-cli --rounds 7 \
        --voice /tmp/ref.safetensors \
        'f32=--config /tmp/pocket-tts-parity/checkpoint/config.yaml' \
        'int8 at load=--config /tmp/pocket-tts-parity/checkpoint/config.yaml --quantize int8' \
        'int8 exported=--config /tmp/q/int8.yaml'

Each round runs every variant once (the order rotates each round): `generate --text
Hello.` with the voice state, temperature 0, `--stats-json`; prints a markdown table of
`load_ms` and `peak_rss_mb`, median (min–max) over the rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--voice", required=True, help="a .safetensors voice state")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("variants", nargs="+", help="NAME=FLAGS")
    args = ap.parse_args()
    variants = [v.split("=", 1) for v in args.variants]
    res: dict[str, list[dict]] = {name: [] for name, _ in variants}
    for r in range(args.rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for name, flags in order:
            with tempfile.TemporaryDirectory() as tmp:
                js = Path(tmp) / "stats.json"
                cmd = [args.cli, "generate", *flags.split(), "--voice", args.voice, "--text",
                       "Hello.", "--temperature", "0", "-q", "--output-path",
                       str(Path(tmp) / "out.wav"), "--stats-json", str(js)]
                subprocess.run(cmd, check=True)
                res[name].append(json.loads(js.read_text()))
        print(f"round {r + 1}/{args.rounds} done", flush=True)
    print(f"\n{args.rounds} interleaved rounds; median (min–max)\n")
    print("| variant | model load (ms) | peak RSS (MiB) |")
    print("|---|---|---|")
    for name, _ in variants:
        cells = []
        for key in ("load_ms", "peak_rss_mb"):
            v = [d[key] for d in res[name]]
            cells.append(f"{statistics.median(v):.0f} ({min(v):.0f}–{max(v):.0f})")
        print(f"| {name} | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
