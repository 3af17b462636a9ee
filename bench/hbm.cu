// HBM bandwidth: hbm.read, hbm.write, hbm.copy, hbm.triad over working sets several times the L2,
// each over a small sweep of launch shapes (the best one is the ceiling). Bytes = read + written.
// Two kinds of grid: one wave of resident blocks looping over the array (bpsm:N), and one block per tile
// of the array, no loop (grid:cover, as BabelStream and PyTorch launch; not for the read, whose per-block
// sum would then be millions of atomics on one word). hbm.copy also times the driver's own device-to-device
// cudaMemcpyAsync (engine:memcpy, what nvbandwidth's device_local_copy and PyTorch's copy_ run).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "ceilings/cli_checks.hpp"
#include "ceilings/kernels/hbm.cuh"
#include "harness/measure.hpp"

namespace ceilings::bench {
namespace {

namespace k = ceilings::kernels;

enum class Op { kRead, kWrite, kCopy, kTriad };
struct OpInfo {
  Op op;
  const char* name;
  int arrays;       // buffers of the working-set size it touches
  int bytes_moved;  // bytes moved per byte of one array (read + write)
};
constexpr OpInfo kOps[] = {{Op::kRead, "read", 1, 1}, {Op::kWrite, "write", 1, 1}, {Op::kCopy, "copy", 2, 2},
                           {Op::kTriad, "triad", 3, 3}};

std::size_t g_array_bytes = 0;  // --ceilings_hbm_bytes; 0 = default

void add_options(CLI::App& app) {
  app.add_option("--ceilings_hbm_bytes", g_array_bytes,
                 "Bytes per HBM array (default: the larger of 4x L2 and 8 GiB, 1 GiB with --ceilings_quick; reduced "
                 "to fit free memory, rounded down to a multiple of 64 bytes, then 64 bytes less)")
      ->check(ceilings::cli::number_in(1 << 20, 0x1p40));
}

std::size_t array_bytes_for(const Context& ctx, const OpInfo& op) {
  // 8 GiB: a read of the array takes about 2 ms on an H200, so the gap between launches costs well
  // under 1% (at 2 GiB it cost about that much, the margin the best peers leave).
  std::size_t bytes = g_array_bytes ? g_array_bytes
                                    : std::max<std::size_t>(4 * ctx.l2_bytes, (ctx.options.quick ? 1ull : 8ull) << 30);
  // Leave a tenth of the free memory to the runtime; never ask for more than the device has.
  const std::size_t fit = static_cast<std::size_t>(0.9 * static_cast<double>(ctx.free_bytes)) / op.arrays;
  bytes = std::min(bytes, fit);
  // Not a power of two: the read's check is a wrapped sum of the linear pattern, and for 2^k words that
  // sum is a multiple of 2^(k-1) (4 bits left of 32 at 2 GiB, blind to whole launches going missing).
  // 64 bytes less leaves a multiple of 8: 29 bits.
  return bytes < 128 ? 0 : bytes / 64 * 64 - 64;
}

constexpr std::uint32_t kSeedA = 0x1234567u, kSeedB = 0x9e3779b9u, kSeedC = 0x7f4a7c15u;
constexpr float kTriadScalar = 0.4375f;

// shape.blocks == 0: a covering grid, one block per threads x unroll vectors (shape is unused by the
// driver's copy and the bulk copy).
// How a case moves the data: the SMs' loads and stores (a kernel of `shape`), the driver's copy (copy only), or
// the TMA unit's bulk copies through shared memory (copy only; `bulk`).
enum class Engine { kSm, kMemcpy, kBulk };

void run_case(benchmark::State& state, OpInfo op, k::StreamShape shape, std::size_t array_bytes,
              Engine engine = Engine::kSm, k::BulkCopyShape bulk = {}) {
  guarded(state, [&] {
    const Context& ctx = context();
    const bool memcpy = engine == Engine::kMemcpy;
    if (engine == Engine::kBulk && ctx.prop.major < 9)
      unsupported("TMA bulk copies (cp.async.bulk) need compute capability 9.0; this device is " +
                  std::to_string(ctx.prop.major) + "." + std::to_string(ctx.prop.minor));
    if (array_bytes < 4 * ctx.l2_bytes)
      unsupported("only " + std::to_string(array_bytes >> 20) + " MiB per array fit in free memory, less than 4x L2");
    const std::size_t n = array_bytes / sizeof(uint4);
    if (shape.blocks == 0 && engine == Engine::kSm) {
      const std::size_t tile = static_cast<std::size_t>(shape.threads) * static_cast<std::size_t>(shape.unroll);
      const std::size_t blocks = (n + tile - 1) / tile;
      if (blocks > static_cast<std::size_t>(ctx.prop.maxGridSize[0]))
        unsupported("a covering grid of " + std::to_string(blocks) + " blocks is more than the device launches");
      shape.blocks = static_cast<int>(blocks);
    }
    Stream stream;
    DeviceBuffer<uint4> a(n), b(op.arrays >= 2 ? n : 0), c(op.arrays >= 3 ? n : 0);
    DeviceBuffer<unsigned long long> bad(1);
    DeviceBuffer<std::uint32_t> sum(1);
    DeviceBuffer<unsigned int> stalls(1);
    CEILINGS_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), stream.get()));
    CEILINGS_CUDA_CHECK(cudaMemsetAsync(sum.get(), 0, sizeof(std::uint32_t), stream.get()));
    CEILINGS_CUDA_CHECK(cudaMemsetAsync(stalls.get(), 0, sizeof(unsigned int), stream.get()));
    auto* af = reinterpret_cast<float4*>(a.get());
    auto* bf = reinterpret_cast<float4*>(b.get());
    auto* cf = reinterpret_cast<float4*>(c.get());
    switch (op.op) {
      case Op::kRead: k::fill_pattern(a.get(), n, kSeedA, stream.get()); break;
      case Op::kWrite: CEILINGS_CUDA_CHECK(cudaMemsetAsync(a.get(), 0xA5, a.bytes(), stream.get())); break;
      case Op::kCopy:
        k::fill_pattern(b.get(), n, kSeedB, stream.get());
        CEILINGS_CUDA_CHECK(cudaMemsetAsync(a.get(), 0xA5, a.bytes(), stream.get()));
        break;
      case Op::kTriad:
        k::fill_pattern_floats(bf, n, kSeedB, stream.get());
        k::fill_pattern_floats(cf, n, kSeedC, stream.get());
        CEILINGS_CUDA_CHECK(cudaMemsetAsync(a.get(), 0xA5, a.bytes(), stream.get()));
        break;
    }
    CEILINGS_LAUNCH_CHECK();
    stream.sync();

    MeasureSpec spec;
    // Every word of the output is checked after the run. A vector in every kPoisonStride bytes is re-poisoned
    // before each sample, so the check also shows the last sample's own launches reached across the buffer (the read counts
    // its launches in its sum instead).
    if (op.op != Op::kRead) spec.before_sample = [&](cudaStream_t s) { poison_stride_device(a.get(), a.bytes(), 0xA5, s); };
    spec.work = [&](cudaStream_t s) {
      switch (op.op) {
        case Op::kRead: k::hbm_read(a.get(), n, sum.get(), shape, s); break;
        case Op::kWrite: k::hbm_write(a.get(), n, kSeedA, shape, s); break;
        case Op::kCopy:
          if (memcpy)
            CEILINGS_CUDA_CHECK(cudaMemcpyAsync(a.get(), b.get(), n * sizeof(uint4), cudaMemcpyDeviceToDevice, s));
          else if (engine == Engine::kBulk)
            k::hbm_copy_bulk(a.get(), b.get(), n, bulk, stalls.get(), s);
          else
            k::hbm_copy(a.get(), b.get(), n, shape, s);
          break;
        case Op::kTriad: k::hbm_triad(af, bf, cf, kTriadScalar, n, shape, s); break;
      }
    };
    const Measurement m = run_measurement(state, stream.get(), spec);
    CEILINGS_LAUNCH_CHECK();

    // Verify against the analytic result: every word of the output, or for the read, the wrapped
    // sum of every launch (each launch adds the closed-form sum of the pattern).
    bool ok = false;
    std::string detail;
    if (op.op == Op::kRead) {
      std::uint32_t got = 0;
      CEILINGS_CUDA_CHECK(cudaMemcpyAsync(&got, sum.get(), sizeof got, cudaMemcpyDeviceToHost, stream.get()));
      stream.sync();
      const std::uint32_t want =
          static_cast<std::uint32_t>(static_cast<unsigned long long>(m.total_units) * k::pattern_sum(n * 4, kSeedA));
      ok = got == want;
      detail = "read sum " + std::to_string(got) + " != expected " + std::to_string(want) + " after " +
               std::to_string(m.total_units) + " launches";
    } else {
      if (engine == Engine::kBulk) check_bulk_copy_stalls(stalls.get(), stream.get(), "TMA bulk copy");
      if (op.op == Op::kTriad)
        k::count_triad_mismatches(af, n, kSeedB, kSeedC, kTriadScalar, bad.get(), stream.get());
      else
        k::count_pattern_mismatches(a.get(), n, op.op == Op::kCopy ? kSeedB : kSeedA, bad.get(), stream.get());
      CEILINGS_LAUNCH_CHECK();
      unsigned long long mismatches = 0;
      CEILINGS_CUDA_CHECK(cudaMemcpyAsync(&mismatches, bad.get(), sizeof mismatches, cudaMemcpyDeviceToHost, stream.get()));
      stream.sync();
      ok = mismatches == 0;
      detail = std::to_string(mismatches) + " of " + std::to_string(n * 4) + " words differ from the expected output";
    }
    state.counters["array_bytes"] = static_cast<double>(array_bytes);
    if (engine == Engine::kSm) {
      state.counters["blocks"] = shape.blocks;
      state.counters["block_threads"] = shape.threads;
    } else if (engine == Engine::kBulk) {
      state.counters["blocks"] = bulk.blocks;
      state.counters["chunk_bytes"] = bulk.chunk_bytes;
      state.counters["stages"] = bulk.stages;
      state.counters["shared_bytes_per_sm"] = static_cast<double>(bulk.chunk_bytes) * bulk.stages *
                                              (bulk.blocks / std::max(1, ctx.prop.multiProcessorCount));
    }
    report(state, m, Amount::kBytes, static_cast<double>(array_bytes) * op.bytes_moved, ok, detail);
  });
}

k::StreamOp stream_op(Op op) {
  switch (op) {
    case Op::kRead: return k::StreamOp::kRead;
    case Op::kWrite: return k::StreamOp::kWrite;
    case Op::kCopy: return k::StreamOp::kCopy;
    case Op::kTriad: break;
  }
  return k::StreamOp::kTriad;
}

void register_cases(const Context& ctx) {
  struct Shape {
    int threads, unroll, hint;
  };
  // Up to 2048 threads per SM in small and large blocks, 2 to 8 vectors in flight per thread,
  // streaming or L2-prefetching loads; quick mode keeps two of them. Each grid is one wave: as many
  // blocks per SM as the kernel instance keeps resident (the wide unrolls need more registers than
  // full occupancy allows), so no block runs as a second wave after the first has drained.
  std::vector<Shape> shapes;
  if (ctx.options.quick) {
    shapes = {{512, 4, 1}, {1024, 4, 2}};
  } else {
    for (int threads : {256, 1024})
      for (int unroll : {2, 4, 8})
        for (int hint : {1, 2}) shapes.push_back({threads, unroll, hint});
  }
  for (const OpInfo& op : kOps) {
    const std::size_t bytes = array_bytes_for(ctx, op);
    for (Shape s : shapes) {
      // Hint 2 is a load hint; for the write it becomes hint 0, plain stores (evict-first stores,
      // hint 1, are not known to be faster for a pure write stream on Hopper: measure both).
      if (op.op == Op::kWrite && s.hint == 2) s.hint = 0;
      const int want_per_sm = ctx.prop.maxThreadsPerMultiProcessor / s.threads;  // 2048 on sm_90, 1536 on sm_86/89
      const int resident = k::stream_resident_blocks_per_sm(stream_op(op.op), k::StreamShape{1, s.threads, s.unroll, s.hint});
      if (resident == 0) continue;  // this instance cannot launch with that many threads per block
      // resident < 0: the query failed; keep the case so its launch reports why.
      const int per_sm = resident < 0 ? want_per_sm : std::min(want_per_sm, resident);
      k::StreamShape shape{ctx.prop.multiProcessorCount * per_sm, s.threads, s.unroll, s.hint};
      const std::string name = std::string("hbm/") + op.name + "/threads:" + std::to_string(s.threads) +
                               "/bpsm:" + std::to_string(per_sm) + "/unroll:" + std::to_string(s.unroll) +
                               "/hint:" + std::to_string(s.hint);
      configure(benchmark::RegisterBenchmark(name.c_str(), [op, shape, bytes](benchmark::State& st) {
        run_case(st, op, shape, bytes);
      }));
    }
    if (op.op == Op::kRead) continue;
    // Covering grids: plain and streaming accesses, 1 to 4 vectors a thread (quick mode: one). On the H200
    // one vector a thread was the best copy, triad and write, 2026-11-30: 128- and 256-thread blocks for the
    // copy (4.28-4.29 TB/s), 512 no better (4.24).
    std::vector<Shape> cover;
    for (int threads : {256, 1024})
      for (int unroll : {1, 2, 4})
        for (int hint : {0, 1})
          if (!ctx.options.quick || (threads == 256 && unroll == 2 && hint == 1)) cover.push_back({threads, unroll, hint});
    if (!ctx.options.quick)
      for (int threads : {128, 512})
        for (int hint : {0, 1}) cover.push_back({threads, 1, hint});
    for (const Shape& s : cover) {
      // An instance that cannot launch this many threads a block is left out, as for the resident grids.
      if (k::stream_resident_blocks_per_sm(stream_op(op.op), k::StreamShape{1, s.threads, s.unroll, s.hint}) == 0) continue;
      const std::string name = std::string("hbm/") + op.name + "/threads:" + std::to_string(s.threads) +
                               "/grid:cover/unroll:" + std::to_string(s.unroll) + "/hint:" + std::to_string(s.hint);
      const k::StreamShape shape{0, s.threads, s.unroll, s.hint};
      configure(benchmark::RegisterBenchmark(name.c_str(), [op, shape, bytes](benchmark::State& st) {
        run_case(st, op, shape, bytes);
      }));
    }
    if (op.op == Op::kCopy)
      configure(benchmark::RegisterBenchmark("hbm/copy/engine:memcpy", [op, bytes](benchmark::State& st) {
        run_case(st, op, k::StreamShape{}, bytes, Engine::kMemcpy);
      }));
  }
  // The TMA unit's bulk copies (full pass with --ceilings_tma, compute capability 9.0+; registered last, so a
  // fault in one costs no other case of this process): no register holds the data, and each SM keeps 64-160
  // KiB of loads in flight (CCCL's cub::DeviceTransform copies this way on Hopper, sized for at least 48 KiB
  // in flight per SM on an H200). Not yet run on a GPU: the SM copies' 4.29 TB/s (89% of the datasheet, as
  // PyTorch's and the driver's copies) is what they would have to beat.
  if (ctx.options.quick || !ctx.options.tma || ctx.prop.major < 9) return;
  const OpInfo& copy = *std::find_if(std::begin(kOps), std::end(kOps), [](const OpInfo& o) { return o.op == Op::kCopy; });
  const std::size_t copy_bytes = array_bytes_for(ctx, copy);
  struct Bulk {
    int chunk_bytes, stages, per_sm;
  };
  for (const Bulk& v : {Bulk{32768, 6, 1}, Bulk{16384, 6, 2}, Bulk{8192, 6, 4}, Bulk{32768, 3, 2}}) {
    const k::BulkCopyShape probe{1, v.chunk_bytes, v.stages};
    const int resident = k::bulk_copy_resident_blocks_per_sm(probe);
    if (resident == 0) continue;  // more shared memory than a block may have here
    // resident < 0: the query failed; keep the case so its launch reports why.
    const int per_sm = resident < 0 ? v.per_sm : std::min(v.per_sm, resident);
    const k::BulkCopyShape bulk{ctx.prop.multiProcessorCount * per_sm, v.chunk_bytes, v.stages};
    const std::string name = "hbm/copy/engine:bulk/chunk:" + std::to_string(v.chunk_bytes) +
                             "/stages:" + std::to_string(v.stages) + "/bpsm:" + std::to_string(per_sm);
    configure(benchmark::RegisterBenchmark(name.c_str(), [copy, bulk, copy_bytes](benchmark::State& st) {
      run_case(st, copy, k::StreamShape{}, copy_bytes, Engine::kBulk, bulk);
    }));
  }
}

}  // namespace
}  // namespace ceilings::bench

CEILINGS_BENCH_FAMILY(hbm, 10, ceilings::bench::register_cases, ceilings::bench::add_options);
