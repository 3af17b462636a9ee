// Shared by the GPU tests: skip cleanly where no CUDA device is usable.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace ceilings::test {

inline int usable_devices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace ceilings::test

#define CEILINGS_REQUIRE_GPU()                                                        \
  do {                                                                                \
    if (::ceilings::test::usable_devices() == 0) GTEST_SKIP() << "no CUDA device";    \
  } while (0)
