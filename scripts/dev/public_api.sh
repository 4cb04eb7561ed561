#!/usr/bin/env bash
# The public API of each library crate, one item a line (cargo-public-api, from nightly
# rustdoc JSON; `#[doc(hidden)]` items such as `pocket_tts_core::internals` are left out),
# committed as crates/NAME/public-api.txt so that every change to it shows in review.
#
#   scripts/dev/public_api.sh           rewrite the files after an intended API change
#   scripts/dev/public_api.sh --check   fail (exit 1, with the diff) when a file is stale
#
# Installs what it needs: the nightly toolchain (rustup) and cargo-public-api (crates.io,
# pinned).
set -euo pipefail
cd "$(dirname "$0")/../.."

check=false
[[ ${1:-} == --check ]] && check=true
version=0.52.0
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
scripts/dev/cargo_tool.sh cargo-public-api "$version"

stale=()
for dir in crates/*/; do
    name=$(basename "$dir")
    [[ -f "$dir/src/lib.rs" ]] || continue
    file="${dir%/}/public-api.txt"
    now=$(mktemp)
    cargo public-api --package "$name" -sss >"$now" 2>"$now.log" || {
        cat "$now.log" >&2
        echo "public_api.sh: cargo public-api failed for $name" >&2
        exit 2
    }
    if $check; then
        if ! diff -u "$file" "$now"; then
            stale+=("$name")
        fi
        rm -f "$now"
    else
        mv "$now" "$file"
        echo "$file: $(wc -l <"$file") items"
    fi
    rm -f "$now.log"
done
if [[ ${#stale[@]} -gt 0 ]]; then
    echo "public_api.sh: the public API of ${stale[*]} changed: if intended, run scripts/dev/public_api.sh and commit the files" >&2
    exit 1
fi
$check && echo "public API listings are current"
exit 0
