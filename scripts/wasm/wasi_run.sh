#!/usr/bin/env bash
# Cargo's runner for wasm32-wasip1 test binaries (.cargo/config.toml): runs one under Node's
# WASI with relaxed SIMD on (Node 20's V8 has it behind a flag; Chromium enables it).
#   scripts/wasm/wasi_run.sh BINARY.wasm [ARGS...]
exec node --experimental-wasm-relaxed-simd --no-warnings "$(dirname "$0")/wasi_run.mjs" "$@"
