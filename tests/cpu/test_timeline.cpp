// The sustained window as a time series: binning chunks and readings (hand-computed values), the
// counters ceilings-bench reports it as, and their names read back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "ceilings/timeline.hpp"

namespace ceilings {
namespace {

TEST(Timeline, BinsChunksByWhenTheyEndedAndReadingsByWhenTheyWereTaken) {
  // 3.1 s: three bins of 1 s, the last one 1.1 s long (it takes the drain past the window).
  const std::vector<TimedChunk> chunks = {
      {0.5, 0.5, 500e12},   // bin 0: 1000 TFLOP/s
      {1.0, 0.5, 500e12},   // t = 1.0 starts bin 1
      {1.5, 0.5, 400e12},   // bin 1: 900e12 / 1.0 s
      {2.9, 1.0, 800e12},   // bin 2
      {3.1, 0.25, 200e12},  // past 3.0: still bin 2 -> 1000e12 / 1.25 s
  };
  const std::vector<TimedReading> readings = {
      {0.0, 1.98e9, 400.0, 640.0}, {0.6, 1.96e9, 690.0, 680.0}, {0.9, 1.94e9, 700.0, 720.0},  // bin 0
      {1.2, 1.80e9, std::nullopt, std::nullopt},  // bin 1: no power answered
      {2.5, std::nullopt, 700.0}, {3.2, 1.70e9, 700.0},  // bin 2 (3.2 past the end), no instantaneous power
  };
  const auto bins = build_timeline(chunks, readings, 3.1);
  ASSERT_EQ(bins.size(), 3u);
  EXPECT_DOUBLE_EQ(bins[0].start_s, 0.0);
  EXPECT_DOUBLE_EQ(bins[0].end_s, 1.0);
  EXPECT_DOUBLE_EQ(bins[0].rate, 1000e12);
  EXPECT_EQ(bins[0].chunks, 1);
  EXPECT_DOUBLE_EQ(*bins[0].sm_clock_hz, 1.96e9);
  EXPECT_DOUBLE_EQ(*bins[0].power_w, 690.0);
  EXPECT_DOUBLE_EQ(*bins[0].power_instant_w, 680.0);
  EXPECT_FALSE(bins[2].power_instant_w);
  EXPECT_DOUBLE_EQ(bins[1].rate, 900e12);
  EXPECT_EQ(bins[1].chunks, 2);
  EXPECT_DOUBLE_EQ(*bins[1].sm_clock_hz, 1.80e9);
  EXPECT_FALSE(bins[1].power_w);
  EXPECT_DOUBLE_EQ(bins[2].start_s, 2.0);
  EXPECT_DOUBLE_EQ(bins[2].end_s, 3.1);
  EXPECT_DOUBLE_EQ(bins[2].rate, 800e12);
  EXPECT_DOUBLE_EQ(*bins[2].sm_clock_hz, 1.70e9);
  EXPECT_DOUBLE_EQ(*bins[2].power_w, 700.0);
}

// The energy counter polled every 20 ms and refreshed every 100 ms: 700 W in the first second, 600 W in the
// second. Each bin's own power from the counter's changes inside it, where NVML's reading would lag.
TEST(Timeline, EachBinsPowerFromTheEnergyCounterWhereItWasFollowed) {
  std::vector<TimedReading> readings;
  for (int i = 0; i < 100; ++i) {
    const double t = i * 0.02;
    const double refreshed = std::floor(t / 0.1 + 1e-9) * 0.1;  // the counter as of its last refresh
    const double joules = refreshed <= 1.0 ? 700 * refreshed : 700 + 600 * (refreshed - 1.0);
    TimedReading r;
    r.t_s = t;
    r.power_w = 650;
    r.energy_mj = 1000000 + static_cast<std::uint64_t>(std::llround(joules * 1000));
    readings.push_back(r);
  }
  const auto bins = build_timeline({{0.5, 0.5, 1.0}, {1.5, 0.5, 1.0}}, readings, 2.0);
  ASSERT_EQ(bins.size(), 2u);
  ASSERT_TRUE(bins[0].power_mean_w);
  EXPECT_NEAR(*bins[0].power_mean_w, 700, 1e-6);
  ASSERT_TRUE(bins[1].power_mean_w);
  EXPECT_NEAR(*bins[1].power_mean_w, 600, 1e-6);
  EXPECT_DOUBLE_EQ(*bins[0].power_w, 650);  // NVML's reading, kept beside it
  readings[70].energy_mj.reset();  // a missed read at 1.4 s, in the second bin: no figure there
  const auto gap = build_timeline({{0.5, 0.5, 1.0}, {1.5, 0.5, 1.0}}, readings, 2.0);
  EXPECT_TRUE(gap[0].power_mean_w);
  EXPECT_FALSE(gap[1].power_mean_w);
}

TEST(Timeline, ALongWindowGetsWiderBinsAndEmptyBinsAreLeftOut) {
  // 120 s at most 30 bins: 4 s each. Chunks only in the first and the last bin.
  const auto bins = build_timeline({{1.0, 1.0, 10.0}, {119.0, 2.0, 10.0}}, {}, 120.0);
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_DOUBLE_EQ(bins[0].end_s, 4.0);
  EXPECT_DOUBLE_EQ(bins[1].start_s, 116.0);
  EXPECT_DOUBLE_EQ(bins[1].end_s, 120.0);
  EXPECT_DOUBLE_EQ(bins[1].rate, 5.0);
  EXPECT_FALSE(bins[1].sm_clock_hz);
}

TEST(Timeline, AShortWindowIsOneBin) {
  const auto bins = build_timeline({{0.2, 0.1, 1.0}, {0.4, 0.1, 3.0}}, {}, 0.4);
  ASSERT_EQ(bins.size(), 1u);
  EXPECT_DOUBLE_EQ(bins[0].end_s, 0.4);
  EXPECT_DOUBLE_EQ(bins[0].rate, 20.0);
}

TEST(Timeline, NothingToBinGivesNoBins) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(build_timeline({}, {}, 10.0).empty());
  EXPECT_TRUE(build_timeline({{1.0, 1.0, 1.0}}, {}, 0.0).empty());
  EXPECT_TRUE(build_timeline({{1.0, 1.0, 1.0}}, {}, nan).empty());
  EXPECT_TRUE(build_timeline({{1.0, 1.0, 1.0}}, {}, 10.0, 0.0).empty());
  EXPECT_TRUE(build_timeline({{1.0, 0.0, 1.0}, {nan, 1.0, 1.0}}, {}, 10.0).empty());  // no GPU time, no end
}

TEST(Timeline, CountersNameEachBinAndReadBack) {
  TimelineBin a;
  a.start_s = 0;
  a.end_s = 1;
  a.rate = 7.5e14;
  a.sm_clock_hz = 1.98e9;
  TimelineBin b = a;
  b.start_s = 1;
  b.end_s = 2.2;
  b.sm_clock_hz.reset();
  b.power_w = 700;
  b.power_mean_w = 690;
  b.power_instant_w = 695;
  const auto counters = timeline_counters({a, b});
  ASSERT_EQ(counters.size(), 10u);
  EXPECT_EQ(counters[2].first, "timeline_0_rate");
  EXPECT_DOUBLE_EQ(counters[2].second, 7.5e14);
  EXPECT_EQ(counters[3].first, "timeline_0_sm_clock_hz");
  EXPECT_EQ(counters[7].first, "timeline_1_power_w");
  EXPECT_EQ(counters[8].first, "timeline_1_power_instant_w");
  EXPECT_EQ(counters[9].first, "timeline_1_power_mean_w");
  for (const auto& [key, value] : counters) EXPECT_TRUE(parse_timeline_counter(key)) << key;
  EXPECT_EQ(*parse_timeline_counter("timeline_12_end_s"), std::make_pair(12, std::string("end_s")));
  for (const char* other : {"timeline_rate", "timeline_01_rate", "timeline_-1_rate", "timeline_1_bogus",
                            "xtimeline_1_rate", "timeline_1_rate_", "power_w"})
    EXPECT_FALSE(parse_timeline_counter(other)) << other;
}

// The energy counter refreshed every 0.1 s, polled every 0.02 s: whole refresh intervals, first change to last.
TEST(EnergyBetweenChanges, MeasuresWholeRefreshIntervals) {
  std::vector<EnergyReading> r;
  for (int i = 0; i <= 150; ++i) {  // 3 s; 70 W, counted in steps of 7 J
    const double t = i * 0.02;
    r.push_back({t, 1000000 + 7000ull * static_cast<unsigned long long>(std::floor(t / 0.1 + 1e-9))});
  }
  const auto f = energy_between_changes(r, 2.0);
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->interval_s, 2.9, 1e-9);  // 0.1 s (the first change) to 3.0 s (the last)
  EXPECT_NEAR(f->joules, 7.0 * 29, 1e-9);
  EXPECT_NEAR(f->mean_w, 70.0, 1e-9);
}

TEST(EnergyBetweenChanges, RefusesWhatItCannotTime) {
  const std::vector<EnergyReading> steady = {{0.0, 5000}, {1.0, 6000}, {2.0, 7000}, {3.0, 8000}};
  ASSERT_TRUE(energy_between_changes(steady, 2.0));
  EXPECT_DOUBLE_EQ(energy_between_changes(steady, 2.0)->mean_w, 1.0);
  EXPECT_FALSE(energy_between_changes(steady, 2.5));  // 1.0 s to 3.0 s: under the minimum
  EXPECT_FALSE(energy_between_changes({{0.0, 5000}, {1.0, 6000}, {3.0, 7000}}, 1.0));  // 2 changes
  EXPECT_FALSE(energy_between_changes({{0.0, 5000}, {1.0, 6000}, {2.0, std::nullopt}, {3.0, 8000}}, 1.0));
  EXPECT_FALSE(energy_between_changes({{0.0, 5000}, {1.0, 6000}, {2.0, 100}, {3.0, 8000}}, 1.0));  // reset
  EXPECT_FALSE(energy_between_changes({{0.0, 5000}, {1.0, 5000}, {2.0, 5000}, {3.0, 5000}}, 1.0));  // never moved
  EXPECT_FALSE(energy_between_changes({}, 1.0));
}

}  // namespace
}  // namespace ceilings
