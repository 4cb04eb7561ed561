#!/usr/bin/env bash
# Run the Python reference CLI `pocket-tts generate` (pocket-tts==4.0.1) inside the
# reference venv. All arguments are passed to `python -m pocket_tts generate`.
#
#   scripts/reference/run_reference_generate.sh [-C DIR] [generate options...]
#
#   -C DIR   run from DIR (the reference resolves a config's relative weights_path and
#            tokenizer_path against its cwd: pass the config's directory).
#
# Example (tiny fixture model, from the repo root):
#   scripts/reference/run_reference_generate.sh -C tests/fixtures/tiny \
#       --config config.yaml --voice voice_excerpt.wav --temperature 0 \
#       --text "Hello world." --output-path /tmp/out.wav
# (relative paths in the options are then relative to DIR too.)
#
# Venv: $REFERENCE_VENV, default <repo>/.venv-reference; created/updated by setup_venv.sh
# (idempotent) before running.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${REFERENCE_VENV:-$repo/.venv-reference}"

if [[ "${1:-}" == "-C" ]]; then
    [[ $# -ge 2 ]] || { echo "usage: $0 [-C DIR] [generate options...]" >&2; exit 2; }
    cd "$2"
    shift 2
fi

REFERENCE_VENV="$venv" "$here/setup_venv.sh" >&2
exec "$venv/bin/python" -m pocket_tts generate "$@"
