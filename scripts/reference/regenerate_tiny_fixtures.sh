#!/usr/bin/env bash
# Regenerate tests/fixtures/tiny/ and check that it is deterministic: make_fixtures.py runs
# twice and stages.safetensors (and the other tensor files) must be byte-identical.
#
#   scripts/reference/regenerate_tiny_fixtures.sh
#
# Venv: $REFERENCE_VENV, default <repo>/.venv-reference (set up by setup_venv.sh).
# Assets: $POCKET_TTS_ASSETS, default <repo>/../shared/assets.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${REFERENCE_VENV:-$repo/.venv-reference}"
out="$repo/tests/fixtures/tiny"
deterministic=(stages.safetensors model.safetensors config.yaml voice_state.safetensors voice_excerpt.wav
               seeded.safetensors ../torch_noise.safetensors)

REFERENCE_VENV="$venv" "$here/setup_venv.sh"
cd "$repo"

regenerate() {
    "$venv/bin/python" "$here/make_fixtures.py"
    # Seeded generations at temperature > 0 (reads make_fixtures.py's outputs) and the
    # torch noise draws.
    "$venv/bin/python" "$here/make_seeded_fixtures.py"
    "$venv/bin/python" "$here/make_noise_fixtures.py"
}
regenerate
first="$(cd "$out" && sha256sum "${deterministic[@]}")"
regenerate >/dev/null
second="$(cd "$out" && sha256sum "${deterministic[@]}")"

echo
echo "$second"
if [[ "$first" != "$second" ]]; then
    echo "NOT deterministic:" >&2
    diff <(echo "$first") <(echo "$second") >&2 || true
    exit 1
fi
echo "deterministic: two runs gave identical files"
