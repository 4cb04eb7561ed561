#!/usr/bin/env bash
# The aarch64 leg of CI: clippy with warnings as errors for the crates that hold
# aarch64-specific code (the SIMD crate and the core crate), then, built for
# aarch64-unknown-linux-gnu and run under qemu-aarch64:
#   - pocket-tts-simd: every test, with the dot-product extension (qemu's default CPU,
#     "max") and again on a Cortex-A57 (no dotprod), so both int8 kernels are tested;
#   - pocket-tts-core: the kernel unit tests (`fast::`: the Mimi GEMM against the scalar
#     kernel) and the tiny-model parity tests of the integration binary (reference
#     fixtures through the NEON FlowLM and Mimi, int8 and 16-bit weights, the batched step).
# The CLI and server tests are left to the x86_64 leg: they run the same kernels through
# more code, and under emulation they cost minutes for no new coverage.
#
#   scripts/aarch64/test.sh            what CI runs
#   scripts/aarch64/test.sh --all      every test of the workspace under qemu
#
# Run scripts/aarch64/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/aarch64/env.sh
target=aarch64-unknown-linux-gnu

# Three tests are left to the x86_64 leg, by name: they run the full-size Mimi (20 decoder
# frames and 2 s of encoder, each through our kernels and through Candle's; the encoder on
# 6 s of prompts in several chunk sizes), which takes about 10 minutes under qemu (it
# emulates every floating-point lane in software, OPTIMIZATION_LOG.md §22). The aarch64
# kernels they would exercise are tested here by the tiny-model parity tests and the kernel
# tests (bit-exact against the scalar kernels); the chunked encoder transformer by the
# library's `fast::mimi::transformer::tests` (small random model).
skip=(--skip full_size_random_weights_fast_matches_candle_within_1e_3
    --skip encoder_built_part_by_part_from_the_source_equals_the_whole_encoder
    --skip chunked_encoder_gives_the_whole_prompt_latents_bit_for_bit)

if [[ ${1:-} == --all ]]; then
    echo "== aarch64: cargo clippy --workspace --all-targets --target $target -- -D warnings"
    cargo clippy --locked --workspace --all-targets --target $target -- -D warnings
    echo "== aarch64: cargo test --workspace --target $target (under qemu-aarch64)"
    cargo test --locked --workspace --target $target -- "${skip[@]}"
    exit 0
fi

crates=(-p pocket-tts-simd -p pocket-tts-core)
echo "== aarch64: cargo clippy ${crates[*]} --all-targets --target $target -- -D warnings"
cargo clippy --locked "${crates[@]}" --all-targets --target $target -- -D warnings

echo "== aarch64: pocket-tts-simd under qemu-aarch64 (CPU max: with dotprod)"
cargo test --locked -p pocket-tts-simd --target $target --lib --tests

echo "== aarch64: pocket-tts-simd again on a CPU without dotprod (QEMU_CPU=cortex-a57)"
QEMU_CPU=cortex-a57 cargo test --locked -p pocket-tts-simd --target $target --lib --tests

# The integration binary's modules that run the model's kernels on the tiny fixture.
parity=(parity_tiny:: fast_flow_lm:: fast_mimi:: batch_flow_lm:: quantize:: dtype::)
echo "== aarch64: pocket-tts-core kernel and tiny-model parity tests under qemu-aarch64 (${parity[*]} fast::)"
cargo test --locked -p pocket-tts-core --target $target --lib -- fast::
cargo test --locked -p pocket-tts-core --target $target --test integration -- "${parity[@]}" "${skip[@]}"
