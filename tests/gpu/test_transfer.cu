// GPU checks of the transfer and cache paths: every copy path moves the pattern intact (CE and SM,
// pinned and pageable, peers where present), the checks catch corruption, L2 and shared-memory
// reads add up to the closed form, and ceilings-bench reports pcie/nvlink as the profile expects.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "ceilings/kernels/hbm.cuh"
#include "ceilings/kernels/transfer.cuh"
#include "cli_runner.hpp"
#include "gpu_test.hpp"
#include "harness/host_memory.hpp"

namespace ceilings::bench {
namespace {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

constexpr std::size_t kBytes = 1 << 20;
constexpr std::uint32_t kSeed = 0xfeedbeefu;

TEST(TransferGpu, CopyEngineMovesThePatternBothWays) {
  CEILINGS_REQUIRE_GPU();
  for (auto kind : {HostBuffer::Kind::kPinned, HostBuffer::Kind::kPageable}) {
    Stream s;
    HostBuffer src(kBytes, kind), dst(kBytes, kind);
    DeviceBuffer<uint4> dev(kBytes / 16);
    fill_host_pattern(src.get(), kBytes, kSeed);
    std::memset(dst.get(), 0, kBytes);
    CEILINGS_CUDA_CHECK(cudaMemcpyAsync(dev.get(), src.get(), kBytes, cudaMemcpyHostToDevice, s.get()));
    EXPECT_EQ(count_device_mismatches(dev.get(), kBytes, kSeed, s.get()), 0u);
    CEILINGS_CUDA_CHECK(cudaMemcpyAsync(dst.get(), dev.get(), kBytes, cudaMemcpyDeviceToHost, s.get()));
    s.sync();
    EXPECT_EQ(count_host_mismatches(dst.get(), kBytes, kSeed), 0u);
  }
}

TEST(TransferGpu, SmCopyThroughMappedPinnedMemory) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  HostBuffer src(kBytes, HostBuffer::Kind::kPinned), dst(kBytes, HostBuffer::Kind::kPinned);
  DeviceBuffer<uint4> dev(kBytes / 16);
  fill_host_pattern(src.get(), kBytes, kSeed);
  std::memset(dst.get(), 0, kBytes);
  kernels::copy_sm(dev.get(), static_cast<const uint4*>(src.device_pointer()), kBytes / 16, 8, 256, s.get());
  CEILINGS_LAUNCH_CHECK();
  EXPECT_EQ(count_device_mismatches(dev.get(), kBytes, kSeed, s.get()), 0u);
  kernels::copy_sm(static_cast<uint4*>(dst.device_pointer()), dev.get(), kBytes / 16, 8, 256, s.get());
  CEILINGS_LAUNCH_CHECK();
  s.sync();
  EXPECT_EQ(count_host_mismatches(dst.get(), kBytes, kSeed), 0u);
}

TEST(TransferGpu, ChecksCatchACorruptedWord) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  DeviceBuffer<uint4> dev(kBytes / 16);
  kernels::fill_pattern(dev.get(), kBytes / 16, kSeed, s.get());
  CEILINGS_CUDA_CHECK(cudaMemsetAsync(reinterpret_cast<char*>(dev.get()) + 4096, 0xFF, 4, s.get()));
  EXPECT_EQ(count_device_mismatches(dev.get(), kBytes, kSeed, s.get()), 1u);
  std::vector<std::uint32_t> host(kBytes / 4);
  fill_host_pattern(host.data(), kBytes, kSeed);
  host[17] ^= 1;
  EXPECT_EQ(count_host_mismatches(host.data(), kBytes, kSeed), 1u);
}

TEST(TransferGpu, ImpossiblePinnedAllocationIsAClearError) {
  CEILINGS_REQUIRE_GPU();
  try {
    HostBuffer huge(static_cast<std::size_t>(1) << 52, HostBuffer::Kind::kPinned);  // 4 PiB
    FAIL() << "a 4 PiB pinned allocation succeeded";
  } catch (const CheckError& e) {
    EXPECT_NE(std::string(e.what()).find("pinned host allocation"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // nothing sticky left behind
}

TEST(TransferGpu, PeerCopiesMoveThePattern) {
  CEILINGS_REQUIRE_GPU();
  const int n = device_count();
  if (n < 2) GTEST_SKIP() << "single GPU: no peer";
  int ok = 0;
  CEILINGS_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, 0, 1));
  if (!ok) GTEST_SKIP() << "GPU 0 cannot access GPU 1";
  CEILINGS_CUDA_CHECK(cudaSetDevice(1));
  DeviceBuffer<uint4> dst(kBytes / 16);
  CEILINGS_CUDA_CHECK(cudaSetDevice(0));
  const cudaError_t rc = cudaDeviceEnablePeerAccess(1, 0);
  if (rc == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError(); else CEILINGS_CUDA_CHECK(rc);
  Stream s;
  DeviceBuffer<uint4> src(kBytes / 16);
  kernels::fill_pattern(src.get(), kBytes / 16, kSeed, s.get());
  CEILINGS_CUDA_CHECK(cudaMemcpyPeerAsync(dst.get(), 1, src.get(), 0, kBytes, s.get()));
  s.sync();
  EXPECT_EQ(count_device_mismatches(dst.get(), kBytes, kSeed, s.get()), 0u);  // GPU 0 reads its peer
  CEILINGS_CUDA_CHECK(cudaMemsetAsync(dst.get(), 0, kBytes, s.get()));
  kernels::copy_sm(dst.get(), src.get(), kBytes / 16, 8, 256, s.get());  // SM write into the peer
  CEILINGS_LAUNCH_CHECK();
  EXPECT_EQ(count_device_mismatches(dst.get(), kBytes, kSeed, s.get()), 0u);
}

TEST(CacheGpu, L2AndSharedMemoryReadsAddUp) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  const std::size_t n = kBytes / 16;
  DeviceBuffer<uint4> buf(n);
  DeviceBuffer<std::uint32_t> sum(2);
  kernels::fill_pattern(buf.get(), n, kSeed, s.get());
  CEILINGS_CUDA_CHECK(cudaMemsetAsync(sum.get(), 0, 8, s.get()));
  kernels::l2_read(buf.get(), n, 3, sum.get(), 16, 256, s.get());
  kernels::smem_read(10, 256, 5, kSeed, sum.get() + 1, s.get());
  CEILINGS_LAUNCH_CHECK();
  std::uint32_t got[2] = {};
  CEILINGS_CUDA_CHECK(cudaMemcpyAsync(got, sum.get(), 8, cudaMemcpyDeviceToHost, s.get()));
  s.sync();
  EXPECT_EQ(got[0], static_cast<std::uint32_t>(3ull * kernels::pattern_sum(n * 4, kSeed)));
  EXPECT_EQ(got[1], static_cast<std::uint32_t>(50ull * kernels::pattern_sum(256 * 16, kSeed)));
}

nlohmann::json run_bench(const std::string& filter) {
  const auto r = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_quick", "--benchmark_format=json",
                                    "--benchmark_filter=" + filter},
                                   {}, 600);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(TransferGpu, BenchReportsThePcieCeilingWithItsSweep) {
  CEILINGS_REQUIRE_GPU();
  const auto j = run_bench("^pcie/h2d(/|$)");
  int sweep = 0;
  bool ceiling = false;
  for (const auto& b : j.at("benchmarks")) {
    ASSERT_FALSE(b.value("error_occurred", false)) << b.dump();
    EXPECT_EQ(b.at("verified").get<double>(), 1.0);
    EXPECT_GT(b.at("bytes_per_second").get<double>(), 1e8);  // anything slower than 0.1 GB/s is broken
    if (b.contains("candidate")) ++sweep;
    if (b.at("name").get<std::string>().find("size:") == std::string::npos) {  // the plateau case
      ceiling = true;
      EXPECT_GE(b.at("plateau_points").get<double>(), 1.0);
      EXPECT_GT(b.at("link_share").get<double>(), 0.0);  // NVML present on a GPU host
    }
  }
  EXPECT_GE(sweep, 3);
  EXPECT_TRUE(ceiling);
}

TEST(TransferGpu, PeerFamilySkipsWithAReasonOnOneGpu) {
  CEILINGS_REQUIRE_GPU();
  if (device_count() > 1) GTEST_SKIP() << "more than one GPU: the skip path does not apply";
  const auto j = run_bench("^nvlink/p2p_uni/engine:ce/op:write");
  ASSERT_EQ(j.at("benchmarks").size(), 1u);
  const auto& b = j.at("benchmarks")[0];
  EXPECT_TRUE(b.value("error_occurred", false));
  EXPECT_EQ(b.value("error_message", "").rfind("unsupported: single GPU", 0), 0u) << b.dump();
}

}  // namespace
}  // namespace ceilings::bench
