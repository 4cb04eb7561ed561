#!/usr/bin/env bash
# Prepares this x86_64 Linux machine to build pocket-tts-rs for aarch64 and run the
# result under emulation: the rustup target, Debian's cross linker and libc
# (gcc-aarch64-linux-gnu) and qemu-user (apt-get, skipped when present), and a
# binfmt_misc entry so that aarch64 executables run under qemu-aarch64 when started
# directly (the CLI tests spawn the binary they test). Idempotent. Needs root (or sudo)
# for apt-get and binfmt_misc. Source env.sh afterwards for the cargo variables.
set -euo pipefail

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"

rustup target add aarch64-unknown-linux-gnu 2>&1 | grep -v "is up to date" || true

"$(dirname "$0")/../dev/apt_install.sh" --no-install-recommends gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
aarch64-linux-gnu-gcc --version | head -1
qemu-aarch64 --version | head -1

# binfmt_misc: aarch64 ELF executables -> qemu-aarch64. The F flag opens the
# interpreter now, so it also works from other mount namespaces; QEMU_LD_PREFIX (env.sh)
# tells it where the aarch64 dynamic loader and libc are.
binfmt=/proc/sys/fs/binfmt_misc
if [[ ! -e $binfmt/register ]]; then
    $sudo mount -t binfmt_misc binfmt_misc "$binfmt"
fi
if [[ -e $binfmt/qemu-aarch64 ]]; then
    echo "binfmt_misc: qemu-aarch64 already registered ($(head -1 $binfmt/qemu-aarch64))"
else
    magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    echo ":qemu-aarch64:M::$magic:$mask:$(command -v qemu-aarch64):F" |
        $sudo tee "$binfmt/register" >/dev/null
    echo "binfmt_misc: qemu-aarch64 registered"
fi
