// `ceilings compare`: profiles and datasheet entries side by side (hand-written fixtures), all formats.
#include <gtest/gtest.h>

#include <sstream>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "ceilings/compare.hpp"
#include "ceilings/report.hpp"
#include "cli_runner.hpp"

using namespace ceilings;

namespace {
const std::string kH200 = std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json";
const std::string kH100 = std::string(CEILINGS_FIXTURES) + "/profiles/h100-handmade.profile.json";

const CompareRow& row(const Comparison& c, const std::string& name) {
  for (const auto& r : c.rows)
    if (r.ceiling == name) return r;
  throw std::runtime_error("no row " + name);
}
}  // namespace

TEST(Compare, TwoProfiles) {
  const Comparison c = compare_devices({load_compare_device(kH100), load_compare_device(kH200)});
  ASSERT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(c.devices[0].gpu, "H100 SXM");
  const CompareRow& hbm = row(c, "hbm.copy");
  EXPECT_DOUBLE_EQ(*hbm.cells[0].measured, 3.0e12);
  EXPECT_DOUBLE_EQ(*hbm.cells[0].ratio(), 3.0e12 / 3.35e12);
  EXPECT_DOUBLE_EQ(*vs_first(hbm.cells[0], hbm.cells[1]), 4.36e12 / 3.0e12);
  EXPECT_EQ(vs_first_basis(hbm.cells[0], hbm.cells[1]), std::optional<std::string>("measured"));
  const CompareRow& l2 = row(c, "l2.read");  // only the H100 profile has it
  EXPECT_TRUE(l2.cells[0].measured.has_value());
  EXPECT_FALSE(l2.cells[1].measured.has_value());
  EXPECT_FALSE(vs_first(l2.cells[0], l2.cells[1]).has_value());
  EXPECT_FALSE(vs_first_basis(l2.cells[0], l2.cells[1]).has_value());
  const CompareRow& lat = row(c, "latency.launch");
  EXPECT_EQ(lat.unit, "s");
  EXPECT_EQ(c.rows.back().ceiling, "memory.capacity");
  // A ratio that is not a number (a rate of 1e-300 against another) is no ratio, not "infx"
  CompareCell tiny, big;
  tiny.measured = 1e-300;
  big.measured = 4e12;
  EXPECT_FALSE(vs_first(tiny, big).has_value());
  EXPECT_FALSE(vs_first_basis(tiny, big).has_value());  // nor a basis for the ratio there is not
  EXPECT_EQ(csv_number(std::numeric_limits<double>::infinity()), "");
  EXPECT_EQ(csv_number(std::numeric_limits<double>::quiet_NaN()), "");
}

// A ceiling of a family this version does not know takes its unit from the profile: recorded in B/s in one and
// in s in the other, the row printed 400 GB/s beside "2.00e-05 B/s" and a ratio of 0.00x (review 30). Refused,
// as qualify --baseline refuses it.
TEST(Compare, OneCeilingInTwoUnitsIsRefused) {
  const std::string dir = test::scratch_dir("compare_units");
  const json base = parse_json_text(read_text_file(kH200), "fixture");
  const auto write = [&](const std::string& name, const char* unit, double value) {
    json d = base;
    json c = d["ceilings"][0];
    c["name"] = "nccl.allreduce";
    c["unit"] = unit;
    c["value"] = value;
    c.erase("datasheet");
    d["ceilings"].push_back(c);
    write_file_atomic(dir + "/" + name, d.dump());
    return dir + "/" + name;
  };
  const std::string rate = write("rate.profile.json", "B/s", 4e11), time = write("time.profile.json", "s", 2e-5);
  EXPECT_EQ(test::run_cli({"compare", rate, rate}).exit_code, 0);
  const auto r = test::run_cli({"compare", rate, time});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("ceiling 'nccl.allreduce' is in B/s in '" + rate + "' and in s in '" + time +
                       "': not comparable"),
            std::string::npos)
      << r.err;
}

// A measured ratio within 2 standard errors of the two medians of 1 is marked as noise; past them, or against a
// datasheet, or without a spread, it is not.
TEST(Compare, ARatioWithinTheMeasurementsNoiseIsMarked) {
  CompareCell a, b;
  a.measured = 100;
  b.measured = 103;
  EXPECT_FALSE(vs_first_within_noise(a, b).has_value());  // no spreads: no claim
  a.standard_error = 0.02;  // 2% each: 2.8% together, 5.7% at two
  b.standard_error = 0.02;
  EXPECT_EQ(vs_first_within_noise(a, b), std::optional<bool>(true));
  b.measured = 107;
  EXPECT_EQ(vs_first_within_noise(a, b), std::optional<bool>(false));
  CompareCell ds_a, ds_b;
  ds_a.datasheet = 100;
  ds_b.datasheet = 101;
  EXPECT_FALSE(vs_first_within_noise(ds_a, ds_b).has_value());
  // From profiles: the same profile twice is 1.00x and noise in every format.
  const std::string copy = test::scratch_dir("compare_noise") + "/again.profile.json";
  write_file_atomic(copy, read_text_file(kH200));
  const Comparison same = compare_devices({load_compare_device(kH200), load_compare_device(copy)});
  const CompareRow& hbm = row(same, "hbm.copy");
  ASSERT_TRUE(hbm.cells[0].standard_error.has_value());
  EXPECT_EQ(vs_first_within_noise(hbm.cells[0], hbm.cells[1]), std::optional<bool>(true));
  EXPECT_NE(render(comparison_table(same), Format::kTable).find("1.00x (noise)"), std::string::npos);
  EXPECT_NE(comparison_json(same).dump().find("\"vs_first_within_noise\":true"), std::string::npos);
}

// Two runs of one node get one label each, told apart by their files; a throttled value is marked.
TEST(Compare, SameLabelsAreToldApartAndThrottledValuesMarked) {
  const std::string thermal = std::string(CEILINGS_FIXTURES) + "/profiles/degraded/thermal-gemm.profile.json";
  const std::string copy = test::scratch_dir("compare_same_label") + "/again.profile.json";
  write_file_atomic(copy, read_text_file(kH200));
  const Comparison same = compare_devices({load_compare_device(kH200), load_compare_device(copy)});
  EXPECT_NE(same.devices[0].label, same.devices[1].label);
  EXPECT_NE(same.devices[1].label.find("again.profile.json"), std::string::npos) << same.devices[1].label;
  EXPECT_EQ(same.devices[1].label.find("/"), std::string::npos) << same.devices[1].label;  // its name, not its path
  // Two GPUs of one node: their indices tell them apart, no file name needed (review 18: 200-character headers).
  json other = read_json_file(kH200);
  other["device"]["index"] = 5;
  const std::string gpu5 = std::filesystem::path(copy).parent_path() / "node-gpu5.profile.json";
  write_file_atomic(gpu5, other.dump());
  const Comparison node = compare_devices({load_compare_device(kH200), load_compare_device(gpu5)});
  EXPECT_EQ(node.devices[1].label.substr(node.devices[1].label.size() - 6), " GPU 5") << node.devices[1].label;
  EXPECT_EQ(node.devices[0].label.substr(node.devices[0].label.size() - 6), " GPU 0") << node.devices[0].label;
  // Two files of one name in two folders: their paths.
  const std::string elsewhere = test::scratch_dir("compare_same_label_2") + "/again.profile.json";
  write_file_atomic(elsewhere, read_text_file(kH200));
  const Comparison paths = compare_devices({load_compare_device(copy), load_compare_device(elsewhere)});
  EXPECT_NE(paths.devices[1].label.find("[" + elsewhere + "]"), std::string::npos) << paths.devices[1].label;
  EXPECT_EQ(paths.devices[1].label.find("[again.profile.json]"), std::string::npos) << paths.devices[1].label;
  const Comparison c = compare_devices({load_compare_device(kH200), load_compare_device(thermal)});
  ASSERT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(row(c, "gemm.bf16").cells[1].throttled, std::optional<bool>(true));
  EXPECT_EQ(row(c, "gemm.bf16").cells[0].throttled, std::optional<bool>(false));
  const std::string table = render(comparison_table(c), Format::kTable);
  auto line_of = [&](const std::string& ceiling) {
    const std::size_t at = table.find("\n" + ceiling + " ");
    return at == std::string::npos ? std::string() : table.substr(at + 1, table.find('\n', at + 1) - at - 1);
  };
  // The thermal profile's GEMM ran under a hardware thermal slowdown (0x44): "!", not the power cap's "*".
  EXPECT_EQ(row(c, "gemm.bf16").cells[1].hardware_slowdowns, 0x40u);
  EXPECT_NE(line_of("gemm.bf16").find(" !"), std::string::npos) << table;
  EXPECT_FALSE(line_of("hbm.copy").empty()) << table;
  EXPECT_EQ(line_of("hbm.copy").find(" *"), std::string::npos) << table;
  EXPECT_EQ(line_of("hbm.copy").find(" !"), std::string::npos) << table;
  const json j = comparison_json(c);
  for (const auto& r : j["rows"])
    if (r["ceiling"] == "gemm.bf16") {
      EXPECT_EQ(r["values"][1]["hardware_slowdowns"], "hw_thermal_slowdown");
      EXPECT_TRUE(r["values"][0]["hardware_slowdowns"].is_null());
    }
  // Only under the power cap: "*" (the throttled flag, with sw_power_cap alone).
  json capped = read_json_file(thermal);
  for (auto& ce : capped["ceilings"])
    if (ce["name"] == "gemm.bf16") ce["detail"]["throttle_reasons"] = 4;
  const std::string cap = std::filesystem::path(copy).parent_path() / "capped.profile.json";
  write_file_atomic(cap, capped.dump());
  const Comparison k = compare_devices({load_compare_device(kH200), load_compare_device(cap)});
  EXPECT_EQ(row(k, "gemm.bf16").cells[1].hardware_slowdowns, 0u);
  const std::string capped_table = render(comparison_table(k), Format::kTable);
  const std::size_t at = capped_table.find("\ngemm.bf16 ");
  ASSERT_NE(at, std::string::npos) << capped_table;
  const std::string line = capped_table.substr(at + 1, capped_table.find('\n', at + 1) - at - 1);
  EXPECT_NE(line.find(" *"), std::string::npos) << line;
  EXPECT_EQ(line.find(" !"), std::string::npos) << line;
}

// Two profiles measured under different conditions: the differences that move a ratio as much as the hardware
// does are said (review 33: a 400 W limit, another cuBLAS and another release, clocks at 1.2 GHz read as a
// plain 0.60x), and each profile's conditions are in the JSON.
TEST(Compare, DifferentMeasurementConditionsAreSaid) {
  const std::string dir = test::scratch_dir("compare_conditions");
  json first = read_json_file(kH200);
  first["tool"] = {{"version", "0.1.0"}};
  const std::string base = dir + "/base.profile.json";
  write_file_atomic(base, first.dump());
  json other = first;
  other["device"]["power_limit_w"] = 400;
  other["device"]["cublas"] = "12.2.5";
  other["tool"] = {{"version", "0.0.9"}};
  for (auto& ce : other["ceilings"])  // a locked clock (nvidia-smi -lgc): every ceiling at 1.2 GHz, no reason set
    if (ce.contains("telemetry") && ce["telemetry"].is_object()) ce["telemetry"]["sm_clock_hz"] = 1.2e9;
  const std::string capped = dir + "/capped.profile.json";
  write_file_atomic(capped, other.dump());
  const Comparison c = compare_devices({load_compare_device(base), load_compare_device(capped)});
  auto said = [&](const std::string& text) {
    return std::any_of(c.condition_notes.begin(), c.condition_notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(said("cuBLAS differs (13.1.0 in ")) << ::testing::PrintToString(c.condition_notes);
  EXPECT_TRUE(said("12.2.5 in ")) << ::testing::PrintToString(c.condition_notes);
  EXPECT_TRUE(said("ceilings differs (")) << ::testing::PrintToString(c.condition_notes);
  EXPECT_TRUE(said("power limit 400 W, below the datasheet TDP of 700 W (H200)"))
      << ::testing::PrintToString(c.condition_notes);
  EXPECT_TRUE(said("ran 3 ceilings unthrottled at a median SM clock more than 5% from "))
      << ::testing::PrintToString(c.condition_notes);
  EXPECT_TRUE(said("(gemm.bf16 1.20 GHz vs 1.7")) << ::testing::PrintToString(c.condition_notes);
  EXPECT_FALSE(said("driver differs")) << ::testing::PrintToString(c.condition_notes);  // the same driver: nothing
  EXPECT_EQ(c.condition_notes.size(), 4u) << ::testing::PrintToString(c.condition_notes);
  {
    // Under the power cap, a clock is the workload's result, not a setting: no clock note (review 37: the stored
    // H200's own runs read 1.74 and 1.98 GHz for one GEMM under one limit).
    json capped_gemm = other;
    for (auto& ce : capped_gemm["ceilings"])
      if (ce["name"] == "gemm.bf16") {
        ce["throttled"] = true;
        ce["detail"]["throttle_reasons"] = 4;
      }
    const std::string cap = dir + "/capped-gemm.profile.json";
    write_file_atomic(cap, capped_gemm.dump());
    const auto notes = compare_devices({load_compare_device(base), load_compare_device(cap)}).condition_notes;
    EXPECT_TRUE(std::none_of(notes.begin(), notes.end(),
                             [](const std::string& n) { return n.find("median SM clock") != std::string::npos; }))
        << ::testing::PrintToString(notes);
    // One ceiling's clock apart, unthrottled, is no setting (a GEMM still recovering from a capped phase): only
    // a clock that moves at least 3 ceilings, a quarter of those compared, is said (review 39).
    json one = first;
    for (auto& ce : one["ceilings"])
      if (ce["name"] == "gemm.bf16") ce["telemetry"]["sm_clock_hz"] = 1.2e9;
    const std::string lone = dir + "/one-clock.profile.json";
    write_file_atomic(lone, one.dump());
    const auto lone_notes = compare_devices({load_compare_device(base), load_compare_device(lone)}).condition_notes;
    EXPECT_TRUE(lone_notes.empty()) << ::testing::PrintToString(lone_notes);
  }
  const json j = comparison_json(c);
  EXPECT_EQ(j["devices"][1]["conditions"]["power_limit_w"], 400);
  EXPECT_EQ(j["devices"][1]["conditions"]["cublas"], "12.2.5");
  EXPECT_EQ(j["condition_notes"].size(), 4u);
  const Table conditions = conditions_table(c);
  ASSERT_EQ(conditions.columns.size(), 3u);
  EXPECT_EQ(conditions.rows[0], (std::vector<std::string>{"power limit", "700 W", "400 W"}));
  // The same profile twice: nothing differs, nothing said.
  const std::string copy = dir + "/again.profile.json";
  write_file_atomic(copy, read_text_file(kH200));
  EXPECT_TRUE(compare_devices({load_compare_device(kH200), load_compare_device(copy)}).condition_notes.empty());
  // The CLI prints the conditions side by side and the notes.
  const auto r = test::run_cli({"compare", base, capped});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nmeasured under "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NOTE: cuBLAS differs"), std::string::npos) << r.out;
}

// GPUs measured together share the node's power, cooling and host links: a profile of a --concurrent run beside
// one measured by a run of one GPU is said, and each profile's count is in the conditions (review 46).
TEST(Compare, GpusMeasuredTogetherAreSaid) {
  const std::string dir = test::scratch_dir("compare_together");
  json alone = read_json_file(kH200);
  alone["measure"] = {{"gpus_measured_together", 1}};
  json together = alone;
  together["measure"]["gpus_measured_together"] = 8;
  write_file_atomic(dir + "/alone.profile.json", alone.dump());
  write_file_atomic(dir + "/together.profile.json", together.dump());
  const Comparison c =
      compare_devices({load_compare_device(dir + "/alone.profile.json"), load_compare_device(dir + "/together.profile.json")});
  ASSERT_EQ(c.condition_notes.size(), 1u) << ::testing::PrintToString(c.condition_notes);
  EXPECT_EQ(c.condition_notes[0].rfind("GPUs measured differs (1 per run in ", 0), 0u) << c.condition_notes[0];
  EXPECT_NE(c.condition_notes[0].find("; 8 at once in "), std::string::npos) << c.condition_notes[0];
  const Table conditions = conditions_table(c);
  ASSERT_GE(conditions.rows.size(), 2u);
  EXPECT_EQ(conditions.rows[conditions.rows.size() - 2],
            (std::vector<std::string>{"GPUs measured", "1 per run", "8 at once"}));
  EXPECT_EQ(conditions.rows.back(), (std::vector<std::string>{"pass", "not recorded", "not recorded"}));
  const json j = comparison_json(c);
  EXPECT_EQ(j["devices"][0]["conditions"]["gpus_measured_together"], 1);
  EXPECT_EQ(j["devices"][1]["conditions"]["gpus_measured_together"], 8);
  // A --quick pass beside a full one is said too (review 98)
  together["measure"] = {{"gpus_measured_together", 1}, {"quick", true}};
  alone["measure"]["quick"] = false;
  write_file_atomic(dir + "/alone.profile.json", alone.dump());
  write_file_atomic(dir + "/quick.profile.json", together.dump());
  const Comparison q =
      compare_devices({load_compare_device(dir + "/alone.profile.json"), load_compare_device(dir + "/quick.profile.json")});
  ASSERT_EQ(q.condition_notes.size(), 1u) << ::testing::PrintToString(q.condition_notes);
  EXPECT_EQ(q.condition_notes[0].rfind("pass differs (full in ", 0), 0u) << q.condition_notes[0];
  EXPECT_EQ(conditions_table(q).rows.back(), (std::vector<std::string>{"pass", "full", "quick"}));
  EXPECT_EQ(comparison_json(q)["devices"][1]["conditions"]["quick"], true);
  // A profile that does not record it says nothing against the others.
  const Comparison unknown =
      compare_devices({load_compare_device(kH200), load_compare_device(dir + "/together.profile.json")});
  EXPECT_TRUE(unknown.condition_notes.empty()) << ::testing::PrintToString(unknown.condition_notes);
  EXPECT_TRUE(comparison_json(unknown)["devices"][0]["conditions"]["gpus_measured_together"].is_null());
}

// Confidential computing: on beside off is said; a profile from before the field is "?" in the conditions and
// says nothing against the others (the note had taken it for "off" while the table said "?", review 79).
TEST(Compare, ConfidentialComputingNotRecordedIsNotTakenForOff) {
  const std::string dir = test::scratch_dir("compare_cc");
  json off = read_json_file(kH200);
  ASSERT_FALSE(off["device"].contains("confidential_computing")) << "the fixture is to predate the field";
  json on = off;
  off["device"]["confidential_computing"] = false;
  on["device"]["confidential_computing"] = true;
  write_file_atomic(dir + "/off.profile.json", off.dump());
  write_file_atomic(dir + "/on.profile.json", on.dump());
  const Comparison differ =
      compare_devices({load_compare_device(dir + "/off.profile.json"), load_compare_device(dir + "/on.profile.json")});
  ASSERT_EQ(differ.condition_notes.size(), 1u) << ::testing::PrintToString(differ.condition_notes);
  EXPECT_EQ(differ.condition_notes[0].rfind("confidential computing differs (off in ", 0), 0u) << differ.condition_notes[0];
  for (const char* other : {"/off.profile.json", "/on.profile.json"}) {
    const Comparison unknown = compare_devices({load_compare_device(kH200), load_compare_device(dir + other)});
    EXPECT_TRUE(unknown.condition_notes.empty()) << other << ": " << ::testing::PrintToString(unknown.condition_notes);
    bool shown = false;
    for (const auto& row : conditions_table(unknown).rows)
      if (!row.empty() && row[0] == "confidential computing") {
        ASSERT_EQ(row.size(), 3u);
        EXPECT_EQ(row[1], "not recorded");
        shown = true;
      }
    EXPECT_TRUE(shown);
  }
}

// A ceiling the profile records as failed, skipped or unverified says so in its cell, not "-" beside a datasheet
// ratio (review 33).
TEST(Compare, FailedSkippedAndUnverifiedCeilingsSaySo) {
  json p = read_json_file(kH200);
  json kept = json::array();
  for (auto& ce : p["ceilings"]) {
    if (ce["name"] == "hbm.copy" || ce["name"] == "pcie.h2d") continue;
    if (ce["name"] == "gemm.bf16") ce["verified"] = false;
    kept.push_back(ce);
  }
  p["ceilings"] = kept;
  p["errors"] = json::array({{{"name", "hbm.copy"}, {"reason", "verification failed: 12 of 256 wrong"}},
                             {{"name", "pcie.h2d"},
                              {"reason", "stopped while this case ran: interrupted: ceilings-bench was stopped"}}});
  const std::string failed = test::scratch_dir("compare_status") + "/failed.profile.json";
  write_file_atomic(failed, p.dump());
  const Comparison c = compare_devices({load_compare_device(failed), load_compare_device(kH200), load_compare_device("H100 SXM")});
  EXPECT_EQ(row(c, "hbm.copy").cells[0].status, "failed");
  EXPECT_FALSE(row(c, "hbm.copy").cells[0].measured.has_value());
  EXPECT_EQ(row(c, "gemm.bf16").cells[0].status, "unverified");
  EXPECT_EQ(row(c, "nvlink.p2p_uni").cells[0].status, "skipped");
  EXPECT_EQ(row(c, "pcie.h2d").cells[0].status, "cut short");  // an interrupt's, no failed measurement
  EXPECT_EQ(row(c, "hbm.copy").cells[1].status, "");
  const std::string table = render(comparison_table(c), Format::kTable);
  const std::size_t at = table.find("\nhbm.copy ");
  ASSERT_NE(at, std::string::npos) << table;
  const std::string line = table.substr(at + 1, table.find('\n', at + 1) - at - 1);
  EXPECT_NE(line.find("failed"), std::string::npos) << line;
  const json j = comparison_json(c);
  for (const auto& r : j["rows"])
    if (r["ceiling"] == "hbm.copy") {
      EXPECT_EQ(r["values"][0]["status"], "failed");
      EXPECT_TRUE(r["values"][1]["status"].is_null());
    }
  // With no column that measured them (the profile alone, or beside another that failed the same cases) the rows
  // are still there, saying why: they had been left out, and the table read as complete (review 42).
  const Comparison alone = compare_devices({load_compare_device(failed), load_compare_device(failed)});
  EXPECT_EQ(row(alone, "hbm.copy").cells[0].status, "failed");
  EXPECT_EQ(row(alone, "hbm.copy").cells[1].status, "failed");
  EXPECT_EQ(row(alone, "pcie.h2d").cells[0].status, "cut short");
  EXPECT_EQ(row(alone, "nvlink.p2p_uni").cells[0].status, "skipped");
  const std::string alone_table = render(comparison_table(alone), Format::kTable);
  EXPECT_NE(alone_table.find("\nhbm.copy "), std::string::npos) << alone_table;
  // Rows with no datasheet figure anywhere keep theirs too: l2 and latency cases, a family this build does not know
  // (no unit made up for it), and every case of a GPU the datasheet table does not know (review 45).
  json q = p;
  json rest = json::array();
  for (auto& ce : q["ceilings"])
    if (ce["name"] != "l2.read" && ce["name"] != "latency.hbm") rest.push_back(ce);
  q["ceilings"] = rest;
  q["errors"].push_back({{"name", "l2.read"}, {"reason", "verification failed: 1 of 256 wrong"}});
  q["skipped"].push_back({{"name", "latency.hbm"}, {"reason", "not supported here"}});
  q["skipped"].push_back({{"name", "l1.read"}, {"reason", "not supported here"}});
  q["errors"].push_back({{"name", "benchmarks[3]"}, {"reason", "not an object"}});
  const std::string more = test::scratch_dir("compare_status_more") + "/more.profile.json";
  write_file_atomic(more, q.dump());
  q["device"]["name"] = "NVIDIA RTX PRO 9999";
  const std::string unknown = test::scratch_dir("compare_status_unknown") + "/unknown.profile.json";
  write_file_atomic(unknown, q.dump());
  for (const std::string& path : {more, unknown}) {
    const Comparison m = compare_devices({load_compare_device(path), load_compare_device(path)});
    EXPECT_EQ(row(m, "l2.read").cells[1].status, "failed") << path;
    EXPECT_EQ(row(m, "latency.hbm").cells[0].status, "skipped") << path;
    EXPECT_EQ(row(m, "l1.read").cells[0].status, "skipped") << path;
    EXPECT_EQ(row(m, "l1.read").unit, "") << path;
    EXPECT_EQ(row(m, "hbm.copy").cells[0].status, "failed") << path;
    for (const CompareRow& r : m.rows) EXPECT_NE(r.ceiling, "benchmarks[3]");
  }
}

// compare looked each ceiling up by a linear search (its names, and every device's ceilings per row): 68 s for a
// profile of 60,000 ceilings. Now by hash; the rows must be what they were: every name once, in family order and
// first-seen order within a family, each cell the value of its own device's ceiling of that name.
TEST(Compare, ManyCeilingsAreEachComparedWithTheirOwn) {
  constexpr int kExtra = 20000;
  CompareDevice a = load_compare_device(kH200), b = load_compare_device(kH200);
  const Ceiling launch = *a.profile->find("latency.launch"), copy = *a.profile->find("hbm.copy");
  const std::size_t fixture_ceilings = a.profile->ceilings.size();
  for (int i = 0; i < kExtra; ++i) {
    // Families interleaved, so ordering by family moves them; a distinct value per ceiling and device.
    Ceiling c = i % 2 ? launch : copy;
    c.name = (i % 2 ? "latency.launch_" : "hbm.copy_") + std::to_string(i);
    c.value = (i % 2 ? 1e-6 : 1e12) * (1 + i * 1e-5);
    a.profile->ceilings.push_back(c);
    if (i % 3 == 0) {  // the second device has a third of them, in reverse order below
      c.value *= 2;
      b.profile->ceilings.push_back(c);
    }
  }
  std::reverse(b.profile->ceilings.begin() + static_cast<std::ptrdiff_t>(fixture_ceilings), b.profile->ceilings.end());
  const Comparison c = compare_devices({a, b, load_compare_device("H100 SXM")});
  std::set<std::string> seen;
  std::size_t hbm_extra = 0, latency_extra = 0, last_hbm = 0, first_latency = c.rows.size();
  int previous_hbm = -1, previous_latency = -1;
  for (std::size_t r = 0; r < c.rows.size(); ++r) {
    const CompareRow& row = c.rows[r];
    ASSERT_TRUE(seen.insert(row.ceiling).second) << row.ceiling << " is listed twice";
    ASSERT_EQ(row.cells.size(), 3u);
    const auto under = row.ceiling.find('_');
    if (row.ceiling.rfind("hbm.copy_", 0) != 0 && row.ceiling.rfind("latency.launch_", 0) != 0) continue;
    const int i = std::stoi(row.ceiling.substr(under + 1));
    const bool latency = row.ceiling[0] == 'l';
    const double value = (latency ? 1e-6 : 1e12) * (1 + i * 1e-5);
    EXPECT_EQ(row.unit, latency ? "s" : "B/s");
    ASSERT_TRUE(row.cells[0].measured) << row.ceiling;
    EXPECT_EQ(*row.cells[0].measured, value) << row.ceiling;
    EXPECT_EQ(row.cells[1].measured.has_value(), i % 3 == 0) << row.ceiling;
    if (i % 3 == 0) EXPECT_EQ(*row.cells[1].measured, 2 * value) << row.ceiling;
    EXPECT_FALSE(row.cells[2].measured) << row.ceiling;  // a datasheet column
    // Within a family, in the order the first device lists them.
    int& previous = latency ? previous_latency : previous_hbm;
    EXPECT_LT(previous, i) << row.ceiling;
    previous = i;
    if (latency) {
      ++latency_extra;
      first_latency = std::min(first_latency, r);
    } else {
      ++hbm_extra;
      last_hbm = r;
    }
  }
  EXPECT_EQ(hbm_extra + latency_extra, static_cast<std::size_t>(kExtra));
  EXPECT_LT(last_hbm, first_latency);  // memory before latency, as for any profile
  for (const Ceiling& ce : a.profile->ceilings) EXPECT_TRUE(seen.count(ce.name)) << ce.name;
  EXPECT_EQ(c.rows.back().ceiling, "memory.capacity");
  EXPECT_DOUBLE_EQ(*row(c, "hbm.copy").cells[0].measured, copy.value);
}

TEST(Compare, DatasheetEntriesAddHeadlineRows) {
  const Comparison c = compare_devices({load_compare_device("A100 SXM 80GB"), load_compare_device("b200")});
  EXPECT_EQ(c.devices[1].label, "B200 [datasheet]");
  const CompareRow& bf16 = row(c, "gemm.bf16");
  EXPECT_FALSE(bf16.cells[0].measured.has_value());
  EXPECT_DOUBLE_EQ(*bf16.cells[0].datasheet, 312e12);
  EXPECT_NEAR(*vs_first(bf16.cells[0], bf16.cells[1]), 2250.0 / 312, 1e-12);
  EXPECT_EQ(vs_first_basis(bf16.cells[0], bf16.cells[1]), std::optional<std::string>("datasheet"));
  EXPECT_DOUBLE_EQ(*row(c, "gemm.fp4").cells[1].datasheet, 9e15);
  EXPECT_FALSE(row(c, "gemm.fp8_e4m3").cells[0].datasheet.has_value());  // Ampere: no FP8
  EXPECT_DOUBLE_EQ(*row(c, "nvlink.p2p_uni").cells[1].datasheet, 0.9e12);
}

// Generations per watt: a ceiling measured with the energy counter's mean power (the sustained GEMMs) gets a
// row of its value over that power, beside each datasheet's peak over its TDP.
TEST(Compare, PerWattRowsFollowCeilingsMeasuredWithTheirMeanPower) {
  CompareDevice h200 = load_compare_device(kH200);
  double bf16 = 0;
  for (Ceiling& ce : h200.profile->ceilings)
    if (ce.name == "gemm.bf16") {
      ce.detail["power_mean_w"] = 640.0;
      bf16 = ce.value;
    }
  ASSERT_GT(bf16, 0);
  const Comparison c = compare_devices({h200, load_compare_device("B200")});
  std::vector<std::string> order;
  for (const auto& r : c.rows) order.push_back(r.ceiling);
  const auto at = std::find(order.begin(), order.end(), "gemm.bf16");
  ASSERT_NE(at, order.end());
  ASSERT_NE(at + 1, order.end());
  EXPECT_EQ(*(at + 1), "gemm.bf16 per W");  // right after its ceiling
  const CompareRow& w = row(c, "gemm.bf16 per W");
  EXPECT_EQ(w.unit, "FLOP/s/W");
  EXPECT_DOUBLE_EQ(*w.cells[0].measured, bf16 / 640.0);
  EXPECT_DOUBLE_EQ(*w.cells[0].datasheet, 989e12 / 700);
  EXPECT_FALSE(w.cells[1].measured.has_value());
  EXPECT_DOUBLE_EQ(*w.cells[1].datasheet, 2250e12 / 1000);
  EXPECT_NEAR(*vs_first(w.cells[0], w.cells[1]), (2250e12 / 1000) / (989e12 / 700), 1e-12);
  EXPECT_EQ(std::count(order.begin(), order.end(), "hbm.copy per W"), 0);  // no mean power: no row
  // GH200's TDP is the whole superchip's: no datasheet FLOP/s per W beside a GPU's.
  const Comparison gh = compare_devices({h200, load_compare_device("GH200")});
  const CompareRow& gw = row(gh, "gemm.bf16 per W");
  EXPECT_TRUE(gw.cells[0].datasheet.has_value());
  EXPECT_FALSE(gw.cells[1].datasheet.has_value());
}

// The ceilings that carry a mean power in practice: the sustained GEMMs, int8 in OP/s; the datasheet side
// is the plain roof over the TDP. A latency or a copy gets no per-watt row, whatever its detail says.
TEST(Compare, PerWattRowsOfSustainedCeilingsInTheirOwnUnits) {
  CompareDevice h200 = load_compare_device(kH200);
  Ceiling bf16 = *h200.profile->find("gemm.bf16");
  bf16.name = "gemm.bf16_sustained";
  bf16.value = 7.0e14;
  bf16.detail = {{"power_mean_w", 700.0}};
  Ceiling int8 = bf16;
  int8.name = "gemm.int8_sustained";
  int8.unit = "OP/s";
  int8.value = 1.4e15;
  int8.datasheet.reset();  // from the table: the int8 roof
  h200.profile->ceilings.push_back(bf16);
  h200.profile->ceilings.push_back(int8);
  for (Ceiling& ce : h200.profile->ceilings)
    if (ce.name == "pcie.h2d" || ce.name == "latency.launch") ce.detail = {{"power_mean_w", 100.0}};
  const Comparison c = compare_devices({h200});
  const CompareRow& b = row(c, "gemm.bf16_sustained per W");
  EXPECT_EQ(b.unit, "FLOP/s/W");
  EXPECT_DOUBLE_EQ(*b.cells[0].measured, 1e12);
  EXPECT_DOUBLE_EQ(*b.cells[0].datasheet, 989e12 / 700);
  EXPECT_EQ(row(c, "gemm.int8_sustained").unit, "OP/s");
  const CompareRow& i = row(c, "gemm.int8_sustained per W");
  EXPECT_EQ(i.unit, "OP/s/W");
  EXPECT_DOUBLE_EQ(*i.cells[0].measured, 2e12);
  EXPECT_DOUBLE_EQ(*i.cells[0].datasheet, 1979e12 / 700);
  for (const auto& r : c.rows) {
    EXPECT_NE(r.ceiling, "pcie.h2d per W");
    EXPECT_NE(r.ceiling, "latency.launch per W");
  }
}

TEST(Compare, UnknownNamesAndMissingFiles) {
  EXPECT_THROW(load_compare_device("H2000X"), InputError);
  EXPECT_THROW(load_compare_device("/no/such/profile.json"), InputError);
  try {  // a directory said "does not exist"
    load_compare_device(test::scratch_dir("compare_a_directory"));
    ADD_FAILURE() << "a directory was read as a device";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

TEST(CompareCli, AllFormats) {
  auto r = test::run_cli({"compare", kH100, kH200, "h100 pcie"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Each device's label said once, its columns by its key (review 108: a label in every header, 289 columns).
  EXPECT_EQ(r.out.rfind("A: NVIDIA H100 80GB HBM3 (node017)\nB: NVIDIA H200 (node001)\nC: H100 PCIe [datasheet]\n", 0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("A measured"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("C datasheet"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("C vs A"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("(node017) measured"), std::string::npos) << r.out;
  std::size_t widest = 0;
  for (std::size_t from = 0, nl; from < r.out.size(); from = nl + 1) {
    nl = r.out.find('\n', from);
    if (nl == std::string::npos) nl = r.out.size();
    if (r.out.compare(from, 6, "NOTE: ") != 0) widest = std::max(widest, nl - from);  // notes are prose
  }
  EXPECT_LE(widest, 160u) << r.out;
  // A latency's ratio says which way it goes: above 1x is slower there, faster for a rate.
  const auto lat = test::run_cli({"compare", std::string(CEILINGS_FIXTURES) + "/profiles/h200-qualify.profile.json",
                                   std::string(CEILINGS_SOURCE_DIR) + "/results/nvidia-h200/h200.profile.json"});
  ASSERT_EQ(lat.exit_code, 0) << lat.err;
  const std::size_t launch = lat.out.find("\nlatency.launch ");
  ASSERT_NE(launch, std::string::npos) << lat.out;
  EXPECT_NE(lat.out.substr(launch, lat.out.find('\n', launch + 1) - launch).find("2.18x (slower)"), std::string::npos)
      << lat.out;
  // Each fixture's own note follows the table: hand-written numbers never read as a measurement.
  EXPECT_NE(r.out.find("NOTE: NVIDIA H100 80GB HBM3 (node017): "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not a measurement"), std::string::npos) << r.out;
  r = test::run_cli({"compare", kH100, kH200, "--format", "markdown"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| hbm.copy | 3.00 TB/s |"), std::string::npos) << r.out;
  // The footnote after the table is a paragraph of its own: markdown ends a table only at a blank line.
  EXPECT_NE(r.out.find("|\n\nmeas/ds: measured"), std::string::npos) << r.out;
  // csv is for files: numbers in SI base units and plain ratios, the unit and each ratio's basis in columns.
  r = test::run_cli({"compare", kH100, kH200, "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("ceiling,unit,NVIDIA H100 80GB HBM3 (node017) measured,", 0), 0u) << r.out;
  const std::size_t at = r.out.find("\nhbm.read,B/s,");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::vector<std::string> cells;
  std::stringstream row(r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1));
  for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
  ASSERT_EQ(cells.size(), 17u) << r.out;  // per device: measured, datasheet, ratio, throttled, slowdowns, status
  EXPECT_DOUBLE_EQ(std::stod(cells[2]), 3.10e12);
  EXPECT_DOUBLE_EQ(std::stod(cells[3]), 3.35e12);
  EXPECT_DOUBLE_EQ(std::stod(cells[4]), 3.10 / 3.35);
  EXPECT_EQ(cells[5], "false");
  EXPECT_EQ(cells[6], "");  // no hardware slowdown
  EXPECT_EQ(cells[7], "");  // measured
  EXPECT_DOUBLE_EQ(std::stod(cells[8]), 4.52e12);
  EXPECT_DOUBLE_EQ(std::stod(cells[14]), 4.52 / 3.10);
  EXPECT_EQ(cells[15], "measured");
  EXPECT_EQ(cells[16], "false");  // 46% apart: far beyond either median's noise
  r = test::run_cli({"compare", kH100, "L40S", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["devices"][1]["source"], "datasheet");
  bool found = false;
  for (const auto& row : j["rows"])
    if (row["ceiling"] == "gemm.bf16") {
      found = true;
      EXPECT_DOUBLE_EQ(row["values"][0]["measured"].get<double>(), 7e14);
      EXPECT_DOUBLE_EQ(row["values"][1]["datasheet"].get<double>(), 362.05e12);
      EXPECT_NEAR(row["values"][1]["vs_first"].get<double>(), 362.05 / 989, 1e-12);
      EXPECT_EQ(row["values"][1]["vs_first_basis"], "datasheet");  // the L40S was not measured
    }
  EXPECT_TRUE(found);
  // In the table a ratio of datasheets says so: a measured H200 against the H100's datasheet is no like for like.
  r = test::run_cli({"compare", kH200, "h100 sxm", "--format", "table"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("0.70x (ds)"), std::string::npos) << r.out;  // hbm.read: 3.35 / 4.80 TB/s
}

// A value that failed its verification is not shown as measured; a ceiling of a family this version does not
// know keeps the unit its profile recorded (it read "1.98 GB/s" for a clock in Hz).
TEST(Compare, UnverifiedValuesAreNotMeasuredAndUnknownFamiliesKeepTheirUnit) {
  Profile p = read_profile(kH200);
  for (Ceiling& c : p.ceilings)
    if (c.name == "hbm.copy") c.verified = false;
  Ceiling clock;
  clock.name = "clock.sm_max";
  clock.unit = "Hz";
  clock.value = 1.98e9;
  clock.samples = 10;
  clock.verified = true;
  p.ceilings.push_back(clock);
  CompareDevice d = load_compare_device(kH200);
  d.profile = p;
  const Comparison c = compare_devices({d});
  EXPECT_FALSE(row(c, "hbm.copy").cells[0].measured.has_value());
  EXPECT_TRUE(row(c, "hbm.copy").cells[0].datasheet.has_value());
  EXPECT_EQ(row(c, "clock.sm_max").unit, "Hz");
  const json j = comparison_json(c);
  std::size_t found = 0;
  for (const json& r : j["rows"])
    if (r["ceiling"] == "clock.sm_max") {
      ++found;
      EXPECT_EQ(r["unit"], "Hz");
    }
  EXPECT_EQ(found, 1u);
}

// A MIG instance has no datasheet column: the datasheet's figures are the whole GPU's (meas/ds read 13%).
TEST(Compare, AMigInstanceHasNoDatasheetFigures) {
  CompareDevice d = load_compare_device(kH200);
  d.profile->device.mig = true;
  d.profile->device.board_uuid = d.profile->device.uuid;
  d.profile->device.uuid = "MIG-00000000-1111-2222-3333-555555555555";
  d.gpu.clear();
  const Comparison c = compare_devices({d, load_compare_device("H200")});
  const CompareRow& hbm = row(c, "hbm.copy");
  EXPECT_TRUE(hbm.cells[0].measured.has_value());
  EXPECT_FALSE(hbm.cells[0].datasheet.has_value());
  EXPECT_FALSE(hbm.cells[0].ratio().has_value());
  EXPECT_FALSE(vs_first(hbm.cells[0], hbm.cells[1]).has_value()) << "measured against a datasheet: no like for like";

  const std::string dir = test::scratch_dir("compare_mig");
  Profile mig = read_profile(kH200);
  mig.device.mig = true;
  write_file_atomic(dir + "/mig.profile.json", profile_to_json(mig).dump());
  const CompareDevice loaded = load_compare_device(dir + "/mig.profile.json");
  EXPECT_NE(loaded.label.find("MIG instance"), std::string::npos) << loaded.label;
  EXPECT_TRUE(loaded.gpu.empty());
  EXPECT_TRUE(comparison_json(compare_devices({loaded}))["devices"][0]["mig"].get<bool>());
}

TEST(CompareCli, BadInputExits2) {
  auto r = test::run_cli({"compare", kH200, "H20X"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("near matches"), std::string::npos) << r.err;
  EXPECT_EQ(test::run_cli({"compare"}).exit_code, 2);
  EXPECT_EQ(test::run_cli({"compare", kH200, "--format", "xml"}).exit_code, 2);
}

// A board whose TDP is a range (H100 PCIe, 300-350 W) set at its bottom is configured so, not at fault: compare and
// qualify say so, beside the top its peaks are quoted at (review 100 #6).
TEST(CompareConditions, APowerLimitWithinTheBoardsRangeIsASetting) {
  const std::string dir = test::scratch_dir("compare_tdp_range");
  json p = read_json_file(kH200);
  p["device"]["name"] = "NVIDIA H100 PCIe";
  p["device"]["sm_count"] = 114;
  p["device"]["memory_bytes"] = 85520809984.0;
  p["device"]["power_limit_w"] = 300;
  for (auto& ce : p["ceilings"]) {
    if (ce.contains("telemetry") && ce["telemetry"].is_object()) ce["telemetry"]["sm_clock_hz"] = 1.2e9;
    if (ce["name"] == "gemm.bf16") {  // held down by its own power cap
      ce["value"] = ce["value"].get<double>() * 0.4;
      ce["throttled"] = true;
      ce["detail"]["throttle_reasons"] = 4;
    }
  }
  const std::string at300 = dir + "/at300.profile.json", at350 = dir + "/at350.profile.json";
  write_file_atomic(at300, p.dump());
  p["device"]["power_limit_w"] = 350;
  p["device"]["uuid"] = "GPU-00000000-1111-2222-3333-000000000009";
  write_file_atomic(at350, p.dump());
  auto r = test::run_cli({"compare", at300, at350});
  EXPECT_NE(r.out.find("power limit 300 W, below the datasheet TDP of 350 W (H100 PCIe, whose TDP is configurable "
                       "from 300 W: a setting, not a fault)"),
            std::string::npos)
      << r.out << r.err;
  r = test::run_cli({"qualify", at300, "--format", "json"});
  EXPECT_NE(r.out.find("its power limit is 300 W, within the datasheet's configurable 300 W to 350 W, whose top its "
                       "peaks are quoted at"),
            std::string::npos)
      << r.out << r.err;
  // Below the range it is the datasheet's TDP that is said, a few watts below too (review 112: 286 W read "within").
  p["device"]["power_limit_w"] = 286;
  write_file_atomic(at300, p.dump());
  r = test::run_cli({"compare", at300, at350});
  EXPECT_NE(r.out.find("power limit 286 W, below the datasheet TDP of 350 W (H100 PCIe): "), std::string::npos) << r.out;
  p["device"]["power_limit_w"] = 200;
  write_file_atomic(at300, p.dump());
  r = test::run_cli({"compare", at300, at350});
  EXPECT_NE(r.out.find("power limit 200 W, below the datasheet TDP of 350 W (H100 PCIe): "), std::string::npos) << r.out;
}
