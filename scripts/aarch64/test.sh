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

# Two tests are left to the x86_64 leg, by name: they run the full-size Mimi (20 decoder
# frames and 2 s of encoder, each through our kernels and through Candle's), which takes
# about 10 minutes under qemu (it emulates every floating-point lane in software,
# OPTIMIZATION_LOG.md §22). The aarch64 kernels they would exercise are tested here by
# the tiny-model parity tests and the kernel tests (bit-exact against the scalar kernels).
full_size=(full_size_random_weights_fast_matches_candle_within_1e_3
    encoder_built_part_by_part_from_the_source_equals_the_whole_encoder)
echo "== aarch64: cargo test --target $target (under qemu-aarch64; not run here, run by the x86_64 leg: ${full_size[*]})"
cargo test --workspace --target $target "$@" -- \
    --skip "${full_size[0]}" --skip "${full_size[1]}"

echo "== aarch64: pocket-tts-simd again on a CPU without dotprod (QEMU_CPU=cortex-a57)"
QEMU_CPU=cortex-a57 cargo test -p pocket-tts-simd --target $target --lib --tests
