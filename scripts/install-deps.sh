#!/usr/bin/env bash
# Installs what ceilings builds against on Debian/Ubuntu (the CUDA Toolkit itself is assumed):
# CMake, Ninja, a C++17 compiler, Google Benchmark, nlohmann/json, CLI11, GoogleTest.
# Pass --slurm to add the Slurm and munge packages the fleet integration test uses, and --sass to add
# cuobjdump and nvdisasm (the SASS test reads the kernels' machine code with them) where the toolkit lacks them.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
pkgs=(cmake ninja-build g++ make git libbenchmark-dev nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev)
sass=0
for arg in "$@"; do
  case "$arg" in
    --slurm) pkgs+=(slurmctld slurmd slurm-client munge) ;;
    --sass) sass=1 ;;
    *) echo "install-deps.sh: unknown option '$arg' (known: --slurm, --sass)" >&2; exit 2 ;;
  esac
done
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
# cuobjdump and nvdisasm: a full toolkit has both beside nvcc; a trimmed one (a container's, CI's) may not.
# The wheels are pinned (the SASS test reads the disassembler's mnemonics) and published for CUDA 13 only.
sass_wheel_version=13.5.37
sass_wheels=0
if ((sass)); then
  cuda_bin=$(dirname "$(readlink -f "$nvcc" || echo "$nvcc")")
  if ! { [ -x "$cuda_bin/cuobjdump" ] && [ -x "$cuda_bin/nvdisasm" ]; } &&
     ! { command -v cuobjdump && command -v nvdisasm; } >/dev/null 2>&1 &&
     ! { [ -x "$repo/.tools/bin/cuobjdump" ] && [ -x "$repo/.tools/bin/nvdisasm" ]; }; then
    sass_wheels=1
    python3 -m pip --version >/dev/null 2>&1 || pkgs+=(python3-pip)
  fi
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The presets file is version 6 and CMakeLists.txt asks for 3.25: say so here, not at `cmake --preset` (review 107:
# on Ubuntu 22.04, 3.22, this script exited 0).
# (A cmake that is missing or fails is said too: under pipefail its status had ended the script in silence.)
cmake_version=$({ cmake --version 2>/dev/null || true; } | sed -n 's/^cmake version \([0-9][0-9.]*\).*/\1/p' | head -n 1)
if [ -z "$cmake_version" ]; then
  echo "install-deps.sh: no working cmake in PATH after installing it: the build needs CMake 3.25 or newer" >&2
  exit 3
fi
if ! printf '3.25\n%s\n' "$cmake_version" | sort -V -C; then
  echo "install-deps.sh: CMake $cmake_version is older than 3.25, which the build needs (Ubuntu 22.04 ships 3.22):" \
       "put a newer cmake first in PATH (Kitware's apt repository, or pip install cmake)" >&2
  exit 3
fi
if [ ! -x "$nvcc" ]; then
  echo "install-deps.sh: nvcc not found: install the CUDA Toolkit (12.x or 13.x) first" >&2
  exit 3
fi
# NVIDIA publishes cuobjdump and nvdisasm as PyPI wheels; they go into .tools/ of this checkout (git ignores
# it), where CMake looks first, and nothing is installed system-wide. Without them the SASS test skips, so a
# failure here is a warning, not an error.
if ((sass_wheels)); then
  rm -rf "$repo/.tools"
  cuda_major=$("$nvcc" --version | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p')
  # --target installs into a folder of its own (and so past PEP 668's guard), touching no site-packages;
  # PIP_ROOT_USER_ACTION rather than the flag, which pip before 22.1 (Ubuntu 22.04's) does not know.
  if [ "$cuda_major" != 13 ]; then
    echo "install-deps.sh: no cuobjdump/nvdisasm wheels for CUDA ${cuda_major:-?} (only 13): sass.kernels will skip" >&2
  elif ! PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps \
      --target "$repo/.tools/pip" "nvidia-cuda-cuobjdump==$sass_wheel_version" \
      "nvidia-cuda-nvdisasm==$sass_wheel_version"; then
    echo "install-deps.sh: could not install cuobjdump/nvdisasm from PyPI: sass.kernels will skip" >&2
    rm -rf "$repo/.tools"
  else
    mkdir -p "$repo/.tools/bin"
    for tool in cuobjdump nvdisasm; do
      found=$(find "$repo/.tools/pip" -path "*/bin/$tool" -type f -print -quit)
      if [ -z "$found" ]; then echo "install-deps.sh: the $tool wheel holds no bin/$tool" >&2; exit 3; fi
      chmod +x "$found"
      ln -sfr "$found" "$repo/.tools/bin/$tool"
    done
  fi
fi
