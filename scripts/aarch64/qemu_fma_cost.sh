#!/usr/bin/env bash
# Builds scripts/aarch64/qemu_fma_cost.rs for aarch64 and runs it under qemu-aarch64:
# the emulated cost of a multiply-add by instruction form (see OPTIMIZATION_LOG.md, the
# aarch64 section). Run scripts/aarch64/setup.sh first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
rustc --edition 2021 -O --target aarch64-unknown-linux-gnu -C linker=aarch64-linux-gnu-gcc \
    -o "$out/qemu_fma_cost" "$here/qemu_fma_cost.rs"
lscpu | grep -m1 'Model name' || true
qemu-aarch64 --version | head -1
qemu-aarch64 -L /usr/aarch64-linux-gnu "$out/qemu_fma_cost"
