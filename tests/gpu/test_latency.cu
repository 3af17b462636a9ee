// GPU checks of the latency paths: the pointer chase lands where the host walk says, every empty
// kernel launch runs, and ceilings-bench's launch latency is in a sane range.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ceilings/kernels/transfer.cuh"
#include "ceilings/transfer.hpp"
#include "cli_runner.hpp"
#include "gpu_test.hpp"
#include "harness/measure.hpp"

namespace ceilings::bench {
namespace {

TEST(LatencyGpu, PointerChaseEndsWhereTheHostWalkEnds) {
  CEILINGS_REQUIRE_GPU();
  constexpr std::size_t slots = 5000;
  constexpr std::uint32_t stride_words = 32;
  const auto next = pointer_chase_cycle(slots, 99);
  Stream s;
  DeviceBuffer<std::uint32_t> chain(slots * stride_words), next_dev(slots), pos(1);
  CEILINGS_CUDA_CHECK(cudaMemcpyAsync(next_dev.get(), next.data(), slots * 4, cudaMemcpyHostToDevice, s.get()));
  kernels::write_chase_chain(chain.get(), next_dev.get(), slots, stride_words, s.get());
  CEILINGS_CUDA_CHECK(cudaMemsetAsync(pos.get(), 0, 4, s.get()));
  for (bool l1 : {true, false}) {
    kernels::pointer_chase(chain.get(), pos.get(), 777, l1, s.get());
    kernels::pointer_chase(chain.get(), pos.get(), 12000, l1, s.get());
  }
  CEILINGS_LAUNCH_CHECK();
  std::uint32_t got = 0;
  CEILINGS_CUDA_CHECK(cudaMemcpyAsync(&got, pos.get(), 4, cudaMemcpyDeviceToHost, s.get()));
  s.sync();
  EXPECT_EQ(got, chase_position(next, 0, 2 * (777 + 12000)) * stride_words);
}

TEST(LatencyGpu, EveryEmptyLaunchRuns) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  DeviceBuffer<unsigned long long> count(1);
  CEILINGS_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, 8, s.get()));
  for (int i = 0; i < 321; ++i) kernels::empty_kernel(count.get(), s.get());
  CEILINGS_LAUNCH_CHECK();
  unsigned long long got = 0;
  CEILINGS_CUDA_CHECK(cudaMemcpyAsync(&got, count.get(), 8, cudaMemcpyDeviceToHost, s.get()));
  s.sync();
  EXPECT_EQ(got, 321u);
}

TEST(LatencyGpu, BenchLaunchLatencyIsSane) {
  CEILINGS_REQUIRE_GPU();
  const auto r = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_quick", "--benchmark_format=json",
                                    "--benchmark_filter=^latency/(launch|graph_launch|l2)"},
                                   {}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  int seen = 0;
  for (const auto& b : j.at("benchmarks")) {
    ASSERT_FALSE(b.value("error_occurred", false)) << b.dump();
    const double s = b.at("latency_s").get<double>();
    const std::string name = b.at("name");
    if (name.rfind("latency/l2", 0) == 0) {
      EXPECT_GT(s, 50e-9) << name;  // an L2 hit takes well over 50 ns on any current GPU
      EXPECT_LT(s, 2e-6) << name;
    } else {
      EXPECT_GT(s, 100e-9) << name;  // no launch is faster than 100 ns
      EXPECT_LT(s, 100e-6) << name;
    }
    ++seen;
  }
  EXPECT_EQ(seen, 3);
}

}  // namespace
}  // namespace ceilings::bench
