// Profile reading and validation: good files, every kind of bad file, atomic writes.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <regex>
#include <thread>

#include "ceilings/ceiling_families.hpp"
#include "ceilings/profile.hpp"
#include "ceilings/report.hpp"
#include "ceilings/qualify.hpp"
#include "cli_runner.hpp"

using namespace ceilings;

namespace {

const std::string kFixture = std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json";

json fixture() { return read_json_file(kFixture); }

// Expects profile_from_json to reject `doc` with a message naming `field`.
void expect_rejected(const json& doc, const std::string& field) {
  try {
    profile_from_json(doc);
    ADD_FAILURE() << "accepted a profile with a bad " << field;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code(), kExitBadInput);
  }
}

}  // namespace

TEST(Profile, ReadsTheFixture) {
  const Profile p = read_profile(kFixture);
  EXPECT_EQ(p.device.name, "NVIDIA H200");
  EXPECT_EQ(p.device.sm_count, 132);
  EXPECT_EQ(p.device.l2_bytes, 62914560u);
  EXPECT_EQ(p.device.pcie.max_gen.value_or(0), 5);
  ASSERT_EQ(p.ceilings.size(), 5u);
  const Ceiling* copy = p.find("hbm.copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_DOUBLE_EQ(copy->value, 4.36e12);
  EXPECT_EQ(copy->unit, "B/s");
  EXPECT_TRUE(copy->telemetry.available);
  EXPECT_DOUBLE_EQ(copy->telemetry.sm_clock_hz, 1.98e9);
  EXPECT_EQ(copy->detail["array_bytes"], 2147483648LL);
  EXPECT_FALSE(p.find("pcie.h2d")->telemetry.available);
  ASSERT_EQ(p.skipped.size(), 1u);
  EXPECT_EQ(p.skipped[0].reason, "single GPU: no peer");
}

TEST(Profile, IgnoresUnknownFieldsAndKeepsThem) {
  json doc = fixture();
  doc["future_section"] = {{"x", 1}};
  doc["ceilings"][0]["future_field"] = "y";
  doc["device"]["memory_bus_width_bits"] = 6144;  // the bench writes it; this version does not model it
  doc["device"]["cuda_driver_api"] = "13.0";
  Profile p = profile_from_json(doc);
  EXPECT_EQ(profile_to_json(p)["future_section"]["x"], 1);
  EXPECT_EQ(profile_to_json(p)["device"]["memory_bus_width_bits"], 6144);
  EXPECT_EQ(profile_to_json(p)["device"]["cuda_driver_api"], "13.0");
  p.device.name = "NVIDIA H200 NVL";  // a modelled field is written from the model, not the document as read
  EXPECT_EQ(profile_to_json(p)["device"]["name"], "NVIDIA H200 NVL");
}

// A file larger than any profile is refused before it is parsed (review 109: 200 MB named like a profile took a
// fleet run down, out of memory, with no report); fleet skips it with the reason.
TEST(Profile, AFileLargerThanAnyProfileIsRefusedUnparsed) {
  const std::string dir = test::scratch_dir("profile_too_large");
  {
    std::ofstream big(dir + "/big.profile.json");
    big << "[";
    const std::string chunk(1 << 20, ' ');
    for (std::size_t i = 0; i <= (kMaxProfileBytes >> 20); ++i) big << chunk;
    big << "]";
  }
  try {
    read_profile(dir + "/big.profile.json");
    ADD_FAILURE() << "a file past the cap was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("MiB: larger than any profile (32 MiB at most"), std::string::npos) << e.what();
  }
  write_file_atomic(dir + "/good.profile.json", read_text_file(kFixture));
  const auto r = test::run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;  // a file it could not read: not judged in full
  EXPECT_NE(r.out.find("larger than any profile"), std::string::npos) << r.out;
}

// A profile of a build before measure.quick: a quick pass is told by its bench command's --ceilings_quick, as CLI11
// reads the flag (review 100: such a pass read as a full one against a full baseline).
TEST(Profile, AnOldQuickPassIsToldByItsBenchCommand) {
  EXPECT_TRUE(bench_command_was_quick("ceilings-bench --benchmark_out=x.json --ceilings_quick --ceilings_device=0"));
  EXPECT_TRUE(bench_command_was_quick("ceilings-bench --ceilings_quick=TRUE"));
  EXPECT_FALSE(bench_command_was_quick("ceilings-bench --ceilings_quick --ceilings_quick=false"));
  EXPECT_FALSE(bench_command_was_quick("ceilings-bench --ceilings_quick_x --benchmark_filter=^(ceilings_quick)$"));
  EXPECT_FALSE(bench_command_was_quick(""));
  json doc = fixture();
  doc["measure"] = {{"command", "/x/ceilings-bench --ceilings_device=0 --ceilings_quick (one process per family)"}};
  EXPECT_EQ(profile_from_json(doc).quick, std::optional<bool>(true));
  doc["measure"]["command"] = "/x/ceilings-bench --ceilings_device=0 (one process per family)";
  EXPECT_EQ(profile_from_json(doc).quick, std::nullopt);  // a full pass, or not known: as before
  doc["measure"]["quick"] = false;  // recorded: what it says stands
  doc["measure"]["command"] = "/x/ceilings-bench --ceilings_quick";
  EXPECT_EQ(profile_from_json(doc).quick, std::optional<bool>(false));
}

// The family table: each known family's unit, its place in every table (compute, then the memory hierarchy from
// the SM outwards, then latencies; an unknown family last), and the levels the analysis asks about.
TEST(Profile, TheFamilyTableGivesUnitOrderAndLevel) {
  EXPECT_EQ(ceiling_unit_for("hbm.copy"), "B/s");
  EXPECT_EQ(ceiling_unit_for("smem.read"), "B/s");
  EXPECT_EQ(ceiling_unit_for("nvlink.p2p_bidir"), "B/s");
  EXPECT_EQ(ceiling_unit_for("latency.hbm"), "s");
  EXPECT_EQ(ceiling_unit_for("l1.read"), "");  // unknown: the unit its profile records
  EXPECT_EQ(ceiling_unit_for("gemm"), "");      // a family's name alone names no variant
  EXPECT_EQ(family_of("pcie.bidir_sm"), "pcie");
  EXPECT_EQ(family_of("nodot"), "nodot");
  std::vector<std::string> names{"latency.launch", "l1.read", "hbm.copy", "pcie.h2d", "gemm.bf16", "l2.read",
                                 "nvlink.p2p_uni", "smem.read", "fma.fp32"};
  std::stable_sort(names.begin(), names.end(),
                   [](const auto& a, const auto& b) { return family_rank(a) < family_rank(b); });
  EXPECT_EQ(names, (std::vector<std::string>{"gemm.bf16", "fma.fp32", "smem.read", "l2.read", "hbm.copy", "pcie.h2d",
                                             "nvlink.p2p_uni", "latency.launch", "l1.read"}));
  for (const char* n : {"hbm.copy", "pcie.h2d_pageable", "nvlink.p2p_uni"}) EXPECT_TRUE(holds_weights(n)) << n;
  for (const char* n : {"l2.read", "smem.read", "l1.read", "gemm.bf16", "latency.hbm"}) EXPECT_FALSE(holds_weights(n)) << n;
  EXPECT_TRUE(is_on_chip("l2.read"));
  EXPECT_TRUE(is_on_chip("smem.read"));
  EXPECT_FALSE(is_on_chip("hbm.read"));
  EXPECT_FALSE(is_on_chip("l1.read"));  // unknown: nothing is assumed of it
  EXPECT_TRUE(reaches_other_gpus("nvlink"));
  EXPECT_TRUE(reaches_other_gpus("nvlink.p2p_bidir"));
  EXPECT_FALSE(reaches_other_gpus("pcie.h2d"));
}

// A compute variant of neither a floating-point nor an int type (an fma.dp4a a newer bench adds, in OP/s) takes
// the unit its profile records, as a new family does: the whole profile had been refused, and fleet skipped the
// node (review 35). A known type's unit stays fixed.
TEST(Profile, ANewComputeVariantKeepsItsRecordedUnit) {
  EXPECT_EQ(ceiling_unit_for("gemm.int8_ref8192"), "OP/s");
  EXPECT_EQ(ceiling_unit_for("fma.int32"), "OP/s");
  EXPECT_EQ(ceiling_unit_for("gemm.fp8_e4m3_sustained"), "FLOP/s");
  EXPECT_EQ(ceiling_unit_for("fma.fp16"), "FLOP/s");
  EXPECT_EQ(ceiling_unit_for("fma.dp4a"), "");
  json doc = fixture();
  json c = doc["ceilings"][2];  // gemm.bf16's shape
  c["name"] = "fma.dp4a";
  c["unit"] = "OP/s";
  c["value"] = 2e14;
  c.erase("datasheet");
  doc["ceilings"].push_back(c);
  EXPECT_EQ(profile_from_json(doc).find("fma.dp4a")->unit, "OP/s");
  doc["ceilings"].back()["name"] = "fma.fp32";  // a known floating-point type in OP/s is still refused
  EXPECT_THROW(profile_from_json(doc), InputError);
}

TEST(Profile, RoundTripsThroughJson) {
  const Profile a = read_profile(kFixture);
  const Profile b = profile_from_json(profile_to_json(a));
  ASSERT_EQ(a.ceilings.size(), b.ceilings.size());
  for (std::size_t i = 0; i < a.ceilings.size(); ++i) {
    EXPECT_EQ(a.ceilings[i].name, b.ceilings[i].name);
    EXPECT_DOUBLE_EQ(a.ceilings[i].value, b.ceilings[i].value);
    EXPECT_EQ(a.ceilings[i].telemetry.available, b.ceilings[i].telemetry.available);
  }
  EXPECT_EQ(a.device.uuid, b.device.uuid);
  EXPECT_FALSE(a.gpus_visible.has_value());  // the fixture predates the field: it stays absent
  EXPECT_FALSE(profile_to_json(a)["host"].contains("gpus_visible"));

  // Every modelled field, with nothing carried over by the document as read (profile_to_json starts from `raw`,
  // which would hide a field the writer drops): written, read back and written again, the same document.
  Profile bare = a;
  bare.raw = json::object();
  bare.gpus_measured_together = 8;
  bare.skipped.push_back({"nvlink.p2p_uni", "unsupported: single GPU: no peer"});
  bare.errors.push_back({"gemm.int8", "verification: 3 of 256 elements wrong"});
  const json first = profile_to_json(bare);
  Profile again = profile_from_json(first);
  again.raw = json::object();
  EXPECT_EQ(profile_to_json(again), first);
  for (std::size_t i = 0; i < bare.ceilings.size(); ++i) {
    const Ceiling &x = bare.ceilings[i], &y = again.ceilings[i];
    EXPECT_EQ(x.unit, y.unit);
    EXPECT_DOUBLE_EQ(x.cv, y.cv);
    EXPECT_EQ(x.samples, y.samples);
    EXPECT_EQ(x.verified, y.verified);
    EXPECT_EQ(x.throttled, y.throttled);
    EXPECT_EQ(x.datasheet, y.datasheet);
    EXPECT_EQ(x.detail, y.detail);
    EXPECT_DOUBLE_EQ(x.telemetry.sm_clock_hz, y.telemetry.sm_clock_hz);
  }
  ASSERT_EQ(again.skipped.size(), a.skipped.size() + 1);
  EXPECT_EQ(again.skipped.back().reason, "unsupported: single GPU: no peer");
  ASSERT_EQ(again.errors.size(), a.errors.size() + 1);
  EXPECT_EQ(again.errors.back().name, "gemm.int8");
  EXPECT_EQ(again.gpus_measured_together, 8);
}

// measure.gpus_measured_together: how many GPUs `ceilings measure` ran at once (fleet and compare set a concurrent
// run apart); kept beside the section's other fields, and held to a number of GPUs.
TEST(Profile, ReadsHowManyGpusWereMeasuredTogether) {
  json d = fixture();
  d["measure"] = {{"invocation", "ceilings measure --all-gpus --concurrent"}, {"gpus_measured_together", 4}};
  const Profile p = profile_from_json(d);
  EXPECT_EQ(p.gpus_measured_together, 4);
  const json back = profile_to_json(p);
  EXPECT_EQ(back["measure"]["gpus_measured_together"], 4);
  EXPECT_EQ(back["measure"]["invocation"], "ceilings measure --all-gpus --concurrent");
  for (const json& bad : {json(0), json(-2), json(2.5), json("8"), json(5000)}) {
    d["measure"]["gpus_measured_together"] = bad;
    expect_rejected(d, "measure.gpus_measured_together");
  }
  // Unset on a profile read from a document that held it: the field decides what is written (review 51).
  d["measure"]["gpus_measured_together"] = 4;
  Profile unset = profile_from_json(d);
  unset.gpus_measured_together.reset();
  EXPECT_FALSE(profile_to_json(unset)["measure"].contains("gpus_measured_together"));
  d = fixture();
  EXPECT_FALSE(profile_from_json(d).gpus_measured_together.has_value());  // not recorded: absent, not 1
  EXPECT_FALSE(profile_to_json(profile_from_json(d)).contains("measure"));
}

TEST(Profile, ReadsTheNumberOfGpusTheRunSaw) {
  json d = fixture();
  d["host"]["gpus_visible"] = 8;
  const Profile p = profile_from_json(d);
  EXPECT_EQ(p.gpus_visible.value_or(0), 8);
  EXPECT_EQ(profile_to_json(p)["host"]["gpus_visible"], 8);
  d["host"]["gpus_visible"] = 0;
  expect_rejected(d, "gpus_visible");
  d["host"]["gpus_visible"] = 2.5;
  expect_rejected(d, "gpus_visible");
  d = fixture();
  d["device"]["pcie"]["width"] = 4294967312LL;  // 2^32 + 16: must not wrap to a width of 16
  expect_rejected(d, "device.pcie.width");
  d = fixture();
  d["host"]["gpus_visible"] = nullptr;  // the bench writes null where cudaGetDeviceCount failed
  EXPECT_FALSE(profile_from_json(d).gpus_visible.has_value());
}

// A MIG instance's profile names the instance (uuid) and its board (board_uuid); a whole GPU's has neither field
// unless the bench could tell (mig false).
TEST(Profile, ReadsWhetherItWasAMigInstance) {
  json d = fixture();
  Profile whole = profile_from_json(d);
  EXPECT_FALSE(whole.device.mig.has_value());
  EXPECT_EQ(whole.device.board(), whole.device.uuid);
  EXPECT_FALSE(profile_to_json(whole)["device"].contains("mig"));
  EXPECT_FALSE(profile_to_json(whole)["device"].contains("board_uuid"));
  d["device"]["mig"] = true;
  d["device"]["board_uuid"] = d["device"]["uuid"];
  d["device"]["uuid"] = "MIG-00000000-1111-2222-3333-555555555555";
  const Profile mig = profile_from_json(d);
  EXPECT_EQ(mig.device.mig, std::optional<bool>(true));
  EXPECT_EQ(mig.device.board(), d["device"]["board_uuid"].get<std::string>());
  Profile bare = mig;
  bare.raw = json::object();
  const json written = profile_to_json(bare);
  EXPECT_EQ(written["device"]["mig"], true);
  EXPECT_EQ(written["device"]["board_uuid"], d["device"]["board_uuid"]);
  EXPECT_EQ(written["device"]["uuid"], "MIG-00000000-1111-2222-3333-555555555555");
  d["device"]["mig"] = "yes";
  expect_rejected(d, "mig");
  d["device"]["mig"] = true;
  d["device"]["board_uuid"] = 7;
  expect_rejected(d, "board_uuid");
}

TEST(Profile, RejectsMissingRequiredFields) {
  json d = fixture();
  d.erase("schema");
  expect_rejected(d, "schema");
  d = fixture();
  d["device"].erase("name");
  expect_rejected(d, "device.name");
  d = fixture();
  d["ceilings"][1].erase("value");
  expect_rejected(d, "ceilings[1].value");
  d = fixture();
  d.erase("ceilings");
  expect_rejected(d, "ceilings");
}

TEST(Profile, RejectsWrongTypes) {
  json d = fixture();
  d["ceilings"][0]["value"] = "4.3 TB/s";
  expect_rejected(d, "ceilings[0].value");
  d = fixture();
  d["device"]["sm_count"] = 13.5;
  expect_rejected(d, "device.sm_count");
  d = fixture();
  d["ceilings"][0]["verified"] = 1;
  expect_rejected(d, "ceilings[0].verified");
  d = fixture();
  d["ceilings"] = json::object();
  expect_rejected(d, "ceilings");
  d = fixture();
  d["skipped"][0].erase("reason");
  expect_rejected(d, "skipped[0].reason");
  // show and compare read "health": 5 without a word; qualify refused it
  d = fixture();
  d["health"] = 5;
  expect_rejected(d, "health");
}

// The GPU's identity: show printed an empty name and "sm_nine".
TEST(Profile, RejectsAnEmptyOrMalformedIdentity) {
  for (const char* key : {"name", "uuid"}) {
    json d = fixture();
    d["device"][key] = "";
    expect_rejected(d, std::string("device.") + key);
  }
  for (const char* cc : {"nine", "9", "9.", ".0", "9.0.1", "9,0", "1234.0", ""}) {
    json d = fixture();
    d["device"]["compute_capability"] = cc;
    expect_rejected(d, "device.compute_capability");
  }
  for (const char* cc : {"9.0", "10.0", "12.1", "8.6"}) {
    json d = fixture();
    d["device"]["compute_capability"] = cc;
    EXPECT_NO_THROW(profile_from_json(d)) << cc;
  }
}

// Names and reasons a terminal prints (device, host, skipped and error entries) hold no control characters: a CLI probe had an escape sequence in a
// device name recolour the terminal and a newline split qualify's verdict line in two.
TEST(Profile, RejectsControlCharactersInNamesAndReasons) {
  for (const char* field : {"name", "uuid", "pci_bus_id"}) {
    json d = fixture();
    d["device"][field] = std::string("NVIDIA H200\x1b[31mRED");
    expect_rejected(d, std::string("device.") + field);
  }
  json d = fixture();
  d["host"]["hostname"] = "node001\nverdict: PASS";
  expect_rejected(d, "host.hostname");
  try {
    profile_from_json(d);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("control character (0x0a)"), std::string::npos) << e.what();
  }
  d = fixture();
  d["skipped"][0]["reason"] = "no peer\x1b]0;owned\x07";
  expect_rejected(d, "skipped[0].reason");
  d = fixture();
  d["errors"] = json::array({{{"name", "hbm.read\r"}, {"reason", "failed"}}});
  expect_rejected(d, "errors[0].name");
  d = fixture();
  d["skipped"][0]["name"] = "";
  expect_rejected(d, "skipped[0].name");
  d = fixture();
  d["skipped"][0]["reason"] = "";
  expect_rejected(d, "skipped[0].reason");
  d = fixture();
  d["device"]["name"] = "NVIDIA H200 NVL (ünïcode is fine)";
  EXPECT_NO_THROW(profile_from_json(d));
}

// An error quotes what the file held, made safe for the terminal it is printed on: a NUL ended the message
// before it said what was wrong, an ESC reached the terminal, a 1 MB schema was echoed whole.
TEST(Profile, ErrorsQuoteTheFileTerminalSafe) {
  auto message = [](const json& d) -> std::string {
    try {
      profile_from_json(d);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  json d = fixture();
  d["ceilings"][0]["name"] = std::string("hbm.read\0x", 10);
  std::string m = message(d);
  EXPECT_NE(m.find("hbm.read\\x00x"), std::string::npos) << m;
  // The message goes on past the NUL to say what is wrong.
  EXPECT_NE(m.find("is not a ceiling name", m.find("hbm.read\\x00x")), m.npos) << m;
  d = fixture();
  d["schema"] = "ceilings.profile/9\u001b[2J\u00c2\u009b";
  m = message(d);
  EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
  EXPECT_NE(m.find("\\x1b[2J"), std::string::npos) << m;
  d["schema"] = std::string(1 << 20, 'x');
  m = message(d);
  EXPECT_LT(m.size(), 2200u);
  EXPECT_NE(m.find(" more bytes)"), std::string::npos) << m.substr(0, 200);
  EXPECT_EQ(terminal_safe("caf\xc3\xa9 ok\tand\nnext \xc2\x9b"), "caf\xc3\xa9 ok\tand\nnext \\xc2\\x9b");
  // Raw C1 bytes and broken sequences (a lone continuation byte, a cut sequence at the end) are escaped too.
  EXPECT_EQ(terminal_safe("a\x9b" "31mRED\xff"), "a\\x9b" "31mRED\\xff");
  EXPECT_EQ(terminal_safe("abc\xe2\x82"), "abc\\xe2\\x82");
  EXPECT_EQ(terminal_safe("\xe2\x82\xac 5"), "\xe2\x82\xac 5");  // the euro sign
  // A message built from a cut one keeps the count it gave.
  const std::string cut = terminal_safe(std::string(5000, 'y'));
  EXPECT_EQ(cut.substr(2000), "... (3000 more bytes)");
  EXPECT_EQ(terminal_safe("error: " + cut), "error: " + cut);
  const std::string prefix(300, 'p');  // a long prefix (a path): cut again, the count is the whole line's
  EXPECT_EQ(terminal_safe(prefix + cut), prefix + std::string(1700, 'y') + "... (3300 more bytes)");
}

// `measure`'s record of an incomplete run, which show prints above the table: a mistyped field was exit 3 with
// the JSON library's message, 1e300 cases printed "-2147483648", and an escape sequence reached the terminal.
TEST(Profile, ReadsTheMeasureRecordTyped) {
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& d) { d["measure"]["cases"] = "269"; }, "measure.cases"},
      {[](json& d) { d["measure"]["finished_cases"] = 3.7; }, "measure.finished_cases"},
      {[](json& d) { d["measure"]["finished_cases"] = 1e300; }, "measure.finished_cases"},
      {[](json& d) { d["measure"]["failed_cases"] = 1LL << 50; }, "measure.failed_cases"},
      {[](json& d) { d["measure"]["complete"] = "x"; }, "measure.complete"},
      {[](json& d) { d["measure"]["stopped"] = "\u001b[2J\u001b[31mPWNED"; }, "measure.stopped"},
      {[](json& d) { d["measure"] = json::array(); }, "measure"}};
  for (const auto& [edit, field] : cases) {
    json d = fixture();
    d["measure"] = {{"complete", false}, {"cases", 10}, {"finished_cases", 3}, {"stopped", "timed out"}};
    edit(d);
    expect_rejected(d, field);
  }
  json d = fixture();
  d["measure"] = {{"complete", false}, {"cases", 10}, {"finished_cases", 3},
                  {"stopped", "ceilings-bench failed (signal 6)\n  last line\twith a tab"}};
  EXPECT_NO_THROW(profile_from_json(d));
  EXPECT_NE(render_profile(profile_from_json(d), Format::kTable)
                .find("INCOMPLETE run: 3 of 10 cases finished; ceilings-bench failed (signal 6)\n"),
            std::string::npos);
  d["measure"] = {{"complete", false}, {"cases", nullptr}, {"stopped", nullptr}};  // null: not recorded
  EXPECT_NE(render_profile(profile_from_json(d), Format::kTable).find("INCOMPLETE run: ? of ? cases finished; stopped early"),
            std::string::npos);
}

// The cases not measured are listed under the ceilings with their reason in a column of its own (review 94: the
// reason stood under the "throttled" header, and "skipped" under "value").
TEST(Profile, ShowListsTheCasesNotMeasuredWithTheirReasons) {
  json d = fixture();
  d["skipped"] = json::array({{{"name", "nvlink.p2p_uni"}, {"reason", "single GPU: no peer"}}});
  d["errors"] = json::array({{{"name", "gemm.fp8_e4m3"}, {"reason", "verification failed"}}});
  const Profile p = profile_from_json(d);
  for (const Format f : {Format::kTable, Format::kMarkdown}) {
    const std::string out = render_profile(p, f);
    EXPECT_NE(out.find("reason"), std::string::npos) << out;
    const std::size_t not_measured = out.find("single GPU: no peer");
    ASSERT_NE(not_measured, std::string::npos) << out;
    // Below the ceilings' table, in one of its own whose header has a reason column.
    EXPECT_LT(out.find("throttled"), out.find("reason")) << out;
    EXPECT_LT(out.find("reason"), not_measured) << out;
    EXPECT_NE(out.find("verification failed"), std::string::npos) << out;
  }
  EXPECT_EQ(not_measured_table(p).rows.size(), 2u);
  EXPECT_EQ(not_measured_table(p).rows[0], (std::vector<std::string>{"nvlink.p2p_uni", "skipped", "single GPU: no peer"}));
}

// A hand-edited (or sentinel-filled) window temperature of 4294967295 C was shown beside the value.
// The note is printed above tables and into an SVG's title: a control character would rewrite the terminal and
// make the SVG malformed, as in any name.
TEST(Profile, RejectsAControlCharacterInTheNote) {
  json d = fixture();
  d["note"] = "fixture \u0001 note";
  expect_rejected(d, "note");
  d["note"] = "a plain note";
  EXPECT_EQ(profile_from_json(d).note(), std::optional<std::string>("a plain note"));
}

TEST(Profile, RejectsTelemetrySentinels) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, double>>{
           {"temp_c", 4294967295.0}, {"sm_clock_hz", 4294967295e6}, {"power_w", 4294967.295e3}}) {
    json d = fixture();
    d["ceilings"][0]["telemetry"] = {{"sm_clock_hz", 1.98e9}, {"mem_clock_hz", 3.2e9}, {"power_w", 650}, {"temp_c", 60}};
    EXPECT_NO_THROW(profile_from_json(d));
    d["ceilings"][0]["telemetry"][key] = value;
    expect_rejected(d, "ceilings[0].telemetry." + key);
  }
}

// A CLI probe: show built a 10^4 x 10^4 grid from one detail key p2p_9999_9999 (bad_alloc, exit 3), a mean
// power of 5e-324 W printed "inf FLOP/s per W", a max SM clock of 1e300 Hz lowered qualify's thresholds, and
// an index of 2^40 showed as "device 0".
TEST(Profile, RejectsDeviceAndDetailValuesBeyondAnyGpu) {
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& d) { d["ceilings"][0]["detail"]["p2p_9999_9999"] = 4e11; }, "ceilings[0].detail.p2p_9999_9999"},
      {[](json& d) {
         d["host"]["gpus_visible"] = 8;
         d["ceilings"][0]["detail"]["p2p_0_8"] = 4e11;
       },
       "host.gpus_visible"},
      {[](json& d) { d["ceilings"][0]["detail"]["p2p_1_1"] = 4e11; }, "paired with itself"},
      {[](json& d) { d["ceilings"][0]["detail"]["p2p_1_0"] = -5; }, "ceilings[0].detail.p2p_1_0"},
      {[](json& d) { d["ceilings"][0]["detail"]["power_mean_w"] = 5e-324; }, "ceilings[0].detail.power_mean_w"},
      {[](json& d) { d["ceilings"][0]["detail"]["power_instant_w"] = 1e9; }, "ceilings[0].detail.power_instant_w"},
      {[](json& d) { d["device"]["clocks_max_hz"]["sm"] = 1e300; }, "device.clocks_max_hz.sm"},
      {[](json& d) { d["device"]["clocks_max_hz"]["memory"] = 0; }, "device.clocks_max_hz.memory"},
      {[](json& d) { d["device"]["power_limit_w"] = 1e7; }, "device.power_limit_w"},
      {[](json& d) { d["device"]["index"] = 1LL << 40; }, "device.index"},
      {[](json& d) { d["device"]["sm_count"] = 1LL << 32; }, "device.sm_count"},
      {[](json& d) { d["device"]["memory_bytes"] = 1LL << 62; }, "device.memory_bytes"},
      {[](json& d) { d["device"]["compute_capability"] = "sm_x\x1b[31m"; }, "device.compute_capability"},
      {[](json& d) { d["device"]["driver"] = "580\x1b[2J"; }, "device.driver"},
      {[](json& d) { d["tool"]["git"] = "abc\n"; }, "tool.git"},
      {[](json& d) { d["ceilings"][0]["detail"]["throttle_reasons"] = 0.5; }, "ceilings[0].detail.throttle_reasons"},
      {[](json& d) { d["ceilings"][0]["detail"]["throttle_reasons"] = -1; }, "ceilings[0].detail.throttle_reasons"},
      {[](json& d) {
         d["ceilings"][0]["detail"]["reason_readings"] = 5;
         d["ceilings"][0]["detail"]["hw_slowdown_readings"] = 10;
       },
       "ceilings[0].detail.hw_slowdown_readings"},
      {[](json& d) { d["ceilings"][0]["detail"]["telemetry_readings"] = 2.5; }, "ceilings[0].detail.telemetry_readings"},
      {[](json& d) { d["ceilings"][0]["cv"] = 1e300; }, "ceilings[0].cv"},
      {[](json& d) { d["ceilings"][0]["detail"]["robust_cv"] = -0.01; }, "ceilings[0].detail.robust_cv"},
      {[](json& d) { d["ceilings"][0]["detail"]["robust_cv"] = 1e300; }, "ceilings[0].detail.robust_cv"},
      // Amounts printed in a unit, and link shares, are not negative; telemetry's power is read or 1 mW and more.
      {[](json& d) { d["ceilings"][0]["detail"]["array_bytes"] = -1; }, "ceilings[0].detail.array_bytes"},
      {[](json& d) { d["ceilings"][0]["detail"]["sm_clock_min_hz"] = -1; }, "ceilings[0].detail.sm_clock_min_hz"},
      {[](json& d) { d["ceilings"][0]["detail"]["energy_j"] = -5; }, "ceilings[0].detail.energy_j"},
      {[](json& d) { d["ceilings"][0]["detail"]["link_share"] = -1; }, "ceilings[0].detail.link_share"},
      {[](json& d) {
         d["ceilings"][0]["telemetry"] = {{"sm_clock_hz", 1.98e9}, {"mem_clock_hz", 3.2e9}, {"power_w", 1e-300}, {"temp_c", 60}};
       },
       "ceilings[0].telemetry.power_w"},
      {[](json& d) {
         d["ceilings"][0]["telemetry"] = {{"sm_clock_hz", 1.98e9}, {"mem_clock_hz", 3.2e9}, {"power_w", 500}, {"temp_c", -1}};
       },
       "ceilings[0].telemetry.temp_c"},
      // A fleet baseline's statistics (review 48: a MAD of 1e300 called a 20% shortfall noise; "x" and -1 read as
      // not recorded).
      {[](json& d) { d["ceilings"][0]["detail"]["fleet_mad"] = 1e300; }, "ceilings[0].detail.fleet_mad"},
      {[](json& d) { d["ceilings"][0]["detail"]["fleet_mad"] = -1; }, "ceilings[0].detail.fleet_mad"},
      {[](json& d) { d["ceilings"][0]["detail"]["fleet_mad"] = "x"; }, "ceilings[0].detail.fleet_mad"},
      {[](json& d) { d["ceilings"][0]["detail"]["fleet_profiles"] = -3; }, "ceilings[0].detail.fleet_profiles"},
      {[](json& d) { d["ceilings"][0]["detail"]["fleet_profiles"] = 2.5; }, "ceilings[0].detail.fleet_profiles"},
      {[](json& d) {
         d["ceilings"][0]["detail"]["fleet_profiles"] = 4;
         d["ceilings"][0]["detail"]["fleet_throttled"] = 5;
       },
       "ceilings[0].detail.fleet_throttled"},
      {[](json& d) { d["ceilings"][0]["detail"]["fleet_min"] = d["ceilings"][0]["value"].get<double>() * 1.1; },
       "ceilings[0].detail.fleet_min"},
      {[](json& d) { d["ceilings"][0]["detail"]["fleet_max"] = d["ceilings"][0]["value"].get<double>() * 0.9; },
       "ceilings[0].detail.fleet_max"},
      {[](json& d) { d["ceilings"][0]["detail"]["stopped_by"] = "patience"; }, "ceilings[0].detail.stopped_by"},
      {[](json& d) { d["ceilings"][0]["detail"]["stopped_by"] = 1; }, "ceilings[0].detail.stopped_by"},
      {[](json& d) { d["ceilings"][0]["samples"] = 1LL << 62; }, "ceilings[0].samples"},
      // A value the analysis reads as a number, of another type: it read as "not recorded", so a thermal slowdown
      // written "64" passed qualify.
      {[](json& d) { d["ceilings"][0]["detail"]["throttle_reasons"] = "64"; }, "ceilings[0].detail.throttle_reasons"},
      {[](json& d) { d["ceilings"][0]["detail"]["power_mean_w"] = "x"; }, "ceilings[0].detail.power_mean_w"},
      {[](json& d) { d["ceilings"][0]["detail"]["reason_readings"] = json::array(); },
       "ceilings[0].detail.reason_readings"},
      // A clock no GPU runs at: 1 Hz lowered qualify's thresholds to their floor.
      {[](json& d) {
         d["ceilings"][0]["telemetry"] = {{"sm_clock_hz", 1.0}, {"mem_clock_hz", 3.2e9}, {"power_w", 650}, {"temp_c", 60}};
       },
       "ceilings[0].telemetry.sm_clock_hz"},
      {[](json& d) { d["device"]["clocks_max_hz"]["sm"] = 1e5; }, "device.clocks_max_hz.sm"}};
  for (const auto& [edit, field] : cases) {
    json d = fixture();
    edit(d);
    expect_rejected(d, field);
  }
  json d = fixture();
  d["host"]["gpus_visible"] = 8;
  d["ceilings"][0]["detail"]["p2p_7_6"] = 4e11;  // a pair of the node
  d["ceilings"][0]["detail"]["power_mean_w"] = 650;
  EXPECT_NO_THROW(profile_from_json(d));
}

TEST(Profile, RejectsNegativeAndNonFiniteValues) {
  json d = fixture();
  d["ceilings"][0]["value"] = -4.3e12;
  expect_rejected(d, "ceilings[0].value");
  d = fixture();
  d["ceilings"][0]["cv"] = -0.1;
  expect_rejected(d, "ceilings[0].cv");
  d = fixture();
  d["ceilings"][0]["value"] = std::numeric_limits<double>::infinity();
  expect_rejected(d, "ceilings[0].value");
  d = fixture();
  d["ceilings"][0]["samples"] = 0;
  expect_rejected(d, "ceilings[0].samples");
}

TEST(Profile, RejectsUnknownSchemaUnitAndName) {
  json d = fixture();
  d["schema"] = "ceilings.profile/2";
  expect_rejected(d, "schema");
  d = fixture();
  d["ceilings"][0]["unit"] = "GB/s";
  expect_rejected(d, "ceilings[0].unit");
  d = fixture();
  d["ceilings"][0]["name"] = "HBM copy";
  expect_rejected(d, "ceilings[0].name");
}

TEST(Profile, CreatedIsAnIso8601UtcTime) {
  json d = fixture();
  for (const char* good : {"2026-11-30T12:00:00Z", "2026-11-30T12:00:00.123456Z", "2026-11-30T12:00:00+00:00",
                           "2024-02-29T23:59:59Z"}) {
    d["created"] = good;
    EXPECT_EQ(profile_from_json(d).created, good);
  }
  for (const char* bad : {"not a date", "", "2026-11-30", "2026-11-30 12:00:00Z", "2026-11-30T12:00:00",
                          "2026-11-30T12:00:00+02:00", "2026-11-30T12:00:00-00:00", "2026-11-30t12:00:00z",
                          "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
                          "2026-11-30T24:00:00Z", "2026-11-30T12:60:00Z", "2026-11-30T12:00:00.Z",
                          "2026-11-30T12:00:00ZZ", "26-11-30T12:00:00Z", "+2026-11-30T12:00:00Z"}) {
    d["created"] = bad;
    expect_rejected(d, "created");
  }
  d["created"] = 1796040000;
  expect_rejected(d, "created");
  d["created"] = "2026-11-30T12:00:00+02:00";
  try {
    profile_from_json(d);
    ADD_FAILURE() << "accepted a local time";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not in UTC"), std::string::npos) << e.what();
  }
}

TEST(Profile, UtcTimesOrderByTimeNotByText) {
  auto t = [](const std::string& s) { return parse_utc_time(s, "t"); };
  EXPECT_EQ(t("1970-01-01T00:00:00Z").seconds, 0);
  EXPECT_EQ(t("2000-03-01T00:00:00Z").seconds, 951868800);
  EXPECT_EQ(t("2026-11-30T12:00:00Z").seconds, 1796040000);
  EXPECT_EQ(t("2026-11-30T12:00:00.25Z").nanoseconds, 250000000);
  EXPECT_EQ(t("2026-11-30T12:00:00.1234567891Z").nanoseconds, 123456789);
  EXPECT_TRUE(t("2026-11-30T12:00:00Z") < t("2026-11-30T12:00:00.5Z"));  // as text '.' < 'Z'
  EXPECT_TRUE(t("2026-11-30T12:00:00Z") < t("2027-05-01T12:00:00Z"));
  EXPECT_FALSE(t("2026-11-30T12:00:00+00:00") < t("2026-11-30T12:00:00Z"));
  EXPECT_FALSE(t("2026-11-30T12:00:00Z") < t("2026-11-30T12:00:00+00:00"));
  EXPECT_THROW(t("not a date"), InputError);
  EXPECT_EQ(parse_utc_time(utc_now_iso8601(), "now").nanoseconds, 0);
}

// Values no GPU can have: a ceiling of 0 (nothing was measured), one beyond any GPU (1e308 B/s), a latency
// of 0 or under 1 ns. Each would pass `qualify`'s checks against it.
TEST(Profile, RejectsValuesNoGpuCanHave) {
  json d = fixture();
  d["ceilings"][0]["value"] = 1e308;  // hbm.copy
  expect_rejected(d, "ceilings[0].value");
  d["ceilings"][0]["value"] = 1.01e15;
  expect_rejected(d, "ceilings[0].value");
  d["ceilings"][0]["value"] = 0;
  expect_rejected(d, "ceilings[0].value");
  d = fixture();
  d["ceilings"][2]["value"] = 2e18;  // gemm.bf16
  expect_rejected(d, "ceilings[2].value");
  d = fixture();
  for (const double latency : {0.0, 1e-300, 5e-10, 1001.0}) {
    d["ceilings"][4]["value"] = latency;  // latency.launch
    expect_rejected(d, "ceilings[4].value");
  }
  // Rates far below any GPU's: 1e-300 B/s gave every roof an infinite ridge point.
  for (const double rate : {1e-300, 999.0}) {
    d = fixture();
    d["ceilings"][0]["value"] = rate;  // hbm.copy
    expect_rejected(d, "ceilings[0].value");
    d = fixture();
    d["ceilings"][2]["value"] = rate;  // gemm.bf16
    expect_rejected(d, "ceilings[2].value");
  }
  d = fixture();
  d["ceilings"][0]["datasheet"] = 0;
  expect_rejected(d, "ceilings[0].datasheet");
  d["ceilings"][0]["datasheet"] = 1e300;
  expect_rejected(d, "ceilings[0].datasheet");
  // The bounds themselves are values.
  d = fixture();
  d["ceilings"][0]["value"] = 1e15;
  d["ceilings"][2]["value"] = 1e18;
  d["ceilings"][4]["value"] = 1e-9;
  d["ceilings"][0]["datasheet"] = nullptr;
  EXPECT_NO_THROW(profile_from_json(d));
  d["ceilings"][0]["value"] = 1e3;
  d["ceilings"][2]["value"] = 1e6;
  EXPECT_NO_THROW(profile_from_json(d));
}

TEST(Profile, EachFamilyHasItsUnit) {
  json d = fixture();
  d["ceilings"][0]["unit"] = "FLOP/s";  // hbm.copy
  expect_rejected(d, "ceilings[0].unit");
  d = fixture();
  d["ceilings"][2]["unit"] = "B/s";  // gemm.bf16
  expect_rejected(d, "ceilings[2].unit");
  d = fixture();
  d["ceilings"][3]["unit"] = "s";  // pcie.h2d
  expect_rejected(d, "ceilings[3].unit");
  d = fixture();
  d["ceilings"][4]["unit"] = "B/s";  // latency.launch
  expect_rejected(d, "ceilings[4].unit");
  d = fixture();
  json int8 = d["ceilings"][2];
  int8["name"] = "gemm.int8_sustained";
  int8["datasheet"] = nullptr;
  d["ceilings"].push_back(int8);  // int8 GEMMs count operations, not floating-point ones
  expect_rejected(d, "ceilings[5].unit");
  d["ceilings"][5]["unit"] = "OP/s";
  EXPECT_NO_THROW(profile_from_json(d));
  json fma = int8;
  fma["name"] = "fma.fp32";
  fma["unit"] = "OP/s";
  d["ceilings"].push_back(fma);
  expect_rejected(d, "ceilings[6].unit");
  d["ceilings"][6]["name"] = "fma.int32";  // an integer FMA counts operations too
  EXPECT_NO_THROW(profile_from_json(d));
  d["ceilings"][6]["unit"] = "FLOP/s";
  expect_rejected(d, "ceilings[6].unit");
  // A family this version does not know (a newer writer's) keeps any unit the schema has.
  d = fixture();
  json newer = d["ceilings"][0];
  newer["name"] = "tma.copy";
  d["ceilings"].push_back(newer);
  EXPECT_NO_THROW(profile_from_json(d));
}

TEST(Profile, RejectsACeilingNamedTwice) {
  json d = fixture();
  json again = d["ceilings"][0];
  again["value"] = 4.0e12;
  d["ceilings"].push_back(again);
  expect_rejected(d, "ceilings[5].name");
  try {
    profile_from_json(d);
    ADD_FAILURE() << "accepted hbm.copy twice";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'hbm.copy' is also ceilings[0]"), std::string::npos) << e.what();
  }
}

TEST(Profile, PcieLinkWidthAndGenerationExist) {
  for (const char* key : {"gen", "width", "max_gen", "max_width", "gpu_max_gen"})
    for (const int bad : {0, -1, 64}) {
      json d = fixture();
      d["device"]["pcie"][key] = bad;
      expect_rejected(d, std::string("device.pcie.") + key);
    }
  json d = fixture();
  d["device"]["pcie"]["gen"] = 8;
  expect_rejected(d, "device.pcie.gen");
  d = fixture();
  d["device"]["pcie"]["width"] = 3;
  expect_rejected(d, "device.pcie.width");
  d = fixture();
  d["device"]["pcie"] = {{"gen", 1}, {"width", 1}, {"max_gen", 7}, {"max_width", 32}};
  EXPECT_NO_THROW(profile_from_json(d));  // no gpu_max_gen: written before it was read, or an old driver
  d["device"]["pcie"]["gpu_max_gen"] = 5;
  const Profile p = profile_from_json(d);
  EXPECT_EQ(p.device.pcie.gpu_max_gen, 5);
  EXPECT_EQ(profile_to_json(p)["device"]["pcie"]["gpu_max_gen"], 5);
  d["device"]["pcie"] = {{"gen", nullptr}, {"width", nullptr}, {"max_gen", nullptr}, {"max_width", nullptr}};
  EXPECT_NO_THROW(profile_from_json(d));  // null: could not be read
}

// The plain scans that replaced std::regex (whose recursion overflowed the stack on a 50 000-character name)
// accept exactly what the regexes did: every string of up to 6 characters over the grammar's pieces.
TEST(Profile, CeilingNamesAcceptWhatTheOldRegexesAccepted) {
  const std::regex ceiling("^[a-z0-9_]+(\\.[a-z0-9_]+)+$"), pair("^[a-z0-9_]+\\.[a-z0-9_]+$"), ident("^[a-z0-9_]+$");
  const std::string alphabet = "a9_.A-";
  std::string s;
  std::function<void(std::size_t)> all = [&](std::size_t len) {
    if (s.size() == len) {
      EXPECT_EQ(is_ceiling_name(s), std::regex_match(s, ceiling)) << s;
      EXPECT_EQ(is_family_variant(s), std::regex_match(s, pair)) << s;
      EXPECT_EQ(is_identifier(s), std::regex_match(s, ident)) << s;
      return;
    }
    for (char c : alphabet) {
      s.push_back(c);
      all(len);
      s.pop_back();
    }
  };
  for (std::size_t len = 0; len <= 6; ++len) all(len);
  EXPECT_TRUE(is_ceiling_name("gemm.bf16.sustained"));
  EXPECT_FALSE(is_family_variant("gemm.bf16.sustained"));
}

// A 50 000-character name is a bad name (exit 2, the message shows its start), not a stack overflow.
TEST(Profile, VeryLongCeilingNameIsRejectedNotACrash) {
  json d = fixture();
  d["ceilings"][0]["name"] = std::string(50000, 'a') + "." + std::string(50000, 'b');
  EXPECT_EQ(profile_from_json(d).ceilings[0].name.size(), 100001u);  // long, but of the form family.variant
  d["ceilings"][0]["name"] = std::string(50000, 'a') + "!";
  try {
    profile_from_json(d);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ceilings[0].name"), std::string::npos);
    EXPECT_LT(std::string(e.what()).size(), 400u);
  }
}

TEST(Profile, RejectsFilesThatAreNotJson) {
  const std::string dir = test::scratch_dir("profile_bad_files");
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  EXPECT_THROW(read_profile(write("empty.json", "")), InputError);
  EXPECT_THROW(read_profile(write("blank.json", "  \n")), InputError);
  std::ifstream in(kFixture);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THROW(read_profile(write("truncated.json", text.substr(0, text.size() / 2))), InputError);
  EXPECT_THROW(read_profile(write("garbage.json", "\x7f" "ELF\x01\x02")), InputError);
  EXPECT_THROW(read_profile(write("array.json", "[1,2,3]")), InputError);
  EXPECT_THROW(read_profile(dir + "/missing.json"), InputError);
}

TEST(Profile, AtomicWriteReplacesWholeFilesOnly) {
  const std::string dir = test::scratch_dir("profile_atomic");
  const std::string path = dir + "/p.json";
  write_file_atomic(path, "first");
  write_file_atomic(path, "second");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "second");
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);  // no temporary left behind
  EXPECT_THROW(write_file_atomic(dir + "/no/such/dir/p.json", "x"), InputError);
  try {
    write_file_atomic(dir + "/no/such/dir/p.json", "x");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write '" + dir + "/no/such/dir/p.json'"), std::string::npos)
        << e.what();  // the user's path, not the temporary's
  }
  // A name near NAME_MAX (255): the temporary's name must not push past it.
  const std::string long_name = dir + "/" + std::string(250, 'a') + ".svg";
  write_file_atomic(long_name, "long");
  EXPECT_TRUE(std::filesystem::exists(long_name));
  // Through a symlink: the target gets the text, the link stays a link.
  const std::string target = dir + "/target.json", link = dir + "/link.json";
  write_file_atomic(target, "old");
  std::filesystem::create_symlink("target.json", link);
  write_file_atomic(link, "new");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  std::ifstream t(target);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>()), "new");
}

// SIGTERM in the middle of a write ended the process at once and left the temporary beside its target for good
// (review 22 #3): now the signal waits for the file to be in place, then ends the process as it would have. A
// child writes 64 MiB; a thread of its own sends the signal the moment the temporary exists.
TEST(Profile, AnInterruptDuringAWriteLeavesNoTemporary) {
  namespace fs = std::filesystem;
  const std::string dir = test::scratch_dir("profile_atomic_signal");
  const std::string path = dir + "/p.svg";
  const std::string text(std::size_t{64} << 20, 'x');
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::thread watcher([&] {
      for (int i = 0; i < 200000; ++i) {
        for (const auto& e : fs::directory_iterator(dir))
          if (e.path().filename().string().rfind(atomic_temp_prefix("p.svg"), 0) == 0) {
            ::kill(::getpid(), SIGTERM);
            return;
          }
        ::usleep(50);
      }
    });
    // inotify cannot miss the temporary's creation, as the polling watcher can: a write that used none is told
    // apart from one that outran the watcher (review 51).
    const int notify = ::inotify_init1(IN_NONBLOCK);
    if (notify < 0 || ::inotify_add_watch(notify, dir.c_str(), IN_CREATE) < 0) ::_exit(5);
    watcher.detach();
    try {
      write_file_atomic(path, text);
    } catch (...) {
      ::_exit(3);
    }
    ::sleep(5);  // no signal came: did a temporary exist?
    alignas(inotify_event) char events[64 * 1024];
    const ssize_t n = ::read(notify, events, sizeof events);
    for (ssize_t at = 0; n > 0 && at < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(events + at);
      if (e->len > 0 && std::string(e->name).rfind(atomic_temp_prefix("p.svg"), 0) == 0) ::_exit(4);
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
    ::_exit(6);  // no temporary was created: the write was not through one
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  // The write outran the watcher (a loaded machine): no signal was sent during it, as in the tests below.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 4) GTEST_SKIP() << "the watcher missed the temporary";
  ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 6) << "the write created no temporary beside its target";
  ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 5) << "inotify could not watch " << dir;
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"p.svg"}) << "the file in place, no temporary beside it";
  EXPECT_EQ(fs::file_size(path), text.size());
  // The process's own dispositions are back after a write.
  struct sigaction before {}, after {};
  ::sigaction(SIGTERM, nullptr, &before);
  write_file_atomic(dir + "/q.svg", "q");
  ::sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(before.sa_handler, after.sa_handler);
}

// In a forked child: writes `text` to dir/p.svg atomically while a thread of its own sends `first` the moment the
// temporary exists and `second` once the writing thread has taken the first (two signals, not one pending signal
// sent twice: the kernel keeps one of a kind pending, and a thread in the middle of a large write() takes it late).
// Blocked in the sending thread, the signals go to the writer, and sigpending() sees the first until it is taken.
// Whether both were sent while the temporary was there; a write that throws ends the child with 3.
bool write_while_signalled(const std::string& dir, const std::string& text, int first, int second) {
  namespace fs = std::filesystem;
  volatile bool sent = false;
  std::thread watcher([&] {
    sigset_t both;
    sigemptyset(&both);
    sigaddset(&both, first);
    sigaddset(&both, second);
    pthread_sigmask(SIG_BLOCK, &both, nullptr);
    for (int i = 0; i < 200000; ++i) {
      for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().rfind(atomic_temp_prefix("p.svg"), 0) == 0) {
          ::kill(::getpid(), first);
          for (int k = 0; k < 100000; ++k) {
            sigset_t pending;
            sigpending(&pending);
            if (!sigismember(&pending, first)) break;
            ::usleep(20);
          }
          ::kill(::getpid(), second);
          sent = fs::exists(e.path());
          return;
        }
      ::usleep(50);
    }
  });
  try {
    write_file_atomic(dir + "/p.svg", text);
  } catch (...) {
    ::_exit(3);
  }
  watcher.join();
  return sent;
}

// Two interrupts during a write (Ctrl-C twice: `measure` then kills its bench at once instead of waiting out the
// grace) both land once the file is in place; one had been lost. A child counts SIGINTs with a handler of its own.
volatile std::sig_atomic_t g_sigints = 0;
extern "C" void count_sigint(int) { g_sigints = g_sigints + 1; }

TEST(Profile, TwoInterruptsDuringAWriteBothLand) {
  const std::string dir = test::scratch_dir("profile_atomic_two_signals");
  const std::string text(std::size_t{64} << 20, 'x');
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct sigaction counting {};
    counting.sa_handler = count_sigint;
    sigemptyset(&counting.sa_mask);
    ::sigaction(SIGINT, &counting, nullptr);
    if (!write_while_signalled(dir, text, SIGINT, SIGINT)) ::_exit(4);  // the temporary missed: not this test's case
    ::_exit(g_sigints == 2 ? 0 : 10 + static_cast<int>(g_sigints));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 4) GTEST_SKIP() << "the write ended before both signals were sent";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "interrupts that landed: " << WEXITSTATUS(status) - 10;
}

// A signal the process ignores (nohup's SIGHUP) is not held: held, it took the place of a SIGTERM that came after it
// in the same write, and the process went on as if neither had come (review 45).
TEST(Profile, AnIgnoredSignalDuringAWriteDoesNotHideATermination) {
  const std::string dir = test::scratch_dir("profile_atomic_ignored_signal");
  const std::string text(std::size_t{64} << 20, 'x');
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGHUP, SIG_IGN);
    // Alive after the write: the SIGTERM was lost (4: the watcher missed the temporary).
    ::_exit(write_while_signalled(dir, text, SIGHUP, SIGTERM) ? 5 : 4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 4) GTEST_SKIP() << "the write ended before both signals were sent";
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_TRUE(std::filesystem::exists(dir + "/p.svg"));
}

// The new file keeps the old one's permissions (a private profile stays private) and a new file gets the
// umask's, not mkstemp's 0600; a link planted at a temporary-looking name beside it is left alone (the
// temporary's name is random: exclusive creation itself is mkostemp's, not tested here).
TEST(Profile, AtomicWriteKeepsPermissionsAndCreatesItsTemporaryExclusively) {
  namespace fs = std::filesystem;
  const std::string dir = test::scratch_dir("profile_atomic_modes");
  const std::string path = dir + "/p.profile.json";
  write_file_atomic(path, "first");
  const mode_t mask = ::umask(022);
  ::umask(mask);
  EXPECT_EQ(static_cast<mode_t>(fs::status(path).permissions()) & 0777, 0666 & ~mask);
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  write_file_atomic(path, "second");
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  const std::string planted = dir + "/" + atomic_temp_prefix("p.profile.json") + "XXXXXX";
  const std::string victim = dir + "/victim";
  write_file_atomic(victim, "untouched");
  fs::create_symlink("victim", planted);
  write_file_atomic(path, "third");
  std::ifstream v(victim);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(v)), std::istreambuf_iterator<char>()), "untouched");
  EXPECT_EQ(atomic_temp_prefix(std::string(250, 'a')).size(), 206u) << "room for the suffix within NAME_MAX";
}

// A path that cannot be written is the user's to fix (exit 2); a write the system could not finish (a full disk,
// a quota, here a file-size limit) is incomplete output (exit 3), and the old file stays whole either way.
TEST(Profile, AFullDiskIsIncompleteAndABadPathIsBadInput) {
  const std::string dir = test::scratch_dir("profile_atomic_full");
  const std::string path = dir + "/p.profile.json";
  write_file_atomic(path, "old");
  try {
    write_file_atomic(dir + "/no-such-dir/p.profile.json", "x");
    ADD_FAILURE() << "wrote into a directory that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput) << e.what();
  }
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG
  rlimit small = saved;
  small.rlim_cur = 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  int code = -1;
  std::string message;
  try {
    write_file_atomic(path, std::string(4096, 'x'));
  } catch (const Error& e) {
    code = e.exit_code();
    message = e.what();
  }
  // Two files that belong together (a profile and its raw JSON): the second failing leaves the first old too.
  const std::string raw = dir + "/p.bench.json";
  write_file_atomic(raw, "old raw");
  int pair_code = -1;
  try {
    write_files_atomic({{raw, "new raw"}, {path, std::string(4096, 'x')}});
  } catch (const Error& e) {
    pair_code = e.exit_code();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  EXPECT_EQ(pair_code, kExitIncomplete);
  std::ifstream raw_in(raw);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(raw_in)), std::istreambuf_iterator<char>()), "old raw");
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "temporary left: " << e.path();
  // The second rename failing (its target a directory) after the first succeeded: the first file is put back,
  // and a file new with this write is removed again.
  std::filesystem::create_directory(dir + "/in-the-way");
  const std::string fresh = dir + "/fresh.json";
  int rename_code = -1;
  try {
    write_files_atomic({{raw, "newer raw"}, {fresh, "fresh"}, {dir + "/in-the-way", "x"}});
  } catch (const Error& e) {
    rename_code = e.exit_code();
  }
  EXPECT_NE(rename_code, -1);
  std::ifstream raw_again(raw);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(raw_again)), std::istreambuf_iterator<char>()), "old raw");
  EXPECT_FALSE(std::filesystem::exists(fresh));
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "temporary left: " << e.path();
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(code, kExitIncomplete) << message;
  EXPECT_NE(message.find("was left as it was"), std::string::npos) << message;
  std::ifstream in(path);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), "old");
}

// measure writes a profile only where it reads back (review 89); where it would not, the raw ceilings-bench JSON is
// kept, an earlier profile at the path is left as it was, and the error is exit 3 (review 96 #5: the branch had no
// test, and no CLI input reached it).
TEST(Profile, AProfileThatWouldNotReadBackIsNotWrittenAndItsRawJsonIsKept) {
  const std::string dir = test::scratch_dir("profile_read_back");
  const std::string path = dir + "/gpu0.profile.json", raw = dir + "/gpu0.bench.json";
  Profile good = read_profile(kFixture);
  write_profile_with_raw(good, path, raw, "{\"first\": 1}\n");
  EXPECT_EQ(read_profile(path).device.name, good.device.name);
  const std::string before = read_text_file(path);
  Profile bad = good;
  bad.ceilings[0].unit = "furlongs/fortnight";  // no unit a reader knows
  try {
    write_profile_with_raw(bad, path, raw, "{\"second\": 2}\n");
    ADD_FAILURE() << "wrote a profile that does not read back";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitIncomplete);
    EXPECT_NE(std::string(e.what()).find("the profile would not read back, so it was not written (the raw "
                                         "ceilings-bench JSON is kept in " + raw + "): "),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read_text_file(path), before);               // the earlier profile as it was
  EXPECT_EQ(read_text_file(raw), "{\"second\": 2}\n");  // what was measured, kept
}
