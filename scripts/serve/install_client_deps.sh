#!/usr/bin/env bash
# Installs what scripts/serve/check_clients.sh and two_replicas.sh need: Debian's Chromium,
# chromedriver and nginx (scripts/dev/apt_install.sh: skipped when all are there) and a venv at ${SERVE_VENV:-/tmp/serve-venv} with the
# real clients: selenium (drives Chromium), openai, wyoming and requests, PyAV (FFmpeg's
# decoders, for the compressed formats), and msgpack and websockets (what Kyutai's websocket
# clients use) (skipped when it already has these versions). Run as root, or with sudo
# available.
set -euo pipefail

SELENIUM_VERSION=4.51.0
OPENAI_VERSION=3.57.0
WYOMING_VERSION=1.10.2
REQUESTS_VERSION=2.32.5
AV_VERSION=16.1.0
MSGPACK_VERSION=1.1.2
WEBSOCKETS_VERSION=15.0.1
venv="${SERVE_VENV:-/tmp/serve-venv}"

"$(dirname "$0")/../dev/apt_install.sh" chromium chromium-driver nginx
/usr/bin/chromium --version 2>/dev/null || true
/usr/bin/chromedriver --version

have() {
    "$venv/bin/python" - <<PY 2>/dev/null
import importlib.metadata as m, sys
want = {"selenium": "$SELENIUM_VERSION", "openai": "$OPENAI_VERSION", "wyoming": "$WYOMING_VERSION",
        "requests": "$REQUESTS_VERSION", "av": "$AV_VERSION", "msgpack": "$MSGPACK_VERSION", "websockets": "$WEBSOCKETS_VERSION"}
sys.exit(any(m.version(p) != v for p, v in want.items()))
PY
}
if [[ -x "$venv/bin/python" ]] && have; then
    echo "venv $venv already has selenium $SELENIUM_VERSION, openai $OPENAI_VERSION, wyoming $WYOMING_VERSION," \
        "requests $REQUESTS_VERSION, av $AV_VERSION, msgpack $MSGPACK_VERSION, websockets $WEBSOCKETS_VERSION"
else
    [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "selenium==$SELENIUM_VERSION" "openai==$OPENAI_VERSION" \
        "wyoming==$WYOMING_VERSION" "requests==$REQUESTS_VERSION" "av==$AV_VERSION" \
        "msgpack==$MSGPACK_VERSION" "websockets==$WEBSOCKETS_VERSION"
    echo "venv $venv: selenium $SELENIUM_VERSION, openai $OPENAI_VERSION, wyoming $WYOMING_VERSION," \
        "requests $REQUESTS_VERSION, av $AV_VERSION, msgpack $MSGPACK_VERSION, websockets $WEBSOCKETS_VERSION installed"
fi
