#!/usr/bin/env bash
# Speed of the WebAssembly build in headless Chromium next to native, one thread each, on
# the same CPU, interleaved: time to first audio, real-time factor, load time, .wasm size.
#   scripts/wasm/measure.sh CHECKPOINT_DIR [RUNS] [DIST...]
# CHECKPOINT_DIR holds config.yaml, model.safetensors and tokenizer.model (e.g. the random
# full-size checkpoint of scripts/reference/parity_full_size.sh, /tmp/pocket-tts-parity/
# checkpoint). Int8 FlowLM weights (`--quantize`), the voice cloned from
# $POCKET_TTS_ASSETS/speech/jfk_16k.wav, EOS off (default_eos_threshold 1e9: random
# weights would stop at once), so every run makes the text's whole frame budget.
# DIST is the page built by scripts/wasm/build.sh (default target/wasm-web; several DISTs
# are measured one after the other in each round, e.g. two builds side by side). Each of the
# RUNS rounds (default 3) runs, for the voice cloned from the recording and then for its
# voice state (.safetensors, written by a first native run), the native
# `native_reference` example (release) once and one page load with three generations;
# prints JSON lines (the first audio's parts too: text prefill, first FlowLM step, first
# Mimi frame).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
ckpt="$(cd "$1" && pwd)"
runs="${2:-3}"
shift $(($# < 2 ? $# : 2))
dists=("${@:-target/wasm-web}")
assets="${POCKET_TTS_ASSETS:-$repo/../shared/assets}"
voice="$assets/speech/jfk_16k.wav"
py="${SERVE_VENV:-/tmp/serve-venv}/bin/python"
text="The quick brown fox jumps over the lazy dog. Pocket TTS now speaks inside a web page, with nothing sent to a server."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
grep -v '^default_eos_threshold:' "$ckpt/config.yaml" > "$tmp/config.yaml"
echo "default_eos_threshold: 1000000000.0" >> "$tmp/config.yaml"
ln -s "$ckpt/model.safetensors" "$tmp/model.safetensors"
ln -s "$(readlink -f "$ckpt/tokenizer.model")" "$tmp/tokenizer.model"
cargo build --locked -q --release -p pocket-tts-wasm --example native_reference
native="${CARGO_TARGET_DIR:-$repo/target}/release/examples/native_reference"
echo "# $(lscpu | grep 'Model name' | sed 's/  */ /g'); $(uptime)"
# A voice state of this model from the same recording, for the runs with a voice state.
"$native" "$tmp/config.yaml" "$tmp/model.safetensors" "$tmp/tokenizer.model" "$voice" "$text" 0.7 1 "$tmp/native.f32" "$tmp/voice.safetensors" > /dev/null
for r in $(seq "$runs"); do
    for v in "$voice" "$tmp/voice.safetensors"; do
        echo "# round $r, voice $(basename "$v"): native (1 thread)"
        "$native" "$tmp/config.yaml" "$tmp/model.safetensors" "$tmp/tokenizer.model" "$v" "$text" 0.7 1 "$tmp/native.f32"
        for dist in "${dists[@]}"; do
            echo "# round $r, voice $(basename "$v"): headless Chromium, $dist"
            "$py" scripts/wasm/browser_test.py --dist "$dist" --model-dir "$tmp" --voice "$v" \
                --measure --quantize --runs 3 --timeout 900 --text "$text"
        done
    done
done
echo "# $(uptime)"
