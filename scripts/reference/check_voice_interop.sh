#!/usr/bin/env bash
# Voice-state interop check (see check_voice_interop.py): sets up the reference venv
# ($REFERENCE_VENV, default <repo>/.venv-reference), builds our release CLI, runs the check.
# Extra arguments go to check_voice_interop.py (e.g. --work-dir DIR).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${REFERENCE_VENV:-$repo/.venv-reference}"

REFERENCE_VENV="$venv" "$here/setup_venv.sh"
(cd "$repo" && "${CARGO:-cargo}" build --release -p pocket-tts-cli)
exec "$venv/bin/python" "$here/check_voice_interop.py" --cli "$repo/target/release/pocket-tts-cli" "$@"
