#!/usr/bin/env bash
# Builds the WebAssembly package and the demo page into one folder any static server can
# serve (default target/wasm-web):
#   scripts/wasm/build.sh [--dev] [OUT_DIR]
# --dev: the dev profile (dependencies at opt-level 1, no LTO): a quicker build for tests
# (CI's browser test), slower to run and larger; the default is the `wasm` profile.
# Installs what it needs when missing: the wasm32-unknown-unknown target (rustup) and
# wasm-bindgen-cli at the exact version of the wasm-bindgen crate (cargo install).
# Then: `cargo build --profile wasm -p pocket-tts-wasm --target wasm32-unknown-unknown`
# (SIMD128 and relaxed SIMD from .cargo/config.toml), `wasm-bindgen --target web` into
# OUT_DIR/pkg, and web/ copied beside it (sw.js, the service worker that keeps the page
# for offline use, stamped with the build's hash). Serve OUT_DIR, e.g.
# `python3 -m http.server -b 127.0.0.1 -d target/wasm-web 8080`.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
profile=wasm
dir=wasm
if [[ ${1:-} == --dev ]]; then
    profile=dev
    dir=debug
    shift
fi
out="${1:-target/wasm-web}"
# The wasm-bindgen crate's version (crates/pocket-tts-wasm/Cargo.toml pins it exactly).
WASM_BINDGEN_VERSION=0.2.130

rustup target add wasm32-unknown-unknown 2>&1 | grep -v "is up to date" || true
if ! command -v wasm-bindgen >/dev/null || [[ "$(wasm-bindgen --version)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]]; then
    # Not --locked: its lock file names a webpki-roots release the crates.io index no
    # longer serves.
    cargo install --quiet --debug "wasm-bindgen-cli@$WASM_BINDGEN_VERSION"
fi
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
echo "== cargo build --profile $profile -p pocket-tts-wasm --target wasm32-unknown-unknown"
cargo build --locked --profile "$profile" -p pocket-tts-wasm --target wasm32-unknown-unknown
rm -rf "$out"
mkdir -p "$out"
wasm-bindgen --target web --no-typescript --out-dir "$out/pkg" \
    "$target_dir/wasm32-unknown-unknown/$dir/pocket_tts_wasm.wasm"
cp web/index.html web/main.js web/flowlm-worker.js web/mimi-worker.js web/style.css "$out/"
# The service worker names its cache after this build (a new build replaces the cached page).
build_id=$(cat "$out"/pkg/* "$out"/*.html "$out"/*.js "$out"/*.css | sha256sum | cut -c1-16)
sed "s/__POCKET_TTS_BUILD__/$build_id/" web/sw.js > "$out/sw.js"
size=$(stat -c %s "$out/pkg/pocket_tts_wasm_bg.wasm")
gz=$(gzip -9 -c "$out/pkg/pocket_tts_wasm_bg.wasm" | wc -c)
echo "built $out: pocket_tts_wasm_bg.wasm $((size / 1024)) KiB, $((gz / 1024)) KiB gzipped"
