#!/usr/bin/env bash
# Accuracy of --quantize, ours against the reference's (pocket-tts==4.0.1), on a FULL-size
# random-weight checkpoint: each tool's --quantize WAV is compared with the same tool's
# float WAV (same text, voice, temperature 0, EOS disabled so the lengths agree). Reports
# the SNR of the whole WAV and per 80 ms frame (median, 10th percentile, worst), for both
# tools side by side. Exit status 1 when ours is below the reference's whole-WAV SNR.
#
#   REFERENCE_VENV=/tmp/venv scripts/quantize_accuracy.sh
#
# Environment (all optional):
#   REFERENCE_VENV   reference virtualenv (default <repo>/.venv-reference; setup_venv.sh makes it)
#   QA_CHECKPOINT    checkpoint folder with config.yaml (default: the one of
#                    scripts/parity_full_size.sh, /tmp/pocket-tts-parity/checkpoint, made by
#                    scripts/reference/make_checkpoint.py --size full if missing)
#   QA_CLI           our binary (default: cargo build --release, target/release/pocket-tts-cli)
#   QA_TEXT          text (default: two sentences, 2 chunks)
#   QA_MAX_TOKENS    --max-tokens (default 50)
#   QA_OUT           output folder (default /tmp/pocket-tts-quantize-accuracy)
#   QA_EXTRA         extra flags for our CLI in both runs (e.g. "--backend candle")
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
venv="${REFERENCE_VENV:-$repo/.venv-reference}"
ckpt="${QA_CHECKPOINT:-/tmp/pocket-tts-parity/checkpoint}"
out="${QA_OUT:-/tmp/pocket-tts-quantize-accuracy}"
text="${QA_TEXT:-Hello world. I am Pocket TTS from Kyutai, and today I am speaking with int8 weights. I hope you will not hear the difference.}"
max_tokens="${QA_MAX_TOKENS:-50}"
read -r -a extra <<<"${QA_EXTRA:-}"

die() { echo "quantize_accuracy: $*" >&2; exit 2; }
cli_given="${QA_CLI:-}"
# shellcheck source=bench/accuracy_setup.sh
source "$here/bench/accuracy_setup.sh"
mkdir -p "$out"
voice="$repo/ref.wav"
common=(--voice "$voice" --text "$text" --temperature 0 --eos-threshold 1e9
        --max-tokens "$max_tokens")

for q in "" "--quantize"; do
    tag="${q:+_q}"
    echo "== reference generate $q" >&2
    # The reference resolves relative config paths against its cwd; it may abort at exit
    # after writing its WAV (its daemon threads), so only the WAV is checked.
    (cd "$ckpt" && "$py" -m pocket_tts generate --config config.yaml "${common[@]}" $q \
        --output-path "$out/reference$tag.wav" >"$out/reference$tag.log" 2>&1) || true
    [[ -s "$out/reference$tag.wav" ]] || { tail -20 "$out/reference$tag.log" >&2; die "reference $q wrote no WAV"; }
    echo "== ours generate $q ${extra[*]}" >&2
    "$cli" generate --config "$ckpt/config.yaml" "${common[@]}" $q "${extra[@]}" -q \
        --output-path "$out/ours$tag.wav"
done

"$py" - "$out" "$here/bench" <<'EOF'
import sys

out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from wav_snr import compare  # noqa: E402

rows = {tool: compare(f"{out}/{tool}.wav", f"{out}/{tool}_q.wav", f"{tool} float vs --quantize")
        for tool in ("reference", "ours")}
print("| --quantize vs float, same tool | whole WAV SNR (dB) | per-frame SNR median | p10 | worst | frames |")
print("|---|---|---|---|---|---|")
for tool, (w, med, p10, worst, n) in rows.items():
    print(f"| {tool} | {w:.1f} | {med:.1f} | {p10:.1f} | {worst:.1f} | {n} |")
ok = rows["ours"][0] >= rows["reference"][0]
print("PASS: ours is at least as close to its float output as the reference" if ok
      else "FAIL: ours is further from its float output than the reference")
sys.exit(0 if ok else 1)
EOF
