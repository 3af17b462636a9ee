// Shared by the GPU tests: skip cleanly where there is no usable CUDA device.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#define CEILINGS_REQUIRE_GPU()                                                   \
  do {                                                                           \
    int ceilings_device_count = 0;                                               \
    if (cudaGetDeviceCount(&ceilings_device_count) != cudaSuccess ||             \
        ceilings_device_count == 0) {                                            \
      cudaGetLastError();                                                        \
      GTEST_SKIP() << "no CUDA device: GPU test skipped";                        \
    }                                                                            \
  } while (0)
