# Which GPU architectures the CUDA code is built for.
# CI and the H200 machine name 90 explicitly (the ci preset, device-check.sh); the release preset and a
# plain configure choose nothing: $CUDAARCHS where set, else the compute capabilities of the GPUs nvidia-smi
# lists (the GPUs being measured), each as code for it and PTX (so a newer GPU can still run it through the
# driver's JIT), where this nvcc can build for them; else 90 (Hopper, the reference part: nvidia-smi missing,
# no GPU or driver, a GPU older than 8.0, or one newer than this CUDA Toolkit, which then runs the sm_90 PTX).
# Not CMake's "native": that fails the configure where the toolkit cannot build for the GPU (or is newer than
# its driver), and builds no PTX.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
  if(NOT "$ENV{CUDAARCHS}" STREQUAL "")
    set(CMAKE_CUDA_ARCHITECTURES "$ENV{CUDAARCHS}")
  else()
    set(CMAKE_CUDA_ARCHITECTURES 90)
    # A wedged GPU (what a node being qualified may have) can hang nvidia-smi: it is stopped after 30 s (one in
    # an uninterruptible driver call may still hold the configure).
    execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader TIMEOUT 30
                    RESULT_VARIABLE _ceilings_smi_rc OUTPUT_VARIABLE _ceilings_smi_out
                    ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    # The nvcc the project will use: as CMake chooses it (CMAKE_CUDA_COMPILER, CUDACXX), else the toolkit's.
    set(_ceilings_nvcc nvcc)
    if(DEFINED CMAKE_CUDA_COMPILER)
      set(_ceilings_nvcc "${CMAKE_CUDA_COMPILER}")
    elseif(NOT "$ENV{CUDACXX}" STREQUAL "")
      get_filename_component(_ceilings_nvcc "$ENV{CUDACXX}" PROGRAM)  # as CMake reads it: flags may follow
    elseif(EXISTS /usr/local/cuda/bin/nvcc)
      set(_ceilings_nvcc /usr/local/cuda/bin/nvcc)
    endif()
    execute_process(COMMAND "${_ceilings_nvcc}" --list-gpu-arch TIMEOUT 30
                    RESULT_VARIABLE _ceilings_nvcc_rc OUTPUT_VARIABLE _ceilings_nvcc_out ERROR_QUIET)
    if(_ceilings_smi_rc MATCHES "timeout")
      message(STATUS "CUDA architectures: nvidia-smi did not answer within 30 s: building sm_90 (set CUDAARCHS "
                     "for the GPUs to be measured)")
    endif()
    if(_ceilings_smi_rc EQUAL 0 AND NOT _ceilings_nvcc_rc EQUAL 0)
      message(STATUS "CUDA architectures: cannot run ${_ceilings_nvcc} --list-gpu-arch to check the GPUs "
                     "against it: building sm_90 (set CUDAARCHS for the GPUs to be measured)")
    endif()
    if(_ceilings_smi_rc EQUAL 0 AND _ceilings_nvcc_rc EQUAL 0)
      string(REPLACE "\n" ";" _ceilings_caps "${_ceilings_smi_out}")
      set(_ceilings_archs "")
      set(_ceilings_unbuildable "")
      foreach(_cap IN LISTS _ceilings_caps)
        string(STRIP "${_cap}" _cap)
        string(REPLACE "." "" _arch "${_cap}")
        if(NOT _arch MATCHES "^[0-9]+$")
          continue()
        endif()
        # Below 8.0 (Turing, Volta) there are no bf16 instructions, which the FMA kernels use: not buildable.
        if(_arch GREATER_EQUAL 80 AND _ceilings_nvcc_out MATCHES "compute_${_arch}([^0-9]|$)")
          list(APPEND _ceilings_archs ${_arch})
        else()
          list(APPEND _ceilings_unbuildable ${_arch})
        endif()
      endforeach()
      list(REMOVE_DUPLICATES _ceilings_archs)
      if(_ceilings_unbuildable)
        message(STATUS "CUDA architectures: no build for compute capability ${_ceilings_unbuildable} (older than "
                       "8.0, which ceilings needs, or unknown to this nvcc); building sm_90 with its PTX, which "
                       "the driver of a newer GPU compiles (set CUDAARCHS, or use a CUDA Toolkit that knows the GPU)")
        list(APPEND _ceilings_archs 90)
        list(REMOVE_DUPLICATES _ceilings_archs)
      endif()
      if(_ceilings_archs)
        set(CMAKE_CUDA_ARCHITECTURES "${_ceilings_archs}")
      endif()
    endif()
  endif()
endif()
message(STATUS "CUDA architectures: ${CMAKE_CUDA_ARCHITECTURES}")
# The toolkit's nvcc where nothing else names one (CMake reads CUDACXX only where this is unset).
if(NOT DEFINED CMAKE_CUDA_COMPILER AND "$ENV{CUDACXX}" STREQUAL "" AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
