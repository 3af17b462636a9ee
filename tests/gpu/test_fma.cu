// GPU tests of the fma.<type> kernels: every chain ends on its closed-form value, and a wrong expectation
// is caught. Skips without a GPU.
#include <gtest/gtest.h>

#include "ceilings/kernels/fma.cuh"
#include "gpu_test.hpp"
#include "harness/measure.hpp"

namespace ceilings::kernels {
namespace {

unsigned long long mismatches(FmaType t, int trips_run, int trips_checked) {
  const int blocks = 4, threads = 128;
  const std::size_t total = static_cast<std::size_t>(blocks) * threads;
  bench::Stream stream;
  bench::DeviceBuffer<std::uint8_t> out(fma_output_bytes(t, total));
  bench::DeviceBuffer<unsigned long long> bad(1);
  cudaMemsetAsync(out.get(), 0xff, out.bytes(), stream.get());
  cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), stream.get());
  fma_peak(t, out.get(), blocks, threads, trips_run, stream.get());
  count_fma_mismatches(t, out.get(), total, trips_checked, bad.get(), stream.get());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  unsigned long long host = 0;
  cudaMemcpyAsync(&host, bad.get(), sizeof host, cudaMemcpyDeviceToHost, stream.get());
  stream.sync();
  return host;
}

TEST(FmaGpu, ChainsMatchTheClosedForm) {
  CEILINGS_REQUIRE_GPU();
  for (FmaType t : {FmaType::kFp32, FmaType::kFp64, FmaType::kHalf2, FmaType::kBf162}) {
    EXPECT_EQ(mismatches(t, 3, 3), 0u) << static_cast<int>(t);
    EXPECT_EQ(mismatches(t, 4, 4), 0u) << static_cast<int>(t);
    // fp32's cap ((1 << 20) / kFmaUnroll trips: 16644) for every type. The other types' cap, 1 << 24 trips, is not run: a few threads
    // stepping 8.5e9 dependent FMAs a chain take tens of seconds a type. It holds by arithmetic instead: fp64
    // ends near 2^23 with 2^-10 steps (43 of 53 bits), the packed chains only alternate, and their float trip
    // count is exact up to 2^24. The bench sizes its launches to about 2 ms, far below either cap.
    const int most = fma_max_trips(FmaType::kFp32);
    EXPECT_EQ(mismatches(t, most, most), 0u) << static_cast<int>(t);
  }
}

TEST(FmaGpu, WrongCountIsCaught) {
  CEILINGS_REQUIRE_GPU();
  const std::size_t threads = 4u * 128u;
  const unsigned long long chains = threads * kFmaChains;
  // fp32/fp64 chains grow with the count: checking for one trip more flags every chain. half2/bf162 chains
  // alternate, and an odd unroll makes one trip more flip the parity: every chain flagged, and every thread's
  // trip count as well.
  for (FmaType t : {FmaType::kFp32, FmaType::kFp64, FmaType::kHalf2, FmaType::kBf162}) {
    const bool packed = t == FmaType::kHalf2 || t == FmaType::kBf162;
    EXPECT_EQ(fma_checked_values(t, threads), chains + (packed ? threads : 0)) << static_cast<int>(t);
    EXPECT_EQ(mismatches(t, 3, 4), fma_checked_values(t, threads)) << static_cast<int>(t);
    // A launch that did no FMAs (the chains still hold their start values) fails against an odd count.
    EXPECT_EQ(mismatches(t, 0, 1), fma_checked_values(t, threads)) << static_cast<int>(t);
    // One trip where three were asked: the same parity, so the packed chains still match; their trip counts
    // do not.
    EXPECT_EQ(mismatches(t, 1, 3), packed ? threads : chains) << static_cast<int>(t);
  }
}

TEST(FmaKernels, UnrollIsOddForTheParityCheck) { EXPECT_EQ(kFmaUnroll % 2, 1); }

TEST(FmaFlops, CountsTwoPerFmaAndFourPerPackedFma) {
  EXPECT_DOUBLE_EQ(fma_flops(FmaType::kFp32, 10, 2), 10.0 * kFmaChains * 2 * kFmaUnroll * 2);
  EXPECT_DOUBLE_EQ(fma_flops(FmaType::kHalf2, 10, 2), 10.0 * kFmaChains * 2 * kFmaUnroll * 4);
  EXPECT_DOUBLE_EQ(fma_flops(FmaType::kBf162, 1, 1), kFmaChains * kFmaUnroll * 4.0);
}

}  // namespace
}  // namespace ceilings::kernels
