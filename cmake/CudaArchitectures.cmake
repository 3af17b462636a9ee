# Which GPU architectures the CUDA code is built for.
# CI and the H200 machine name 90 explicitly (presets); a plain configure on a machine with a GPU
# uses "native"; without a GPU and without a choice we fall back to 90 (Hopper, the reference part).
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
