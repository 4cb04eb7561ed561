#!/usr/bin/env bash
# Installs the named Debian packages that are missing, quietly; does nothing when all are
# installed. `apt-get update` runs at most once per CI run (or once an hour outside CI):
# the first call leaves a stamp in ${APT_STAMP_DIR:-/tmp} that the later calls see. Needs
# root or sudo.
#
#   scripts/dev/apt_install.sh [--no-install-recommends] PACKAGE...
set -euo pipefail

opts=()
pkgs=()
for a in "$@"; do
    if [[ $a == -* ]]; then opts+=("$a"); else pkgs+=("$a"); fi
done
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    echo "apt: already installed: ${pkgs[*]}"
    exit 0
fi

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
stamp="${APT_STAMP_DIR:-/tmp}/pocket-tts-apt-updated"
if [[ ! -e $stamp || -n $(find "$stamp" -mmin +60 2>/dev/null) ]]; then
    $sudo apt-get update -qq
    touch "$stamp"
fi
echo "apt: installing ${missing[*]}"
$sudo apt-get install -y -qq "${opts[@]}" "${missing[@]}" >/dev/null
