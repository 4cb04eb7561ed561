#!/usr/bin/env bash
# The ARM speed proxy of OPTIMIZATION_LOG.md: with no ARM machine to time, compare how
# much slower a Mimi decoder frame is than a FlowLM step, natively on x86_64 and under
# qemu-aarch64. qemu slows every instruction by a similar factor, so an aarch64 build
# whose hot kernels are as vectorised as the x86_64 ones keeps the two ratios close; a
# kernel that falls back to scalar code on aarch64 inflates its side of the ratio.
#
#   scripts/aarch64/ratio.sh CHECKPOINT_DIR X86_64_CLI AARCH64_CLI [RUNS]
#
# Both CLIs are release builds; each run is `generate --threads 1 --stats-json` of the
# same text, voice and seed; runs alternate between the two. Prints, per run and as
# median [min, max] over runs: the FlowLM step p50, the Mimi decode frame p50 and their
# ratio, then the aarch64/x86_64 quotient of the median ratios. Run setup.sh first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
ckpt="$1"
x86="$2"
arm="$3"
runs="${4:-3}"
voice="${VOICE:-$here/../../ref.wav}"
text="${TEXT:-The quick brown fox jumps over the lazy dog, then it runs back home.}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

lscpu | grep -m1 'Model name' || true
for i in $(seq 1 "$runs"); do
    for side in x86_64 aarch64; do
        cli="$x86"
        [[ $side == aarch64 ]] && cli="$arm"
        "$cli" generate --config "$ckpt/config.yaml" --voice "$voice" --text "$text" \
            --seed 1 --threads 1 -q --stats-json "$work/$side-$i.json" \
            --output-path "$work/$side-$i.wav"
    done
done

python3 - "$work" "$runs" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
med = {}
for side in ("x86_64", "aarch64"):
    rows = []
    for i in range(1, runs + 1):
        s = json.load(open(f"{work}/{side}-{i}.json"))
        lm, mimi = s["lm_step_ms"]["p50"], s["decode_frame_ms"]["p50"]
        rows.append((lm, mimi, mimi / lm))
        print(f"{side:8} run {i}: FlowLM step p50 {lm:9.2f} ms, Mimi frame p50 {mimi:9.2f} ms,"
              f" Mimi/FlowLM {mimi / lm:.3f} ({s['frames']} frames)")
    r = [x[2] for x in rows]
    med[side] = statistics.median(r)
    print(f"{side:8} Mimi/FlowLM median {med[side]:.3f} [{min(r):.3f}, {max(r):.3f}]"
          f"; FlowLM step median {statistics.median(x[0] for x in rows):.2f} ms,"
          f" Mimi frame median {statistics.median(x[1] for x in rows):.2f} ms")
print(f"aarch64 ratio / x86_64 ratio = {med['aarch64'] / med['x86_64']:.2f} (done when <= 2)")
PY
