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

namespace {
// The continued fraction of the regularized incomplete beta function I_x(a, b), evaluated by the modified
// Lentz method; it converges fast for x < (a + 1) / (a + b + 2).
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1.0, d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0)), h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double step = m * (b - m) * x / ((a - 1.0 + m2) * (a + m2));  // the even term
    d = 1.0 / guard(1.0 + step * d);
    c = guard(1.0 + step / c);
    h *= d * c;
    step = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1.0 + m2));  // the odd term
    d = 1.0 / guard(1.0 + step * d);
    c = guard(1.0 + step / c);
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-15) break;
  }
  return h;
}

double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0.0;
  if (x >= 1) return 1.0;
  const double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) * incomplete_beta_fraction(a, b, x) / a;
  return 1.0 - std::exp(log_front) * incomplete_beta_fraction(b, a, 1.0 - x) / b;
}
}  // namespace

double student_t_upper_tail(double t, double df) {
  if (!(df > 0) || std::isnan(t)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  // P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2); each tail holds half of it.
  const double two_tailed = regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
  return t >= 0 ? two_tailed / 2.0 : 1.0 - two_tailed / 2.0;
}

double student_t_upper_quantile(double p, double df) {
  if (!(df > 0) || !(p > 0) || !(p < 1)) return std::numeric_limits<double>::quiet_NaN();
  if (p > 0.5) return -student_t_upper_quantile(1.0 - p, df);
  // Bisection: the tail falls monotonically in t. Bracket first (a df near 0 puts the quantile far out).
  double lo = 0.0, hi = 1.0;
  while (student_t_upper_tail(hi, df) > p) {
    lo = hi;
    hi *= 2.0;
    if (std::isinf(hi)) return hi;
  }
  for (int i = 0; i < 2000 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = lo + (hi - lo) / 2.0;
    (student_t_upper_tail(mid, df) > p ? lo : hi) = mid;
  }
  return lo + (hi - lo) / 2.0;
}

double normal_upper_quantile(double p) {
  if (!(p > 0) || !(p < 1)) return std::numeric_limits<double>::quiet_NaN();
  if (p > 0.5) return -normal_upper_quantile(1.0 - p);
  // P(Z > z) = erfc(z / sqrt 2) / 2 falls monotonically in z: bisection (p down to 1e-300 lies below z = 38).
  double lo = 0.0, hi = 40.0;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = lo + (hi - lo) / 2.0;
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > p ? lo : hi) = mid;
  }
  return lo + (hi - lo) / 2.0;
}

SamplingStop sampling_stop(const std::vector<double>& samples, double elapsed_s, const SamplingRule& rule) {
  const auto n = static_cast<long long>(samples.size());
  const bool enough = n >= std::max(2, rule.min_samples);
  // A fixed count (a GEMM burst: its minimum is its maximum) stops at it whatever the cv: "converged" would say
  // the spread decided when it did not.
  const bool fixed = rule.max_samples <= std::max(2, rule.min_samples);
  // A NaN cv (a NaN sample) is not at or under any target: such a run stops at its cap or its budget.
  if (!fixed && enough && coefficient_of_variation(samples) <= rule.target_cv) return SamplingStop::kConverged;
  if (n >= rule.max_samples) return SamplingStop::kSampleCap;
  if (enough && elapsed_s >= rule.budget_s) return SamplingStop::kTimeBudget;
  return SamplingStop::kContinue;
}

std::optional<std::string> sampling_stop_name(double code) {
  if (code == static_cast<double>(SamplingStop::kConverged)) return "cv_converged";
  if (code == static_cast<double>(SamplingStop::kSampleCap)) return "sample_cap";
  if (code == static_cast<double>(SamplingStop::kTimeBudget)) return "time_budget";
  if (code == static_cast<double>(SamplingStop::kWindow)) return "window";
  return std::nullopt;
}

std::optional<SamplingStop> sampling_stop_named(const std::string& name) {
  for (const SamplingStop stop :
       {SamplingStop::kConverged, SamplingStop::kSampleCap, SamplingStop::kTimeBudget, SamplingStop::kWindow})
    if (sampling_stop_name(static_cast<double>(stop)) == name) return stop;
  return std::nullopt;
}

}  // namespace ceilings
