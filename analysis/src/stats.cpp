// Sample statistics.
#include "ceilings/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ceilings {

double mean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  if (std::isfinite(sum)) return sum / static_cast<double>(v.size());
  // An infinite or NaN value decides the mean: NaN with a NaN or infinities of both signs, else that infinity
  // (the sum may be NaN where finite values overflowed into the opposite infinity; the running mean below would
  // take inf - inf).
  const bool pos = std::any_of(v.begin(), v.end(), [](double x) { return std::isinf(x) && x > 0; });
  const bool neg = std::any_of(v.begin(), v.end(), [](double x) { return std::isinf(x) && x < 0; });
  if (std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); }) || (pos && neg))
    return std::numeric_limits<double>::quiet_NaN();
  if (pos || neg) return pos ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  // The sum overflowed (values near the double's limit): a running mean stays within the values' range.
  double m = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) m += (v[i] - m) / static_cast<double>(i + 1);
  return m;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  // NaN has no place in an order (sorting with it is undefined, and the answer would depend on where it
  // stood): a sample set holding one has no percentile. So has a NaN p.
  if (std::isnan(p) || std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); }))
    return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  // Exactly a sample, or two equal neighbours: no interpolation (an infinite pair would give inf - inf = NaN).
  if (frac == 0.0 || v[lo] == v[hi]) return v[lo];
  // Weighted, not v[lo] + (v[hi] - v[lo]) * frac: the difference of two huge values of opposite sign overflows.
  return v[lo] * (1.0 - frac) + v[hi] * frac;
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
