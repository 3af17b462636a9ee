// Latencies: latency.l2 and latency.hbm (a dependent pointer chase, seconds per load, plus a
// working-set sweep showing the L1/L2/HBM steps), latency.launch and latency.graph_launch (an empty
// kernel from a stream and from a CUDA graph), latency.h2d_small / d2h_small (small pinned copies).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "ceilings/cli_checks.hpp"
#include "ceilings/kernels/transfer.cuh"
#include "ceilings/stats.hpp"
#include "ceilings/transfer.hpp"
#include "harness/host_memory.hpp"
#include "harness/measure.hpp"

namespace ceilings::bench {
namespace {

namespace k = ceilings::kernels;
constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;

constexpr std::uint32_t kStrideBytes = 128;  // one L2 line per slot: every load is a new line
// Dependent loads per launch: a prime, so that no launch of it (or of twice it) is a whole number of laps of a
// power-of-two slot count; otherwise every launch ends where it began and a kernel that skipped loads (or all
// of them) would end where the host walk does.
constexpr int kChaseLoads = 16381;
// Sweep points up to this size are timed twice (kChaseLoads and 2 x kChaseLoads per launch) and
// the difference is the latency: each launch starts with an invalidated L1, so its first lap of a
// small set pays L2 latency (up to ~2048 lines, an eighth of a launch), which the difference
// cancels together with the launch gap. Beyond a few MiB that cold start is below 1%.
constexpr std::size_t kDifferenceUpTo = 4u << 20;
constexpr double kSweepSeconds = 0.3;        // sampling budget of a sweep point (detail, not a ceiling)
// Largest pointer-chase set: past a few GiB the host walk that builds and checks the chain takes seconds
// (and slot indices are 32-bit).
constexpr std::size_t kMaxChaseBytes = std::size_t{8} << 30;
constexpr int kLaunches = 1000;              // empty kernels per unit (stream and graph)
constexpr int kQueuedLaunches = 128;         // kernels queued behind the blocking kernel (the launch queue is finite)
constexpr int kSmallCopies = 100;            // small copies per unit

// Per-operation view of a measurement whose unit is `ops` operations.
Measurement per_op(Measurement m, double ops) {
  for (double& s : m.unit_seconds) s /= ops;
  m.median_s /= ops;
  return m;
}

// Median host-clock time of `op` (which must synchronise itself): the round trip a program sees.
// Host-timed on purpose and reported only as a detail counter next to the GPU-timed value.
template <class Op>
double host_roundtrip_s(Op&& op, int reps = 200) {
  std::vector<double> t;
  for (int i = 0; i < reps + 10; ++i) {
    const auto a = std::chrono::steady_clock::now();
    op();
    const auto b = std::chrono::steady_clock::now();
    if (i >= 10) t.push_back(std::chrono::duration<double>(b - a).count());
  }
  return median(t);
}

enum class ChaseKind { kSweep, kL2, kHbm };

void run_chase(benchmark::State& state, ChaseKind kind, std::size_t working_set) {
  guarded(state, [&] {
    const Context& ctx = context();
    const std::size_t slots = working_set / kStrideBytes;
    if (slots < 2) unsupported("working set below two slots");
    const bool beyond_l2 = working_set > ctx.l2_bytes;
    // Beyond the L2: a scrub of twice the L2 after the chain is written (see below).
    const std::size_t scrub_bytes = beyond_l2 ? 2 * ctx.l2_bytes : 0;
    require_memory(slots * 4, working_set + slots * 4 + scrub_bytes);
    const std::vector<std::uint32_t> next = pointer_chase_cycle(slots, 0x5eed0000u + slots);
    Stream stream;
    DeviceBuffer<std::uint8_t> chain(working_set);
    DeviceBuffer<std::uint32_t> next_dev(slots);
    DeviceBuffer<std::uint64_t> position(1);
    CEILINGS_CUDA_CHECK(cudaMemcpyAsync(next_dev.get(), next.data(), slots * 4, cudaMemcpyHostToDevice, stream.get()));
    k::write_chase_chain(chain.get(), next_dev.get(), slots, kStrideBytes, stream.get());
    CEILINGS_LAUNCH_CHECK();
    if (beyond_l2) {
      // Writing the chain leaves its last lines in the L2, and a chase of a set this large would take many
      // launches to evict them: the first samples would hit them and read low. Writing twice the L2 evicts it.
      DeviceBuffer<std::uint8_t> scrub(scrub_bytes);
      CEILINGS_CUDA_CHECK(cudaMemsetAsync(scrub.get(), 0x5a, scrub.bytes(), stream.get()));
      stream.sync();
    }
    const std::uint64_t start = k::chase_address(chain.get(), 0, kStrideBytes);
    CEILINGS_CUDA_CHECK(cudaMemcpyAsync(position.get(), &start, sizeof start, cudaMemcpyHostToDevice, stream.get()));
    const bool l1 = kind == ChaseKind::kSweep;  // the sweep lets loads hit L1; the ceilings never do
    // One full lap first when the working set fits the L2, so it is in the cache when the timing
    // starts; a larger set gets one launch (a lap of it would take seconds and warm nothing).
    const std::uint64_t warm = beyond_l2 ? kChaseLoads : slots;
    for (std::uint64_t done = 0; done < warm; done += kChaseLoads)
      k::pointer_chase(position.get(), kChaseLoads, l1, stream.get());
    const std::uint64_t warm_loads = (warm + kChaseLoads - 1) / kChaseLoads * kChaseLoads;
    CEILINGS_LAUNCH_CHECK();
    stream.sync();
    const bool difference = kind == ChaseKind::kSweep && working_set <= kDifferenceUpTo;
    MeasureSpec spec;
    if (kind == ChaseKind::kSweep) spec.max_seconds = kSweepSeconds;
    Measurement short_m;  // the kChaseLoads-per-launch measurement of a difference point
    if (difference) {
      spec.work = [&](cudaStream_t s) { k::pointer_chase(position.get(), kChaseLoads, l1, s); };
      short_m = measure(stream.get(), spec, ctx.options, ctx.nvml);
    }
    const int loads = difference ? 2 * kChaseLoads : kChaseLoads;
    spec.work = [&](cudaStream_t s) { k::pointer_chase(position.get(), loads, l1, s); };
    Measurement m = run_measurement(state, stream.get(), spec);
    CEILINGS_LAUNCH_CHECK();
    std::uint64_t got_address = 0;
    CEILINGS_CUDA_CHECK(
        cudaMemcpyAsync(&got_address, position.get(), sizeof got_address, cudaMemcpyDeviceToHost, stream.get()));
    stream.sync();
    const std::size_t got = k::chase_slot(got_address, chain.get(), kStrideBytes);
    const std::uint64_t steps = warm_loads + static_cast<std::uint64_t>(short_m.total_units) * kChaseLoads +
                                static_cast<std::uint64_t>(m.total_units) * static_cast<std::uint64_t>(loads);
    const std::size_t want = chase_position(next, 0, steps);
    state.counters["working_set_bytes"] = static_cast<double>(working_set);
    state.counters["stride_bytes"] = kStrideBytes;
    state.counters["l1_loads"] = l1 ? 1 : 0;
    state.counters["l2_bytes"] = static_cast<double>(ctx.l2_bytes);
    if (kind == ChaseKind::kSweep) state.counters["candidate"] = 0;
    bool ok = got == want;
    std::string why = "pointer chase ended at slot " + std::to_string(got) + ", the host walk at " +
                      std::to_string(want) + " after " + std::to_string(steps) + " loads";
    Measurement per_load;
    if (difference) {
      // latency = (T(2N) - T(N)) / N per launch; the fixed part T(N) - N * latency is the launch gap
      // plus the cold-L1 lap, reported beside it.
      per_load = m;
      for (double& t : per_load.unit_seconds) t = (t - short_m.median_s) / kChaseLoads;
      per_load.median_s = (m.median_s - short_m.median_s) / kChaseLoads;
      per_load.cv = coefficient_of_variation(per_load.unit_seconds);
      state.counters["timing"] = 2;  // 2: difference of two launch lengths; 1: one length
      // 2 T(N) - T(2N): a few us beside a T(N) of ms, so the two medians' noise can take it below zero; then it
      // is not resolved, and a negative duration would make the sweep point an unreadable entry (review 55).
      const double fixed_s = short_m.median_s - kChaseLoads * per_load.median_s;
      if (fixed_s >= 0)
        state.counters["fixed_per_launch_s"] = fixed_s;
      else
        state.counters["fixed_per_launch_unresolved"] = 1;
      if (ok && !(per_load.median_s > 0)) {
        ok = false;
        why = "a launch of " + std::to_string(2 * kChaseLoads) + " loads was not slower than one of " +
              std::to_string(kChaseLoads) + ": no latency to report";
      }
    } else {
      per_load = per_op(m, loads);
      state.counters["timing"] = 1;
    }
    if (m.telemetry.available && m.telemetry.sm_clock_hz_median > 0)
      state.counters["sm_cycles_per_load"] = per_load.median_s * m.telemetry.sm_clock_hz_median;
    report_latency(state, per_load, ok, why);
  });
}

void run_launch(benchmark::State& state, bool graph) {
  guarded(state, [&] {
    Stream stream;
    DeviceBuffer<unsigned long long> launches(1);
    CEILINGS_CUDA_CHECK(cudaMemsetAsync(launches.get(), 0, sizeof(unsigned long long), stream.get()));
    stream.sync();
    cudaGraphExec_t exec = nullptr;
    cudaGraph_t g = nullptr;
    struct GraphGuard {
      cudaGraph_t* g;
      cudaGraphExec_t* e;
      ~GraphGuard() {
        if (*e) cudaGraphExecDestroy(*e);
        if (*g) cudaGraphDestroy(*g);
      }
    } guard{&g, &exec};
    if (graph) {
      // kLaunches chained kernel nodes, captured once; one graph launch per unit.
      Stream capture;
      CEILINGS_CUDA_CHECK(cudaStreamBeginCapture(capture.get(), cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < kLaunches; ++i) k::empty_kernel(launches.get(), capture.get());
      CEILINGS_CUDA_CHECK(cudaStreamEndCapture(capture.get(), &g));
      CEILINGS_CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
      CEILINGS_CUDA_CHECK(cudaGraphUpload(exec, stream.get()));
    }
    auto unit = [&](cudaStream_t s) {
      if (graph) {
        CEILINGS_CUDA_CHECK(cudaGraphLaunch(exec, s));
      } else {
        for (int i = 0; i < kLaunches; ++i) k::empty_kernel(launches.get(), s);
      }
    };
    // Launched as the host issues them (no blocking kernel): the host's submission cost is part of
    // what a stream of small kernels pays.
    MeasureSpec spec;
    spec.blocking_kernel = false;
    spec.units_per_sample = 1;
    spec.work = unit;
    const Measurement m = run_measurement(state, stream.get(), spec);
    CEILINGS_LAUNCH_CHECK();
    // Kernels queued behind a blocking kernel: what the GPU alone needs per kernel. Fewer of them:
    // a full launch queue would block the host that has to release the blocker.
    const int queued_kernels = graph ? kLaunches : kQueuedLaunches;
    MeasureSpec queued = spec;
    queued.blocking_kernel = true;
    if (!graph)
      queued.work = [&](cudaStream_t s) {
        for (int i = 0; i < kQueuedLaunches; ++i) k::empty_kernel(launches.get(), s);
      };
    const Measurement q = measure(stream.get(), queued, context().options, context().nvml);
    // One kernel (or a one-launch graph unit), launched and waited for, host-timed.
    const double roundtrip = host_roundtrip_s([&] {
      if (graph)
        CEILINGS_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
      else
        k::empty_kernel(launches.get(), stream.get());
      stream.sync();
    });
    const long long roundtrip_launches = 210LL * (graph ? kLaunches : 1);
    unsigned long long ran = 0;
    CEILINGS_CUDA_CHECK(cudaMemcpy(&ran, launches.get(), sizeof ran, cudaMemcpyDeviceToHost));
    const unsigned long long want =
        static_cast<unsigned long long>(m.total_units) * kLaunches +
        static_cast<unsigned long long>(q.total_units) * queued_kernels + roundtrip_launches;
    state.counters["kernels_per_unit"] = kLaunches;
    // Under confidential computing the driver's work submission is encrypted too: a launch is measured otherwise
    // (qualify and fleet take latency.launch as such; the detail says so, as the copies' does).
    state.counters["confidential_computing"] = context().confidential_computing ? 1 : 0;
    state.counters["queued_per_kernel_s"] = q.median_s / queued_kernels;
    if (graph)
      state.counters["graph_roundtrip_s"] = roundtrip;  // a whole graph of kLaunches kernels
    else
      state.counters["sync_roundtrip_s"] = roundtrip;
    const Measurement per_kernel = per_op(m, kLaunches);
    const bool sane = per_kernel.median_s > 0 && per_kernel.median_s < 1e-3;
    report_latency(state, per_kernel, ran == want && sane,
                   std::to_string(ran) + " kernels ran of " + std::to_string(want) + " launched; " +
                       std::to_string(per_kernel.median_s) + " s per kernel");
  });
}

void run_small_copy(benchmark::State& state, bool h2d, std::size_t bytes, bool candidate) {
  guarded(state, [&] {
    NumaPlacement numa(context().device);
    Stream stream;
    constexpr std::uint32_t kSeed = 0x0badcafeu;
    HostBuffer src_h(h2d ? bytes : 0, HostBuffer::Kind::kPinned), dst_h(h2d ? 0 : bytes, HostBuffer::Kind::kPinned);
    DeviceBuffer<std::uint8_t> dev(bytes);
    if (h2d) {
      fill_host_pattern(src_h.get(), bytes, kSeed);
      CEILINGS_CUDA_CHECK(cudaMemsetAsync(dev.get(), 0xA5, bytes, stream.get()));
    } else {
      std::vector<std::uint8_t> pattern(bytes);
      fill_host_pattern(pattern.data(), bytes, kSeed);
      CEILINGS_CUDA_CHECK(cudaMemcpyAsync(dev.get(), pattern.data(), bytes, cudaMemcpyHostToDevice, stream.get()));
      std::memset(dst_h.get(), 0x5A, bytes);
    }
    stream.sync();
    auto copy = [&](cudaStream_t s) {
      if (h2d)
        CEILINGS_CUDA_CHECK(cudaMemcpyAsync(dev.get(), src_h.get(), bytes, cudaMemcpyHostToDevice, s));
      else
        CEILINGS_CUDA_CHECK(cudaMemcpyAsync(dst_h.get(), dev.get(), bytes, cudaMemcpyDeviceToHost, s));
    };
    MeasureSpec spec;
    spec.units_per_sample = 1;
    if (!candidate) spec.max_seconds = kSweepSeconds;
    // Under confidential computing the driver stages every copy on the host (encrypted bounce buffers): behind the
    // blocking kernel it would wait, as a pageable copy does.
    spec.blocking_kernel = !context().confidential_computing;
    spec.work = [&](cudaStream_t s) {
      for (int i = 0; i < kSmallCopies; ++i) copy(s);
    };
    // The whole destination (at most 64 KiB) poisoned before every sample: the check after the run shows the last
    // sample's copies reached all of it.
    spec.before_sample = [&](cudaStream_t s) {
      if (h2d)
        CEILINGS_CUDA_CHECK(cudaMemsetAsync(dev.get(), 0xA5, bytes, s));
      else
        std::memset(dst_h.get(), 0x5A, bytes);
    };
    // Words of the destination that do not hold the pattern (the copies just queued having finished).
    auto wrong_words = [&] {
      stream.sync();
      std::vector<std::uint8_t> landed(bytes);
      if (h2d)
        CEILINGS_CUDA_CHECK(cudaMemcpy(landed.data(), dev.get(), bytes, cudaMemcpyDeviceToHost));
      else
        std::memcpy(landed.data(), dst_h.get(), bytes);
      return count_host_mismatches(landed.data(), bytes, kSeed);
    };
    const Measurement m = run_measurement(state, stream.get(), spec);
    const std::size_t bad = wrong_words();  // the timed copies' (their last sample's poison overwritten)
    spec.before_sample(stream.get());       // the round trip's copies are checked on their own
    stream.sync();
    const double roundtrip = host_roundtrip_s([&] {
      copy(stream.get());
      stream.sync();
    });
    const std::size_t bad_roundtrip = wrong_words();
    for (const auto& [key, v] : numa.counters()) state.counters[key] = v;
    state.counters["transfer_bytes"] = static_cast<double>(bytes);
    state.counters["copies_per_unit"] = kSmallCopies;
    state.counters["confidential_computing"] = context().confidential_computing ? 1 : 0;
    state.counters["sync_roundtrip_s"] = roundtrip;
    if (!candidate) state.counters["candidate"] = 0;
    report_latency(state, per_op(m, kSmallCopies), bad == 0 && bad_roundtrip == 0,
                   std::to_string(bad) + " of " + std::to_string(bytes / 4) + " words wrong after the timed copies, " +
                       std::to_string(bad_roundtrip) + " after the round-trip copies");
  });
}

std::size_t g_hbm_working_set = 0;  // --ceilings_latency_hbm_bytes

void add_options(CLI::App& app) {
  app.add_option("--ceilings_latency_hbm_bytes", g_hbm_working_set,
                 "Pointer-chase working set for latency.hbm (default: the larger of 8x L2 and 512 MiB)")
      ->check(ceilings::cli::number_in(1 << 20, static_cast<double>(kMaxChaseBytes)));
}

void register_cases(const Context& ctx) {
  const std::size_t l2 = std::max<std::size_t>(ctx.l2_bytes, MiB);
  // Ceilings: a working set well inside the L2 (a quarter of it) and one far beyond it.
  std::size_t hbm_set = g_hbm_working_set ? g_hbm_working_set : std::max<std::size_t>(8 * l2, 512 * MiB);
  hbm_set = std::min<std::size_t>(hbm_set, static_cast<std::size_t>(0.4 * static_cast<double>(ctx.free_bytes)));
  hbm_set = std::min(hbm_set, kMaxChaseBytes) / kStrideBytes * kStrideBytes;
  // A quarter of the L2: inside the partition near the chasing SM on Hopper (H100's L2 latency steps
  // up past about half its size, where lines come from the far partition).
  const std::size_t l2_set = l2 / 4 / kStrideBytes * kStrideBytes;
  auto chase = [](const std::string& name, ChaseKind kind, std::size_t ws) {
    configure(benchmark::RegisterBenchmark(name.c_str(), [kind, ws](benchmark::State& st) { run_chase(st, kind, ws); }));
  };
  chase("latency/l2/working_set:" + std::to_string(l2_set), ChaseKind::kL2, l2_set);
  // The sweep (L1-cacheable loads) lands in latency.hbm's detail: its steps are L1, the near and the
  // far L2 partition, then HBM. It stops at the latency.hbm set, which is already past the L2.
  const std::size_t sweep_last = std::min<std::size_t>(ctx.options.quick ? 256 * MiB : 512 * MiB, hbm_set);
  auto sweep = sweep_last >= 16 * KiB ? geometric_sizes(16 * KiB, sweep_last, ctx.options.quick ? 4 : 2)
                                      : std::vector<std::size_t>{};
  // The doubling steps go from half the L2 straight past it (32 MiB, a mix of the partitions, then 64 MiB, HBM, on
  // the H200's 60 MiB): three quarters and seven eighths of the L2 land in the far partition's plateau (GH200, the
  // same 60 MB L2: 520-537 cycles at 44-61 MiB, against 281 near). Full pass only.
  if (!ctx.options.quick) {
    for (const std::size_t ws : {l2 / 4 * 3, l2 / 8 * 7})
      if (const std::size_t set = ws / kStrideBytes * kStrideBytes; set >= 16 * KiB && set < sweep_last)
        sweep.push_back(set);
    std::sort(sweep.begin(), sweep.end());
    sweep.erase(std::unique(sweep.begin(), sweep.end()), sweep.end());
  }
  for (std::size_t ws : sweep) chase("latency/hbm/working_set:" + std::to_string(ws) + "/l1:1", ChaseKind::kSweep, ws);
  chase("latency/hbm/working_set:" + std::to_string(hbm_set), ChaseKind::kHbm, hbm_set);

  configure(benchmark::RegisterBenchmark("latency/launch", [](benchmark::State& st) { run_launch(st, false); }));
  configure(benchmark::RegisterBenchmark("latency/graph_launch", [](benchmark::State& st) { run_launch(st, true); }));

  const std::vector<std::size_t> small = ctx.options.quick ? std::vector<std::size_t>{8, 4096}
                                                           : std::vector<std::size_t>{8, 64, 512, 4096, 65536};
  for (bool h2d : {true, false})
    for (std::size_t b : small) {
      const std::string name = std::string(h2d ? "latency/h2d_small" : "latency/d2h_small") + "/size:" + std::to_string(b);
      const bool candidate = b == small.front();  // the smallest copy is the ceiling; the rest show the growth
      configure(benchmark::RegisterBenchmark(name.c_str(), [h2d, b, candidate](benchmark::State& st) {
        run_small_copy(st, h2d, b, candidate);
      }));
    }
}

}  // namespace
}  // namespace ceilings::bench

CEILINGS_BENCH_FAMILY(latency, 60, ceilings::bench::register_cases, ceilings::bench::add_options);
