// Memory repairs (nvmlDeviceGetUnrepairableMemoryFlag_v1, nvmlDeviceGetRepairStatus): the structs the harness hands
// NVML (the unrepairable flag's layout is not settled, so every layout a driver might take is tried), the readings in
// the health section, the "memory repair" row and its rules key, and `ceilings health` / `qualify` end to end against
// the scripted fake NVML.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
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
#include "support/fake_nvml_cli.hpp"
#include "support/health_rows.hpp"

namespace ceilings {
namespace {

using State = HealthMetric::State;
const std::string kRow = "memory repair";

using test::find_row;
using test::status_of;

// Both snapshots with the three readings clear.
HealthSection section() {
  HealthSection s = test::two_snapshot_section();
  for (const char* m : {"memory.unrepairable", "repair.channel_pending", "repair.tpc_pending"})
    s.before.metrics[m] = s.after->metrics[m] = HealthMetric::of(0);
  return s;
}

// Clear: a passing row. Unrepairable memory set in either snapshot fails (isolate, field diagnostic); a channel or
// TPC repair pending fails until a reset; each is named. Only some read: judged on those, the others named.
TEST(HealthChecks, MemoryRepairFlagsFailAndSayWhatToDo) {
  HealthSection s = section();
  auto checks = health_checks(s, HealthRules{});
  ASSERT_EQ(status_of(checks, kRow), "pass");
  EXPECT_EQ(find_row(checks, kRow)->measured_text, "none");
  EXPECT_EQ(find_row(checks, kRow)->reason, "");

  s.after->metrics["memory.unrepairable"] = HealthMetric::of(1);  // set during the run
  checks = health_checks(s, HealthRules{});
  ASSERT_EQ(status_of(checks, kRow), "fail");
  EXPECT_EQ(find_row(checks, kRow)->measured_text, "unrepairable memory");
  EXPECT_EQ(find_row(checks, kRow)->reason,
            "NVML flags memory this GPU cannot repair (set during the run): isolate the GPU and run NVIDIA's field "
            "diagnostic, which decides a return to the vendor (RMA)");
  for (const Check& k : checks) EXPECT_TRUE(k.status != CheckStatus::kFail || k.rule == kRow) << k.rule;

  s = section();
  s.before.metrics["repair.channel_pending"] = HealthMetric::of(1);
  checks = health_checks(s, HealthRules{});
  ASSERT_EQ(status_of(checks, kRow), "fail");
  EXPECT_EQ(find_row(checks, kRow)->measured_text, "memory channel repair pending");
  EXPECT_EQ(find_row(checks, kRow)->reason,
            "a memory channel repair is pending (NVML's repair status): drain the GPU, reset it and qualify it again "
            "(taken to be applied at the next reset, as a pending row remap is; NVIDIA's documentation says no more "
            "than pending)");
  s.after->metrics["repair.tpc_pending"] = HealthMetric::of(1);
  checks = health_checks(s, HealthRules{});
  EXPECT_EQ(find_row(checks, kRow)->measured_text, "memory channel repair pending, TPC repair pending");
  EXPECT_NE(find_row(checks, kRow)->reason.find("a memory channel repair and a TPC repair are pending"),
            std::string::npos);

  // An Ampere GPU on R580: the repair status read, no unrepairable flag. Judged on what was read, the rest named.
  s = section();
  s.before.metrics["memory.unrepairable"] = s.after->metrics["memory.unrepairable"] = HealthMetric::unsupported();
  checks = health_checks(s, HealthRules{});
  ASSERT_EQ(status_of(checks, kRow), "pass");
  EXPECT_NE(find_row(checks, kRow)->reason.find("not read: unrepairable memory (NVML does not support the call here: "
                                                "drivers before R590 and GPUs before Hopper"),
            std::string::npos)
      << find_row(checks, kRow)->reason;
  EXPECT_EQ(find_row(checks, kRow)->reason.find("R580"), std::string::npos) << find_row(checks, kRow)->reason;
  EXPECT_EQ(status_of(checks, "counters readable"), "pass");

  // None answered (an older driver), or a section recorded before the readings existed: no row.
  for (const char* m : {"repair.channel_pending", "repair.tpc_pending"})
    s.before.metrics[m] = s.after->metrics[m] = HealthMetric::unsupported();
  EXPECT_EQ(status_of(health_checks(s, HealthRules{}), kRow), "absent");
  s = section();
  for (const char* m : {"memory.unrepairable", "repair.channel_pending", "repair.tpc_pending"}) {
    s.before.metrics.erase(m);
    s.after->metrics.erase(m);
  }
  EXPECT_EQ(status_of(health_checks(s, HealthRules{}), kRow), "absent");

  // NVML failed to read one (an error, or a struct left unwritten): the row is incomplete, naming it, also with the
  // "counters readable" row switched off; a flag read and set still fails.
  s = section();
  s.after->metrics["memory.unrepairable"] = HealthMetric::unreadable("Unknown Error (999)");
  checks = health_checks(s, HealthRules{});
  ASSERT_EQ(status_of(checks, "counters readable"), "incomplete");
  EXPECT_NE(find_row(checks, "counters readable")->reason.find("memory.unrepairable (Unknown Error (999))"),
            std::string::npos);
  HealthRules unread;
  unread.readable = false;
  checks = health_checks(s, unread);
  ASSERT_EQ(status_of(checks, kRow), "incomplete");
  EXPECT_EQ(find_row(checks, kRow)->measured_text, "not all read");
  EXPECT_NE(find_row(checks, kRow)->reason.find("memory.unrepairable: could not read (Unknown Error (999)), not "
                                                "judged on it"),
            std::string::npos)
      << find_row(checks, kRow)->reason;
  s.before.metrics["repair.tpc_pending"] = HealthMetric::of(1);
  EXPECT_EQ(status_of(health_checks(s, unread), kRow), "fail");
  s = section();  // every one unreadable: still a row
  for (const char* m : {"memory.unrepairable", "repair.channel_pending", "repair.tpc_pending"})
    s.before.metrics[m] = s.after->metrics[m] = HealthMetric::unreadable("implausible");
  EXPECT_EQ(status_of(health_checks(s, unread), kRow), "incomplete");

  // The rules key.
  s = section();
  s.after->metrics["memory.unrepairable"] = HealthMetric::of(1);
  HealthRules off;
  off.memory_repair = false;
  EXPECT_EQ(status_of(health_checks(s, off), kRow), "absent");
  EXPECT_EQ(status_of(health_checks(s, HealthRules::none()), kRow), "absent");
}

// The flags are 0 or 1 (a struct the driver left unwritten holds the version word: no reading), and survive JSON as
// true/false.
TEST(HealthSection, MemoryRepairFlagsRoundTripAndArePlausible) {
  EXPECT_EQ(plausible_metric("memory.unrepairable", 16777224.0).state, State::kUnreadable);
  EXPECT_EQ(plausible_metric("repair.tpc_pending", 2).state, State::kUnreadable);
  EXPECT_TRUE(plausible_metric("repair.channel_pending", 1).ok());
  HealthSection s = section();
  s.after->metrics["memory.unrepairable"] = HealthMetric::of(1);
  const json j = health_to_json(s);
  EXPECT_EQ(j["before"]["metrics"]["memory.unrepairable"], false);
  EXPECT_EQ(j["after"]["metrics"]["memory.unrepairable"], true);
  const HealthSection back = health_from_json(j);
  EXPECT_DOUBLE_EQ(*back.after->value("memory.unrepairable"), 1);
  EXPECT_EQ(status_of(health_checks(back, HealthRules{}), kRow), "fail");
}

TEST(Rules, MemoryRepairKeyIsABooleanOnByDefault) {
  EXPECT_TRUE(default_rules().health.memory_repair);
  EXPECT_FALSE(HealthRules::none().memory_repair);
  const Rules off = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"memory_repair":false}})"), "x");
  EXPECT_FALSE(off.health.memory_repair);
  EXPECT_TRUE(off.health.row_remap);
  try {
    parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"memory_repair":"no"}})"), "x");
    ADD_FAILURE() << "a string was taken for a boolean";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'health.memory_repair': expected true or false"), std::string::npos)
        << e.what();
  }
}

// ---- the harness against the fake NVML, in process ------------------------------------------------------

json base_script() { return test::fake_nvml_base_script("590.44.01"); }

// Opens the fake NVML with `script` and hands its first device to `body`.
template <class Body>
void with_fake_device(const std::string& name, const json& script, Body body) {
  const std::string path = test::scratch_dir(name) + "/script.json";
  std::ofstream(path) << script.dump();
  setenv("CEILINGS_FAKE_NVML_SCRIPT", path.c_str(), 1);
  setenv(nvml::Library::kPathVariable, CEILINGS_FAKE_NVML, 1);
  {
    std::string why;
    const auto lib = nvml::Library::open(&why);
    ASSERT_NE(lib, nullptr) << why;
    const auto dev = lib->device_by_index(0);
    ASSERT_TRUE(dev.ok());
    body(*lib, dev.value);
  }
  unsetenv(nvml::Library::kPathVariable);
  unsetenv("CEILINGS_FAKE_NVML_SCRIPT");
}

// Whichever layout the driver takes (a version word then the flag, as NVIDIA's Python bindings and DCGM pass it; or
// nvml.h's one word, checked or not), the flag is read from where the driver wrote it; a driver that writes nothing
// leaves the version word, which is no flag.
TEST(NvmlLoader, UnrepairableMemoryFlagIsReadWhicheverLayoutTheDriverTakes) {
  for (const char* layout : {"versioned", "header", "header_checked"})
    for (unsigned flag : {0u, 1u}) {
      SCOPED_TRACE(std::string(layout) + " " + std::to_string(flag));
      json script = base_script();
      script["unrepairable_layout"] = layout;
      script["values"]["memory.unrepairable"] = flag;
      with_fake_device("unrepairable_layout", script, [&](const nvml::Library& lib, const nvml::Device& dev) {
        const auto r = dev.unrepairable_memory();
        ASSERT_TRUE(r.ok()) << lib.error_string(r.code);
        EXPECT_EQ(r.value, flag);
      });
    }
  json script = base_script();
  script["unrepairable_layout"] = "silent";
  script["values"]["memory.unrepairable"] = 1;
  with_fake_device("unrepairable_silent", script, [&](const nvml::Library&, const nvml::Device& dev) {
    const auto r = dev.unrepairable_memory();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(plausible_metric("memory.unrepairable", r.value).state, State::kUnreadable) << r.value;
  });
  script = base_script();  // not supported: no key
  with_fake_device("unrepairable_unsupported", script, [&](const nvml::Library&, const nvml::Device& dev) {
    EXPECT_TRUE(dev.unrepairable_memory().unsupported());
  });
}

// nvmlRepairStatus_v1_t carries its version: the fake answers ARGUMENT_VERSION_MISMATCH otherwise (shown by calling
// it with none), and the two flags land where nvml.h lays them out.
TEST(NvmlLoader, RepairStatusIsReadWithTheStructsVersion) {
  json script = base_script();
  script["values"]["repair.channel_pending"] = 0;
  script["values"]["repair.tpc_pending"] = 1;
  with_fake_device("repair_status", script, [&](const nvml::Library& lib, const nvml::Device& dev) {
    const auto r = dev.repair_status();
    ASSERT_TRUE(r.ok()) << lib.error_string(r.code);
    EXPECT_EQ(r.value.channel_pending, 0u);
    EXPECT_EQ(r.value.tpc_pending, 1u);
    void* fake = dlopen(CEILINGS_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(fake, nullptr);
    const auto fn = reinterpret_cast<int (*)(void*, unsigned*)>(dlsym(fake, "nvmlDeviceGetRepairStatus"));
    ASSERT_NE(fn, nullptr);
    unsigned words[3] = {0, 0, 0};
    EXPECT_EQ(fn(dev.raw(), words), 25);
    words[0] = 12u | (1u << 24);
    EXPECT_EQ(fn(dev.raw(), words), 0);
    EXPECT_EQ(words[2], 1u);
    dlclose(fake);
  });
}

// ---- `ceilings health` and `qualify` against the fake NVML ---------------------------------------------

json healthy_script() {
  json s = test::fake_nvml_healthy_script("590.44.01");
  for (const char* k : {"memory.unrepairable", "repair.channel_pending", "repair.tpc_pending"}) s["values"][k] = 0;
  return s;
}

test::CliResult health_with(const json& script, std::vector<std::string> args = {"--watch", "0"}) {
  return test::health_with_fake_nvml(script, std::move(args), "health_repair_");
}

// Clear: a passing row, exit 0. Unrepairable memory: exit 1, and `qualify` of a profile carrying the section fails it
// too (the rules key false drops the row). A driver without the calls: no row, exit 0; one that takes another
// struct version: not there either; another NVML error: could not read, exit 3.
TEST(HealthCli, MemoryRepairThroughTheLoaderAndQualify) {
  json script = healthy_script();
  auto r = health_with(script);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("memory repair"), std::string::npos) << r.out;

  script["values"]["memory.unrepairable"] = 1;
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("NVML flags memory this GPU cannot repair"), std::string::npos) << r.out;
  r = health_with(script, {"--json", "--watch", "0"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const json health = json::parse(r.out);
  EXPECT_EQ(health["after"]["metrics"]["memory.unrepairable"], true);
  const std::string path = test::write_profile_with_health(health, "health_repair_qualify");
  const std::string dir = path.substr(0, path.rfind('/'));
  auto q = test::run_cli({"qualify", path});
  EXPECT_EQ(q.exit_code, 1) << q.out << q.err;
  EXPECT_NE(q.out.find("NVML flags memory this GPU cannot repair"), std::string::npos) << q.out;
  std::ofstream(dir + "/off.rules.json") << R"({"schema":"ceilings.rules/1","health":{"memory_repair":false}})";
  q = test::run_cli({"qualify", path, "--rules", dir + "/off.rules.json"});
  EXPECT_EQ(q.exit_code, 0) << q.out << q.err;
  EXPECT_EQ(q.out.rfind("verdict: ", 0), 0u) << q.out;
  EXPECT_NE(q.out.find("counters readable"), std::string::npos) << q.out;
  EXPECT_EQ(q.out.find("memory repair"), std::string::npos) << q.out;

  script = healthy_script();
  script["values"]["repair.channel_pending"] = 1;
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("drain the GPU, reset it and qualify it again"), std::string::npos) << r.out;

  script = healthy_script();  // a driver before R580
  for (const char* k : {"memory.unrepairable", "repair.channel_pending", "repair.tpc_pending"}) script["values"].erase(k);
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("memory repair"), std::string::npos) << r.out;

  script = healthy_script();
  script["errors"]["repair"] = 25;  // another version of the repair struct: not there, named in the table
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("unsupported (NVML: this driver takes another struct version)"), std::string::npos) << r.out;

  // A driver that refuses both layouts: not there (named in the table), no verdict held back; one that answers and
  // writes nothing: no flag, could not read (exit 3), the row incomplete.
  script = healthy_script();
  script["unrepairable_layout"] = "reject";
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("not read: unrepairable memory"), std::string::npos) << r.out;
  script["unrepairable_layout"] = "silent";
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("memory.unrepairable: could not read"), std::string::npos) << r.out;

  script = healthy_script();  // a repair status answered but not written: no reading, not "none pending"
  script["repair_silent"] = true;
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("repair.channel_pending: could not read"), std::string::npos) << r.out;

  script = healthy_script();
  script["errors"]["unrepairable"] = 999;
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("memory.unrepairable (Unknown Error (999))"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ceilings
