#!/usr/bin/env python3
"""In-process timings of the Python reference (pocket-tts 4.0.1), in the JSON schema of
``pocket-tts-cli --stats-json``, for ``scripts/bench/vs_python.sh``.

    python scripts/bench/reference_stats.py --config CKPT/config.yaml --voice VOICE.wav \
        --text TEXT [--max-tokens 50] [--temperature 0] [--eos-threshold 1e9] \
        [--measure-first-chunk --runs N] [--quantize] --stats-json OUT.json

It uses the reference's own classes and code paths, exactly as its CLI does
(``TTSModel.load_model`` -> ``get_state_for_audio_prompt`` -> ``generate_audio_stream``), and
only adds clocks around them:

* ``load_ms``: ``TTSModel.load_model(config=..., temp, eos_threshold)`` (imports excluded;
  ``import_ms`` has them);
* ``voice_ms``: ``get_state_for_audio_prompt(Path(voice))`` (read, resample, end_on_pause,
  Mimi encoding, FlowLM prompt), the first call in the process, as our CLI's ``voice_ms``;
* without ``--measure-first-chunk``: one generation; ``generation_ms`` runs from the call of
  ``generate_audio_stream(voice_state, text)`` to the last chunk it yields (all text chunks,
  its decoder thread joined), ``first_chunk_ms`` to the first chunk, ``first_chunk_frames``
  = frames in that chunk (the decoder groups queued frames); ``frames`` = samples / 1920,
  ``rtf`` = generation_ms / audio_ms; ``prefill_ms`` sums the text-prefill calls of
  ``_run_flow_lm_and_increment_step``; ``lm_step_ms`` = each generation-step call of it
  (the FlowLM step, on the generation thread); ``decode_frame_ms`` = each
  ``mimi.decode_from_latent`` call divided by the frames it decodes (decoder thread);
* with ``--measure-first-chunk --runs N``: N times, from handing the text to
  ``generate_audio_stream`` (prepared voice state) to the first yielded chunk; then the
  stream is stopped through its ``stop`` event and closed, and its threads are waited for
  before the next run. ``first_chunk_ms`` = {min, p50, max}, ``first_chunk_runs_ms`` = all;
* ``peak_rss_mb``: ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` / 1024 at the end.

The config's relative paths are resolved against the current directory by the reference,
so the script changes to the config's folder first (voice and output paths are made
absolute before that). torch runs with the reference's own setting
(``torch.set_num_threads(1)`` at import of ``tts_model``), generation and Mimi decoding on
the reference's two threads.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import resource
import statistics
import sys
import threading
import time
from pathlib import Path

t_import0 = time.monotonic()
import torch  # noqa: E402

from pocket_tts import TTSModel  # noqa: E402

IMPORT_MS = (time.monotonic() - t_import0) * 1000


def ms(t: float) -> float:
    return t * 1000.0


def quantile(sorted_v: list[float], q: float) -> float | None:
    """numpy's default (linear) quantile, like our CLI's."""
    if not sorted_v:
        return None
    pos = q * (len(sorted_v) - 1)
    lo, hi = int(pos // 1), int(-(-pos // 1))
    return sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (pos - lo)


def distribution(values: list[float]) -> dict:
    v = sorted(values)
    return {
        "mean": statistics.fmean(v) if v else None,
        "p50": quantile(v, 0.5),
        "p95": quantile(v, 0.95),
    }


class Probes:
    """Clocks around the reference's FlowLM calls and Mimi decoder calls (instance attributes
    shadowing the methods: the reference's own code runs unchanged)."""

    def __init__(self, model: TTSModel):
        self.prefill: list[float] = []
        self.lm_steps: list[float] = []
        self.decode_per_frame: list[float] = []
        self.lock = threading.Lock()
        run = model._run_flow_lm_and_increment_step
        decode = model.mimi.decode_from_latent

        def run_probe(*args, **kwargs):
            t = time.perf_counter()
            out = run(*args, **kwargs)
            dt = time.perf_counter() - t
            text_tokens = kwargs.get("text_tokens")
            latents = kwargs.get("backbone_input_latents")
            with self.lock:
                if text_tokens is not None and text_tokens.shape[1] > 0:
                    self.prefill.append(dt)
                elif latents is not None and latents.shape[1] > 0:
                    self.lm_steps.append(dt)
            return out

        def decode_probe(latents, *args, **kwargs):
            t = time.perf_counter()
            out = decode(latents, *args, **kwargs)
            dt = time.perf_counter() - t
            n = max(int(latents.shape[1]), 1)
            with self.lock:
                self.decode_per_frame.extend([dt / n] * n)
            return out

        model._run_flow_lm_and_increment_step = run_probe
        model.mimi.decode_from_latent = decode_probe

    def reset(self):
        with self.lock:
            self.prefill.clear()
            self.lm_steps.clear()
            self.decode_per_frame.clear()


def wait_for_threads(baseline: int, timeout: float = 120.0):
    t_end = time.monotonic() + timeout
    while threading.active_count() > baseline:
        if time.monotonic() > t_end:
            raise RuntimeError("reference generation threads did not stop")
        time.sleep(0.002)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True, type=Path)
    ap.add_argument("--voice", required=True, type=Path)
    ap.add_argument("--text", required=True)
    ap.add_argument("--max-tokens", type=int, default=50)
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--eos-threshold", type=float, default=1e9)
    ap.add_argument("--measure-first-chunk", action="store_true")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--stats-json", required=True, type=Path)
    ap.add_argument("--quantize", action="store_true",
                    help="load_model(quantize=True): the reference's int8 FlowLM transformer")
    args = ap.parse_args()

    config = args.config.resolve()
    voice = args.voice.resolve()
    out = args.stats_json.resolve()
    for p, what in ((config, "--config"), (voice, "--voice")):
        if not p.is_file():
            print(f"reference_stats: {what} {p} does not exist", file=sys.stderr)
            return 2
    if not out.parent.is_dir():
        print(f"reference_stats: --stats-json folder {out.parent} does not exist", file=sys.stderr)
        return 2
    if args.runs < 1:
        print("reference_stats: --runs must be at least 1", file=sys.stderr)
        return 2
    os.chdir(config.parent)

    with torch.no_grad():
        t = time.monotonic()
        model = TTSModel.load_model(
            config=str(config), temp=args.temperature, eos_threshold=args.eos_threshold,
            quantize=args.quantize,
        )
        load_ms = ms(time.monotonic() - t)
        probes = Probes(model)

        t = time.monotonic()
        state = model.get_state_for_audio_prompt(voice)
        voice_ms = ms(time.monotonic() - t)
        probes.reset()  # the voice prompt's FlowLM call is not a text prefill

        rate = model.config.mimi.sample_rate
        frame_samples = int(round(rate / model.config.mimi.frame_rate))
        result: dict = {
            "tool": f"pocket-tts {importlib.metadata.version('pocket-tts')} (Python reference)",
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "import_ms": IMPORT_MS,
            "load_ms": load_ms,
            "voice_ms": voice_ms,
        }

        if args.measure_first_chunk:
            firsts = []
            for _ in range(args.runs):
                baseline = threading.active_count()
                stop = threading.Event()
                t = time.monotonic()
                stream = model.generate_audio_stream(
                    model_state=state, text_to_generate=args.text, max_tokens=args.max_tokens,
                    stop=stop,
                )
                first = next(stream)
                firsts.append(ms(time.monotonic() - t))
                del first
                stop.set()
                stream.close()
                wait_for_threads(baseline)
            v = sorted(firsts)
            result.update(
                {
                    "first_chunk_ms": {"min": v[0], "p50": quantile(v, 0.5), "max": v[-1]},
                    "first_chunk_runs_ms": firsts,
                    "runs": args.runs,
                }
            )
        else:
            probes.reset()
            samples = 0
            first_ms = None
            first_frames = None
            t = time.monotonic()
            for chunk in model.generate_audio_stream(
                model_state=state, text_to_generate=args.text, max_tokens=args.max_tokens
            ):
                if first_ms is None:
                    first_ms = ms(time.monotonic() - t)
                    first_frames = chunk.shape[-1] // frame_samples
                samples += chunk.shape[-1]
            generation_ms = ms(time.monotonic() - t)
            frames = samples // frame_samples
            audio_ms = samples * 1000.0 / rate
            result.update(
                {
                    "prefill_ms": ms(sum(probes.prefill)),
                    "first_chunk_ms": first_ms,
                    "first_chunk_frames": first_frames,
                    "frames": frames,
                    "audio_ms": audio_ms,
                    "generation_ms": generation_ms,
                    "rtf": generation_ms / audio_ms if audio_ms else None,
                    "lm_step_ms": distribution([ms(x) for x in probes.lm_steps]),
                    "decode_frame_ms": distribution([ms(x) for x in probes.decode_per_frame]),
                    "lm_steps": len(probes.lm_steps),
                    "runs": 1,
                }
            )

    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    result["threads"] = 2  # the reference's generation thread + Mimi decoder thread
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(out)
    print(json.dumps(result), file=sys.stderr)
    return 0


if __name__ == "__main__":
    rc = main()
    # The reference's daemon generation/decoder threads can make the interpreter abort at
    # shutdown (SIGABRT, "terminate called without an active exception"): leave at once.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)
