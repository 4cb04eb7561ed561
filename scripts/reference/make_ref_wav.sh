#!/usr/bin/env bash
# Makes `ref.wav` at the repository root: a voice prompt for tests, examples and benchmarks.
#
# 24 kHz, mono, PCM16 WAV of synthetic English speech (about 7 s), produced by espeak-ng
# and converted by SoX. The output is deterministic for given espeak-ng and SoX versions:
# no dither (-D), fixed voice, speed and text. Made with espeak-ng 1.51 and SoX 14.4.2.
#
# Usage: scripts/reference/make_ref_wav.sh [OUTPUT]   (default: <repo root>/ref.wav)
# Needs: espeak-ng, sox (Debian/Ubuntu: apt-get install -y espeak-ng sox).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:-$repo_root/ref.wav}"

for tool in espeak-ng sox; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: $tool is not installed (apt-get install -y espeak-ng sox)" >&2
        exit 1
    fi
done

text="The quick brown fox jumps over the lazy dog. \
Pocket TTS is a small text to speech model that runs in real time on a laptop."

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# espeak-ng writes 22050 Hz mono PCM16.
espeak-ng -v en-us -s 160 -p 50 -a 100 -w "$tmp/espeak.wav" "$text"

# Resample to 24 kHz, normalise to -3 dBFS, write PCM16 without dither (deterministic).
sox -D -V1 "$tmp/espeak.wav" -r 24000 -c 1 -b 16 -e signed-integer "$tmp/ref.wav" \
    rate -v gain -n -3

mv "$tmp/ref.wav" "$out"
echo "wrote $out ($(soxi -D "$out") s, $(soxi -r "$out") Hz, $(soxi -c "$out") channel)"
