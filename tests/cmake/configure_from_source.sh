#!/usr/bin/env bash
# Configures the project the way the GPU machine builds it: no CLI11 or GoogleTest packages, both taken
# from folders (bench/scripts/prepare-device-deps.sh carries them there), so that path cannot rot while
# every other build finds system packages. Configure only; exit 77 (skip) where the sources are missing.
# Usage: configure_from_source.sh CMAKE SOURCE_DIR WORK_DIR GENERATOR
set -u
cmake=$1 src=$2 work=$3 generator=$4
gtest=/usr/src/googletest cli11=/usr/include
if [ ! -f "$gtest/CMakeLists.txt" ] || [ ! -f "$cli11/CLI/CLI.hpp" ]; then
  echo "skip: GoogleTest sources ($gtest) or CLI11 headers ($cli11/CLI) are not installed"
  exit 77
fi
rm -rf "$work"
"$cmake" -S "$src" -B "$work" -G "$generator" -Wno-deprecated -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCEILINGS_BUILD_TESTS=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON \
  -DCEILINGS_GTEST_SOURCE_DIR="$gtest" -DCEILINGS_CLI11_INCLUDE_DIR="$cli11"
rc=$?
rm -rf "$work"
exit $rc
