#!/usr/bin/env python3
"""Our Python package (``pocket_tts_rs``) next to the reference's (``pocket_tts`` 4.0.1), from
Python, on the same FULL-size random checkpoint, voice and text.

    python3 scripts/bench/python_vs_reference.py \\
        --ours /path/to/venv-with-pocket_tts_rs/bin/python \\
        --reference /tmp/venv-ref/bin/python \\
        --checkpoint /tmp/pocket-tts-parity/checkpoint [--rounds 3] [--out report.md]

The checkpoint folder holds ``config.yaml`` and ``model.safetensors`` as
``scripts/reference/make_checkpoint.py --size full`` writes them (the reference resolves the
config's relative paths against its working directory, so every process runs in that
folder). The voice is ``$POCKET_TTS_ASSETS/speech/pocket_tts_phrase_00.wav`` unless
``--voice`` is given.

Each measurement is a process of its own (``--child``): load the model (``load_ms``), make
the voice state from the audio prompt (``voice_ms``), one cold generation, then
``--measured-runs`` (5) measured ``generate_audio_stream`` calls (``first_chunk_ms``: call
to first chunk; ``rtf``: generation time / audio time, lower is better; the medians of
those calls: one call per process gave a first chunk anywhere in 22–32 ms for the same
build), and the process's peak resident memory
(``ru_maxrss``). Temperature 0, EOS off (``eos_threshold=1e9``) so both packages
generate the same number of frames. Rounds are interleaved: per round, per format (f32,
``quantize=True``), the reference and ours, the order alternating between rounds. The
report gives medians with min-max over the rounds, the ratios, and the WAVs of the two
packages compared (max abs difference, SNR) at temperature 0.

In each of our processes, ``--binding-pairs`` more pairs, interleaved, set the Python
stream against the same generation run inside Rust (``NativeModel.generate_in_rust``: no
frame handed to Python, as the CLI runs it): the binding's cost measured in one process,
free of the process-to-process spread.

It also checks the voice-state interchange: the reference exports the voice's state, both
packages generate from that file (f32, temperature 0), and the audio is compared.

With ``--threads-check``, it also times 8 calls of ``generate_audio`` on one of our models
from 8 threads at once against the same 8 calls one after another (each thread's audio
must equal its solo run).
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
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEXT = (
    "Hello world. I am Kyutai's Pocket TTS. I'm fast enough to run on small CPUs. "
    "I hope you'll like me."
)
THREAD_TEXTS = [
    "Hello there, this is the first voice of eight.",
    "The weather is lovely today, shall we walk?",
    "Count with me slowly until we reach ten.",
    "A small model speaks quickly on a laptop.",
    "Pocket TTS clones a voice from a few seconds.",
    "Long texts are split into groups of sentences.",
    "Each group starts from the same voice state.",
    "Goodbye, and thank you very much for listening.",
]


# --- child: one package, one format, one process ----------------------------------------
def child(args: argparse.Namespace) -> None:
    import resource

    import numpy as np

    t = time.perf_counter()
    if args.package == "reference":
        from pocket_tts import TTSModel
    else:
        from pocket_tts_rs import TTSModel
    import_ms = (time.perf_counter() - t) * 1000

    t = time.perf_counter()
    model = TTSModel.load_model(
        config="config.yaml", temp=0.0, eos_threshold=1e9, quantize=args.quantize
    )
    load_ms = (time.perf_counter() - t) * 1000

    t = time.perf_counter()
    state = model.get_state_for_audio_prompt(Path(args.voice))
    voice_ms = (time.perf_counter() - t) * 1000

    def run() -> tuple[float, float, np.ndarray]:
        t0 = time.perf_counter()
        first = None
        chunks = []
        for chunk in model.generate_audio_stream(state, args.text):
            if first is None:
                first = time.perf_counter() - t0
            chunks.append(np.asarray(chunk, dtype=np.float32))
        total = time.perf_counter() - t0
        return first * 1000, total * 1000, np.concatenate(chunks)

    cold_first_ms, cold_gen_ms, _ = run()
    measured = [run() for _ in range(max(1, args.measured_runs))]
    first_ms = statistics.median(m[0] for m in measured)
    gen_ms = statistics.median(m[1] for m in measured)
    audio = measured[-1][2]
    audio_ms = len(audio) * 1000 / model.sample_rate
    audio.astype("<f4").tofile(args.audio_out)
    # Ours: the binding's cost in this one process, pairs interleaved: the Python stream
    # against the same generation run inside Rust (no frame handed to Python, as the CLI).
    binding = []
    if args.package == "ours":
        for _ in range(args.binding_pairs):
            py_first, py_total, _ = run()
            samples, rs_first, rs_total = model._native.generate_in_rust(
                state, args.text, temperature=0.0, eos_threshold=1e9, max_tokens=50
            )
            assert samples == len(audio), (samples, len(audio))
            binding.append({"python_ms": py_total, "rust_ms": rs_total * 1000,
                            "python_first_ms": py_first, "rust_first_ms": rs_first * 1000})
    print(json.dumps({
        "binding": binding,
        "package": args.package,
        "quantize": args.quantize,
        "import_ms": import_ms,
        "load_ms": load_ms,
        "voice_ms": voice_ms,
        "cold_first_chunk_ms": cold_first_ms,
        "first_chunk_ms": first_ms,
        "generation_ms": gen_ms,
        "audio_ms": audio_ms,
        "rtf": gen_ms / audio_ms,
        "cold_rtf": cold_gen_ms / audio_ms,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


def state_child(args: argparse.Namespace) -> None:
    """The voice-state interchange at full size: the reference exports the state of the
    voice prompt (``--package reference``), then each package generates from that file."""
    import numpy as np

    if args.package == "reference":
        from pocket_tts import TTSModel, export_model_state
    else:
        from pocket_tts_rs import TTSModel
    model = TTSModel.load_model(config="config.yaml", temp=0.0, eos_threshold=1e9)
    if args.package == "reference":
        export_model_state(model.get_state_for_audio_prompt(Path(args.voice)), args.state_file)
    state = model.get_state_for_audio_prompt(args.state_file)
    audio = model.generate_audio(state, "Hello world, this is a test of the voice state.")
    np.asarray(audio, dtype=np.float32).astype("<f4").tofile(args.audio_out)


def threads_child(args: argparse.Namespace) -> None:
    import threading

    import numpy as np
    from pocket_tts_rs import TTSModel

    model = TTSModel.load_model(
        config="config.yaml", temp=0.0, eos_threshold=1e9, quantize=args.quantize
    )
    state = model.get_state_for_audio_prompt(Path(args.voice))
    model.generate_audio(state, "Warm up.")
    t = time.perf_counter()
    solo = [model.generate_audio(state, text) for text in THREAD_TEXTS]
    sequential_s = time.perf_counter() - t
    results: list = [None] * len(THREAD_TEXTS)

    def one(i: int) -> None:
        results[i] = model.generate_audio(state, THREAD_TEXTS[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(THREAD_TEXTS))]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    concurrent_s = time.perf_counter() - t
    equal = all(np.array_equal(a, b) for a, b in zip(solo, results))
    audio_s = sum(len(a) for a in solo) / model.sample_rate
    print(json.dumps({
        "quantize": args.quantize,
        "sequential_s": sequential_s,
        "concurrent_s": concurrent_s,
        "speedup": sequential_s / concurrent_s,
        "audio_s": audio_s,
        "each_equal_to_solo": equal,
    }))


# --- parent: interleaved rounds, report -----------------------------------------------
def run_child(python: str, package: str, quantize: bool, args, audio_out: Path) -> dict:
    cmd = [
        python, str(Path(__file__).resolve()), "--child", "--package", package,
        "--voice", str(args.voice), "--text", args.text, "--audio-out", str(audio_out),
        "--measured-runs", str(args.measured_runs),
    ] + (["--quantize"] if quantize else [])
    out = subprocess.run(
        cmd, cwd=args.checkpoint, capture_output=True, text=True, timeout=1200
    )
    if out.returncode != 0:
        sys.exit(f"{package} (quantize={quantize}) failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_cli(cli: str, quantize: bool, args) -> dict:
    """Our CLI's `generate` in its own process: its in-process RTF (`--stats-json`: text
    handed to the model to the last frame, over the audio), one cold generation."""
    with tempfile.TemporaryDirectory() as d:
        stats = Path(d) / "stats.json"
        cmd = [
            cli, "generate", "--config", "config.yaml", "--voice", str(args.voice),
            "--text", args.text, "--temperature", "0", "--eos-threshold", "1e9",
            "--output-path", "/dev/null", "--stats-json", str(stats), "-q",
        ] + (["--quantize"] if quantize else [])
        out = subprocess.run(cmd, cwd=args.checkpoint, capture_output=True, text=True, timeout=1200)
        if out.returncode != 0:
            sys.exit(f"CLI (quantize={quantize}) failed:\n{out.stderr[-4000:]}")
        return json.loads(stats.read_text())


def med(xs: list[float], fmt: str = "{:.0f}") -> str:
    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}–{fmt.format(max(xs))})"


def compare_audio(a_path: Path, b_path: Path) -> str:
    """Max abs difference and SNR of two raw float32 files (the parent needs no numpy)."""
    import array
    import math

    a, b = array.array("f"), array.array("f")
    a.frombytes(a_path.read_bytes())
    b.frombytes(b_path.read_bytes())
    if len(a) != len(b):
        return f"lengths differ: {len(a)} vs {len(b)} samples"
    err = max((abs(x - y) for x, y in zip(a, b)), default=0.0)
    noise = sum((x - y) ** 2 for x, y in zip(a, b))
    signal = sum(x * x for x in a)
    snr = math.inf if noise == 0 else 10 * math.log10(signal / noise)
    return f"max abs diff {err:.2e} ({err * 32768:.1f} LSB of 16-bit), SNR {snr:.1f} dB, {len(a)} samples"


def cpu_name() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ours", help="python of a venv with pocket_tts_rs installed")
    p.add_argument("--reference", default="/tmp/venv-ref/bin/python",
                   help="python of a venv with pocket-tts==4.0.1")
    p.add_argument("--checkpoint", type=Path, help="folder with config.yaml and model.safetensors")
    p.add_argument("--voice", type=Path)
    p.add_argument("--text", default=TEXT)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--formats", default="f32,quantize")
    p.add_argument("--threads-check", action="store_true")
    p.add_argument("--cli", help="our pocket-tts-cli (release): also its in-process RTF, to "
                   "compare with our package's first (cold) generation")
    p.add_argument("--measured-runs", type=int, default=5,
                   help="measured generations per process after the cold one: first chunk "
                   "and RTF are their medians")
    p.add_argument("--binding-pairs", type=int, default=4,
                   help="per process of ours: Python stream vs in-Rust generation pairs")
    p.add_argument("--out", type=Path, help="also write the report here")
    # child mode
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--threads-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--state-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--state-file", help=argparse.SUPPRESS)
    p.add_argument("--package", help=argparse.SUPPRESS)
    p.add_argument("--quantize", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--audio-out", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args)
    if args.threads_child:
        return threads_child(args)
    if args.state_child:
        return state_child(args)

    if not args.ours or not args.checkpoint:
        p.error("--ours and --checkpoint are required")
    if args.voice is None:
        assets = Path(os.environ.get("POCKET_TTS_ASSETS", REPO.parent / "shared" / "assets"))
        args.voice = assets / "speech" / "pocket_tts_phrase_00.wav"
    args.voice = args.voice.resolve()
    args.checkpoint = args.checkpoint.resolve()
    for f in (args.voice, args.checkpoint / "config.yaml", args.checkpoint / "model.safetensors"):
        if not f.is_file():
            sys.exit(f"{f} not found")

    formats = [f == "quantize" for f in args.formats.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="py_vs_ref-"))
    results: dict[tuple[str, bool], list[dict]] = {}
    for r in range(args.rounds):
        for q in formats:
            order = ["reference", "ours"] if r % 2 == 0 else ["ours", "reference"]
            for pkg in order:
                python = args.reference if pkg == "reference" else args.ours
                res = run_child(python, pkg, q, args, tmp / f"{pkg}_{int(q)}.f32")
                results.setdefault((pkg, q), []).append(res)
                if pkg == "ours" and args.cli:
                    results.setdefault(("cli", q), []).append(run_cli(args.cli, q, args))
                print(f"round {r + 1} {pkg:9} quantize={q!s:5} rtf {res['rtf']:.3f} "
                      f"first chunk {res['first_chunk_ms']:.0f} ms load {res['load_ms']:.0f} ms "
                      f"voice {res['voice_ms']:.0f} ms rss {res['peak_rss_mib']:.0f} MiB",
                      file=sys.stderr, flush=True)

    lines = [
        f"CPU: {cpu_name()} ({os.cpu_count()} CPUs); {args.rounds} interleaved rounds, "
        f"each package in its own process; text of {len(args.text)} characters, "
        f"voice {args.voice.name}; temperature 0, EOS off; medians (min–max).",
        "",
        "| format | package | load ms | voice prompt ms | first chunk ms (cold) | first chunk ms | RTF | × faster than real time | peak RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for q in formats:
        for pkg in ("reference", "ours"):
            rs = results[(pkg, q)]
            lines.append(
                f"| {'quantize' if q else 'f32'} | {pkg} | {med([x['load_ms'] for x in rs])} | "
                f"{med([x['voice_ms'] for x in rs])} | {med([x['cold_first_chunk_ms'] for x in rs])} | "
                f"{med([x['first_chunk_ms'] for x in rs], '{:.1f}')} | {med([x['rtf'] for x in rs], '{:.3f}')} | "
                f"{statistics.median([1 / x['rtf'] for x in rs]):.2f} | {med([x['peak_rss_mib'] for x in rs])} |"
            )
    lines.append("")
    for q in formats:
        ref, ours = results[("reference", q)], results[("ours", q)]
        ratio = lambda k: statistics.median([a[k] for a in ref]) / statistics.median([b[k] for b in ours])  # noqa: E731
        lines.append(
            f"- {'quantize' if q else 'f32'}: reference / ours: load {ratio('load_ms'):.1f}×, "
            f"voice {ratio('voice_ms'):.1f}×, first chunk {ratio('first_chunk_ms'):.1f}×, "
            f"RTF {ratio('rtf'):.2f}×, peak RSS {ratio('peak_rss_mib'):.1f}×; audio (last round): "
            f"{compare_audio(tmp / f'reference_{int(q)}.f32', tmp / f'ours_{int(q)}.f32')}"
        )
    lines.append("")
    state_file = tmp / "reference_state.safetensors"
    for pkg in ("reference", "ours"):
        python = args.reference if pkg == "reference" else args.ours
        cmd = [python, str(Path(__file__).resolve()), "--state-child", "--package", pkg,
               "--voice", str(args.voice), "--state-file", str(state_file),
               "--audio-out", str(tmp / f"state_{pkg}.f32")]
        out = subprocess.run(cmd, cwd=args.checkpoint, capture_output=True, text=True, timeout=1200)
        if out.returncode != 0:
            sys.exit(f"voice-state check ({pkg}) failed:\n{out.stderr[-4000:]}")
    lines.append(
        "- f32, from a voice state exported by the reference's `export_model_state`: "
        + compare_audio(tmp / "state_reference.f32", tmp / "state_ours.f32")
    )
    if args.cli:
        lines.append("")
        for q in formats:
            cli = [x["rtf"] for x in results[("cli", q)]]
            py = [x["cold_rtf"] for x in results[("ours", q)]]
            lines.append(
                f"- {'quantize' if q else 'f32'}: first generation's RTF, our CLI `generate` "
                f"{med(cli, '{:.3f}')}, our Python package {med(py, '{:.3f}')}: the Python call "
                f"adds {100 * (statistics.median(py) / statistics.median(cli) - 1):+.1f} %"
            )
    lines.append("")
    for q in formats:
        pairs = [b for x in results[("ours", q)] for b in x.get("binding", [])]
        if not pairs:
            continue
        ratios = [b["python_ms"] / b["rust_ms"] - 1 for b in pairs]
        lines.append(
            f"- ours, {'quantize' if q else 'f32'}, the binding's cost in one process "
            f"({len(pairs)} interleaved pairs: `generate_audio_stream` against the same "
            f"generation inside Rust): total {100 * statistics.median(ratios):+.1f} % "
            f"({100 * min(ratios):+.1f} to {100 * max(ratios):+.1f} %); first chunk "
            f"{med([b['python_first_ms'] for b in pairs], '{:.1f}')} ms from Python, "
            f"{med([b['rust_first_ms'] for b in pairs], '{:.1f}')} ms inside Rust"
        )
    if args.threads_check:
        lines.append("")
        for q in formats:
            cmd = [args.ours, str(Path(__file__).resolve()), "--threads-child",
                   "--voice", str(args.voice)] + (["--quantize"] if q else [])
            out = subprocess.run(cmd, cwd=args.checkpoint, capture_output=True, text=True, timeout=1800)
            if out.returncode != 0:
                sys.exit(f"threads check failed:\n{out.stderr[-4000:]}")
            t = json.loads(out.stdout.strip().splitlines()[-1])
            lines.append(
                f"- ours, {'quantize' if q else 'f32'}, 8 texts ({t['audio_s']:.1f} s of audio): one after "
                f"another {t['sequential_s']:.2f} s, 8 threads at once {t['concurrent_s']:.2f} s "
                f"({t['speedup']:.2f}× sooner); each thread's audio equal to its solo run: "
                f"{t['each_equal_to_solo']}"
            )
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.write_text(report + "\n")


if __name__ == "__main__":
    main()
