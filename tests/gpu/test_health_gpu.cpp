// GPU test: `ceilings health` on the real device reads sane values through the real NVML
// (skipped without a device). Checks plausibility, not a verdict: a real node may be unhealthy.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "ceilings/health.hpp"
#include "cli_runner.hpp"
#include "gpu/gpu_test.hpp"

namespace ceilings {
namespace {

TEST(HealthGpu, ReadsSaneValuesFromTheRealDevice) {
  CEILINGS_REQUIRE_GPU();
  const auto r = test::run_cli({"health", "--json", "--watch", "1"});
  ASSERT_NE(r.exit_code, 2) << r.err;
  ASSERT_FALSE(r.out.empty()) << "exit " << r.exit_code << ": " << r.err;
  const HealthSection s = health_from_json(json::parse(r.out));
  std::printf("health verdict exit code %d on %s (%s)\n%s\n", r.exit_code, s.device_name.c_str(), s.uuid.c_str(),
              render(health_table(s), Format::kTable).c_str());
  EXPECT_EQ(s.uuid.rfind("GPU-", 0), 0u);
  EXPECT_FALSE(s.driver.empty());
  ASSERT_TRUE(s.after.has_value());
  // Every metric below is supported by any data-center GPU ceilings targets; none may be unreadable.
  auto within = [&](const char* name, double lo, double hi) {
    const HealthMetric* m = s.before.find(name);
    ASSERT_NE(m, nullptr) << name;
    ASSERT_TRUE(m->ok()) << name << ": " << metric_display(*m, name);
    EXPECT_GE(m->value, lo) << name;
    EXPECT_LE(m->value, hi) << name;
  };
  within("clocks.max_sm_hz", 5e8, 4e9);
  within("clocks.max_mem_hz", 4e8, 2e10);
  within("clocks.sm_hz", 1e8, 4e9);
  within("temperature.gpu_c", 10, 100);
  within("power.usage_w", 5, 1500);
  within("power.limit_w", 50, 1500);
  within("power.enforced_limit_w", 50, 1500);
  within("pcie.max_gen", 3, 6);
  within("pcie.max_width", 4, 16);
  within("pcie.gen", 1, 6);
  within("pcie.width", 1, 16);
  within("pcie.replays", 0, 1e9);
  // The GPU's own maximum where the driver has the call: at least what the GPU and its slot allow together.
  if (const auto gpu = s.before.value("pcie.gpu_max_gen")) {
    within("pcie.gpu_max_gen", 3, 7);
    EXPECT_GE(*gpu, s.before.value("pcie.max_gen").value_or(0));
  }
  for (const auto& [name, m] : s.before.metrics)
    EXPECT_NE(m.state, HealthMetric::State::kUnreadable) << name << ": " << m.reason;
  if (auto ecc = s.before.value("ecc.enabled"); ecc && *ecc != 0) {
    within("ecc.volatile.uncorrected", 0, 1e6);
    within("ecc.aggregate.uncorrected", 0, 1e6);
  }
  // HBM temperature where the driver reports it (field values): a live reading below its limit.
  if (s.before.value("temperature.memory_c")) within("temperature.memory_c", 10, 110);
  if (s.before.value("temperature.memory_max_c")) within("temperature.memory_max_c", 60, 130);
  // On the HBM data-centre parts (compute capability 8.0, 9.0, 10.x: A100/A30, H100/H200, B200/B300) the driver
  // answers every reading qualify judges: one read as unsupported there is a broken read that leaves row remapping,
  // ECC or the clock-event counters incomplete, not a missing feature (review 96). Where a GPU is expected.
  cudaDeviceProp prop{};
  if (ceilings::test::gpu_expected() && cudaGetDeviceProperties(&prop, 0) == cudaSuccess &&
      ((prop.major == 8 && prop.minor == 0) || prop.major == 9 || prop.major == 10)) {
    within("ecc.enabled", 0, 1);
    if (s.before.value("ecc.enabled").value_or(0) != 0) within("ecc.volatile.uncorrected", 0, 1e6);  // counted with ECC on
    within("remap.pending", 0, 1);
    within("remap.failure", 0, 1);
    within("remap.uncorrectable_rows", 0, 1e6);
    within("temperature.memory_c", 10, 110);
    for (const char* counter : {"throttle.power_s", "throttle.thermal_s", "throttle.reliability_s", "throttle.board_limit_s"})
      within(counter, 0, 1e9);
  }
  EXPECT_NE(s.xid.state, HealthMetric::State::kUnreadable) << s.xid.reason;
  // The GPU's PCI address (its XIDs in the kernel log name it) and the kernel log read, or why not.
  EXPECT_EQ(s.pci_bus_id.size(), 16u) << s.pci_bus_id;
  EXPECT_NE(s.kernel_log.state, HealthMetric::State::kUnsupported);
  if (s.kernel_log.state == HealthMetric::State::kUnreadable)
    std::printf("kernel log: %s\n", s.kernel_log.reason.c_str());
  EXPECT_GE(s.xid.window_s, 1.0);
}

}  // namespace
}  // namespace ceilings
