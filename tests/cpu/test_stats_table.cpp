// Sample statistics and table rendering.
#include <gtest/gtest.h>
#include <locale.h>

#include <cmath>
#include <limits>

#include "ceilings/stats.hpp"
#include "ceilings/table.hpp"

using namespace ceilings;

TEST(Stats, MedianMeanCv) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  // An infinite sample (a failed timing) beside the middle one leaves the median finite.
  EXPECT_DOUBLE_EQ(median({1, 2, std::numeric_limits<double>::infinity()}), 2.0);
  EXPECT_DOUBLE_EQ(mean({1, 2, 3, 4}), 2.5);
  // stddev of {2,4,4,4,5,5,7,9} with n-1 is sqrt(32/7).
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_NEAR(stddev(v), std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_NEAR(coefficient_of_variation(v), std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
  EXPECT_DOUBLE_EQ(coefficient_of_variation({5}), 0.0);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
}

TEST(Stats, MadAndPercentile) {
  EXPECT_DOUBLE_EQ(median_absolute_deviation({1, 1, 2, 2, 4, 6, 9}), 1.0);
  EXPECT_DOUBLE_EQ(percentile({10, 20, 30, 40, 50}, 25), 20.0);
  EXPECT_DOUBLE_EQ(percentile({10, 20}, 50), 15.0);
}

// Extremes: an order with NaN in it has no middle (the answer depended on where the NaN stood); two infinite
// neighbours are not inf - inf; two huge values of opposite sign average to 0, not inf; a sum that overflows
// still has a mean.
TEST(Stats, ExtremeSamples) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(median({1, nan, 3})));
  EXPECT_TRUE(std::isnan(median({nan, 1, 3})));
  EXPECT_TRUE(std::isnan(percentile({1, 2, 3}, nan)));
  EXPECT_EQ(median({inf, inf}), inf);
  EXPECT_DOUBLE_EQ(median({-1.7e308, 1.7e308}), 0.0);
  EXPECT_DOUBLE_EQ(mean({1.5e308, 1.5e308}), 1.5e308);
  EXPECT_DOUBLE_EQ(coefficient_of_variation({1e308, 1e308}), 0.0);
  // An infinite sample makes the mean infinite, not NaN (the overflow fallback took inf - inf).
  EXPECT_EQ(mean({1, inf, 1}), inf);
  EXPECT_EQ(mean({1, -inf}), -inf);
  EXPECT_TRUE(std::isnan(mean({inf, -inf})));
  EXPECT_TRUE(std::isnan(mean({1, nan})));
  EXPECT_EQ(mean({1.7e308, 1.7e308, -inf}), -inf);  // the finite part overflows the other way
}

// measure()'s stopping rule and the reason it records: converged before capped before out of time, and never on
// fewer samples than a cv needs or the minimum asks.
TEST(Stats, SamplingStop) {
  SamplingRule rule;  // 10 to 100 samples, cv 0.5%, 1 s
  const std::vector<double> steady(10, 1.0);
  EXPECT_EQ(sampling_stop(steady, 0.1, rule), SamplingStop::kConverged);
  // Below the minimum: on, however steady and however late (the budget stops only past the minimum).
  const std::vector<double> nine(9, 1.0);
  EXPECT_EQ(sampling_stop(nine, 0.1, rule), SamplingStop::kContinue);
  EXPECT_EQ(sampling_stop(nine, 5.0, rule), SamplingStop::kContinue);
  // Ten samples alternating 1 and 1.1: mean 1.05, sample stddev 0.0527 (sqrt(10 * 0.05^2 / 9)), cv 5.0%.
  std::vector<double> noisy;
  for (int i = 0; i < 10; ++i) noisy.push_back(i % 2 ? 1.1 : 1.0);
  EXPECT_EQ(sampling_stop(noisy, 0.5, rule), SamplingStop::kContinue);
  EXPECT_EQ(sampling_stop(noisy, 1.0, rule), SamplingStop::kTimeBudget);  // at the budget: stops
  rule.target_cv = 0.06;
  EXPECT_EQ(sampling_stop(noisy, 1.0, rule), SamplingStop::kConverged);  // converged wins over the budget
  rule.target_cv = 0.005;
  rule.max_samples = 10;
  EXPECT_EQ(sampling_stop(noisy, 0.1, rule), SamplingStop::kSampleCap);
  EXPECT_EQ(sampling_stop(steady, 0.1, rule), SamplingStop::kSampleCap);  // 10 to 10: a fixed count
  rule.min_samples = 5;
  EXPECT_EQ(sampling_stop(steady, 0.1, rule), SamplingStop::kConverged);  // converged at the cap: said so
  rule.min_samples = 10;
  // A cap (5) below the minimum (10) stops at the cap.
  rule.max_samples = 5;
  EXPECT_EQ(sampling_stop(std::vector<double>(4, 1.0), 9.0, rule), SamplingStop::kContinue);
  EXPECT_EQ(sampling_stop(std::vector<double>(5, 1.0), 0.0, rule), SamplingStop::kSampleCap);
  // A GEMM burst: exactly 5 (minimum and maximum), however steady: its count decided, not its spread.
  rule.min_samples = 5;
  EXPECT_EQ(sampling_stop(std::vector<double>(4, 1.0), 9.0, rule), SamplingStop::kContinue);
  EXPECT_EQ(sampling_stop(std::vector<double>(5, 1.0), 0.0, rule), SamplingStop::kSampleCap);
  rule.min_samples = 10;
  // A minimum of 1 still takes two (one sample's cv reads 0, "converged"); a NaN sample never converges.
  rule = SamplingRule{1, 100, 0.005, 1.0};
  EXPECT_EQ(sampling_stop({1.0}, 5.0, rule), SamplingStop::kContinue);
  EXPECT_EQ(sampling_stop({1.0, 1.0}, 0.0, rule), SamplingStop::kConverged);
  EXPECT_EQ(sampling_stop({1.0, std::nan("")}, 0.0, rule), SamplingStop::kContinue);
  EXPECT_EQ(sampling_stop({1.0, std::nan("")}, 1.0, rule), SamplingStop::kTimeBudget);

  EXPECT_EQ(sampling_stop_name(1), "cv_converged");
  EXPECT_EQ(sampling_stop_name(2), "sample_cap");
  EXPECT_EQ(sampling_stop_name(3), "time_budget");
  EXPECT_EQ(sampling_stop_name(4), "window");
  for (double bad : {0.0, 5.0, 1.5, -1.0, std::nan("")}) EXPECT_FALSE(sampling_stop_name(bad)) << bad;
  EXPECT_EQ(sampling_stop_named("time_budget"), SamplingStop::kTimeBudget);
  EXPECT_EQ(sampling_stop_named("window"), SamplingStop::kWindow);
  for (const char* bad : {"", "continue", "Time_budget", "3"}) EXPECT_FALSE(sampling_stop_named(bad)) << bad;
}

// Student's t against values computed to 30 digits with mpmath (tables give the first two: t(0.975, 10) = 2.228,
// t(0.995, 3) = 5.841); the far tail is where the fleet's thresholds for thousands of comparisons live.
TEST(Stats, StudentT) {
  EXPECT_NEAR(student_t_upper_tail(4.0, 10.0), 0.00125916631237, 1e-14);
  EXPECT_NEAR(student_t_upper_tail(0.0, 7.0), 0.5, 1e-15);
  EXPECT_NEAR(student_t_upper_tail(-4.0, 10.0), 1 - 0.00125916631237, 1e-14);
  const struct {
    double p, df, t;
  } known[] = {{0.025, 10, 2.22813885199},       {0.005, 3, 5.84090930973},        {1e-4, 10, 5.69382010146},
               {4.2e-5, 9.6, 6.49177751937},     {2.4e-7, 1638.4, 5.05444541778},  {1e-6, 200, 4.89730210283},
               {1e-9, 1.2, 12714093.2809},       {0.05, 1, 6.31375151468}};
  for (const auto& k : known) {
    EXPECT_NEAR(student_t_upper_quantile(k.p, k.df), k.t, 1e-9 * k.t) << "p " << k.p << ", df " << k.df;
    EXPECT_NEAR(student_t_upper_tail(k.t, k.df), k.p, 1e-9 * k.p) << "p " << k.p << ", df " << k.df;
  }
  // Many degrees of freedom: the normal distribution's quantile (1e-7: 5.19933758219).
  EXPECT_NEAR(student_t_upper_quantile(1e-7, 1e7), 5.19933758219, 1e-5);
  EXPECT_NEAR(student_t_upper_quantile(0.975, 10), -2.22813885199, 1e-9);
  EXPECT_TRUE(std::isnan(student_t_upper_quantile(0.0, 10)));
  EXPECT_TRUE(std::isnan(student_t_upper_quantile(1.0, 10)));
  EXPECT_TRUE(std::isnan(student_t_upper_quantile(0.01, 0)));
  EXPECT_TRUE(std::isnan(student_t_upper_tail(1.0, -1)));
}

TEST(Table, RendersEveryFormat) {
  Table t;
  t.columns = {"ceiling", "value"};
  t.right_aligned = {false, true};
  t.add_row({"hbm.copy", "4.31 TB/s"});
  t.add_row({"a,b \"q\"", "1"});
  EXPECT_EQ(render(t, Format::kTable),
            "ceiling       value\n"
            "--------  ---------\n"
            "hbm.copy  4.31 TB/s\n"
            "a,b \"q\"           1\n");
  EXPECT_EQ(render(t, Format::kCsv), "ceiling,value\nhbm.copy,4.31 TB/s\n\"a,b \"\"q\"\"\",1\n");
  EXPECT_EQ(render(t, Format::kMarkdown),
            "| ceiling | value |\n|---|---:|\n| hbm.copy | 4.31 TB/s |\n| a,b \"q\" | 1 |\n");
  // A pipe, a backslash and an HTML-looking name stay text in a GitHub markdown table (review 94).
  Table odd;
  odd.columns = {"name"};
  odd.right_aligned = {false};
  odd.add_row({"a\\|b <gpu>"});
  EXPECT_EQ(render(odd, Format::kMarkdown), "| name |\n|---|\n| a\\\\\\|b &lt;gpu&gt; |\n");
  const json j = json::parse(render(t, Format::kJson));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["value"], "4.31 TB/s");
}

// Columns line up by terminal columns: a CJK character takes two, a combining accent none (by the C library's
// wcwidth where a UTF-8 locale exists), so a point named in Japanese or with an accent does not shift the rest.
TEST(Table, AlignsWideAndCombiningCharactersByColumns) {
  if (!newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr)) &&
      !newlocale(LC_CTYPE_MASK, "C.utf8", static_cast<locale_t>(nullptr)))
    GTEST_SKIP() << "no C.UTF-8 locale here: widths are counted in code points";
  Table t;
  t.columns = {"point", "x"};
  t.add_row({"\xe6\xbc\xa2\xe5\xad\x97", "1"});  // two CJK ideographs: 4 columns
  t.add_row({"cafe\xcc\x81", "2"});                 // "cafe" + U+0301 COMBINING ACUTE: 4 columns
  t.add_row({"abcd", "3"});
  EXPECT_EQ(render(t, Format::kTable),
            "point  x\n"
            "-----  -\n"
            "\xe6\xbc\xa2\xe5\xad\x97   1\n"
            "cafe\xcc\x81   2\n"
            "abcd   3\n");
}

TEST(Table, UnknownFormatIsBadInput) {
  EXPECT_EQ(parse_format("markdown"), Format::kMarkdown);
  EXPECT_THROW(parse_format("xml"), InputError);
}
