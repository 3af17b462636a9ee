// Size sweeps, plateau detection, GPU pairs, the peer matrix, link shares and the pointer-chase
// chain used by the pcie, p2p, cache and latency families (see transfer.hpp).
#include "ceilings/transfer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <regex>
#include <sstream>

#include "ceilings/datasheet.hpp"
#include "ceilings/error.hpp"
#include "ceilings/stats.hpp"

namespace ceilings {

std::vector<std::size_t> geometric_sizes(std::size_t first, std::size_t last, std::size_t factor) {
  if (first == 0) throw InputError("a size sweep cannot start at 0 bytes");
  if (factor < 2) throw InputError("a size sweep needs a growth factor of at least 2, got " + std::to_string(factor));
  if (first > last)
    throw InputError("a size sweep from " + std::to_string(first) + " to " + std::to_string(last) + " bytes is empty");
  std::vector<std::size_t> sizes;
  for (std::size_t s = first; s <= last; s *= factor) {
    sizes.push_back(s);
    if (s > std::numeric_limits<std::size_t>::max() / factor) break;
  }
  return sizes;
}

std::vector<std::size_t> fit_sizes(const std::vector<std::size_t>& sizes, std::size_t budget, std::string* reason) {
  std::vector<std::size_t> kept;
  std::vector<std::size_t> dropped;
  for (std::size_t s : sizes) (s <= budget ? kept : dropped).push_back(s);
  if (reason) {
    reason->clear();
    if (!dropped.empty()) {
      std::ostringstream os;
      os << dropped.size() << " size(s) from " << dropped.front() << " bytes exceed the " << budget
         << " bytes of free memory available to the case";
      *reason = os.str();
    }
  }
  return kept;
}

Plateau detect_plateau(std::vector<SweepPoint> points, double tolerance, std::size_t min_points) {
  if (points.empty()) throw InputError("plateau detection needs at least one sweep point");
  if (!(tolerance >= 0 && tolerance < 1)) throw InputError("plateau tolerance must lie in [0, 1)");
  for (const SweepPoint& p : points)
    if (!(std::isfinite(p.value) && p.value > 0))
      throw InputError("sweep point at " + std::to_string(p.bytes) + " bytes has no positive finite value");
  std::stable_sort(points.begin(), points.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.bytes < b.bytes; });

  // The run that ends at `last`, grown downward while every value in it stays within tolerance of the run's best:
  // a small-size spike (a cache, a fast path) cannot join the large-size plateau. Returns its first index and
  // its lowest value.
  const std::size_t n = points.size();
  const std::size_t wanted = std::max<std::size_t>(min_points, 1);
  auto run_to = [&](std::size_t last) {
    std::size_t first = last;
    double best = points[last].value, worst = best;
    while (first > 0) {
      const double v = points[first - 1].value;
      const double nb = std::max(best, v), nw = std::min(worst, v);
      if (nw < (1.0 - tolerance) * nb) break;
      best = nb;
      worst = nw;
      --first;
    }
    return std::make_pair(first, worst);
  };
  // A run whose last point reads more than half the tolerance above every earlier one is a curve still climbing
  // (review 98: 4% a step met a 5% tolerance), not a plateau. A saturating one rises at every step too, by ever less
  // (the H200's pcie.h2d: 53.3, 54.8, 55.1, 55.4, 55.4 GB/s from 4 MiB to 1 GiB), and a flat one wobbles: neither
  // tops all the rest by that much (review 102: one step alone called a noisy flat curve climbing).
  auto climbing = [&](std::size_t first, std::size_t last) {
    if (last == first) return false;
    double before = 0;
    for (std::size_t i = first; i < last; ++i) before = std::max(before, points[i].value);
    return points[last].value > (1.0 + tolerance / 2) * before;
  };
  // The run from the largest size. Where that one size is a plateau alone because it dips (review 98: 1 GiB read 6%
  // under the three sizes below it, and was the ceiling), the run below it is the plateau: but only for one size
  // that dips shallowly, within twice the tolerance of all of that run, and a run that is a plateau itself. A curve
  // that falls with size (pageable copies, faster while the CPU's caches hold them) drops further than that, and
  // its cached small sizes are no ceiling (review 100, review 102: the quick pass's x16 steps took them).
  std::size_t last = n - 1;
  std::size_t first = run_to(last).first;
  if (first == last && wanted > 1 && n > wanted) {
    const auto [below_first, below_worst] = run_to(n - 2);
    const bool shallow = points[n - 1].value < below_worst && points[n - 1].value >= (1.0 - 2 * tolerance) * below_worst;
    if (shallow && n - 1 - below_first >= wanted && !climbing(below_first, n - 2)) {
      first = below_first;
      last = n - 2;
    }
  }
  Plateau p;
  p.first = first;
  p.last = last;
  p.found = p.points() >= wanted && !climbing(first, last);
  p.start_bytes = points[first].bytes;
  p.end_bytes = points[last].bytes;
  std::vector<double> values;
  p.best = first;
  for (std::size_t i = first; i <= last; ++i) {
    values.push_back(points[i].value);
    if (points[i].value > points[p.best].value) p.best = i;
  }
  p.best_value = points[p.best].value;
  p.min_value = *std::min_element(values.begin(), values.end());
  p.median_value = median(values);
  return p;
}

BidirRates bidir_rates(const std::vector<DirectionSeconds>& samples, double bytes) {
  if (!(std::isfinite(bytes) && bytes > 0)) throw InputError("a bidirectional sample needs a positive byte count");
  BidirRates r;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const DirectionSeconds& s = samples[i];
    if (!(std::isfinite(s.up_s) && s.up_s > 0 && std::isfinite(s.down_s) && s.down_s > 0))
      throw InputError("bidirectional sample " + std::to_string(i) + " has a time that is not positive");
    r.up.push_back(bytes / s.up_s);
    r.down.push_back(bytes / s.down_s);
    r.sum.push_back(r.up.back() + r.down.back());
  }
  return r;
}

std::vector<double> concurrent_rate_sums(const std::vector<std::vector<double>>& samples, double bytes) {
  if (!(std::isfinite(bytes) && bytes > 0)) throw InputError("concurrent transfers need a positive byte count");
  std::vector<double> sums;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].empty() || samples[i].size() != samples.front().size())
      throw InputError("concurrent sample " + std::to_string(i) + " has " + std::to_string(samples[i].size()) +
                       " transfer times, the first has " + std::to_string(samples.front().size()));
    double sum = 0;
    for (double t : samples[i]) {
      if (!(std::isfinite(t) && t > 0))
        throw InputError("concurrent sample " + std::to_string(i) + " has a time that is not positive");
      sum += bytes / t;
    }
    sums.push_back(sum);
  }
  return sums;
}

std::vector<GpuPair> ordered_pairs(int device_count, const std::function<bool(int, int)>& can_access,
                                   int only_device) {
  if (device_count < 0) throw InputError("negative device count");
  std::vector<GpuPair> pairs;
  for (int s = 0; s < device_count; ++s)
    for (int d = 0; d < device_count; ++d) {
      if (s == d) continue;
      if (only_device >= 0 && s != only_device && d != only_device) continue;
      pairs.push_back({s, d, can_access ? can_access(s, d) : false});
    }
  return pairs;
}

bool reaches_nvswitch(const std::vector<NvLinkEnd>& links) {
  return std::any_of(links.begin(), links.end(), [](const NvLinkEnd& e) { return e.kind == NvLinkEnd::Kind::kSwitch; });
}

int nvlink_links_between(const std::vector<NvLinkEnd>& a, const std::vector<NvLinkEnd>& b, unsigned b_domain,
                         unsigned b_bus, unsigned b_device) {
  int direct = 0, a_switch = 0, b_switch = 0;
  for (const NvLinkEnd& e : a) {
    if (e.kind == NvLinkEnd::Kind::kSwitch) ++a_switch;
    if (e.kind == NvLinkEnd::Kind::kGpu && e.domain == b_domain && e.bus == b_bus && e.device == b_device) ++direct;
  }
  for (const NvLinkEnd& e : b)
    if (e.kind == NvLinkEnd::Kind::kSwitch) ++b_switch;
  return direct + std::min(a_switch, b_switch);
}

NvlinkPairs split_nvlink_pairs(const std::vector<GpuPair>& pairs,
                               const std::function<std::optional<bool>(int, int)>& nvlink) {
  NvlinkPairs out;
  for (const GpuPair& p : pairs) {
    const std::optional<bool> c = nvlink ? nvlink(p.src, p.dst) : std::nullopt;
    (!c ? out.unknown : *c ? out.nvlink : out.other).push_back(p);
  }
  out.classified = out.unknown.empty();
  return out;
}

PeerMatrix::PeerMatrix(int device_count) : n_(device_count) {
  if (device_count < 0) throw InputError("negative device count");
  v_.assign(static_cast<std::size_t>(n_) * n_, std::numeric_limits<double>::quiet_NaN());
}

void PeerMatrix::set(int src, int dst, double value) {
  if (src < 0 || dst < 0 || src >= n_ || dst >= n_)
    throw InputError("peer matrix entry " + std::to_string(src) + "->" + std::to_string(dst) + " is outside " +
                     std::to_string(n_) + " devices");
  if (src == dst) throw InputError("peer matrix entry " + std::to_string(src) + "->" + std::to_string(dst) + " is a device to itself");
  if (!(std::isfinite(value) && value > 0))
    throw InputError("peer matrix entry " + std::to_string(src) + "->" + std::to_string(dst) + " must be positive");
  v_[static_cast<std::size_t>(src) * n_ + dst] = value;
}

double PeerMatrix::at(int src, int dst) const {
  if (src < 0 || dst < 0 || src >= n_ || dst >= n_) return std::numeric_limits<double>::quiet_NaN();
  return v_[static_cast<std::size_t>(src) * n_ + dst];
}
bool PeerMatrix::has(int src, int dst) const { return !std::isnan(at(src, dst)); }

namespace {
std::vector<double> measured_values(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v)
    if (!std::isnan(x)) out.push_back(x);
  return out;
}
}  // namespace

std::size_t PeerMatrix::measured() const { return measured_values(v_).size(); }
double PeerMatrix::min() const {
  const auto m = measured_values(v_);
  return m.empty() ? 0 : *std::min_element(m.begin(), m.end());
}
double PeerMatrix::max() const {
  const auto m = measured_values(v_);
  return m.empty() ? 0 : *std::max_element(m.begin(), m.end());
}
double PeerMatrix::median() const { return ceilings::median(measured_values(v_)); }

double PeerMatrix::row_sum(int src) const {
  double s = 0;
  for (int d = 0; d < n_; ++d)
    if (has(src, d)) s += at(src, d);
  return s;
}
double PeerMatrix::column_sum(int dst) const {
  double s = 0;
  for (int r = 0; r < n_; ++r)
    if (has(r, dst)) s += at(r, dst);
  return s;
}

std::map<std::string, double> PeerMatrix::counters(const std::string& prefix) const {
  std::map<std::string, double> c;
  for (int s = 0; s < n_; ++s)
    for (int d = 0; d < n_; ++d)
      if (has(s, d)) c[prefix + "_" + std::to_string(s) + "_" + std::to_string(d)] = at(s, d);
  c[prefix + "_pairs"] = static_cast<double>(measured());
  c[prefix + "_min"] = min();
  c[prefix + "_median"] = median();
  c[prefix + "_max"] = max();
  return c;
}

std::vector<PeerPairValue> peer_pairs_in_detail(const json& detail) {
  static const std::regex key("^p2p_([0-9]{1,4})_([0-9]{1,4})$");
  std::vector<PeerPairValue> out;
  if (!detail.is_object()) return out;
  for (const auto& [k, v] : detail.items()) {
    std::smatch m;
    if (v.is_number() && std::regex_match(k, m, key))
      out.push_back({k, std::stoi(m[1].str()), std::stoi(m[2].str()), v.get<double>()});
  }
  std::sort(out.begin(), out.end(), [](const PeerPairValue& a, const PeerPairValue& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  return out;
}

std::string PeerMatrix::to_text() const {
  std::ostringstream os;
  os.precision(4);
  for (int s = 0; s < n_; ++s) {
    if (s) os << "; ";
    os << s << ":";
    for (int d = 0; d < n_; ++d) {
      os << ' ';
      if (has(s, d))
        os << at(s, d);
      else
        os << '-';
    }
  }
  return os.str();
}

double link_share(double measured, int gen, int width, int directions) {
  const double rate = pcie_link_bandwidth(gen, width) * std::max(directions, 1);
  return rate > 0 && measured > 0 ? measured / rate : 0.0;
}

std::vector<std::uint32_t> pointer_chase_cycle(std::size_t n, std::uint64_t seed) {
  if (n == 0) throw InputError("a pointer chase needs at least one slot");
  if (n > std::numeric_limits<std::uint32_t>::max()) throw InputError("a pointer chase is limited to 2^32-1 slots");
  // Sattolo: a uniformly random permutation with exactly one cycle, so the chase covers every slot.
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed);
  for (std::size_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(order[i], order[pick(rng)]);
  }
  std::vector<std::uint32_t> next(n);
  for (std::size_t i = 0; i < n; ++i) next[order[i]] = order[(i + 1) % n];
  return next;
}

std::uint32_t chase_position(const std::vector<std::uint32_t>& next, std::uint32_t start, std::uint64_t steps) {
  if (start >= next.size()) throw InputError("pointer chase start outside the chain");
  // Steps beyond one trip around start's cycle repeat it: walk steps mod the cycle length.
  std::uint64_t length = 0;
  std::uint32_t at = start;
  do {
    if (next[at] >= next.size()) throw InputError("pointer chase chain leaves its buffer");
    at = next[at];
    ++length;
  } while (at != start && length <= next.size());
  if (at != start) return at;  // start is not on a cycle (cannot happen for a permutation)
  for (std::uint64_t i = 0, k = steps % length; i < k; ++i) at = next[at];
  return at;
}

}  // namespace ceilings
