// Shared by the GPU tests: skip cleanly where there is no usable CUDA device, and fail where one is expected
// (CEILINGS_EXPECT_GPU=1, set by device-check.sh on the GPU machine): there a driver or runtime that cannot
// reach the GPU is a broken machine, not a reason to skip every device test and report success.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "harness/nvml.hpp"
#include "support/cuda_archs.hpp"

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
// "" where this build holds code device 0 can run; else why not, with the CUDAARCHS that would (a build for
// sm_90 alone, as the ci preset makes, on an A100 or an L40S: every kernel launch would fail). Told from the
// architectures built and the device's properties, which open no context (see support/cuda_archs.hpp).
inline std::string no_code_for_device() {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    cudaGetLastError();
    return "";  // the test's own calls say what fails
  }
  if (cuda_archs_run_on(CEILINGS_CUDA_ARCHITECTURES, prop.major, prop.minor)) return "";
  return std::string("this build (CUDA architectures ") + CEILINGS_CUDA_ARCHITECTURES + ") has no code device 0 " +
         "(compute capability " + std::to_string(prop.major) + "." + std::to_string(prop.minor) +
         ") can run: to run the GPU tests, configure with the dev preset (this machine's GPUs), or with CUDAARCHS=" +
         std::to_string(prop.major) + std::to_string(prop.minor) + " and the dev or release preset (the ci preset "
         "builds sm_90 alone)";
}
// CEILINGS_NO_TMA=1 (device-check.sh --no-tma): the TMA bulk copies, opt-in until they have run on a GPU, are
// left out of the tests too, so a rerun without them is not failed by the code it leaves out.
inline bool tma_left_out() {
  const char* v = std::getenv("CEILINGS_NO_TMA");
  return v && *v && std::string(v) != "0";
}
// Confidential computing on (NVML; off where NVML cannot tell): the GPU reads and writes no host memory itself, so the
// tests of SM copies over the link skip (the bench skips those cases, with the reason).
inline bool confidential_computing_on() {
  std::string why;
  const auto lib = ceilings::nvml::Library::open(&why);
  return lib && lib->confidential_computing().get().value_or(false);
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
    if (const std::string ceilings_no_code = ceilings::test::no_code_for_device();          \
        !ceilings_no_code.empty()) {                                                        \
      if (ceilings::test::gpu_expected()) FAIL() << ceilings_no_code;                       \
      GTEST_SKIP() << ceilings_no_code;                                                     \
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

// A GPU that reaches host memory directly: not under confidential computing.
#define CEILINGS_REQUIRE_HOST_ACCESS()                                                                   \
  do {                                                                                                  \
    CEILINGS_REQUIRE_GPU();                                                                             \
    if (ceilings::test::confidential_computing_on())                                                    \
      GTEST_SKIP() << "confidential computing is on: the GPU reaches no host memory directly (copies go " \
                      "through the driver's encrypted bounce buffers)";                                  \
  } while (0)

