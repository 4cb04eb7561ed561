#!/usr/bin/env bash
# The aarch64 leg of CI: clippy with warnings as errors, then the whole test suite
# (library, CLI, server and doc tests) built for
# aarch64-unknown-linux-gnu and run under qemu-aarch64. Extra arguments go to
# `cargo test` (e.g. `-p pocket-tts-simd`). Run scripts/aarch64/setup.sh first.
#
# qemu's default CPU ("max") has the dot-product extension, so the `sdot` kernels run;
# the SIMD crate's tests run a second time on a Cortex-A57 (no dotprod), so the
# fallback kernels are tested too.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/aarch64/env.sh
target=aarch64-unknown-linux-gnu

echo "== aarch64: cargo clippy --target $target -- -D warnings"
cargo clippy --workspace --all-targets --target $target -- -D warnings

echo "== aarch64: cargo test --target $target (under qemu-aarch64)"
cargo test --workspace --target $target "$@"

echo "== aarch64: pocket-tts-simd again on a CPU without dotprod (QEMU_CPU=cortex-a57)"
QEMU_CPU=cortex-a57 cargo test -p pocket-tts-simd --target $target --lib --tests
