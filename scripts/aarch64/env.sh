# Cargo and qemu variables for building and running pocket-tts-rs for aarch64 on x86_64
# (after scripts/aarch64/setup.sh). Source it: `. scripts/aarch64/env.sh`.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
# For aarch64 programs started through binfmt_misc (the CLI tests' child processes).
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
