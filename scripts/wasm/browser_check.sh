#!/usr/bin/env bash
# The browser test of the WebAssembly page (CI's `wasm` stage): the tiny test model's
# audio at temperature 0, made natively by the core (the `native_reference` example) and
# in headless Chromium by the page built in DIST, must agree within 1e-3, with a voice state
# (float and int8 FlowLM weights) and with a voice cloned from a recording (encoded by the
# Mimi worker); then streaming,
# cancel, and one-line errors for a bad checkpoint and a bad voice file
# (scripts/wasm/browser_test.py).
#   scripts/wasm/browser_check.sh [DIST]      (default target/wasm-web, from build.sh)
# Needs scripts/serve/install_client_deps.sh's Chromium, chromedriver and venv
# ($SERVE_VENV, default /tmp/serve-venv).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
dist="${1:-target/wasm-web}"
py="${SERVE_VENV:-/tmp/serve-venv}/bin/python"
tiny="tests/fixtures/tiny"
tokenizer="crates/pocket-tts-core/tests/fixtures/assets/tokenizer.model"
text="Hello world. This is a test of the browser build."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "== native reference (cargo run -p pocket-tts-wasm --example native_reference)"
cargo run --locked -q -p pocket-tts-wasm --example native_reference -- \
    "$tiny/config.yaml" "$tiny/model.safetensors" "$tokenizer" "$tiny/voice_state.safetensors" \
    "$text" 0 0 "$tmp/ref.f32"
cargo run --locked -q -p pocket-tts-wasm --example native_reference -- \
    "$tiny/config.yaml" "$tiny/model.safetensors" "$tokenizer" "$tiny/voice_state.safetensors" \
    "$text" 0 1 "$tmp/ref_int8.f32"
cargo run --locked -q -p pocket-tts-wasm --example native_reference -- \
    "$tiny/config.yaml" "$tiny/model.safetensors" "$tokenizer" "$tiny/voice_excerpt.wav" \
    "$text" 0 0 "$tmp/ref_cloned.f32"
echo "== the page in headless Chromium (scripts/wasm/browser_test.py)"
"$py" scripts/wasm/browser_test.py --dist "$dist" --model-dir "$tiny" --tokenizer "$tokenizer" \
    --voice "$tiny/voice_state.safetensors" --reference "$tmp/ref.f32" --text "$text" \
    --int8-reference "$tmp/ref_int8.f32" \
    --audio-voice "$tiny/voice_excerpt.wav" --audio-reference "$tmp/ref_cloned.f32"
