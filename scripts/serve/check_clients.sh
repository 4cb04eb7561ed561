#!/usr/bin/env bash
# Checks `serve` with its real clients against the tiny test model, one server for all:
# the official `openai` Python client (openai_check.py), the `wyoming` package
# (wyoming_check.py), a client of Kyutai's streaming websocket as unmute's (kyutai_check.py,
# `msgpack` and `websockets`) and the web page in headless Chromium (browser_check.py); then
# SIGTERM must stop the server with exit 0.
#   scripts/serve/check_clients.sh [CLI]
# CLI: the pocket-tts-cli binary (default: $CARGO_TARGET_DIR/debug/pocket-tts-cli, or
# ./target/debug/pocket-tts-cli); nothing is built. Needs Chromium, chromedriver and a venv
# with the clients (scripts/serve/install_client_deps.sh); SERVE_VENV names the venv
# (default /tmp/serve-venv). The screenshot goes to ${SCREENSHOT:-target/browser_check.png}.
# Exits non-zero on the first failed check.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
die() { echo "check_clients.sh: $*" >&2; exit 2; }

cli="${1:-${CARGO_TARGET_DIR:-$repo/target}/debug/pocket-tts-cli}"
venv="${SERVE_VENV:-/tmp/serve-venv}"
screenshot="${SCREENSHOT:-target/browser_check.png}"
[[ -x "$cli" ]] || die "no CLI binary at $cli (cargo build -p pocket-tts-cli, or pass its path)"
[[ -x "$venv/bin/python" ]] || die "no venv at $venv (scripts/serve/install_client_deps.sh, or set SERVE_VENV)"
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
"$repo/scripts/serve/tiny_config.sh" "$tmp/tiny.yaml"

"$cli" serve --config "$tmp/tiny.yaml" --voice "$tiny/voice_excerpt.wav" \
    --host 127.0.0.1 --port 0 --wyoming-port 0 --temperature 0 --seed 1 --text-language english \
    2> "$tmp/server.log" &
server_pid=$!

url=""
for _ in $(seq 1 600); do  # 60 s
    url="$(sed -n 's#.*listening on \(http://[^ ]*\).*#\1#p' "$tmp/server.log" | head -n 1)"
    [[ -n "$url" ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server.log" >&2; die "the server exited before listening"; }
    sleep 0.1
done
[[ -n "$url" ]] || { cat "$tmp/server.log" >&2; die "the server did not print its address within 60 s"; }
wyoming="$(sed -n 's#.*wyoming listening on tcp://\([^ ]*\).*#\1#p' "$tmp/server.log" | head -n 1)"
[[ -n "$wyoming" ]] || { cat "$tmp/server.log" >&2; die "the server did not print its Wyoming address"; }
echo "server: $url, wyoming tcp://$wyoming (pid $server_pid)"

fail() {
    echo "check_clients.sh: $1 FAILED" >&2
    echo "--- server log" >&2
    tail -n 40 "$tmp/server.log" >&2
    exit 1
}
py="$venv/bin/python"
echo "== the openai client"
"$py" "$repo/scripts/serve/openai_check.py" --url "$url" --voice voice_excerpt || fail "openai_check.py"
echo "== the wyoming client"
"$py" "$repo/scripts/serve/wyoming_check.py" --host "${wyoming%:*}" --port "${wyoming##*:}" \
    || fail "wyoming_check.py"
echo "== Kyutai's streaming websocket (an unmute-like client: msgpack, websockets)"
"$py" "$repo/scripts/serve/kyutai_check.py" --url "$url" || fail "kyutai_check.py"
echo "== the web page in headless Chromium"
"$py" "$repo/scripts/serve/browser_check.py" --url "$url/" --screenshot "$screenshot" \
    --voice-file "$tiny/voice_excerpt.wav" || fail "browser_check.py"

echo "== SIGTERM: a clean exit"
kill -TERM "$server_pid"
status=0
timeout 30 tail --pid="$server_pid" -f /dev/null || die "the server still runs 30 s after SIGTERM"
wait "$server_pid" || status=$?
server_pid=""
[[ $status -eq 0 ]] || fail "exit status $status after SIGTERM"
echo "all client checks passed"
