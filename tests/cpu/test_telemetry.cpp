// Telemetry around a measurement, driven by the fake NVML: clocks, power and temperature summaries, the
// clock-event reasons with the readings under each kind of slowdown counted, NVML's violation time and
// the energy used over the window.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "ceilings/clock_events.hpp"
#include "ceilings/report.hpp"
#include "cli_runner.hpp"
#include "harness/device_uuid.hpp"
#include "harness/nvml.hpp"
#include "harness/telemetry.hpp"

namespace ceilings {
namespace {

using json = nlohmann::json;

TEST(ClockEvents, NamesEveryBitAndSaysOtherForUnknownOnes) {
  EXPECT_EQ(clock_events::names(0), "none");
  EXPECT_EQ(clock_events::names(clock_events::kSwPowerCap | clock_events::kHwThermalSlowdown),
            "sw_power_cap,hw_thermal_slowdown");
  EXPECT_EQ(clock_events::names(0x1 | (1ull << 40)), "gpu_idle,other");
  EXPECT_EQ(clock_events::names(0x1ff), "gpu_idle,applications_clocks_setting,sw_power_cap,hw_slowdown,sync_boost,"
                                        "sw_thermal_slowdown,hw_thermal_slowdown,hw_power_brake_slowdown,"
                                        "display_clock_setting");
}

TEST(ClockEvents, AMaskReadBackFromAProfileIsAWholeNumberInRange) {
  EXPECT_EQ(clock_events::from_number(68.0), 0x44u);
  EXPECT_EQ(clock_events::from_number(0.0), 0u);
  for (double bad : {-4.0, 4.5, 1.9e19, std::nan("")}) EXPECT_FALSE(clock_events::from_number(bad)) << bad;
}

TEST(ClockEvents, MasksSeparateTheWorkloadsPowerCapFromHardwareSlowdowns) {
  EXPECT_TRUE(clock_events::kSlowdownMask & clock_events::kSwPowerCap);
  EXPECT_FALSE(clock_events::kHardwareSlowdownMask & clock_events::kSwPowerCap);
  for (std::uint64_t bit : {clock_events::kHwSlowdown, clock_events::kSwThermalSlowdown,
                            clock_events::kHwThermalSlowdown, clock_events::kHwPowerBrakeSlowdown})
    EXPECT_TRUE(clock_events::kHardwareSlowdownMask & bit) << clock_events::names(bit);
  for (std::uint64_t bit : {clock_events::kGpuIdle, clock_events::kApplicationsClocksSetting,
                            clock_events::kSyncBoost, clock_events::kDisplayClockSetting})
    EXPECT_FALSE(clock_events::kSlowdownMask & bit) << clock_events::names(bit);
}

// The fake NVML loaded in this process with `values` as its script; the sampler polls once a minute, so a
// start and an immediate stop read exactly twice: each array's first element, then its second.
class TelemetryWithFakeNvml : public ::testing::Test {
 protected:
  // `script`: more of the fake's script (sm_clock_delay_ms: an SM clock query that slow).
  std::shared_ptr<nvml::Device> device(const json& values, const json& errors = json::object(),
                                       const json& fields = json::object(), const json& script = json::object()) {
    const std::string dir =
        test::scratch_dir(std::string("telemetry_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    json doc = {{"device_count", 1}, {"values", values}, {"errors", errors}, {"device", fields}};
    doc.update(script);
    std::ofstream(dir + "/script.json") << doc.dump();
    setenv(nvml::Library::kPathVariable, CEILINGS_FAKE_NVML, 1);
    setenv("CEILINGS_FAKE_NVML_SCRIPT", (dir + "/script.json").c_str(), 1);
    std::string why;
    lib_.reset();  // one fake NVML at a time: the old one's shutdown would end the new one's session
    lib_ = nvml::Library::open(&why);
    EXPECT_TRUE(lib_) << why;
    if (!lib_) return nullptr;
    auto d = lib_->device_by_index(0);
    EXPECT_TRUE(d.ok());
    return d.ok() ? std::make_shared<nvml::Device>(d.value) : nullptr;
  }
  bench::TelemetrySummary sample(const json& values) {
    bench::TelemetrySampler sampler(device(values), 60.0);
    sampler.start();
    return sampler.stop();
  }
  void TearDown() override {
    lib_.reset();
    unsetenv(nvml::Library::kPathVariable);
    unsetenv("CEILINGS_FAKE_NVML_SCRIPT");
  }
  std::shared_ptr<nvml::Library> lib_;
};

json loaded_gpu() {
  return {{"clocks.sm_mhz", {1500, 1980}},        {"clocks.mem_mhz", 3201},
          {"power.usage_mw", {400000, 690000}},   {"temperature.gpu_c", {50, 62}},
          {"clocks.event_reasons", {0x4, 0x44}},  {"throttle.power_ns", {1000000000ull, 1600000000ull}},
          {"throttle.thermal_ns", {0, 200000000}}};
}

// A window shorter than the polling period (a GEMM burst) gets its reading of the GPU at work from the measuring
// thread; the two edge readings, taken with the stream drained (an idle 123 W where the GEMMs draw 690 W), are
// then left out of the summary. A second call within the period reads nothing; none before start or after stop.
TEST_F(TelemetryWithFakeNvml, AReadingDuringTheWorkReplacesTheEdgeReadings) {
  json idle_work_idle = {{"clocks.sm_mhz", {1980, 1830, 1980}}, {"clocks.mem_mhz", 3201},
                         {"power.usage_mw", {123000, 690000, 124000}}, {"temperature.gpu_c", {40, 61, 45}},
                         {"clocks.event_reasons", {0x0, 0x4, 0x0}}};
  bench::TelemetrySampler sampler(device(idle_work_idle), 60.0);
  EXPECT_FALSE(sampler.read_during_work().has_value());  // not started: nothing
  sampler.start();
  // What it read is the sample's own: its clock and reasons (the burst's per-sample series, sample_sm_clock_hz_N).
  const auto work = sampler.read_during_work();
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->sm_hz, 1830e6);
  EXPECT_EQ(work->reasons, 0x4u);
  EXPECT_FALSE(sampler.read_during_work().has_value());  // within the period of the last: nothing
  const auto s = sampler.stop();
  EXPECT_FALSE(sampler.read_during_work().has_value());  // stopped: nothing
  ASSERT_TRUE(s.available);
  EXPECT_EQ(s.readings, 1);
  EXPECT_DOUBLE_EQ(s.sm_clock_hz_median, 1830e6);
  EXPECT_DOUBLE_EQ(s.power_w_median, 690);
  EXPECT_DOUBLE_EQ(s.temp_c_max, 61);
  EXPECT_TRUE(s.throttled);  // the power cap the work ran under, which neither edge saw
  EXPECT_EQ(s.reason_readings, 1);
  EXPECT_EQ(s.power_cap_readings, 1);
  EXPECT_EQ(sampler.timed_readings().size(), 3u);  // the time series keeps all three
  // The measuring thread's one reading, and how long it kept that thread from the next sample.
  EXPECT_EQ(s.work_readings, 1);
  EXPECT_GT(s.work_read_max_s, 0);
  EXPECT_LT(s.work_read_max_s, 1);
  // A new window starts counting again.
  sampler.start();
  EXPECT_EQ(sampler.stop().work_readings, 0);
}

// A short series that keeps each sample's clock reads at every sample, however close together (a GEMM burst's
// samples come every few ms: the period had left most without a clock, review 51).
TEST_F(TelemetryWithFakeNvml, EachSampleOfAShortSeriesGetsItsReading) {
  bench::TelemetrySampler sampler(device(loaded_gpu()), 60.0);
  sampler.start();
  for (int i = 0; i < 5; ++i) {
    const auto w = sampler.read_during_work(/*each_sample=*/true);
    ASSERT_TRUE(w.has_value()) << i;
    EXPECT_TRUE(w->sm_hz.has_value()) << i;
    EXPECT_TRUE(w->reasons.has_value()) << i;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(sampler.read_during_work().has_value());  // by the period, the last was too recent
  const auto s = sampler.stop();
  EXPECT_EQ(s.work_readings, 5);
  // The first was a full reading; the other four the clock and reasons alone (two queries, not six: review 55),
  // which the summary holds too, their reasons counted (review 58).
  EXPECT_EQ(s.readings, 5);
  EXPECT_EQ(s.reason_readings, 5);
  EXPECT_EQ(sampler.timed_readings().size(), 7u);  // and the two edges
}

// A hardware slowdown that only the clock-only readings of a short series saw still flags the window (review 58:
// the summary had held the one full reading, and a burst slowed by HW slowdown passed as not throttled).
TEST_F(TelemetryWithFakeNvml, AShortSeriesClockOnlyReadingsCountInTheSummary) {
  // Reads in order: start's edge, the first sample's full reading, then four clock-only ones, stop's edge.
  json values = loaded_gpu();
  values["clocks.sm_mhz"] = {1980, 1980, 1500, 1500, 1500, 1500, 1980};
  values["clocks.event_reasons"] = {0x0, 0x0, 0x8, 0x8, 0x8, 0x8, 0x0};
  bench::TelemetrySampler sampler(device(values), 60.0);
  sampler.start();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(sampler.read_during_work(/*each_sample=*/true, [] { return true; })) << i;
  const auto s = sampler.stop();
  EXPECT_TRUE(s.throttled);
  EXPECT_EQ(s.hw_slowdown_readings, 4);
  EXPECT_DOUBLE_EQ(s.sm_clock_hz_min, 1500e6);
  EXPECT_DOUBLE_EQ(s.power_w_median, 690);  // the full reading's: the clock-only ones add no power
}

// A reading the sample's work had ended before was partly of the GPU at rest: not the sample's (review 55: the
// reasons, read last of six, came after a 3 ms burst sample). A full reading still counts in the window's summary.
TEST_F(TelemetryWithFakeNvml, AReadingAfterTheWorkEndedIsNotTheSamples) {
  bench::TelemetrySampler sampler(device(loaded_gpu()), 60.0);
  sampler.start();
  int asked = 0;
  const auto ended = [&asked] {
    ++asked;
    return false;
  };
  EXPECT_FALSE(sampler.read_during_work(/*each_sample=*/true, ended).has_value());  // full, due
  EXPECT_FALSE(sampler.read_during_work(/*each_sample=*/true, ended).has_value());  // the clock alone
  EXPECT_EQ(asked, 2);
  EXPECT_TRUE(sampler.read_during_work(/*each_sample=*/true, [] { return true; }).has_value());
  const auto s = sampler.stop();
  EXPECT_EQ(s.work_readings, 3);
  // The full reading, whatever the sample's work did, and the clock-only one taken while it ran; not the one after.
  EXPECT_EQ(s.readings, 2);
}

// A short series' sample waits for a reading the polling thread has in flight and takes its own (review 52: it had
// returned nothing, leaving that sample without its clock). The fake's SM clock query takes 20 ms and the polling
// thread reads every 5 ms, so it is reading most of the time; without the wait most calls below read nothing.
TEST_F(TelemetryWithFakeNvml, ASampleWaitsForAReadingInFlight) {
  const auto d = device(loaded_gpu(), json::object(), json::object(), {{"sm_clock_delay_ms", 20}});
  ASSERT_TRUE(d);
  bench::TelemetrySampler sampler(d, 0.005);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the polling thread under way
  int read = 0;
  for (int i = 0; i < 8; ++i) read += sampler.read_during_work(/*each_sample=*/true).has_value() ? 1 : 0;
  auto s = sampler.stop();
  EXPECT_EQ(read, 8);
  EXPECT_EQ(s.work_readings, 8);
  EXPECT_LT(s.work_read_max_s, 1);
}

// Where the sample's work ended while it waited for the polling thread's reading, it takes none (review 58: one then
// only lengthened the gap before the next sample), and the wait counts in work_read_max_s (review 60). The SM clock
// query takes 60 ms; 20 ms after start() the polling thread (5 ms period) is 15 ms into its first reading.
TEST_F(TelemetryWithFakeNvml, AWaitTheWorkEndedDuringTakesNoReading) {
  const auto d = device(loaded_gpu(), json::object(), json::object(), {{"sm_clock_delay_ms", 60}});
  ASSERT_TRUE(d);
  bench::TelemetrySampler sampler(d, 0.005);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(sampler.read_during_work(/*each_sample=*/true, [] { return false; }).has_value());
  const auto s = sampler.stop();
  EXPECT_EQ(s.work_readings, 0);
  EXPECT_GE(s.work_read_max_s, 0.02);
}

// A wait for the polling thread's reading that runs out (a query slower than kMaxWaitForReadingMs) takes no reading,
// and the time it kept the measuring thread is counted (review 59: it had been lost).
TEST_F(TelemetryWithFakeNvml, AWaitThatRunsOutIsCounted) {
  const auto d = device(loaded_gpu(), json::object(), json::object(), {{"sm_clock_delay_ms", 300}});
  ASSERT_TRUE(d);
  bench::TelemetrySampler sampler(d, 0.001);
  sampler.start();  // its own edge reading takes 300 ms; the polling thread starts reading 1 ms after it
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(sampler.read_during_work(/*each_sample=*/true, [] { return true; }).has_value());
  const auto s = sampler.stop();
  EXPECT_EQ(s.work_readings, 0);
  EXPECT_GE(s.work_read_max_s, bench::TelemetrySampler::kMaxWaitForReadingMs * 1e-3 * 0.9);
}

// Read every period while the work runs: each read_during_work past the period takes one more.
TEST_F(TelemetryWithFakeNvml, ReadingsDuringTheWorkFollowThePeriod) {
  bench::TelemetrySampler sampler(device(loaded_gpu()), 0.05);
  sampler.start();
  for (int i = 0; i < 3; ++i) {
    sampler.read_during_work();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  const auto s = sampler.stop();
  const auto r = sampler.timed_readings();
  EXPECT_TRUE(std::is_sorted(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.t_s < b.t_s; }));
  EXPECT_GE(s.readings, 3);  // three from the work, and whatever the polling thread took
  EXPECT_GE(s.work_readings, 1);  // the calls the polling thread's own reading made redundant took none
  EXPECT_LE(s.work_readings, 3);
  EXPECT_EQ(static_cast<std::size_t>(s.readings), r.size() - 2);
}

TEST_F(TelemetryWithFakeNvml, SummarisesClocksPowerAndTemperature) {
  const auto s = sample(loaded_gpu());
  ASSERT_TRUE(s.available);
  EXPECT_EQ(s.readings, 2);
  EXPECT_DOUBLE_EQ(s.sm_clock_hz_median, 1740e6);
  EXPECT_DOUBLE_EQ(s.sm_clock_hz_min, 1500e6);
  EXPECT_DOUBLE_EQ(s.mem_clock_hz_median, 3201e6);
  EXPECT_DOUBLE_EQ(s.power_w_median, 545);
  EXPECT_DOUBLE_EQ(s.power_w_max, 690);
  EXPECT_DOUBLE_EQ(s.temp_c_max, 62);
  EXPECT_FALSE(s.power_instant_w_median);  // the script does not answer field 186
  EXPECT_GE(s.window_s, 0);
  EXPECT_LT(s.window_s, 30);  // a start and a stop, not the polling period
}

// nvmlDeviceGetTemperatureV (R565+) is asked first with its struct version; the deprecated call answers
// where it fails, and the first call's error stays when neither answers.
TEST_F(TelemetryWithFakeNvml, TemperatureFromTheVersionedCallWithTheDeprecatedOneAsFallback) {
  const json values = {{"temperature.gpu_c", {41, 42}}};
  auto only_versioned = device(values, {{"temperature_legacy", 26}});  // the old call removed (DEPRECATED)
  ASSERT_TRUE(only_versioned);
  auto t = only_versioned->temperature_c();
  ASSERT_TRUE(t.ok()) << "a wrong struct version or sensor answers an error here: code " << t.code;
  EXPECT_EQ(t.value, 41u);
  only_versioned.reset();
  lib_.reset();

  auto only_legacy = device(values, {{"temperature_v", 3}});
  ASSERT_TRUE(only_legacy);
  t = only_legacy->temperature_c();
  ASSERT_TRUE(t.ok()) << t.code;
  EXPECT_EQ(t.value, 41u);
  only_legacy.reset();
  lib_.reset();

  auto neither = device(values, {{"temperature_v", 3}, {"temperature_legacy", 26}});
  ASSERT_TRUE(neither);
  t = neither->temperature_c();
  EXPECT_FALSE(t.ok());
  EXPECT_TRUE(t.unsupported()) << t.code;
}

// The violation counters come from the field values NVML_FI_DEV_PERF_POLICY_* (74 + the policy) first; the
// deprecated nvmlDeviceGetViolationStatus answers where the fields fail; with neither, the field's error.
TEST_F(TelemetryWithFakeNvml, ViolationTimeFromFieldValuesWithTheDeprecatedCallAsFallback) {
  const json values = {{"throttle.power_ns", 1500000000ull}, {"throttle.thermal_ns", 7}};
  auto only_fields = device(values, {{"violation_status", 26}});  // the old call removed (DEPRECATED)
  ASSERT_TRUE(only_fields);
  auto t = only_fields->violation_time_ns(nvml::PerfPolicy::kPower);
  ASSERT_TRUE(t.ok()) << "a wrong field id or value type answers an error here: code " << t.code;
  EXPECT_EQ(t.value, 1500000000ull);
  t = only_fields->violation_time_ns(nvml::PerfPolicy::kThermal);
  ASSERT_TRUE(t.ok()) << t.code;
  EXPECT_EQ(t.value, 7ull);
  only_fields.reset();
  lib_.reset();

  auto only_old = device(values, {{"violation_fields", 3}});
  ASSERT_TRUE(only_old);
  t = only_old->violation_time_ns(nvml::PerfPolicy::kPower);
  ASSERT_TRUE(t.ok()) << t.code;
  EXPECT_EQ(t.value, 1500000000ull);
  only_old.reset();
  lib_.reset();

  auto neither = device(values, {{"violation_fields", 3}, {"violation_status", 26}});
  ASSERT_TRUE(neither);
  t = neither->violation_time_ns(nvml::PerfPolicy::kPower);
  EXPECT_FALSE(t.ok());
  EXPECT_TRUE(t.unsupported()) << t.code;
}

// nvmlDeviceGetP2PStatus with the NVLink index: status 0 is a pair connected by NVLink, any other status a
// pair that is not; a driver without an answer is "unsupported" (the peer family then cannot classify).
TEST_F(TelemetryWithFakeNvml, NvlinkPeerStatusFromP2PStatus) {
  auto d = device({{"p2p.nvlink_status", 0}});
  ASSERT_TRUE(d);
  auto r = d->nvlink_peer(*d);
  ASSERT_TRUE(r.ok()) << r.code;
  EXPECT_TRUE(r.value);
  d.reset();
  lib_.reset();
  d = device({{"p2p.nvlink_status", 5}});  // NVML_P2P_STATUS_NOT_SUPPORTED: no NVLink between them
  ASSERT_TRUE(d);
  r = d->nvlink_peer(*d);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value);
  d.reset();
  lib_.reset();
  d = device(json::object());
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->nvlink_peer(*d).unsupported());
}

// A link's far end: its kind, and for a GPU its PCI location read out of nvmlPciInfo_t (a layout error
// would read the bus id string's bytes as numbers).
TEST_F(TelemetryWithFakeNvml, NvlinkRemoteEndsFromTypeAndPciInfo) {
  auto d = device({{"nvlink.0.remote_type", 0},
                   {"nvlink.0.remote_domain", 2},
                   {"nvlink.0.remote_bus", 0x9a},
                   {"nvlink.0.remote_device", 3},
                   {"nvlink.1.remote_type", 2}});
  ASSERT_TRUE(d);
  auto t = d->nvlink_remote_type(0);
  ASSERT_TRUE(t.ok()) << t.code;
  EXPECT_EQ(t.value, nvml::NvLinkRemote::kGpu);
  auto pci = d->nvlink_remote_pci(0);
  ASSERT_TRUE(pci.ok()) << pci.code;
  EXPECT_EQ(pci.value.domain, 2u);
  EXPECT_EQ(pci.value.bus, 0x9au);
  EXPECT_EQ(pci.value.device, 3u);
  t = d->nvlink_remote_type(1);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.value, nvml::NvLinkRemote::kSwitch);
  EXPECT_FALSE(d->nvlink_remote_pci(1).ok());  // no GPU at its far end
  EXPECT_TRUE(d->nvlink_remote_type(2).unsupported());
  EXPECT_FALSE(d->nvlink_remote_type(18).ok());  // past the GPU's links
}

TEST_F(TelemetryWithFakeNvml, CountsTheReadingsUnderEachKindOfSlowdown) {
  const auto s = sample(loaded_gpu());
  EXPECT_EQ(s.throttle_reasons, 0x44u);
  EXPECT_TRUE(s.throttled);
  EXPECT_EQ(s.reason_readings, 2);
  EXPECT_EQ(s.power_cap_readings, 2);    // both readings under the power cap
  EXPECT_EQ(s.hw_slowdown_readings, 1);  // the second under HW thermal slowdown too
  // A window this short is mostly counter step: no violation time, no energy.
  EXPECT_LT(s.window_s, bench::TelemetrySummary::kMinCounterWindowS);
  EXPECT_FALSE(s.power_violation_s);
  EXPECT_FALSE(s.thermal_violation_s);
  EXPECT_FALSE(s.energy_j);
}

// Polled every 0.5 s for 3 s: readings at about 0 (the start's), 0.5, ... 2.5 s and the stop's; the energy counter
// moves by 1 J each reading, as a counter refreshed twice a second would.
TEST_F(TelemetryWithFakeNvml, ViolationTimeAndEnergyOverALongWindow) {
  json v = loaded_gpu();
  v["energy.total_mj"] = json::array();
  for (int k = 0; k < 8; ++k) v["energy.total_mj"].push_back(5000000 + 1000 * k);
  bench::TelemetrySampler sampler(device(v), 0.5, bench::TelemetrySampler::Energy::kFollow);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  const auto s = sampler.stop();
  ASSERT_GE(s.readings, 4);  // the polls between the edges (a loaded machine may miss one)
  ASSERT_TRUE(s.power_violation_s);
  EXPECT_NEAR(*s.power_violation_s, 0.6, 1e-12);  // read at the start and at the end only
  ASSERT_TRUE(s.thermal_violation_s);
  EXPECT_NEAR(*s.thermal_violation_s, 0.2, 1e-12);
  ASSERT_TRUE(s.energy_j);  // from the first change (the second reading) to the last
  // Every reading, the two edges too (the summary's count leaves them out); the script holds 8 values.
  EXPECT_NEAR(*s.energy_j, std::min(s.readings + 2, 8) - 2.0, 1e-9);
  ASSERT_TRUE(s.energy_interval_s);
  EXPECT_GE(*s.energy_interval_s, bench::TelemetrySummary::kMinEnergyIntervalS);
  EXPECT_LE(*s.energy_interval_s, s.window_s);
  EXPECT_GT(*s.power_mean_w, 1.0);  // about 2 W: 1 J per half second
  EXPECT_LT(*s.power_mean_w, 2.5);
}

// The same long window and a counter that moves on every read, but not followed: no energy figure.
TEST_F(TelemetryWithFakeNvml, EnergyIsFollowedOnlyWhenAskedFor) {
  json v = loaded_gpu();
  v["energy.total_mj"] = json::array();
  for (int k = 0; k < 40; ++k) v["energy.total_mj"].push_back(5000000 + 1000 * k);
  bench::TelemetrySampler sampler(device(v), 0.25);  // Energy::kIgnore
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(2600));
  const auto s = sampler.stop();
  ASSERT_GE(s.readings, 6);  // the polls between the edges
  EXPECT_FALSE(s.energy_j);
  EXPECT_FALSE(s.power_mean_w);
  EXPECT_TRUE(s.power_violation_s);  // the window is long enough for those
}

// A violation counter that moved more than the window (its steps straddle the ends) held it all, not more.
TEST_F(TelemetryWithFakeNvml, ViolationTimeIsAtMostTheWindow) {
  json v = loaded_gpu();
  v["throttle.power_ns"] = {0, 5000000000ull};  // 5 s over a window of about 1 s
  bench::TelemetrySampler sampler(device(v), 60.0);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1050));
  const auto s = sampler.stop();
  ASSERT_TRUE(s.power_violation_s);
  EXPECT_DOUBLE_EQ(*s.power_violation_s, s.window_s);
}

TEST_F(TelemetryWithFakeNvml, KeepsEachReadingWithItsTimeForATimeSeries) {
  json v = loaded_gpu();
  v["power.usage_mw"] = {400000, 20000000};  // 20 kW: not a reading, left out
  bench::TelemetrySampler sampler(device(v), 60.0);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  sampler.stop();
  const auto r = sampler.timed_readings();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_GE(r[0].t_s, 0.0);
  EXPECT_GE(r[1].t_s, r[0].t_s + 0.02);
  EXPECT_DOUBLE_EQ(*r[0].sm_clock_hz, 1500e6);
  EXPECT_DOUBLE_EQ(*r[1].sm_clock_hz, 1980e6);
  EXPECT_DOUBLE_EQ(*r[0].power_w, 400);
  EXPECT_FALSE(r[1].power_w);
}

// NVML_FI_DEV_POWER_INSTANT, read beside the 1 s average: the window's own draw.
TEST_F(TelemetryWithFakeNvml, InstantaneousPowerBesideTheOneSecondAverage) {
  json v = loaded_gpu();
  v["power.instant_mw"] = {655000, 702000};
  bench::TelemetrySampler sampler(device(v), 60.0);
  sampler.start();
  const auto s = sampler.stop();
  ASSERT_TRUE(s.power_instant_w_median);
  EXPECT_DOUBLE_EQ(*s.power_instant_w_median, 678.5);
  EXPECT_DOUBLE_EQ(*s.power_instant_w_max, 702);
  EXPECT_DOUBLE_EQ(s.power_w_median, 545);  // the average, unchanged
  const auto r = sampler.timed_readings();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(*r[1].power_instant_w, 702);

  EXPECT_EQ(s.power_instant_readings, 2);

  v["power.instant_mw"] = {655000, 4000000000ull};  // 4 MW: not a reading
  const auto dropped = sample(v);
  EXPECT_DOUBLE_EQ(*dropped.power_instant_w_max, 655);
  EXPECT_EQ(dropped.power_instant_readings, 1);
}

TEST_F(TelemetryWithFakeNvml, IdleAndSyncBoostAreNotThrottling) {
  json v = loaded_gpu();
  v["clocks.event_reasons"] = {0x1, 0x10};
  const auto s = sample(v);
  EXPECT_FALSE(s.throttled);
  EXPECT_EQ(s.throttle_reasons, 0x11u);
  EXPECT_EQ(s.power_cap_readings, 0);
  EXPECT_EQ(s.hw_slowdown_readings, 0);
}

TEST_F(TelemetryWithFakeNvml, UnansweredOrBackwardCountersAreUnsetNotZero) {
  json v = loaded_gpu();
  v.erase("clocks.event_reasons");
  v.erase("throttle.thermal_ns");
  v["throttle.power_ns"] = {2000000000ull, 1000000000ull};  // reset between the readings (driver reload)
  bench::TelemetrySampler sampler(device(v), 60.0);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1050));  // long enough to read the counters
  const auto s = sampler.stop();
  ASSERT_TRUE(s.available);
  EXPECT_FALSE(s.throttled);
  EXPECT_EQ(s.reason_readings, 0);
  EXPECT_FALSE(s.power_violation_s);
  EXPECT_FALSE(s.thermal_violation_s);
}

TEST_F(TelemetryWithFakeNvml, ImplausibleReadingsAreDroppedNotAveraged) {
  json v = loaded_gpu();
  v["clocks.sm_mhz"] = {0, 1980};  // a 0 Hz clock under load is a failed read
  v["temperature.gpu_c"] = {4294967295ull, 61};
  const auto s = sample(v);
  EXPECT_DOUBLE_EQ(s.sm_clock_hz_median, 1980e6);
  EXPECT_DOUBLE_EQ(s.sm_clock_hz_min, 1980e6);
  EXPECT_DOUBLE_EQ(s.temp_c_max, 61);
}

TEST_F(TelemetryWithFakeNvml, NoSmClockMeansNoTelemetry) {
  json v = loaded_gpu();
  v.erase("clocks.sm_mhz");
  EXPECT_FALSE(sample(v).available);
}

TEST(Telemetry, WithoutNvmlThereIsNothingToSummarise) {
  bench::TelemetrySampler none(nullptr);
  none.start();
  EXPECT_FALSE(none.stop().available);
}

TEST_F(TelemetryWithFakeNvml, AStopWithoutAStartOrASecondStopIsEmpty) {
  bench::TelemetrySampler sampler(device(loaded_gpu()), 60.0);
  EXPECT_FALSE(sampler.stop().available);  // never started
  sampler.start();
  EXPECT_TRUE(sampler.stop().available);
  const auto again = sampler.stop();
  EXPECT_FALSE(again.available);
  EXPECT_EQ(again.readings, 0);
}

// The telemetry counters as ceilings-bench reports them and the converter keeps them in the detail.
TEST(ThrottleText, SaysWhyAndHowMuchOfTheTime) {
  Ceiling c;
  c.name = "gemm.bf16_sustained";
  EXPECT_EQ(throttle_text(c), "not known: no telemetry read the GPU (no NVML), so a slowdown could not be seen");
  c.telemetry.available = true;
  EXPECT_EQ(throttle_text(c), "no");
  c.detail = {{"throttle_reasons", 0x1}, {"reason_readings", 15}, {"power_cap_readings", 0}};
  EXPECT_EQ(throttle_text(c), "no");  // idle is not a slowdown
  c.throttled = true;
  c.detail = {{"throttle_reasons", 0x5},       {"reason_readings", 750},     {"power_cap_readings", 640},
              {"hw_slowdown_readings", 0},     {"telemetry_window_s", 15.2}, {"power_violation_s", 12.9},
              {"thermal_violation_s", 0.0}};
  EXPECT_EQ(throttle_text(c), "yes: sw_power_cap (power cap in 640 of 750 telemetry readings; the power limit held "
                              "the clocks 12.9 s of 15.2 s)");
  c.detail = {{"throttle_reasons", 0x44}, {"reason_readings", 750}, {"power_cap_readings", 750},
              {"hw_slowdown_readings", 1}, {"thermal_violation_s", 0.3}};
  EXPECT_EQ(throttle_text(c), "yes: sw_power_cap,hw_thermal_slowdown (power cap in 750 of 750 telemetry readings; "
                              "hardware slowdown in 1 of 750 telemetry readings; the thermal limit held the clocks "
                              "300 ms)");
  // The counters move in steps: more than the window reads as all of it, never as more.
  c.detail = {{"throttle_reasons", 0x4}, {"telemetry_window_s", 1.2}, {"power_violation_s", 1.3}};
  EXPECT_EQ(throttle_text(c), "yes: sw_power_cap (the power limit held the clocks for all of the 1.20 s)");
  c.detail = json::object();  // a profile from before these counters: the flag alone
  EXPECT_EQ(throttle_text(c), "yes");
  // A fleet baseline's ceiling: its members' measurements (review 19: it read "no telemetry ... (no NVML)").
  Ceiling b;
  b.detail = {{"benchmark", "fleet median"}, {"fleet_profiles", 3}, {"fleet_throttled", 3}};
  EXPECT_EQ(throttle_text(b), "yes (3 of 3 fleet members' measurements ran throttled)");
  b.detail["fleet_throttled"] = 0;
  EXPECT_EQ(throttle_text(b), "no (0 of 3 fleet members' measurements ran throttled)");
}

// The ceilings table says which slowdown at a glance: the power cap is how a GPU runs under load.
TEST(ThrottleText, TheTablesCellNamesTheSlowdown) {
  Profile p;
  p.device.name = "NVIDIA H200";
  for (const auto& [name, throttled, reasons] :
       {std::tuple<const char*, bool, json>{"gemm.bf16", true, 0x4}, {"gemm.fp16", true, 0x44},
        {"gemm.fp8_e4m3", true, nullptr}, {"hbm.copy", false, 0x1}, {"hbm.read", false, nullptr},
        {"hbm.write", false, nullptr}}) {
    Ceiling c;
    c.name = name;
    c.unit = "FLOP/s";
    c.value = 1e14;
    c.throttled = throttled;
    if (!reasons.is_null()) c.detail["throttle_reasons"] = reasons;
    c.telemetry.available = std::string(name) == "hbm.read";  // read, and none seen; hbm.write: nothing read it
    p.ceilings.push_back(c);
  }
  const Table t = ceilings_table(p);
  ASSERT_EQ(t.rows.size(), 6u);
  std::vector<std::string> cells;
  for (const auto& row : t.rows) cells.push_back(row.back());
  EXPECT_EQ(cells, (std::vector<std::string>{"sw_power_cap", "sw_power_cap,hw_thermal_slowdown", "yes", "no", "no",
                                             "n/a"}));
}

// How a profile names a device: a whole GPU by its UUID; a MIG instance (CUDA's bytes are not the board's) by
// its own "MIG-" UUID with the board's beside it, also where NVML cannot give the board's (it was then saved as
// a "GPU-" UUID that named no GPU); and, where NVML cannot say whether the board is split, as CUDA gives it.
TEST_F(TelemetryWithFakeNvml, ADeviceIsNamedByItsOwnUuidAndAMigInstanceApartFromItsBoard) {
  const unsigned char board_bytes[16] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                                         0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00};
  const unsigned char instance_bytes[16] = {0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8,
                                            0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf, 0xb0};
  const std::string board = "GPU-11223344-5566-7788-99aa-bbccddeeff00";
  EXPECT_EQ(bench::format_uuid(board_bytes), board);
  const json fields = {{"uuid", board}};

  bench::DeviceUuids ids = bench::device_uuids(board_bytes, device({{"mig.current", 0}}, json::object(), fields).get());
  EXPECT_EQ(ids.uuid, board);
  EXPECT_EQ(ids.board_uuid, "");
  EXPECT_EQ(ids.mig, std::optional<bool>(false));
  ids = bench::device_uuids(board_bytes, device(json::object(), json::object(), fields).get());  // no MIG support
  EXPECT_EQ(ids.mig, std::optional<bool>(false));

  ids = bench::device_uuids(instance_bytes, device({{"mig.current", 1}}, json::object(), fields).get());
  EXPECT_EQ(ids.uuid, "MIG-a1a2a3a4-a5a6-a7a8-a9aa-abacadaeafb0");
  EXPECT_EQ(ids.board_uuid, board);
  EXPECT_EQ(ids.mig, std::optional<bool>(true));
  ids = bench::device_uuids(instance_bytes, device({{"mig.current", 1}}, {{"uuid", 999}}, fields).get());
  EXPECT_EQ(ids.uuid, "MIG-a1a2a3a4-a5a6-a7a8-a9aa-abacadaeafb0");  // the board's UUID unreadable
  EXPECT_EQ(ids.board_uuid, "");

  // NVML cannot say whether the board is split: CUDA's bytes, the board's or not, decide.
  ids = bench::device_uuids(board_bytes, device(json::object(), {{"mig", 999}}, fields).get());
  EXPECT_EQ(ids.uuid, board);
  EXPECT_FALSE(ids.mig.has_value());
  ids = bench::device_uuids(instance_bytes, device(json::object(), {{"mig", 999}}, fields).get());
  EXPECT_EQ(ids.uuid, "MIG-a1a2a3a4-a5a6-a7a8-a9aa-abacadaeafb0");
  EXPECT_EQ(ids.board_uuid, board);
  ids = bench::device_uuids(instance_bytes, device(json::object(), {{"mig", 999}, {"uuid", 999}}, fields).get());
  EXPECT_EQ(ids.uuid, "GPU-a1a2a3a4-a5a6-a7a8-a9aa-abacadaeafb0");  // nothing known: as CUDA gives it
  EXPECT_FALSE(ids.mig.has_value());
  ids = bench::device_uuids(board_bytes, nullptr);  // no NVML
  EXPECT_EQ(ids.uuid, board);
  EXPECT_FALSE(ids.mig.has_value());
}

}  // namespace
}  // namespace ceilings
