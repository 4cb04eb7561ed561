#!/usr/bin/env python3
"""Interleaved A/B of two pocket-tts-cli binaries on one checkpoint (before/after figures
for OPTIMIZATION_LOG.md).

    python3 scripts/bench/ab_cli.py --a /tmp/bin/base --b /tmp/bin/new \
        --checkpoint /tmp/pocket-tts-bench/checkpoint --rounds 5

Each round runs, for A then B (B then A on even rounds):
  * steady: `generate` of the medium text with voice ref.wav, EOS disabled, --stats-json
    (RTF, FlowLM step, Mimi frame, text prefill, first audio, peak RSS, model load);
  * voice: `generate` of "Hello." with voice speech/jfk_16k.wav (voice_ms: read,
    resample, Mimi encode, FlowLM prompt);
  * first: `stream --measure-first-chunk --runs 5` of the short text (p50 of the runs);
  * audio: `generate` of issue 26's text with voice ref.wav (8.5 s): the peak RSS of an
    audio voice (issue 26's memory case) and its voice_ms;
  * state: `generate` of "Hello." with a voice state (ref.wav exported once by binary A
    before the rounds): the memory of a model that never encodes audio (peak RSS, and
    `load_peak_rss_mb`, right after the load, where the binary reports it).
--kinds picks some of them (e.g. `--kinds state,steady` for memory and load time).
--a-args / --b-args add flags to every command of that side, e.g. the same binary
with and without `--quantize`:
    python3 scripts/bench/ab_cli.py --a BIN --b BIN --b-args=--quantize ...
Prints a markdown table: median (min–max) over the rounds and the ratio A / B per metric.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHORT = "Hello world, this is a short test sentence."
MEDIUM = "Hello world. I am Kyutai's Pocket TTS. I hope you'll like me."
# Issue 26's peak-memory case: an audio voice (ref.wav, 8.5 s) and this text.
ISSUE_26 = "Hello world. I am Kyutai's Pocket TTS."


def run(binary: str, args: list[str], ckpt: Path, extra: list[str], temperature: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        js = Path(tmp) / "stats.json"
        cmd = [binary, *args, "--config", str(ckpt / "config.yaml"), "--temperature", temperature,
               "--eos-threshold", "1e9", "-q", "--stats-json", str(js), *extra]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=tmp)
        return json.loads(js.read_text())


def kinds(assets: Path, state: Path) -> dict:
    out = ["--output-path", "out.wav"]
    return {
        "state": ["generate", "--voice", str(state), "--text", "Hello.", *out],
        "steady": ["generate", "--voice", str(REPO / "ref.wav"), "--text", MEDIUM, *out],
        "voice": ["generate", "--voice", str(assets / "speech/jfk_16k.wav"), "--text",
                  "Hello.", *out],
        "audio": ["generate", "--voice", str(REPO / "ref.wav"), "--text", ISSUE_26, *out],
        "first": ["stream", "--voice", str(REPO / "ref.wav"), "--text", SHORT,
                  "--measure-first-chunk", "--runs", "5"],
    }


METRICS = [
    ("steady", "RTF, medium text (ref.wav, 134 frames)", lambda d: d["rtf"], 3),
    ("steady", "FlowLM step p50 (ms)", lambda d: d["lm_step_ms"]["p50"], 1),
    ("steady", "Mimi frame p50 (ms)", lambda d: d["decode_frame_ms"]["p50"], 1),
    ("steady", "text prefill, medium text (ms)", lambda d: d["prefill_ms"], 1),
    ("first", "time to first audio, short text, p50 of 5 runs (ms)",
     lambda d: d["first_chunk_ms"]["p50"], 1),
    ("voice", "voice prompt jfk_16k.wav 11 s (ms)", lambda d: d["voice_ms"], 0),
    ("audio", "peak RSS, audio voice ref.wav + issue 26's text (MiB)",
     lambda d: d["peak_rss_mb"], 1),
    ("audio", "voice prompt ref.wav 8.5 s (ms)", lambda d: d["voice_ms"], 0),
    ("steady", "model load (ms)", lambda d: d["load_ms"], 0),
    ("steady", "peak RSS (MiB)", lambda d: d["peak_rss_mb"], 0),
    ("state", "peak RSS, voice state + \"Hello.\" (MiB)", lambda d: d["peak_rss_mb"], 0),
    ("state", "peak RSS right after load (MiB)", lambda d: d.get("load_peak_rss_mb"), 0),
    ("state", "model load, voice state run (ms)", lambda d: d["load_ms"], 0),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, help="binary A (before)")
    ap.add_argument("--b", required=True, help="binary B (after)")
    ap.add_argument("--checkpoint", required=True, type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--temperature", default="0",
                    help="--temperature of every run (default 0: no sampling noise; above 0 "
                         "the noise is drawn every frame, add --seed in --a-args/--b-args)")
    ap.add_argument("--a-args", default="", help="extra flags of A (space-separated)")
    ap.add_argument("--b-args", default="", help="extra flags of B (space-separated)")
    ap.add_argument("--assets", type=Path,
                    default=Path(os.environ.get("POCKET_TTS_ASSETS", REPO.parent / "shared/assets")))
    ap.add_argument("--kinds", default="state,steady,voice,first",
                    help="comma-separated run kinds (default: state,steady,voice,first; "
                         "also audio); "
                         "metrics of the kinds left out are not printed")
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    state = Path(tmp.name) / "ref.safetensors"
    subprocess.run([args.a, "export-voice", str(REPO / "ref.wav"), str(state), "-q",
                    "--config", str(args.checkpoint / "config.yaml")], check=True)
    wanted = [k.strip() for k in args.kinds.split(",") if k.strip()]
    ks = {k: v for k, v in kinds(args.assets, state).items() if k in wanted}
    unknown = sorted(set(wanted) - set(kinds(args.assets, state)))
    if unknown or not ks:
        ap.error(f"--kinds: unknown kind(s) {unknown or wanted}; use state, steady, voice, "
                 "first, audio")
    res = {"a": {k: [] for k in ks}, "b": {k: [] for k in ks}}
    for r in range(args.rounds):
        order = ["a", "b"] if r % 2 == 0 else ["b", "a"]
        for kind, kargs in ks.items():
            for tool in order:
                binary = args.a if tool == "a" else args.b
                extra = (args.a_args if tool == "a" else args.b_args).split()
                res[tool][kind].append(run(binary, kargs, args.checkpoint, extra, args.temperature))
        print(f"round {r + 1}/{args.rounds} done", flush=True)
    print(f"\nA = `{args.a} {args.a_args}`, B = `{args.b} {args.b_args}`, "
          f"{args.rounds} interleaved rounds; "
          f"median (min–max); ratio A / B (> 1: B faster or smaller)\n")
    print("| metric | A | B | A / B |")
    print("|---|---|---|---|")
    for kind, label, fn, dg in METRICS:
        if kind not in ks:
            continue
        va = [fn(d) for d in res["a"][kind]]
        vb = [fn(d) for d in res["b"][kind]]
        if None in va or None in vb:
            # A figure one binary does not report (an older build).
            fmt = lambda v: "n/a" if None in v else f"{statistics.median(v):.{dg}f}"
            print(f"| {label} | {fmt(va)} | {fmt(vb)} | |")
            continue
        ma, mb = statistics.median(va), statistics.median(vb)
        ratios = sorted(x / y for x, y in zip(va, vb))
        print(f"| {label} | {ma:.{dg}f} ({min(va):.{dg}f}–{max(va):.{dg}f}) | "
              f"{mb:.{dg}f} ({min(vb):.{dg}f}–{max(vb):.{dg}f}) | "
              f"{ma / mb:.2f} (per round {ratios[0]:.2f}–{ratios[-1]:.2f}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
