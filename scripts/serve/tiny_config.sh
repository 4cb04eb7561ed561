#!/usr/bin/env bash
# Writes the tiny random test model's config (tests/fixtures/tiny/config.yaml) to $1 with
# absolute paths: its checkpoint, and the official tokenizer committed with the core
# crate's test assets (the fixture's own tokenizer.model is an uncommitted symlink).
#   scripts/serve/tiny_config.sh OUT.yaml
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUT.yaml" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
sed -e "s#tokenizer_path: .*#tokenizer_path: '$root/crates/pocket-tts-core/tests/fixtures/assets/tokenizer.model'#" \
    -e "s#weights_path: .*#weights_path: '$root/tests/fixtures/tiny/model.safetensors'#" \
    "$root/tests/fixtures/tiny/config.yaml" > "$1"
