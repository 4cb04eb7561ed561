#!/usr/bin/env bash
# Installs what scripts/serve/browser_check.sh needs: Debian's Chromium and chromedriver
# (apt-get, skipped when both are there) and a venv with selenium at ${WEB_VENV:-/tmp/web-venv}
# (skipped when it already imports this selenium). Run as root, or with sudo available.
set -euo pipefail

SELENIUM_VERSION=4.51.0
venv="${WEB_VENV:-/tmp/web-venv}"

if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]]; then
    echo "chromium and chromedriver already installed"
else
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q
    $sudo apt-get install -y -q chromium chromium-driver
fi
/usr/bin/chromium --version 2>/dev/null || true
/usr/bin/chromedriver --version

if [[ -x "$venv/bin/python" ]] \
    && "$venv/bin/python" -c "import selenium, sys; sys.exit(selenium.__version__ != '$SELENIUM_VERSION')" 2>/dev/null; then
    echo "venv $venv already has selenium $SELENIUM_VERSION"
else
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "selenium==$SELENIUM_VERSION"
    echo "venv $venv: selenium $SELENIUM_VERSION installed"
fi
