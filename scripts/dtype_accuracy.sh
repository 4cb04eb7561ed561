#!/usr/bin/env bash
# Accuracy of --dtype f16 / bf16 (16-bit FlowLM weights, computed in f32) on a FULL-size
# random-weight checkpoint: our WAV with each 16-bit dtype is compared with our f32 WAV
# (same text, voice, temperature 0, EOS disabled so the lengths agree). Reports the SNR of
# the whole WAV and per 80 ms frame (median, 10th percentile, worst). Exit status 1 when a
# dtype's whole-WAV SNR is below DA_MIN_DB.
#
#   scripts/dtype_accuracy.sh
#   DA_EXTRA="--quantize" scripts/dtype_accuracy.sh   # int8 transformer in every run
#
# Environment (all optional):
#   REFERENCE_VENV   a virtualenv with numpy and soundfile (default <repo>/.venv-reference;
#                    scripts/reference/setup_venv.sh makes it); the reference is not run
#   DA_CHECKPOINT    checkpoint folder with config.yaml (default: the one of
#                    scripts/parity_full_size.sh, /tmp/pocket-tts-parity/checkpoint, made by
#                    scripts/reference/make_checkpoint.py --size full if missing)
#   DA_CLI           our binary (default: cargo build --release, target/release/pocket-tts-cli)
#   DA_TEXT          text (default: two sentences, 2 chunks)
#   DA_MAX_TOKENS    --max-tokens (default 50)
#   DA_OUT           output folder (default /tmp/pocket-tts-dtype-accuracy)
#   DA_EXTRA         extra flags for our CLI in every run (e.g. "--backend candle")
#   DA_MIN_DB        pass threshold on the whole-WAV SNR (default 40)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
venv="${REFERENCE_VENV:-$repo/.venv-reference}"
ckpt="${DA_CHECKPOINT:-/tmp/pocket-tts-parity/checkpoint}"
out="${DA_OUT:-/tmp/pocket-tts-dtype-accuracy}"
text="${DA_TEXT:-Hello world. I am Pocket TTS from Kyutai, and today I am speaking with sixteen-bit weights. I hope you will not hear the difference.}"
max_tokens="${DA_MAX_TOKENS:-50}"
min_db="${DA_MIN_DB:-40}"
read -r -a extra <<<"${DA_EXTRA:-}"

die() { echo "dtype_accuracy: $*" >&2; exit 2; }
cli_given="${DA_CLI:-}"
# shellcheck source=bench/accuracy_setup.sh
source "$here/bench/accuracy_setup.sh"
mkdir -p "$out"
voice="$repo/ref.wav"
common=(--voice "$voice" --text "$text" --temperature 0 --eos-threshold 1e9
        --max-tokens "$max_tokens")

for dtype in f32 bf16 f16; do
    echo "== ours generate --dtype $dtype ${extra[*]}" >&2
    "$cli" generate --config "$ckpt/config.yaml" "${common[@]}" --dtype "$dtype" "${extra[@]}" -q \
        --output-path "$out/ours_$dtype.wav"
done

"$py" - "$out" "$min_db" "$here/bench" <<'PYEOF'
import sys

out, min_db = sys.argv[1], float(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from wav_snr import compare  # noqa: E402

print("| ours, vs --dtype f32 | whole WAV SNR (dB) | per-frame SNR median | p10 | worst | frames |")
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
