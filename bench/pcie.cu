// PCIe host<->device bandwidth: pcie.h2d, pcie.d2h, pcie.bidir (pinned memory, copy engine),
// pcie.h2d_pageable / d2h_pageable (malloc), pcie.h2d_sm / d2h_sm / bidir_sm (a kernel on mapped
// pinned memory). Each path sweeps the transfer size (4 KiB..1 GiB, points with candidate=0); the
// plateau of the large sizes is the ceiling. A further candidate for a ceiling (pcie.h2d_sm's prefetching
// loads and TMA copies) has no sweep: its ceiling case measures the large sizes itself. With
// --ceilings_pcie_write_combined, pcie.h2d_wc and pcie.h2d_sm_wc read write-combined pinned memory. Bytes count once per direction;
// bidir is the sum of the two directions' rates, each over its own time (as nvbandwidth sums its
// device-to-device bidirectional copies; its host<->device bidirectional tests print one direction under the
// other's load, which the h2d/d2h_bytes_per_second counters hold; see bidir_rates).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ceilings/cli_checks.hpp"
#include "ceilings/datasheet.hpp"
#include "ceilings/kernels/hbm.cuh"
#include "ceilings/kernels/transfer.cuh"
#include "ceilings/stats.hpp"
#include "ceilings/transfer.hpp"
#include "harness/host_memory.hpp"
#include "harness/measure.hpp"

namespace ceilings::bench {
namespace {

namespace k = ceilings::kernels;
constexpr std::size_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

enum class Dir { kH2D, kD2H, kBidir };
enum class Engine { kCopy, kSm };
using HostKind = HostBuffer::Kind;

struct Path {
  const char* variant;
  Dir dir;
  HostKind host;
  Engine engine;
  int sm_hint = 1;           // SM copies: kernels::copy_sm's cache hint
  const char* tag = nullptr;  // a further candidate for the same ceiling: its name's extra part, no sweep
  bool tma = false;           // SM copies by the TMA unit (kernels::hbm_copy_bulk), not loads and stores
  std::string key() const { return tag ? std::string(variant) + "/" + tag : std::string(variant); }
};
const Path kPaths[] = {
    {"h2d", Dir::kH2D, HostKind::kPinned, Engine::kCopy},
    {"d2h", Dir::kD2H, HostKind::kPinned, Engine::kCopy},
    {"bidir", Dir::kBidir, HostKind::kPinned, Engine::kCopy},
    {"h2d_pageable", Dir::kH2D, HostKind::kPageable, Engine::kCopy},
    {"d2h_pageable", Dir::kD2H, HostKind::kPageable, Engine::kCopy},
    {"h2d_sm", Dir::kH2D, HostKind::kPinned, Engine::kSm},
    {"d2h_sm", Dir::kD2H, HostKind::kPinned, Engine::kSm},
    {"bidir_sm", Dir::kBidir, HostKind::kPinned, Engine::kSm},
    // SM reads of host memory with the L2 asked for 256-byte blocks: if the L2 reads mapped host memory in
    // larger requests, fewer PCIe read completions carry the same bytes (nvbandwidth's SM copy, 51.3 GB/s on
    // the H200, and ours with streaming loads, 51.4, trail the copy engines' 55.3). On the H200 it read the
    // same as the streaming loads (51.3-51.4, 2026-11-30).
    {"h2d_sm", Dir::kH2D, HostKind::kPinned, Engine::kSm, 2, "load:l2_256b"},
    // Reads of write-combined pinned memory, by the copy engine and by the SMs (pcie.h2d_wc, pcie.h2d_sm_wc; with
    // --ceilings_pcie_write_combined): CUDA's programming guide says such pages are not snooped when the GPU reads
    // them over PCIe, which "can improve transfer performance by up to 40%" (cudaHostAllocWriteCombined; its API
    // reference: "on some system configurations"). Ceilings of their own, as pageable memory's are: another kind of
    // host memory than the cacheable pinned memory nvbandwidth and pcie.h2d read. Host-to-device only: the host
    // reads write-combined memory uncached, so the check of a device-to-host copy would crawl. In case snooping is
    // what holds the SMs' reads (51.3-51.4 GB/s on the H200, 2026-11-30) below the copy engines' 55.3. Not yet run
    // on a GPU.
    {"h2d_wc", Dir::kH2D, HostKind::kPinnedWriteCombined, Engine::kCopy},
    {"h2d_sm_wc", Dir::kH2D, HostKind::kPinnedWriteCombined, Engine::kSm},
    // SM reads of host memory by the TMA unit (bulk loads of 16 KiB chunks into shared memory, bulk stores
    // out; compute capability 9.0+, with --ceilings_tma; the last case of the family, so a fault in it costs
    // no other): in case its requests reach host memory larger than the L2's (the
    // streaming and the 256-byte-prefetch loads read the same 51.4 GB/s on the H200, 2026-11-30; published
    // H100/H200 SM copies read 51-52). Not yet run on a GPU.
    {"h2d_sm", Dir::kH2D, HostKind::kPinned, Engine::kSm, 0, "engine:bulk", true},
};
// The TMA copy's shape on PCIe: one block a SM, 16 KiB chunks in 4 stages: 48 KiB of loads in flight per SM,
// 6 MiB on 132 SMs, far beyond what the link's round trip needs.
constexpr int kBulkChunkBytes = 16384, kBulkStages = 4;

std::size_t g_max_bytes = 0;       // --ceilings_pcie_max_bytes; 0 = 1 GiB (256 MiB quick)
double g_plateau_tolerance = 0.05;  // --ceilings_pcie_plateau_tolerance
bool g_write_combined = false;      // --ceilings_pcie_write_combined
// SM copies: 512 threads x 4 loads of 16 bytes in flight each; 2 blocks per SM for one direction
// (8.6 MB in flight on 132 SMs, far beyond the ~100 KB PCIe's round trip needs at 55 GB/s). Both
// directions at once take 1 block per SM each, so the two kernels fit side by side on every SM
// (the copy kernel needs 32 registers: 2 x 2 x 512 threads would need all 65536 of an SM's
// registers, and a kernel that cannot co-reside runs after the other instead of beside it).
constexpr int kSmThreads = 512, kSmBlocksPerSmOneWay = 2, kSmBlocksPerSmEachWay = 1;

void add_options(CLI::App& app) {
  app.add_option("--ceilings_pcie_max_bytes", g_max_bytes,
                 "Largest transfer of the PCIe size sweep (default 1 GiB, 256 MiB with --ceilings_quick)")
      ->check(ceilings::cli::number_in(64.0 * KiB, 64.0 * GiB));
  app.add_option("--ceilings_pcie_plateau_tolerance", g_plateau_tolerance,
                 "Relative spread of the large-transfer plateau that is the PCIe ceiling (default 0.05)")
      ->check(ceilings::cli::number_in(0.001, 0.5));
  app.add_flag("--ceilings_pcie_write_combined", g_write_combined,
               "Also measure host-to-device reads of write-combined pinned memory (pcie.h2d_wc, pcie.h2d_sm_wc; not "
               "on a Grace superchip, whose coherent host link reads it slower)");
}

constexpr std::uint32_t kSeedH2D = 0x2468ace1u, kSeedD2H = 0x13579bdfu;

// With confidential computing on, the GPU reaches no host memory itself: the driver encrypts every host<->device
// copy through bounce buffers (the copy-engine paths measure that), and pinned host memory is the driver's unified
// memory, which a kernel's accesses would migrate page by page, not read over the link (NVIDIA's confidential
// computing notes and forum answers; not run here).
constexpr const char* kNoSmCopiesUnderConfidentialComputing =
    "confidential computing is on: the GPU reads and writes no host memory directly (the driver moves host<->device "
    "copies through encrypted bounce buffers), so there are no SM copies over the link to measure";

struct Point {
  Measurement m;
  double amount = 0;  // bytes per unit of the measurement (both directions for bidir)
  double value = 0;   // B/s
  bool verified = false;
  std::string verify_detail;
  std::map<std::string, double> counters;
};

// Sweep results of this process, per path: the ceiling case picks its plateau from them.
std::map<std::string, std::map<std::size_t, Point>>& sweep_table() {
  static std::map<std::string, std::map<std::size_t, Point>> t;
  return t;
}
std::map<std::string, std::set<std::size_t>>& failed_sizes() {
  static std::map<std::string, std::set<std::size_t>> f;
  return f;
}

double elapsed_s(const Event& a, const Event& b) { return elapsed_seconds(a, b); }

Point measure_point(const Context& ctx, const Path& path, std::size_t bytes) {
  const bool bidir = path.dir == Dir::kBidir;
  const bool h2d = path.dir != Dir::kD2H, d2h = path.dir != Dir::kH2D;
  const std::size_t legs = bidir ? 2 : 1;
  require_memory(legs * bytes, legs * bytes);
  // Pin first: the host buffers below are allocated and first touched on the GPU's NUMA node.
  NumaPlacement numa(ctx.device);
  Stream s_main, s_other;
  const std::size_t n = bytes / sizeof(uint4);
  HostBuffer h2d_src, d2h_dst;
  DeviceBuffer<uint4> h2d_dst, d2h_src;
  if (h2d) {
    h2d_src = HostBuffer(bytes, path.host);
    fill_host_pattern(h2d_src.get(), bytes, kSeedH2D);
    h2d_dst = DeviceBuffer<uint4>(n);
    CEILINGS_CUDA_CHECK(cudaMemsetAsync(h2d_dst.get(), 0xA5, bytes, s_main.get()));
  }
  if (d2h) {
    d2h_dst = HostBuffer(bytes, path.host);
    std::memset(d2h_dst.get(), 0x5A, bytes);
    d2h_src = DeviceBuffer<uint4>(n);
    k::fill_pattern(d2h_src.get(), n, kSeedD2H, s_main.get());
    CEILINGS_LAUNCH_CHECK();
  }
  s_main.sync();
  const uint4* h2d_src_dev = nullptr;
  uint4* d2h_dst_dev = nullptr;
  if (path.engine == Engine::kSm) {
    if (h2d) h2d_src_dev = static_cast<const uint4*>(h2d_src.device_pointer());
    if (d2h) d2h_dst_dev = static_cast<uint4*>(d2h_dst.device_pointer());
  }
  const int sm_blocks = path.tma ? ctx.prop.multiProcessorCount
                                 : ctx.prop.multiProcessorCount * (bidir ? kSmBlocksPerSmEachWay : kSmBlocksPerSmOneWay);
  const k::BulkCopyShape bulk{sm_blocks, kBulkChunkBytes, kBulkStages};
  DeviceBuffer<unsigned int> stalls(path.tma ? 1 : 0);
  if (path.tma) CEILINGS_CUDA_CHECK(cudaMemsetAsync(stalls.get(), 0, sizeof(unsigned int), s_main.get()));

  auto leg = [&](bool to_device, cudaStream_t st) {
    if (path.engine == Engine::kCopy) {
      if (to_device)
        CEILINGS_CUDA_CHECK(cudaMemcpyAsync(h2d_dst.get(), h2d_src.get(), bytes, cudaMemcpyHostToDevice, st));
      else
        CEILINGS_CUDA_CHECK(cudaMemcpyAsync(d2h_dst.get(), d2h_src.get(), bytes, cudaMemcpyDeviceToHost, st));
    } else {
      if (to_device && path.tma)
        k::hbm_copy_bulk(h2d_dst.get(), h2d_src_dev, n, bulk, stalls.get(), st);
      else if (to_device)
        k::copy_sm(h2d_dst.get(), h2d_src_dev, n, sm_blocks, kSmThreads, st, path.sm_hint);
      else
        k::copy_sm(d2h_dst_dev, d2h_src.get(), n, sm_blocks, kSmThreads, st, path.sm_hint);
    }
  };

  // Both directions at once: each on its own stream, forked from and joined back to the timed stream
  // (both released together by the blocking kernel). Each direction times `reps` transfers with events
  // of its own, then runs `reps` more untimed: whichever direction is faster keeps loading the link
  // until the slower one's timed transfers are done (when their rates differ by less than 2x), so
  // neither timed window ends with a tail that ran alone at the one-way rate. Where they differ by more (each
  // direction's untimed load must outlast the other's timed window: a2 and b2 against b1 and a1), the sum of their
  // rates would overstate what both ways at once move: such a sample counts every byte of the region over its wall
  // time instead (as overlapped_bytes_per_second; uncovered_samples says how many did, review 82), and then so does
  // every sample of the point, so that its median is of one figure (review 86). A link slow one way reads low, not
  // unverified.
  // About 256 MiB timed each way per sample; at most 2 x 50 transfers per stream behind the blocker (the launch
  // queue is finite).
  const int reps = bidir ? static_cast<int>(std::clamp<std::size_t>((256 * MiB) / bytes, 1, 50)) : 1;
  Event fork, join, a0, a1, a2, b0, b1, b2;
  int uncovered_samples = 0;
  // Per timed sample (bidir): the two directions' rates and the wall time of the whole overlapped region.
  std::vector<double> up_rates, down_rates, sum_rates, wall_seconds;

  MeasureSpec spec;
  // A copy under confidential computing is staged on the host too (the driver encrypts it through bounce buffers).
  spec.blocking_kernel = path.host != HostKind::kPageable && !ctx.confidential_computing;  // a pageable copy stages on the host: it would wait on the blocker
  spec.before_sample = [&](cudaStream_t st) {
    // Poison a vector in every kPoisonStride bytes of each destination, so the check after the run shows the
    // last sample's transfers reached across it to its end (the rest was written by earlier samples too; the
    // previous sample's copies are done: measure() synchronised).
    if (h2d) poison_stride_device(h2d_dst.get(), bytes, 0xA5, st);
    if (d2h) poison_stride_host(d2h_dst.get(), bytes, 0x5A);
  };
  if (bidir) {
    spec.units_per_sample = 1;
    spec.work = [&](cudaStream_t st) {
      CEILINGS_CUDA_CHECK(cudaEventRecord(fork.get(), st));
      CEILINGS_CUDA_CHECK(cudaStreamWaitEvent(s_other.get(), fork.get(), 0));
      CEILINGS_CUDA_CHECK(cudaEventRecord(a0.get(), st));
      CEILINGS_CUDA_CHECK(cudaEventRecord(b0.get(), s_other.get()));
      for (int r = 0; r < reps; ++r) {
        leg(true, st);
        leg(false, s_other.get());
      }
      CEILINGS_CUDA_CHECK(cudaEventRecord(a1.get(), st));
      CEILINGS_CUDA_CHECK(cudaEventRecord(b1.get(), s_other.get()));
      for (int r = 0; r < reps; ++r) {  // the untimed load that keeps the other direction's window contended
        leg(true, st);
        leg(false, s_other.get());
      }
      CEILINGS_CUDA_CHECK(cudaEventRecord(a2.get(), st));
      CEILINGS_CUDA_CHECK(cudaEventRecord(b2.get(), s_other.get()));
      CEILINGS_CUDA_CHECK(cudaEventRecord(join.get(), s_other.get()));
      CEILINGS_CUDA_CHECK(cudaStreamWaitEvent(st, join.get(), 0));
    };
    // The value is the sum of the two directions' own rates, per sample; measure() stops on its cv (not on
    // the wall time's, longer when one direction ends first). The wall time stays in the detail.
    spec.sample_seconds = [&](double wall_s) {
      const BidirRates r =
          bidir_rates({{elapsed_s(a0, a1), elapsed_s(b0, b1)}}, static_cast<double>(bytes) * reps);
      up_rates.push_back(r.up[0]);
      down_rates.push_back(r.down[0]);
      sum_rates.push_back(r.sum[0]);
      wall_seconds.push_back(wall_s);
      // Events of one device, on two streams: each timed window must end before the other direction's load
      // does (a microsecond's slack for the events' resolution).
      constexpr double kSlack = 1e-6;
      if (elapsed_s(a0, a1) > elapsed_s(a0, b2) + kSlack || elapsed_s(b0, b1) > elapsed_s(b0, a2) + kSlack) {
        ++uncovered_samples;
        return wall_s / 2;  // the region moved twice the timed bytes (the untimed load included)
      }
      return static_cast<double>(bytes) * static_cast<double>(legs * reps) / r.sum[0];
    };
  } else {
    spec.work = [&](cudaStream_t st) { leg(h2d, st); };
  }

  Point p;
  {
    LinkProbe link(ctx.nvml);
    p.m = measure(s_main.get(), spec, ctx.options, ctx.nvml);
    link.stop();
    CEILINGS_LAUNCH_CHECK();
    if (path.tma) check_bulk_copy_stalls(stalls.get(), s_main.get(), "TMA bulk copy from host memory");
    p.amount = static_cast<double>(bytes) * static_cast<double>(legs * reps);
    if (bidir) {
      // measure() kept every timed sample it was given (bidir samples are never halved and started over).
      if (wall_seconds.size() != p.m.unit_seconds.size())
        throw CheckError("bidirectional timing", std::to_string(wall_seconds.size()) + " direction timings for " +
                                                     std::to_string(p.m.unit_seconds.size()) + " samples",
                         __FILE__, __LINE__);
      if (uncovered_samples > 0) {  // every sample as all bytes over the wall time: one figure for the median
        for (std::size_t i = 0; i < wall_seconds.size(); ++i) p.m.unit_seconds[i] = wall_seconds[i] / 2;
        p.m.median_s = median(p.m.unit_seconds);
        p.m.cv = coefficient_of_variation(p.m.unit_seconds);
      }
      p.counters["transfers_per_direction"] = reps;
      p.counters["uncovered_samples"] = uncovered_samples;
      p.counters["h2d_bytes_per_second"] = median(up_rates);
      p.counters["d2h_bytes_per_second"] = median(down_rates);
      p.counters["direction_sum_bytes_per_second"] = median(sum_rates);  // the value where no sample was uncovered
      // The whole region moved twice the timed bytes (the untimed load included).
      p.counters["overlapped_bytes_per_second"] = 2 * p.amount / median(wall_seconds);
    }
    p.value = p.amount / p.m.median_s;
    const int gen = static_cast<int>(link.gen()), width = static_cast<int>(link.width());
    auto& c = p.counters;
    c["pcie_gen"] = gen;
    c["pcie_width"] = width;
    c["pcie_max_gen"] = link.max_gen().value_or(0);
    c["pcie_max_width"] = link.max_width().value_or(0);
    c["link_bytes_per_second"] = pcie_link_bandwidth(gen, width) * static_cast<double>(legs);
    c["link_share"] = link_share(p.value, gen, width, static_cast<int>(legs));
    c["link_share_of_max"] = link_share(p.value, static_cast<int>(c["pcie_max_gen"]),
                                        static_cast<int>(c["pcie_max_width"]), static_cast<int>(legs));
  }
  auto& c = p.counters;
  c["transfer_bytes"] = static_cast<double>(bytes);
  c["pageable"] = path.host == HostKind::kPageable ? 1 : 0;
  c["write_combined"] = path.host == HostKind::kPinnedWriteCombined ? 1 : 0;
  c["confidential_computing"] = ctx.confidential_computing ? 1 : 0;  // copies encrypted through bounce buffers
  c["sm_copy"] = path.engine == Engine::kSm ? 1 : 0;
  if (path.engine == Engine::kSm) {
    c["sm_blocks"] = sm_blocks;
    if (path.tma) {  // one issuing thread a block: the threads of a load/store kernel do not apply
      c["sm_tma"] = 1;
      c["chunk_bytes"] = kBulkChunkBytes;
      c["stages"] = kBulkStages;
    } else {
      c["sm_threads"] = kSmThreads;
      c["sm_load_hint"] = path.sm_hint;
    }
  }
  for (const auto& [key, v] : numa.counters(h2d ? h2d_src.get() : d2h_dst.get(), bytes)) c[key] = v;

  // Verify: every word each destination holds must be the pattern its source held.
  p.verified = true;
  if (h2d) {
    const auto bad = count_device_mismatches(h2d_dst.get(), bytes, kSeedH2D, s_main.get());
    if (bad) {
      p.verified = false;
      p.verify_detail += "host->device: " + std::to_string(bad) + " of " + std::to_string(bytes / 4) + " words wrong. ";
    }
  }
  if (d2h) {
    const auto bad = count_host_mismatches(d2h_dst.get(), bytes, kSeedD2H);
    if (bad) {
      p.verified = false;
      p.verify_detail += "device->host: " + std::to_string(bad) + " of " + std::to_string(bytes / 4) + " words wrong.";
    }
  }
  return p;
}

void publish(benchmark::State& state, const Point& p, bool candidate) {
  for (const auto& [key, v] : p.counters) state.counters[key] = v;
  if (!candidate) state.counters["candidate"] = 0;
  report(state, p.m, Amount::kBytes, p.amount, p.verified, p.verify_detail);
}

void run_sweep_point(benchmark::State& state, const Path& path, std::size_t bytes) {
  bool done = false;
  guarded(state, [&] {
    Point p;
    for (auto _ : state) {
      p = measure_point(context(), path, bytes);
      state.SetIterationTime(p.m.median_s);
    }
    publish(state, p, false);
    sweep_table()[path.key()][bytes] = p;
    done = true;
  });
  if (!done) failed_sizes()[path.key()].insert(bytes);
}

void run_ceiling(benchmark::State& state, const Path& path, std::vector<std::size_t> sizes, std::size_t dropped,
                 std::string dropped_reason) {
  guarded(state, [&] {
    if (path.engine == Engine::kSm && context().confidential_computing)
      unsupported(kNoSmCopiesUnderConfidentialComputing);
    auto& table = sweep_table()[path.key()];
    auto& failed = failed_sizes()[path.key()];
    Point chosen;
    Plateau plateau;
    int measured_here = 0;
    for (auto _ : state) {
      // Run alone (a filter left the sweep out), the case measures the large sizes itself.
      for (std::size_t b : sizes) {
        if (table.count(b) || failed.count(b) || (b < MiB && sizes.back() >= 4 * MiB)) continue;
        Point p;
        try {
          p = measure_point(context(), path, b);
        } catch (const std::exception& e) {
          // A size that no longer fits (memory taken since registration) costs that size, as a sweep
          // point's would; any other failure is the case's.
          if (std::string(e.what()).rfind("unsupported:", 0) != 0) throw;
          failed.insert(b);
          continue;
        }
        if (!p.verified) throw CheckError("verification at " + std::to_string(b) + " bytes", p.verify_detail, __FILE__, __LINE__);
        table[b] = std::move(p);
        ++measured_here;
      }
      if (table.empty())
        unsupported("no transfer size of the sweep could be measured" +
                    (dropped_reason.empty() ? std::string() : " (" + dropped_reason + ")"));
      std::vector<SweepPoint> points;
      for (const auto& [b, p] : table) points.push_back({b, p.value});  // the map is ordered by size
      plateau = detect_plateau(points, g_plateau_tolerance);
      chosen = table.at(points[plateau.best].bytes);
      state.SetIterationTime(chosen.m.median_s);
    }
    state.counters["plateau_found"] = plateau.found ? 1 : 0;
    state.counters["plateau_start_bytes"] = static_cast<double>(plateau.start_bytes);
    state.counters["plateau_end_bytes"] = static_cast<double>(plateau.end_bytes);
    state.counters["plateau_points"] = static_cast<double>(plateau.points());
    state.counters["plateau_median_bytes_per_second"] = plateau.median_value;
    state.counters["plateau_min_bytes_per_second"] = plateau.min_value;
    state.counters["sweep_points"] = static_cast<double>(table.size());
    state.counters["sweep_points_measured_here"] = measured_here;
    state.counters["sizes_dropped"] = static_cast<double>(dropped + failed.size());
    publish(state, chosen, true);
  });
}

// Time: a point is its 50 ms warm-up plus at most max_samples (100) samples of about min_sample_seconds
// (2 ms) -- or max_seconds (1 s) where one transfer is longer (1 GiB: 20 ms) -- plus allocating, filling and
// checking its host buffers (2 GiB pinned for bidir at 1 GiB). 8 paths x 10 sizes and the second h2d_sm
// candidate's 6 took 33-39 s on the H200 (2026-11-30; the write-combined and TMA candidates' 6 sizes add a few
// seconds each, by estimate); --ceilings_quick (4 sizes, 0.25 s, no further candidates): 5-10 s.
void register_cases(const Context& ctx) {
  const std::size_t last = g_max_bytes ? g_max_bytes : ctx.options.quick ? 256 * MiB : GiB;
  const std::size_t first = std::min<std::size_t>(ctx.options.quick ? 64 * KiB : 4 * KiB, last);
  std::vector<std::size_t> all = geometric_sizes(first, last, ctx.options.quick ? 16 : 4);
  // The largest asked for, where it is off the ladder (review 98: 2 GiB stopped at 1 GiB), in whole 64 KiB (the SM
  // copies move 16-byte words, the bulk copies 16 KiB chunks).
  if (const std::size_t top = last / (64 * KiB) * (64 * KiB); top > all.back()) all.push_back(top);
  for (const Path& path : kPaths) {
    if (path.tag && ctx.options.quick) continue;  // a further candidate: the full pass only
    // SM copies under confidential computing: the untagged case alone says why the ceiling has no number (each
    // further candidate had said it again, one skipped row a case).
    if (path.tag && path.engine == Engine::kSm && ctx.confidential_computing) continue;
    // Opt-in. A Grace superchip's host link is coherent NVLink-C2C: there write-combined memory is read slower
    // (about half, in a public vortex report), nothing a ceiling would be made of.
    if (path.host == HostKind::kPinnedWriteCombined) {
      const GpuSpec* spec = find_gpu_board(ctx.prop.name);
      if (!g_write_combined || (spec && spec->nvlink_c2c_bandwidth) || ctx.confidential_computing) continue;
    }
    // Opt-in; no TMA unit before Hopper (or in a binary without sm_90 code).
    if (path.tma && (!ctx.options.tma || ctx.prop.major < 9 ||
                     k::bulk_copy_resident_blocks_per_sm({1, kBulkChunkBytes, kBulkStages}) == 0))
      continue;
    const std::size_t legs = path.dir == Dir::kBidir ? 2 : 1;
    // Sizes that cannot fit the host (host_memory_budget: half its available memory, at least 4 GiB)
    // or the device are left out here, with the reason in the ceiling's detail; the cases re-check
    // at run time.
    const std::size_t host_budget = host_memory_budget() / legs;
    const std::size_t dev_budget = static_cast<std::size_t>(0.9 * static_cast<double>(ctx.free_bytes)) / legs;
    std::string why;
    const auto sizes = fit_sizes(all, std::min(host_budget, dev_budget), &why);
    // A further candidate has no sweep of its own (its ceiling case measures the large sizes itself), so the
    // ceiling's sweep detail stays one path's. SM copies under confidential computing: the ceiling case alone, which
    // says why there is nothing to measure.
    if (!path.tag && !(path.engine == Engine::kSm && ctx.confidential_computing))
      for (std::size_t b : sizes) {
        const std::string name = std::string("pcie/") + path.variant + "/size:" + std::to_string(b);
        configure(
            benchmark::RegisterBenchmark(name.c_str(), [path, b](benchmark::State& st) { run_sweep_point(st, path, b); }));
      }
    const std::string name = "pcie/" + path.key();
    const std::size_t dropped = all.size() - sizes.size();
    configure(benchmark::RegisterBenchmark(name.c_str(), [path, sizes, dropped, why](benchmark::State& st) {
      run_ceiling(st, path, sizes, dropped, why);
    }));
  }
}

}  // namespace
}  // namespace ceilings::bench

CEILINGS_BENCH_FAMILY(pcie, 30, ceilings::bench::register_cases, ceilings::bench::add_options);
