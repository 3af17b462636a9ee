// Sample statistics.
#include "ceilings/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ceilings {

double mean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  if (frac == 0.0) return v[lo];  // exactly a sample: no interpolation (an infinite neighbour would give NaN)
  return v[lo] + (v[hi] - v[lo]) * frac;
}

double median(std::vector<double> v) { return percentile(std::move(v), 50.0); }

double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  const double m = mean(v);
  double ss = 0.0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

double coefficient_of_variation(const std::vector<double>& v) {
  const double m = mean(v);
  return (v.size() < 2 || m == 0.0) ? 0.0 : stddev(v) / std::fabs(m);
}

double median_absolute_deviation(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  const double m = median(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - m));
  return median(std::move(dev));
}

}  // namespace ceilings
