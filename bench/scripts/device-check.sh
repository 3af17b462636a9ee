#!/usr/bin/env bash
# One call on the GPU machine: configure, build, run the GPU tests and `ceilings measure`, and leave
# logs, the profile and the raw ceilings-bench JSON under $OUT. Prepare with prepare-device-deps.sh.
# Usage (device run): bash bench/scripts/device-check.sh [--quick] [extra ceilings measure args...]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/ceilings-out}
mkdir -p "$OUT"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
deps=()
[ -d .device-deps/cli11 ] && deps+=(-DCEILINGS_CLI11_INCLUDE_DIR="$PWD/.device-deps/cli11")
[ -d .device-deps/googletest ] && deps+=(-DCEILINGS_GTEST_SOURCE_DIR="$PWD/.device-deps/googletest")
{
  date -u +%FT%TZ; git rev-parse HEAD 2>/dev/null; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
} >"$OUT/env.txt" 2>&1
cmake -S . -B build/device "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCEILINGS_BUILD_TESTS=ON "${deps[@]}" >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build/device -j16 >"$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -30; exit 1; }
ctest --test-dir build/device --output-on-failure -j4 >"$OUT/tests.log" 2>&1
echo "tests: $(grep -E 'tests passed|tests failed' "$OUT/tests.log")"
build/device/ceilings measure --out "$OUT/h200.profile.json" "$@" 2>"$OUT/measure.err" | tee "$OUT/measure.txt"
echo "measure exit: ${PIPESTATUS[0]}"
tail -5 "$OUT/measure.err"
