#!/usr/bin/env python3
"""Produce the tiny-model parity fixtures in tests/fixtures/tiny/ with pocket-tts==4.0.1.

Run inside the reference venv (scripts/reference/setup_venv.sh):

    .venv-reference/bin/python scripts/reference/make_fixtures.py

Everything is computed with the reference's own modules (torch.no_grad, model.eval()).
See scripts/reference/README.md for the list of tensors and where each comes from.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import shlex
import subprocess
import sys
import wave
from functools import partial
from pathlib import Path

import numpy as np
import safetensors.torch
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_checkpoint as mc  # noqa: E402

from pocket_tts.data.audio import audio_read  # noqa: E402
from pocket_tts.data.audio_utils import convert_audio, end_on_pause  # noqa: E402
from pocket_tts.models.flow_lm import lsd_decode  # noqa: E402
from pocket_tts.models.model_state import export_model_state  # noqa: E402
from pocket_tts.models.text_chunking import (  # noqa: E402
    prepare_text_prompt,
    split_into_best_sentences,
)
from pocket_tts.models.tts_model import TTSModel  # noqa: E402
from pocket_tts.modules.stateful_module import init_states  # noqa: E402

REPO_ROOT = mc.REPO_ROOT
DEFAULT_OUT = REPO_ROOT / "tests" / "fixtures" / "tiny"

# ---------------------------------------------------------------------------------------------
# Fixed inputs. Changing any of them changes every fixture: regenerate and commit them together.
# ---------------------------------------------------------------------------------------------
SEED = 0  # checkpoint seed; chosen so that EOS triggers late enough with a wide margin
INPUT_SEED = 20240611  # torch.Generator seed of the random flow-head inputs
TEXT_A = "Hello world, this is a tiny test."
TEXT_B = "The weather is lovely today. Shall we take a long walk along the river?"
TEXT_C = "One, two, three. Count with me slowly until we reach ten. Well done."
MAX_TOKENS_B = 50
MAX_TOKENS_C = 12
VOICE_SOURCE = "speech/pocket_tts_phrase_00.wav"  # inside the assets dir
VOICE_SECONDS = 1.5
BACKBONE_STATE_LEN = 64  # init_states(flow_lm, 1, 64) for the text-prefill fixture
# Flow-head probe inputs: (s, t) pairs in [0, 1], including s=0, t=1 (the one-step LSD call).
FLOW_S = [0.0, 0.0, 0.25, 0.5, 0.3]
FLOW_T = [1.0, 0.25, 0.5, 1.0, 0.9]
# EOS threshold choice: EOS must first fire (at generation step >= 6, the reference's
# _MIN_FRAMES_BEFORE_EOS) at a step in this range, so that N = eos_step + frames_after_eos > 20.
EOS_STEP_RANGE = (18, 48)
NEVER_EOS = 1e9
MIN_EOS_MARGIN = 0.05

STAGES_FILE = "stages.safetensors"
META_FILE = "meta.json"
VOICE_FILE = "voice_excerpt.wav"
VOICE_STATE_FILE = "voice_state.safetensors"
MULTI_CHUNK_FILE = "multi_chunk.wav"
CONFIG_FILE = "config.yaml"

log = logging.getLogger("make_fixtures")


def sha256_file(path: Path) -> str:
    return mc.sha256_file(path)


def rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def write_voice_excerpt(source: Path, dest: Path, seconds: float) -> dict:
    """First `seconds` of a PCM16 mono wav, copied sample for sample (no re-quantisation)."""
    with wave.open(str(source), "rb") as src:
        assert src.getsampwidth() == 2 and src.getnchannels() == 1, "expected PCM16 mono"
        sr = src.getframerate()
        n = int(round(seconds * sr))
        frames = src.readframes(n)
    with wave.open(str(dest), "wb") as dst:
        dst.setnchannels(1)
        dst.setsampwidth(2)
        dst.setframerate(sr)
        dst.writeframes(frames)
    return {"sample_rate": sr, "samples": n}


def load_model(out_dir: Path, eos_threshold: float) -> TTSModel:
    with mc.working_directory(out_dir):
        model = TTSModel.load_model(config=CONFIG_FILE, temp=0.0, eos_threshold=eos_threshold)
    model.eval()
    return model


class GenerationRecorder:
    """Records what the reference computes during generate_audio_stream.

    Wraps the instance's _run_flow_lm_and_increment_step (called with keyword arguments by
    _generate and _autoregressive_generation) and hooks flow_lm.out_eos. Each call is one of:
    "text" (prefill of a chunk's text tokens), "audio" (voice prompt) or "gen" (one
    autoregressive step, whose latent is returned raw, before emb_std/emb_mean).
    """

    def __init__(self, model: TTSModel):
        self.model = model
        self.calls: list[dict] = []
        self._eos: list[torch.Tensor] = []
        self._orig = model._run_flow_lm_and_increment_step
        self._hook = model.flow_lm.out_eos.register_forward_hook(
            lambda _m, _i, out: self._eos.append(out.detach().clone())
        )
        model._run_flow_lm_and_increment_step = self._wrapped

    def _wrapped(self, **kwargs):
        n0 = len(self._eos)
        latent, is_eos = self._orig(**kwargs)
        eos_logits = self._eos[n0:]
        assert len(eos_logits) == 1, "out_eos runs once per flow-LM call"
        if kwargs.get("backbone_input_latents") is not None:
            kind = "gen"
        elif kwargs.get("text_tokens") is not None:
            kind = "text"
        else:
            kind = "audio"
        self.calls.append(
            {
                "kind": kind,
                "latent": latent.detach().clone(),
                "eos_logit": eos_logits[0].reshape(()).clone(),
                "is_eos": bool(is_eos.item()),
            }
        )
        return latent, is_eos

    def reset(self):
        self.calls.clear()
        self._eos.clear()

    def close(self):
        self._hook.remove()
        self.model._run_flow_lm_and_increment_step = self._orig

    def chunks(self) -> list[list[dict]]:
        """Generation calls grouped by text prefill (one group per text chunk)."""
        groups: list[list[dict]] = []
        for call in self.calls:
            if call["kind"] == "text":
                groups.append([])
            elif call["kind"] == "gen":
                groups[-1].append(call)
        return groups


def frames_after_eos_for(model: TTSModel, chunk: str) -> int:
    """What generate_audio_stream uses when frames_after_eos is None (the CLI default)."""
    if model.model_recommended_frames_after_eos is not None:
        return model.model_recommended_frames_after_eos
    _, guess = prepare_text_prompt(
        chunk,
        model.pad_with_spaces_for_short_inputs,
        model.remove_semicolons,
        model.append_terminal_punctuation,
        model.capitalize_first_letter,
        model.replace_characters,
    )
    return guess + 2


def chunks_for(model: TTSModel, text: str, max_tokens: int) -> list[str]:
    return split_into_best_sentences(
        model.flow_lm.conditioner.tokenizer,
        text,
        max_tokens,
        model.pad_with_spaces_for_short_inputs,
        remove_semicolons=model.remove_semicolons,
        append_terminal_punctuation=model.append_terminal_punctuation,
        capitalize_first_letter=model.capitalize_first_letter,
        replace_characters=model.replace_characters,
    )


def prepared_text(model: TTSModel, text: str) -> str:
    return prepare_text_prompt(
        text,
        model.pad_with_spaces_for_short_inputs,
        model.remove_semicolons,
        model.append_terminal_punctuation,
        model.capitalize_first_letter,
        model.replace_characters,
    )[0]


@torch.no_grad()
def run_generation(model: TTSModel, voice_state, text: str, max_tokens: int):
    """generate_audio_stream with recording; frame-by-frame Mimi decoding (deterministic)."""
    model.max_decoder_frames_per_call = 1
    recorder = GenerationRecorder(model)
    try:
        audio_chunks = [
            c.clone()
            for c in model.generate_audio_stream(
                model_state=voice_state,
                text_to_generate=text,
                max_tokens=max_tokens,
                copy_state=True,
            )
        ]
    finally:
        recorder.close()
    return audio_chunks, recorder


def describe_chunk_run(model: TTSModel, chunk: str, calls: list[dict], queued: int) -> dict:
    """Where EOS fired, how many latents were queued (decoded) for one chunk."""
    frames_after_eos = frames_after_eos_for(model, chunk)
    token_count = model.flow_lm.conditioner.prepare(prepared_text(model, chunk)).shape[1]
    max_gen_len = model._estimate_max_gen_len(token_count)
    eos_step = None
    for step, call in enumerate(calls):
        if call["is_eos"] and step >= model._MIN_FRAMES_BEFORE_EOS:
            eos_step = step
            break
    if eos_step is None:
        expected = max_gen_len
    else:
        expected = eos_step + frames_after_eos
    assert queued == expected, (queued, expected, eos_step)
    return {
        "text": chunk,
        "prepared_text": prepared_text(model, chunk),
        "tokens": token_count,
        "max_gen_len": max_gen_len,
        "frames_after_eos": frames_after_eos,
        "eos_step": eos_step,
        "eos_triggered": eos_step is not None,
        "frames": queued,
        "samples": queued * model.mimi.frame_size,
        "eos_logits": [round(float(c["eos_logit"]), 6) for c in calls],
    }


def first_eos_step(logits: list[float], threshold: float, min_step: int) -> int | None:
    for step in range(min_step, len(logits)):
        if logits[step] > threshold:
            return step
    return None


def choose_eos_threshold(
    probe_b: list[float],
    probe_c: list[list[float]],
    frames_after_eos_c: list[int],
    frames_after_eos_b: int,
    min_step: int,
) -> tuple[float, float]:
    """Pick the EOS threshold E from runs that never stop (all logits of every step).

    EOS fires at the first step >= min_step whose logit exceeds E. Constraints: for text B
    it fires at a step in EOS_STEP_RANGE (so N = eos_step + frames_after_eos > 20); it fires
    in every chunk of text C, and at least one chunk of C is longer than 20 frames. Among the
    thresholds that satisfy them, E maximises the margin: the smallest distance between E and
    any logit that the stop decision looks at (steps min_step..eos_step of every run). E is
    rounded to 2 decimals. Returns (E, margin).
    """
    runs = [probe_b, *probe_c]
    values = sorted({v for run in runs for v in run[min_step:]})
    best: tuple[float, float] | None = None
    for lo, hi in zip(values, values[1:]):
        threshold = round((lo + hi) / 2, 2)
        steps = [first_eos_step(run, threshold, min_step) for run in runs]
        if any(step is None for step in steps):
            continue
        step_b, steps_c = steps[0], steps[1:]
        if not (EOS_STEP_RANGE[0] <= step_b <= EOS_STEP_RANGE[1]):
            continue
        if step_b + frames_after_eos_b <= 20:
            continue
        if not any(st + fae > 20 for st, fae in zip(steps_c, frames_after_eos_c)):
            continue
        margin = min(
            abs(v - threshold) for run, st in zip(runs, steps) for v in run[min_step : st + 1]
        )
        if best is None or margin > best[1]:
            best = (threshold, margin)
    if best is None or best[1] < MIN_EOS_MARGIN:
        return NEVER_EOS, 0.0
    return best


@torch.no_grad()
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--skip-cli", action="store_true", help="do not run the CLI (debug)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    log.setLevel(logging.INFO)

    out_dir: Path = args.out.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    assets = mc.assets_dir()
    commands: dict[str, str] = {
        "make_fixtures": "<reference venv>/bin/python scripts/reference/make_fixtures.py"
        + ("" if args.out.resolve() == DEFAULT_OUT else f" --out {shlex.quote(rel(out_dir))}")
    }

    # 1. Checkpoint.
    ck = mc.make_checkpoint("tiny", SEED, out_dir)
    assert ck["weights_bytes"] < 3_000_000, ck["weights_bytes"]
    commands["make_checkpoint"] = (
        f"python scripts/reference/make_checkpoint.py --size tiny --seed {SEED} "
        f"--out {rel(out_dir)} --config {rel(out_dir)}/{CONFIG_FILE}"
    )
    gitignore = out_dir / ".gitignore"
    gitignore.write_text(
        "# Symlink to the official tokenizer in the assets dir, made by make_checkpoint.py.\n"
        "/tokenizer.model\n"
    )

    # 2. Voice excerpt: the test input of every voice fixture.
    voice_path = out_dir / VOICE_FILE
    voice_info = write_voice_excerpt(assets / VOICE_SOURCE, voice_path, VOICE_SECONDS)

    stages: dict[str, torch.Tensor] = {}
    model = load_model(out_dir, eos_threshold=NEVER_EOS)
    flow_lm = model.flow_lm

    # 3. Text conditioner.
    prepared_a = prepared_text(model, TEXT_A)
    tokens_a = flow_lm.conditioner.prepare(prepared_a)
    stages["cond.tokens"] = tokens_a
    stages["cond.out"] = flow_lm.conditioner(tokens_a)

    # 4. Backbone on a text prefill from a fresh state, as _run_flow_lm calls it.
    state = init_states(flow_lm, batch_size=1, sequence_length=BACKBONE_STATE_LEN)
    empty_seq = torch.empty((1, 0, flow_lm.ldim), dtype=flow_lm.dtype)
    input_ = flow_lm.input_linear(empty_seq)
    text_embeddings = stages["cond.out"]
    stages["backbone.input"] = text_embeddings.clone()
    stages["backbone.out"] = flow_lm.backbone(input_, text_embeddings, empty_seq, state)

    # 5. Flow head, LSD decode, EOS head on random inputs.
    gen = torch.Generator().manual_seed(INPUT_SEED)
    c = torch.randn((len(FLOW_S), flow_lm.dim), generator=gen)
    x = torch.randn((len(FLOW_S), flow_lm.ldim), generator=gen)
    s = torch.tensor(FLOW_S)[:, None]
    t = torch.tensor(FLOW_T)[:, None]
    stages["flow.c"], stages["flow.s"], stages["flow.t"], stages["flow.x"] = c, s, t, x
    stages["flow.out"] = flow_lm.flow_net(c, s, t, x)
    stages["flow.lsd1"] = lsd_decode(partial(flow_lm.flow_net, c), x, 1)
    stages["flow.lsd4"] = lsd_decode(partial(flow_lm.flow_net, c), x, 4)
    stages["eos.logits"] = flow_lm.out_eos(c)

    # 6. Voice prompt, as get_state_for_audio_prompt processes a wav file.
    audio_in, sr_in = audio_read(voice_path)
    stages["voice.audio_in"] = audio_in
    prepared_audio = end_on_pause(
        convert_audio(audio_in, sr_in, model.config.mimi.sample_rate, 1),
        model.config.mimi.sample_rate,
    )
    stages["voice.audio_prepared"] = prepared_audio
    stages["voice.latents"] = model.mimi.encode_to_latent(prepared_audio.unsqueeze(0))
    stages["voice.conditioning"] = model._encode_audio(prepared_audio.unsqueeze(0))
    voice_state = model.get_state_for_audio_prompt(voice_path)
    export_model_state(voice_state, out_dir / VOICE_STATE_FILE)
    voice_state_keys = {
        f"{m}/{k}": list(v.shape) for m, st in voice_state.items() for k, v in st.items()
    }

    # 7. Generation. First, runs that never stop (text B, and each chunk of text C), to see
    #    the EOS logits of every step and pick the threshold E.
    chunks_b = chunks_for(model, TEXT_B, MAX_TOKENS_B)
    assert len(chunks_b) == 1, chunks_b
    chunks_c = chunks_for(model, TEXT_C, MAX_TOKENS_C)
    assert len(chunks_c) >= 2, chunks_c
    _, rec = run_generation(model, voice_state, TEXT_B, MAX_TOKENS_B)
    probe_b = [float(cl["eos_logit"]) for cl in rec.chunks()[0]]
    _, rec = run_generation(model, voice_state, TEXT_C, MAX_TOKENS_C)
    probe_c = [[float(cl["eos_logit"]) for cl in calls] for calls in rec.chunks()]
    fae_b = frames_after_eos_for(model, chunks_b[0])
    fae_c = [frames_after_eos_for(model, chunk) for chunk in chunks_c]
    log.info("EOS logits per generation step, runs without EOS:")
    for step in range(max(len(probe_b), *(len(p) for p in probe_c))):
        cells = [f"{p[step]:+9.4f}" if step < len(p) else " " * 9 for p in [probe_b, *probe_c]]
        log.info("  step %3d  B %s  C-chunks %s", step, cells[0], " ".join(cells[1:]))
    eos_threshold, eos_margin = choose_eos_threshold(
        probe_b, probe_c, fae_c, fae_b, model._MIN_FRAMES_BEFORE_EOS
    )
    log.info("chosen eos_threshold %s (margin %.3f)", eos_threshold, eos_margin)
    if eos_threshold == NEVER_EOS:
        log.warning("no threshold satisfies the constraints: EOS never triggers")

    # 8. Generation of text B with E: the fixture.
    model = load_model(out_dir, eos_threshold=eos_threshold)
    flow_lm = model.flow_lm
    audio_chunks, rec = run_generation(model, voice_state, TEXT_B, MAX_TOKENS_B)
    gen_audio = torch.cat(audio_chunks, dim=0)
    frame_size = model.mimi.frame_size
    assert gen_audio.shape[0] % frame_size == 0
    n_frames = gen_audio.shape[0] // frame_size
    gen_calls = rec.chunks()[0]
    run_b = describe_chunk_run(model, chunks_b[0], gen_calls, n_frames)
    assert n_frames > 20, n_frames
    # All latents computed; the last one (break step) is never queued when EOS fired.
    assert len(gen_calls) == n_frames + (1 if run_b["eos_triggered"] else 0)
    assert [float(cl["eos_logit"]) for cl in gen_calls] == probe_b[: len(gen_calls)], (
        "EOS threshold changed the trajectory"
    )
    text_calls = [cl for cl in rec.calls if cl["kind"] == "text"]
    stages["gen.tokens"] = flow_lm.conditioner.prepare(prepared_text(model, chunks_b[0]))
    stages["gen.latents"] = torch.cat([cl["latent"] for cl in gen_calls[:n_frames]], dim=1)
    stages["gen.eos_logits"] = torch.stack([cl["eos_logit"] for cl in gen_calls[:n_frames]])
    stages["gen.audio"] = gen_audio
    stages["gen.text_prefill_latent"] = text_calls[0]["latent"]

    # 9. Mimi decoder alone, one call over all frames, fresh state.
    latents_in = stages["gen.latents"] * flow_lm.emb_std + flow_lm.emb_mean
    stages["mimi.latents_in"] = latents_in
    mimi_state = init_states(model.mimi, batch_size=1, sequence_length=n_frames * 16)
    stages["mimi.audio"] = model.mimi.decode_from_latent(latents_in, mimi_state)
    assert stages["mimi.audio"].shape == (1, 1, n_frames * frame_size)

    # 10. Multi-chunk, in process (for the per-chunk record) and through the CLI (the fixture).
    audio_chunks_c, rec_c = run_generation(model, voice_state, TEXT_C, MAX_TOKENS_C)
    per_chunk_calls = rec_c.chunks()
    assert len(per_chunk_calls) == len(chunks_c)
    # Audio chunks are one frame each (max_decoder_frames_per_call = 1): split them by chunk.
    assert all(a.shape[0] == frame_size for a in audio_chunks_c)
    runs_c, total = [], 0
    for chunk, calls, probe in zip(chunks_c, per_chunk_calls, probe_c):
        assert [float(cl["eos_logit"]) for cl in calls] == probe[: len(calls)]
        queued = len(calls) - (1 if _eos_fired(model, calls) else 0)
        runs_c.append(describe_chunk_run(model, chunk, calls, queued))
        total += queued
    assert total == len(audio_chunks_c), (total, len(audio_chunks_c))
    assert any(r["frames"] > 20 for r in runs_c), runs_c
    audio_c = torch.cat(audio_chunks_c, dim=0)
    stages["multi.latents"] = torch.cat(
        [cl["latent"] for calls, r in zip(per_chunk_calls, runs_c) for cl in calls[: r["frames"]]],
        dim=1,
    )
    stages["multi.audio"] = audio_c

    cli_args = [
        "-m", "pocket_tts", "generate",
        "--config", CONFIG_FILE,
        "--voice", VOICE_FILE,
        "--temperature", "0",
        "--text", TEXT_C,
        "--max-tokens", str(MAX_TOKENS_C),
        "--eos-threshold", repr(eos_threshold),
        "--output-path", MULTI_CHUNK_FILE,
    ]  # fmt: skip
    commands["multi_chunk_cwd"] = rel(out_dir)
    commands["multi_chunk"] = "python " + shlex.join(cli_args)
    cli_check = None
    if not args.skip_cli:
        subprocess.run([sys.executable, *cli_args], cwd=out_dir, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cli_check = compare_cli_wav(out_dir / MULTI_CHUNK_FILE, audio_c, model.sample_rate)

    # 11. Save.
    stages = {k: v.detach().contiguous() for k, v in stages.items()}
    for k, v in stages.items():
        assert v.dtype in (torch.float32, torch.int64), (k, v.dtype)
        assert torch.isfinite(v.float()).all(), k
    safetensors.torch.save_file(stages, str(out_dir / STAGES_FILE))

    meta = build_meta(
        model=model, ck=ck, commands=commands, stages=stages, voice_info=voice_info,
        voice_state_keys=voice_state_keys, eos_threshold=eos_threshold, eos_margin=eos_margin,
        probe_b=probe_b, probe_c=probe_c, run_b=run_b, chunks_b=chunks_b, gen_calls=gen_calls,
        n_frames=n_frames, prepared_a=prepared_a, chunks_c=chunks_c, runs_c=runs_c,
        cli_check=cli_check, assets=assets, out_dir=out_dir,
    )  # fmt: skip
    (out_dir / META_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    print_summary(out_dir, stages)


def _eos_fired(model: TTSModel, calls: list[dict]) -> bool:
    return any(c["is_eos"] and i >= model._MIN_FRAMES_BEFORE_EOS for i, c in enumerate(calls))


def compare_cli_wav(path: Path, audio: torch.Tensor, sample_rate: int) -> dict:
    """The CLI wav vs the in-process audio written the way StreamingWAVWriter writes it."""
    with wave.open(str(path), "rb") as w:
        assert w.getframerate() == sample_rate and w.getsampwidth() == 2
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
    silence = int(sample_rate * 0.2)
    expected = (audio.clamp(-1, 1) * 32767).short().numpy()
    assert pcm.shape[0] == expected.shape[0] + silence, (pcm.shape, expected.shape)
    assert not pcm[expected.shape[0]:].any()
    diff = np.abs(pcm[: expected.shape[0]].astype(np.int32) - expected.astype(np.int32))
    return {
        "samples": int(pcm.shape[0]),
        "speech_samples": int(expected.shape[0]),
        "trailing_silence_samples": silence,
        "max_abs_diff_lsb_vs_in_process": int(diff.max()),
        "num_samples_differing_vs_in_process": int((diff > 0).sum()),
    }


def build_meta(**kw) -> dict:
    model: TTSModel = kw["model"]
    stages = kw["stages"]
    out_dir: Path = kw["out_dir"]
    from importlib.metadata import version

    files = {}
    for name in [CONFIG_FILE, mc.WEIGHTS_FILE_NAME, STAGES_FILE, VOICE_FILE, VOICE_STATE_FILE,
                 MULTI_CHUNK_FILE]:
        p = out_dir / name
        if p.exists():
            files[name] = {"bytes": p.stat().st_size, "sha256": sha256_file(p)}
    run_b = kw["run_b"]
    gen_calls = kw["gen_calls"]
    n_frames = kw["n_frames"]
    return {
        "description": "Parity fixtures of the tiny random-weight Pocket TTS model, computed "
        "with the Python reference pocket-tts==4.0.1. See scripts/reference/README.md.",
        "versions": {
            "pocket-tts": version("pocket-tts"),
            "torch": torch.__version__,
            "numpy": np.__version__,
            "safetensors": version("safetensors"),
            "sentencepiece": version("sentencepiece"),
            "python": platform.python_version(),
        },
        "commands": kw["commands"],
        "checkpoint": {
            "size": "tiny",
            "seed": SEED,
            "config": CONFIG_FILE,
            "weights": mc.WEIGHTS_FILE_NAME,
            "num_tensors": kw["ck"]["num_tensors"],
            "num_values": kw["ck"]["num_values"],
            "tokenizer": "tokenizer.model = symlink to $POCKET_TTS_ASSETS/tokenizer.model "
            "(sha256 d461765ae179566678c93091c5fa6f2984c31bbe990bf1aa62d92c64d91bc3f6), "
            "not committed",
            "randomised": kw["ck"]["randomised"],
        },
        "files": files,
        "tensors": {k: {"shape": list(v.shape), "dtype": str(v.dtype).removeprefix("torch.")}
                    for k, v in stages.items()},
        "cond": {"text": TEXT_A, "prepared_text": kw["prepared_a"],
                 "tokens": stages["cond.tokens"][0].tolist()},
        "backbone": {"state": f"init_states(flow_lm, batch_size=1, sequence_length="
                              f"{BACKBONE_STATE_LEN})",
                     "sequence": "empty [1, 0, 16]"},
        "flow": {"input_seed": INPUT_SEED, "generator": "torch.Generator().manual_seed(seed); "
                 "c = randn(5, 64), then x = randn(5, 16)", "s": FLOW_S, "t": FLOW_T,
                 "lsd_steps": [1, 4]},
        "voice": {
            "excerpt": VOICE_FILE,
            "source": f"$POCKET_TTS_ASSETS/{VOICE_SOURCE}",
            "seconds": VOICE_SECONDS,
            **kw["voice_info"],
            "provenance": "First 1.5 s of pocket_tts_phrase_00.wav, copied sample for sample "
            "(PCM16, 24 kHz mono). That file is an utterance generated by the official Python "
            "Pocket TTS (Kyutai's CC-BY-4.0 model, voice 'alba'), from the validation outputs of "
            "UnaMentis/pocket-tts-ios (MIT). This short derivative excerpt is committed as a test "
            "input of our fixtures, so that the Rust tests start from the same file.",
            "audio_prepared_samples": stages["voice.audio_prepared"].shape[-1],
            "latent_frames": stages["voice.latents"].shape[1],
            "state_file": VOICE_STATE_FILE,
            "state_tensors": kw["voice_state_keys"],
            "state_note": "export_model_state(get_state_for_audio_prompt(Path('voice_excerpt."
            "wav'))): KV caches are sized to the prompt (1 BOS + F latent frames) and offset = "
            "F + 1; _generate expands them (NaN-filled) before the text prefill.",
        },
        "generation": {
            "text": TEXT_B,
            "chunks": kw["chunks_b"],
            "max_tokens": MAX_TOKENS_B,
            "temperature": 0.0,
            "sampler_decode_steps": model.sampler_decode_steps,
            "noise_clamp": model.noise_clamp,
            "eos_threshold": kw["eos_threshold"],
            "eos_threshold_margin": round(kw["eos_margin"], 4),
            "eos_threshold_rule": "see choose_eos_threshold in make_fixtures.py: EOS fires for "
            f"text B at a step in {list(EOS_STEP_RANGE)} and in every chunk of text C, one chunk "
            "of C is > 20 frames, and E (2 decimals) is as far as possible from every logit the "
            "stop decision looks at; logits from runs that never stop",
            "min_frames_before_eos": model._MIN_FRAMES_BEFORE_EOS,
            "frames_after_eos": run_b["frames_after_eos"],
            "eos_step": run_b["eos_step"],
            "frames": n_frames,
            "max_gen_len": run_b["max_gen_len"],
            "samples": n_frames * model.mimi.frame_size,
            "break_step_eos_logit": float(gen_calls[n_frames]["eos_logit"])
            if len(gen_calls) > n_frames else None,
            "eos_logits_without_eos_all_steps": [round(v, 6) for v in kw["probe_b"]],
            "mimi_decoding": "max_decoder_frames_per_call = 1 (one frame per decode call, "
            "deterministic); the first 5 ms (120 samples) of gen.audio are faded in by the "
            "decoder worker",
            "generate_call": "TTSModel.load_model(config='config.yaml', temp=0.0, eos_threshold="
            f"{kw['eos_threshold']}) with cwd = fixture dir; model.generate_audio_stream("
            f"voice_state, TEXT_B, max_tokens={MAX_TOKENS_B}) (frames_after_eos=None)",
        },
        "multi_chunk": {
            "text": TEXT_C,
            "max_tokens": MAX_TOKENS_C,
            "chunks": kw["chunks_c"],
            "per_chunk": kw["runs_c"],
            "eos_logits_without_eos_all_steps": [[round(v, 6) for v in p] for p in kw["probe_c"]],
            "output": MULTI_CHUNK_FILE,
            "cwd": ".",
            "command": kw["commands"]["multi_chunk"],
            "wav_format": "PCM16 24 kHz mono as StreamingWAVWriter writes it: "
            "int16(clamp(x, -1, 1) * 32767) (truncation toward zero), then 0.2 s of zeros",
            "cli_vs_in_process": kw["cli_check"],
            "note": "The CLI decodes with max_decoder_frames_per_call = 0 (whatever is queued, "
            "thread timing dependent); the in-process record decodes frame by frame.",
        },
    }


def print_summary(out_dir: Path, stages: dict[str, torch.Tensor]) -> None:
    print()
    print(f"{'tensor':28s} {'dtype':8s} {'shape':18s} {'bytes':>10s}")
    for k, v in stages.items():
        nbytes = v.numel() * v.element_size()
        print(f"{k:28s} {str(v.dtype).removeprefix('torch.'):8s} {str(list(v.shape)):18s} "
              f"{nbytes:>10,d}")
    print()
    print(f"{'file':28s} {'bytes':>12s}")
    total = 0
    for p in sorted(out_dir.iterdir()):
        if p.is_symlink() or not p.is_file():
            continue
        total += p.stat().st_size
        print(f"{p.name:28s} {p.stat().st_size:>12,d}")
    print(f"{'total (committed files)':28s} {total:>12,d}")
    assert total < 8_000_000, total
    print(f"\nstages.safetensors sha256 {sha256_file(out_dir / STAGES_FILE)}")


if __name__ == "__main__":
    main()
