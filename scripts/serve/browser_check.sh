#!/usr/bin/env bash
# Checks the `serve` web page in headless Chromium against the tiny test model.
#   scripts/serve/browser_check.sh [CLI]
# CLI: the pocket-tts-cli binary (default: $CARGO_TARGET_DIR/debug/pocket-tts-cli, or
# ./target/debug/pocket-tts-cli); nothing is built. Needs Chromium, chromedriver and a venv
# with selenium (scripts/serve/install_browser_deps.sh); WEB_VENV names the venv (default
# /tmp/web-venv). The screenshot goes to ${SCREENSHOT:-target/browser_check.png}.
# Exits with browser_check.py's status.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
die() { echo "browser_check.sh: $*" >&2; exit 2; }

cli="${1:-${CARGO_TARGET_DIR:-$repo/target}/debug/pocket-tts-cli}"
venv="${WEB_VENV:-/tmp/web-venv}"
screenshot="${SCREENSHOT:-target/browser_check.png}"
[[ -x "$cli" ]] || die "no CLI binary at $cli (cargo build -p pocket-tts-cli, or pass its path)"
[[ -x "$venv/bin/python" ]] || die "no venv at $venv (scripts/serve/install_browser_deps.sh, or set WEB_VENV)"
mkdir -p "$(dirname "$screenshot")"

tmp="$(mktemp -d)"
server_pid=""
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

tiny="$repo/tests/fixtures/tiny"
sed -e "s#tokenizer_path: .*#tokenizer_path: '$repo/crates/pocket-tts-core/tests/fixtures/assets/tokenizer.model'#" \
    -e "s#weights_path: .*#weights_path: '$tiny/model.safetensors'#" \
    "$tiny/config.yaml" > "$tmp/tiny.yaml"

"$cli" serve --config "$tmp/tiny.yaml" --voice "$tiny/voice_excerpt.wav" \
    --host 127.0.0.1 --port 0 2> "$tmp/server.log" &
server_pid=$!

url=""
for _ in $(seq 1 600); do  # 60 s
    url="$(sed -n 's#.*listening on \(http://[^ ]*\).*#\1#p' "$tmp/server.log" | head -n 1)"
    [[ -n "$url" ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server.log" >&2; die "the server exited before listening"; }
    sleep 0.1
done
[[ -n "$url" ]] || { cat "$tmp/server.log" >&2; die "the server did not print its address within 60 s"; }
echo "server: $url (pid $server_pid)"

status=0
"$venv/bin/python" "$repo/scripts/serve/browser_check.py" --url "$url/" --screenshot "$screenshot" \
    --voice-file "$tiny/voice_excerpt.wav" || status=$?
if [[ $status -ne 0 ]]; then
    echo "--- server log" >&2
    tail -n 40 "$tmp/server.log" >&2
fi
exit "$status"
