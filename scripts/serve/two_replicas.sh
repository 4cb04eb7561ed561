#!/usr/bin/env bash
# Two `pocket-tts-cli serve` replicas behind nginx (deploy/nginx/pocket-tts.conf), all on
# 127.0.0.1: sends N requests through nginx, then reads each replica's /metrics and checks
# that both served some, that every request got audio, and that each replica stops with
# exit status 0 on SIGTERM.
#
#   scripts/serve/two_replicas.sh BINARY [CONFIG.yaml [VOICE]]
#
# BINARY: pocket-tts-cli (e.g. target/release/pocket-tts-cli). CONFIG: a model config
# (default: the tiny random test model of tests/fixtures/tiny, fast). VOICE: an audio file
# or voice state (default: tests/fixtures/tiny/voice_excerpt.wav).
# Environment: N requests (default 20, half POST /tts, half POST /v1/audio/speech),
# PARALLEL curls at once (default 4), TEXT.
#
# Installs nothing: needs nginx (Debian: apt-get install nginx) and curl. nginx runs as a
# plain background process with a temporary prefix (pid, logs, temp folders there), not
# as the system service. Everything is stopped and removed on exit; the whole run is
# bounded (start-up 60 s per replica, 60 s per request, under 2 minutes in all with the
# tiny model).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
N="${N:-20}"
PARALLEL="${PARALLEL:-4}"
DEFAULT_TEXT="Hello world. I am Kyutai's Pocket TTS."
TEXT="${TEXT:-$DEFAULT_TEXT}"

usage() { echo "usage: $0 BINARY [CONFIG.yaml [VOICE]]" >&2; exit 2; }
if [ $# -lt 1 ] || [ $# -gt 3 ]; then usage; fi
BIN="$1"
[ -x "$BIN" ] || { echo "$BIN: not an executable (build it: cargo build --release -p pocket-tts-cli)" >&2; exit 2; }
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
if ! command -v nginx >/dev/null 2>&1; then
    echo "nginx is not installed: install it (Debian/Ubuntu: apt-get install nginx) and run again" >&2
    exit 2
fi
command -v curl >/dev/null 2>&1 || { echo "curl is not installed (apt-get install curl)" >&2; exit 2; }
case "$N" in ''|*[!0-9]*) echo "N=$N: not a number" >&2; exit 2 ;; esac
[ "$N" -ge 2 ] || { echo "N=$N: send at least 2 requests" >&2; exit 2; }

TMP="$(mktemp -d "${TMPDIR:-/tmp}/pocket-tts-two-replicas.XXXXXX")"
# nginx's workers (user nobody when started as root) must reach the prefix.
chmod 755 "$TMP"
PIDS=()        # replicas
NGINX_PID=""

cleanup() {
    local rc=$?
    set +e
    if [ -n "$NGINX_PID" ]; then
        kill -QUIT "$NGINX_PID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$NGINX_PID" 2>/dev/null
        wait "$NGINX_PID" 2>/dev/null
    fi
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    if [ "$rc" -ne 0 ] && [ -d "$TMP" ]; then
        for f in "$TMP"/replica*.log "$TMP"/error.log; do
            [ -f "$f" ] && { echo "--- last lines of $(basename "$f")" >&2; tail -n 15 "$f" >&2; }
        done
    fi
    rm -rf "$TMP"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The model: the given config, or the tiny test model with absolute paths.
if [ $# -ge 2 ]; then
    CONFIG="$2"
else
    CONFIG="$TMP/tiny.yaml"
    "$ROOT/scripts/serve/tiny_config.sh" "$CONFIG"
fi
VOICE="${3:-$ROOT/tests/fixtures/tiny/voice_excerpt.wav}"
[ -f "$CONFIG" ] || { echo "$CONFIG: no such config" >&2; exit 2; }

# Starts a replica on a free loopback port; sets REPLICA_PORT.
start_replica() {
    local i="$1" log="$TMP/replica$1.log" port=""
    "$BIN" serve --host 127.0.0.1 --port 0 --config "$CONFIG" --voice "$VOICE" \
        --max-streams 2 --shutdown-timeout 5 2> "$log" &
    PIDS+=("$!")
    for _ in $(seq 600); do
        port="$(sed -n 's#^listening on http://127\.0\.0\.1:\([0-9]*\)$#\1#p' "$log" | head -n 1)"
        [ -n "$port" ] && break
        kill -0 "${PIDS[-1]}" 2>/dev/null || { echo "replica $i exited at start-up" >&2; return 1; }
        sleep 0.1
    done
    [ -n "$port" ] || { echo "replica $i did not listen within 60 s" >&2; return 1; }
    REPLICA_PORT="$port"
}
start_replica 1; PORT1="$REPLICA_PORT"
start_replica 2; PORT2="$REPLICA_PORT"
echo "replicas: 127.0.0.1:$PORT1 (pid ${PIDS[0]}), 127.0.0.1:$PORT2 (pid ${PIDS[1]})"

# nginx on a port nothing listens on (nginx cannot take port 0): a few tries.
CONF="$TMP/nginx.conf"
NGINX_PORT=""
for try in 1 2 3 4 5; do
    port=$(( 20000 + (RANDOM % 20000) ))
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
    sed -e "s#listen 127\.0\.0\.1:8080;#listen 127.0.0.1:$port;#" \
        -e "s#server 127\.0\.0\.1:8001 #server 127.0.0.1:$PORT1 #" \
        -e "s#server 127\.0\.0\.1:8002 #server 127.0.0.1:$PORT2 #" \
        "$ROOT/deploy/nginx/pocket-tts.conf" > "$CONF"
    for want in "listen 127.0.0.1:$port;" "server 127.0.0.1:$PORT1 " "server 127.0.0.1:$PORT2 "; do
        grep -qF "$want" "$CONF" \
            || { echo "deploy/nginx/pocket-tts.conf: the addresses to rewrite were not found" >&2; exit 1; }
    done
    nginx -p "$TMP" -e "$TMP/error.log" -c "$CONF" -g 'daemon off;' &
    NGINX_PID=$!
    for _ in $(seq 50); do
        curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$port/health" 2>/dev/null && { NGINX_PORT="$port"; break; }
        kill -0 "$NGINX_PID" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$NGINX_PORT" ] && break
    echo "nginx did not start on port $port (try $try):" >&2
    tail -n 3 "$TMP/error.log" >&2 || true
    kill -QUIT "$NGINX_PID" 2>/dev/null || true
    wait "$NGINX_PID" 2>/dev/null || true
    NGINX_PID=""
done
[ -n "$NGINX_PORT" ] || { echo "nginx could not start" >&2; exit 1; }
echo "nginx: http://127.0.0.1:$NGINX_PORT (pid $NGINX_PID, prefix $TMP)"

# N requests through nginx, PARALLEL at a time, alternating the two speech routes. Each
# writes "route status bytes time_starttransfer" to its own file.
request() {
    local k="$1" base="http://127.0.0.1:$NGINX_PORT" out="$TMP/req$1"
    if [ $(( k % 2 )) -eq 0 ]; then
        curl -sS -o "$out.wav" --max-time 30 -w "/tts %{http_code} %{size_download} %{time_starttransfer}\n" \
            -F "text=$TEXT" "$base/tts" > "$out.res" 2> "$out.err" || true
    else
        curl -sS -o "$out.wav" --max-time 30 -w "/v1/audio/speech %{http_code} %{size_download} %{time_starttransfer}\n" \
            -H 'Content-Type: application/json' \
            -d "{\"model\":\"pocket-tts\",\"input\":\"$JSON_TEXT\",\"response_format\":\"wav\"}" \
            "$base/v1/audio/speech" > "$out.res" 2> "$out.err" || true
    fi
}
JSON_TEXT="$(printf '%s' "$TEXT" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
export TMP NGINX_PORT TEXT JSON_TEXT
export -f request
t0=$SECONDS
seq 1 "$N" | timeout 90 xargs -P "$PARALLEL" -I{} bash -c 'request {}' || true
echo "$N requests through nginx in $(( SECONDS - t0 )) s"

ok=0; bad=0; ttfbs=""
for k in $(seq 1 "$N"); do
    read -r route code bytes ttfb < "$TMP/req$k.res" 2>/dev/null || { route="?"; code="none"; bytes=0; ttfb=0; }
    # A WAV with audio: a 44-byte header and more.
    if [ "$code" = 200 ] && [ "${bytes:-0}" -gt 44 ]; then
        ok=$(( ok + 1 ))
        # curl 7.88 reports time_starttransfer = time_pretransfer for multipart posts:
        # the JSON route only.
        [ "$route" = /v1/audio/speech ] && ttfbs="$ttfbs $ttfb"
    else
        bad=$(( bad + 1 ))
        echo "request $k ($route): status $code, $bytes bytes $(cat "$TMP/req$k.err" 2>/dev/null)" >&2
    fi
done

# Requests each replica counted (status 200), per route.
served() { # PORT ROUTE
    curl -fsS --max-time 5 "http://127.0.0.1:$1/metrics" \
        | awk -v r="route=\"$2\"" '/^pocket_tts_http_requests_total\{/ && index($0, r) && index($0, "status=\"200\"") { n += $NF } END { print n + 0 }'
}
printf '%-18s %8s %18s %8s\n' replica "/tts" "/v1/audio/speech" total
total=0; fail=0
for i in 1 2; do
    port=$([ "$i" = 1 ] && echo "$PORT1" || echo "$PORT2")
    a=$(served "$port" /tts); b=$(served "$port" /v1/audio/speech)
    printf '%-18s %8s %18s %8s\n' "127.0.0.1:$port" "$a" "$b" "$(( a + b ))"
    total=$(( total + a + b ))
    if [ $(( a + b )) -eq 0 ]; then echo "FAIL: replica $i (127.0.0.1:$port) served no request" >&2; fail=1; fi
done
echo "requests with audio: $ok of $N; counted by the replicas: $total"
if [ -n "$ttfbs" ]; then
    # shellcheck disable=SC2086 # one number per word
    printf '%s\n' $ttfbs | sort -g | awk '{ t[NR] = $1 } END { printf "time to first byte through nginx (/v1/audio/speech): median %.0f ms, max %.0f ms\n", 1000 * t[int((NR + 1) / 2)], 1000 * t[NR] }'
fi
[ "$bad" -eq 0 ] || { echo "FAIL: $bad requests without audio" >&2; fail=1; }
[ "$total" -eq "$ok" ] || { echo "FAIL: the replicas counted $total requests, $ok got audio" >&2; fail=1; }

# Graceful stop: SIGTERM, exit status 0 from each replica.
kill -QUIT "$NGINX_PID" 2>/dev/null || true
wait "$NGINX_PID" 2>/dev/null || true
NGINX_PID=""
for i in 0 1; do kill -TERM "${PIDS[$i]}"; done
for i in 0 1; do
    status=0
    for _ in $(seq 150); do kill -0 "${PIDS[$i]}" 2>/dev/null || break; sleep 0.1; done
    wait "${PIDS[$i]}" || status=$?
    if [ "$status" -ne 0 ]; then echo "FAIL: replica $(( i + 1 )) exited with status $status on SIGTERM" >&2; fail=1; fi
done
PIDS=()
echo "replicas stopped on SIGTERM (exit status 0 expected)"
[ "$fail" -eq 0 ] || exit 1
echo "PASS: both replicas served requests through nginx"
