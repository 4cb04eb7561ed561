#!/usr/bin/env bash
# Installs a pinned cargo tool unless that version is already installed:
#   scripts/dev/cargo_tool.sh CRATE VERSION
# `cargo install --locked --debug`: these tools run for seconds, and a debug build compiles
# in about half the time of a release one.
set -euo pipefail
name=$1
version=$2
if ! cargo install --list | grep -q "^$name v$version:"; then
    cargo install --quiet --locked --debug "$name@$version"
fi
