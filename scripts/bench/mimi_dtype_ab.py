#!/usr/bin/env python3
"""The 16-bit Mimi decoder (`--mimi-dtype`) against f32, one binary, interleaved:
accuracy (SNR of the WAV against the f32 run's, temperature 0) and speed (`--stats-json`
`decode_frame_ms`, the Mimi frame time, and `rtf`), for OPTIMIZATION_LOG.md §34.

    python3 scripts/bench/mimi_dtype_ab.py --cli target/release/pocket-tts-cli \
        --checkpoint /tmp/pocket-tts-parity/checkpoint --rounds 5 [--extra=--quantize]

Each round runs `generate` of the text with voice ref.wav, EOS off, once per dtype (the
order rotating every round). Prints a markdown table: median (min–max) over the rounds,
and each dtype's SNR against f32 (whole WAV, per 80 ms frame median / 10th percentile /
worst; the same every round at temperature 0). Needs numpy and soundfile
(scripts/bench/wav_snr.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from wav_snr import compare  # noqa: E402

TEXT = ("Hello world. I am Pocket TTS from Kyutai, and today I am speaking with a "
        "sixteen bit decoder. I hope you will not hear the difference.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--checkpoint", required=True, type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dtypes", default="f32,f16,bf16")
    ap.add_argument("--max-tokens", default="60")
    ap.add_argument("--extra", default="", help="flags added to every run (space-separated)")
    args = ap.parse_args()
    dtypes = args.dtypes.split(",")
    stats: dict[str, list[dict]] = {d: [] for d in dtypes}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            order = dtypes[r % len(dtypes):] + dtypes[:r % len(dtypes)]
            for d in order:
                js, wav = Path(tmp) / f"{d}.json", Path(tmp) / f"{d}.wav"
                cmd = [args.cli, "generate", "--config", str(args.checkpoint / "config.yaml"),
                       "--voice", str(REPO / "ref.wav"), "--text", TEXT, "--temperature", "0",
                       "--eos-threshold", "1e9", "--max-tokens", args.max_tokens, "-q",
                       "--mimi-dtype", d, "--stats-json", str(js), "--output-path", str(wav),
                       *args.extra.split()]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                stats[d].append(json.loads(js.read_text()))
        snrs = {d: compare(str(Path(tmp) / "f32.wav"), str(Path(tmp) / f"{d}.wav"), d)
                for d in dtypes if d != "f32"}

    def fmt(xs: list[float], p: int = 2) -> str:
        return f"{statistics.median(xs):.{p}f} ({min(xs):.{p}f}–{max(xs):.{p}f})"

    print(f"rounds {args.rounds}, extra flags {args.extra!r}")
    print("| mimi dtype | Mimi frame p50 ms | Mimi frame mean ms | RTF | peak RSS MiB | "
          "SNR vs f32: whole / frame median / p10 / worst (dB) |")
    print("|---|---|---|---|---|---|")
    for d in dtypes:
        s = stats[d]
        p50 = [x["decode_frame_ms"]["p50"] for x in s]
        mean = [x["decode_frame_ms"]["mean"] for x in s]
        rtf = [x["rtf"] for x in s]
        rss = [x["peak_rss_mb"] for x in s]
        snr = "—" if d == "f32" else " / ".join(f"{v:.1f}" for v in snrs[d][:4]) + \
            f" ({snrs[d][4]} frames)"
        print(f"| {d} | {fmt(p50)} | {fmt(mean)} | {fmt(rtf, 3)} | {fmt(rss, 0)} | {snr} |")


if __name__ == "__main__":
    main()
