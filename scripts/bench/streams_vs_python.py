#!/usr/bin/env python3
"""Throughput of many concurrent streams (our batched engine, ``pocket-tts-cli
bench-streams``) next to the Python reference's single stream, in the same run, on the same
FULL-size random checkpoint, text and voice; f32 and ``--quantize``.

    python3 scripts/bench/streams_vs_python.py --cli target/release/pocket-tts-cli \
        --checkpoint /tmp/pocket-tts-bench/checkpoint --venv /tmp/venv [--rounds 3] \
        [--streams 1,4,8] [--formats f32,quantize] [--out report.md]

The checkpoint is the one ``scripts/bench/vs_python.sh`` makes
(``scripts/reference/make_checkpoint.py --size full``); the venv has pocket-tts==4.0.1
(``scripts/reference/setup_venv.sh``). Each round runs, per weight format, the reference
once (``scripts/bench/reference_stats.py``: one generation in-process, throughput =
audio_ms / generation_ms) and ours once (``bench-streams --streams ...``: per count, all
streams submitted together; throughput = audio seconds of all streams / wall seconds), the
order alternating between rounds. EOS is disabled (``--eos-threshold 1e9``) so every
stream has the same length; temperature 0. The report gives medians with min-max over the
rounds, the ratios to our single stream and to the reference's, time to first audio p95
and peak RSS per count, and the peak RSS growth per extra stream.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEXT = "Hello world. I am Kyutai's Pocket TTS. I hope you'll like me."


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def run_reference(venv: Path, ckpt: Path, voice: Path, quantize: bool, tmp: Path) -> dict:
    out = tmp / "ref.json"
    cmd = [
        str(venv / "bin" / "python"),
        str(REPO / "scripts/bench/reference_stats.py"),
        "--config", str(ckpt / "config.yaml"),
        "--voice", str(voice),
        "--text", TEXT,
        "--temperature", "0",
        "--eos-threshold", "1e9",
        "--stats-json", str(out),
    ] + (["--quantize"] if quantize else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = json.loads(out.read_text())
    return {
        "audio_s_per_s": d["audio_ms"] / d["generation_ms"],
        "ttfa_ms": d["first_chunk_ms"],
        "peak_rss_mb": d["peak_rss_mb"],
    }


def run_ours(cli: Path, ckpt: Path, voice: Path, quantize: bool, streams: str, tmp: Path) -> list:
    out = tmp / "ours.json"
    cmd = [
        str(cli), "bench-streams",
        "--config", str(ckpt / "config.yaml"),
        "--voice", str(voice),
        "--text", TEXT,
        "--temperature", "0",
        "--eos-threshold", "1e9",
        "--streams", streams,
        "-q",
        "--stats-json", str(out),
    ] + (["--quantize"] if quantize else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())["results"]


def spread(values: list) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", type=Path, default=REPO / "target/release/pocket-tts-cli")
    ap.add_argument("--checkpoint", type=Path, default=Path("/tmp/pocket-tts-bench/checkpoint"))
    ap.add_argument("--venv", type=Path, default=Path(os.environ.get("REFERENCE_VENV", REPO / ".venv-reference")))
    ap.add_argument("--voice", type=Path, default=REPO / "ref.wav")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--streams", default="1,4,8")
    ap.add_argument("--formats", default="f32,quantize")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    for what, p in [("--cli", a.cli), ("--checkpoint", a.checkpoint / "config.yaml"),
                    ("--venv", a.venv / "bin" / "python"), ("--voice", a.voice)]:
        if not p.exists():
            print(f"{what}: {p} does not exist", file=sys.stderr)
            return 2
    formats = [f for f in a.formats.split(",") if f]
    ref = {f: [] for f in formats}
    ours = {f: [] for f in formats}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for r in range(a.rounds):
            for f in formats:
                q = f == "quantize"
                jobs = [("ref", lambda: run_reference(a.venv, a.checkpoint, a.voice, q, tmp)),
                        ("ours", lambda: run_ours(a.cli, a.checkpoint, a.voice, q, a.streams, tmp))]
                if r % 2:
                    jobs.reverse()
                for name, job in jobs:
                    res = job()
                    (ref if name == "ref" else ours)[f].append(res)
                    print(f"round {r + 1} {f} {name}: done", file=sys.stderr)
    lines = [
        f"Machine: {os.cpu_count()} vCPUs, {cpu_name()}; {a.rounds} rounds, order alternating; "
        f"text {TEXT!r}, voice {a.voice.name}, temperature 0, EOS disabled.",
        "",
        "| format | run | audio s per s | × ours 1 stream | × reference | TTFA p95 ms | peak RSS MiB |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in formats:
        ref_tp = [x["audio_s_per_s"] for x in ref[f]]
        counts = [res["streams"] for res in ours[f][0]]
        per = {n: [next(res for res in rnd if res["streams"] == n) for rnd in ours[f]] for n in counts}
        one = statistics.median(x["audio_s_per_s"] for x in per[counts[0]])
        lines.append(
            f"| {f} | reference, 1 stream | {spread(ref_tp)} | | 1 | "
            f"{statistics.median(x['ttfa_ms'] for x in ref[f]):.0f} | "
            f"{statistics.median(x['peak_rss_mb'] for x in ref[f]):.0f} |"
        )
        for n in counts:
            tp = [x["audio_s_per_s"] for x in per[n]]
            lines.append(
                f"| {f} | ours, {n} stream{'s' if n > 1 else ''} | {spread(tp)} | "
                f"{statistics.median(tp) / one:.2f} | {statistics.median(tp) / statistics.median(ref_tp):.2f} | "
                f"{statistics.median(x['ttfa_ms']['p95'] for x in per[n]):.0f} | "
                f"{statistics.median(x['peak_rss_mb'] for x in per[n]):.0f} |"
            )
        if len(counts) > 1:
            lo, hi = counts[0], counts[-1]
            grow = (statistics.median(x["peak_rss_mb"] for x in per[hi])
                    - statistics.median(x["peak_rss_mb"] for x in per[lo])) / (hi - lo)
            lines.append(f"| {f} | peak RSS per extra stream ({lo}→{hi}) | | | | | {grow:.1f} |")
    report = "\n".join(lines) + "\n"
    print(report)
    if a.out:
        a.out.write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
