// Robust statistics over samples: median, mean, coefficient of variation, median absolute
// deviation. Shared by the benchmark harness (timing samples) and the fleet analysis.
#pragma once
#include <optional>
#include <string>
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
// The standard normal distribution's z above which a fraction p (0 < p < 1) lies (NaN outside that range).
double normal_upper_quantile(double p);

// The benchmark harness's stopping rule, applied after each timed sample, and why it stopped (recorded with
// every ceiling, so a reader can tell a spread that converged from one the budget cut short). In order:
// - converged: at least max(2, min_samples) samples (a cv needs two) and their cv at or under target_cv;
// - sample cap: max_samples taken (a GEMM burst's fixed count, whose minimum is its maximum: never
//   "converged", or the cap on a spread that never settled);
// - time budget: at least max(2, min_samples) samples and elapsed_s at or past budget_s.
// kContinue while none holds. kWindow is no outcome of this rule: a sustained run's samples are the chunks of a
// fixed window, however they spread. The codes are the `stopped_by` counter ceilings-bench writes.
enum class SamplingStop { kContinue = 0, kConverged = 1, kSampleCap = 2, kTimeBudget = 3, kWindow = 4 };
struct SamplingRule {
  int min_samples = 10;
  int max_samples = 100;
  double target_cv = 0.005;
  double budget_s = 1.0;
};
SamplingStop sampling_stop(const std::vector<double>& samples, double elapsed_s, const SamplingRule& rule);
// The name a profile's detail gives a stop ("cv_converged", "sample_cap", "time_budget", "window"), from its counter
// value; nullopt for a value that is no stop's code (kContinue included: a run that stopped has a reason).
std::optional<std::string> sampling_stop_name(double code);
// The stop a profile's detail names; nullopt for a name that is none of them.
std::optional<SamplingStop> sampling_stop_named(const std::string& name);

}  // namespace ceilings
