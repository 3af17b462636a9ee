// Shared by the GPU tests: skip cleanly where there is no usable CUDA device, and fail where one is expected
// (CEILINGS_EXPECT_GPU=1, set by device-check.sh on the GPU machine): there a driver or runtime that cannot
// reach the GPU is a broken machine, not a reason to skip every device test and report success.
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
// CUDA device 0's name ("NVIDIA H200"), for the datasheet table; "" where it cannot be read.
inline std::string device_name() {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return prop.name;
}
inline bool gpu_expected() {
  const char* v = std::getenv("CEILINGS_EXPECT_GPU");
  return v && *v && std::string(v) != "0";
}
// CEILINGS_NO_TMA=1 (device-check.sh --no-tma): the TMA bulk copies, opt-in until they have run on a GPU, are
// left out of the tests too, so a rerun without them is not failed by the code it leaves out.
inline bool tma_left_out() {
  const char* v = std::getenv("CEILINGS_NO_TMA");
  return v && *v && std::string(v) != "0";
}
}  // namespace ceilings::test

#define CEILINGS_REQUIRE_GPU()                                                              \
  do {                                                                                      \
    int ceilings_device_count = 0;                                                          \
    const cudaError_t ceilings_rc = cudaGetDeviceCount(&ceilings_device_count);             \
    if (ceilings_rc != cudaSuccess || ceilings_device_count == 0) {                         \
      cudaGetLastError();                                                                   \
      if (ceilings::test::gpu_expected())                                                   \
        FAIL() << "CEILINGS_EXPECT_GPU is set but no CUDA device is usable: "               \
               << (ceilings_rc != cudaSuccess ? cudaGetErrorString(ceilings_rc) : "0 devices"); \
      GTEST_SKIP() << "no CUDA device: GPU test skipped";                                   \
    }                                                                                       \
  } while (0)

// A GPU whose TMA unit the bulk copies can use (compute capability 9.0 or later), unless CEILINGS_NO_TMA is set.
#define CEILINGS_REQUIRE_TMA()                                                                     \
  do {                                                                                             \
    CEILINGS_REQUIRE_GPU();                                                                        \
    if (ceilings::test::tma_left_out()) GTEST_SKIP() << "CEILINGS_NO_TMA: TMA bulk copies left out"; \
    int ceilings_major = 0;                                                                        \
    ASSERT_EQ(cudaDeviceGetAttribute(&ceilings_major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess); \
    if (ceilings_major < 9) GTEST_SKIP() << "TMA bulk copies need compute capability 9.0";       \
  } while (0)
