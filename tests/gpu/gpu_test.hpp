// Shared by the GPU tests: skip cleanly where there is no usable CUDA device.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace ceilings::test {
// Whether the tests run under compute-sanitizer (device-check.sh --sanitize sets CEILINGS_UNDER_SANITIZER=1):
// it instruments every load, so timings say nothing there. Only then may a timing check be skipped.
inline bool under_sanitizer() {
  const char* v = std::getenv("CEILINGS_UNDER_SANITIZER");
  return v && *v && std::string(v) != "0";
}
}  // namespace ceilings::test

#define CEILINGS_REQUIRE_GPU()                                                   \
  do {                                                                           \
    int ceilings_device_count = 0;                                               \
    if (cudaGetDeviceCount(&ceilings_device_count) != cudaSuccess ||             \
        ceilings_device_count == 0) {                                            \
      cudaGetLastError();                                                        \
      GTEST_SKIP() << "no CUDA device: GPU test skipped";                        \
    }                                                                            \
  } while (0)
