// The harness's reporting path end to end through the real Google Benchmark library, with no device:
// report() / report_latency() counters on a manual-time case -> Google Benchmark's own JSON reporter (and
// the checkpoint reporter) -> the profile converter. Catches a counter, unit or time-base mismatch between
// what ceilings-bench writes and what the analysis reads. The measurements are synthetic (no GPU runs here),
// so this runs on every machine.
#include <gtest/gtest.h>

#include <cmath>

#include "ceilings/bench_json.hpp"
#include "harness/measure.hpp"
#include "support/bench_output.hpp"
#include "support/run_benchmarks.hpp"
#include "cli_runner.hpp"

namespace {

using ceilings::json;
namespace cb = ceilings::bench;

cb::Measurement synthetic(double median_s, double cv, bool telemetry) {
  cb::Measurement m;
  m.unit_seconds = {median_s * 0.99, median_s, median_s * 1.01};
  m.median_s = median_s;
  m.cv = cv;
  m.units_per_sample = 4;
  m.stopped_by = ceilings::SamplingStop::kTimeBudget;
  if (telemetry) {
    m.telemetry.available = true;
    m.telemetry.sm_clock_hz_median = 1.98e9;
    m.telemetry.sm_clock_hz_min = 1.965e9;
    m.telemetry.mem_clock_hz_median = 3.201e9;
    m.telemetry.power_w_median = 512;
    m.telemetry.power_w_max = 540;
    m.telemetry.temp_c_max = 51;
  }
  return m;
}

// hbm/copy: 8 GB per unit in 2 ms -> 4 TB/s.
void copy_case(benchmark::State& state) {
  const cb::Measurement m = synthetic(2e-3, 0.004, true);
  for (auto _ : state) state.SetIterationTime(m.median_s);
  state.counters["array_bytes"] = 2147483648.0;
  state.counters["block_threads"] = 256;
  // A counter named like one of Google Benchmark's own keys: GB's writer then puts "threads" twice in the
  // entry. ceilings-bench's counters avoid GB's names (BenchJson.NoBenchCounterTakesAGoogleBenchmarkKeyName),
  // and the reader still takes such output (the last value), as it did before duplicate keys were refused.
  state.counters["threads"] = 256;
  cb::report(state, m, cb::Amount::kBytes, 8e9, true);
}

// gemm/bf16: 2 * 8192^3 FLOP in 1.4 ms.
void gemm_case(benchmark::State& state) {
  const cb::Measurement m = synthetic(1.4e-3, 0.002, false);
  for (auto _ : state) state.SetIterationTime(m.median_s);
  cb::report(state, m, cb::Amount::kFlops, 2.0 * 8192.0 * 8192.0 * 8192.0, true);
}

// latency/launch: 2.2 us per launch.
void launch_case(benchmark::State& state) {
  const cb::Measurement m = synthetic(2.2e-6, 0.01, false);
  for (auto _ : state) state.SetIterationTime(m.median_s);
  cb::report_latency(state, m, true);
}

// A case whose output did not verify: report() throws; the case is an error, never a number.
void unverified_case(benchmark::State& state) {
  const cb::Measurement m = synthetic(2e-3, 0.004, false);
  for (auto _ : state) state.SetIterationTime(m.median_s);
  try {
    cb::report(state, m, cb::Amount::kBytes, 8e9, false, "12 of 1024 words wrong");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

TEST(ReportPath, CountersBecomeTheProfilesCeilingsWithTheirUnitsAndSpread) {
  const std::string dir = ceilings::test::scratch_dir("report_path");
  const std::string out = dir + "/bench.json", checkpoint = dir + "/bench.checkpoint.json";
  benchmark::ClearRegisteredBenchmarks();
  cb::configure(benchmark::RegisterBenchmark("hbm/copy/threads:256", copy_case));
  cb::configure(benchmark::RegisterBenchmark("gemm/bf16/m:8192", gemm_case));
  cb::configure(benchmark::RegisterBenchmark("latency/launch", launch_case));
  cb::configure(benchmark::RegisterBenchmark("hbm/triad/threads:256", unverified_case));
  benchmark::AddCustomContext(ceilings::kContextDevice, ceilings::test::h200_device_context().dump());
  const auto run = ceilings::test::run_registered_benchmarks(out, checkpoint);
  EXPECT_EQ(run.ran, 4u);
  EXPECT_EQ(run.checkpoint_problem, "");

  for (const std::string& path : {out, checkpoint}) {
    // The text really holds the key twice in the copy's entry: GB's "threads": 1 in every entry, then the
    // copy's counter.
    const std::string text = ceilings::read_text_file(path);
    auto count = [&](const std::string& key) {
      std::size_t n = 0;
      for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) ++n;
      return n;
    };
    EXPECT_EQ(count("\"threads\":"), count("\"run_name\":") + 1) << path;
    const ceilings::Profile p = ceilings::profile_from_benchmark_json(ceilings::read_benchmark_json_file(path));
    ASSERT_EQ(p.ceilings.size(), 3u) << path;
    const ceilings::Ceiling* copy = p.find("hbm.copy");
    ASSERT_TRUE(copy);
    EXPECT_EQ(copy->unit, "B/s");
    EXPECT_NEAR(copy->value, 4e12, 4e12 * 1e-9);  // amount over the median, in SI units
    EXPECT_DOUBLE_EQ(copy->cv, 0.004);
    EXPECT_EQ(copy->samples, 3);
    EXPECT_EQ(copy->detail.at("stopped_by"), "time_budget");  // the harness's code, named by the converter
    EXPECT_TRUE(copy->verified);
    EXPECT_FALSE(copy->throttled);
    ASSERT_TRUE(copy->telemetry.available);
    EXPECT_DOUBLE_EQ(copy->telemetry.sm_clock_hz, 1.98e9);
    EXPECT_DOUBLE_EQ(copy->telemetry.power_w, 512);
    EXPECT_EQ(copy->detail.at("threads"), 256);
    EXPECT_EQ(copy->detail.at("block_threads"), 256);
    EXPECT_DOUBLE_EQ(copy->detail.at("sm_clock_min_hz").get<double>(), 1.965e9);
    EXPECT_DOUBLE_EQ(copy->detail.at("array_bytes").get<double>(), 2147483648.0);
    EXPECT_DOUBLE_EQ(*copy->datasheet, 4.8e12);

    const ceilings::Ceiling* gemm = p.find("gemm.bf16");
    ASSERT_TRUE(gemm);
    EXPECT_EQ(gemm->unit, "FLOP/s");
    EXPECT_NEAR(gemm->value, 2.0 * 8192.0 * 8192.0 * 8192.0 / 1.4e-3, 1e3);
    EXPECT_FALSE(gemm->telemetry.available);

    const ceilings::Ceiling* launch = p.find("latency.launch");
    ASSERT_TRUE(launch);
    EXPECT_EQ(launch->unit, "s");
    EXPECT_DOUBLE_EQ(launch->value, 2.2e-6);

    ASSERT_EQ(p.errors.size(), 1u);
    EXPECT_EQ(p.errors[0].name, "hbm.triad");
    EXPECT_NE(p.errors[0].reason.find("12 of 1024 words wrong"), std::string::npos) << p.errors[0].reason;
  }
}

}  // namespace
