// On-chip bandwidth: l2.read (a hot working set inside the L2, read by every SM with loads L1 never serves:
// a persistent grid over the whole set, or many short blocks each summing chunks of it) and smem.read (shared memory, every SM at full occupancy). Bytes = bytes read; each launch's
// wrapped sum of every word read is checked against the closed form.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "ceilings/kernels/hbm.cuh"
#include "ceilings/kernels/transfer.cuh"
#include "harness/measure.hpp"

namespace ceilings::bench {
namespace {

namespace k = ceilings::kernels;

constexpr std::uint32_t kSeed = 0x51ed270bu;
// Odd counts: each launch's expected sum is the pattern's sum (a multiple of a large power of two for
// these power-of-two-ish sizes) times the count, and an even count would leave the check fewer bits.
// 511 passes over a quarter of the L2: about 0.7 ms per launch on an H200, so the gap between launches and
// each launch's ramp-up and drain (a few us) stay well under 1% of the time.
constexpr int kL2Passes = 511;
constexpr int kSmemReps = 2047;   // reads of the block's whole shared array per launch

std::uint32_t read_back(const DeviceBuffer<std::uint32_t>& sum, cudaStream_t stream) {
  std::uint32_t got = 0;
  CEILINGS_CUDA_CHECK(cudaMemcpyAsync(&got, sum.get(), sizeof got, cudaMemcpyDeviceToHost, stream));
  CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  return got;
}

void run_l2_read(benchmark::State& state, double l2_fraction, int blocks_per_sm, int threads, k::L2Load load) {
  guarded(state, [&] {
    const Context& ctx = context();
    if (ctx.l2_bytes == 0) unsupported("the device reports no L2 cache size");
    // A whole number of vectors per thread (the kernel interleaves threads): every SM gets the same work.
    const int blocks = ctx.prop.multiProcessorCount * blocks_per_sm;
    const std::size_t per_pass = static_cast<std::size_t>(blocks) * threads;
    const auto wanted = static_cast<std::size_t>(l2_fraction * static_cast<double>(ctx.l2_bytes)) / sizeof(uint4);
    const std::size_t n = std::max<std::size_t>(1, wanted / per_pass) * per_pass;
    const std::size_t bytes = n * sizeof(uint4);
    Stream stream;
    DeviceBuffer<uint4> buf(n);
    DeviceBuffer<std::uint32_t> sum(1);
    k::fill_pattern(buf.get(), n, kSeed, stream.get());
    CEILINGS_LAUNCH_CHECK();
    CEILINGS_CUDA_CHECK(cudaMemsetAsync(sum.get(), 0, sizeof(std::uint32_t), stream.get()));
    stream.sync();
    MeasureSpec spec;
    spec.work = [&](cudaStream_t s) { k::l2_read(buf.get(), n, kL2Passes, sum.get(), blocks, threads, s, load); };
    const Measurement m = run_measurement(state, stream.get(), spec);
    CEILINGS_LAUNCH_CHECK();
    const std::uint32_t got = read_back(sum, stream.get());
    const auto want = static_cast<std::uint32_t>(static_cast<unsigned long long>(m.total_units) * kL2Passes *
                                                 k::pattern_sum(n * 4, kSeed));
    state.counters["working_set_bytes"] = static_cast<double>(bytes);
    state.counters["l2_bytes"] = static_cast<double>(ctx.l2_bytes);
    state.counters["blocks"] = blocks;
    state.counters["block_threads"] = threads;
    report(state, m, Amount::kBytes, static_cast<double>(bytes) * kL2Passes, got == want,
           "L2 read sum " + std::to_string(got) + " != expected " + std::to_string(want));
  });
}

// The chunked variant (kernels/transfer.cuh): a working set of whole chunks, many short blocks each summing
// kL2ChunkReads chunks in turn, so several SMs read the same chunk at once (through the L2: these loads
// never hit L1). Blocks are launched `passes` per chunk, so every vector is read passes * kL2ChunkReads
// times per launch: 505 for a quarter of the L2 (as many bytes as the persistent kernel's 511 passes, about
// 0.8 ms on an H200), proportionally more for a smaller set, always an odd count (see kL2Passes).
constexpr int kL2ChunkReads = 5;
constexpr double kSweepSeconds = 0.3;  // sampling budget of a working-set sweep point
int l2_chunk_passes(double l2_fraction) {
  const int p = std::max(1, static_cast<int>(std::lround(101 * 0.25 / l2_fraction)));
  return p % 2 == 1 ? p : p + 1;
}

// sweep_point: a point of the working-set sweep (candidate 0, a shorter sampling budget): the detail of
// l2.read that shows where the L2's bandwidth ends and HBM's begins, not a ceiling.
void run_l2_read_chunks(benchmark::State& state, double l2_fraction, k::L2Load load, bool sweep_point = false) {
  guarded(state, [&] {
    const Context& ctx = context();
    if (ctx.l2_bytes == 0) unsupported("the device reports no L2 cache size");
    const std::size_t chunk = k::l2_chunk_vectors();
    const auto wanted = static_cast<std::size_t>(l2_fraction * static_cast<double>(ctx.l2_bytes)) / sizeof(uint4);
    const auto chunks = static_cast<unsigned>(std::max<std::size_t>(1, wanted / chunk));
    const std::size_t n = chunks * chunk;
    const std::size_t bytes = n * sizeof(uint4);
    const int passes = l2_chunk_passes(l2_fraction);
    const unsigned blocks = chunks * static_cast<unsigned>(passes);
    constexpr std::size_t kSumWords = static_cast<std::size_t>(k::kL2SumSlots) * k::kL2SumStride;
    Stream stream;
    DeviceBuffer<uint4> buf(n);
    DeviceBuffer<std::uint32_t> sums(kSumWords);
    k::fill_pattern(buf.get(), n, kSeed, stream.get());
    CEILINGS_LAUNCH_CHECK();
    CEILINGS_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, kSumWords * sizeof(std::uint32_t), stream.get()));
    stream.sync();
    MeasureSpec spec;
    if (sweep_point) spec.max_seconds = kSweepSeconds;
    spec.work = [&](cudaStream_t s) { k::l2_read_chunks(buf.get(), chunks, kL2ChunkReads, blocks, sums.get(), s, load); };
    const Measurement m = run_measurement(state, stream.get(), spec);
    CEILINGS_LAUNCH_CHECK();
    std::vector<std::uint32_t> slots(kSumWords);
    CEILINGS_CUDA_CHECK(cudaMemcpyAsync(slots.data(), sums.get(), kSumWords * sizeof(std::uint32_t),
                                        cudaMemcpyDeviceToHost, stream.get()));
    stream.sync();
    std::uint32_t got = 0;
    for (std::size_t i = 0; i < kSumWords; ++i) got += slots[i];  // the words between slots stay 0
    const int reads_per_vector = passes * kL2ChunkReads;
    const auto want = static_cast<std::uint32_t>(static_cast<unsigned long long>(m.total_units) * reads_per_vector *
                                                 k::pattern_sum(n * 4, kSeed));
    state.counters["working_set_bytes"] = static_cast<double>(bytes);
    state.counters["l2_bytes"] = static_cast<double>(ctx.l2_bytes);
    state.counters["blocks"] = blocks;
    state.counters["block_threads"] = k::kL2ChunkThreads;
    state.counters["chunk_bytes"] = static_cast<double>(chunk * sizeof(uint4));
    state.counters["chunks_per_block"] = kL2ChunkReads;
    state.counters["reads_per_vector"] = reads_per_vector;
    state.counters["working_set_over_l2"] = static_cast<double>(bytes) / static_cast<double>(ctx.l2_bytes);
    if (sweep_point) state.counters["candidate"] = 0;
    report(state, m, Amount::kBytes, static_cast<double>(bytes) * reads_per_vector, got == want,
           "chunked L2 read sum " + std::to_string(got) + " != expected " + std::to_string(want));
  });
}

void run_smem_read(benchmark::State& state, int threads) {
  guarded(state, [&] {
    const Context& ctx = context();
    const std::size_t per_block = k::smem_read_bytes_per_block(threads);
    // Full occupancy where shared memory allows it: as many threads as an SM holds (2048 on Hopper, 1536 on
    // sm_86/89/120).
    int blocks_per_sm = std::max(1, ctx.prop.maxThreadsPerMultiProcessor / threads);
    const std::size_t smem_per_sm = ctx.prop.sharedMemPerMultiprocessor;
    while (blocks_per_sm > 1 && static_cast<std::size_t>(blocks_per_sm) * (per_block + 1024) > smem_per_sm)
      --blocks_per_sm;
    const int blocks = ctx.prop.multiProcessorCount * blocks_per_sm;
    Stream stream;
    DeviceBuffer<std::uint32_t> sum(1);
    CEILINGS_CUDA_CHECK(cudaMemsetAsync(sum.get(), 0, sizeof(std::uint32_t), stream.get()));
    MeasureSpec spec;
    spec.work = [&](cudaStream_t s) { k::smem_read(blocks, threads, kSmemReps, kSeed, sum.get(), s); };
    const Measurement m = run_measurement(state, stream.get(), spec);
    CEILINGS_LAUNCH_CHECK();
    const std::uint32_t got = read_back(sum, stream.get());
    const auto want = static_cast<std::uint32_t>(static_cast<unsigned long long>(m.total_units) * blocks * kSmemReps *
                                                 k::pattern_sum(per_block / 4, kSeed));
    const double amount = static_cast<double>(blocks) * kSmemReps * static_cast<double>(per_block);
    state.counters["blocks"] = blocks;
    state.counters["block_threads"] = threads;
    state.counters["smem_bytes_per_block"] = static_cast<double>(per_block);
    // Bytes per SM clock: Hopper's shared memory delivers at most 128 per SM per clock.
    if (m.telemetry.available && m.telemetry.sm_clock_hz_median > 0)
      state.counters["bytes_per_sm_clock"] =
          amount / m.median_s / (ctx.prop.multiProcessorCount * m.telemetry.sm_clock_hz_median);
    report(state, m, Amount::kBytes, amount, got == want,
           "shared-memory read sum " + std::to_string(got) + " != expected " + std::to_string(want));
  });
}

std::string fraction_text(double f) {
  std::ostringstream os;
  os << f;
  return os.str();
}

void register_cases(const Context& ctx) {
  struct L2Case {
    double fraction;
    int blocks_per_sm, threads;
    k::L2Load load;
  };
  // A quarter of the L2 stays inside each Hopper L2 partition (H100's pointer-chase latency steps up
  // past about half the L2, where lines come from the far partition): that is the hot case. Half the L2
  // is a variant that shows the partition effect; both with the L2-coherent .cg load (a strong load) and
  // with a weak one that allocates no L1 line. The best variant is the ceiling. (On the H200 all read
  // 8.7-8.8 TB/s, 2026-11-30; gpu-benches reports about 10 TB/s there at 4-40 MB. A tenth of the L2 is not
  // a variant: rounded to whole passes of the grid it left one vector per thread, and read 5.5 TB/s.)
  constexpr auto cg = k::L2Load::kCoherent, na = k::L2Load::kNoL1Allocate;
  std::vector<L2Case> l2 = ctx.options.quick ? std::vector<L2Case>{{0.25, 2, 1024, cg}}
                                             : std::vector<L2Case>{{0.25, 2, 1024, cg}, {0.25, 2, 1024, na},
                                                                   {0.25, 4, 512, cg},  {0.5, 2, 1024, cg},
                                                                   {0.5, 2, 1024, na}};
  for (L2Case& c : l2) {
    // No more resident threads than an SM holds (1536 on sm_86/89/120): the rest would run as a second wave.
    c.blocks_per_sm = std::max(1, std::min(c.blocks_per_sm, ctx.prop.maxThreadsPerMultiProcessor / c.threads));
    const std::string name = "l2/read/l2_fraction:" + std::to_string(c.fraction).substr(0, 4) +
                             "/bpsm:" + std::to_string(c.blocks_per_sm) + "/threads:" + std::to_string(c.threads) +
                             "/load:" + (c.load == cg ? "cg" : "na");
    configure(benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& st) {
      run_l2_read(st, c.fraction, c.blocks_per_sm, c.threads, c.load);
    }));
  }
  // The chunked grid (gpu-benches' shape): a quarter of the L2, and a sixteenth, where gpu-benches reads more
  // (10.6 TB/s at 4 MB; on the H200, 2026-11-30, it read 10.5 TB/s there, the ceiling, against a plateau of
  // 9.6-10.0 from an eighth to half of the L2 in the sweep); whole chunks keep every block's work equal at any
  // size.
  if (!ctx.options.quick)
    for (double fraction : {0.25, 0.0625}) {
      const std::string name = "l2/read/l2_fraction:" + fraction_text(fraction) +
                               "/grid:chunks/threads:" + std::to_string(k::kL2ChunkThreads) + "/load:cg";
      configure(benchmark::RegisterBenchmark(name.c_str(), [fraction](benchmark::State& st) {
        run_l2_read_chunks(st, fraction, k::L2Load::kCoherent);
      }));
    }
  // The working-set sweep behind l2.read (full pass only): the chunked kernel from a thirty-second of the L2 to
  // four times it, past which the reads come from HBM (gpu-benches' H200 curve steps down at 44-63 MB). The
  // two candidates' sizes are points too, so the curve is whole.
  if (!ctx.options.quick)
    for (double fraction : {0.03125, 0.0625, 0.125, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0}) {
      const std::string name = "l2/read/l2_fraction:" + fraction_text(fraction) + "/grid:chunks/threads:" +
                               std::to_string(k::kL2ChunkThreads) + "/load:cg/sweep";
      configure(benchmark::RegisterBenchmark(name.c_str(), [fraction](benchmark::State& st) {
        run_l2_read_chunks(st, fraction, k::L2Load::kCoherent, true);
      }));
    }
  for (int threads : ctx.options.quick ? std::vector<int>{256} : std::vector<int>{256, 512}) {
    const std::string name = "smem/read/threads:" + std::to_string(threads);
    configure(benchmark::RegisterBenchmark(name.c_str(), [threads](benchmark::State& st) { run_smem_read(st, threads); }));
  }
}

}  // namespace
}  // namespace ceilings::bench

CEILINGS_BENCH_FAMILY(cache, 50, ceilings::bench::register_cases, nullptr);
