#!/usr/bin/env bash
# Installs what ceilings builds against on Debian/Ubuntu (the CUDA Toolkit itself is assumed):
# CMake, Ninja, a C++17 compiler, Google Benchmark, nlohmann/json, CLI11, GoogleTest.
# Pass --slurm to add the Slurm and munge packages the fleet integration test uses.
set -euo pipefail
pkgs=(cmake ninja-build g++ make git libbenchmark-dev nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev)
for arg in "$@"; do
  case "$arg" in
    --slurm) pkgs+=(slurmctld slurmd slurm-client munge) ;;
    *) echo "install-deps.sh: unknown option '$arg' (known: --slurm)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps.sh: nvcc not found: install the CUDA Toolkit (12.x or 13.x) first" >&2
  exit 3
fi
