# Sourced by scripts/bench/accuracy.sh (both modes): checks the
# reference venv, makes the full-size random checkpoint if it is missing, and builds our
# CLI unless one is given.
#   in:  repo, venv, ckpt, cli_given (our binary, or empty to build one), die (function)
#   out: py (the venv's python), cli (our binary)
py="$venv/bin/python"
[[ -x "$py" ]] || die "no reference venv at $venv (scripts/reference/setup_venv.sh, or set REFERENCE_VENV)"
if [[ ! -f "$ckpt/config.yaml" ]]; then
    assets="${POCKET_TTS_ASSETS:-$repo/../shared/assets}"
    mkdir -p "$ckpt"
    ln -sf "$(cd "$assets" && pwd)/tokenizer.model" "$ckpt/tokenizer.model"
    "$py" "$repo/scripts/reference/make_checkpoint.py" --size full --seed 0 \
        --out "$ckpt" --config "$ckpt/config.yaml"
fi
if [[ -z "$cli_given" ]]; then
    (cd "$repo" && cargo build --release -p pocket-tts-cli)
    cli="$repo/target/release/pocket-tts-cli"
else
    cli="$cli_given"
fi
