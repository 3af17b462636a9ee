// Pure arithmetic behind the transfer, cache and latency families (pcie.*, nvlink.*, latency.*):
// size sweeps, plateau detection, GPU pair enumeration and the peer bandwidth matrix, link shares,
// and the pointer-chase chain. No CUDA here: all of it is unit-tested on machines without a GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "ceilings/json_fields.hpp"

namespace ceilings {

// Sizes from `first` to `last` (both included when reachable), each `factor` times the one before.
// Throws InputError for first = 0, factor < 2 or first > last.
std::vector<std::size_t> geometric_sizes(std::size_t first, std::size_t last, std::size_t factor);

// Sizes that are too large to fit in `budget` bytes (free memory, less a margin) are dropped;
// `reason` (optional) says which were dropped and why, for the output.
std::vector<std::size_t> fit_sizes(const std::vector<std::size_t>& sizes, std::size_t budget,
                                   std::string* reason = nullptr);

// One point of a size sweep: a transfer size and the rate it attained (B/s).
struct SweepPoint {
  std::size_t bytes = 0;
  double value = 0;
};

// The large-transfer plateau of a bandwidth-versus-size sweep: the longest run of the largest sizes
// whose values all lie within `tolerance` (relative) of the run's best. Where the largest size alone dips under every
// point of the run below it, by at most twice the tolerance, and that run is a plateau, the plateau is that run.
// `found` needs at least `min_points` points in it, its last not above all the others by more than half the
// tolerance (still climbing); otherwise the plateau is the largest size alone.
struct Plateau {
  bool found = false;
  std::size_t first = 0, last = 0;  // indices into the (size-sorted) points, inclusive
  std::size_t start_bytes = 0;      // the smallest size on the plateau
  std::size_t end_bytes = 0;        // the largest (below the sweep's largest where those read low)
  std::size_t best = 0;             // index of the best point on the plateau
  double best_value = 0, median_value = 0, min_value = 0;
  std::size_t points() const { return last - first + 1; }
};
// Points are sorted by size first; throws InputError for an empty sweep or a value that is not
// positive and finite.
Plateau detect_plateau(std::vector<SweepPoint> points, double tolerance = 0.05, std::size_t min_points = 2);

// Both directions at once (pcie.bidir, pcie.bidir_sm): per sample, each direction's rate is its own
// timed bytes over its own elapsed time (events on its own stream, both streams released together, and
// each direction kept loaded past its timed part so the other's window is contended to its end), and
// the bidirectional figure is their sum. nvbandwidth measures each direction under the other's load in
// two runs (host_to_device_bidirectional_memcpy_ce, device_to_host_...); the sum of those two compares
// with pcie.bidir. Bytes over the wall time of the whole region is recorded beside the sum.
struct DirectionSeconds {
  double up_s = 0, down_s = 0;  // host->device and device->host elapsed time of one sample
};
struct BidirRates {
  std::vector<double> up, down, sum;  // B/s per sample
};
// Throws InputError when bytes_per_direction or a time is not positive and finite.
BidirRates bidir_rates(const std::vector<DirectionSeconds>& samples, double bytes_per_direction);

// The same convention for N concurrent transfers (the peer bidirectional value; one-to-all and all-to-one
// record it beside their value, all bytes over the wall time, as nvbandwidth counts those): per sample,
// the sum over transfers of bytes_per_transfer / that transfer's own elapsed time. `samples[i]`
// holds one time per transfer. Throws InputError for a non-positive byte count or time, or a sample
// whose transfer count differs from the first one's.
std::vector<double> concurrent_rate_sums(const std::vector<std::vector<double>>& samples, double bytes_per_transfer);

// Ordered GPU pairs for the peer-to-peer family.
// How the peer family says that no pair of several GPUs could reach each other (the start of its skip
// reason); qualify reads it.
inline constexpr const char* kNoPeerAccessReason = "no GPU pair has peer access";
// ... and that NVML counts no pair as connected by NVLink (a fault where NVLinks are up: on an NVSwitch
// system, a fabric manager that is not running).
inline constexpr const char* kNoNvlinkPairReason = "no GPU pair is connected by NVLink";
// ... and that NVML could not say for any pair whether it is NVLink (no NVML, or it cannot find or answer for
// the GPUs): a GPU NVML has lost, where NVLinks are up.
inline constexpr const char* kUnclassifiedPairsReason = "NVML could not tell whether ";

struct GpuPair {
  int src = 0, dst = 0;
  bool peer_access = false;  // cudaDeviceCanAccessPeer(src -> dst) and (dst -> src) as the case needs
};
// Every ordered pair (src != dst) of `device_count` GPUs; with `only_device` >= 0 only the pairs
// that involve that device. `can_access(a, b)` answers whether a can access b's memory.
std::vector<GpuPair> ordered_pairs(int device_count, const std::function<bool(int, int)>& can_access,
                                   int only_device = -1);

// The pairs the NVLink ceilings measure: those NVML says are connected by NVLink (nvmlDeviceGetP2PStatus),
// so a PCIe peer pair (a bridged pair's unbridged neighbours, a PCIe-only node) is neither its slowest
// pair nor a pair "without peer access". `nvlink(a, b)` answers per pair, nullopt where NVML cannot say:
// such a pair is `unknown`, in neither list (it may be a PCIe pair); classified: every pair was answered.
struct NvlinkPairs {
  std::vector<GpuPair> nvlink, other, unknown;
  bool classified = false;
};
NvlinkPairs split_nvlink_pairs(const std::vector<GpuPair>& pairs,
                               const std::function<std::optional<bool>(int, int)>& nvlink);

// One NVLink of a GPU as NVML names its far end: another GPU (by PCI location), an NVSwitch, or anything
// else (an IBM NPU, an unknown device).
struct NvLinkEnd {
  enum class Kind { kGpu, kSwitch, kOther };
  Kind kind = Kind::kOther;
  unsigned domain = 0, bus = 0, device = 0;  // the far GPU's PCI location (kGpu)
};
// The NVLinks that join GPU a to GPU b (at PCI location b_domain:b_bus:b_device): a's links whose far end is
// b, plus, where both reach NVSwitches, the fewer of their switch links (traffic between two GPUs on a
// fabric can use all of them). A 4-way NVLink bridge of 18-link GPUs gives each pair 6, a 2-way bridge 18 (12
// on an H100 NVL), an NVSwitch board all 18.
// Whether any of a GPU's NVLinks goes to an NVSwitch (a switched baseboard, where every pair is owed the GPU's
// whole NVLink bandwidth).
bool reaches_nvswitch(const std::vector<NvLinkEnd>& links);
int nvlink_links_between(const std::vector<NvLinkEnd>& a, const std::vector<NvLinkEnd>& b, unsigned b_domain,
                         unsigned b_bus, unsigned b_device);

// One pair of a peer ceiling's matrix as a profile stores it: the detail counter p2p_<src>_<dst> that
// PeerMatrix::counters("p2p") writes.
struct PeerPairValue {
  std::string key;  // the detail key it was read from
  int src = 0, dst = 0;
  double value = 0;  // B/s
};
// The pair entries of a ceiling's detail, ordered by (src, dst); every other key is left alone, and so
// is a key whose GPU numbers are too long to be a device index.
std::vector<PeerPairValue> peer_pairs_in_detail(const json& detail);

// The peer bandwidth matrix: value[src][dst] in B/s; NaN where not measured (no peer access, src ==
// dst, or outside the scope).
class PeerMatrix {
 public:
  explicit PeerMatrix(int device_count);
  int size() const { return n_; }
  void set(int src, int dst, double value);  // throws InputError for bad indices or values
  double at(int src, int dst) const;
  bool has(int src, int dst) const;
  std::size_t measured() const;
  // Over the measured entries (0 when none).
  double min() const;
  double max() const;
  double median() const;
  // Sum over a row (what src attains to all peers) or a column (what dst receives), measured only.
  double row_sum(int src) const;
  double column_sum(int dst) const;
  // Counters for the benchmark detail: "p2p_<src>_<dst>" per measured entry, plus pairs, min, median
  // and max. Names carry only [a-z0-9_] so they survive every output format.
  std::map<std::string, double> counters(const std::string& prefix = "p2p") const;
  // Text form, one row per source: "0: - 396e9 ...", for labels and logs.
  std::string to_text() const;

 private:
  int n_;
  std::vector<double> v_;
};

// Measured bandwidth as a share of the link's theoretical rate per direction
// (pcie_link_bandwidth(gen, width) times `directions`); 0 when the link is unknown.
double link_share(double measured_bytes_per_second, int gen, int width, int directions = 1);

// A random single cycle over n slots (Sattolo's algorithm): next[i] is the slot visited after i, and
// following next from any slot visits every slot once before returning. Deterministic per seed.
std::vector<std::uint32_t> pointer_chase_cycle(std::size_t n, std::uint64_t seed);
// The slot reached after `steps` dependent loads from `start`.
std::uint32_t chase_position(const std::vector<std::uint32_t>& next, std::uint32_t start, std::uint64_t steps);

}  // namespace ceilings
