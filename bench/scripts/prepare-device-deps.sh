#!/usr/bin/env bash
# Run here, before a GPU-machine call: copies the header-only CLI11 and GoogleTest's sources (which
# the GPU machine lacks) into .device-deps/ (git-ignored). Name .device-deps in the call's carry.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .device-deps && mkdir -p .device-deps/cli11
cp -r /usr/include/CLI .device-deps/cli11/
cp -r /usr/src/googletest .device-deps/googletest
du -sh .device-deps
