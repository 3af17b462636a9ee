// The SRAM error status (nvmlDeviceGetSramEccErrorStatus): the struct the harness hands NVML and the readings in the
// health section.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ceilings/error.hpp"
#include "ceilings/health.hpp"
#include "ceilings/json_fields.hpp"
#include "ceilings/profile.hpp"
#include "ceilings/qualify.hpp"
#include "cli_runner.hpp"
#include "harness/nvml.hpp"

namespace ceilings {
namespace {

using State = HealthMetric::State;
const char* const kFlag = "ecc.sram.threshold_exceeded";

HealthSection section_with_flag(HealthMetric before, HealthMetric after) {
  HealthSection s;
  s.device_name = "NVIDIA H200";
  s.uuid = "GPU-1";
  s.before.time = "2026-11-30T12:00:00Z";
  s.before.metrics["ecc.enabled"] = HealthMetric::of(1);
  s.after = s.before;
  s.after->time = "2026-11-30T12:10:00Z";
  s.before.metrics[kFlag] = before;
  s.after->metrics[kFlag] = after;
  s.xid.state = State::kValue;
  s.xid.window_s = 600;
  return s;
}

// A flag is 0 or 1: anything else NVML answers is no reading. The metrics survive JSON (a flag as true/false, the
// counts as numbers); a reading kept as unsupported for want of permission is written "unsupported", the form every
// reader takes, and the table shows why.
TEST(HealthSection, SramStatusRoundTripsAndIsPlausible) {
  EXPECT_EQ(plausible_metric(kFlag, 2).state, State::kUnreadable);
  EXPECT_TRUE(plausible_metric(kFlag, 1).ok());
  EXPECT_TRUE(plausible_metric("ecc.aggregate.sram.uncorrected_mcu", 12).ok());
  EXPECT_EQ(plausible_metric("ecc.aggregate.sram.uncorrected_other", 18446744073709551615.0).state, State::kUnreadable);

  HealthSection s = section_with_flag(HealthMetric::of(0), HealthMetric::of(1));
  s.before.metrics["ecc.aggregate.sram.uncorrected_pcie"] = HealthMetric::of(1);
  s.after->metrics["ecc.aggregate.sram.uncorrected_pcie"] = HealthMetric::of(4);
  s.after->metrics["ecc.aggregate.sram.uncorrected_l2"] =
      HealthMetric{State::kUnsupported, 0, "NVML: no permission, it answers root only"};
  const json j = health_to_json(s);
  EXPECT_EQ(j["before"]["metrics"][kFlag], false);
  EXPECT_EQ(j["after"]["metrics"][kFlag], true);
  EXPECT_EQ(j["after"]["metrics"]["ecc.aggregate.sram.uncorrected_pcie"], 4);
  EXPECT_EQ(j["after"]["metrics"]["ecc.aggregate.sram.uncorrected_l2"], "unsupported");
  EXPECT_EQ(j["deltas"]["ecc.aggregate.sram.uncorrected_pcie"], 3);
  const HealthSection back = health_from_json(j);
  EXPECT_DOUBLE_EQ(*back.before.value(kFlag), 0);
  EXPECT_DOUBLE_EQ(*back.after->value(kFlag), 1);
  EXPECT_DOUBLE_EQ(*back.after->value("ecc.aggregate.sram.uncorrected_pcie"), 4);
  EXPECT_EQ(back.after->find("ecc.aggregate.sram.uncorrected_l2")->state, State::kUnsupported);
  // A number for the flag is refused, as for every flag.
  json bad = j;
  bad["after"]["metrics"][kFlag] = 1;
  EXPECT_THROW(health_from_json(bad), InputError);

  const std::string table = render(health_table(s), Format::kTable);
  EXPECT_NE(table.find("unsupported (NVML: no permission, it answers root only)"), std::string::npos) << table;
}

// ---- the harness against the fake NVML, in process ------------------------------------------------------

std::string write_script(const std::string& name, const json& script) {
  const std::string dir = test::scratch_dir(name);
  std::ofstream(dir + "/script.json") << script.dump();
  return dir + "/script.json";
}

json base_script() {
  return json::parse(R"({"init":0,"device_count":1,"driver":"580.95.05",
    "device":{"name":"NVIDIA H200","uuid":"GPU-fake-1","pci_bus_id":"00000000:19:00.0"},"values":{}})");
}

// The harness sets nvmlEccSramErrorStatus_v1's version: the fake answers ARGUMENT_VERSION_MISMATCH otherwise (shown
// by calling it with a wrong one), and the values land in the fields nvml.h lays them out in.
TEST(NvmlLoader, SramEccStatusIsReadWithTheStructsVersion) {
  json script = base_script();
  script["values"]["sram.threshold_exceeded"] = 1;
  script["values"]["sram.aggregate_uncorrected_l2"] = 2;
  script["values"]["sram.aggregate_uncorrected_sm"] = 3;
  script["values"]["sram.aggregate_uncorrected_pcie"] = 5;
  script["values"]["sram.aggregate_uncorrected_mcu"] = 7;
  script["values"]["sram.aggregate_uncorrected_other"] = 11;
  setenv("CEILINGS_FAKE_NVML_SCRIPT", write_script("sram_loader", script).c_str(), 1);
  setenv(nvml::Library::kPathVariable, CEILINGS_FAKE_NVML, 1);
  {
    std::string why;
    const auto lib = nvml::Library::open(&why);
    ASSERT_NE(lib, nullptr) << why;
    const auto dev = lib->device_by_index(0);
    ASSERT_TRUE(dev.ok());
    const auto st = dev.value.sram_ecc_status();
    ASSERT_TRUE(st.ok()) << lib->error_string(st.code);
    EXPECT_EQ(st.value.threshold_exceeded, 1u);
    EXPECT_EQ(st.value.uncorrected_l2, 2u);
    EXPECT_EQ(st.value.uncorrected_sm, 3u);
    EXPECT_EQ(st.value.uncorrected_pcie, 5u);
    EXPECT_EQ(st.value.uncorrected_mcu, 7u);
    EXPECT_EQ(st.value.uncorrected_other, 11u);

    // The same entry point called with the struct's version wrong (v2's number, or none) is refused.
    void* fake = dlopen(CEILINGS_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(fake, nullptr);
    using Fn = int (*)(void*, void*);
    const auto fn = reinterpret_cast<Fn>(dlsym(fake, "nvmlDeviceGetSramEccErrorStatus"));
    ASSERT_NE(fn, nullptr);
    unsigned char buf[104] = {};
    unsigned version = 104u | (2u << 24);
    std::memcpy(buf, &version, sizeof version);
    EXPECT_EQ(fn(dev.value.raw(), buf), 25);
    version = 0;
    std::memcpy(buf, &version, sizeof version);
    EXPECT_EQ(fn(dev.value.raw(), buf), 25);
    version = 104u | (1u << 24);
    std::memcpy(buf, &version, sizeof version);
    EXPECT_EQ(fn(dev.value.raw(), buf), 0);
    dlclose(fake);
  }
  unsetenv(nvml::Library::kPathVariable);
  unsetenv("CEILINGS_FAKE_NVML_SCRIPT");
}

}  // namespace
}  // namespace ceilings
