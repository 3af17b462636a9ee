#!/usr/bin/env bash
# cmake/CudaArchitectures.cmake's choice of CUDA architectures, run as a script (cmake -P) against a fake
# nvidia-smi and a fake nvcc: the GPUs' compute capabilities where nvcc knows them and they are 8.0 or newer,
# sm_90 otherwise; CUDAARCHS, where set and not empty, first.
# Usage: cuda_architectures.sh CMAKE SOURCE_DIR WORK_DIR
set -u
cmake=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work/bin"
trap 'rm -rf "$work"' EXIT
echo "include(\"$src/cmake/CudaArchitectures.cmake\")" >"$work/probe.cmake"
cat >"$work/bin/nvcc" <<'NVCC'
#!/bin/sh
[ "$1" = --list-gpu-arch ] && printf 'compute_70\ncompute_75\ncompute_80\ncompute_86\ncompute_89\ncompute_90\ncompute_100\ncompute_120\n'
NVCC
chmod +x "$work/bin/nvcc"
fail=0
# expect CAPS WANT [ENV...]: nvidia-smi prints CAPS (printf escapes; "fail" exits 6), the script chooses WANT.
expect() {
  local caps=$1 want=$2
  shift 2
  if [ "$caps" = fail ]; then printf '#!/bin/sh\nexit 6\n' >"$work/bin/nvidia-smi"
  else printf '#!/bin/sh\nprintf "%s\\n"\n' "$caps" >"$work/bin/nvidia-smi"; fi
  chmod +x "$work/bin/nvidia-smi"
  local got
  got=$(env -u CUDAARCHS PATH="$work/bin:$PATH" CUDACXX="$work/bin/nvcc" "$@" "$cmake" -P "$work/probe.cmake" 2>&1 |
        sed -n 's/^-- CUDA architectures: \([0-9;]*\)$/\1/p' | tail -1)
  if [ "$got" = "$want" ]; then echo "ok:   '$caps' $* -> $want"
  else echo "FAIL: '$caps' $* -> '$got', expected $want"; fail=1; fi
}
expect '9.0' 90
expect '9.0\n9.0\n9.0' 90
expect '8.0\n9.0' '80;90'
expect '8.6\n\n8.9' '86;89'
expect '12.0' 120
expect '7.5\n8.6' '86;90'       # Turing: no bf16 instructions; sm_90 PTX beside the A-series build
expect '7.0' 90                 # Volta: this nvcc lists it, ceilings does not build it
expect '13.0' 90                # newer than this nvcc: its driver compiles sm_90 PTX
expect '[N/A]' 90
expect fail 90                  # no driver or GPU
expect '8.0' '80;86' CUDAARCHS='80;86'
expect '8.0' 80 CUDAARCHS=      # empty: as if unset
expect '8.0' 90 CUDACXX=/nonexistent/nvcc
expect '8.6' 86 CUDACXX="$work/bin/nvcc -ccbin g++"  # flags after the compiler, as CMake allows
exit $fail
