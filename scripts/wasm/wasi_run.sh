#!/usr/bin/env bash
# Cargo's runner for wasm32-wasip1 test binaries (.cargo/config.toml): runs one under Node's
# WASI with relaxed SIMD on (Node 20's V8 has it behind a flag; Chromium enables it).
# $POCKET_TTS_NODE names the node to use (scripts/wasm/ensure_node.sh finds or fetches a
# Node >= 20); else `node` on PATH.
#   scripts/wasm/wasi_run.sh BINARY.wasm [ARGS...]
exec "${POCKET_TTS_NODE:-node}" --experimental-wasm-relaxed-simd --no-warnings "$(dirname "$0")/wasi_run.mjs" "$@"
