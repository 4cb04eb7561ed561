#!/usr/bin/env python3
"""Markdown report of one scripts/bench/vs_python.sh run.

    python scripts/bench/report.py RUN_DIR

RUN_DIR holds meta.env, texts.tsv, cmd/*.sh and raw/: hyperfine's JSON (hf_<text>.<round>.json),
each in-process run's JSON (<tool>_<kind>.<round>.json), log, GNU time output (peak RSS KiB,
wall, user, sys) and the 1-minute load average before it. Our runs without a JSON (a CLI
without --stats-json) are read from their log lines.

Every figure is the median over the rounds with the min–max spread; the ratio is
Python / ours (> 1: ours is faster or smaller).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path


def load_meta(run: Path) -> dict:
    meta = {}
    for line in (run / "meta.env").read_text().splitlines():
        k, _, v = line.partition("=")
        meta[k] = v
    return meta


def rounds_of(raw: Path, name: str) -> list[int]:
    found = set()
    for p in raw.glob(f"{name}.*"):
        m = re.fullmatch(re.escape(name) + r"\.(\d+)\.\w+", p.name)
        if m:
            found.add(int(m.group(1)))
    return sorted(found)


def read_time(path: Path) -> dict:
    if not path.exists():
        return {}
    parts = path.read_text().split()
    try:
        rss_kb, wall, user, sys_ = (float(x) for x in parts[-4:])
    except ValueError:
        return {}
    return {"time_rss_mb": rss_kb / 1024, "wall_s": wall, "cpu_s": user + sys_}


def parse_our_log(text: str) -> dict:
    """Figures from our CLI's log lines (a CLI without --stats-json)."""
    d: dict = {}

    def grab(pattern):
        m = re.search(pattern, text)
        return m

    if m := grab(r"model loaded in (\d+) ms"):
        d["load_ms"] = float(m.group(1))
    if m := grab(r"ready in (\d+) ms"):
        d["voice_ms"] = float(m.group(1))
    if m := grab(
        r"text prefill (\d+) ms, first audio after (\d+) ms, generation (\d+) ms "
        r"\((\d+) frames in (\d+) chunks: FlowLM (\d+) ms, Mimi (\d+) ms\)"
    ):
        prefill, first, gen, frames, _chunks, lm, mimi = (float(x) for x in m.groups())
        d.update(
            prefill_ms=prefill,
            first_chunk_ms=first,
            generation_ms=gen,
            frames=int(frames),
            audio_ms=frames * 80.0,
            rtf=gen / (frames * 80.0) if frames else None,
            lm_step_ms={"mean": lm / frames if frames else None},
            decode_frame_ms={"mean": mimi / frames if frames else None},
        )
    return d


def load_run(raw: Path, name: str, r: int) -> dict:
    def at(ext: str) -> Path:
        return raw / f"{name}.{r}{ext}"

    d: dict = {}
    js = at(".json")
    if js.exists():
        d = json.loads(js.read_text())
        d["source"] = "json"
    elif (log := at(".log")).exists():
        d = parse_our_log(log.read_text(errors="replace"))
        d["source"] = "log"
    d.update(read_time(at(".time")))
    if (ld := at(".load")).exists():
        d["load"] = float(ld.read_text().split()[0])
    if d.get("peak_rss_mb") is None and "time_rss_mb" in d:
        d["peak_rss_mb"] = d["time_rss_mb"]
        d["rss_source"] = "GNU time"
    return d


def get(d: dict, path: str):
    cur = d
    for k in path.split("."):
        if not isinstance(cur, dict) or k not in cur or cur[k] is None:
            return None
        cur = cur[k]
    return cur


def first_chunk_scalar(d: dict):
    v = d.get("first_chunk_ms")
    if isinstance(v, dict):
        return v.get("p50")
    return v


def steady_frame_ms(d: dict):
    gen, first, frames = d.get("generation_ms"), first_chunk_scalar(d), d.get("frames")
    ff = d.get("first_chunk_frames") or 1
    if gen is None or first is None or not frames or frames <= ff:
        return None
    return (gen - first) / (frames - ff)


def stats(values: list) -> tuple | None:
    v = [x for x in values if x is not None]
    if not v:
        return None
    return statistics.median(v), min(v), max(v), len(v)


def fmt(s: tuple | None, digits: int) -> str:
    if s is None:
        return "n/a"
    med, lo, hi, _ = s
    return f"{med:.{digits}f} ({lo:.{digits}f}–{hi:.{digits}f})"


def ratio(a: tuple | None, b: tuple | None) -> str:
    if a is None or b is None or not b[0]:
        return ""
    return f"{a[0] / b[0]:.2f}"


def main() -> int:
    run = Path(sys.argv[1])
    raw = run / "raw"
    meta = load_meta(run)
    texts = dict(
        line.split("\t", 1) for line in (run / "texts.tsv").read_text().splitlines() if line
    )
    out: list[str] = []
    p = out.append

    p(f"Run `{run}`.")
    p("")
    p(f"* Machine: {meta.get('machine', '?')}.")
    p(f"* Ours: `pocket-tts-cli` from the {meta.get('cli_desc')} (sha256 "
      f"`{meta.get('cli_sha256', '')[:16]}…`); `--stats-json`: {meta.get('has_stats')}, "
      f"`stream --measure-first-chunk`: {meta.get('has_stream')}, `--threads`: "
      f"{meta.get('threads_arg') or 'not passed (default)'}.")
    p(f"* Weights: ours with `{meta.get('our_args') or 'f32 (no extra flags)'}`, the reference "
      f"with `{meta.get('ref_args') or 'f32 (no extra flags)'}`.")
    p(f"* Reference: pocket-tts 4.0.1, torch {meta.get('torch')} (it sets "
      "`torch.set_num_threads(1)`; FlowLM and Mimi decoding run on its two threads).")
    p(f"* Checkpoint: full-size random weights, seed {meta.get('seed')} "
      f"(`make_checkpoint.py --size full`), `{meta.get('checkpoint')}`; temperature 0, "
      f"`--eos-threshold {meta.get('eos')}` (EOS never fires: every chunk runs to "
      f"`ceil((tokens / 3 + 2) * 12.5)` frames), `--max-tokens {meta.get('max_tokens')}`; voice "
      f"`{meta.get('voice')}`.")
    p(f"* {meta.get('rounds')} rounds, tools interleaved (order alternating between rounds). "
      "Figures: median (min–max) over the rounds; ratio = Python / ours (> 1: ours faster or "
      "smaller).")
    p("")

    # ---------------------------------------------------------------- (a) hyperfine
    hf_rows = []
    for t, text in texts.items():
        per_tool: dict[str, list[float]] = {"ours": [], "ref": []}
        loads = []
        for r in rounds_of(raw, f"hf_{t}"):
            f = raw / f"hf_{t}.{r}.json"
            if not f.exists():
                continue
            for res in json.loads(f.read_text())["results"]:
                tool = res["command"].split("_", 1)[0]
                per_tool.setdefault(tool, []).extend(res["times"])
            if (ld := raw / f"hf_{t}.{r}.load").exists():
                loads.append(float(ld.read_text()))
        if per_tool["ours"] or per_tool["ref"]:
            hf_rows.append((t, text, stats(per_tool["ref"]), stats(per_tool["ours"]), loads))
    if hf_rows:
        p("### (a) Whole process: `generate` (start-up, model load, voice ref.wav, generation, WAV)")
        p("")
        p("hyperfine, one run per tool per round. Wall time in seconds.")
        p("")
        p("| text | frames (audio) | Python median (min–max) | ours median (min–max) | Python / ours |")
        p("|---|---|---|---|---|")
        for t, text, ref, ours, loads in hf_rows:
            n = frames_of(run, t)
            words = len(text.split())
            p(f"| {t} ({words} words) | {n} | {fmt(ref, 2)} | {fmt(ours, 2)} | {ratio(ref, ours)} |")
        all_loads = [x for row in hf_rows for x in row[4]]
        if all_loads:
            p("")
            p(f"1-minute load average before the hyperfine calls: {min(all_loads):.2f}–"
              f"{max(all_loads):.2f} (2 CPUs).")
        p("")

    # ---------------------------------------------------------------- (b) in-process
    runs = {
        f"{tool}_{kind}": [load_run(raw, f"{tool}_{kind}", r) for r in rounds_of(raw, f"{tool}_{kind}")]
        for tool in ("ours", "ref")
        for kind in ("voice", "steady", "first")
    }
    if any(runs.values()):
        it = meta.get("inproc_text", "medium")
        fc = meta.get("fc_runs")
        p("### (b) In process, from each tool's own report")
        p("")
        p("| metric | Python median (min–max) | ours median (min–max) | Python / ours |")
        p("|---|---|---|---|")

        def row(label, kind, fn, digits=0, rows_ref=None, rows_ours=None):
            ref = stats([fn(d) for d in (rows_ref if rows_ref is not None else runs[f"ref_{kind}"])])
            ours = stats([fn(d) for d in (rows_ours if rows_ours is not None else runs[f"ours_{kind}"])])
            if ref is None and ours is None:
                return
            p(f"| {label} | {fmt(ref, digits)} | {fmt(ours, digits)} | {ratio(ref, ours)} |")

        row("model load (ms)", "steady", lambda d: d.get("load_ms"))
        row("voice encoding, speech/jfk_16k.wav (11 s, 16 kHz): read, resample, Mimi encode, "
            "FlowLM prompt (ms)", "voice", lambda d: d.get("voice_ms"))
        # First chunk, warm, N runs per process: per-process p50; spread over every run.
        ref_first, ours_first = runs["ref_first"], runs["ours_first"]
        if ref_first or ours_first:
            def med_spread(rows, key_runs):
                p50s = [get(d, "first_chunk_ms.p50") for d in rows]
                lows = [get(d, "first_chunk_ms.min") for d in rows]
                highs = [get(d, "first_chunk_ms.max") for d in rows]
                p50s = [x for x in p50s if x is not None]
                if not p50s:
                    return None
                return (statistics.median(p50s), min(x for x in lows if x is not None),
                        max(x for x in highs if x is not None), len(p50s))
            ref_s, ours_s = med_spread(ref_first, "ref"), med_spread(ours_first, "ours")
            p(f"| time to first audio, short text, warm: median of each process's p50 over "
              f"{fc} runs (min–max over all runs) (ms) | {fmt(ref_s, 0)} | {fmt(ours_s, 0)} | "
              f"{ratio(ref_s, ours_s)} |")
        row(f"time to first audio, {it} text, first generation of the process (ms)", "steady",
            first_chunk_scalar)
        row(f"text prefill, {it} text (ms)", "steady", lambda d: d.get("prefill_ms"))
        row(f"generation, {it} text: call to last frame (ms)", "steady",
            lambda d: d.get("generation_ms"))
        row(f"RTF = generation / audio, {it} text", "steady", lambda d: d.get("rtf"), 3)
        row("steady state: ms per frame after the first chunk", "steady", steady_frame_ms, 1)
        row("steady-state RTF (ms per frame / 80 ms)", "steady",
            lambda d: (steady_frame_ms(d) or 0) / 80 if steady_frame_ms(d) else None, 3)
        row("FlowLM step, mean (ms)", "steady", lambda d: get(d, "lm_step_ms.mean"), 1)
        row("FlowLM step, p50 (ms)", "steady", lambda d: get(d, "lm_step_ms.p50"), 1)
        row("Mimi decode per frame, mean (ms)", "steady", lambda d: get(d, "decode_frame_ms.mean"), 1)
        row("Mimi decode per frame, p50 (ms)", "steady", lambda d: get(d, "decode_frame_ms.p50"), 1)
        row(f"peak RSS, {it} text (MiB)", "steady", lambda d: d.get("peak_rss_mb"))
        row(f"frames generated, {it} text", "steady", lambda d: d.get("frames"))
        row("whole process CPU time user+sys, steady run (s)", "steady", lambda d: d.get("cpu_s"), 1)
        p("")
        notes = []
        ours_src = {d.get("source") for v in ("ours_voice", "ours_steady") for d in runs[v]}
        if "log" in ours_src:
            notes.append(
                "ours without `--stats-json`: figures parsed from its log lines (whole "
                "milliseconds; FlowLM and Mimi are means of its totals, no p50), peak RSS from "
                "GNU time (`%M`)."
            )
        if not ours_first:
            notes.append(
                "ours has no `stream --measure-first-chunk` yet: the warm first-chunk row has "
                "only the reference."
            )
        notes.append(
            "Python's `first_chunk_frames` (frames in its first yielded chunk: its decoder "
            "thread groups queued frames) is used in the steady-state figure; ours yields one "
            "frame per chunk."
        )
        loads = [d.get("load") for v in runs.values() for d in v if d.get("load") is not None]
        if loads:
            notes.append(
                f"1-minute load average before the in-process runs: {min(loads):.2f}–"
                f"{max(loads):.2f} (2 CPUs)."
            )
        for n in notes:
            p(f"* {n}")
        p("")

        # Raw runs.
        p("<details><summary>raw in-process runs</summary>")
        p("")
        p("| run | load | voice_ms | load_ms | first_ms | gen_ms | frames | rtf | steady ms/frame | lm mean | mimi mean | rss MiB |")
        p("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name, rows in runs.items():
            for i, d in enumerate(rows, 1):
                def f(x, dg=0):
                    return "" if x is None else f"{x:.{dg}f}"
                p(f"| {name}.{i} | {f(d.get('load'), 2)} | {f(d.get('voice_ms'))} | "
                  f"{f(d.get('load_ms'))} | {f(first_chunk_scalar(d))} | "
                  f"{f(d.get('generation_ms'))} | {f(d.get('frames'))} | {f(d.get('rtf'), 3)} | "
                  f"{f(steady_frame_ms(d), 1)} | {f(get(d, 'lm_step_ms.mean'), 1)} | "
                  f"{f(get(d, 'decode_frame_ms.mean'), 1)} | {f(d.get('peak_rss_mb'))} |")
        p("")
        p("</details>")
        p("")

    # ---------------------------------------------------------------- commands
    p("### Commands")
    p("")
    p("```sh")
    for script in sorted((run / "cmd").glob("*.sh")):
        body = [l for l in script.read_text().splitlines()[2:] if l.strip()]
        p(f"# {script.stem}")
        p("\n".join(body))
    p("```")
    print("\n".join(out))
    return 0


def frames_of(run: Path, text: str) -> str:
    """Frames of a text, from the warm-up WAV of our CLI (both tools' WAVs have the same
    length, checked by the script), less the 0.2 s of silence both append."""
    try:
        import soundfile as sf
    except ImportError:
        return "?"
    wav = run / "out" / f"ours_{text}.wav"
    if not wav.exists():
        return "?"
    info = sf.info(str(wav))
    frame = info.samplerate // 12.5
    tail = info.samplerate // 5
    n = (info.frames - tail) / frame
    if n == int(n):
        return f"{int(n)} ({int(n) * 0.08:.2f} s)"
    return f"{info.frames / info.samplerate:.2f} s WAV"


if __name__ == "__main__":
    sys.exit(main())
