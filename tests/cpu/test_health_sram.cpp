// The SRAM error status (nvmlDeviceGetSramEccErrorStatus): the struct the harness hands NVML, the readings in the
// health section, the "SRAM error threshold" row and its rules key, and `ceilings health` / `qualify` end to end
// against the scripted fake NVML.
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
#include "support/fake_nvml_cli.hpp"
#include "support/health_rows.hpp"
#include "harness/nvml.hpp"

namespace ceilings {
namespace {

using State = HealthMetric::State;
const char* const kFlag = "ecc.sram.threshold_exceeded";

using test::find_row;
using test::status_of;

HealthSection section_with_flag(HealthMetric before, HealthMetric after) {
  HealthSection s = test::two_snapshot_section();
  s.before.metrics[kFlag] = before;
  s.after->metrics[kFlag] = after;
  return s;
}

// The flag set in either snapshot fails, naming the aggregate uncorrectable SRAM errors by unit; clear passes
// (errors below the threshold noted); not read, no row; an unreadable flag is the "counters readable" row's.
TEST(HealthChecks, SramThresholdExceededFailsAndNamesTheUnits) {
  const std::string rule = "SRAM error threshold";
  HealthSection s = section_with_flag(HealthMetric::of(0), HealthMetric::of(0));
  auto checks = health_checks(s, HealthRules{});
  ASSERT_EQ(status_of(checks, rule), "pass");
  EXPECT_EQ(find_row(checks, rule)->reason, "");
  EXPECT_EQ(find_row(checks, rule)->measured_text, "not exceeded");

  s.after->metrics["ecc.aggregate.sram.uncorrected_l2"] = HealthMetric::of(3);
  s.after->metrics["ecc.aggregate.sram.uncorrected_sm"] = HealthMetric::of(0);
  checks = health_checks(s, HealthRules{});
  ASSERT_EQ(status_of(checks, rule), "pass");
  EXPECT_NE(find_row(checks, rule)->reason.find("3 uncorrectable SRAM error(s) over the GPU's life, below NVML's "
                                                "threshold (noted) (aggregate uncorrectable SRAM errors by unit: L2 3, "
                                                "SM 0)"),
            std::string::npos)
      << find_row(checks, rule)->reason;

  s.after->metrics[kFlag] = HealthMetric::of(1);  // set during the run
  checks = health_checks(s, HealthRules{});
  ASSERT_EQ(status_of(checks, rule), "fail");
  const Check* c = find_row(checks, rule);
  EXPECT_EQ(c->measured_text, "exceeded");
  EXPECT_EQ(c->reason,
            "the SRAM uncorrectable-error threshold is exceeded (NVML's field-diagnostic flag, set during the run) "
            "(aggregate uncorrectable SRAM errors by unit: L2 3, SM 0): run the field diagnostic and contact the "
            "vendor (RMA)");
  for (const Check& k : checks) EXPECT_TRUE(k.status != CheckStatus::kFail || k.rule == rule) << k.rule;  // its own row

  s = section_with_flag(HealthMetric::of(1), HealthMetric::unreadable("Unknown Error"));  // set before: fails
  checks = health_checks(s, HealthRules{});
  ASSERT_EQ(status_of(checks, rule), "fail");
  EXPECT_EQ(find_row(checks, rule)->reason.find("set during the run"), std::string::npos);
  EXPECT_EQ(find_row(checks, rule)->reason.find("by unit"), std::string::npos);  // no unit counts read

  HealthRules off;
  off.sram_threshold = false;
  EXPECT_EQ(status_of(health_checks(s, off), rule), "absent");
  EXPECT_EQ(status_of(health_checks(s, HealthRules::none()), rule), "absent");

  // Not answered (a GPU before Ampere, or not root: the section keeps no reason): a noted row naming both, so a
  // run as another user does not drop the check without a word; nothing unreadable. An older section: no row.
  s = section_with_flag(HealthMetric::unsupported(), HealthMetric::unsupported());
  checks = health_checks(s, HealthRules{});
  ASSERT_EQ(status_of(checks, rule), "not judged");
  EXPECT_EQ(find_row(checks, rule)->measured_text, "not read");
  EXPECT_NE(find_row(checks, rule)->reason.find("it answers root only, and GPUs before Ampere have none"),
            std::string::npos)
      << find_row(checks, rule)->reason;
  EXPECT_EQ(status_of(checks, "counters readable"), "pass");
  EXPECT_EQ(status_of(health_checks(s, off), rule), "absent");
  s.before.metrics.erase(kFlag);
  s.after->metrics.erase(kFlag);
  EXPECT_EQ(status_of(health_checks(s, HealthRules{}), rule), "absent");
  // NVML failed to read it: no row of its own, the "counters readable" row says so.
  const HealthMetric failed = HealthMetric::unreadable("Unknown Error (999)");
  s = section_with_flag(failed, failed);
  checks = health_checks(s, HealthRules{});
  EXPECT_EQ(status_of(checks, rule), "absent");
  ASSERT_EQ(status_of(checks, "counters readable"), "incomplete");
  EXPECT_NE(find_row(checks, "counters readable")->reason.find("ecc.sram.threshold_exceeded (Unknown Error (999))"),
            std::string::npos);
}

// A flag is 0 or 1: anything else NVML answers is no reading. The metrics survive JSON (a flag as true/false, the
// counts as numbers); a reading kept as unsupported for want of permission is written "unsupported", the form every
// reader takes, with why under unsupported_why, and the table shows why.
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
  // ... and why, beside it (review 91: the table said "no permission", the JSON and the profile did not).
  EXPECT_EQ(j["after"]["unsupported_why"]["ecc.aggregate.sram.uncorrected_l2"],
            "NVML: no permission, it answers root only");
  EXPECT_FALSE(j["before"].contains("unsupported_why"));
  EXPECT_EQ(back.after->find("ecc.aggregate.sram.uncorrected_l2")->reason, "NVML: no permission, it answers root only");
  EXPECT_EQ(status_of(health_checks(back, HealthRules{}), "SRAM error threshold"), "fail");
  // A number for the flag is refused, as for every flag.
  json bad = j;
  bad["after"]["metrics"][kFlag] = 1;
  EXPECT_THROW(health_from_json(bad), InputError);

  const std::string table = render(health_table(s), Format::kTable);
  EXPECT_NE(table.find("unsupported (NVML: no permission, it answers root only)"), std::string::npos) << table;
}

// The rules key: a boolean, on by default, false drops the row; another type is refused with its path.
TEST(Rules, SramThresholdKeyIsABooleanOnByDefault) {
  EXPECT_TRUE(default_rules().health.sram_threshold);
  EXPECT_FALSE(HealthRules::none().sram_threshold);
  const Rules off = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"sram_threshold":false}})"), "x");
  EXPECT_FALSE(off.health.sram_threshold);
  EXPECT_TRUE(off.health.uncorrected_ecc);
  try {
    parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"sram_threshold":"yes"}})"), "x");
    ADD_FAILURE() << "a string was taken for a boolean";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'health.sram_threshold': expected true or false"), std::string::npos)
        << e.what();
  }
}

// ---- the harness against the fake NVML, in process ------------------------------------------------------

std::string write_script(const std::string& name, const json& script) {
  const std::string dir = test::scratch_dir(name);
  std::ofstream(dir + "/script.json") << script.dump();
  return dir + "/script.json";
}

json base_script() { return test::fake_nvml_base_script(); }

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

// ---- `ceilings health` and `qualify` against the fake NVML ---------------------------------------------

json healthy_script() {
  json s = test::fake_nvml_healthy_script();
  s["values"]["sram.threshold_exceeded"] = 0;
  return s;
}

test::CliResult health_with(const json& script, std::vector<std::string> args = {"--watch", "0"}) {
  return test::health_with_fake_nvml(script, std::move(args), "health_sram_");
}

// Clear: a passing row. Set: exit 1, the reason with the unit counts. Not supported (a GPU before Ampere), or
// no permission (not root): no row, exit 0, the table saying why; another NVML error: could not read, exit 3.
TEST(HealthCli, SramThresholdThroughTheLoader) {
  json script = healthy_script();
  auto r = health_with(script);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SRAM error threshold"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not exceeded"), std::string::npos) << r.out;

  script["values"]["sram.threshold_exceeded"] = 1;
  script["values"]["sram.aggregate_uncorrected_l2"] = 2;
  script["values"]["sram.aggregate_uncorrected_mcu"] = 1;
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("the SRAM uncorrectable-error threshold is exceeded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("L2 2, SM 0, PCIe 0, microcontroller 1, other 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("contact the vendor (RMA)"), std::string::npos) << r.out;
  r = health_with(script, {"--json", "--watch", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["before"]["metrics"][kFlag], true);
  EXPECT_EQ(j["after"]["metrics"]["ecc.aggregate.sram.uncorrected_l2"], 2);
  EXPECT_EQ(j["after"]["metrics"]["ecc.aggregate.sram.uncorrected_mcu"], 1);

  script = healthy_script();
  script["values"].erase("sram.threshold_exceeded");  // NOT_SUPPORTED: noted as not read, not judged
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("NVML did not answer the SRAM's ECC status"), std::string::npos) << r.out;

  script = healthy_script();
  script["errors"]["sram"] = 4;  // NO_PERMISSION: not root
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("measure as root to judge it"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unsupported (NVML: no permission, it answers root only)"), std::string::npos) << r.out;
  r = health_with(script, {"--json", "--watch", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["before"]["metrics"][kFlag], "unsupported");

  // A driver that takes another version of the struct (ARGUMENT_VERSION_MISMATCH): not there, never an error that
  // would leave every run incomplete.
  script["errors"]["sram"] = 25;
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("unsupported (NVML: this driver takes another struct version)"), std::string::npos) << r.out;

  script["errors"]["sram"] = 999;  // any other error: could not read
  r = health_with(script);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("ecc.sram.threshold_exceeded (Unknown Error (999))"), std::string::npos) << r.out;
}

// NVML's strings are printed and stored as printable text: a terminal escape in the name or a newline in the driver's
// version reached the terminal as they were, and broke the header line (review 48).
TEST(HealthCli, NvmlStringsArePrintedAsPrintableText) {
  json script = healthy_script();
  script["device"]["name"] = "NVIDIA H200\x1b[31mRED\x07";
  script["driver"] = "580\n.95";
  auto r = health_with(script);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NVIDIA H200?[31mRED?"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("driver 580?.95"), std::string::npos) << r.out;
  r = health_with(script, {"--json", "--watch", "0"});
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("device").at("name"), "NVIDIA H200?[31mRED?") << doc.dump();
  EXPECT_EQ(doc.at("driver"), "580?.95") << doc.dump();
}

// A profile carrying what `health` read: the flag survives the profile's write and read, `qualify` fails it, the
// rules key false drops the row, and a rules key of the wrong type is bad input (exit 2).
TEST(HealthCli, SramThresholdInAProfileIsJudgedByQualify) {
  json script = healthy_script();
  script["values"]["sram.threshold_exceeded"] = 1;
  script["values"]["sram.aggregate_uncorrected_sm"] = 4;
  auto r = health_with(script, {"--json", "--watch", "0"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const std::string path = test::write_profile_with_health(json::parse(r.out), "health_sram_qualify");
  const std::string dir = path.substr(0, path.rfind('/'));
  const Profile p = read_profile(path);
  const HealthSection s = health_from_json(p.raw["health"]);
  EXPECT_DOUBLE_EQ(*s.after->value(kFlag), 1);
  EXPECT_DOUBLE_EQ(*s.after->value("ecc.aggregate.sram.uncorrected_sm"), 4);

  r = test::run_cli({"qualify", path});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("the SRAM uncorrectable-error threshold is exceeded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SM 4"), std::string::npos) << r.out;

  std::ofstream(dir + "/off.rules.json") << R"({"schema":"ceilings.rules/1","health":{"sram_threshold":false}})";
  r = test::run_cli({"qualify", path, "--rules", dir + "/off.rules.json"});
  // A verdict, judged without the row: a refused or crashed run prints nothing, which the two checks below would
  // take for the row's absence (review 50).
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << r.out << r.err;
  EXPECT_EQ(r.out.rfind("verdict: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("counters readable"), std::string::npos) << r.out;  // the health section was judged
  EXPECT_EQ(r.out.find("SRAM error threshold"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("SRAM uncorrectable-error threshold"), std::string::npos) << r.out;

  std::ofstream(dir + "/bad.rules.json") << R"({"schema":"ceilings.rules/1","health":{"sram_threshold":1}})";
  r = test::run_cli({"qualify", path, "--rules", dir + "/bad.rules.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("health.sram_threshold"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ceilings
