#!/usr/bin/env python3
"""Two builds of ``pocket-tts-cli`` side by side (interleaved rounds) on the engine and on
``generate``, with the Python reference's single stream in the same rounds: audio seconds
per second of ``bench-streams`` (1 and 8 streams by default), of ``generate`` (one stream,
the direct path) and of the reference (``scripts/bench/reference_stats.py``).

    python3 scripts/bench/engine_ab.py --cli-a BASE_CLI --cli-b NEW_CLI \
        --checkpoint /tmp/pocket-tts-parity/checkpoint --venv /tmp/venv-ref \
        [--rounds 3] [--streams 1,8] [--quantize] [--out report.md]

Each round runs the reference once, then for each build ``generate`` and
``bench-streams``; the order of the three runs alternates from round to round so that a
change of load hits both builds alike. EOS is disabled (``--eos-threshold 1e9``), temperature
0, the text and voice of ``streams_vs_python.py``. Prints medians with min-max.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from streams_vs_python import TEXT, cpu_name, run_reference, spread  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def common(ckpt: Path, voice: Path, quantize: bool) -> list:
    return [
        "--config", str(ckpt / "config.yaml"),
        "--voice", str(voice),
        "--text", TEXT,
        "--temperature", "0",
        "--eos-threshold", "1e9",
    ] + (["--quantize"] if quantize else [])


def run_generate(cli: Path, ckpt: Path, voice: Path, quantize: bool, tmp: Path) -> float:
    out = tmp / "gen.json"
    cmd = [str(cli), "generate"] + common(ckpt, voice, quantize) + [
        "--output-path", str(tmp / "gen.wav"), "--stats-json", str(out)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = json.loads(out.read_text())
    return d["audio_ms"] / d["generation_ms"]


def run_streams(cli: Path, ckpt: Path, voice: Path, quantize: bool, streams: str,
                tmp: Path) -> dict:
    out = tmp / "streams.json"
    cmd = [str(cli), "bench-streams"] + common(ckpt, voice, quantize) + [
        "--streams", streams, "--stats-json", str(out)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = json.loads(out.read_text())
    rows = d["results"] if isinstance(d, dict) and "results" in d else d
    return {r["streams"]: r["audio_s_per_s"] for r in rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli-a", type=Path, required=True, help="the build before")
    ap.add_argument("--cli-b", type=Path, required=True, help="the build after")
    ap.add_argument("--checkpoint", type=Path, default=Path("/tmp/pocket-tts-parity/checkpoint"))
    ap.add_argument("--venv", type=Path, default=Path("/tmp/venv-ref"))
    ap.add_argument("--voice", type=Path, default=REPO / "ref.wav")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--streams", default="1,8")
    ap.add_argument("--quantize", action="store_true")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    for what, p in [("--cli-a", a.cli_a), ("--cli-b", a.cli_b),
                    ("--checkpoint", a.checkpoint / "config.yaml"),
                    ("--venv", a.venv / "bin" / "python"), ("--voice", a.voice)]:
        if not p.exists():
            print(f"engine_ab.py: {what}: {p} does not exist", file=sys.stderr)
            return 2
    counts = [int(c) for c in a.streams.split(",")]
    res: dict = {"reference": []}
    for b in ("a", "b"):
        res[f"{b} generate"] = []
        for c in counts:
            res[f"{b} {c} streams"] = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for r in range(a.rounds):
            jobs = ["ref", "a", "b"]
            if r % 2:
                jobs.reverse()
            for j in jobs:
                if j == "ref":
                    ref = run_reference(a.venv, a.checkpoint, a.voice, a.quantize, tmp)
                    res["reference"].append(ref["audio_s_per_s"])
                    continue
                cli = a.cli_a if j == "a" else a.cli_b
                res[f"{j} generate"].append(run_generate(cli, a.checkpoint, a.voice,
                                                         a.quantize, tmp))
                per = run_streams(cli, a.checkpoint, a.voice, a.quantize, a.streams, tmp)
                for c in counts:
                    res[f"{j} {c} streams"].append(per[c])
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in res.items()),
                  file=sys.stderr)
    ref = statistics.median(res["reference"])
    fmt = "`--quantize`" if a.quantize else "f32"
    lines = [
        f"CPU: {cpu_name()}; {fmt}; {a.rounds} rounds, interleaved; audio s per s, "
        "median (min-max); A = " + str(a.cli_a) + ", B = " + str(a.cli_b),
        "",
        "| run | audio s per s | × reference |",
        "|---|---|---|",
    ]
    for k, v in res.items():
        lines.append(f"| {k} | {spread(v)} | {statistics.median(v) / ref:.2f} |")
    report = "\n".join(lines)
    print(report)
    if a.out:
        a.out.write_text(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
