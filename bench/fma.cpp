// CUDA-core FMA peaks: fma.fp32 (FFMA), fma.fp64 (DFMA), fma.fp16 (HFMA2 on half2), fma.bf16 (HFMA2.BF16_V2 on
// bfloat162). FLOPs = 2 per FMA, 4 per packed two-lane FMA; every chain's result checked against its closed form.
#include <algorithm>
#include <cmath>
#include <string>

#include "ceilings/kernels/fma.cuh"
#include "harness/measure.hpp"

namespace ceilings::bench {
namespace {

namespace k = ceilings::kernels;

struct FmaCase {
  k::FmaType type;
  const char* name;
};
constexpr FmaCase kCases[] = {
    {k::FmaType::kFp32, "fp32"}, {k::FmaType::kFp64, "fp64"}, {k::FmaType::kHalf2, "fp16"}, {k::FmaType::kBf162, "bf16"}};

void run_case(benchmark::State& state, FmaCase fc, int threads) {
  guarded(state, [&] {
    const Context& ctx = context();
    // One full wave of resident blocks, as many as the kernel's registers let the SM hold: more would leave a
    // partial second wave.
    const int blocks_per_sm = k::fma_blocks_per_sm(fc.type, threads);
    if (blocks_per_sm <= 0) throw std::runtime_error("cannot read the FMA kernel's occupancy");
    const int blocks = ctx.prop.multiProcessorCount * blocks_per_sm;
    const std::size_t total_threads = static_cast<std::size_t>(blocks) * static_cast<std::size_t>(threads);
    Stream stream;
    DeviceBuffer<std::uint8_t> out(k::fma_output_bytes(fc.type, total_threads));
    DeviceBuffer<unsigned long long> bad(1);

    // Size a launch to about 2 ms from a short calibration launch, within the exact-arithmetic limit.
    int trips = 16;
    {
      const Event a, b;
      k::fma_peak(fc.type, out.get(), blocks, threads, trips, stream.get());  // module load, clocks
      CEILINGS_LAUNCH_CHECK();
      // Twice: the first estimate comes from a launch of tens of us while the clocks may still be rising;
      // the second times a launch of about the final length.
      for (int round = 0; round < 2; ++round) {
        CEILINGS_CUDA_CHECK(cudaEventRecord(a.get(), stream.get()));
        k::fma_peak(fc.type, out.get(), blocks, threads, trips, stream.get());
        CEILINGS_LAUNCH_CHECK();
        CEILINGS_CUDA_CHECK(cudaEventRecord(b.get(), stream.get()));
        CEILINGS_CUDA_CHECK(cudaEventSynchronize(b.get()));
        float ms = 0;
        CEILINGS_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
        trips = std::clamp(static_cast<int>(trips * 2.0 / std::max(ms, 1e-3f)), 1, k::fma_max_trips(fc.type));
        // Odd: the half2/bf162 closed form only tells an odd step count from an even one (see fma.cuh).
        if (trips % 2 == 0) --trips;
      }
    }

    // Poisoned with NaN before every sample (outside its timed region), so the check below sees what the last
    // sample's own launches stored, not what the calibration, the first unit or the warm-up left there.
    MeasureSpec spec;
    spec.before_sample = [&](cudaStream_t s) {
      CEILINGS_CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), s));
    };
    spec.work = [&](cudaStream_t s) { k::fma_peak(fc.type, out.get(), blocks, threads, trips, s); };
    const Measurement m = run_measurement(state, stream.get(), spec);
    CEILINGS_LAUNCH_CHECK();

    CEILINGS_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), stream.get()));
    k::count_fma_mismatches(fc.type, out.get(), total_threads, trips, bad.get(), stream.get());
    CEILINGS_LAUNCH_CHECK();
    unsigned long long mismatches = 0;
    CEILINGS_CUDA_CHECK(
        cudaMemcpyAsync(&mismatches, bad.get(), sizeof mismatches, cudaMemcpyDeviceToHost, stream.get()));
    stream.sync();
    state.counters["blocks"] = blocks;
    state.counters["blocks_per_sm"] = blocks_per_sm;
    state.counters["block_threads"] = threads;
    state.counters["chains"] = k::kFmaChains;
    state.counters["fma_per_chain"] = static_cast<double>(trips) * k::kFmaUnroll;
    report(state, m, Amount::kFlops, k::fma_flops(fc.type, total_threads, trips), mismatches == 0,
           std::to_string(mismatches) + " of " + std::to_string(k::fma_checked_values(fc.type, total_threads)) +
               " FMA chains (and packed trip counts) ended away from their closed-form value");
  });
}

void register_cases(const Context& ctx) {
  // Two block sizes at the occupancy the kernel allows; quick mode keeps one.
  const std::vector<int> block_sizes = ctx.options.quick ? std::vector<int>{256} : std::vector<int>{256, 512};
  for (const FmaCase& fc : kCases)
    for (int threads : block_sizes) {
      const std::string name = std::string("fma/") + fc.name + "/block:" + std::to_string(threads);
      configure(benchmark::RegisterBenchmark(name.c_str(), [fc, threads](benchmark::State& st) {
        run_case(st, fc, threads);
      }));
    }
}

}  // namespace
}  // namespace ceilings::bench

CEILINGS_BENCH_FAMILY(fma, 30, ceilings::bench::register_cases, nullptr);
