// The GPU tests' check that the build has code for the GPU, from the architectures built: CUDA's compatibility
// rules (machine code within a major version, PTX forward), without a context.
#include <gtest/gtest.h>

#include "support/cuda_archs.hpp"

namespace ceilings::test {
namespace {

TEST(CudaArchs, MachineCodeRunsWithinItsMajorAndPtxOnNewerGpus) {
  // The ci preset's sm_90 with its PTX: Hopper, and Blackwell through the PTX; no Ampere or Ada.
  EXPECT_TRUE(cuda_archs_run_on("90", 9, 0));
  EXPECT_TRUE(cuda_archs_run_on("90", 10, 0));
  EXPECT_TRUE(cuda_archs_run_on("90", 12, 0));
  EXPECT_FALSE(cuda_archs_run_on("90", 8, 0));
  EXPECT_FALSE(cuda_archs_run_on("90", 8, 9));
  // Machine code only: its major version alone (8.0's runs on 8.6 and 8.9, not on 9.0).
  EXPECT_TRUE(cuda_archs_run_on("80-real", 8, 6));
  EXPECT_TRUE(cuda_archs_run_on("80-real", 8, 9));
  EXPECT_FALSE(cuda_archs_run_on("80-real", 9, 0));
  EXPECT_FALSE(cuda_archs_run_on("86-real", 8, 0));
  // PTX only: that compute capability and newer.
  EXPECT_TRUE(cuda_archs_run_on("80-virtual", 9, 0));
  EXPECT_FALSE(cuda_archs_run_on("89-virtual", 8, 6));
  // Lists, as CMake writes them and as the tests' definition carries them.
  EXPECT_TRUE(cuda_archs_run_on("80;90", 8, 6));
  EXPECT_TRUE(cuda_archs_run_on("80,90", 8, 9));
  EXPECT_FALSE(cuda_archs_run_on("86-real,90-real", 8, 0));
  // Arch-specific code (sm_90a) runs on 9.0 alone; family code (sm_100f) on its family.
  EXPECT_TRUE(cuda_archs_run_on("90a", 9, 0));
  EXPECT_FALSE(cuda_archs_run_on("90a", 10, 0));
  EXPECT_TRUE(cuda_archs_run_on("100f", 10, 3));
  EXPECT_FALSE(cuda_archs_run_on("100f", 12, 0));
  // What CMake resolves itself, or what does not parse: nothing to tell, so the tests run and say what fails.
  EXPECT_TRUE(cuda_archs_run_on("native", 8, 0));
  EXPECT_TRUE(cuda_archs_run_on("all-major", 7, 5));
  EXPECT_FALSE(cuda_archs_run_on("", 9, 0));
}

}  // namespace
}  // namespace ceilings::test
