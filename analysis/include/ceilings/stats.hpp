// Robust statistics over samples: median, mean, coefficient of variation, median absolute
// deviation. Shared by the benchmark harness (timing samples) and the fleet analysis.
#pragma once
#include <vector>

namespace ceilings {

double mean(const std::vector<double>& v);
double median(std::vector<double> v);            // 0 for an empty vector, NaN where a sample is NaN
double stddev(const std::vector<double>& v);      // sample standard deviation (n - 1)
double coefficient_of_variation(const std::vector<double>& v);  // stddev / mean; 0 when n < 2
double median_absolute_deviation(const std::vector<double>& v);  // unscaled MAD
double percentile(std::vector<double> v, double p);  // linear interpolation, p in [0, 100]; NaN in, NaN out

// Student's t distribution with `df` degrees of freedom (df > 0, not necessarily whole): the upper tail P(T > t),
// from the regularized incomplete beta function, and its inverse, the t above which a fraction p (0 < p < 1) lies.
// Accurate to about 1e-10 relative far into the tail (tested to p = 1e-9), where the fleet's many-comparison
// thresholds live. Arguments out of range give NaN (the caller checks its inputs).
double student_t_upper_tail(double t, double df);
double student_t_upper_quantile(double p, double df);

}  // namespace ceilings
