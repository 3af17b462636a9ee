// GPU checks of the timing harness: the blocking kernel times out when never released and its
// destructor frees a spinner left waiting; measure() counts every unit it ran and keeps to a case's
// own sampling budget (test_transfer.cu checks the unblocked first unit); its telemetry covers the
// sampling window. Time bounds leave room for compute-sanitizer (device-check --sanitize), which slows
// module loads and launches.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test.hpp"
#include "harness/measure.hpp"
#include "harness/nvml.hpp"

namespace ceilings::bench {
namespace {

using wall = std::chrono::steady_clock;

double seconds_since(wall::time_point t) { return std::chrono::duration<double>(wall::now() - t).count(); }

__global__ void count_once_kernel(unsigned long long* count) { *count += 1; }

// Roughly `ns` of GPU time, then one count.
__global__ void sleep_then_count_kernel(unsigned long long* count, unsigned ns) {
  for (unsigned slept = 0; slept < ns; slept += 1000) __nanosleep(1000);
  *count += 1;
}

// A device counter set to 0 (ready when this returns).
DeviceBuffer<unsigned long long> zeroed_counter(const Stream& s) {
  DeviceBuffer<unsigned long long> count(1);
  CEILINGS_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), s.get()));
  s.sync();
  return count;
}

unsigned long long read_count(const DeviceBuffer<unsigned long long>& count, cudaStream_t s) {
  unsigned long long h = 0;
  CEILINGS_CUDA_CHECK(cudaMemcpyAsync(&h, count.get(), sizeof h, cudaMemcpyDeviceToHost, s));
  CEILINGS_CUDA_CHECK(cudaStreamSynchronize(s));
  return h;
}

// Options that take between `min` and `max` samples.
Options sampling(int min, int max) {
  Options o;
  o.min_samples = min;
  o.max_samples = max;
  return o;
}

TEST(BlockingKernelGpu, TimesOutWhenNeverReleasedAndNotWhenReleased) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  BlockingKernel blocker;
  const auto t0 = wall::now();
  blocker.block(s.get(), 0.05);
  s.sync();  // nobody releases it: the spinner gives up after 50 ms
  EXPECT_TRUE(blocker.timed_out());
  EXPECT_LT(seconds_since(t0), 4.5);
  blocker.block(s.get(), 5.0);
  blocker.release();
  s.sync();
  EXPECT_FALSE(blocker.timed_out());
  CEILINGS_CUDA_CHECK(cudaGetLastError());
}

TEST(BlockingKernelGpu, DestructorReleasesASpinnerAndWaitsForIt) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  DeviceBuffer<unsigned long long> count(1);
  CEILINGS_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), s.get()));
  count_once_kernel<<<1, 1, 0, s.get()>>>(count.get());  // loaded before anything waits behind a spinner
  s.sync();
  const auto t0 = wall::now();
  {
    BlockingKernel blocker;
    blocker.block(s.get(), 5.0);
    count_once_kernel<<<1, 1, 0, s.get()>>>(count.get());
    CEILINGS_LAUNCH_CHECK();
  }  // as when a case throws between block() and release()
  EXPECT_LT(seconds_since(t0), 4.5) << "the destructor waited for the 5 s timeout instead of releasing";
  EXPECT_EQ(read_count(count, s.get()), 2u);
}

TEST(MeasureGpu, KeepsToTheCasesOwnBudget) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  const DeviceBuffer<unsigned long long> count = zeroed_counter(s);
  Options o = sampling(2, 100000);
  o.max_seconds = 20;
  o.target_cv = -1;  // never converges (0 would, on two equal samples): only the budget stops sampling
  MeasureSpec spec;
  spec.max_seconds = 0.2;
  spec.work = [&](cudaStream_t st) { sleep_then_count_kernel<<<1, 1, 0, st>>>(count.get(), 100000); };
  const auto t0 = wall::now();
  const Measurement m = measure(s.get(), spec, o, nullptr);
  // 0.2 s of sampling after a warm-up of about 50 ms: 3 s leaves room for module loads, 20 s would be the run's
  // budget; compute-sanitizer slows everything several times.
  EXPECT_LT(seconds_since(t0), ceilings::test::under_sanitizer() ? 15.0 : 3.0)
      << "sampling ran toward Options::max_seconds (20 s), past the case's 0.2 s";
  EXPECT_GE(m.unit_seconds.size(), 2u);
  EXPECT_EQ(read_count(count, s.get()), static_cast<unsigned long long>(m.total_units));
}

// A cool-down idles the GPU between the first unit and the warm-up: nothing is queued during it, and the
// measurement takes at least that much longer (GEMM bursts use it to start from a recovered power average).
TEST(MeasureGpu, ACooldownIdlesBeforeTheWarmUp) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  const DeviceBuffer<unsigned long long> count = zeroed_counter(s);
  Options o = sampling(2, 2);
  MeasureSpec spec;
  spec.cooldown_s = 0.5;
  std::vector<double> enqueued_at;
  const auto t0 = wall::now();
  spec.work = [&](cudaStream_t st) {
    enqueued_at.push_back(seconds_since(t0));
    sleep_then_count_kernel<<<1, 1, 0, st>>>(count.get(), 1000);
  };
  const Measurement m = measure(s.get(), spec, o, nullptr);
  ASSERT_GE(enqueued_at.size(), 2u);
  EXPECT_GE(enqueued_at[1] - enqueued_at[0], 0.5) << "the second unit came before the cool-down was over";
  EXPECT_EQ(read_count(count, s.get()), static_cast<unsigned long long>(m.total_units));
}

// Pre-roll units run in every sample before its start event: counted in total_units, not in the timing.
TEST(MeasureGpu, PrerollUnitsRunUntimedBeforeEverySample) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  const DeviceBuffer<unsigned long long> count = zeroed_counter(s);
  Options o = sampling(3, 3);
  MeasureSpec spec;
  spec.units_per_sample = 1;
  spec.preroll_units = 2;
  spec.warmup_s = 0;  // three warm-up samples
  spec.work = [&](cudaStream_t st) { sleep_then_count_kernel<<<1, 1, 0, st>>>(count.get(), 2000000); };
  const Measurement m = measure(s.get(), spec, o, nullptr);
  ASSERT_EQ(m.unit_seconds.size(), 3u);
  // 1 unblocked unit, then 3 warm-up and 3 timed samples of 2 pre-roll units and 1 timed unit each.
  EXPECT_EQ(m.total_units, 1 + 6 * 3);
  EXPECT_EQ(read_count(count, s.get()), static_cast<unsigned long long>(m.total_units));
  // About 2 ms a unit; the pre-roll timed too would make it 6.
  EXPECT_GT(m.median_s, 1.5e-3);
  EXPECT_LT(m.median_s, 4e-3);
}

// A case may stop after fewer converged samples than Options::min_samples, never after fewer
// than it asked for, and the options' minimum holds where it asks for nothing.
TEST(MeasureGpu, ACaseMayStopAfterFewerSamplesThanTheOptionsMinimum) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  const DeviceBuffer<unsigned long long> count = zeroed_counter(s);
  Options o = sampling(10, 100);
  o.target_cv = 10.0;  // every set of samples has converged
  MeasureSpec spec;
  spec.work = [&](cudaStream_t st) { sleep_then_count_kernel<<<1, 1, 0, st>>>(count.get(), 1000); };
  EXPECT_EQ(measure(s.get(), spec, o, nullptr).unit_seconds.size(), 10u);
  spec.min_samples = 3;
  EXPECT_EQ(measure(s.get(), spec, o, nullptr).unit_seconds.size(), 3u);
  spec.min_samples = 50;  // more than the options ask for: the options' minimum
  EXPECT_EQ(measure(s.get(), spec, o, nullptr).unit_seconds.size(), 10u);
}

// A case may also stop after a fixed number of samples whatever their spread (GEMM bursts: more samples while
// the rate drifts would measure the power cap); never after more than the options allow.
TEST(MeasureGpu, ACaseMayStopAfterAFixedNumberOfSamples) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  const DeviceBuffer<unsigned long long> count = zeroed_counter(s);
  Options o = sampling(10, 40);
  o.target_cv = -1;  // no set of samples converges (0 would, on equal samples): only the budget or the maximum ends it
  o.max_seconds = 30.0;
  MeasureSpec spec;
  spec.work = [&](cudaStream_t st) { sleep_then_count_kernel<<<1, 1, 0, st>>>(count.get(), 1000); };
  EXPECT_EQ(measure(s.get(), spec, o, nullptr).unit_seconds.size(), 40u);
  spec.min_samples = 5;
  spec.max_samples = 5;
  EXPECT_EQ(measure(s.get(), spec, o, nullptr).unit_seconds.size(), 5u);
  spec.max_samples = 500;  // more than the options allow: the options' maximum
  EXPECT_EQ(measure(s.get(), spec, o, nullptr).unit_seconds.size(), 40u);
}

// A case's own per-sample figure (MeasureSpec::sample_seconds: concurrent transfers' sum of own rates) is what
// the stopping rule, the median and the cv see: here the wall times are steady (one 1 us kernel), the figures
// alternate 1 ms and 3 ms (cv about 0.5): never converged, so sampling runs to the maximum; steady figures stop
// at the minimum. The hook is called once per timed sample with its wall time per unit.
TEST(MeasureGpu, ACasesOwnSampleFigureDecidesWhenToStop) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  const DeviceBuffer<unsigned long long> count = zeroed_counter(s);
  Options o = sampling(4, 12);
  o.target_cv = 0.05;
  o.max_seconds = 30.0;
  MeasureSpec spec;
  spec.units_per_sample = 1;
  spec.work = [&](cudaStream_t st) { sleep_then_count_kernel<<<1, 1, 0, st>>>(count.get(), 1000); };
  std::vector<double> walls;
  spec.sample_seconds = [&](double wall_s) {
    walls.push_back(wall_s);
    return walls.size() % 2 ? 1e-3 : 3e-3;
  };
  Measurement m = measure(s.get(), spec, o, nullptr);
  ASSERT_EQ(m.unit_seconds.size(), 12u) << "alternating figures never converge";
  EXPECT_EQ(walls.size(), 12u);
  for (double w : walls) EXPECT_GT(w, 0);
  EXPECT_DOUBLE_EQ(m.unit_seconds[0], 1e-3);
  EXPECT_DOUBLE_EQ(m.unit_seconds[1], 3e-3);
  EXPECT_DOUBLE_EQ(m.median_s, 2e-3);
  EXPECT_GT(m.cv, 0.4);
  walls.clear();
  spec.sample_seconds = [&](double wall_s) {
    walls.push_back(wall_s);
    return 2e-3;
  };
  m = measure(s.get(), spec, o, nullptr);
  EXPECT_EQ(m.unit_seconds.size(), 4u) << "steady figures stop at the minimum, whatever the wall times did";
  EXPECT_DOUBLE_EQ(m.median_s, 2e-3);
}

// A launch queue that holds fewer units than a sample asks for: the host blocks while enqueueing, the
// blocking kernel times out. Here the host stalls itself past the timeout once a sample passes 100 units:
// the units halve (200 -> 100), sampling starts over, and a later measurement of the process starts at 100.
TEST(MeasureGpu, AFullLaunchQueueHalvesTheUnitsInsteadOfFailing) {
  CEILINGS_REQUIRE_GPU();
  Stream s;
  const DeviceBuffer<unsigned long long> count = zeroed_counter(s);
  Options o = sampling(3, 3);
  o.min_sample_seconds = 1.0;  // asks for the most units a sample may hold (200), whatever a launch costs
  int in_sample = 0;
  MeasureSpec spec;
  spec.before_sample = [&](cudaStream_t) { in_sample = 0; };
  spec.work = [&](cudaStream_t st) {
    if (++in_sample == 101)  // what a full queue does to the host: it cannot enqueue until the GPU moves on
      std::this_thread::sleep_for(std::chrono::duration<double>(BlockingKernel::kDefaultTimeoutS + 0.5));
    count_once_kernel<<<1, 1, 0, st>>>(count.get());
  };
  const Measurement m = measure(s.get(), spec, o, nullptr);
  EXPECT_EQ(m.queue_halvings, 1);
  EXPECT_EQ(m.units_per_sample, 100);
  EXPECT_EQ(m.unit_seconds.size(), 3u);  // the timed-out sample is not among them
  EXPECT_EQ(read_count(count, s.get()), static_cast<unsigned long long>(m.total_units));  // its work still ran
  const Measurement next = measure(s.get(), spec, o, nullptr);
  EXPECT_EQ(next.queue_halvings, 0);
  EXPECT_EQ(next.units_per_sample, 100);
  // Where the case fixed its own sample size, a timeout stays an error.
  spec.units_per_sample = 150;
  EXPECT_THROW(measure(s.get(), spec, o, nullptr), CheckError);
  reset_launch_queue_limit();  // later tests of this process start unlimited
}

// NVML's device for the current CUDA device, matched by PCI bus id; nullptr (and a skip) without NVML.
std::shared_ptr<nvml::Device> nvml_device_for_current(std::shared_ptr<nvml::Library>& lib) {
  std::string why;
  lib = nvml::Library::open(&why);
  if (!lib) return nullptr;
  int device = 0;
  CEILINGS_CUDA_CHECK(cudaGetDevice(&device));
  char bus[32] = {};
  CEILINGS_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  const auto found = lib->device_by_pci_bus_id(bus);
  EXPECT_TRUE(found.ok()) << "NVML does not know CUDA device " << bus;
  return found.ok() ? std::make_shared<nvml::Device>(found.value) : nullptr;
}

std::string maybe(const std::optional<double>& v) { return v ? std::to_string(*v) : std::string("n/a"); }

// The telemetry of a real measurement through the real NVML: readings throughout the sampling window,
// the clock-event reasons read every time, and the violation counters read over the window (a data-center
// GPU answers them). An idle-ish kernel: a real node may still be throttled, so no verdict, only sanity.
TEST(MeasureGpu, TelemetryCoversTheWindowWithReadingCountsAndViolationTimes) {
  CEILINGS_REQUIRE_GPU();
  std::shared_ptr<nvml::Library> lib;
  const auto nvml_device = nvml_device_for_current(lib);
  // A CUDA device and no NVML is the loader's or the bus-id lookup's fault, not a reason to skip.
  ASSERT_TRUE(nvml_device) << "NVML did not load or did not find this CUDA device by its PCI bus id";
  Stream s;
  DeviceBuffer<unsigned long long> count(1);
  Options o = sampling(2, 100000);
  o.max_seconds = 2.0;
  o.target_cv = -1;  // never converges (0 would, on two equal samples): the budget ends sampling
  MeasureSpec spec;
  spec.max_seconds = 1.2;  // past TelemetrySummary::kMinCounterWindowS, so the violation counters are read
  spec.work = [&](cudaStream_t st) { sleep_then_count_kernel<<<1, 1, 0, st>>>(count.get(), 100000); };
  const Measurement m = measure(s.get(), spec, o, nvml_device);
  const TelemetrySummary& t = m.telemetry;
  std::printf("telemetry: %d readings over %.3f s, reasons 0x%llx, power cap in %d and hw slowdown in %d of %d, "
              "power violation %s s, thermal violation %s s\n",
              t.readings, t.window_s, static_cast<unsigned long long>(t.throttle_reasons), t.power_cap_readings,
              t.hw_slowdown_readings, t.reason_readings, maybe(t.power_violation_s).c_str(),
              maybe(t.thermal_violation_s).c_str());
  ASSERT_TRUE(t.available);
  EXPECT_GE(t.window_s, 1.15);
  EXPECT_LT(t.window_s, 10.0);
  EXPECT_GE(t.readings, 20);  // polled every 20 ms over more than a second
  // A driver that answers the reasons answers them every time.
  EXPECT_EQ(t.reason_readings, t.readings);
  // Over a window past kMinCounterWindowS both violation counters are read (NVML answers them on data-center
  // parts); a missing one here means the counter read or its window logic is broken.
  EXPECT_TRUE(t.power_violation_s.has_value()) << "power violation counter not read over " << t.window_s << " s";
  EXPECT_TRUE(t.thermal_violation_s.has_value()) << "thermal violation counter not read over " << t.window_s << " s";
}

// The energy counter followed through 4 s of steady, light work: a figure where the driver answers the
// counter, in a plausible range, and within a factor of 1.5 of the median power reading (a 1 s average of
// the same board: close, not equal, in steady light load; a unit or interval mistake is 2x or 1000x).
TEST(MeasureGpu, EnergyCounterGivesAPlausibleMeanPower) {
  CEILINGS_REQUIRE_GPU();
  std::shared_ptr<nvml::Library> lib;
  const auto nvml_device = nvml_device_for_current(lib);
  ASSERT_TRUE(nvml_device) << "NVML did not load or did not find this CUDA device by its PCI bus id";
  const auto first = nvml_device->energy_mj();
  // Where a GPU is expected (the device machine's H200: Volta and later have the counter), unsupported is a broken
  // read, never a skip (review 96: a symbol that did not resolve reads as unsupported too).
  if (first.unsupported() && !ceilings::test::gpu_expected())
    GTEST_SKIP() << "this driver does not offer the energy counter (vGPU?)";
  ASSERT_TRUE(first.ok()) << "the energy counter failed (NVML code " << first.code << ")";
  Stream s;
  DeviceBuffer<unsigned long long> count(1);
  TelemetrySampler sampler(nvml_device, 0.02, TelemetrySampler::Energy::kFollow);
  sampler.start();
  const auto t0 = wall::now();
  while (seconds_since(t0) < 4.0) {
    sleep_then_count_kernel<<<1, 1, 0, s.get()>>>(count.get(), 50000);
    s.sync();
  }
  const TelemetrySummary t = sampler.stop();
  std::printf("energy: %s J over %s s, mean power %s W; median power reading %.1f W (1 s average), %s W "
              "(instantaneous)\n",
              maybe(t.energy_j).c_str(), maybe(t.energy_interval_s).c_str(), maybe(t.power_mean_w).c_str(),
              t.power_w_median, maybe(t.power_instant_w_median).c_str());
  ASSERT_TRUE(t.available);
  ASSERT_TRUE(t.power_mean_w) << "the energy counter did not move in steps over 2 s or more";
  EXPECT_GE(*t.energy_interval_s, TelemetrySummary::kMinEnergyIntervalS);
  EXPECT_LE(*t.energy_interval_s, t.window_s);
  EXPECT_GT(*t.power_mean_w, 5.0);
  EXPECT_LT(*t.power_mean_w, 1500.0);
  EXPECT_GT(*t.energy_j, 5.0 * *t.energy_interval_s);  // the counter's own joules: at least 5 W over its interval
  if (t.power_w_median > 0) {
    EXPECT_GT(*t.power_mean_w, t.power_w_median / 1.5) << "median power reading " << t.power_w_median << " W";
    EXPECT_LT(*t.power_mean_w, t.power_w_median * 1.5) << "median power reading " << t.power_w_median << " W";
  }
  if (t.power_instant_w_median) {  // where the driver answers NVML_FI_DEV_POWER_INSTANT
    EXPECT_GT(*t.power_instant_w_median, 5.0);
    EXPECT_LT(*t.power_instant_w_median, 1500.0);
  }
}

}  // namespace
}  // namespace ceilings::bench
