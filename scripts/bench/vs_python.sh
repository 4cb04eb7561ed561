#!/usr/bin/env bash
# Speed and memory: our pocket-tts-cli vs the Python reference (pocket-tts==4.0.1), on the same
# FULL-size random-weight checkpoint, text, voice and frame count.
#
#   scripts/bench/vs_python.sh                        # prints a markdown report, also saved in the work dir
#   BENCH_ROUNDS=5 BENCH_OUT=report.md scripts/bench/vs_python.sh
#
# What it does (each step idempotent):
#   1. reference venv: scripts/reference/setup_venv.sh ($REFERENCE_VENV, default
#      <repo>/.venv-reference; e.g. REFERENCE_VENV=/tmp/venv reuses an existing one);
#      hyperfine (Debian package; `apt-get install -y hyperfine` when missing, as root);
#   2. full-size random checkpoint (scripts/reference/make_checkpoint.py --size full) and its
#      config in $BENCH_WORK_DIR/checkpoint (default /tmp/pocket-tts-bench, outside the repo),
#      tokenizer.model symlinked from $POCKET_TTS_ASSETS; reused while its stamp matches;
#   3. our CLI: `cargo build --release -p pocket-tts-cli` in this checkout (BENCH_REV=<git rev>:
#      that commit, built in a git worktree under the work dir with its own target dir;
#      BENCH_CLI=<binary>: that binary). The binary is copied aside first, so concurrent
#      rebuilds cannot change it mid-run;
#   4. one untimed run of each tool per text, whose WAVs must have the same number of samples
#      (same frame count: EOS disabled with --eos-threshold 1e9, same --max-tokens);
#   5. (a) whole-process `generate` of the short, medium and long texts with hyperfine, one run
#      per tool per round, the tools' order alternating between rounds;
#      (b) in-process figures from each tool's own report, interleaved the same way: ours from
#      `--stats-json` (and `stream --measure-first-chunk --runs N`), the reference's from
#      scripts/bench/reference_stats.py (same JSON keys, measured the same way in-process):
#        voice   : voice prompt = the 11 s speech/jfk_16k.wav (voice_ms), short text;
#        steady  : voice ref.wav, the $BENCH_INPROC_TEXT text: RTF, steady-state ms per frame,
#                  FlowLM step and Mimi frame times, text prefill, first audio, peak RSS;
#        first   : voice ref.wav, short text, time to first audio over $BENCH_FIRST_CHUNK_RUNS
#                  runs in one process (needs our `stream --measure-first-chunk`);
#   6. scripts/bench/report.py: markdown table (medians, min–max, ratio Python/ours), machine,
#      load averages, commands; raw JSON/logs stay in the run's folder.
#
# Our CLI's newer flags are used when it has them (`--stats-json`, `stream`, `--threads`);
# without `--stats-json` the figures come from its log lines and peak RSS from GNU time, and
# without `stream` the warm first-chunk row is left out.
#
# Environment (all optional):
#   BENCH_WORK_DIR          work dir (default /tmp/pocket-tts-bench; must be outside the repo)
#   BENCH_SEED              checkpoint seed (default 0)
#   BENCH_ROUNDS            interleaved rounds, >= 3 (default 3)
#   BENCH_FIRST_CHUNK_RUNS  runs per process of the first-chunk measurement (default 5)
#   BENCH_MAX_TOKENS        --max-tokens for both tools (default 50)
#   BENCH_EOS_THRESHOLD     --eos-threshold for both tools (default 1e9: EOS never fires)
#   BENCH_INPROC_TEXT       short | medium | long: text of the steady-state runs (default medium)
#   BENCH_PARTS             comma list of hyperfine,inproc (default both)
#   BENCH_TEXTS             texts of the warm-up and hyperfine parts (default "short medium long")
#   BENCH_SMOKE             1: allow BENCH_ROUNDS below 3 (to test this script, not to measure)
#   BENCH_THREADS           passed to our CLI as --threads N (when it has the flag)
#   BENCH_OUR_ARGS          extra flags for every run of our CLI, e.g. "--quantize" or
#                           "--dtype bf16" (word-split)
#   BENCH_REF_ARGS          extra flags for every run of the reference, e.g. "--quantize"
#                           (its generate and scripts/bench/reference_stats.py take it)
#   The report's rows per weight format come from one run each, e.g.:
#     scripts/bench/vs_python.sh                                        # f32 vs f32
#     BENCH_OUR_ARGS=--quantize BENCH_REF_ARGS=--quantize scripts/bench/vs_python.sh
#     BENCH_OUR_ARGS="--dtype bf16" scripts/bench/vs_python.sh           # ours bf16 vs its f32
#   BENCH_REV, BENCH_CLI    see step 3
#   BENCH_OUT               also write the report there
#   REFERENCE_VENV, POCKET_TTS_ASSETS, CARGO (default cargo)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${REFERENCE_VENV:-$repo/.venv-reference}"
assets="${POCKET_TTS_ASSETS:-$repo/../shared/assets}"
work="${BENCH_WORK_DIR:-/tmp/pocket-tts-bench}"
seed="${BENCH_SEED:-0}"
rounds="${BENCH_ROUNDS:-3}"
fc_runs="${BENCH_FIRST_CHUNK_RUNS:-5}"
max_tokens="${BENCH_MAX_TOKENS:-50}"
eos="${BENCH_EOS_THRESHOLD:-1e9}"
inproc_text="${BENCH_INPROC_TEXT:-medium}"
parts="${BENCH_PARTS:-hyperfine,inproc}"
cargo="${CARGO:-cargo}"

# The texts. short: one sentence of 8 words; medium: three sentences of the reference's
# default English text; long: a paragraph that splits into two chunks at 50 tokens.
declare -A TEXT=(
    [short]="Hello world, this is a short test sentence."
    [medium]="Hello world. I am Kyutai's Pocket TTS. I hope you'll like me."
    [long]="Pocket TTS is a small text to speech model that runs on a laptop. It clones a voice from a few seconds of audio. Long texts are split into groups of sentences. Each group starts from the same voice state."
)
read -r -a TEXTS <<<"${BENCH_TEXTS:-short medium long}"

die() { echo "bench_vs_python: error: $*" >&2; exit 2; }
step() { printf '\n== %s\n' "$*" >&2; }

min_rounds=3
[[ "${BENCH_SMOKE:-0}" == 1 ]] && min_rounds=1
[[ "$rounds" =~ ^[0-9]+$ && "$rounds" -ge "$min_rounds" ]] \
    || die "BENCH_ROUNDS=$rounds: give a whole number >= 3 (BENCH_SMOKE=1 allows 1, for testing this script)"
for t in "${TEXTS[@]}"; do
    [[ -n "${TEXT[$t]:-}" ]] || die "BENCH_TEXTS: unknown text '$t' (short, medium, long)"
done
[[ "$fc_runs" =~ ^[0-9]+$ && "$fc_runs" -ge 1 ]] || die "BENCH_FIRST_CHUNK_RUNS=$fc_runs: give a whole number >= 1"
[[ -n "${TEXT[$inproc_text]:-}" ]] || die "BENCH_INPROC_TEXT=$inproc_text: use short, medium or long"
for p in ${parts//,/ }; do
    [[ "$p" == hyperfine || "$p" == inproc ]] || die "BENCH_PARTS: unknown part '$p' (hyperfine, inproc)"
done
has_part() { [[ ",$parts," == *",$1,"* ]]; }

[[ -d "$assets" ]] || die "assets dir $assets not found (set POCKET_TTS_ASSETS)"
assets="$(cd "$assets" && pwd)"
[[ -f "$assets/tokenizer.model" ]] || die "$assets/tokenizer.model not found (set POCKET_TTS_ASSETS)"
jfk="$assets/speech/jfk_16k.wav"
[[ -f "$jfk" ]] || die "$jfk not found (set POCKET_TTS_ASSETS)"
voice="$repo/ref.wav"
[[ -f "$voice" ]] || die "$voice not found (scripts/reference/make_ref_wav.sh makes it)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) not found: apt-get install -y time"

mkdir -p "$work"
work="$(cd "$work" && pwd -P)"
case "$work/" in
    "$(cd "$repo" && pwd -P)/"*) die "BENCH_WORK_DIR ($work) must be outside the repository" ;;
esac
ckpt="$work/checkpoint"
run_dir="$work/runs/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$ckpt" "$run_dir" "$work/bin"

# ---------------------------------------------------------------- 1. tools
step "reference venv ($venv)"
REFERENCE_VENV="$venv" "$repo/scripts/reference/setup_venv.sh" >&2
py="$venv/bin/python"
"$py" -c 'import numpy, soundfile, pocket_tts' || die "venv $venv lacks numpy/soundfile/pocket_tts"

if has_part hyperfine && ! command -v hyperfine >/dev/null; then
    step "installing hyperfine (Debian package)"
    [[ "$(id -u)" == 0 ]] || die "hyperfine is missing: install it (apt-get install -y hyperfine) or run as root"
    apt-get install -y hyperfine >&2 || { apt-get update >&2 && apt-get install -y hyperfine >&2; } \
        || die "apt-get install -y hyperfine failed"
fi

# ---------------------------------------------------------------- 2. checkpoint
step "full-size random checkpoint (seed $seed) in $ckpt"
stamp="$ckpt/.bench_stamp"
want_stamp="seed=$seed make_checkpoint=$(sha256sum "$repo/scripts/reference/make_checkpoint.py" | cut -d' ' -f1)"
if [[ -f "$stamp" && -f "$ckpt/model.safetensors" && -f "$ckpt/config.yaml" \
      && "$(head -n1 "$stamp")" == "$want_stamp" \
      && "$(sed -n 2p "$stamp")" == "$(stat -c '%s %Y' "$ckpt/model.safetensors")" ]]; then
    echo "reusing $ckpt/model.safetensors (stamp matches)" >&2
else
    rm -f "$stamp"
    POCKET_TTS_ASSETS="$assets" "$py" "$repo/scripts/reference/make_checkpoint.py" \
        --size full --seed "$seed" --out "$ckpt" --config "$ckpt/config.yaml" >&2
    { echo "$want_stamp"; stat -c '%s %Y' "$ckpt/model.safetensors"; } >"$stamp"
fi
ln -sfn "$assets/tokenizer.model" "$ckpt/tokenizer.model"

# ---------------------------------------------------------------- 3. our CLI
if [[ -n "${BENCH_CLI:-}" ]]; then
    [[ -x "$BENCH_CLI" ]] || die "BENCH_CLI=$BENCH_CLI is not an executable"
    built="$BENCH_CLI"
    cli_desc="given binary $BENCH_CLI"
elif [[ -n "${BENCH_REV:-}" ]]; then
    rev="$(git -C "$repo" rev-parse --verify "${BENCH_REV}^{commit}")" || die "BENCH_REV=$BENCH_REV is not a commit"
    src="$work/src-${rev:0:12}"
    step "building our CLI at $rev in $src (target dir $work/target)"
    if [[ ! -d "$src" ]]; then
        git -C "$repo" worktree add --detach "$src" "$rev" >&2
    fi
    [[ "$(git -C "$src" rev-parse HEAD)" == "$rev" ]] || die "$src is not at $rev: remove it (git worktree remove $src)"
    (cd "$src" && CARGO_TARGET_DIR="$work/target" "$cargo" build --release -p pocket-tts-cli >&2)
    built="$work/target/release/pocket-tts-cli"
    cli_desc="commit $rev (git worktree, clean)"
else
    step "cargo build --release -p pocket-tts-cli"
    (cd "$repo" && "$cargo" build --release -p pocket-tts-cli >&2)
    built="$repo/target/release/pocket-tts-cli"
    dirty=""
    [[ -z "$(git -C "$repo" status --porcelain --untracked-files=no -- crates Cargo.toml Cargo.lock)" ]] \
        || dirty=" + uncommitted changes in the working tree"
    cli_desc="working tree of $repo at $(git -C "$repo" rev-parse HEAD)$dirty"
fi
[[ -x "$built" ]] || die "$built was not built"
cli_sha="$(sha256sum "$built" | cut -d' ' -f1)"
cli="$work/bin/pocket-tts-cli-${cli_sha:0:16}"
[[ -x "$cli" ]] || { cp "$built" "$cli.tmp" && mv "$cli.tmp" "$cli"; }

has_stats=no; has_stream=no; has_threads=no
"$cli" generate --help 2>/dev/null | grep -q -- '--stats-json' && has_stats=yes
"$cli" stream --help 2>/dev/null | grep -q -- '--measure-first-chunk' && has_stream=yes
"$cli" generate --help 2>/dev/null | grep -q -- '--threads' && has_threads=yes
read -r -a our_args <<<"${BENCH_OUR_ARGS:-}"
read -r -a ref_args <<<"${BENCH_REF_ARGS:-}"
for a in "${our_args[@]}"; do
    [[ "$a" == -* ]] || continue
    "$cli" generate --help 2>/dev/null | grep -q -- "${a%%=*}" || die "BENCH_OUR_ARGS: $cli generate has no ${a%%=*} flag"
done
thread_args=()
if [[ -n "${BENCH_THREADS:-}" ]]; then
    [[ "$has_threads" == yes ]] || die "BENCH_THREADS is set but $cli has no --threads flag"
    thread_args=(--threads "$BENCH_THREADS")
fi
# Our extra flags ride along with the thread flag on every command of ours.
thread_args+=("${our_args[@]}")
echo "our CLI: $cli_desc; copied to $cli; --stats-json: $has_stats, stream --measure-first-chunk: $has_stream, --threads: $has_threads" >&2

# ---------------------------------------------------------------- commands
# Every command is a small script in $run_dir/cmd, so that hyperfine, the warm-up and the
# report run exactly the same thing (and the texts need no shell quoting on hyperfine's side).
mkdir -p "$run_dir/cmd" "$run_dir/out" "$run_dir/raw"
q() { printf '%q' "$1"; }
common_flags() { # TEXT_NAME VOICE
    printf -- '--voice %s --text %s --temperature 0 --eos-threshold %s --max-tokens %s' \
        "$(q "$2")" "$(q "${TEXT[$1]}")" "$(q "$eos")" "$(q "$max_tokens")"
}
write_cmd() { # NAME BODY
    printf '#!/usr/bin/env bash\nset -uo pipefail\n%s\n' "$2" >"$run_dir/cmd/$1.sh"
    chmod +x "$run_dir/cmd/$1.sh"
}
# The reference CLI sometimes aborts at interpreter exit (SIGABRT, exit 134, "terminate called
# without an active exception") after writing a complete WAV (its daemon threads): accepted
# when the WAV is there.
ref_tail='rc=$?; if [[ $rc -eq 134 && -s "$out" ]]; then rc=0; fi; exit $rc'
for t in "${TEXTS[@]}"; do
    write_cmd "ours_$t" "out=$(q "$run_dir/out/ours_$t.wav")
cd $(q "$work") && exec $(q "$cli") generate --config $(q "$ckpt/config.yaml") $(common_flags "$t" "$voice") ${thread_args[*]:-} -q --output-path \"\$out\""
    write_cmd "ref_$t" "out=$(q "$run_dir/out/ref_$t.wav")
cd $(q "$ckpt") && $(q "$py") -m pocket_tts generate --config config.yaml $(common_flags "$t" "$voice") ${ref_args[*]:-} -q --output-path \"\$out\"
$ref_tail"
done

# In-process runs (argument: the round), ours with --stats-json (or its log), the reference
# through its harness. Each writes $run_dir/raw/<name>.<round>.json.
stats_flag() { [[ "$has_stats" == yes ]] && printf -- '--stats-json "$js"'; return 0; }
inproc_cmds() { # KIND TEXT_NAME VOICE
    local kind="$1" t="$2" v="$3"
    write_cmd "ours_$kind" "js=$(q "$run_dir/raw/ours_$kind").\$1.json
cd $(q "$work") && exec $(q "$cli") generate --config $(q "$ckpt/config.yaml") $(common_flags "$t" "$v") ${thread_args[*]:-} $(stats_flag) --output-path $(q "$run_dir/out/ours_$kind.wav")"
    write_cmd "ref_$kind" "js=$(q "$run_dir/raw/ref_$kind").\$1.json
cd $(q "$work") && exec $(q "$py") $(q "$repo/scripts/bench/reference_stats.py") --config $(q "$ckpt/config.yaml") $(common_flags "$t" "$v") ${ref_args[*]:-} --stats-json \"\$js\""
}
inproc_cmds voice short "$jfk"
inproc_cmds steady "$inproc_text" "$voice"
if [[ "$has_stream" == yes ]]; then
    write_cmd ours_first "js=$(q "$run_dir/raw/ours_first").\$1.json
cd $(q "$work") && exec $(q "$cli") stream --config $(q "$ckpt/config.yaml") $(common_flags short "$voice") ${thread_args[*]:-} --measure-first-chunk --runs $fc_runs --stats-json \"\$js\" >/dev/null"
fi
write_cmd ref_first "js=$(q "$run_dir/raw/ref_first").\$1.json
cd $(q "$work") && exec $(q "$py") $(q "$repo/scripts/bench/reference_stats.py") --config $(q "$ckpt/config.yaml") $(common_flags short "$voice") ${ref_args[*]:-} --measure-first-chunk --runs $fc_runs --stats-json \"\$js\""

# Runs one in-process command under GNU time, with the load average before it.
run_timed() { # NAME ROUND
    local name="$1" n="$2" base="$run_dir/raw/$1.$2"
    cut -d' ' -f1 /proc/loadavg >"$base.load"
    if ! /usr/bin/time -f '%M %e %U %S' -o "$base.time" "$run_dir/cmd/$name.sh" "$n" \
            >"$base.stdout" 2>"$base.log"; then
        tail -n 20 "$base.log" >&2
        die "$name (round $n) failed; log: $base.log"
    fi
}

{
    echo "cli=$cli"; echo "cli_desc=$cli_desc"; echo "cli_sha256=$cli_sha"
    echo "has_stats=$has_stats"; echo "has_stream=$has_stream"; echo "has_threads=$has_threads"
    echo "threads_arg=${BENCH_THREADS:-}"; echo "rounds=$rounds"; echo "fc_runs=$fc_runs"
    echo "our_args=${BENCH_OUR_ARGS:-}"; echo "ref_args=${BENCH_REF_ARGS:-}"
    echo "max_tokens=$max_tokens"; echo "eos=$eos"; echo "inproc_text=$inproc_text"
    echo "checkpoint=$ckpt"; echo "seed=$seed"; echo "voice=$voice"; echo "jfk=$jfk"
    echo "parts=$parts"; echo "venv=$venv"
    echo "machine=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n1), $(nproc) CPUs (nproc), $(free -g | awk '/^Mem:/{print $2}') GiB RAM"
    echo "torch=$("$py" -c 'import torch; print(torch.__version__)')"
} >"$run_dir/meta.env"
for t in "${TEXTS[@]}"; do printf '%s\t%s\n' "$t" "${TEXT[$t]}"; done >"$run_dir/texts.tsv"

# ---------------------------------------------------------------- 4. warm-up + same length
step "warm-up: one untimed run of each tool per text; checking that the WAVs have the same length"
for t in "${TEXTS[@]}"; do
    for tool in ours ref; do
        "$run_dir/cmd/${tool}_$t.sh" >"$run_dir/raw/warmup_${tool}_$t.log" 2>&1 \
            || { tail -n 20 "$run_dir/raw/warmup_${tool}_$t.log" >&2; die "${tool}_$t failed (see $run_dir/cmd/${tool}_$t.sh)"; }
    done
    "$py" - "$run_dir/out/ours_$t.wav" "$run_dir/out/ref_$t.wav" "$t" >&2 <<'EOF'
import sys
import soundfile as sf
a, b = (sf.info(p) for p in sys.argv[1:3])
print(f"{sys.argv[3]}: ours {a.frames} samples, reference {b.frames} samples at {a.samplerate} Hz"
      f" ({a.frames / a.samplerate:.2f} s)")
if a.frames != b.frames or a.samplerate != b.samplerate:
    sys.exit(f"bench_vs_python: error: the two WAVs of the {sys.argv[3]} text differ in length")
EOF
done

# ---------------------------------------------------------------- 5a. hyperfine
if has_part hyperfine; then
    for r in $(seq 1 "$rounds"); do
        for t in "${TEXTS[@]}"; do
            if (( r % 2 )); then order=(ours ref); else order=(ref ours); fi
            step "hyperfine round $r/$rounds, $t text (${order[*]})"
            args=()
            for tool in "${order[@]}"; do args+=(--command-name "${tool}_$t" "$run_dir/cmd/${tool}_$t.sh"); done
            cut -d' ' -f1 /proc/loadavg >"$run_dir/raw/hf_$t.$r.load"
            hyperfine --runs 1 --style basic --export-json "$run_dir/raw/hf_$t.$r.json" "${args[@]}" >&2
        done
    done
fi

# ---------------------------------------------------------------- 5b. in-process
if has_part inproc; then
    kinds=(voice steady first)
    for r in $(seq 1 "$rounds"); do
        for kind in "${kinds[@]}"; do
            if (( r % 2 )); then order=(ours ref); else order=(ref ours); fi
            for tool in "${order[@]}"; do
                [[ -x "$run_dir/cmd/${tool}_$kind.sh" ]] || continue
                step "in-process round $r/$rounds: ${tool}_$kind"
                run_timed "${tool}_$kind" "$r"
            done
        done
    done
fi

# ---------------------------------------------------------------- 6. report
step "report"
report="$run_dir/report.md"
"$py" "$repo/scripts/bench/report.py" "$run_dir" >"$report"
cat "$report"
if [[ -n "${BENCH_OUT:-}" ]]; then
    cp "$report" "$BENCH_OUT"
    echo "report written to $BENCH_OUT" >&2
fi
echo "raw results: $run_dir" >&2
