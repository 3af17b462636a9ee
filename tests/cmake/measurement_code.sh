#!/usr/bin/env bash
# cmake/GitDescribeScript.cmake's measurement code, run as a script (cmake -P) on a small tree: it changes with the
# sources that decide a measured number (the bench, the kernels, their build files, the analysis code they
# compute with) and with nothing else (the README, the tests, the bench's scripts, an editor's swap file); and the
# generated source is rewritten only when its text changes.
# Usage: measurement_code.sh CMAKE SOURCE_DIR WORK_DIR
set -u
cmake=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work/tree/bench/harness" "$work/tree/bench/scripts" "$work/tree/kernels" \
  "$work/tree/analysis/src" "$work/tree/tests"
trap 'rm -rf "$work"' EXIT
t=$work/tree out=$work/out.cpp
echo 'int measure();' >"$t/bench/harness/measure.hpp"
echo '__global__ void copy() {}' >"$t/kernels/hbm.cu"
echo 'add_library(k k.cu)' >"$t/kernels/CMakeLists.txt"
echo 'double median();' >"$t/analysis/src/stats.cpp"
echo 'bool pin();' >"$t/analysis/src/host_topology.cpp"
echo 'x' >"$t/analysis/src/datasheet.cpp"
echo 'double mfu();' >"$t/analysis/src/utilization.cpp"
echo 'echo run' >"$t/bench/scripts/device-check.sh"
echo '# readme' >"$t/README.md"
echo 'TEST(a, b) {}' >"$t/tests/test_a.cpp"
fail=0
config="Release cuda NVIDIA 13.0.88 archs 90"
code() {
  CEILINGS_GIT_DESCRIBE=test "$cmake" -DSOURCE_DIR="$t" -DOUT="$out" "-DBUILD_CONFIG=$config" \
    -P "$src/cmake/GitDescribeScript.cmake" ||
    { echo "FAIL: the script failed"; exit 1; }
  sed -n 's/.*measurement_code() { return "\([0-9a-f]*\)"; }.*/\1/p' "$out"
}
base=$(code)
if [[ ! $base =~ ^[0-9a-f]{12}$ ]]; then echo "FAIL: measurement code '$base' is not 12 hex digits"; exit 1; fi
# A failed script must fail the step it is run for: its `exit 1` in code() only ends the $(...) subshell, so the
# substitution's status is checked, and a "changed" code must be a code (review 50: a script that failed read as
# "changed by a renamed bench file").
same() {  # same WHAT: the code is still $base after WHAT was done to the tree
  local got; got=$(code) || { echo "FAIL: the script failed after $1"; fail=1; return; }
  if [ "$got" = "$base" ]; then echo "ok:   unchanged by $1"; else echo "FAIL: $1 changed the code ($base -> $got)"; fail=1; fi
}
changed() {  # changed WHAT: the code differs from $base; the new code is the base for what follows
  local got; got=$(code) || { echo "FAIL: the script failed after $1"; fail=1; return; }
  if [[ ! $got =~ ^[0-9a-f]{12}$ ]]; then echo "FAIL: after $1 the code '$got' is not 12 hex digits"; fail=1; return; fi
  if [ "$got" != "$base" ]; then echo "ok:   changed by $1"; base=$got; else echo "FAIL: $1 left the code $base"; fail=1; fi
}
before=$(stat -c %Y.%s "$out"); sleep 1.1; same "running it again"
[ "$(stat -c %Y.%s "$out")" = "$before" ] || { echo "FAIL: an unchanged code rewrote $out"; fail=1; }
echo '# more readme' >>"$t/README.md"; same "the README"
echo 'TEST(a, c) {}' >>"$t/tests/test_a.cpp"; same "a test"
echo 'echo again' >>"$t/bench/scripts/device-check.sh"; same "a bench script"
echo 'double other_mfu();' >>"$t/analysis/src/utilization.cpp"; same "the analysis of finished profiles"
echo x >"$t/bench/.gemm.cpp.swp"; same "an editor's swap file"
mkdir -p "$t/analysis/data" && echo '{}' >"$t/analysis/data/gpus.json"; same "the datasheet table's data (no measurement)"
echo 'int measure(int);' >"$t/bench/harness/measure.hpp"; changed "the bench harness"
echo '__global__ void copy2() {}' >>"$t/kernels/hbm.cu"; changed "a kernel"
echo 'target_compile_options(k PRIVATE -O2)' >>"$t/kernels/CMakeLists.txt"; changed "the kernels' build flags"
echo 'double mean();' >>"$t/analysis/src/stats.cpp"; changed "the statistics the bench computes with"
echo 'bool pin2();' >>"$t/analysis/src/host_topology.cpp"; changed "the host placement (NUMA, pinning)"
echo 'y' >>"$t/analysis/src/datasheet.cpp"; changed "the link rates a PCIe case records its share of"
mkdir -p "$t/cmake" && echo 'set(x -lineinfo)' >"$t/cmake/Warnings.cmake"; changed "the targets' compile options"
config="Release cuda NVIDIA 13.0.88 archs 90,100"; changed "another CUDA architecture"
config="Debug cuda NVIDIA 13.0.88 archs 90,100"; changed "another build type"
echo 'int gemm();' >"$t/bench/gemm.cpp"; changed "a new bench family"
mv "$t/bench/gemm.cpp" "$t/bench/gemm2.cpp"; changed "a renamed bench file"
exit $fail
