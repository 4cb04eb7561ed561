#!/usr/bin/env python3
"""Interleaved whole-CLI comparison of the FlowLM weight formats of ONE binary: f32,
--dtype bf16, --dtype f16, --quantize, --quantize --dtype bf16 (OPTIMIZATION_LOG.md §16).

    DTYPE_AB_BIN=target/release/pocket-tts-cli \
    DTYPE_AB_CHECKPOINT=/tmp/pocket-tts-bench/checkpoint python3 scripts/bench/dtype_ab.py 4

Each round runs every variant (order rotated, reversed every other round): `generate` of the
medium text with ref.wav, temperature 0, EOS off, --stats-json. Prints a markdown table,
median (min–max) over the rounds.
"""
import json, subprocess, statistics, sys, tempfile, os
from pathlib import Path
REPO = Path(__file__).resolve().parents[2]
BIN = os.environ.get("DTYPE_AB_BIN", str(REPO / "target/release/pocket-tts-cli"))
CKPT = Path(os.environ.get("DTYPE_AB_CHECKPOINT", "/tmp/pocket-tts-bench/checkpoint"))
MEDIUM = "Hello world. I am Kyutai's Pocket TTS. I hope you'll like me."
VARIANTS = {
    "f32": [], "bf16": ["--dtype", "bf16"], "f16": ["--dtype", "f16"],
    "q": ["--quantize"], "q+bf16": ["--quantize", "--dtype", "bf16"],
}
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
names = list(VARIANTS)
res = {n: [] for n in names}
for r in range(rounds):
    order = names[r % len(names):] + names[:r % len(names)]
    if r % 2: order = order[::-1]
    for n in order:
        with tempfile.TemporaryDirectory() as tmp:
            js = Path(tmp) / "s.json"
            cmd = [BIN, "generate", "--config", str(CKPT / "config.yaml"), "--voice", str(REPO / "ref.wav"),
                   "--text", MEDIUM, "--temperature", "0", "--eos-threshold", "1e9", "-q",
                   "--output-path", str(Path(tmp) / "o.wav"), "--stats-json", str(js), *VARIANTS[n]]
            subprocess.run(cmd, check=True, cwd=tmp)
            d = json.loads(js.read_text())
            res[n].append(d)
            print(r, n, d["lm_step_ms"]["p50"], d["rtf"], d["peak_rss_mb"], d["prefill_ms"], d["dtype"], d["quantize"], flush=True, file=sys.stderr)
def fmt(vals, nd):
    m = statistics.median(vals)
    return f"{m:.{nd}f} ({min(vals):.{nd}f}–{max(vals):.{nd}f})"
print("| variant | FlowLM step p50 (ms) | RTF | text prefill (ms) | peak RSS (MiB) | load (ms) |")
print("|---|---|---|---|---|---|")
for n in names:
    ds = res[n]
    print(f"| {n} | {fmt([d['lm_step_ms']['p50'] for d in ds],2)} | {fmt([d['rtf'] for d in ds],3)} | "
          f"{fmt([d['prefill_ms'] for d in ds],1)} | {fmt([d['peak_rss_mb'] for d in ds],0)} | {fmt([d['load_ms'] for d in ds],0)} |")
