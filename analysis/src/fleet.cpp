// Fleet comparison: fingerprint grouping, per ceiling median/MAD, robust outliers, fleet baselines.
#include "ceilings/fleet.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "ceilings/stats.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

namespace fs = std::filesystem;

namespace {
// Which pairs the nvlink ceilings cover, in a word ("own", "all"; "" where not recorded).
std::string pairs_word(const std::optional<bool>& own) { return own ? (*own ? "own" : "all") : ""; }
std::string pairs_text(const std::optional<bool>& own) { return own ? pairs_word(own) + " pairs" : ""; }
std::string optional_count(const std::optional<int>& n) { return n ? std::to_string(*n) : std::string(); }
}  // namespace

std::string Fingerprint::key() const {
  return gpu + "\x1f" + std::to_string(memory_bytes) + "\x1f" + driver + "\x1f" + cuda_runtime + "\x1f" +
         (power_limit_w ? format_fixed(*power_limit_w, 1) : std::string("-")) + "\x1f" +
         (gpus_visible ? std::to_string(*gpus_visible) : std::string("-")) + "\x1f" +
         (nvlink_own_pairs ? pairs_word(nvlink_own_pairs) : "-") + "\x1f" + host_cpu + "\x1f" +
         std::to_string(sm_count) + (mig ? "\x1fmig" : "") + (confidential_computing ? "\x1f" "cc" + confidential_computing_mode : "") + "\x1f" +
         cublas + "\x1f" + tool + "\x1f" + measurement_code + (quick ? "\x1fquick" : "") +
         "\x1f" + (measured_together ? std::to_string(*measured_together) : std::string("-"));
}

std::string Fingerprint::model() const {
  return mig ? gpu + " MIG instances of " + std::to_string(sm_count) + " SMs and " +
                   format_quantity(static_cast<double>(memory_bytes), "B")
             : gpu;
}

bool Fingerprint::same_model(const Fingerprint& other) const {
  // An instance profile is its SMs and its memory (1g.18gb and 1g.35gb have the same 16 SMs).
  return gpu == other.gpu && mig == other.mig &&
         (!mig || (sm_count == other.sm_count && memory_bytes == other.memory_bytes));
}


std::string Fingerprint::label() const {
  std::string s = gpu + ", " + (mig ? "MIG instance of " : "") + std::to_string(sm_count) + " SMs, " +
                  format_gib(static_cast<double>(memory_bytes)) + ", driver " +
                  (driver.empty() ? "?" : driver) + ", CUDA " + (cuda_runtime.empty() ? "?" : cuda_runtime);
  s += power_limit_w ? ", " + format_quantity(*power_limit_w, "W") : ", power limit ?";
  if (gpus_visible) s += ", " + std::to_string(*gpus_visible) + (*gpus_visible == 1 ? " GPU" : " GPUs");
  if (nvlink_own_pairs) s += ", NVLink: " + pairs_text(nvlink_own_pairs);
  if (!host_cpu.empty()) s += ", host " + host_cpu;
  if (confidential_computing)
    s += ", confidential computing" + (confidential_computing_mode.empty() ? "" : " (" + confidential_computing_mode + ")");
  if (!cublas.empty()) s += ", cuBLAS " + cublas;
  if (!tool_text().empty()) s += ", ceilings " + tool_text();
  // One GPU per run is what the run saw: other processes may have measured other GPUs meanwhile (review 51).
  if (measured_together)
    s += (*measured_together == 1 ? ", one GPU per run"
                                  : ", measured " + std::to_string(*measured_together) + " GPUs together") +
         (measured_together_partial ? " (where recorded)" : "");
  return s;
}

std::string Fingerprint::tool_text() const {
  // A --quick pass measures with fewer sizes, shapes and samples: another measurement by the same code (review 98).
  const std::string pass = quick ? std::string(tool.empty() && measurement_code.empty() ? "" : " ") + "quick pass" : "";
  if (measurement_code.empty()) return tool + pass;
  return (tool.empty() ? "" : tool + " ") + "measurement code " + measurement_code + pass;
}

json Fingerprint::to_json() const {
  return {{"gpu", gpu},
          {"memory_bytes", memory_bytes},
          {"driver", driver},
          {"cuda_runtime", cuda_runtime},
          {"power_limit_w", power_limit_w ? json(*power_limit_w) : json(nullptr)},
          {"gpus_visible", gpus_visible ? json(*gpus_visible) : json(nullptr)},
          {"nvlink_pairs", nvlink_own_pairs ? json(pairs_word(nvlink_own_pairs)) : json(nullptr)},
          {"host_cpu", host_cpu},
          {"sm_count", sm_count},
          {"mig", mig},
          {"confidential_computing", confidential_computing},
          {"confidential_computing_mode",
           confidential_computing_mode.empty() ? json(nullptr) : json(confidential_computing_mode)},
          {"cublas", cublas},
          {"tool_version", tool},
          {"measurement_code", measurement_code.empty() ? json(nullptr) : json(measurement_code)},
          {"quick", quick},
          {"gpus_measured_together", measured_together ? json(*measured_together) : json(nullptr)},
          {"gpus_measured_together_partial", measured_together_partial}};
}

std::vector<std::string> Fingerprint::differences(const Fingerprint& peers) const {
  std::vector<std::string> out;
  auto differ = [&](const std::string& field, const std::string& mine, const std::string& theirs) {
    if (mine != theirs)
      out.push_back(field + " " + (mine.empty() ? "?" : mine) + " (peers: " + (theirs.empty() ? "?" : theirs) + ")");
  };
  differ("GPU", gpu, peers.gpu);
  differ("SMs", std::to_string(sm_count) + (mig ? " (MIG instance)" : ""),
         std::to_string(peers.sm_count) + (peers.mig ? " (MIG instance)" : ""));
  if (memory_bytes != peers.memory_bytes)
    differ("memory", format_quantity(static_cast<double>(memory_bytes), "B", 6),
           format_quantity(static_cast<double>(peers.memory_bytes), "B", 6));
  differ("driver", driver, peers.driver);
  differ("CUDA", cuda_runtime, peers.cuda_runtime);
  auto watts = [](const std::optional<double>& w) { return w ? format_fixed(*w, 1) + " W" : std::string(); };
  differ("power limit", watts(power_limit_w), watts(peers.power_limit_w));
  differ("GPUs visible", optional_count(gpus_visible), optional_count(peers.gpus_visible));
  differ("NVLink pairs", pairs_text(nvlink_own_pairs), pairs_text(peers.nvlink_own_pairs));
  differ("host CPU", host_cpu, peers.host_cpu);
  differ("confidential computing", confidential_computing_text(), peers.confidential_computing_text());
  differ("cuBLAS", cublas, peers.cublas);
  differ("ceilings", tool_text(), peers.tool_text());
  // Not recorded (a profile of an earlier build) says nothing against a recorded count, as compare has it.
  if (measured_together && peers.measured_together)
    differ("GPUs measured together", optional_count(measured_together), optional_count(peers.measured_together));
  return out;
}

Fingerprint fingerprint_of(const Profile& p) {
  Fingerprint f;
  f.gpu = p.device.name;
  f.memory_bytes = p.device.memory_bytes;
  f.driver = p.device.driver;
  f.cuda_runtime = p.device.cuda_runtime;
  f.power_limit_w = p.device.power_limit_w;
  f.gpus_visible = p.gpus_visible;
  f.host_cpu = p.cpu;
  f.sm_count = p.device.sm_count;
  f.mig = p.device.is_mig();
  f.confidential_computing = p.device.confidential_computing.value_or(false);
  f.confidential_computing_mode = f.confidential_computing ? p.device.confidential_computing_mode : std::string();
  f.cublas = p.device.cublas;
  // The release, and the measurement code where recorded: one release has measured with many (the version is
  // bumped by hand), and GPUs measured by another code are another measurement (review 36).
  f.tool = p.tool_version;
  f.measurement_code = p.tool_measurement_code;
  f.quick = p.quick.value_or(false);
  f.measured_together = p.gpus_measured_together;
  for (const Ceiling& c : p.ceilings)
    if (c.name.rfind("nvlink.", 0) == 0)
      if (const auto own = c.detail_number("scope_device")) {
        f.nvlink_own_pairs = *own != 0;
        break;
      }
  return f;
}

bool host_bound_ceiling(const std::string& name) {
  if (name.find("pageable") != std::string::npos) return true;
  for (const char* exact : {"latency.launch", "latency.h2d_small", "latency.d2h_small"})
    if (name == exact) return true;
  return false;
}

bool confidential_computing_bound_ceiling(const std::string& name, bool nvlink_encrypted) {
  return name.rfind("pcie.", 0) == 0 || host_bound_ceiling(name) || (nvlink_encrypted && name.rfind("nvlink.", 0) == 0);
}

double Outlier::worst_deficit() const {
  double worst = 0;
  for (const Deviation& d : ceilings) worst = std::max(worst, d.deficit);
  return worst;
}

namespace {
// The modified z-score of `value` in the values `s` is of, oriented so that negative is worse; with a MAD of 0
// the mean absolute deviation's; none where every value is the same.
std::optional<double> z_in_group(double value, const CeilingStats& s, bool higher_better) {
  const double sign = higher_better ? 1.0 : -1.0;
  if (s.mad > 0) return sign * 0.6745 * (value - s.median) / s.mad;
  if (s.mean_ad > 0) return sign * (value - s.median) / (1.253314 * s.mean_ad);
  return std::nullopt;
}

std::string stat_key(const std::string& name, const std::string& unit) { return name + "\x1f" + unit; }

}  // namespace

std::vector<CeilingStats> ceiling_statistics(const std::vector<const Profile*>& members) {
  std::map<std::string, std::vector<double>> values;
  std::map<std::string, std::pair<std::string, std::string>> names;
  for (const Profile* p : members)
    for (const Ceiling& c : p->ceilings) {
      if (!c.verified) continue;  // a number that failed its check is no measurement: not in a median, not judged
      const std::string k = stat_key(c.name, c.unit);
      values[k].push_back(c.value);
      names[k] = {c.name, c.unit};
    }
  std::vector<CeilingStats> out;
  for (auto& [k, v] : values) {
    CeilingStats s;
    s.name = names[k].first;
    s.unit = names[k].second;
    s.n = v.size();
    s.median = median(v);
    s.mad = median_absolute_deviation(v);
    std::vector<double> dev;
    for (double x : v) dev.push_back(std::fabs(x - s.median));
    s.mean_ad = mean(dev);
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    s.min = *lo;
    s.max = *hi;
    out.push_back(std::move(s));
  }
  return out;
}

Profile with_pair_medians(Profile profile) {
  // The cv and samples stay the slowest pair's (the bench records no other pair's spread): the pairs are measured
  // alike, so that spread stands in for the median pair's in the noise gate.
  for (Ceiling& c : profile.ceilings)
    if (c.name.rfind("nvlink.", 0) == 0)
      if (const auto pairs_median = c.detail_number("p2p_median"); pairs_median && *pairs_median > 0)
        c.value = *pairs_median;
  return profile;
}


double z_threshold_for(const OutlierRule& rule, std::size_t n, std::size_t comparisons, bool in_sample) {
  if (comparisons == 0 || n < 2) return rule.z_threshold;
  const double p = rule.family_alpha / static_cast<double>(comparisons);
  if (!(p > 0)) return std::numeric_limits<double>::infinity();
  const double size = static_cast<double>(n);
  const double t = student_t_upper_quantile(p, in_sample ? 0.4 * size - 0.2 : 0.3 * size);
  return std::isnan(t) ? rule.z_threshold : std::max(rule.z_threshold, t);
}

std::size_t z_comparisons(const std::vector<const Profile*>& members, const std::vector<CeilingStats>& stats,
                          const OutlierRule& rule) {
  return rule.use_z ? compared_values(members, stats, rule) : 0;
}

double own_spread_for(const OutlierRule& rule, std::size_t comparisons) {
  if (comparisons == 0 || !(rule.own_spread > 0)) return rule.own_spread;
  const double z = normal_upper_quantile(rule.family_alpha / static_cast<double>(comparisons));
  return std::isnan(z) ? rule.own_spread : std::max(rule.own_spread, z);
}

std::size_t compared_values(const std::vector<const Profile*>& members, const std::vector<CeilingStats>& stats,
                            const OutlierRule& rule) {
  std::map<std::string, const CeilingStats*> by_key;
  for (const CeilingStats& s : stats) by_key[stat_key(s.name, s.unit)] = &s;
  std::size_t m = 0;
  for (const Profile* p : members)
    for (const Ceiling& c : p->ceilings) {
      auto it = by_key.find(stat_key(c.name, c.unit));
      if (c.verified && it != by_key.end() && it->second->n >= rule.min_members && it->second->median != 0) ++m;
    }
  return m;
}

std::vector<Outlier> find_outliers(const std::vector<const Profile*>& members, const std::vector<CeilingStats>& stats,
                                   const OutlierRule& rule, bool members_in_sample,
                                   std::vector<Outlier>* unstable) {
  // The statistics may be another group's (a small group set against its peers): every scale, the MAD = 0
  // fallback's mean absolute deviation too, comes from the values the median came from, not from `members`.
  std::map<std::string, const CeilingStats*> by_key;
  for (const CeilingStats& s : stats) by_key[stat_key(s.name, s.unit)] = &s;
  const std::size_t comparisons = z_comparisons(members, stats, rule);
  const double own_spread = own_spread_for(rule, compared_values(members, stats, rule));
  std::map<std::size_t, double> threshold_at;  // by the ceiling's number of values
  auto threshold = [&](std::size_t n) {
    auto [it, fresh] = threshold_at.try_emplace(n, 0.0);
    if (fresh) it->second = z_threshold_for(rule, n, comparisons, members_in_sample);
    return it->second;
  };

  // Each ceiling's typical noise in the group: the median of its members' standard errors (in the group's own
  // sample only). What excuses a deficit past the margin as ordinary below, never the GPU's own spread, which a GPU
  // throttling now and then would excuse itself with (review 110: 12% slow with a cv of 10% read as ordinary).
  std::map<std::string, double> typical_error;
  if (members_in_sample) {
    std::map<std::string, std::vector<double>> errors;
    for (const Profile* p : members)
      for (const Ceiling& c : p->ceilings)
        if (c.verified) errors[stat_key(c.name, c.unit)].push_back(c.median_standard_error());
    for (auto& [k, v] : errors) typical_error[k] = median(std::move(v));
  }

  std::vector<Outlier> out;
  for (std::size_t i = 0; i < members.size(); ++i) {
    Outlier o, wide;
    o.member = wide.member = i;
    for (const Ceiling& c : members[i]->ceilings) {
      auto it = by_key.find(stat_key(c.name, c.unit));
      if (it == by_key.end() || !c.verified) continue;
      const CeilingStats& s = *it->second;
      if (s.n < rule.min_members || s.median == 0) continue;
      const double sign = higher_is_better(c.unit) ? 1.0 : -1.0;  // oriented: negative is worse
      Deviation d;
      d.ceiling = c.name;
      d.unit = c.unit;
      d.value = c.value;
      d.median = s.median;
      d.mad = s.mad;
      d.deficit = sign * (s.median - c.value) / std::fabs(s.median);
      d.z = z_in_group(c.value, s, sign > 0);
      d.own_noise = own_spread * c.median_standard_error();
      d.own_spread = own_spread;
      if (rule.use_z) d.z_threshold = threshold(s.n);
      d.by_z = rule.use_z && d.z && *d.z < -d.z_threshold && d.deficit >= rule.min_deficit;
      d.by_margin = d.deficit > rule.margin;
      // Past the margin alone, within the noise the group's GPUs typically measure this ceiling with and, by its
      // z-score, within the group's spread: evidence of nothing, neither named nor "measure again" (review 109: 4-5%
      // of a clean fleet's GPUs, on its noisiest ceilings, listed as unstable, so every run of 64 GPUs or more came
      // out incomplete). By a z within the group's threshold and at most twice the rule's. A group of a few GPUs
      // needs a threshold so high that every value would be "within" it: there the deficit must also be within the
      // margin and one of the group's typical standard errors, so that a clean fleet's noise (5-6% on the H200's
      // noisiest ceilings) is ordinary while a GPU 8-12% slow on such a ceiling stays unstable (review 111: with the
      // rule off there, clean fleets of 16 GPUs came out incomplete in 5 of 6 seeds; review 113: with the z alone,
      // an 8% slow pcie.h2d_pageable went unsaid in 40 of 40 such fleets).
      const bool within_own = d.deficit <= d.own_noise;
      const auto typical = typical_error.find(stat_key(c.name, c.unit));
      const bool within_typical = typical != typical_error.end() && d.deficit <= own_spread * typical->second;
      const bool z_can_tell = d.z_threshold <= 2 * rule.z_threshold;
      const bool near_margin = typical != typical_error.end() && d.deficit <= rule.margin + typical->second;
      const double z_within = std::min(d.z_threshold, 2 * rule.z_threshold);
      const bool ordinary = within_own && within_typical && !d.by_z && rule.use_z && d.z && *d.z >= -z_within &&
                            (z_can_tell || near_margin);
      if ((d.by_z || d.by_margin) && !ordinary) (within_own ? wide : o).ceilings.push_back(d);
    }
    if (unstable && !wide.ceilings.empty()) unstable->push_back(std::move(wide));
    if (o.ceilings.empty()) continue;
    std::sort(o.ceilings.begin(), o.ceilings.end(),
              [](const Deviation& a, const Deviation& b) { return a.deficit > b.deficit; });
    out.push_back(std::move(o));
  }
  std::sort(out.begin(), out.end(),
            [](const Outlier& a, const Outlier& b) { return a.worst_deficit() > b.worst_deficit(); });
  return out;
}

namespace {
constexpr double kSplitSeparation = 4.0;
constexpr std::size_t kOtsuMinimum = 64;

// The deviation of ceiling `name` (in `unit`) in `list`'s entry for `member`; null where there is none.
const Deviation* listed(const std::vector<Outlier>& list, std::size_t member, const std::string& name,
                        const std::string& unit) {
  for (const Outlier& o : list)
    if (o.member == member)
      for (const Deviation& d : o.ceilings)
        if (d.ceiling == name && d.unit == unit) return &d;
  return nullptr;
}

// The deviation of `c` in `list`'s entry for `member`, made (the entry too) where there is none.
Deviation& deviation_in(std::vector<Outlier>& list, std::size_t member, const Ceiling& c) {
  auto o = std::find_if(list.begin(), list.end(), [&](const Outlier& x) { return x.member == member; });
  if (o == list.end()) {
    list.push_back({member, {}});
    o = std::prev(list.end());
  }
  auto d = std::find_if(o->ceilings.begin(), o->ceilings.end(),
                        [&](const Deviation& x) { return x.ceiling == c.name && x.unit == c.unit; });
  if (d == o->ceilings.end()) {
    o->ceilings.push_back({});
    d = std::prev(o->ceilings.end());
    d->ceiling = c.name;
    d->unit = c.unit;
    d->value = c.value;
  }
  return *d;
}

// Each entry's ceilings worst first.
void sort_ceilings(std::vector<Outlier>& list) {
  for (Outlier& o : list)
    std::sort(o.ceilings.begin(), o.ceilings.end(),
              [](const Deviation& a, const Deviation& b) { return a.deficit > b.deficit; });
}
}  // namespace

void add_population_splits(const std::vector<const Profile*>& members, const OutlierRule& rule,
                           std::vector<Outlier>& outliers, std::vector<Outlier>* unstable) {
  struct Value {
    double v;
    std::size_t member;
    const Ceiling* c;
  };
  std::map<std::string, std::vector<Value>> by_key;
  for (std::size_t i = 0; i < members.size(); ++i)
    for (const Ceiling& c : members[i]->ceilings)
      if (c.verified) by_key[stat_key(c.name, c.unit)].push_back({c.value, i, &c});
  // The same own-spread gate as find_outliers, over the same values compared.
  std::size_t comparisons = 0;
  for (const auto& [key, values] : by_key)
    if (values.size() >= rule.min_members) comparisons += values.size();
  const double own_spread = own_spread_for(rule, comparisons);
  std::map<std::string, CeilingStats> group_stats;
  for (CeilingStats& s : ceiling_statistics(members)) group_stats.emplace(stat_key(s.name, s.unit), std::move(s));
  for (auto& [key, values] : by_key) {
    // Each side at least a quarter of the group (and min_members): three GPUs that read high (a cooler rack, a
    // timing artefact) must not put the other seventeen on the "worse side" of a gap.
    const std::size_t side = std::max<std::size_t>({rule.min_members, (values.size() + 3) / 4, 1});
    if (values.size() < 2 * side) continue;  // (every value is above zero: the profile reader refuses others)
    const bool higher = higher_is_better(values.front().c->unit);
    // Worse first.
    std::sort(values.begin(), values.end(),
              [&](const Value& a, const Value& b) { return higher ? a.v < b.v : a.v > b.v; });
    auto worse_by = [&](double x, double ref) { return (higher ? ref - x : x - ref) / std::fabs(ref); };
    std::size_t cut = 0;  // the worse side is values[0, cut)
    double widest = 0;
    for (std::size_t k = side; k + side <= values.size(); ++k)
      if (const double gap = worse_by(values[k - 1].v, values[k].v); gap > widest) widest = gap, cut = k;
    if ((cut == 0 || widest <= rule.margin) && values.size() < kOtsuMinimum) continue;
    if (cut == 0 || widest <= rule.margin) {
      // In a large fleet the two populations' noise closes every gap between neighbours (half of 512 nodes 8%
      // slow left gaps under 1%). The cut that best separates the values (Otsu's: the most variance between the
      // sides) finds them still; it makes two populations when the sides' medians lie more than the margin apart
      // and more than kSplitSeparation times the sides' own spreads (their MADs added), which one population
      // split at its middle does not in a large group (normal values: under 1.9 from 512, 1.7 on average; in
      // groups of 8 over 4 one time in five, hence only from kOtsuMinimum values, where the gap finds small splits).
      cut = 0;
      const std::size_t n = values.size();
      std::vector<double> prefix(n + 1, 0.0);
      for (std::size_t k = 0; k < n; ++k) prefix[k + 1] = prefix[k] + values[k].v;
      double best = -1;
      for (std::size_t k = side; k + side <= n; ++k) {
        const double w = static_cast<double>(k), b = static_cast<double>(n - k);
        const double d = prefix[k] / w - (prefix[n] - prefix[k]) / b;
        if (const double between = w * b * d * d; between > best) best = between, cut = k;
      }
      if (cut == 0) continue;
      std::vector<double> worse_side, better_side;
      for (std::size_t k = 0; k < n; ++k) (k < cut ? worse_side : better_side).push_back(values[k].v);
      const double worse_median = median(worse_side), better_median = median(better_side);
      const double spread = median_absolute_deviation(worse_side) + median_absolute_deviation(better_side);
      const double apart = std::fabs(better_median - worse_median);
      if (!(worse_by(worse_median, better_median) > rule.margin && apart > kSplitSeparation * spread)) continue;
    }
    std::vector<double> better;
    for (std::size_t k = cut; k < values.size(); ++k) better.push_back(values[k].v);
    const double reference = median(better);
    // Three of eight reading high would otherwise name the other five (review 90): a side that is the majority is
    // what its peers are, and whether the few are fast or the many slow a datasheet or baseline has to say. The side
    // is the GPUs nearer the worse side's median than the better's: a large group's cut can take in a few healthy
    // ones, and counting only those past the margin made a deficit just past it judged and a larger one not (review
    // 95). A clear majority, more than 55%: half a fleet slow alike (256 of 512) must not tip into it by the few
    // healthy GPUs its noise puts nearer the slow median (review 92); five of eight, five of nine are.
    std::vector<double> worse_values;
    for (std::size_t k = 0; k < cut; ++k) worse_values.push_back(values[k].v);
    const double worse_median = median(worse_values);
    std::size_t worse_population = 0;
    for (std::size_t k = 0; k < cut; ++k)
      worse_population += std::fabs(values[k].v - worse_median) < std::fabs(values[k].v - reference) ? 1 : 0;
    const bool majority = static_cast<double>(worse_population) > 0.55 * static_cast<double>(values.size());
    for (std::size_t k = 0; k < cut; ++k) {
      const Ceiling& c = *values[k].c;
      const std::size_t member = values[k].member;
      const double deficit = worse_by(c.value, reference);
      if (!(deficit > rule.margin)) continue;
      const double own_noise = own_spread * c.median_standard_error();
      const bool judged = deficit > own_noise && !majority;
      // Within its own spread: unstable, not judged, unless another rule has judged that ceiling already.
      if (!judged && (!unstable || listed(outliers, member, c.name, c.unit))) continue;
      // Below the group's median by another rule too: the better population's median is the truer reference
      // (the group's sits in the gap, and understates the deficit), so the deviation is against it.
      Deviation& d = deviation_in(judged ? outliers : *unstable, member, c);
      if (!d.z) d.z = z_in_group(c.value, group_stats.at(key), higher);  // still its z-score in the whole group
      d.median = reference;
      d.deficit = deficit;
      d.own_noise = own_noise;
      d.own_spread = own_spread;
      d.by_split = true;
      d.majority_split = majority;
      if (judged && unstable) {  // within its spread of the group's median, beyond it of the better side's: judged
        for (Outlier& o : *unstable)
          if (o.member == member)
            o.ceilings.erase(std::remove_if(o.ceilings.begin(), o.ceilings.end(),
                                            [&](const Deviation& x) { return x.ceiling == c.name && x.unit == c.unit; }),
                             o.ceilings.end());
        unstable->erase(std::remove_if(unstable->begin(), unstable->end(),
                                       [](const Outlier& o) { return o.ceilings.empty(); }),
                        unstable->end());
      }
    }
  }
  sort_ceilings(outliers);
  if (unstable) sort_ceilings(*unstable);
  std::sort(outliers.begin(), outliers.end(),
            [](const Outlier& a, const Outlier& b) { return a.worst_deficit() > b.worst_deficit(); });
}

NodeComparison compare_node(const std::vector<const Profile*>& profiles, double margin) {
  std::vector<Profile> compared;
  compared.reserve(profiles.size());
  for (const Profile* p : profiles) compared.push_back(with_pair_medians(*p));
  OutlierRule rule;
  rule.use_z = false;
  rule.margin = margin;
  NodeComparison out;
  out.own_spread = rule.own_spread;
  std::map<std::string, std::vector<std::size_t>> by_model;  // model -> indices into `compared`
  for (std::size_t k = 0; k < compared.size(); ++k) by_model[fingerprint_of(compared[k]).model()].push_back(k);
  std::size_t largest = 0;
  for (const auto& [model, ks] : by_model) {
    if (ks.size() < rule.min_members) {
      out.too_few.push_back(std::to_string(ks.size()) + " " + model);
      continue;
    }
    std::vector<const Profile*> members;
    for (std::size_t k : ks) members.push_back(&compared[k]);
    const auto stats = ceiling_statistics(members);
    std::vector<Outlier> wide;
    std::vector<Outlier> found = find_outliers(members, stats, rule, /*members_in_sample=*/true, &wide);
    add_population_splits(members, rule, found, &wide);
    for (auto* list : {&found, &wide})
      for (Outlier& o : *list) o.member = ks[o.member];  // back to an index into `profiles`
    out.below_peers.insert(out.below_peers.end(), found.begin(), found.end());
    out.unstable.insert(out.unstable.end(), wide.begin(), wide.end());
    out.gpus_compared += ks.size();
    if (ks.size() > largest) {
      largest = ks.size();
      out.own_spread = own_spread_for(rule, compared_values(members, stats, rule));
    }
  }
  std::sort(out.below_peers.begin(), out.below_peers.end(),
            [](const Outlier& a, const Outlier& b) { return a.worst_deficit() > b.worst_deficit(); });
  return out;
}

namespace {
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
constexpr const char* kNodeSummaryExt = ".node-summary.json";

std::string canonical_or_same(const std::string& path) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(path, ec);
  return ec ? path : c.string();
}

// Text another program wrote, for a report: each line made printable (a control character would rewrite the
// terminal; invalid UTF-8 would stop the JSON writer).
std::string printable_lines(const std::string& text) {
  std::string out;
  std::size_t from = 0;
  while (true) {
    const std::size_t nl = text.find('\n', from);
    out += printable_text(text.substr(from, nl == std::string::npos ? std::string::npos : nl - from));
    if (nl == std::string::npos) break;
    out += '\n';
    from = nl + 1;
  }
  return out;
}

// What read_node_summary matches a summary's GPUs against: the members by UUID and by file, and the files that
// could not be read (built once: a fleet of 16,000 GPUs is not walked for each).
struct SummaryIndex {
  std::map<std::string, const FleetMember*> by_uuid, by_path;
  std::set<std::string> unreadable;
  // Whether a profile the summary names was skipped: the file itself, or a directory above it that could not be
  // opened or searched (each ancestor made canonical alone: inside such a directory the whole path cannot be).
  bool skipped(const fs::path& profile) const {
    for (fs::path p = profile; !p.empty(); p = p.parent_path()) {
      if (unreadable.count(canonical_or_same(p.string()))) return true;
      if (p == p.parent_path()) break;
    }
    return false;
  }
};

std::string summary_raw_text(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}
std::string summary_text(const json& o, const char* key) { return printable_text(summary_raw_text(o, key)); }

// A node summary read, and when it was last written (none where it does not say, or says it unreadably).
struct NodeSummary {
  std::string path;
  json doc;
  std::optional<UtcTime> updated;
};

// Reads a node summary; one that cannot be read, or is no summary, is set aside in `in.skipped`.
std::optional<NodeSummary> load_node_summary(const std::string& path, FleetInput& in) {
  NodeSummary s{path, {}, std::nullopt};
  try {
    s.doc = read_json_file(path);
  } catch (const Error& e) {
    in.skipped.push_back({path, e.what()});
    return std::nullopt;
  }
  if (!s.doc.is_object() || summary_text(s.doc, "schema") != "ceilings.node/1" || !s.doc.contains("gpus") ||
      !s.doc["gpus"].is_array()) {
    in.skipped.push_back({path, "not a node summary (ceilings.node/1 with a gpus list): the GPUs it would list are "
                                "not known"});
    return std::nullopt;
  }
  try {
    if (const std::string updated = summary_text(s.doc, "updated"); !updated.empty())
      s.updated = parse_utc_time(updated, "'" + path + "': field 'updated'");
  } catch (const Error&) {
  }
  return s;
}

// The GPUs a node summary lists that have no finished profile among the members (see FleetUnfinished). A GPU
// already listed by another summary (read before: a newer one) is not listed again.
void read_node_summary(const NodeSummary& summary, const SummaryIndex& index, FleetInput& in,
                       std::set<std::string>& listed) {
  const std::string& path = summary.path;
  const json& doc = summary.doc;
  const auto& raw_text = summary_raw_text;
  const auto& text = summary_text;
  ++in.node_summaries;
  const std::string host = text(doc, "host"), updated = text(doc, "updated");
  if (!host.empty()) in.summary_hosts.push_back(host);
  const std::optional<UtcTime>& summary_time = summary.updated;
  const fs::path dir = fs::path(path).parent_path();
  // The GPUs its comparison named below their node's peers, unless a newer summary named them first or they
  // were measured again since (that run stands).
  if (doc.contains("comparison") && doc["comparison"].is_object() && doc["comparison"].contains("below_peers") &&
      doc["comparison"]["below_peers"].is_array())
    for (const json& g : doc["comparison"]["below_peers"]) {
      if (!g.is_object()) continue;
      FleetNodeFinding f;
      f.summary = path;
      f.host = host;
      f.uuid = text(g, "uuid");
      f.pci_bus_id = text(g, "pci_bus_id");
      if (g.contains("index") && g["index"].is_number_integer()) f.index = g["index"].get<std::int64_t>();
      if (f.uuid.empty() || std::any_of(in.node_below_peers.begin(), in.node_below_peers.end(),
                                        [&](const FleetNodeFinding& o) { return o.uuid == f.uuid; }))
        continue;
      if (const auto it = index.by_uuid.find(f.uuid); it != index.by_uuid.end() && summary_time) {
        try {
          if (*summary_time < parse_utc_time(it->second->profile.created, "created")) continue;
        } catch (const Error&) {
        }
      }
      if (g.contains("ceilings") && g["ceilings"].is_array())
        for (const json& d : g["ceilings"]) {
          if (!d.is_object() || !d.contains("value") || !d["value"].is_number() || !d.contains("node_median") ||
              !d["node_median"].is_number())
            continue;
          const std::string unit = text(d, "unit");
          const double value = d["value"].get<double>(), med = d["node_median"].get<double>();
          const double below = d.contains("below_median") && d["below_median"].is_number()
                                   ? d["below_median"].get<double>()
                                   : 0.0;
          f.ceilings.push_back(printable_text(text(d, "ceiling")) + " " + format_quantity(value, unit) + ", " +
                               format_percent(below, 1) + " worse than the node median " +
                               format_quantity(med, unit));
        }
      if (!f.ceilings.empty()) in.node_below_peers.push_back(std::move(f));
    }
  std::size_t position = 0;
  for (const json& g : doc["gpus"]) {
    ++position;
    if (!g.is_object()) {
      in.skipped.push_back({path, "gpus[" + std::to_string(position - 1) + "] is not an object: that GPU is not known"});
      continue;
    }
    FleetUnfinished u;
    u.summary = path;
    u.host = host;
    u.uuid = text(g, "uuid");
    u.pci_bus_id = text(g, "pci_bus_id");
    u.state = text(g, "state");
    u.reason = printable_lines(raw_text(g, "reason"));  // measure's reasons may hold the bench's last lines
    if (g.contains("index") && g["index"].is_number_integer()) u.index = g["index"].get<std::int64_t>();
    // One GPU in two summaries (a summary copied, or two runs of the node): named once, by the newest run.
    if (!listed.insert(u.uuid.empty() ? host + "#" + std::to_string(u.index) : u.uuid).second) continue;
    const std::string profile = text(g, "profile");
    const std::string profile_path = profile.empty() ? std::string() : canonical_or_same((dir / profile).string());
    const FleetMember* found = nullptr;
    if (const auto it = index.by_uuid.find(u.uuid); !u.uuid.empty() && it != index.by_uuid.end()) found = it->second;
    if (const auto it = index.by_path.find(profile_path); !found && !profile_path.empty() && it != index.by_path.end())
      found = it->second;
    if (u.state == "done") {
      // The profile found must be this run's: one made before the run started is an earlier run's (this run's
      // own file missing, the newest run's "done" passed the GPU on it).
      std::optional<UtcTime> started, found_created;
      try {
        if (const std::string s = text(g, "started"); !s.empty()) started = parse_utc_time(s, "started");
        if (found) found_created = parse_utc_time(found->profile.created, "created");
      } catch (const Error&) {
      }
      const bool earlier = found && started && found_created && *found_created < *started;
      if (found && !earlier) continue;
      u.reason = "finished, but its profile" + (profile.empty() ? std::string() : " (" + profile + ")") +
                 (!profile.empty() && index.skipped(dir / profile) ? " could not be read (skipped above)"
                                                                   : " is not among the files read") +
                 (earlier ? "; the one read, " + printable_text(found->path) + " (" + found->profile.created +
                                "), is from an earlier run than this one (started " + text(g, "started") + ")"
                          : std::string());
      u.partial_compared = earlier;
    } else {
      if (found && summary_time) {  // measured again since the summary was last written: that run stands
        try {
          if (*summary_time < parse_utc_time(found->profile.created, "created")) continue;
        } catch (const Error&) {
        }
      }
      u.partial_compared = found != nullptr;
      if (u.state == "pending" || u.state == "running")
        u.reason = "the run was still going, or was killed, when the summary was last written (" + updated + ")";
      else if (u.reason.empty())
        u.reason = u.state.empty() ? "no state recorded" : "no reason recorded";
    }
    in.unfinished.push_back(std::move(u));
  }
}
// Where one directory of a fleet's profiles was walked from (its device and inode: a directory reached again
// through a symlink, or a link back to one of its parents, is walked once).
using DirectoryId = std::pair<std::uint64_t, std::uint64_t>;

// Walks `top` for profiles and node summaries, by hand rather than with recursive_directory_iterator: told to
// skip_permission_denied it drops a subdirectory it cannot open without a word (a node's results directory,
// and the slow GPU in it, vanished from a fleet that then passed), and without that option one such directory
// ends the whole walk. A subdirectory that cannot be opened is a skipped entry with its reason, as a file that
// cannot be read is: its GPUs were not judged. Directory symlinks are followed (results directories are often
// linked in from elsewhere), each directory once by its device and inode, so a link back to a parent is no
// endless walk and a directory reachable by two paths does not count its profiles twice. An error opening
// `top` itself is an InputError: the path named on the command line cannot be read at all.
void walk_directory(const std::string& top, std::set<DirectoryId>& walked, std::vector<std::string>& found,
                    std::vector<std::string>& found_summaries, std::vector<FleetSkip>& skipped) {
  std::vector<std::string> stack{top};
  while (!stack.empty()) {
    const std::string dir = std::move(stack.back());
    stack.pop_back();
    struct stat dir_st {};
    if (::stat(dir.c_str(), &dir_st) != 0) {  // it went between the listing and now, or its link broke
      const int err = errno;
      const std::string why = std::strerror(err);
      if (dir == top) throw InputError("cannot read the directory '" + top + "': " + why);
      if (err == ENOENT) continue;  // removed while the walk ran: gone like a removed file, not unreadable
      skipped.push_back({dir, "cannot open the directory: " + why + " (the profiles in it, if any, were not read)"});
      continue;
    }
    if (!walked.insert({static_cast<std::uint64_t>(dir_st.st_dev), static_cast<std::uint64_t>(dir_st.st_ino)}).second)
      continue;  // walked already, by another path (a symlink to it, or back to a parent)
    std::vector<fs::path> entries;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
    if (ec && ec == std::errc::no_such_file_or_directory && dir != top) continue;  // removed while walked
    if (ec) {
      if (dir == top && entries.empty())
        throw InputError("cannot read the directory '" + top + "': " + ec.message());
      skipped.push_back({dir, "cannot open the directory: " + ec.message() +
                                  " (the profiles in it, if any, were not read)"});
      if (entries.empty()) continue;
    }
    std::sort(entries.begin(), entries.end());  // the same walk, and the same path to a linked directory, each run
    bool unsearchable = false;
    std::vector<std::string> subdirectories;
    for (const fs::path& e : entries) {
      const std::string path = e.string(), name = e.filename().string();
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) {
        const int err = errno;
        struct stat link_st {};
        if (err == EACCES && ::lstat(path.c_str(), &link_st) != 0) {
          unsearchable = true;  // the directory can be listed but not searched: said once, for the directory
          continue;
        }
        // A dangling link (a profile since removed), an entry removed while the walk ran: no file.
        if (err == ENOENT || err == ENOTDIR) continue;
        // A link loop, or a link into a directory without permission: what it leads to could not be looked at.
        // Said where it may have held profiles: named like a profile or a node summary (it is there, and cannot
        // be read), or a link without a file type's extension into a directory it may not enter (a node's
        // directory). A README.txt linked out of reach, or a loop named like neither, holds none.
        const bool may_hold = ends_with(name, ".profile.json") || ends_with(name, kNodeSummaryExt) ||
                              (err != ELOOP && name.find('.') == std::string::npos);
        if (may_hold) skipped.push_back({path, std::string("cannot be read: ") + std::strerror(err)});
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        subdirectories.push_back(path);
        continue;
      }
      const bool summary = ends_with(name, kNodeSummaryExt);
      if (!summary && !ends_with(name, ".profile.json")) continue;
      if (S_ISREG(st.st_mode))
        (summary ? found_summaries : found).push_back(path);
      else  // a pipe would wait for a writer for ever
        skipped.push_back({path, "not a regular file (a pipe, a device or a socket): not read"});
    }
    if (unsearchable)
      skipped.push_back({dir, std::string("cannot look into the directory: ") + std::strerror(EACCES) +
                                  " (it can be listed but not searched; the profiles in it, if any, were not read)"});
    for (auto it = subdirectories.rbegin(); it != subdirectories.rend(); ++it) stack.push_back(*it);
  }
}
}  // namespace

FleetInput load_fleet(const std::vector<std::string>& paths) {
  FleetInput in;
  std::vector<std::string> files, summaries;
  std::set<DirectoryId> walked;
  for (const std::string& p : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (st.type() == fs::file_type::not_found) throw InputError("'" + p + "' does not exist");
    if (ec) throw InputError("cannot read '" + p + "': " + ec.message());  // a parent it cannot search, a link loop
    if (fs::is_directory(st)) {
      std::vector<std::string> found, found_summaries;
      walk_directory(p, walked, found, found_summaries, in.skipped);
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
      std::sort(found_summaries.begin(), found_summaries.end());
      summaries.insert(summaries.end(), found_summaries.begin(), found_summaries.end());
    } else if (ends_with(fs::path(p).filename().string(), kNodeSummaryExt)) {
      summaries.push_back(p);
    } else {
      files.push_back(p);
    }
  }
  std::set<std::string> seen;
  for (const std::string& f : files) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(f, ec);
    if (!seen.insert(ec ? f : canonical.string()).second) continue;  // the same file named twice
    ++in.files;
    try {
      Profile p = read_profile(f);
      if (p.raw.is_object() && p.raw.contains("baseline")) {
        const json& b = p.raw["baseline"];
        std::string from = "a baseline";
        if (b.is_object() && b.contains("profiles") && b["profiles"].is_number_unsigned())
          from = "a fleet baseline of " + std::to_string(b["profiles"].get<std::uint64_t>()) + " profile(s)";
        in.baselines.push_back({f, from + " (medians, not one GPU's measurement): not counted as a GPU"});
        continue;
      }
      // A fleet holds thousands of profiles at once: the document's copy of the ceilings (parsed above) and the
      // cases each ceiling's detail lists (sweep points, competing variants: over half of a measured profile) are
      // used by no verdict. Dropped as read: 10,000 H200 profiles held 8 GB (review 34).
      if (p.raw.is_object()) p.raw.erase("ceilings");
      for (Ceiling& c : p.ceilings)
        if (c.detail.is_object()) {
          c.detail.erase("sweep");
          c.detail.erase("variants");
        }
      in.members.push_back({f, std::move(p)});
    } catch (const Error& e) {
      in.skipped.push_back({f, e.what()});
    } catch (const std::exception& e) {
      in.skipped.push_back({f, e.what()});
    }
  }
  // One GPU, one member: the newest run of each UUID (by the time `created` names, which read_profile checked
  // is ISO 8601 UTC; as text, "12:00:00.5Z" would sort before "12:00:00Z"; a tie goes to the later file, which
  // the sorted directory walk and the command line put last). A run from before a driver upgrade or a power
  // limit change is not the GPU as it stands: set aside, not a GPU configured unlike its peers.
  std::map<std::string, std::size_t> newest;  // uuid -> index into in.members
  std::vector<UtcTime> created;
  for (const FleetMember& m : in.members)
    created.push_back(parse_utc_time(m.profile.created, "'" + m.path + "': field 'created'"));
  auto key_of = [&](const Profile& p) { return p.device.uuid; };
  for (std::size_t i = 0; i < in.members.size(); ++i) {
    const Profile& p = in.members[i].profile;
    if (p.device.uuid.empty()) continue;
    auto [it, fresh] = newest.emplace(key_of(p), i);
    if (!fresh && created[i] >= created[it->second]) it->second = i;
  }
  std::vector<bool> keep(in.members.size(), true);
  for (std::size_t i = 0; i < in.members.size(); ++i) {
    const Profile& p = in.members[i].profile;
    if (p.device.uuid.empty()) continue;
    const std::size_t stands = newest.at(key_of(p));
    if (stands == i) continue;
    keep[i] = false;
    const FleetMember& newer = in.members[stands];
    in.superseded.push_back({in.members[i].path, p.device.uuid, p.created, newer.path, newer.profile.created,
                             p.hostname, newer.profile.hostname});
  }
  std::vector<FleetMember> kept;
  for (std::size_t i = 0; i < in.members.size(); ++i)
    if (keep[i]) kept.push_back(std::move(in.members[i]));
  in.members = std::move(kept);
  SummaryIndex index;
  if (!summaries.empty()) {
    for (const FleetMember& m : in.members) {
      if (!m.profile.device.uuid.empty()) index.by_uuid.emplace(m.profile.device.uuid, &m);
      index.by_path.emplace(canonical_or_same(m.path), &m);
    }
    for (const FleetSkip& k : in.skipped) index.unreadable.insert(canonical_or_same(k.path));
  }
  std::set<std::string> seen_summaries, listed;
  std::vector<NodeSummary> loaded;
  for (const std::string& s : summaries) {
    if (!seen_summaries.insert(canonical_or_same(s)).second) continue;
    std::error_code ec;
    if (!fs::is_regular_file(s, ec)) {  // a pipe would wait for a writer for ever
      in.skipped.push_back({s, "not a regular file (a pipe, a device or a socket): not read"});
      continue;
    }
    if (auto summary = load_node_summary(s, in)) loaded.push_back(std::move(*summary));
  }
  // The newest run of a GPU says how it ended: summaries are read newest first (an older run's "done" must not
  // hide a newer run that hung), those without a time last, ties in path order.
  std::stable_sort(loaded.begin(), loaded.end(), [](const NodeSummary& a, const NodeSummary& b) {
    if (a.updated && b.updated) return *b.updated < *a.updated;
    return a.updated.has_value() && !b.updated.has_value();
  });
  for (const NodeSummary& s : loaded) read_node_summary(s, index, in, listed);
  return in;
}

namespace {
// The group's hosts, each as a profile whose ceilings are its GPUs' medians, judged among themselves as GPUs are
// (find_outliers). Only hosts with the group's most common number of its GPUs (2 or more), 8 hosts at least: a median
// of 2 GPUs scatters more than one of 8, and one z-score over both named clean 2-GPU hosts (review 111). Each host's
// median carries the spread of a median of that many of the group's GPUs (the group's robust spread, 1.4826 MAD,
// over sqrt(GPUs)) as its own: a host past the margin within it is no finding (review 111: with none, clean fleets of
// 2-GPU hosts failed). No host is "unstable": the GPUs are judged one by one besides.
std::vector<HostOutlier> find_hosts_below(const std::vector<const Profile*>& profiles,
                                          const std::vector<const Profile*>& as_compared,
                                          const std::vector<CeilingStats>& group_stats, const OutlierRule& rule) {
  constexpr std::size_t kMinHosts = 8;
  std::map<std::string, std::vector<std::size_t>> by_host;
  for (std::size_t i = 0; i < profiles.size(); ++i)
    if (!profiles[i]->hostname.empty()) by_host[profiles[i]->hostname].push_back(i);
  std::map<std::size_t, std::size_t> hosts_of_size;
  for (const auto& [h, m] : by_host) ++hosts_of_size[m.size()];
  std::size_t size = 0, most = 0;
  for (const auto& [k, n] : hosts_of_size)
    if (k >= 2 && n >= most) size = k, most = n;  // ties: the larger hosts
  std::vector<std::pair<std::string, std::vector<std::size_t>>> hosts;
  for (auto& [h, m] : by_host)
    if (size >= 2 && m.size() == size) hosts.emplace_back(h, std::move(m));
  if (hosts.size() < kMinHosts) return {};
  std::map<std::string, double> spread;  // the group's relative robust spread per ceiling
  for (const CeilingStats& s : group_stats)
    if (s.median != 0) spread[stat_key(s.name, s.unit)] = 1.4826 * s.mad / std::fabs(s.median);
  std::vector<Profile> medians(hosts.size());
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    std::map<std::string, std::vector<double>> values;
    std::map<std::string, std::pair<std::string, std::string>> names;
    for (std::size_t m : hosts[h].second)
      for (const Ceiling& c : as_compared[m]->ceilings)
        if (c.verified) {
          values[stat_key(c.name, c.unit)].push_back(c.value);
          names[stat_key(c.name, c.unit)] = {c.name, c.unit};
        }
    for (const auto& [k, v] : values) {
      if (v.size() < 2) continue;
      Ceiling c;
      c.name = names[k].first;
      c.unit = names[k].second;
      c.value = median(v);
      c.verified = true;  // a median of verified values
      const auto s = spread.find(k);
      c.cv = s != spread.end() ? s->second : 0;  // median_standard_error: 1.2533 x this / sqrt(samples)
      c.samples = static_cast<std::int64_t>(v.size());
      medians[h].ceilings.push_back(std::move(c));
    }
  }
  std::vector<const Profile*> host_profiles;
  for (const Profile& p : medians) host_profiles.push_back(&p);
  std::vector<HostOutlier> out;
  for (Outlier& o : find_outliers(host_profiles, ceiling_statistics(host_profiles), rule, true, nullptr))
    out.push_back({hosts[o.member].first, hosts[o.member].second, std::move(o.ceilings)});
  return out;
}
}  // namespace

std::vector<FleetGroup> analyze_fleet(const std::vector<FleetMember>& members, const OutlierRule& rule) {
  std::map<std::string, FleetGroup> by_key;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const Fingerprint fp = fingerprint_of(members[i].profile);
    FleetGroup& g = by_key[fp.key()];
    if (g.members.empty()) g.fingerprint = fp;
    g.members.push_back(i);
  }
  // A profile without nvlink ceilings (the family skipped: one GPU, or no peer access), or of an earlier build that
  // did not record how many GPUs its run measured at once, joins the group that matches it otherwise, so its missing
  // nvlink ceilings are named there; where several match, the largest (ties: the one measured with more GPUs at
  // once, which a group measured with fewer is then set against, review 54; then own pairs).
  std::map<std::string, std::string> joins;  // key of a group lacking a field -> key of the group it joins
  for (const auto& [k, g] : by_key) {
    const bool no_scope = !g.fingerprint.nvlink_own_pairs, no_count = !g.fingerprint.measured_together;
    if (!no_scope && !no_count) continue;
    std::string target;
    std::size_t size = 0;
    bool own = false;
    int together = 0;
    for (const auto& [hk, h] : by_key) {
      if (hk == k || !((no_scope && h.fingerprint.nvlink_own_pairs) || (no_count && h.fingerprint.measured_together)))
        continue;
      Fingerprint f = h.fingerprint;  // with what this group lacks left out, this group's
      if (no_scope) f.nvlink_own_pairs.reset();
      if (no_count) f.measured_together.reset();
      if (f.key() != k) continue;
      const std::size_t n = h.members.size();
      const bool h_own = h.fingerprint.nvlink_own_pairs.value_or(false);
      const int h_together = no_count ? h.fingerprint.measured_together.value_or(0) : 0;
      if (n > size || (n == size && (h_together > together || (h_together == together && h_own && !own)))) {
        target = hk;
        size = n;
        own = h_own;
        together = h_together;
      }
    }
    if (!target.empty()) joins[k] = target;
  }
  for (const auto& [from, first] : joins) {
    std::string to = first;  // a group it joins may join another in turn (lacking the other field)
    for (auto next = joins.find(to); next != joins.end(); next = joins.find(to)) to = next->second;
    FleetGroup& into = by_key.at(to);
    const std::vector<std::size_t>& moved = by_key.at(from).members;
    into.members.insert(into.members.end(), moved.begin(), moved.end());
  }
  for (const auto& [from, to] : joins) by_key.erase(from);
  for (auto& [k, g] : by_key) {
    std::sort(g.members.begin(), g.members.end());
    // Joined by profiles that do not record the count, the group's count is not known for all: it is still the
    // count its peers are compared by (its recording members', review 53: dropped, a group differing only in it had
    // no difference left and no reference), but its label says so and its baseline claims none (review 52).
    if (g.fingerprint.measured_together)
      for (std::size_t i : g.members)
        if (!members[i].profile.gpus_measured_together) {
          g.fingerprint.measured_together_partial = true;
          break;
        }
  }
  // Outliers are found among the profiles as compared (a peer ceiling by its pair median, as `measure
  // --all-gpus` does); the statistics shown and a baseline's medians are of the ceilings as measured.
  // What the comparison reads of them: the ceilings' values and spreads, not the profiles' documents and details
  // (held whole, a fleet of 16,000 GPUs twice over would not fit in memory).
  std::vector<Profile> compared(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    for (const Ceiling& c : members[i].profile.ceilings) {
      Ceiling k;
      k.name = c.name;
      k.value = c.value;
      k.unit = c.unit;
      k.cv = c.cv;
      k.samples = c.samples;
      k.verified = c.verified;
      if (c.name.rfind("nvlink.", 0) == 0)
        if (const auto pairs = c.detail_number("p2p_median")) k.detail["p2p_median"] = *pairs;
      compared[i].ceilings.push_back(std::move(k));
    }
    compared[i] = with_pair_medians(std::move(compared[i]));
  }
  std::vector<FleetGroup> groups;
  for (auto& [k, g] : by_key) {
    std::vector<const Profile*> profiles, as_compared;
    for (std::size_t i : g.members) {
      profiles.push_back(&members[i].profile);
      as_compared.push_back(&compared[i]);
    }
    g.stats = ceiling_statistics(profiles);
    g.compared_stats = ceiling_statistics(as_compared);
    g.outliers = find_outliers(as_compared, g.compared_stats, rule, true, &g.unstable);
    g.z_comparisons = z_comparisons(as_compared, g.compared_stats, rule);
    g.z_threshold = z_threshold_for(rule, as_compared.size(), g.z_comparisons);
    g.own_spread = own_spread_for(rule, compared_values(as_compared, g.compared_stats, rule));
    add_population_splits(as_compared, rule, g.outliers, &g.unstable);
    g.hosts_below = find_hosts_below(profiles, as_compared, g.compared_stats, rule);
    // What its peers have and a member lacks, in a group that is compared: a ceiling at least min_members hold, or
    // half the group (then compared for nobody where fewer than min_members hold it, which the lacking GPUs' rows
    // say: review 90); one or two GPUs' extra ceiling is no row for every other GPU (review 92).
    for (const CeilingStats& st : g.stats) {
      if (profiles.size() < rule.min_members || st.n == profiles.size() ||
          (st.n < rule.min_members && 2 * st.n < profiles.size()))
        continue;
      const std::string too_few = st.n < rule.min_members ? "; held by " + std::to_string(st.n) + " of the group's " +
                                                                std::to_string(profiles.size()) +
                                                                ", too few to compare: judged for none"
                                                          : "";
      for (std::size_t mi = 0; mi < profiles.size(); ++mi) {
        const Profile& p = *profiles[mi];
        const Ceiling* c = p.find(st.name);
        if (c && c->unit == st.unit) continue;
        MissingCeiling m{mi, st.name, st.unit, false, "not in the profile, no reason recorded"};
        auto named = [&](const std::vector<Skipped>& v) -> const Skipped* {
          for (const Skipped& x : v)
            if (x.name == st.name) return &x;
          return nullptr;
        };
        if (const Skipped* e = named(p.errors)) {
          // A case a timeout or an interrupt cut short could not finish: not measured, as qualify has it.
          m.error = !cut_short_reason(e->reason);
          m.reason = (m.error ? "measurement failed: " : "not measured, the run was ") + e->reason;
        } else if (const Skipped* sk = named(p.skipped)) {
          m.reason = "not measured: " + sk->reason;
        } else if (c) {
          m.reason = "measured in " + c->unit + ", its peers in " + st.unit;
        }
        m.reason += too_few;
        g.missing.push_back(std::move(m));
      }
    }
    groups.push_back(std::move(g));
  }
  std::stable_sort(groups.begin(), groups.end(), [](const FleetGroup& a, const FleetGroup& b) {
    if (a.members.size() != b.members.size()) return a.members.size() > b.members.size();
    // Of one size, the one measured with more GPUs at once first: the other is set against it (review 52).
    const int an = a.fingerprint.measured_together.value_or(0), bn = b.fingerprint.measured_together.value_or(0);
    if (an != bn) return an > bn;
    return a.fingerprint.label() < b.fingerprint.label();
  });
  // Every group but the largest of its GPU model is set against that largest group, when it is large enough
  // (the first such in the sorted order): a group too small to compare within itself is judged only so, and
  // one large enough is configured unlike its model's fleet all the same (three GPUs capped at 500 W among
  // 700 W peers are not a fleet of their own), with its own outliers found within it as well.
  // `x` set against groups[ref]: its members' deviations from ref's medians, and the unstable ones apart.
  const auto set_against = [&](FleetGroup& x, std::size_t ref, const std::vector<std::string>& differences,
                               bool host_only, bool fewer_together) {
    x.peer_group = ref;
    x.differences = differences;
    x.host_only = host_only;
    x.fewer_together = fewer_together;
    std::vector<const Profile*> as_compared;
    for (std::size_t i : x.members) as_compared.push_back(&compared[i]);
    x.versus_peers = find_outliers(as_compared, groups[ref].compared_stats, rule, /*members_in_sample=*/false,
                                   &x.unstable_versus_peers);
    // Each list without the deviations `drop` names, and without the members left with none.
    const auto without = [](std::vector<Outlier>& list, const auto& drop) {
      for (Outlier& o : list)
        o.ceilings.erase(std::remove_if(o.ceilings.begin(), o.ceilings.end(),
                                        [&](const Deviation& d) { return drop(o, d); }),
                         o.ceilings.end());
      list.erase(std::remove_if(list.begin(), list.end(), [](const Outlier& o) { return o.ceilings.empty(); }),
                 list.end());
    };
    if (host_only)  // the GPU's own ceilings only: another server's host path is not the GPU's deficit
      for (std::vector<Outlier>* list : {&x.versus_peers, &x.unstable_versus_peers})
        without(*list, [](const Outlier&, const Deviation& d) { return host_bound_ceiling(d.ceiling); });
    // Confidential computing on one side only (or in another mode), whatever else differs: its host<->device copies
    // and launches went through encrypted bounce buffers, another measurement of those (and of the peer copies where
    // either side encrypted NVLink); the rest is compared as ever.
    const Fingerprint& xf = x.fingerprint;
    const Fingerprint& rf = groups[ref].fingerprint;
    if (xf.confidential_computing_text() != rf.confidential_computing_text()) {
      const bool nvlink = xf.nvlink_encrypted() || rf.nvlink_encrypted();
      for (std::vector<Outlier>* list : {&x.versus_peers, &x.unstable_versus_peers})
        without(*list, [nvlink](const Outlier&, const Deviation& d) {
          return confidential_computing_bound_ceiling(d.ceiling, nvlink);
        });
    }
    // A ceiling its own group has listed already (judged, or unstable there) is not listed twice.
    without(x.unstable_versus_peers, [&](const Outlier& o, const Deviation& d) {
      return listed(x.outliers, o.member, d.ceiling, d.unit) || listed(x.unstable, o.member, d.ceiling, d.unit);
    });
    // Within its spread of its own group's median, beyond it of its peers': judged against the peers, not also
    // unstable in the group (as a split's judged side is), so each ceiling has one reference.
    without(x.unstable, [&](const Outlier& o, const Deviation& d) {
      return listed(x.versus_peers, o.member, d.ceiling, d.unit) != nullptr;
    });
  };
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    FleetGroup& g = groups[gi];
    g.too_small = g.members.size() < rule.min_members;
    for (std::size_t pi = 0; pi < groups.size(); ++pi) {
      const FleetGroup& peers = groups[pi];
      if (peers.members.size() < rule.min_members || !peers.fingerprint.same_model(g.fingerprint)) continue;
      if (&peers == &g) break;  // the model's largest group: the others are set against it
      const std::vector<std::string> differences = g.fingerprint.differences(peers.fingerprint);
      auto is = [](const char* field) {
        return [field](const std::string& d) { return d.rfind(field, 0) == 0; };
      };
      // GPUs measured at once share the node's power, cooling and host links, which can only lower what each
      // reaches: a group measured with more at once than its peers is measured otherwise, and so is a larger node
      // measured all at once (its "GPUs visible" goes with the count); one measured with fewer can be set against
      // them (its shortfall is its own) (review 51). A node that sees fewer GPUs than its peers is set up otherwise
      // whatever it measured at once: a GPU may be missing from it (review 52).
      const auto& mine_n = g.fingerprint.measured_together;
      const auto& peers_n = peers.fingerprint.measured_together;
      const bool more_together = mine_n && peers_n && *mine_n > *peers_n;
      const bool fewer_together = mine_n && peers_n && *mine_n < *peers_n;
      const bool larger_node = g.fingerprint.gpus_visible && peers.fingerprint.gpus_visible &&
                               *g.fingerprint.gpus_visible > *peers.fingerprint.gpus_visible;
      const auto together = [&](const std::string& d) {
        return is("GPUs measured together")(d) || (more_together && larger_node && is("GPUs visible")(d));
      };
      // How it was measured (the NVLink scope, another cuBLAS or ceilings release, more GPUs at once, confidential
      // computing's encrypted copies and launches): not a node set up otherwise. Set against its peers for another
      // difference besides, a group with confidential computing on one side only is compared without its copies and
      // launches (set_against).
      const auto measured = [&](const std::string& d) {
        return is("NVLink pairs")(d) || is("cuBLAS")(d) || is("ceilings")(d) || is("confidential computing")(d) ||
               (together(d) && more_together);
      };
      // Another server model, or fewer GPUs at once (with or without another way of measuring): not a node set up
      // otherwise, and set against its peers on its GPUs' own ceilings.
      const auto compared_anyway = [&](const std::string& d) { return is("host CPU")(d) || (together(d) && fewer_together); };
      const bool own_ceilings_only =
          std::any_of(differences.begin(), differences.end(), compared_anyway) &&
          std::all_of(differences.begin(), differences.end(),
                      [&](const std::string& d) { return compared_anyway(d) || measured(d); });
      const bool host_only = own_ceilings_only && std::any_of(differences.begin(), differences.end(), is("host CPU"));
      // One that differs only in how it was measured (its nvlink ceilings over its own pairs or every pair of the
      // node, another cuBLAS or ceilings release, more of its node's GPUs measured at once) is a way of
      // measuring, not a node set up otherwise: no finding, and no reference either (a GEMM of another cuBLAS is
      // not slower hardware). Too small to be compared within itself, it is not judged. So is one in servers of
      // another CPU, or measured with fewer GPUs at once, measured by another release or with more GPUs at once:
      // the GPU's own ceilings it would be set against are the ones another release, or a shared power and cooling
      // budget, moves.
      const bool own_ceilings_moved = more_together || std::any_of(differences.begin(), differences.end(), [&](const std::string& d) {
        return is("cuBLAS")(d) || is("ceilings")(d);
      });
      // (No differences at all is no way of measuring: never "measured differently ()", review 53.)
      if ((!differences.empty() && std::all_of(differences.begin(), differences.end(), measured)) ||
          (own_ceilings_only && own_ceilings_moved)) {
        g.measured_unlike = pi;
        g.differences = differences;
        // Measured with more GPUs at once and otherwise alike (its NVLink scope aside): no reference for it, but it
        // is one for the largest group, measured with fewer, whose shortfall against it is its own: a fleet measured
        // mostly one GPU per run, all 20% slow, beside a node measured all at once had passed (review 54).
        const bool count_alone = more_together && std::all_of(differences.begin(), differences.end(), [&](const std::string& d) {
          return together(d) || is("NVLink pairs")(d);
        });
        FleetGroup& largest = groups[pi];
        if (count_alone && !g.too_small && !largest.peer_group && !largest.split_with)
          set_against(largest, gi, largest.fingerprint.differences(g.fingerprint), /*host_only=*/false,
                      /*fewer_together=*/true);
        break;
      }
      // As large as the largest and in other servers: no reference between them either way. Measured with fewer at
      // once, the direction says which is the reference (groups of one size are sorted more-at-once first).
      if (host_only && g.members.size() == peers.members.size()) break;
      if (!g.too_small && !own_ceilings_only) {
        // A group as large as the largest: no reference between them (which half is "unlike" would be the
        // label's alphabet), but the model is set up two ways, and that is named.
        if (g.members.size() == peers.members.size()) {
          g.split_with = pi;
          g.differences = differences;
          break;
        }
      }
      set_against(g, pi, differences, host_only, own_ceilings_only && fewer_together);
      break;
    }
  }
  return groups;
}

json gpu_identity(const FleetMember& m) {
  return {{"path", m.path},
          {"host", m.profile.hostname},
          {"index", m.profile.device.index},
          {"uuid", m.profile.device.uuid},
          {"pci_bus_id", m.profile.device.pci_bus_id}};
}

std::vector<TwoWayPartner> two_way_partners(const std::vector<FleetGroup>& groups, std::size_t gi) {
  std::vector<TwoWayPartner> out;
  for (std::size_t pi = 0; pi < groups.size(); ++pi)
    if (pi != gi && ((groups[gi].split_with && *groups[gi].split_with == pi) ||
                     (groups[pi].split_with && *groups[pi].split_with == gi)))
      out.push_back({pi, groups[gi].fingerprint.differences(groups[pi].fingerprint)});
  return out;
}

FleetFindings count_findings(const std::vector<FleetGroup>& groups) {
  FleetFindings f;
  std::set<std::size_t> split;  // groups of a model set up two ways in equal numbers, both sides
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    if (groups[gi].split_with) split.insert({gi, *groups[gi].split_with});
  for (std::size_t gi : split) f.two_ways += groups[gi].members.size();
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const FleetGroup& g = groups[gi];
    f.outliers += g.outliers.size();
    f.hosts_below += g.hosts_below.size();
    for (const MissingCeiling& m : g.missing) f.missing_failed += m.error ? 1 : 0;
    const bool deficits_only = g.host_only || g.fewer_together;  // only its GPUs found slower are findings
    if (g.peer_group && deficits_only) f.below_peers += g.versus_peers.size();
    else if (g.peer_group) f.unlike_peers += g.members.size();
    else if (g.too_small) f.not_judged += g.members.size();
    // A GPU unstable within its group and against its peers counts once, and not at all where it is judged an
    // outlier on another ceiling, configured unlike its peers or in a model configured two ways (it is counted
    // there; its unstable ceilings are still listed).
    std::set<std::size_t> judged, unstable;
    for (const std::vector<Outlier>* list : {&g.outliers, &g.versus_peers})
      for (const Outlier& o : *list) judged.insert(o.member);
    if ((g.peer_group && !deficits_only) || split.count(gi))  // every member counted under unlike_peers or two_ways
      for (std::size_t m = 0; m < g.members.size(); ++m) judged.insert(m);
    for (const std::vector<Outlier>* list : {&g.unstable, &g.unstable_versus_peers})
      for (const Outlier& o : *list)
        if (!judged.count(o.member)) unstable.insert(o.member);
    f.unstable += unstable.size();
  }
  return f;
}

FleetHealth fleet_health(const std::vector<FleetMember>& members, const Rules& rules) {
  FleetHealth h;
  h.rules_origin = rules.origin;
  // The rules' ceiling checks: their datasheet fractions and limits, what a GPU can attain at most, and their
  // per-ceiling health checks (a number that failed its verification, a measurement under a HW/thermal
  // slowdown). The health section's checks are the ones below; which ceilings must be there is the groups' to say.
  Rules ceiling_rules = rules;
  ceiling_rules.required.clear();
  ceiling_rules.health = HealthRules::none();
  ceiling_rules.health.verification = rules.health.verification;
  ceiling_rules.health.slowdown = rules.health.slowdown;
  // Peer access is judged from the peer ceilings' detail (pairs left out for want of it), not the health section:
  // qualify's to run (review 111: fleet had left it out, and a node whose GPUs could not reach each other passed).
  ceiling_rules.health.peer_access = rules.health.peer_access;
  // A rule on a family this build does not know and no profile holds is misspelt ("hmb.copy"): bad input, as qualify
  // has it, before anything is judged (review 48: qualify's refusal, caught per profile, had dropped every ceiling
  // check of every GPU, and the fleet passed).
  std::vector<std::pair<std::string, std::string>> named;  // rule name, where in the rules
  for (const std::string& n : rules.required) named.emplace_back(n, "required: " + n);
  for (const auto& [n, rule] : rules.ceilings) named.emplace_back(n, "ceilings." + n);
  for (const auto& [n, where] : named)
    if (!members.empty() && std::none_of(members.begin(), members.end(), [&, n = n](const FleetMember& m) {
          return rule_family_known(n, m.profile);
        }))
      throw unknown_rule_family(n, where, members.front().profile, /*fleet=*/true);
  // A limit on a known family's ceiling that no profile holds ("hbm.cpy") judged no GPU, and the fleet passed with
  // a line blaming health sections (review 90): said by name, the run incomplete.
  for (const std::string& n : rules.named)
    if (!members.empty() && std::none_of(members.begin(), members.end(), [&, n = n](const FleetMember& m) {
          return holds_ceiling(m.profile, n);
        }))
      h.rules_unheld.push_back(rule_on_no_profile(n, "ceilings." + n, members.front().profile));
  for (std::size_t i = 0; i < members.size(); ++i) {
    std::vector<Check> checks;
    try {
      checks = profile_health_checks(members[i].profile, rules.health);
    } catch (const InputError&) {  // a malformed health section: not judged, never a pass
      checks.clear();
      Check c;
      c.status = CheckStatus::kIncomplete;
      checks.push_back(std::move(c));
    }
    FleetHealthFault f{i, {}};
    bool incomplete = false;
    for (Check& c : checks) {
      if (c.rule == "same GPU") h.other_gpu.push_back(i);  // the section belongs to another GPU: none of this one
      if (c.status == CheckStatus::kFail) f.failed.push_back(std::move(c));
      else if (c.status == CheckStatus::kIncomplete) incomplete = true;
    }
    // Below the rules' fraction of its datasheet: a fault whatever its peers read, so a fleet slow as a whole
    // (half its GPUs 20% slow, its median with them) is not judged by its own median alone. Past what the GPU can
    // attain: a timing or counting fault, which no median names (it is above the others). A peer ceiling is
    // judged by the GPU's pair median, as it is compared: its slowest pair would blame every node-mate of one GPU
    // with a bad link.
    // A rule on a newer family that this profile does not hold (measured by an older ceilings): that rule is not
    // judged for it, and its other checks are.
    Rules own_rules = ceiling_rules;
    const auto set_fraction = [&](const Check& c) {
      const auto it = rules.ceilings.find(c.subject);
      return c.rule == "datasheet fraction" && it != rules.ceilings.end() && !it->second.fraction_is_default;
    };
    for (auto it = own_rules.ceilings.begin(); it != own_rules.ceilings.end();)
      if (rule_family_known(it->first, members[i].profile)) {
        ++it;
      } else {
        it = own_rules.ceilings.erase(it);
        incomplete = true;
      }
    try {
      for (Check& c : qualify(with_pair_medians(members[i].profile), nullptr, own_rules).checks) {
        const bool limit = c.rule == "minimum" || c.rule == "maximum";
        if (c.status == CheckStatus::kFail &&
            (c.rule == "datasheet fraction" || c.rule == "plausible" || limit || c.rule == "verified" ||
             c.rule == "HW/thermal slowdown" || c.rule == "peer access"))
          f.failed.push_back(std::move(c));
        // A limit the rules set that could not be judged (the ceiling not measured or misspelt, a spread past
        // max_cv): counted as not judged in full, as qualify calls it incomplete; a fraction the file set too, not
        // only a min or max (review 90).
        else if (c.status == CheckStatus::kIncomplete && (limit || c.rule == "rule applies" || set_fraction(c)))
          incomplete = true;
      }
    } catch (const InputError&) {  // rules qualify cannot apply to this profile (a unit it records otherwise):
      incomplete = true;           // its ceilings are not judged, never a pass
    }
    // A failed measurement fails, as in qualify; a case a timeout or an interrupt cut short could not be judged.
    // A run stopped between two families (Profile::run_was_stopped) left the rest not measured; a family that
    // crashed while the later ones ran is a failed measurement (its errors), not a cut.
    bool cut = members[i].profile.run_was_stopped();
    Check errors;
    errors.subject = "profile";
    errors.rule = "measurement errors";
    errors.status = CheckStatus::kFail;
    for (const Skipped& e : members[i].profile.errors) {
      if (cut_short_reason(e.reason)) {
        cut = true;
        continue;
      }
      errors.reason += (errors.reason.empty() ? "" : "; ") + e.name + ": " + e.reason;
    }
    // Unless the rules turn verification off, as qualify then passes them (review 90).
    if (!errors.reason.empty() && rules.health.verification) f.failed.push_back(std::move(errors));
    if (cut) h.cut_short.push_back(i);
    if (!health_nvml_library(members[i].profile).empty()) h.other_nvml.push_back(i);
    if (!f.failed.empty()) h.faults.push_back(std::move(f));
    else if (incomplete) ++h.incomplete;
  }
  return h;
}

std::vector<std::string> read_host_list(const std::string& path) {
  std::string text = read_text_file(path);
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // a byte-order mark an editor saved
  std::vector<std::string> hosts;
  std::set<std::string> seen;
  std::size_t line_no = 0, from = 0;
  while (from < text.size()) {
    const std::size_t nl = text.find('\n', from);
    std::string line = text.substr(from, nl == std::string::npos ? std::string::npos : nl - from);
    from = nl == std::string::npos ? text.size() : nl + 1;
    ++line_no;
    const auto first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    line = line.substr(first, last - first + 1);
    // Host names are letters, digits, '-', '.' (and '_', which some sites use): anything else (a space between two
    // names, a non-breaking or zero-width space, a control character) would be a name no node reports.
    const bool plain = std::all_of(line.begin(), line.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
             c == '_';
    });
    if (!plain)
      throw InputError("'" + path + "' line " + std::to_string(line_no) + ": " + json(printable_text(line)).dump(-1, ' ', true) +
                       " is not one host name (letters, digits, '-', '.', '_'; one a line, as `scontrol show "
                       "hostnames` prints them)");
    // A DNS name is at most 253 characters (review 99: a 1 MB line was taken for one host, and every report held it).
    constexpr std::size_t kMaxHostName = 253;
    if (line.size() > kMaxHostName)
      throw InputError("'" + path + "' line " + std::to_string(line_no) + ": a host name of " +
                       std::to_string(line.size()) + " characters (\"" + line.substr(0, 40) +
                       "...\"), longer than any host name can be (" + std::to_string(kMaxHostName) + ")");
    if (seen.insert(line).second) hosts.push_back(line);
  }
  if (hosts.empty()) throw InputError("'" + path + "' names no host");
  return hosts;
}

HostCheck check_hosts(const FleetInput& in, const std::string& list, const std::vector<std::string>& expected) {
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const auto first_label = [](const std::string& s) { return s.substr(0, s.find('.')); };
  // The names of one side, whole and by their first label (and which are bare: no domain).
  struct Names {
    std::set<std::string> whole, labels, bare;
    void add(const std::string& name, const std::string& label) {
      whole.insert(name);
      labels.insert(label);
      if (name == label) bare.insert(name);
    }
    bool has(const std::string& name, const std::string& label) const {
      return whole.count(name) || (name == label ? labels.count(name) : bare.count(label)) > 0;
    }
  };
  Names read, listed;
  std::vector<std::string> read_hosts;  // in the order read, once each
  const auto add_read = [&](const std::string& host) {
    const std::string h = lower(host);
    if (host.empty() || read.whole.count(h)) return;
    read.add(h, first_label(h));
    read_hosts.push_back(host);
  };
  for (const FleetMember& m : in.members) add_read(m.profile.hostname);
  for (const FleetSuperseded& s : in.superseded) add_read(s.host);
  for (const std::string& h : in.summary_hosts) add_read(h);
  for (const std::string& e : expected) listed.add(lower(e), first_label(lower(e)));
  HostCheck out;
  out.list = printable_text(list);
  out.expected = expected.size();
  for (const std::string& e : expected)
    if (!read.has(lower(e), first_label(lower(e)))) out.missing.push_back(e);
  for (const std::string& h : read_hosts)
    if (!listed.has(lower(h), first_label(lower(h)))) out.not_listed.push_back(h);
  std::sort(out.not_listed.begin(), out.not_listed.end());
  return out;
}

std::vector<const FleetNodeFinding*> node_findings_not_named(const FleetInput& input,
                                                             const std::vector<FleetGroup>& groups) {
  std::set<std::string> named, compared;  // compared: in a group large enough to be judged within itself
  for (const FleetGroup& g : groups) {
    for (const auto* list : {&g.outliers, &g.unstable, &g.versus_peers, &g.unstable_versus_peers})
      for (const Outlier& o : *list) named.insert(input.members[g.members[o.member]].profile.device.uuid);
    if (!g.too_small)
      for (std::size_t i : g.members) compared.insert(input.members[i].profile.device.uuid);
  }
  std::vector<const FleetNodeFinding*> out;
  for (const FleetNodeFinding& f : input.node_below_peers)
    if (compared.count(f.uuid) && !named.count(f.uuid)) out.push_back(&f);
  return out;
}

json fleet_to_json(const FleetInput& input, const std::vector<FleetGroup>& groups, const OutlierRule& rule,
                   const FleetHealth& health, const std::optional<HostCheck>& hosts) {
  json skipped = json::array();
  for (const FleetSkip& s : input.skipped) skipped.push_back({{"path", s.path}, {"reason", s.reason}});
  json unfinished = json::array();
  for (const FleetUnfinished& u : input.unfinished)
    unfinished.push_back({{"host", u.host},
                          {"index", u.index >= 0 ? json(u.index) : json(nullptr)},
                          {"uuid", u.uuid},
                          {"pci_bus_id", u.pci_bus_id},
                          {"state", u.state},
                          {"reason", u.reason},
                          {"partial_compared", u.partial_compared},
                          {"summary", u.summary}});
  json node_only = json::array();
  for (const FleetNodeFinding* f : node_findings_not_named(input, groups))
    node_only.push_back({{"host", f->host},
                         {"index", f->index >= 0 ? json(f->index) : json(nullptr)},
                         {"uuid", f->uuid},
                         {"pci_bus_id", f->pci_bus_id},
                         {"ceilings", f->ceilings},
                         {"summary", f->summary}});
  json gs = json::array();
  const FleetFindings found = count_findings(groups);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const FleetGroup& g = groups[gi];
    json stats = json::array();
    for (const CeilingStats& s : g.stats)
      stats.push_back({{"ceiling", s.name}, {"unit", s.unit}, {"n", s.n}, {"median", s.median},
                       {"mad", s.mad}, {"min", s.min}, {"max", s.max}});
    // `reference`: the median a deviation that no split made is against (a peer group's, where not the group's).
    auto outliers_json = [&](const std::vector<Outlier>& list, const std::string& reference = "the group median") {
      json outs = json::array();
      for (const Outlier& o : list) {
        const FleetMember& m = input.members[g.members[o.member]];
        json cs = json::array();
        for (const Deviation& d : o.ceilings) {
          json rules = json::array();
          if (d.by_z) rules.push_back("z");
          if (d.by_margin) rules.push_back("margin");
          if (d.by_split) rules.push_back("split");
          cs.push_back({{"ceiling", d.ceiling}, {"unit", d.unit}, {"value", d.value}, {"median", d.median},
                        {"reference", d.by_split ? "the better population's median" : reference},
                        {"mad", d.by_split ? json(nullptr) : json(d.mad)},
                        {"z", d.z ? json(*d.z) : json(nullptr)},
                        {"z_threshold", d.z_threshold > 0 ? json(d.z_threshold) : json(nullptr)},
                        {"deficit", d.deficit}, {"own_noise", d.own_noise},
                        {"own_spread_standard_errors", d.own_spread}, {"rules", rules},
                        {"majority_split", d.majority_split}});
        }
        json o_json = gpu_identity(m);
        o_json["ceilings"] = cs;
        outs.push_back(std::move(o_json));
      }
      return outs;
    };
    json outs = outliers_json(g.outliers);
    const std::string peers_median =
        g.peer_group ? "group " + std::to_string(*g.peer_group + 1) + "'s median" : std::string();
    gs.push_back({{"fingerprint", g.fingerprint.to_json()},
                  {"label", g.fingerprint.label()},
                  {"profiles", g.members.size()},
                  {"ceilings", stats},
                  {"z_comparisons", g.z_comparisons},
                  {"z_threshold", g.z_comparisons ? json(g.z_threshold) : json(nullptr)},
                  {"own_spread_standard_errors", g.own_spread},
                  {"outliers", outs},
                  {"unstable", outliers_json(g.unstable)}});
    {
      json below = json::array();
      for (const HostOutlier& h : g.hosts_below) {
        json gpus = json::array();
        for (std::size_t m : h.members) gpus.push_back(gpu_identity(input.members[g.members[m]]));
        json cs = json::array();
        for (const Deviation& d : h.ceilings)
          cs.push_back({{"ceiling", d.ceiling}, {"unit", d.unit}, {"host_median", d.value},
                        {"hosts_median", d.median}, {"mad", d.mad}, {"z", d.z ? json(*d.z) : json(nullptr)},
                        {"z_threshold", d.z_threshold > 0 ? json(d.z_threshold) : json(nullptr)},
                        {"deficit", d.deficit}, {"rules", [&] {
                           json r = json::array();
                           if (d.by_z) r.push_back("z");
                           if (d.by_margin) r.push_back("margin");
                           return r;
                         }()}});
        below.push_back({{"host", h.host}, {"gpus", gpus}, {"ceilings", cs}});
      }
      gs.back()["hosts_below"] = std::move(below);
    }
    json& gj = gs.back();
    json missing = json::array();
    for (const MissingCeiling& m : g.missing) {
      json mj = gpu_identity(input.members[g.members[m.member]]);
      mj["ceiling"] = m.ceiling;
      mj["unit"] = m.unit;
      mj["error"] = m.error;
      mj["reason"] = m.reason;
      missing.push_back(std::move(mj));
    }
    gj["missing"] = missing;
    gj["compared"] = !g.too_small;
    // A group compared within itself and measured unlike the model's largest group: which, and how (review 53).
    if (!g.too_small)
      gj["measured_unlike"] = g.measured_unlike && !g.peer_group
                                  ? json{{"group", *g.measured_unlike + 1}, {"differences", g.differences}}
                                  : json(nullptr);
    if (g.too_small) {
      json members = json::array();
      for (std::size_t i : g.members) members.push_back(gpu_identity(input.members[i]));
      gj["not_compared"] = {
          {"reason", std::to_string(g.members.size()) + " profile(s) in this fingerprint group, " +
                         std::to_string(rule.min_members) + " needed to name outliers"},
          {"members", members},
          {"peer_group", g.peer_group ? json(*g.peer_group + 1) : json(nullptr)},
          {"measured_unlike_group", g.measured_unlike ? json(*g.measured_unlike + 1) : json(nullptr)},
          {"differences", g.differences},
          {"host_only", g.host_only},
          {"fewer_together", g.fewer_together},
          {"versus_peers", outliers_json(g.versus_peers, peers_median)},
          {"unstable", outliers_json(g.unstable_versus_peers, peers_median)}};
    } else if (g.peer_group) {
      json members = json::array();
      for (std::size_t i : g.members) members.push_back(gpu_identity(input.members[i]));
      gj["unlike_peers"] = {{"members", members},
                            {"peer_group", *g.peer_group + 1},
                            {"differences", g.differences},
                            {"host_only", g.host_only},
                            {"fewer_together", g.fewer_together},
                            {"versus_peers", outliers_json(g.versus_peers, peers_median)},
                            {"unstable", outliers_json(g.unstable_versus_peers, peers_median)}};
    }
    // Both sides of a model set up two ways in equal numbers (and every side of a three-way split).
    if (const auto partners = two_way_partners(groups, gi); !partners.empty()) {
      json with = json::array();
      for (const TwoWayPartner& t : partners) with.push_back({{"group", t.group + 1}, {"differences", t.differences}});
      gj["configured_two_ways"] = with;
    }
  }
  json baselines = json::array();
  for (const FleetSkip& s : input.baselines) baselines.push_back({{"path", s.path}, {"reason", s.reason}});
  json superseded = json::array();
  for (const FleetSuperseded& s : input.superseded)
    superseded.push_back({{"path", s.path}, {"uuid", s.uuid}, {"created", s.created}, {"newer_path", s.newer_path},
                          {"newer_created", s.newer_created}, {"host", s.host}, {"newer_host", s.newer_host}});
  json faults = json::array();
  for (const FleetHealthFault& f : health.faults) {
    const FleetMember& m = input.members[f.member];
    // As qualify writes a check (measured, threshold, unit, source), "check" naming the rule as fleet always has.
    json checks = checks_to_json(f.failed);
    for (std::size_t i = 0; i < f.failed.size(); ++i) {
      checks[i]["check"] = f.failed[i].rule;
      checks[i]["subject"] = f.failed[i].subject;
    }
    json f_json = gpu_identity(m);
    f_json["failed"] = checks;
    faults.push_back(std::move(f_json));
  }
  // The report's form: a consumer can tell it from earlier builds', which wrote none (and counted the GPUs now in
  // below_peer_group under configured_unlike_peers).
  return {{"schema", "ceilings.fleet/1"},
          {"read", input.members.size()},
          {"files", input.files},
          {"skipped", skipped},
          {"node_summaries", input.node_summaries},
          {"unfinished", unfinished},
          // Named below its node's peers by `measure --all-gpus`, not by the fleet (its group's median judges it).
          {"below_node_peers_only", node_only},
          {"hosts", hosts ? json{{"list", hosts->list},
                                 {"expected", hosts->expected},
                                 {"missing", hosts->missing},
                                 {"not_listed", hosts->not_listed}}
                          : json(nullptr)},
          {"superseded", superseded},
          {"baselines_set_aside", baselines},
          {"groups", gs},
          {"outliers", found.outliers},
          {"configured_unlike_peers", found.unlike_peers},
          {"below_peer_group", found.below_peers},
          {"configured_two_ways", found.two_ways},
          {"not_judged", found.not_judged},
          {"unstable", found.unstable},
          {"missing_ceilings_failed", found.missing_failed},
          {"hosts_below", found.hosts_below},
          {"health", {{"faults", faults}, {"incomplete", health.incomplete}, {"cut_short", [&] {
                        json list = json::array();
                        for (std::size_t i : health.cut_short) list.push_back(gpu_identity(input.members[i]));
                        return list;
                      }()},
                      {"other_gpu", [&] {
                        json list = json::array();
                        for (std::size_t i : health.other_gpu) list.push_back(gpu_identity(input.members[i]));
                        return list;
                      }()},
                      {"other_nvml", [&] {
                        json list = json::array();
                        for (std::size_t i : health.other_nvml) {
                          json g = gpu_identity(input.members[i]);
                          g["nvml_library"] = health_nvml_library(input.members[i].profile);
                          list.push_back(std::move(g));
                        }
                        return list;
                      }()},
                      {"rules", "qualify's health checks, measurement errors, datasheet fractions and ceiling "
                                "limits"},
                      {"rules_unheld", health.rules_unheld},
                      {"rules_origin", health.rules_origin}}},
          {"rule",
           {{"z_threshold", rule.z_threshold}, {"family_alpha", rule.family_alpha},
            {"z_threshold_rule", "the larger of z_threshold and Student's t quantile at family_alpha / comparisons "
                                 "with 0.4 n degrees of freedom (n: the ceiling's values)"},
            {"margin", rule.margin}, {"min_deficit_for_z", rule.min_deficit},
            {"min_members", rule.min_members}, {"own_spread_standard_errors", rule.own_spread},
            {"split_separation_mads", kSplitSeparation}, {"split_separation_from_gpus", kOtsuMinimum},
            {"z", "modified z-score 0.6745*(x-median)/MAD, oriented so that negative is worse"}}}};
}

Profile fleet_baseline(const FleetGroup& group, const std::vector<FleetMember>& members, std::size_t min_members,
                       const std::map<std::size_t, std::string>& excluded) {
  if (group.members.empty()) throw InputError("cannot write a baseline from an empty group");
  if (group.stats.empty())  // qualify --baseline refuses a baseline without ceilings: do not write one
    throw InputError("cannot write a baseline: the group's profiles hold no ceilings");
  // The members it is the median of: not those the fleet found something against.
  std::map<std::size_t, std::string> left_out_members = excluded;  // index into `members` -> why
  // A ceiling split in two with the worse side the majority has no reference a median could give (the three
  // that read high, or the five below them?): it is left out of the baseline, and its GPUs are not (review 90).
  std::set<std::string> split_ceilings;  // stat_key
  auto name_all = [&](const std::vector<Outlier>& list, const char* why) {
    for (const Outlier& o : list) {
      std::string ceilings;
      for (const Deviation& d : o.ceilings)
        if (d.majority_split)
          split_ceilings.insert(stat_key(d.ceiling, d.unit));
        else
          ceilings += (ceilings.empty() ? "" : ", ") + d.ceiling;
      if (!ceilings.empty()) left_out_members.emplace(group.members[o.member], std::string(why) + " (" + ceilings + ")");
    }
  };
  name_all(group.outliers, "an outlier");
  name_all(group.unstable, "unstable, not judged");
  // Measured with fewer GPUs at once than its peer group and below it: a shortfall of its own (review 54).
  if (group.fewer_together) name_all(group.versus_peers, "below a group measured with more GPUs at once");
  std::vector<std::size_t> kept;
  for (std::size_t i : group.members)
    if (!left_out_members.count(i)) kept.push_back(i);
  if (kept.size() < min_members)
    throw InputError("cannot write a baseline: " + std::to_string(kept.size()) + " of the group's " +
                     std::to_string(group.members.size()) + " profiles have nothing found against them (" +
                     std::to_string(group.members.size() - kept.size()) +
                     " are outliers, unstable, health faults, cut short or carry another GPU's health); a baseline is "
                     "the median of at least " +
                     std::to_string(min_members));
  std::vector<const Profile*> kept_profiles;
  for (std::size_t i : kept) kept_profiles.push_back(&members[i].profile);
  const std::vector<CeilingStats> stats = ceiling_statistics(kept_profiles);
  const Profile& first = members[kept.front()].profile;
  Profile b;
  b.created = utc_now_iso8601();
  b.tool_version = first.tool_version;
  b.tool_git = first.tool_git;
  b.tool_measurement_code = first.tool_measurement_code;  // one code for the group: part of its fingerprint
  b.quick = group.fingerprint.quick ? std::optional<bool>(true) : first.quick;  // so is a quick pass
  b.hostname = "fleet baseline";
  b.gpus_visible = first.gpus_visible;  // part of the group's fingerprint
  // So is how many were measured at once, where every member recorded it.
  if (!group.fingerprint.measured_together_partial) b.gpus_measured_together = group.fingerprint.measured_together;
  b.cpu = first.cpu;                    // so is the host's CPU model
  b.device = first.device;
  b.device.index = 0;
  b.device.uuid = "fleet-baseline (not one GPU)";
  b.device.board_uuid.clear();  // nor one board
  b.device.pci_bus_id = "";
  std::vector<std::string> too_few;  // ceilings fewer than min_members profiles hold: one GPU would set them
  for (const CeilingStats& s : stats) {
    if (s.n < min_members) {
      too_few.push_back(s.name + " (" + std::to_string(s.n) + ")");
      continue;
    }
    if (split_ceilings.count(stat_key(s.name, s.unit))) {
      too_few.push_back(s.name + " (split in two, the worse side the group's majority)");
      continue;
    }
    Ceiling c;
    c.name = s.name;
    c.unit = s.unit;
    c.value = s.median;
    std::vector<double> cvs, pair_medians;
    std::optional<double> scope_device;  // a peer ceiling's NVLink scope: part of the group's fingerprint
    std::size_t throttled = 0;
    for (std::size_t i : kept)  // the values the median was taken over: verified ones only
      if (const Ceiling* m = members[i].profile.find(s.name); m && m->unit == s.unit && m->verified) {
        cvs.push_back(m->cv);
        throttled += m->throttled ? 1 : 0;
        if (!c.datasheet) c.datasheet = m->datasheet;
        if (const auto pm = m->detail_number("p2p_median")) pair_medians.push_back(*pm);
        if (!scope_device) scope_device = m->detail_number("scope_device");
      }
    c.cv = median(cvs);  // the typical in-run spread; the fleet spread is detail.fleet_mad
    c.samples = static_cast<std::int64_t>(s.n);
    c.verified = true;
    c.throttled = false;
    c.detail = {{"benchmark", "fleet median"}, {"fleet_profiles", s.n}, {"fleet_mad", s.mad},
                {"fleet_min", s.min}, {"fleet_max", s.max}, {"fleet_throttled", throttled}};
    // A peer ceiling's pair medians too: qualify sets a GPU's median pair against it, to say where the slowest
    // pair's other GPU may be the slow one (the baseline's value is the members' slowest pairs).
    if (pair_medians.size() >= min_members) c.detail["p2p_median"] = median(pair_medians);
    if (scope_device) c.detail["scope_device"] = *scope_device;  // else its fingerprint reads "NVLink pairs ?"
    b.ceilings.push_back(std::move(c));
  }
  if (b.ceilings.empty())
    throw InputError("cannot write a baseline: no ceiling is held by " + std::to_string(min_members) +
                     " or more of the group's profiles");
  json doc = profile_to_json(b);
  json left_out_list = json::array();
  for (const auto& [i, why] : left_out_members)
    if (std::find(group.members.begin(), group.members.end(), i) != group.members.end())
      left_out_list.push_back({{"path", members[i].path}, {"reason", why}});
  doc["baseline"] = {{"source", "ceilings fleet"},
                     {"profiles", kept.size()},
                     {"group_profiles", group.members.size()},
                     {"excluded", left_out_list},
                     {"fingerprint", group.fingerprint.to_json()},
                     {"statistic", "per ceiling median over the group's profiles the fleet found nothing against"}};
  // Left out, with the count of profiles that hold each: a median of fewer would be one or two GPUs' values.
  doc["baseline"]["left_out"] = too_few;
  doc["note"] = "fleet baseline: medians of measured profiles, not one GPU's measurement; a ceiling's samples are "
                "the profiles its median was taken over";
  b.raw = doc;
  return b;
}

}  // namespace ceilings
