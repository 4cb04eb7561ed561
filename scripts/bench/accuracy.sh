#!/usr/bin/env bash
# Accuracy of reduced-precision FlowLM weights on a FULL-size random-weight checkpoint,
# same text, voice, temperature 0 and EOS disabled (so the lengths agree); reports the SNR
# of the whole WAV and per 80 ms frame (median, 10th percentile, worst).
#
#   scripts/bench/accuracy.sh quantize   # --quantize against float, ours and the reference's
#                                        # (pocket-tts==4.0.1) side by side; fails when ours
#                                        # is further from its float output than the reference
#   scripts/bench/accuracy.sh dtype      # --dtype bf16 and f16 against our f32; fails when a
#                                        # dtype's whole-WAV SNR is below ACC_MIN_DB
#
# Environment (all optional):
#   REFERENCE_VENV  a virtualenv with pocket-tts (quantize) or numpy and soundfile (dtype)
#                   (default <repo>/.venv-reference; scripts/reference/setup_venv.sh makes it)
#   ACC_CHECKPOINT  checkpoint folder with config.yaml (default the one of
#                   scripts/reference/parity_full_size.sh, /tmp/pocket-tts-parity/checkpoint,
#                   made by scripts/reference/make_checkpoint.py --size full if missing)
#   ACC_CLI         our binary (default: cargo build --release, target/release/pocket-tts-cli)
#   ACC_TEXT        text (default: two sentences, 2 chunks)
#   ACC_MAX_TOKENS  --max-tokens (default 50)
#   ACC_OUT         output folder (default /tmp/pocket-tts-accuracy-MODE)
#   ACC_EXTRA       extra flags for our CLI in every run (e.g. "--backend candle";
#                   "--quantize" in dtype mode: the int8 transformer in every run)
#   ACC_MIN_DB      dtype mode's pass threshold on the whole-WAV SNR (default 40)
set -euo pipefail

mode="${1:-}"
die() { echo "accuracy.sh: $*" >&2; exit 2; }
case "$mode" in
quantize) weights="int8" ;;
dtype) weights="sixteen-bit" ;;
*) die "give the mode: quantize (--quantize vs float, with the reference) or dtype (--dtype bf16/f16 vs f32)" ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${REFERENCE_VENV:-$repo/.venv-reference}"
ckpt="${ACC_CHECKPOINT:-/tmp/pocket-tts-parity/checkpoint}"
out="${ACC_OUT:-/tmp/pocket-tts-accuracy-$mode}"
text="${ACC_TEXT:-Hello world. I am Pocket TTS from Kyutai, and today I am speaking with $weights weights. I hope you will not hear the difference.}"
max_tokens="${ACC_MAX_TOKENS:-50}"
min_db="${ACC_MIN_DB:-40}"
read -r -a extra <<<"${ACC_EXTRA:-}"
cli_given="${ACC_CLI:-}"
# shellcheck source=accuracy_setup.sh
source "$here/accuracy_setup.sh"
mkdir -p "$out"
common=(--voice "$repo/ref.wav" --text "$text" --temperature 0 --eos-threshold 1e9
        --max-tokens "$max_tokens")

ours() { # ours OUTPUT FLAGS...
    local output=$1
    shift
    echo "== ours generate $* ${extra[*]}" >&2
    "$cli" generate --config "$ckpt/config.yaml" "${common[@]}" "$@" "${extra[@]}" -q \
        --output-path "$output"
}

if [[ $mode == quantize ]]; then
    for q in "" "--quantize"; do
        tag="${q:+_q}"
        echo "== reference generate $q" >&2
        # The reference resolves relative config paths against its cwd; it may abort at exit
        # after writing its WAV (its daemon threads), so only the WAV is checked.
        # shellcheck disable=SC2086  # $q is empty or one flag
        (cd "$ckpt" && "$py" -m pocket_tts generate --config config.yaml "${common[@]}" $q \
            --output-path "$out/reference$tag.wav" >"$out/reference$tag.log" 2>&1) || true
        [[ -s "$out/reference$tag.wav" ]] || { tail -20 "$out/reference$tag.log" >&2; die "reference $q wrote no WAV"; }
        # shellcheck disable=SC2086
        ours "$out/ours$tag.wav" $q
    done
else
    for dtype in f32 bf16 f16; do
        ours "$out/ours_$dtype.wav" --dtype "$dtype"
    done
fi

"$py" - "$mode" "$out" "$min_db" "$here" <<'PYEOF'
import sys

mode, out, min_db = sys.argv[1], sys.argv[2], float(sys.argv[3])
sys.path.insert(0, sys.argv[4])
from wav_snr import compare  # noqa: E402

header = "| whole WAV SNR (dB) | per-frame SNR median | p10 | worst | frames |"
if mode == "quantize":
    rows = {tool: compare(f"{out}/{tool}.wav", f"{out}/{tool}_q.wav", f"{tool} float vs --quantize")
            for tool in ("reference", "ours")}
    print("| --quantize vs float, same tool " + header)
    print("|---|---|---|---|---|---|")
    for tool, (w, med, p10, worst, n) in rows.items():
        print(f"| {tool} | {w:.1f} | {med:.1f} | {p10:.1f} | {worst:.1f} | {n} |")
    ok = rows["ours"][0] >= rows["reference"][0]
    print("PASS: ours is at least as close to its float output as the reference" if ok
          else "FAIL: ours is further from its float output than the reference")
else:
    print("| ours, vs --dtype f32 " + header)
    print("|---|---|---|---|---|---|")
    ok = True
    for dtype in ("bf16", "f16"):
        w, med, p10, worst, n = compare(f"{out}/ours_f32.wav", f"{out}/ours_{dtype}.wav", dtype)
        ok &= w >= min_db
        print(f"| --dtype {dtype} | {w:.1f} | {med:.1f} | {p10:.1f} | {worst:.1f} | {n} |")
    print(f"PASS: every 16-bit dtype is within {min_db:g} dB of f32" if ok
          else f"FAIL: a 16-bit dtype is below {min_db:g} dB SNR against f32")
sys.exit(0 if ok else 1)
PYEOF
