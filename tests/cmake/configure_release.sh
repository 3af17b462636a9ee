#!/usr/bin/env bash
# Configures the project as README command (1) does (the `release` preset: no tests) and checks that the build
# it generates makes what a user runs: `ceilings`, `ceilings-bench` where CUDA is built, and the fake NVML that
# `ceilings self-test` needs. Every other build here has the tests on and would not notice a release build that
# lost one of them or referenced a test target. Configure only.
# Usage: configure_release.sh CMAKE SOURCE_DIR WORK_DIR GENERATOR MAKE_PROGRAM CUDA(1|0) [-DVAR=VALUE ...]
# (the -D arguments: dependencies the calling build took from folders rather than packages)
set -u
cmake=$1 src=$2 work=$3 generator=$4 make_program=$5 cuda=$6
shift 6
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
# The preset's cache variables, with the architecture fixed so nvidia-smi's answer does not matter here.
if ! "$cmake" -S "$src" -B "$work" -G "$generator" -Wno-deprecated -DCMAKE_BUILD_TYPE=Release \
    -DCEILINGS_BUILD_TESTS=OFF -DCEILINGS_BUILD_CUDA="$cuda" -DCMAKE_CUDA_ARCHITECTURES=90 "$@" >"$work.log" 2>&1; then
  cat "$work.log"; rm -f "$work.log"; exit 1
fi
rm -f "$work.log"
# Whether the generated build knows a target (it builds nothing): Ninja's query tool, or Make's help list.
case "$generator" in
  Ninja*) has_target() { "$make_program" -C "$work" -t query "$1" >/dev/null 2>&1; } ;;
  *) has_target() { "$cmake" --build "$work" --target help 2>/dev/null | grep -qE "^\.\.\. $1( |$)"; } ;;
esac
fail=0
want="ceilings ceilings_fake_nvml"
[ "$cuda" = 1 ] && want="$want ceilings-bench"
for t in $want; do
  if has_target "$t"; then echo "ok:   the release build makes $t"; else echo "FAIL: the release build has no target $t"; fail=1; fi
done
for t in ceilings_cpu_tests ceilings_gpu_tests ceilings_standin_bench; do
  if has_target "$t"; then echo "FAIL: the release build makes the test target $t"; fail=1; fi
done
exit $fail
