# Which GPU architectures the CUDA code is built for.
# CI and the H200 machine name 90 explicitly (the ci preset, device-check.sh); the release preset and a
# plain configure choose nothing: $CUDAARCHS where set, else "native" where nvidia-smi answers (the GPU
# being measured), else 90 (Hopper, the reference part; nvidia-smi missing or no GPU/driver).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
  if(DEFINED ENV{CUDAARCHS})
    set(CMAKE_CUDA_ARCHITECTURES "$ENV{CUDAARCHS}")
  else()
    execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                    RESULT_VARIABLE _ceilings_smi_rc OUTPUT_VARIABLE _ceilings_smi_out
                    ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_ceilings_smi_rc EQUAL 0 AND NOT _ceilings_smi_out STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES native)
    else()
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
  endif()
endif()
if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
