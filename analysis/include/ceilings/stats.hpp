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

}  // namespace ceilings
