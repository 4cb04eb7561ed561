#!/usr/bin/env bash
# Create (or update) the Python reference venv used by scripts/reference/*.
#
#   scripts/reference/setup_venv.sh
#
# Venv path: $REFERENCE_VENV, default <repo>/.venv-reference (it contains a .gitignore
# ignoring itself). Interpreter: $PYTHON, default python3 (pocket-tts 4.0.1 needs 3.10-3.14).
# Idempotent: does nothing when the venv already has exactly requirements.txt installed.
# pip honours its usual environment, e.g. PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu
# for a CPU-only torch (same version, much smaller download).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${REFERENCE_VENV:-$repo/.venv-reference}"
python="${PYTHON:-python3}"
requirements="$here/requirements.txt"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"

imports_ok() {
    "$venv/bin/python" -c 'import pocket_tts, soundfile, sentencepiece, safetensors, numpy, yaml' \
        >/dev/null 2>&1
}

if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && imports_ok; then
    echo "reference venv $venv is up to date"
    exit 0
fi

if [[ ! -x "$venv/bin/python" ]]; then
    echo "creating reference venv $venv with $("$python" --version 2>&1)"
    "$python" -m venv "$venv"
fi
[[ -e "$venv/.gitignore" ]] || printf '# created by scripts/reference/setup_venv.sh\n*\n' >"$venv/.gitignore"

echo "installing $requirements into $venv"
"$venv/bin/python" -m pip install --disable-pip-version-check -r "$requirements"
imports_ok || { echo "reference venv $venv: imports fail after install" >&2; exit 1; }
echo "$want" >"$stamp"
echo "reference venv $venv is ready"
