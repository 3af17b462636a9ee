// Binning a sustained window's chunks and telemetry readings into a time series.
#include "ceilings/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <regex>

#include "ceilings/stats.hpp"

namespace ceilings {

std::vector<TimelineBin> build_timeline(const std::vector<TimedChunk>& chunks, const std::vector<TimedReading>& readings,
                                        double window_s, double min_bin_s, int max_bins) {
  if (!(window_s > 0) || !std::isfinite(window_s) || !(min_bin_s > 0) || max_bins < 1) return {};
  const double width = std::max(min_bin_s, window_s / max_bins);
  // Whole bins, the remainder going to the last one (a sustained run drains its queue past the window).
  const int bins = std::max(1, static_cast<int>(std::lround(window_s / width)));
  auto bin_of = [&](double t) { return static_cast<int>(std::clamp(std::floor(t / width), 0.0, bins - 1.0)); };

  std::vector<double> work(static_cast<std::size_t>(bins), 0.0), gpu_s(static_cast<std::size_t>(bins), 0.0);
  std::vector<int> count(static_cast<std::size_t>(bins), 0);
  std::vector<std::vector<double>> sm(static_cast<std::size_t>(bins)), power(static_cast<std::size_t>(bins)),
      instant(static_cast<std::size_t>(bins));
  std::vector<std::vector<EnergyReading>> energy(static_cast<std::size_t>(bins));
  for (const TimedChunk& c : chunks) {
    if (!(c.seconds > 0) || !std::isfinite(c.end_s)) continue;
    const auto b = static_cast<std::size_t>(bin_of(c.end_s));
    work[b] += c.amount;
    gpu_s[b] += c.seconds;
    count[b] += 1;
  }
  for (const TimedReading& r : readings) {
    if (!std::isfinite(r.t_s)) continue;
    const auto b = static_cast<std::size_t>(bin_of(r.t_s));
    if (r.sm_clock_hz) sm[b].push_back(*r.sm_clock_hz);
    if (r.power_w) power[b].push_back(*r.power_w);
    if (r.power_instant_w) instant[b].push_back(*r.power_instant_w);
    energy[b].push_back({r.t_s, r.energy_mj});
  }
  std::vector<TimelineBin> out;
  for (int b = 0; b < bins; ++b) {
    const auto i = static_cast<std::size_t>(b);
    if (count[i] == 0) continue;
    TimelineBin bin;
    bin.start_s = b * width;
    bin.end_s = b + 1 == bins ? window_s : (b + 1) * width;
    bin.rate = work[i] / gpu_s[i];
    bin.chunks = count[i];
    if (!sm[i].empty()) bin.sm_clock_hz = median(sm[i]);
    if (!power[i].empty()) bin.power_w = median(power[i]);
    if (!instant[i].empty()) bin.power_instant_w = median(instant[i]);
    if (const auto f = energy_between_changes(energy[i], 0.5 * width)) bin.power_mean_w = f->mean_w;
    out.push_back(bin);
  }
  return out;
}

std::optional<EnergyFigure> energy_between_changes(const std::vector<EnergyReading>& readings, double min_interval_s,
                                                   int min_changes) {
  struct Change {
    double t_s;
    std::uint64_t mj;
  };
  std::vector<Change> seen;  // the first value, then each reading where the counter moved
  for (const EnergyReading& r : readings) {
    if (!r.mj || !std::isfinite(r.t_s)) return std::nullopt;  // no figure rather than one over a part
    if (!seen.empty() && *r.mj < seen.back().mj) return std::nullopt;
    if (seen.empty() || *r.mj != seen.back().mj) seen.push_back({r.t_s, *r.mj});
  }
  const int changes = static_cast<int>(seen.size()) - 1;
  if (changes < std::max(2, min_changes)) return std::nullopt;
  const Change& from = seen[1];
  const Change& to = seen.back();
  EnergyFigure f;
  f.interval_s = to.t_s - from.t_s;
  if (!(f.interval_s > 0) || f.interval_s < min_interval_s) return std::nullopt;
  f.joules = static_cast<double>(to.mj - from.mj) * 1e-3;
  f.mean_w = f.joules / f.interval_s;
  return f;
}

std::vector<std::pair<std::string, double>> timeline_counters(const std::vector<TimelineBin>& bins) {
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t k = 0; k < bins.size(); ++k) {
    const std::string p = "timeline_" + std::to_string(k) + "_";
    const TimelineBin& b = bins[k];
    out.emplace_back(p + "start_s", b.start_s);
    out.emplace_back(p + "end_s", b.end_s);
    out.emplace_back(p + "rate", b.rate);
    if (b.sm_clock_hz) out.emplace_back(p + "sm_clock_hz", *b.sm_clock_hz);
    if (b.power_w) out.emplace_back(p + "power_w", *b.power_w);
    if (b.power_instant_w) out.emplace_back(p + "power_instant_w", *b.power_instant_w);
    if (b.power_mean_w) out.emplace_back(p + "power_mean_w", *b.power_mean_w);
  }
  return out;
}

std::optional<std::pair<int, std::string>> parse_timeline_counter(const std::string& key) {
  static const std::regex form("^timeline_(0|[1-9][0-9]{0,3})_(start_s|end_s|rate|sm_clock_hz|power_w|power_instant_w|power_mean_w)$");
  std::smatch m;
  if (!std::regex_match(key, m, form)) return std::nullopt;
  return std::make_pair(std::stoi(m[1].str()), m[2].str());
}

}  // namespace ceilings
