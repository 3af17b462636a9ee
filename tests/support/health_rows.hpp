// Shared pieces of the tests of one NVML health reading (test_health_sram.cpp, test_health_repair.cpp): a health
// section of two snapshots to put the reading in, the judgement's rows by name, and the fake NVML's scripts.
#pragma once
#include <fstream>
#include <string>
#include <vector>

#include "ceilings/health.hpp"
#include "ceilings/json_fields.hpp"
#include "ceilings/qualify.hpp"
#include "cli_runner.hpp"

namespace ceilings::test {

// A health section of an H200 with ECC on, two snapshots ten minutes apart and an XID watch that saw nothing: the
// caller adds the readings under test.
inline HealthSection two_snapshot_section() {
  HealthSection s;
  s.device_name = "NVIDIA H200";
  s.uuid = "GPU-1";
  s.before.time = "2026-11-30T12:00:00Z";
  s.before.metrics["ecc.enabled"] = HealthMetric::of(1);
  s.after = s.before;
  s.after->time = "2026-11-30T12:10:00Z";
  s.xid.state = HealthMetric::State::kValue;
  s.xid.window_s = 600;
  return s;
}

inline const Check* find_row(const std::vector<Check>& checks, const std::string& rule) {
  for (const Check& c : checks)
    if (c.rule == rule) return &c;
  return nullptr;
}

// The row's status by name ("pass", "fail", ...), "absent" where there is none.
inline std::string status_of(const std::vector<Check>& checks, const std::string& rule) {
  const Check* c = find_row(checks, rule);
  return c ? status_name(c->status) : "absent";
}

// The fake NVML's script of one H200 and no readings (every call answers NOT_SUPPORTED).
inline json fake_nvml_base_script(const std::string& driver = "580.95.05") {
  json s = json::parse(R"({"init":0,"device_count":1,
    "device":{"name":"NVIDIA H200","uuid":"GPU-fake-1","pci_bus_id":"00000000:19:00.0"},"values":{}})");
  s["driver"] = driver;
  return s;
}

// ... with the readings of a healthy, idle H200 that `health` judges (ECC, remaps, PCIe Gen5 x16, clocks, power,
// temperatures) and an empty XID list.
inline json fake_nvml_healthy_script(const std::string& driver = "580.95.05") {
  json s = fake_nvml_base_script(driver);
  s["values"] = json::parse(R"({"ecc.enabled":1,"ecc.volatile.corrected":0,"ecc.volatile.uncorrected":0,
      "remap.correctable_rows":0,"remap.uncorrectable_rows":0,"remap.pending":0,"remap.failure":0,"pcie.gen":5,
      "pcie.width":16,"pcie.max_gen":5,"pcie.max_width":16,"pcie.gpu_max_gen":5,"pcie.replays":0,"clocks.sm_mhz":1980,
      "clocks.mem_mhz":3201,"clocks.max_sm_mhz":1980,"clocks.max_mem_mhz":3201,"clocks.event_reasons":1,
      "throttle.power_ns":0,"throttle.thermal_ns":0,"power.usage_mw":118000,"power.limit_mw":700000,
      "power.enforced_limit_mw":700000,"temperature.gpu_c":34,"temperature.slowdown_c":87,
      "temperature.shutdown_c":92})");
  s["xid"] = json::array();
  return s;
}

// The qualify fixture's H200 carrying `health` (what `ceilings health --json` printed against the fake NVML, whose GPU
// it becomes), written to a scratch directory of `name`; returns its path.
inline std::string write_profile_with_health(const json& health, const std::string& name) {
  json profile = read_json_file(std::string(CEILINGS_FIXTURES) + "/profiles/h200-qualify.profile.json");
  profile["device"]["uuid"] = "GPU-fake-1";
  profile["health"] = health;
  const std::string path = scratch_dir(name) + "/node.profile.json";
  std::ofstream(path) << profile.dump(2);
  return path;
}

}  // namespace ceilings::test
