// GPU-to-GPU bandwidth over NVLink or PCIe peer access: nvlink.p2p_uni and nvlink.p2p_bidir for every
// ordered pair (copy engine and SM; read and write), nvlink.p2p_one_to_all and p2p_all_to_one per
// device. The ceiling is the slowest pair (what every pair attains); the matrix is in the detail.
// Bytes count once per direction; a bidirectional pair sums its two rates, a fan counts all its bytes over
// the wall time (as nvbandwidth does). Only the pairs NVML names as NVLink-connected (a pair it cannot
// answer for may be a PCIe pair). One GPU, no peer access or no pair known to be NVLink: skipped with the
// reason, never a zero. --ceilings_p2p_loopback (a self-check for one-GPU machines)
// pairs each GPU with itself so this code runs end to end; those cases are named nvlink_loopback/ and
// are never a ceiling (candidate = 0).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ceilings/cli_checks.hpp"
#include "ceilings/kernels/hbm.cuh"
#include "ceilings/kernels/transfer.cuh"
#include "ceilings/stats.hpp"
#include "ceilings/transfer.hpp"
#include "harness/host_memory.hpp"
#include "harness/measure.hpp"
#include "harness/nvml.hpp"

namespace ceilings::bench {
namespace {

namespace k = ceilings::kernels;
constexpr std::size_t MiB = 1024 * 1024;

std::size_t g_bytes = 0;       // --ceilings_p2p_bytes; 0 = 256 MiB (64 MiB quick)
std::string g_scope = "all";  // --ceilings_p2p_scope
bool g_loopback = false;       // --ceilings_p2p_loopback
double g_pair_seconds = 0.25;  // --ceilings_p2p_seconds

void add_options(CLI::App& app) {
  app.add_option("--ceilings_p2p_bytes", g_bytes, "Bytes per peer transfer (default 256 MiB, 64 MiB with --ceilings_quick)")
      ->check(ceilings::cli::number_in(1 << 20, 0x1p34));
  app.add_option("--ceilings_p2p_scope", g_scope,
                 "GPU pairs to measure: all (every ordered pair of the node; the default) or device (pairs with "
                 "--ceilings_device)")
      ->check(CLI::IsMember({"all", "device"}));
  app.add_option("--ceilings_p2p_seconds", g_pair_seconds,
                 "Sampling budget per pair (or per device for the aggregates), seconds (default 0.25): an 8-GPU node "
                 "has 56 ordered pairs per variant, and a 256 MiB copy lasts about a millisecond")
      ->check(ceilings::cli::number_in(0.01, 60.0));
  app.add_flag("--ceilings_p2p_loopback", g_loopback,
               "Self-check: pair each GPU with itself, so the peer code runs on a one-GPU machine (cases "
               "nvlink_loopback/..., device-local copies, never a ceiling)");
}

enum class Engine { kCopy, kSm };
enum class Op { kRead, kWrite };  // which side runs the transfer: the reader (destination) or the writer (source)
enum class Shape { kUni, kBidir, kOneToAll, kAllToOne };

class DeviceGuard {
 public:
  DeviceGuard() { CEILINGS_CUDA_CHECK(cudaGetDevice(&saved_)); }
  ~DeviceGuard() { cudaSetDevice(saved_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int saved_ = 0;
};

int device_count() {
  int n = 0;
  CEILINGS_CUDA_CHECK(cudaGetDeviceCount(&n));
  return n;
}

bool can_access(int a, int b) {
  int ok = 0;
  CEILINGS_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, a, b));
  return ok != 0;
}

// NVML's handle of CUDA device `dev` (found by PCI bus id: NVML's indices ignore CUDA_VISIBLE_DEVICES), for
// the telemetry of the GPU that runs a transfer and its NVLink questions; null where NVML cannot find it. Read
// once per device.
std::shared_ptr<nvml::Device> nvml_device(int dev) {
  static std::map<int, std::shared_ptr<nvml::Device>> known;
  if (auto it = known.find(dev); it != known.end()) return it->second;
  std::shared_ptr<nvml::Device> answer;
  char bus[32] = {};
  if (const auto& self = context().nvml; self && cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess)
    if (auto d = self->library().device_by_pci_bus_id(bus); d.ok()) answer = std::make_shared<nvml::Device>(d.value);
  cudaGetLastError();
  known[dev] = answer;
  return answer;
}

// Whether NVML says GPUs a and b (CUDA ordinals) are connected by NVLink; nullopt where it cannot say (no
// NVML, a GPU it cannot find by bus id, a driver without the call). Read once per pair and process.
std::optional<bool> nvlink_between(int a, int b) {
  static std::map<std::pair<int, int>, std::optional<bool>> known;
  const std::pair<int, int> key{std::min(a, b), std::max(a, b)};  // one answer per unordered pair
  if (auto it = known.find(key); it != known.end()) return it->second;
  std::optional<bool> answer;
  const auto da = nvml_device(a), db = nvml_device(b);
  if (da && db)
    if (const auto r = da->nvlink_peer(*db); r.ok()) answer = r.value;
  known[key] = answer;
  return answer;
}

// CUDA device `dev`'s active NVLinks as NVML names their far ends (another GPU or an NVSwitch), read once
// per process; nullopt where NVML cannot say (no NVML, a GPU it cannot find, a driver without the calls, no
// active link, or an active link whose far end it cannot name). NVML lists every link index of the chip,
// the ones no bridge or switch uses among them (down): only active links count, so a bridged PCIe card's
// unused indices do not dilute its pair's share.
constexpr unsigned kMaxNvLinks = 36;  // NVML_NVLINK_MAX_LINKS
std::optional<std::vector<NvLinkEnd>> nvlink_ends(int dev) {
  static std::map<int, std::optional<std::vector<NvLinkEnd>>> known;
  if (auto it = known.find(dev); it != known.end()) return it->second;
  std::optional<std::vector<NvLinkEnd>> answer;
  if (const std::shared_ptr<nvml::Device> d = nvml_device(dev)) {
    std::vector<NvLinkEnd> ends;
    bool unnamed = false;
    for (unsigned link = 0; link < kMaxNvLinks && !unnamed; ++link) {
      const auto up = d->nvlink_active(link);
      if (!up.ok() || !up.value) continue;  // past the chip's links, or not in use
      const auto type = d->nvlink_remote_type(link);
      NvLinkEnd e;
      if (type.ok() && type.value == nvml::NvLinkRemote::kSwitch) {
        e.kind = NvLinkEnd::Kind::kSwitch;
      } else if (type.ok() && type.value == nvml::NvLinkRemote::kGpu) {
        const auto pci = d->nvlink_remote_pci(link);
        unnamed = !pci.ok();
        e = {NvLinkEnd::Kind::kGpu, pci.value.domain, pci.value.bus, pci.value.device};
      } else {
        unnamed = true;  // an active link to something else, or NVML cannot say what
      }
      ends.push_back(e);
    }
    if (!unnamed && !ends.empty()) answer = std::move(ends);
  }
  known[dev] = answer;
  return answer;
}

// The links joining the slowest-linked of `pairs` and the most links any of their GPUs has, for the
// datasheet share of a pair ceiling (datasheet_value's nvlink_pair_links and nvlink_gpu_links); nothing
// where NVML cannot describe every GPU's links or a pair shows none.
std::map<std::string, double> nvlink_link_counters(const std::vector<GpuPair>& pairs) {
  int pair_links = -1, gpu_links = 0;
  bool switched = true;  // every GPU of the pairs reaches NVSwitches
  for (const GpuPair& p : pairs) {
    const auto a = nvlink_ends(p.src), b = nvlink_ends(p.dst);
    int domain = 0, bus = 0, device = 0;
    if (!a || !b || cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, p.dst) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, p.dst) != cudaSuccess ||
        cudaDeviceGetAttribute(&device, cudaDevAttrPciDeviceId, p.dst) != cudaSuccess) {
      cudaGetLastError();
      return {};
    }
    const int links = nvlink_links_between(*a, *b, static_cast<unsigned>(domain), static_cast<unsigned>(bus),
                                           static_cast<unsigned>(device));
    if (links <= 0) return {};
    pair_links = pair_links < 0 ? links : std::min(pair_links, links);
    gpu_links = std::max({gpu_links, static_cast<int>(a->size()), static_cast<int>(b->size())});
    switched = switched && reaches_nvswitch(*a) && reaches_nvswitch(*b);
  }
  if (pair_links <= 0) return {};
  return {{"nvlink_pair_links", pair_links}, {"nvlink_gpu_links", gpu_links}, {"nvlink_switched", switched ? 1 : 0}};
}

// Lets `from` reach `to`'s memory (kept for the process; peer access is a per-context setting). A GPU has
// room for a limited number of peers (cudaErrorTooManyPeers past it, eight on many systems): when it is
// full, the peers `from` reached for earlier jobs (not in `needed`, this job's pairs) are let go first;
// a job that itself needs more peers than there is room for is skipped with the reason.
void enable_peer(int from, int to, const std::set<std::pair<int, int>>& needed) {
  static std::set<std::pair<int, int>> enabled;
  if (from == to || enabled.count({from, to})) return;  // a GPU reaches its own memory without peer access
  DeviceGuard g;
  CEILINGS_CUDA_CHECK(cudaSetDevice(from));
  cudaError_t rc = cudaDeviceEnablePeerAccess(to, 0);
  if (rc == cudaErrorTooManyPeers) {
    cudaGetLastError();
    for (auto it = enabled.begin(); it != enabled.end();) {
      if (it->first != from || needed.count(*it)) {
        ++it;
        continue;
      }
      const cudaError_t off = cudaDeviceDisablePeerAccess(it->second);
      if (off == cudaErrorPeerAccessNotEnabled)
        cudaGetLastError();
      else
        CEILINGS_CUDA_CHECK(off);
      it = enabled.erase(it);
    }
    rc = cudaDeviceEnablePeerAccess(to, 0);
    if (rc == cudaErrorTooManyPeers) {
      cudaGetLastError();
      std::size_t held = 0;
      for (const auto& e : enabled) held += e.first == from ? 1 : 0;
      unsupported("GPU " + std::to_string(from) + " cannot reach more peers at once (cudaErrorTooManyPeers with " +
                  std::to_string(held) + " enabled, all needed by this case)");
    }
  }
  if (rc == cudaErrorPeerAccessAlreadyEnabled)
    cudaGetLastError();
  else
    CEILINGS_CUDA_CHECK(rc);
  enabled.insert({from, to});
}

// One copy of `bytes` from src_dev to dst_dev, run by `runner` (the source for writes, the
// destination for reads) on its own stream.
struct Transfer {
  int src_dev = 0, dst_dev = 0, runner = 0;
  int runner_sms = 0;  // sizes an SM copy's grid on the runner
  std::uint32_t seed = 0;
  DeviceBuffer<uint4> src, dst;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<Stream> dst_stream;    // on the destination's device: re-poisons dst between samples
  cudaEvent_t done = nullptr;            // joins the transfer back to the timed stream (after its tail)
  cudaEvent_t begin = nullptr, end = nullptr;  // this transfer's own time within a sample
  Transfer() = default;
  Transfer(const Transfer&) = delete;
  Transfer(Transfer&& o) noexcept
      : src_dev(o.src_dev), dst_dev(o.dst_dev), runner(o.runner), runner_sms(o.runner_sms), seed(o.seed), src(std::move(o.src)),
        dst(std::move(o.dst)), stream(std::move(o.stream)), dst_stream(std::move(o.dst_stream)), done(o.done),
        begin(o.begin), end(o.end) {
    o.done = o.begin = o.end = nullptr;  // the events now belong to this one
  }
  Transfer& operator=(Transfer&&) = delete;
  ~Transfer() {
    for (cudaEvent_t e : {done, begin, end})
      if (e) cudaEventDestroy(e);
  }
};

struct JobResult {
  Measurement m;
  double value = 0;         // B/s, all transfers of the job together
  double overlapped = 0;    // B/s, all bytes over the wall time of the whole concurrent region
  double sum_of_rates = 0;  // B/s, each transfer's bytes over its own time, summed (several transfers)
  int uncovered_samples = 0;  // samples whose value is all bytes over the wall time (a timed copy ran its end alone)
  std::string failure;
};

// Which figure of several concurrent transfers is the value. nvbandwidth sums each copy's own rate for
// its bidirectional tests (..._bidirectional_..._total) and takes all bytes over the wall time of the
// whole region for one-to-all and all-to-one (its TOTAL_BW): a sum of own rates overstates a shared link
// whenever the shares are unequal, and a fan shares the hub's links by construction.
enum class Aggregate { kSumOfRates, kOverWallTime };

// Runs the transfers concurrently (forked from the first runner's stream and joined back to it) and
// measures them as one unit; the value follows `aggregate`, and the other figure is kept beside it. Every
// destination is checked.
JobResult run_job(const std::vector<std::tuple<int, int>>& copies, Engine engine, Op op, std::size_t bytes,
                  const Context& ctx, Aggregate aggregate) {
  DeviceGuard guard;
  const std::size_t n = bytes / sizeof(uint4);
  std::vector<Transfer> ts;
  ts.reserve(copies.size());
  std::uint32_t seed = 0x7a3c0001u;
  // Summed own rates (both directions of a pair): each transfer runs one more copy, untimed, after its timed
  // one, so a direction that finishes first keeps loading the link while the other's timed copy ends; else
  // that copy's tail would run alone at the one-way rate and the sum would overstate the link (as pcie.bidir).
  const bool tail = copies.size() > 1 && aggregate == Aggregate::kSumOfRates;
  // (runner, peer) of every copy; for the copy engine the other way too, where it can (nvbandwidth enables
  // both: a peer copy that cannot map the far side's memory may be staged through the host).
  std::set<std::pair<int, int>> needed;
  for (const auto& [s, d] : copies) {
    const int runner = op == Op::kWrite ? s : d, peer = op == Op::kWrite ? d : s;
    needed.insert({runner, peer});
    if (engine == Engine::kCopy && can_access(peer, runner)) needed.insert({peer, runner});
  }
  for (const auto& [s, d] : copies) {
    Transfer t;
    t.src_dev = s;
    t.dst_dev = d;
    t.runner = op == Op::kWrite ? s : d;
    t.seed = seed++;
    const int peer = t.runner == s ? d : s;
    enable_peer(t.runner, peer, needed);
    if (needed.count({peer, t.runner})) enable_peer(peer, t.runner, needed);
    CEILINGS_CUDA_CHECK(cudaDeviceGetAttribute(&t.runner_sms, cudaDevAttrMultiProcessorCount, t.runner));
    CEILINGS_CUDA_CHECK(cudaSetDevice(s));
    t.src = DeviceBuffer<uint4>(n);
    k::fill_pattern(t.src.get(), n, t.seed, nullptr);
    CEILINGS_LAUNCH_CHECK();
    CEILINGS_CUDA_CHECK(cudaDeviceSynchronize());
    CEILINGS_CUDA_CHECK(cudaSetDevice(d));
    t.dst = DeviceBuffer<uint4>(n);
    CEILINGS_CUDA_CHECK(cudaMemset(t.dst.get(), 0xA5, bytes));
    // Done before any copy: the transfer streams are non-blocking, so the legacy stream's memset would
    // not order itself before them, and a poisoned destination is what makes the check mean something.
    CEILINGS_CUDA_CHECK(cudaDeviceSynchronize());
    t.dst_stream = std::make_unique<Stream>();
    CEILINGS_CUDA_CHECK(cudaSetDevice(t.runner));
    t.stream = std::make_unique<Stream>();
    // With a tail, timed: begin..done is the copy and its tail; else untimed, the fastest to wait on.
    CEILINGS_CUDA_CHECK(cudaEventCreateWithFlags(&t.done, tail ? cudaEventDefault : cudaEventDisableTiming));
    CEILINGS_CUDA_CHECK(cudaEventCreate(&t.begin));  // on the runner, like its stream
    CEILINGS_CUDA_CHECK(cudaEventCreate(&t.end));
    ts.push_back(std::move(t));
  }
  const int main_dev = ts.front().runner;
  CEILINGS_CUDA_CHECK(cudaSetDevice(main_dev));
  Stream main_stream;
  cudaEvent_t fork = nullptr;
  CEILINGS_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  struct EventGuard {
    cudaEvent_t e;
    ~EventGuard() { cudaEventDestroy(e); }
  } fork_guard{fork};

  auto enqueue = [&](Transfer& t, cudaStream_t st) {
    if (engine == Engine::kCopy) {
      CEILINGS_CUDA_CHECK(cudaMemcpyPeerAsync(t.dst.get(), t.dst_dev, t.src.get(), t.src_dev, bytes, st));
    } else {
      CEILINGS_CUDA_CHECK(cudaSetDevice(t.runner));  // a kernel goes to the current device's streams only
      k::copy_sm(t.dst.get(), t.src.get(), n, t.runner_sms * 2, 512, st);
    }
  };
  // Each transfer's time over a sample: `begin` at the sample's first unit, `end` after every unit (the
  // last record stands), read as each timed sample ends.
  const double amount = static_cast<double>(bytes) * static_cast<double>(ts.size());
  std::vector<double> own_rate_sums, wall_seconds;  // per timed sample (several transfers)
  int uncovered_samples = 0;  // samples where a timed copy outlasted another transfer's copy and tail
  bool sample_start = true;
  MeasureSpec spec;
  spec.max_seconds = g_pair_seconds;
  // Several transfers: one copy each per sample, so no transfer waits at a per-unit join for a slower one
  // and each one's events time it alone (a 256 MiB peer copy lasts about a millisecond).
  if (ts.size() > 1) {
    spec.units_per_sample = 1;
    // The value's own per-sample figure, so measure() stops on the spread of what is reported: the sum of
    // own rates, or the wall time.
    spec.sample_seconds = [&](double wall_s) {
      std::vector<double> times;
      double longest_timed = 0, shortest_loaded = INFINITY;
      for (Transfer& t : ts) {
        float ms = 0, loaded_ms = 0;
        CEILINGS_CUDA_CHECK(cudaEventElapsedTime(&ms, t.begin, t.end));
        if (tail) CEILINGS_CUDA_CHECK(cudaEventElapsedTime(&loaded_ms, t.begin, t.done));
        times.push_back(ms * 1e-3);
        longest_timed = std::max(longest_timed, ms * 1e-3);
        shortest_loaded = std::min(shortest_loaded, loaded_ms * 1e-3);
      }
      own_rate_sums.push_back(concurrent_rate_sums({times}, static_cast<double>(bytes)).front());
      wall_seconds.push_back(wall_s);
      if (aggregate != Aggregate::kSumOfRates) return wall_s;
      // The tail keeps the link loaded only while the rates differ by less than 2x: a timed copy that outlasts
      // another transfer's copy and tail ran its end alone, and the sum would overstate the link. Such a sample
      // counts every byte of the region (timed and tail) over its wall time instead, as overlapped does: a link
      // slow one way reads low, not unverified (review 82). The transfers start together at the fork; each one's
      // times are its own device's events, so copies are set against each other by their lengths (a microsecond's
      // slack for the events' resolution).
      if (tail && longest_timed > shortest_loaded + 1e-6) {
        ++uncovered_samples;
        return wall_s / 2;
      }
      return amount / own_rate_sums.back();
    };
  }
  spec.before_sample = [&](cudaStream_t) {
    sample_start = true;
    // Poison a vector in every kPoisonStride bytes of each destination (the previous sample's copies are done:
    // measure() synchronised the stream they join), so the check after the run shows the last sample's copies
    // reached across it. Finished here, outside the timed region, as the destination may be another GPU.
    for (Transfer& t : ts) {
      CEILINGS_CUDA_CHECK(cudaSetDevice(t.dst_dev));
      poison_stride_device(t.dst.get(), bytes, 0xA5, t.dst_stream->get());
      t.dst_stream->sync();
    }
    CEILINGS_CUDA_CHECK(cudaSetDevice(main_dev));
  };
  spec.work = [&](cudaStream_t st) {
    if (ts.size() == 1) {
      enqueue(ts.front(), st);
    } else {
      CEILINGS_CUDA_CHECK(cudaEventRecord(fork, st));
      for (Transfer& t : ts) {
        CEILINGS_CUDA_CHECK(cudaStreamWaitEvent(t.stream->get(), fork, 0));
        if (sample_start) CEILINGS_CUDA_CHECK(cudaEventRecord(t.begin, t.stream->get()));
        enqueue(t, t.stream->get());
        CEILINGS_CUDA_CHECK(cudaEventRecord(t.end, t.stream->get()));
        if (tail) enqueue(t, t.stream->get());
        CEILINGS_CUDA_CHECK(cudaEventRecord(t.done, t.stream->get()));
      }
      for (Transfer& t : ts) CEILINGS_CUDA_CHECK(cudaStreamWaitEvent(st, t.done, 0));
      sample_start = false;
    }
    CEILINGS_CUDA_CHECK(cudaSetDevice(main_dev));
  };
  JobResult r;
  // Telemetry (clocks, power, throttling) of the GPU that runs the first transfer, not of the process's own.
  const std::shared_ptr<nvml::Device> runner_nvml = nvml_device(main_dev);
  r.m = measure(main_stream.get(), spec, ctx.options, runner_nvml);
  CEILINGS_LAUNCH_CHECK();
  CEILINGS_CUDA_CHECK(cudaStreamSynchronize(main_stream.get()));
  if (ts.size() > 1) {
    // measure() kept every timed sample it was given (a fixed one unit per sample is never halved).
    if (own_rate_sums.size() != r.m.unit_seconds.size())
      throw CheckError("concurrent peer timing", std::to_string(own_rate_sums.size()) + " transfer timings for " +
                                                     std::to_string(r.m.unit_seconds.size()) + " samples",
                       __FILE__, __LINE__);
    std::vector<double> sum_seconds;
    for (double s : own_rate_sums) sum_seconds.push_back(amount / s);
    r.sum_of_rates = amount / median(sum_seconds);
    r.overlapped = amount * (tail ? 2 : 1) / median(wall_seconds);  // every copy of the sample over its wall time
    r.uncovered_samples = uncovered_samples;
    if (uncovered_samples > 0) {  // then every sample as all bytes over the wall time: one figure for the median
      for (std::size_t i = 0; i < wall_seconds.size(); ++i) r.m.unit_seconds[i] = wall_seconds[i] / 2;
      r.m.median_s = median(r.m.unit_seconds);
      r.m.cv = coefficient_of_variation(r.m.unit_seconds);
    }
  } else {
    r.overlapped = amount / r.m.median_s;
  }
  r.value = amount / r.m.median_s;
  for (Transfer& t : ts) {
    CEILINGS_CUDA_CHECK(cudaSetDevice(t.dst_dev));
    Stream check;
    const auto bad = count_device_mismatches(t.dst.get(), bytes, t.seed, check.get());
    if (bad)
      r.failure += "GPU " + std::to_string(t.src_dev) + " -> " + std::to_string(t.dst_dev) + ": " + std::to_string(bad) +
                   " of " + std::to_string(bytes / 4) + " words wrong. ";
  }
  return r;
}

const char* engine_name(Engine e) { return e == Engine::kCopy ? "ce" : "sm"; }
const char* op_name(Op o) { return o == Op::kRead ? "read" : "write"; }

void run_case(benchmark::State& state, Shape shape, Engine engine, Op op) {
  guarded(state, [&] {
    const Context& ctx = context();
    const int count = device_count();
    if (count < 2 && !g_loopback) unsupported("single GPU: no peer");
    const int only = g_scope == "device" ? ctx.device : -1;
    std::vector<GpuPair> pairs, usable;
    if (g_loopback) {
      for (int d = 0; d < count; ++d)
        if (only < 0 || d == only) pairs.push_back({d, d, true});
      usable = pairs;
    } else {
      // The pairs NVML names as NVLink-connected: a PCIe peer pair is not an NVLink ceiling's pair, and a pair
      // NVML cannot answer for may be one.
      const NvlinkPairs split = split_nvlink_pairs(ordered_pairs(count, can_access, only), nvlink_between);
      pairs = split.nvlink;
      state.counters["nvlink_classified"] = split.classified ? 1 : 0;
      state.counters["pairs_not_nvlink"] = static_cast<double>(split.other.size());
      state.counters["pairs_unclassified"] = static_cast<double>(split.unknown.size());
      if (pairs.empty() && !split.unknown.empty())
        unsupported(std::string(kUnclassifiedPairsReason) + std::to_string(split.unknown.size()) +
                    " GPU pair(s) are joined by NVLink (no NVML, or it cannot find the GPUs or answer "
                    "nvmlDeviceGetP2PStatus): a PCIe peer pair is not an NVLink ceiling's pair");
      if (pairs.empty())
        unsupported(std::string(kNoNvlinkPairReason) + " (NVML: " + std::to_string(split.other.size()) +
                    " pair(s) reach each other over PCIe or not at all)");
      // Reads and bidirectional copies need access both ways; a write needs the source to reach the
      // destination.
      for (const GpuPair& p : pairs) {
        const bool ok = (op == Op::kWrite ? can_access(p.src, p.dst) : can_access(p.dst, p.src)) &&
                        (shape != Shape::kBidir || (can_access(p.src, p.dst) && can_access(p.dst, p.src)));
        if (ok) usable.push_back(p);
      }
    }
    if (usable.empty())
      unsupported(std::string(kNoPeerAccessReason) + " (" + std::to_string(count) +
                  " GPUs, cudaDeviceCanAccessPeer = 0)");
    const std::size_t bytes = (g_bytes ? g_bytes : ctx.options.quick ? 64 * MiB : 256 * MiB) / 64 * 64;
    const std::size_t fan =
        shape == Shape::kOneToAll || shape == Shape::kAllToOne ? static_cast<std::size_t>(std::max(1, count - 1)) : 2;
    // Every copy has a source and a destination buffer, and in loopback (or at the hub of a fan) they
    // all land on one GPU: 2 * fan buffers bound what any one device holds. Every GPU of the case is asked.
    std::set<int> involved;
    for (const GpuPair& p : usable) involved.insert({p.src, p.dst});
    for (int dev : involved) require_memory(0, 2 * fan * bytes, dev);

    PeerMatrix matrix(count);
    std::map<std::string, double> per_device;  // aggregates: "dev_<i>" -> B/s
    JobResult worst;
    bool have = false;
    auto consider = [&](JobResult r) {
      if (!r.failure.empty()) throw CheckError("peer copy verification", r.failure, __FILE__, __LINE__);
      if (!have || r.value < worst.value) worst = std::move(r);
      have = true;
    };
    for (auto _ : state) {
      if (shape == Shape::kUni || shape == Shape::kBidir) {
        for (const GpuPair& p : usable) {
          if (shape == Shape::kBidir && p.src > p.dst) continue;  // one experiment per unordered pair
          std::vector<std::tuple<int, int>> copies{{p.src, p.dst}};
          if (shape == Shape::kBidir) copies.push_back({p.dst, p.src});
          JobResult r = run_job(copies, engine, op, bytes, ctx, Aggregate::kSumOfRates);
          if (p.src != p.dst) {
            matrix.set(p.src, p.dst, r.value);
            if (shape == Shape::kBidir) matrix.set(p.dst, p.src, r.value);  // one experiment for both orders
          }
          consider(std::move(r));
        }
      } else {
        for (int dev = 0; dev < count; ++dev) {
          if (only >= 0 && dev != only) continue;
          std::vector<std::tuple<int, int>> copies;
          for (const GpuPair& p : usable)
            if (shape == Shape::kOneToAll ? p.src == dev : p.dst == dev) copies.push_back({p.src, p.dst});
          if (copies.empty()) continue;
          JobResult r = run_job(copies, engine, op, bytes, ctx, Aggregate::kOverWallTime);
          per_device["dev_" + std::to_string(dev)] = r.value;
          per_device["peers_" + std::to_string(dev)] = static_cast<double>(copies.size());
          consider(std::move(r));
        }
      }
      if (!have) unsupported("no GPU has a peer it can reach for this case");
      state.SetIterationTime(worst.m.median_s);
    }
    for (const auto& [key, v] : matrix.counters("p2p"))
      if (matrix.measured() > 0) state.counters[key] = v;
    for (const auto& [key, v] : per_device) state.counters[key] = v;
    if (!g_loopback && (shape == Shape::kUni || shape == Shape::kBidir))
      for (const auto& [key, v] : nvlink_link_counters(usable)) state.counters[key] = v;
    state.counters["gpus"] = count;
    // --ceilings_p2p_scope: 1 where only this process's GPU's pairs ran (measure --all-gpus), so the slowest
    // pair is this GPU's, not the node's.
    state.counters["scope_device"] = only >= 0 ? 1 : 0;
    state.counters["pairs_without_access"] = static_cast<double>(pairs.size() - usable.size());
    state.counters["transfer_bytes"] = static_cast<double>(bytes);
    state.counters["sm_copy"] = engine == Engine::kSm ? 1 : 0;
    state.counters["write"] = op == Op::kWrite ? 1 : 0;
    state.counters["nvlink_encrypted"] = ctx.nvlink_encrypted ? 1 : 0;  // confidential computing's NVLink encryption
    if (g_loopback) state.counters["candidate"] = 0;  // device-local copies: a self-check, not a ceiling
    if (worst.overlapped > 0) state.counters["overlapped_bytes_per_second"] = worst.overlapped;
    if (worst.sum_of_rates > 0) state.counters["sum_of_rates_bytes_per_second"] = worst.sum_of_rates;
    if (shape == Shape::kBidir) state.counters["uncovered_samples"] = worst.uncovered_samples;
    if (matrix.measured() > 0) state.SetLabel(matrix.to_text());
    // The reported value is the slowest pair (or device): amount / its median time. Every job's copies were
    // checked (consider() throws on a failed one), so `worst` carries no failure; passed on, not assumed.
    report(state, worst.m, Amount::kBytes, worst.value * worst.m.median_s, worst.failure.empty(), worst.failure);
  });
}

void register_cases(const Context& ctx) {
  struct Case {
    Shape shape;
    const char* variant;
  };
  const Case cases[] = {{Shape::kUni, "p2p_uni"},
                        {Shape::kBidir, "p2p_bidir"},
                        {Shape::kOneToAll, "p2p_one_to_all"},
                        {Shape::kAllToOne, "p2p_all_to_one"}};
  // One GPU: every variant would skip for the same reason, so only the copy-engine write of each
  // shape is registered; the profile then says "single GPU: no peer" once per ceiling, and the whole
  // family costs four cudaGetDeviceCount calls. (run_case still checks: a count read here can err.)
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) {
    cudaGetLastError();
    gpus = 0;
  }
  for (const Case& c : cases)
    for (Engine e : {Engine::kCopy, Engine::kSm})
      for (Op o : {Op::kWrite, Op::kRead}) {
        const bool aggregate = c.shape == Shape::kOneToAll || c.shape == Shape::kAllToOne;
        const bool first_variant = e == Engine::kCopy && o == Op::kWrite;
        if (aggregate && !first_variant) continue;  // aggregates: copy-engine writes
        if ((ctx.options.quick || gpus < 2) && !first_variant && !g_loopback) continue;
        const std::string name =
            std::string(g_loopback ? "nvlink_loopback/" : "nvlink/") + c.variant + "/engine:" + engine_name(e) + "/op:" + op_name(o);
        const Shape shape = c.shape;
        configure(benchmark::RegisterBenchmark(name.c_str(), [shape, e, o](benchmark::State& st) { run_case(st, shape, e, o); }));
      }
}

}  // namespace
}  // namespace ceilings::bench

CEILINGS_BENCH_FAMILY(p2p, 40, ceilings::bench::register_cases, ceilings::bench::add_options);
