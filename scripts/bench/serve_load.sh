#!/usr/bin/env bash
# Load test of `pocket-tts-cli serve` (and of the Python reference's `pocket-tts serve`, on
# the same checkpoint and voice), everything on 127.0.0.1:
#
#   scripts/bench/serve_load.sh BINARY CHECKPOINT_DIR OUT.json
#
# BINARY: a release pocket-tts-cli. CHECKPOINT_DIR: a folder with config.yaml, its weights
# and tokenizer.model (e.g. the full-size random checkpoint of
# scripts/reference/make_checkpoint.py --size full). OUT.json: the results.
#
# Per level, ours with --max-streams 8 on POST /v1/audio/speech (WAV) at concurrency
# LEVELS, then ours and the reference on POST /tts (multipart text=...) at REF_LEVELS:
#   1. oha (the load generator): REQS_PER_CLIENT x concurrency requests, concurrency
#      at a time: requests/s, latency p50/p95 (whole response), status codes, errors,
#      bytes (→ seconds of audio generated per wall second);
#   2. scripts/bench/serve_probe.py at the same concurrency (PROBE_PER_CLIENT x
#      concurrency requests): the time to the response head (TTFB, curl's
#      time_starttransfer) and to the first audio byte (TTFA). Ours sends the head with
#      the first audio frame (TTFB = TTFA); the reference's FastAPI sends it before any
#      audio, so for it only TTFA means "time to first audio".
# Then a markdown table on stdout and OUT.json.
#
# Environment:
#   VOICE             voice audio for both servers (default: the repo's ref.wav, else the
#                     first wav of $POCKET_TTS_ASSETS/speech or ../shared/assets/speech)
#   LEVELS            concurrency levels of ours on /v1/audio/speech (default "1 2 4 8")
#   REF_LEVELS        levels on /tts for both servers (default "1 4")
#   REQS_PER_CLIENT   oha requests per client (default 4)
#   PROBE_PER_CLIENT  probe requests per client (default 2; at least PROBE_MIN, default 6)
#   EOS               off (default): both servers read a copy of the config with
#                     default_eos_threshold 1e9, so every request generates the text's
#                     estimated maximum length (the reference's _estimate_max_gen_len; the
#                     random weights' EOS would otherwise end each request after a random,
#                     often tiny, number of frames); on: the checkpoint's own threshold
#   REQ_TIMEOUT       seconds per request (default 120)
#   DEADLINE          seconds for the whole run; levels not started by then are skipped
#                     (default 1800)
#   VENV              the reference's venv (default /tmp/venv); REFERENCE=0 skips it
#   OHA               oha binary (default: oha on PATH, else /tmp/oha-install/bin/oha).
#                     Install: `cargo install --locked oha` (not in Debian bookworm).
#   TEXT              the sentence (default: "Hello world. I am Kyutai's Pocket TTS. I
#                     hope you'll like me.")
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
usage() { echo "usage: $0 BINARY CHECKPOINT_DIR OUT.json" >&2; exit 2; }
[ $# -eq 3 ] || usage
BIN="$1"; CKPT="$2"; OUT="$3"
[ -x "$BIN" ] || { echo "$BIN: not an executable" >&2; exit 2; }
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
[ -f "$CKPT/config.yaml" ] || { echo "$CKPT/config.yaml: not found" >&2; exit 2; }
CKPT="$(cd "$CKPT" && pwd)"
OUT_DIR="$(dirname "$OUT")"; mkdir -p "$OUT_DIR"
OUT="$(cd "$OUT_DIR" && pwd)/$(basename "$OUT")"

LEVELS="${LEVELS:-1 2 4 8}"
REF_LEVELS="${REF_LEVELS:-1 4}"
REQS_PER_CLIENT="${REQS_PER_CLIENT:-4}"
PROBE_PER_CLIENT="${PROBE_PER_CLIENT:-2}"
PROBE_MIN="${PROBE_MIN:-6}"
EOS="${EOS:-off}"
case "$EOS" in on|off) ;; *) echo "EOS=$EOS: use on or off" >&2; exit 2 ;; esac
REQ_TIMEOUT="${REQ_TIMEOUT:-120}"
DEADLINE="${DEADLINE:-1800}"
VENV="${VENV:-/tmp/venv}"
REFERENCE="${REFERENCE:-1}"
DEFAULT_TEXT="Hello world. I am Kyutai's Pocket TTS. I hope you'll like me."
TEXT="${TEXT:-$DEFAULT_TEXT}"
MAX_STREAMS=8

if [ -n "${OHA:-}" ]; then :
elif command -v oha >/dev/null 2>&1; then OHA="$(command -v oha)"
elif [ -x /tmp/oha-install/bin/oha ]; then OHA=/tmp/oha-install/bin/oha
else
    echo "oha not found: cargo install --locked oha (or set OHA=/path/to/oha)" >&2; exit 2
fi
command -v python3 >/dev/null 2>&1 || { echo "python3 is needed (the probe and the report)" >&2; exit 2; }
command -v curl >/dev/null 2>&1 || { echo "curl is needed" >&2; exit 2; }

if [ -z "${VOICE:-}" ]; then
    if [ -f "$ROOT/ref.wav" ]; then VOICE="$ROOT/ref.wav"
    else
        assets="${POCKET_TTS_ASSETS:-$ROOT/../shared/assets}"
        VOICE="$(find "$assets/speech" -name '*.wav' 2>/dev/null | sort | head -n 1)"
    fi
fi
[ -f "${VOICE:-}" ] || { echo "no voice file: set VOICE=path.wav" >&2; exit 2; }
VOICE="$(cd "$(dirname "$VOICE")" && pwd)/$(basename "$VOICE")"
if [ "$REFERENCE" != 0 ] && [ ! -x "$VENV/bin/pocket-tts" ]; then
    echo "$VENV/bin/pocket-tts not found: set VENV, or REFERENCE=0 to skip the reference" >&2
    exit 2
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/pocket-tts-serve-load.XXXXXX")"
SERVER_PID=""
stop_server() { # SIGTERM, 20 s, then SIGKILL; returns the exit status
    local pid="$SERVER_PID" status=0
    [ -n "$pid" ] || return 0
    SERVER_PID=""
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || status=$?
    return "$status"
}
cleanup() {
    local rc=$?
    set +e
    stop_server
    [ "$rc" -ne 0 ] && for f in "$TMP"/*.log; do
        [ -f "$f" ] && { echo "--- last lines of $(basename "$f")" >&2; tail -n 15 "$f" >&2; }
    done
    rm -rf "$TMP"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
wait_health() { # PORT SECONDS
    for _ in $(seq $(( $2 * 10 ))); do
        curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$1/health" 2>/dev/null && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { echo "the server exited at start-up" >&2; return 1; }
        sleep 0.1
    done
    echo "the server did not answer /health within $2 s" >&2
    return 1
}

JSON_BODY="$(TEXT="$TEXT" python3 -c 'import json, os; print(json.dumps({"model": "pocket-tts", "input": os.environ["TEXT"], "response_format": "wav"}))')"
printf '%s' "$JSON_BODY" > "$TMP/speech.json"
BOUNDARY="pocket-tts-serve-load-boundary"
printf -- '--%s\r\nContent-Disposition: form-data; name="text"\r\n\r\n%s\r\n--%s--\r\n' \
    "$BOUNDARY" "$TEXT" "$BOUNDARY" > "$TMP/tts.form"

# One level: oha, then the probe. Writes $TMP/run-N.json: {label, oha, probe}.
RUN=0
run_level() { # SERVER ROUTE CONCURRENCY PORT
    local server="$1" route="$2" c="$3" port="$4" n probe_n url
    RUN=$(( RUN + 1 ))
    if [ "$SECONDS" -ge "$DEADLINE" ]; then
        echo "  $server $route c=$c: skipped (DEADLINE=$DEADLINE s reached)" >&2
        printf '{"server":"%s","route":"%s","concurrency":%s,"skipped":true}\n' "$server" "$route" "$c" > "$TMP/run-$RUN.json"
        return 0
    fi
    n=$(( REQS_PER_CLIENT * c ))
    probe_n=$(( PROBE_PER_CLIENT * c )); [ "$probe_n" -ge "$PROBE_MIN" ] || probe_n="$PROBE_MIN"
    url="http://127.0.0.1:$port$route"
    local t0=$SECONDS
    if [ "$route" = /tts ]; then
        "$OHA" --no-tui --output-format json -n "$n" -c "$c" -t "${REQ_TIMEOUT}s" -m POST \
            -T "multipart/form-data; boundary=$BOUNDARY" -D "$TMP/tts.form" "$url" > "$TMP/oha-$RUN.json"
        python3 "$ROOT/scripts/bench/serve_probe.py" --url "$url" --form-text "$TEXT" \
            --concurrency "$c" --requests "$probe_n" --timeout "$REQ_TIMEOUT" > "$TMP/probe-$RUN.json"
    else
        "$OHA" --no-tui --output-format json -n "$n" -c "$c" -t "${REQ_TIMEOUT}s" -m POST \
            -T application/json -D "$TMP/speech.json" "$url" > "$TMP/oha-$RUN.json"
        python3 "$ROOT/scripts/bench/serve_probe.py" --url "$url" --json "$JSON_BODY" \
            --concurrency "$c" --requests "$probe_n" --timeout "$REQ_TIMEOUT" > "$TMP/probe-$RUN.json"
    fi
    python3 - "$server" "$route" "$c" "$n" "$TMP/oha-$RUN.json" "$TMP/probe-$RUN.json" > "$TMP/run-$RUN.json" <<'EOF'
import json, sys
server, route, c, n, oha_path, probe_path = sys.argv[1:]
oha = json.load(open(oha_path))
probe = json.load(open(probe_path))
probe.pop("results", None)
json.dump({"server": server, "route": route, "concurrency": int(c), "requests": int(n),
           "oha": oha, "probe": probe}, sys.stdout)
EOF
    python3 - "$TMP/run-$RUN.json" "$(( SECONDS - t0 ))" >&2 <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
s, p = r["oha"]["summary"], r["probe"]
codes = r["oha"].get("statusCodeDistribution", {})
print(f"  {r['server']} {r['route']} c={r['concurrency']}: {r['requests']} requests, "
      f"{s['requestsPerSec']:.2f} req/s, status {codes}, errors {r['oha'].get('errorDistribution', {})}; "
      f"probe TTFA p50 {p['ttfa']['p50_ms'] or float('nan'):.0f} ms ({sys.argv[2]} s)")
EOF
}

# The config both servers read: the checkpoint's, with absolute paths (the reference
# resolves relative ones against its cwd, ours against the config's folder) and, with
# EOS=off, an EOS threshold that is never reached.
CONFIG="$TMP/config.yaml"
python3 - "$CKPT/config.yaml" "$CONFIG" "$EOS" <<'EOF'
import os, re, sys
src, dst, eos = sys.argv[1:]
base = os.path.dirname(os.path.abspath(src))
out = []
for line in open(src, encoding="utf-8"):
    m = re.match(r"^(\s*)(weights_path|weights_path_without_voice_cloning|tokenizer_path):\s*(.*?)\s*$", line)
    if m:
        v = m.group(3).strip("'\"")
        if v and not (v.startswith("/") or "://" in v):
            v = os.path.join(base, v)
        line = f"{m.group(1)}{m.group(2)}: '{v}'\n"
    if eos == "off" and re.match(r"^default_eos_threshold:", line):
        continue
    out.append(line)
if eos == "off":
    # Written without an exponent: YAML 1.1 (PyYAML) reads 1e9 as a string.
    out.append("default_eos_threshold: 1000000000.0\n")
open(dst, "w", encoding="utf-8").writelines(out)
EOF
SERVER_ARGS=(--config "$CONFIG" --voice "$VOICE")
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "checkpoint $CKPT (EOS $EOS), voice $VOICE, oha $("$OHA" --version | head -n 1)" >&2

# --- ours
PORT="$(free_port)"
"$BIN" serve --host 127.0.0.1 --port "$PORT" "${SERVER_ARGS[@]}" --max-streams "$MAX_STREAMS" \
    --request-timeout "$REQ_TIMEOUT" --quiet 2> "$TMP/ours.log" &
SERVER_PID=$!
wait_health "$PORT" 120
curl -fsS -o /dev/null --max-time "$REQ_TIMEOUT" -H 'Content-Type: application/json' \
    --data-binary "@$TMP/speech.json" "http://127.0.0.1:$PORT/v1/audio/speech"   # warm-up
echo "ours: pocket-tts-cli serve --max-streams $MAX_STREAMS on 127.0.0.1:$PORT" >&2
for c in $LEVELS; do run_level pocket-tts-rs /v1/audio/speech "$c" "$PORT"; done
for c in $REF_LEVELS; do run_level pocket-tts-rs /tts "$c" "$PORT"; done
curl -fsS --max-time 5 "http://127.0.0.1:$PORT/metrics" > "$TMP/ours-metrics.txt" || true
OURS_EXIT=0; stop_server || OURS_EXIT=$?
echo "ours stopped on SIGTERM with exit status $OURS_EXIT" >&2

# --- the reference (relative paths of its config resolve against its cwd)
REF_VERSION=""
if [ "$REFERENCE" != 0 ]; then
    REF_VERSION="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("pocket-tts"))')"
    PORT="$(free_port)"
    ( cd "$CKPT" && exec "$VENV/bin/pocket-tts" serve --host 127.0.0.1 --port "$PORT" \
        --config "$CONFIG" --default-voice "$VOICE" ) > "$TMP/reference.log" 2>&1 &
    SERVER_PID=$!
    wait_health "$PORT" 300
    curl -fsS -o /dev/null --max-time "$REQ_TIMEOUT" -F "text=$TEXT" "http://127.0.0.1:$PORT/tts"   # warm-up
    echo "reference: pocket-tts $REF_VERSION serve on 127.0.0.1:$PORT" >&2
    for c in $REF_LEVELS; do run_level "reference $REF_VERSION" /tts "$c" "$PORT"; done
    stop_server || true
fi

# --- report
CPU="$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)"
COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
python3 - "$OUT" "$TMP" "$RUN" "$CPU" "$COMMIT" "$BIN" "$CKPT" "$VOICE" "$TEXT" "$OURS_EXIT" "$MAX_STREAMS" "$EOS" "$REF_VERSION" <<'EOF'
import json, os, sys, time
out, tmp, nruns, cpu, commit, binary, ckpt, voice, text, ours_exit, max_streams, eos, ref_version = sys.argv[1:]
# A streaming WAV: a 44-byte header, the audio at 24 kHz 16-bit mono, then 200 ms of
# silence (both servers).
HEADER, SILENCE, BYTES_PER_S = 44, 9600, 48000
rows = []
for i in range(1, int(nruns) + 1):
    r = json.load(open(os.path.join(tmp, f"run-{i}.json")))
    if r.get("skipped"):
        rows.append(r)
        continue
    o, p = r["oha"], r["probe"]
    s = o["summary"]
    codes = {str(k): v for k, v in o.get("statusCodeDistribution", {}).items()}
    ok = codes.get("200", 0)
    errors = sum(o.get("errorDistribution", {}).values()) + sum(v for k, v in codes.items() if k != "200")
    audio_s = max(0.0, (s.get("totalData") or 0) - ok * (HEADER + SILENCE)) / BYTES_PER_S
    lat = o.get("latencyPercentiles", {})
    rows.append({
        "server": r["server"], "route": r["route"], "concurrency": r["concurrency"],
        "requests": r["requests"], "ok": ok, "errors": errors, "status_codes": codes,
        "error_distribution": o.get("errorDistribution", {}),
        "requests_per_s": s.get("requestsPerSec"), "wall_s": s.get("total"),
        "latency_p50_ms": None if lat.get("p50") is None else 1000 * lat["p50"],
        "latency_p95_ms": None if lat.get("p95") is None else 1000 * lat["p95"],
        "audio_s_per_request": audio_s / ok if ok else None,
        "audio_s_per_wall_s": audio_s / s["total"] if s.get("total") else None,
        "probe_requests": p["requests"], "probe_failed": p["failed"],
        "ttfb_p50_ms": p["ttfb"]["p50_ms"], "ttfb_p95_ms": p["ttfb"]["p95_ms"],
        "ttfa_p50_ms": p["ttfa"]["p50_ms"], "ttfa_p95_ms": p["ttfa"]["p95_ms"],
        "oha": o,
    })
def f(v, fmt):
    return "–" if v is None else format(v, fmt)
lines = [
    "| server | route | clients | requests | ok | errors | req/s | latency p50 / p95 (s) "
    "| TTFB p50 / p95 (ms) | first audio p50 / p95 (ms) | audio s / request | audio s / wall s |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
]
for r in rows:
    if r.get("skipped"):
        lines.append(f"| {r['server']} | {r['route']} | {r['concurrency']} | skipped (deadline) |||||||||")
        continue
    lines.append(
        f"| {r['server']} | {r['route']} | {r['concurrency']} | {r['requests']} | {r['ok']} | {r['errors']} "
        f"| {f(r['requests_per_s'], '.2f')} | {f(r['latency_p50_ms'] and r['latency_p50_ms'] / 1000, '.2f')} / "
        f"{f(r['latency_p95_ms'] and r['latency_p95_ms'] / 1000, '.2f')} "
        f"| {f(r['ttfb_p50_ms'], '.0f')} / {f(r['ttfb_p95_ms'], '.0f')} "
        f"| {f(r['ttfa_p50_ms'], '.0f')} / {f(r['ttfa_p95_ms'], '.0f')} "
        f"| {f(r['audio_s_per_request'], '.2f')} | {f(r['audio_s_per_wall_s'], '.2f')} |")
ours = [r for r in rows if not r.get("skipped") and r["server"] == "pocket-tts-rs"]
one = next((r for r in ours if r["route"] == "/v1/audio/speech" and r["concurrency"] == 1), None)
eight = next((r for r in ours if r["route"] == "/v1/audio/speech" and r["concurrency"] == 8), None)
targets = {
    "ttfb_p50_1_client_ms_below_100": None if one is None or one["ttfb_p50_ms"] is None
        else one["ttfb_p50_ms"] < 100,
    "8_clients_all_served": None if eight is None
        else eight["errors"] == 0 and eight["ok"] == eight["requests"] and eight["probe_failed"] == 0,
    "sigterm_exit_0": int(ours_exit) == 0,
}
lines += ["", f"Targets: TTFB p50 at 1 client < 100 ms: {targets['ttfb_p50_1_client_ms_below_100']}; "
          f"8 clients with --max-streams {max_streams} all served: {targets['8_clients_all_served']}; "
          f"SIGTERM exit 0: {targets['sigterm_exit_0']}."]
table = "\n".join(lines)
print(table)
json.dump({
    "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpu": cpu, "cpus": os.cpu_count(),
    "commit": commit, "binary": binary, "checkpoint": ckpt, "voice": voice, "text": text,
    "eos": eos, "reference_version": ref_version or None,
    "max_streams": int(max_streams), "ours_sigterm_exit": int(ours_exit),
    "targets": targets, "runs": rows, "table_markdown": table,
}, open(out, "w"), indent=1)
print(f"\nJSON: {out}", file=sys.stderr)
EOF
