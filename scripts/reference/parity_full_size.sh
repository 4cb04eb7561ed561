#!/usr/bin/env bash
# Full-size end-to-end parity: our Rust CLI vs the Python reference CLI (pocket-tts==4.0.1)
# on a random-weight checkpoint with exactly config/english.yaml's architecture.
#
#   scripts/reference/parity_full_size.sh
#
# Steps (each one idempotent):
#   1. reference venv: scripts/reference/setup_venv.sh ($REFERENCE_VENV, default
#      <repo>/.venv-reference; an existing venv such as /tmp/venv is reused as is when its
#      requirements stamp matches);
#   2. FULL-size random checkpoint (make_checkpoint.py --size full --seed $PARITY_SEED) in
#      $PARITY_WORK_DIR/checkpoint (default /tmp/pocket-tts-parity; must be outside the repo),
#      with tokenizer.model symlinked from $POCKET_TTS_ASSETS (default <repo>/../shared/assets);
#      reused when its stamp (seed + sha256 of make_checkpoint.py + weights sha256) matches;
#   3. `cargo build --release -p pocket-tts-cli` (waits for the cargo lock if another build runs);
#   4. both CLIs' `generate` on the same config, voice file and text, temperature 0;
#   5. compares the two WAVs (int16 / 32768): number of samples, max abs error, SNR, and prints
#      both tools' timing lines. Exit status 1 if the lengths differ or
#      max |ours - ref| > 1e-3 + 1 LSB (1/32768);
#   6. seeded runs at temperature > 0 ($PARITY_SEEDED): the reference as a Python user seeds
#      it (run_reference_seeded.py: `torch.manual_seed(SEED)` right before the generation)
#      and ours with `--seed SEED --temperature T [--noise-clamp C]`, compared the same way
#      (our noise is torch's draw for draw, see crates/pocket-tts-core/src/torch_rng).
#
# Inputs (environment, all optional):
#   PARITY_WORK_DIR      work dir (default /tmp/pocket-tts-parity)
#   PARITY_SEED          checkpoint seed (default 0)
#   PARITY_TEXT          text (default: two sentences that split into 2 chunks at 16 tokens)
#   PARITY_MAX_TOKENS    --max-tokens (default 16)
#   PARITY_EOS_THRESHOLD --eos-threshold (default 1000, see below)
#   PARITY_VOICE         voice file (default $POCKET_TTS_ASSETS/speech/pocket_tts_phrase_01.wav)
#   PARITY_BACKENDS      our backends to run, each compared with the reference and the later
#                        ones with the first (default "cpu candle": the fast runtime and the
#                        Candle modules, `--backend`)
#   PARITY_CLI           our CLI binary to use instead of building target/release
#   PARITY_SEEDED        seeded runs, space-separated SEED:TEMPERATURE[:NOISE_CLAMP]
#                        (default "42:0.3 42:0.7 7:0.3:1 7:0.7:1"; empty: none)
#   PARITY_SEEDED_ONLY   1: skip the temperature-0 comparison (steps 4-5)
#   PARITY_FLOW_TYPE     flow head sampler of the checkpoint: empty (english.yaml's, lsd; in
#                        $PARITY_WORK_DIR/checkpoint) or lsd|flow_matching|drifting|pointwise
#                        (make_checkpoint_variant.py, in $PARITY_WORK_DIR/checkpoint_TYPE)
#   CARGO                cargo binary (default cargo)
#
# EOS threshold. On this random checkpoint (seed 0) the EOS logit of every generation step
# is between ~55 and ~85 and *decreases* step after step (e.g. chunk 1: 84.2 at step 1,
# 74.7 at step 6, 55.6 at step 83). EOS is ignored on steps 0-5, and `logit > threshold`
# with a decreasing logit either fires at step 6 (threshold < ~74.7: 6 + frames_after_eos
# frames only) or never. So the default is 1000, far above every logit: EOS never fires,
# every chunk runs to its max_gen_len = ceil((tokens / 3 + 2) * 12.5) frames (84 + 67 frames
# = 6.7 s + 5.4 s here; the reference warns "Maximum generation length reached without
# EOS"), and a tiny numerical difference cannot flip a stop decision.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${REFERENCE_VENV:-$repo/.venv-reference}"
assets="${POCKET_TTS_ASSETS:-$repo/../shared/assets}"
work="${PARITY_WORK_DIR:-/tmp/pocket-tts-parity}"
seed="${PARITY_SEED:-0}"
text="${PARITY_TEXT:-The quick brown fox jumps over the lazy dog. Goodbye for now, see you soon.}"
max_tokens="${PARITY_MAX_TOKENS:-16}"
eos_threshold="${PARITY_EOS_THRESHOLD:-1000}"
cargo="${CARGO:-cargo}"
read -r -a backends <<<"${PARITY_BACKENDS:-cpu candle}"
read -r -a seeded <<<"${PARITY_SEEDED-42:0.3 42:0.7 7:0.3:1 7:0.7:1}"
seeded_only="${PARITY_SEEDED_ONLY:-0}"
flow_type="${PARITY_FLOW_TYPE:-}"

die() { echo "parity_full_size: error: $*" >&2; exit 2; }
step() { printf '\n== %s\n' "$*"; }

[[ -d "$assets" ]] || die "assets dir $assets not found (set POCKET_TTS_ASSETS)"
assets="$(cd "$assets" && pwd)"
[[ -f "$assets/tokenizer.model" ]] || die "$assets/tokenizer.model not found"
voice="${PARITY_VOICE:-$assets/speech/pocket_tts_phrase_01.wav}"
[[ -f "$voice" ]] || die "voice file $voice not found"
voice="$(cd "$(dirname "$voice")" && pwd)/$(basename "$voice")"

mkdir -p "$work"
work="$(cd "$work" && pwd -P)"
case "$work/" in
    "$(cd "$repo" && pwd -P)/"*) die "PARITY_WORK_DIR ($work) must be outside the repository" ;;
esac
ckpt="$work/checkpoint${flow_type:+_$flow_type}"
out="$work/out${flow_type:+_$flow_type}"
mkdir -p "$ckpt" "$out"

# ---------------------------------------------------------------- 1. reference venv
step "reference venv ($venv)"
REFERENCE_VENV="$venv" "$repo/scripts/reference/setup_venv.sh"
py="$venv/bin/python"
"$py" -c 'import numpy, soundfile, pocket_tts' || die "venv $venv lacks numpy/soundfile/pocket_tts"

# ---------------------------------------------------------------- 2. checkpoint
step "full-size random checkpoint (seed $seed${flow_type:+, flow type $flow_type}) in $ckpt"
stamp="$ckpt/.parity_stamp"
want_stamp="seed=$seed make_checkpoint=$(sha256sum "$repo/scripts/reference/make_checkpoint.py" | cut -d' ' -f1)"
if [[ -n "$flow_type" ]]; then
    want_stamp="$want_stamp flow_type=$flow_type variant=$(sha256sum "$repo/scripts/reference/make_checkpoint_variant.py" | cut -d' ' -f1)"
fi
have_stamp=""
if [[ -f "$stamp" && -f "$ckpt/model.safetensors" && -f "$ckpt/config.yaml" ]]; then
    # The stamp's second line is the weights' sha256: a truncated/overwritten file is redone.
    if [[ "$(head -n1 "$stamp")" == "$want_stamp" \
          && "$(sed -n 2p "$stamp")" == "$(sha256sum "$ckpt/model.safetensors" | cut -d' ' -f1)" ]]; then
        have_stamp=yes
    fi
fi
if [[ -n "$have_stamp" ]]; then
    echo "reusing $ckpt/model.safetensors (stamp matches)"
else
    rm -f "$stamp"
    if [[ -n "$flow_type" ]]; then
        POCKET_TTS_ASSETS="$assets" "$py" "$repo/scripts/reference/make_checkpoint_variant.py" \
            --flow-type "$flow_type" --size full --seed "$seed" --out "$ckpt"
    else
        POCKET_TTS_ASSETS="$assets" "$py" "$repo/scripts/reference/make_checkpoint.py" \
            --size full --seed "$seed" --out "$ckpt" --config "$ckpt/config.yaml"
    fi
    { echo "$want_stamp"; sha256sum "$ckpt/model.safetensors" | cut -d' ' -f1; } >"$stamp"
fi
# make_checkpoint.py creates the link; keep it pointing at this run's assets.
ln -sfn "$assets/tokenizer.model" "$ckpt/tokenizer.model"

# ---------------------------------------------------------------- 3. our CLI
if [[ -n "${PARITY_CLI:-}" ]]; then
    step "our CLI: $PARITY_CLI (PARITY_CLI; not rebuilt)"
    cli="$PARITY_CLI"
else
    step "cargo build --release -p pocket-tts-cli"
    (cd "$repo" && "$cargo" build --release -p pocket-tts-cli)
    cli="$repo/target/release/pocket-tts-cli"
fi
[[ -x "$cli" ]] || die "$cli was not built"

# ---------------------------------------------------------------- 4. generate with both
# stderr (+stdout) of each run is timestamped (seconds since the process started) into a log.
stamp_lines() {
    "$py" -u -c '
import sys, time
t0 = float(sys.argv[1])
for line in sys.stdin:
    sys.stdout.write(f"[{time.time() - t0:8.3f}s] {line}")
' "$1"
}
run_logged() { # LOG CWD CMD...
    local log="$1" cwd="$2"; shift 2
    local t0 rc=0
    t0="$(date +%s.%N)"
    (cd "$cwd" && "$@") 2>&1 | stamp_lines "$t0" >"$log" || rc=$?
    echo "$t0 $(date +%s.%N)" >"$log.wall"
    if [[ $rc -ne 0 ]]; then
        # The reference CLI sometimes aborts at interpreter exit, after writing its output
        # ("terminate called without an active exception", SIGABRT, exit 134: its daemon
        # generation/decoder threads at shutdown). Its WAV is complete by then.
        if [[ $rc -eq 134 ]] && grep -q "Results written in" "$log" \
            && grep -q "terminate called without an active exception" "$log"; then
            echo "warning: the reference aborted at exit (exit 134) after writing its output; ignored" >&2
            return 0
        fi
        echo "---- $log" >&2; tail -n 30 "$log" >&2
        die "command failed (exit $rc): $*"
    fi
}

common=(--voice "$voice" --text "$text" --temperature 0 --eos-threshold "$eos_threshold"
        --max-tokens "$max_tokens")
rm -f "$out/reference.wav" "$out"/ours*.wav "$out"/seeded_*.wav
if [[ "$seeded_only" != 1 ]]; then

step "reference: python -m pocket_tts generate (cwd $ckpt)"
# The reference resolves the config's relative paths against its cwd: run it from $ckpt.
run_logged "$out/reference.log" "$ckpt" \
    "$py" -m pocket_tts generate --config config.yaml "${common[@]}" \
    --output-path "$out/reference.wav"
echo "wrote $out/reference.wav"

for b in "${backends[@]}"; do
    step "ours: pocket-tts-cli generate --backend $b"
    run_logged "$out/ours_$b.log" "$work" \
        "$cli" generate --config "$ckpt/config.yaml" "${common[@]}" --backend "$b" \
        --output-path "$out/ours_$b.wav"
    echo "wrote $out/ours_$b.wav"
done
# The timing table shows the first backend.
cp "$out/ours_${backends[0]}.log" "$out/ours.log"
cp "$out/ours_${backends[0]}.log.wall" "$out/ours.log.wall"

# ---------------------------------------------------------------- 5. compare
step "timings (from each tool's own log lines; [t] = seconds since process start)"
fi
[[ "$seeded_only" == 1 ]] || {
"$py" - "$out/reference.log" "$out/ours.log" <<'EOF'
import re, sys

def read(path):
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    t0, t1 = map(float, open(path + ".wall").read().split())
    return lines, t1 - t0

def ts(line):
    return float(re.match(r"\[\s*([0-9.]+)s\]", line).group(1))

def ms_sum(lines, pattern):
    vals = [float(m.group(1)) for l in lines if (m := re.search(pattern, l))]
    return (sum(vals), len(vals)) if vals else (None, 0)

ref, ref_wall = read(sys.argv[1])
ours, ours_wall = read(sys.argv[2])

r = {"wall": ref_wall * 1000}
load_start = next((ts(l) for l in ref if "Loading model from config" in l), None)
enc_line = next((l for l in ref if "Encoding audio prompt took" in l), None)
if load_start is not None and enc_line is not None:
    enc = float(re.search(r"took (\d+) ms", enc_line).group(1))
    r["python start + imports"] = load_start * 1000
    r["model load"] = (ts(enc_line) - load_start) * 1000 - enc  # includes the wav read
    r["voice"] = enc + (ms_sum(ref, r"Prompting audio took (\d+) ms")[0] or 0)
r["text prefill"], n = ms_sum(ref, r"Prompting text took (\d+) ms")
r["generation"], _ = ms_sum(ref, r"Generated: \d+ ms of audio in (\d+) ms")
audio, _ = ms_sum(ref, r"Generated: (\d+) ms of audio")
r["audio"] = audio
if audio and r["generation"]:
    r["RTF (gen/audio)"] = r["generation"] / audio

o = {"wall": ours_wall * 1000}
def grab(pattern, lines=ours):
    for l in lines:
        if m := re.search(pattern, l):
            return float(m.group(1))
    return None
o["model load"] = grab(r"model loaded in (\d+) ms")
o["voice"] = grab(r"ready in (\d+) ms")
o["text prefill"] = grab(r"text prefill (\d+) ms")
o["first audio"] = grab(r"first audio after (\d+) ms")
o["generation"] = grab(r"generation (\d+) ms")
a = grab(r"audio ([0-9.]+) s, real-time")
o["audio"] = a * 1000 if a is not None else None
o["RTF (gen/audio)"] = grab(r"real-time factor ([0-9.]+)")

keys = ["wall", "python start + imports", "model load", "voice", "text prefill", "first audio",
        "generation", "audio", "RTF (gen/audio)"]
fmt = lambda v, k: "n/a" if v is None else (f"{v:.3f}" if k.startswith("RTF") else f"{v:.0f} ms")
print(f"{'':24} {'reference':>14} {'ours':>14}")
for k in keys:
    if k in r or k in o:
        print(f"{k:24} {fmt(r.get(k), k):>14} {fmt(o.get(k), k):>14}")
print(f"(reference: {n} chunk(s); its model load is derived from log timestamps, its text "
      "prefill and generation are summed over chunks, it reports no first-audio time)")
print("\n-- reference log lines (timing-related):")
keep = re.compile(r"took|Generated|Loading|step time|without EOS|warn", re.I)
for l in ref:
    if keep.search(l):
        print("  " + l)
print("-- our log lines:")
for l in ours:
    if re.search(r"loaded|ready|prefill|audio|warn", l, re.I):
        print("  " + l)
EOF
}

compare() { # LABEL A.wav B.wav
    step "compare WAVs: $1 (int16 / 32768)"
    "$py" - "$2" "$3" <<'EOF'
import sys
import numpy as np
import soundfile as sf

LSB = 1.0 / 32768
TOL = 1e-3 + LSB
(ref, sr_r), (ours, sr_o) = (sf.read(p, dtype="int16", always_2d=False) for p in sys.argv[1:3])
ref = ref.astype(np.float64) / 32768
ours = ours.astype(np.float64) / 32768
print(f"samples: reference {ref.size} ({ref.size / sr_r:.3f} s @ {sr_r} Hz), "
      f"ours {ours.size} ({ours.size / sr_o:.3f} s @ {sr_o} Hz)")
ok = ref.size == ours.size and sr_r == sr_o
if not ok:
    print("FAIL: lengths or sample rates differ")
n = min(ref.size, ours.size)
err = np.abs(ours[:n] - ref[:n])
max_err = float(err.max()) if n else 0.0
noise = float(np.sum((ours[:n] - ref[:n]) ** 2))
signal = float(np.sum(ref[:n] ** 2))
snr = float("inf") if noise == 0 else 10 * np.log10(signal / noise)
print(f"max abs error: {max_err:.3e} ({max_err / LSB:.1f} LSB) at sample "
      f"{int(err.argmax()) if n else -1}; tolerance {TOL:.3e}")
print(f"SNR ours vs reference: {snr:.2f} dB; samples differing: {int(np.count_nonzero(err))} / {n}"
      f" (> 1 LSB: {int(np.count_nonzero(err > LSB * 1.5))}); reference RMS {np.sqrt(signal / max(n, 1)):.4f}")
if n:
    bad = np.nonzero(err > TOL)[0]
    if bad.size:
        print(f"first sample over tolerance: {bad[0]} ({bad[0] / sr_r:.3f} s, frame {bad[0] // 1920})")
    # Max error per second, to see where a divergence starts.
    per_s = [f"{err[i:i + sr_r].max() / LSB:.0f}" for i in range(0, n, sr_r)]
    print("max error per second (LSB):", " ".join(per_s))
if max_err > TOL:
    ok = False
    print("FAIL: max abs error above tolerance")
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
EOF
}
status=0
if [[ "$seeded_only" != 1 ]]; then
    for b in "${backends[@]}"; do
        compare "ours --backend $b vs the reference" "$out/reference.wav" "$out/ours_$b.wav" || status=1
    done
    for b in "${backends[@]:1}"; do
        compare "ours --backend $b vs --backend ${backends[0]}" "$out/ours_${backends[0]}.wav" \
            "$out/ours_$b.wav" || status=1
    done
fi

# ---------------------------------------------------------------- 6. seeded, temperature > 0
for spec in "${seeded[@]}"; do
    IFS=: read -r s_seed s_temp s_clamp <<<"$spec"
    [[ -n "$s_seed" && -n "$s_temp" ]] || die "PARITY_SEEDED entry '$spec' is not SEED:TEMPERATURE[:NOISE_CLAMP]"
    tag="s${s_seed}_t${s_temp}${s_clamp:+_c$s_clamp}"
    flags=(--voice "$voice" --text "$text" --temperature "$s_temp" --eos-threshold "$eos_threshold"
           --max-tokens "$max_tokens" ${s_clamp:+--noise-clamp "$s_clamp"})
    step "seeded reference: torch.manual_seed($s_seed), ${flags[*]:4}"
    run_logged "$out/seeded_${tag}_reference.log" "$ckpt" \
        "$py" "$repo/scripts/reference/run_reference_seeded.py" "$s_seed" --config config.yaml \
        "${flags[@]}" --output-path "$out/seeded_${tag}_reference.wav"
    for b in "${backends[@]}"; do
        step "seeded ours: --seed $s_seed ${flags[*]:4} --backend $b"
        run_logged "$out/seeded_${tag}_ours_$b.log" "$work" \
            "$cli" generate --config "$ckpt/config.yaml" "${flags[@]}" --seed "$s_seed" \
            --backend "$b" --output-path "$out/seeded_${tag}_ours_$b.wav"
        compare "seeded $tag: ours --backend $b vs the reference" \
            "$out/seeded_${tag}_reference.wav" "$out/seeded_${tag}_ours_$b.wav" || status=1
    done
done
exit $status
