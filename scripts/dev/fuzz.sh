#!/usr/bin/env bash
# Fuzz the parsers this project owns with cargo-fuzz (libFuzzer, nightly Rust).
#
#   scripts/dev/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS per target (default 600); TARGETs default to all of fuzz/Cargo.toml's
# (voice_state, config, tokenizer, tokenizer_model, text, audio). Each run starts from the
# committed corpus (fuzz/corpus/TARGET) and, with FUZZ_UPDATE_CORPUS=1, adds what it finds
# to it (minimised with `cargo fuzz cmin` afterwards); otherwise it works in a copy, so the
# repository is left as it was. A crash stops the script with the reproducer under
# fuzz/artifacts/TARGET/: copy it into fuzz/regressions/TARGET/ once fixed, and
# `cargo test` (tests/integration/fuzz_regressions.rs in the core crate) replays it from then on.
#
# Installs what it needs: the nightly toolchain (rustup) and cargo-fuzz (crates.io, pinned).
set -euo pipefail
cd "$(dirname "$0")/../../fuzz"

seconds="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(voice_state config tokenizer tokenizer_model text audio)
fi

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
../scripts/dev/cargo_tool.sh cargo-fuzz 0.13.2

cargo +nightly fuzz build -O
for t in "${targets[@]}"; do
    if [ "${FUZZ_UPDATE_CORPUS:-0}" = 1 ]; then
        corpus="corpus/$t"
    else
        corpus="$(mktemp -d)"
        cp -r "corpus/$t/." "$corpus/"
    fi
    echo "== fuzz $t for ${seconds}s (corpus: $(ls "$corpus" | wc -l) inputs)"
    # grep keeps libFuzzer's summary lines and any crash report; the status is cargo fuzz's.
    set +e
    cargo +nightly fuzz run -O "$t" "$corpus" -- \
        -max_total_time="$seconds" -rss_limit_mb=4096 -max_len=262144 -print_final_stats=1 \
        2>&1 | grep -E '^(#[0-9]+.*DONE|stat::|==[0-9]+==|SUMMARY|thread .* panicked|Test unit written)'
    status=${PIPESTATUS[0]}
    set -e
    if [ "$status" -ne 0 ]; then
        echo "fuzz target $t failed (status $status): see fuzz/artifacts/$t/" >&2
        exit "$status"
    fi
    if [ "${FUZZ_UPDATE_CORPUS:-0}" = 1 ]; then
        cargo +nightly fuzz cmin -O "$t" "$corpus"
    else
        rm -rf "$corpus"
    fi
done
echo "fuzzing done: ${targets[*]}, ${seconds}s each"
