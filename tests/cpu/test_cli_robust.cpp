// Hostile input end to end: every subcommand answers bad input with exit 2 and a message naming the problem,
// never a crash (exit 139), a hang, a silent default or a file of the user's overwritten.
#include <sstream>
#include <gtest/gtest.h>
#include <cerrno>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "ceilings/json_fields.hpp"
#include "ceilings/profile.hpp"
#include "cli_runner.hpp"

using namespace ceilings;
using ceilings::test::run_cli;

namespace {

const std::string kProfile = std::string(CEILINGS_FIXTURES) + "/profiles/h200-qualify.profile.json";
const std::string kLlama = std::string(CEILINGS_FIXTURES) + "/hf/Llama-3.1-8B.config.json";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// The fixture profile with one change, written to dir/name.
std::string profile_with(const std::string& dir, const std::string& name, const std::function<void(json&)>& change) {
  json doc = read_json_file(kProfile);
  change(doc);
  const std::string path = dir + "/" + name;
  write(path, doc.dump(2));
  return path;
}

json& ceiling(json& doc, const std::string& name) {
  for (json& c : doc["ceilings"])
    if (c["name"] == name) return c;
  throw std::runtime_error("fixture lacks " + name);
}

}  // namespace

// ---- long text -----------------------------------------------------------------------------------

// A 50 000-character ceiling name crashed every command that reads a profile (std::regex recursion).
TEST(CliRobust, LongCeilingNameIsBadInputInEveryCommand) {
  const std::string dir = test::scratch_dir("robust_long_name");
  const std::string p = profile_with(dir, "long.profile.json",
                                     [](json& d) { d["ceilings"][0]["name"] = std::string(50000, 'x') + "!"; });
  const std::vector<std::vector<std::string>> commands = {
      {"show", p},
      {"qualify", p},
      {"compare", p, "h200"},
      {"roofline", "--profile", p},
      {"mfu", "--profile", p, "--params", "7e9", "--layers", "32", "--heads", "32", "--head-dim", "128", "--seq",
       "4096", "--tokens-per-sec", "1000", "--gpus", "1"},
      {"fleet", p, p, p}};
  for (const auto& args : commands) {
    const auto r = run_cli(args);
    if (args[0] == "fleet") {  // fleet skips an unreadable profile and says why
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_TRUE(has(r.err, "ceilings[0].name")) << r.err;
      continue;
    }
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_TRUE(has(r.err, "ceilings[0].name")) << args[0] << ": " << r.err.substr(0, 500);
    EXPECT_LT(r.err.size(), 2000u) << args[0];
  }
}

// Arguments go into JSON (a profile's measure section, --json output), which must be UTF-8: a Latin-1 file name
// made `measure` fail in the JSON writer after the run, with the raw output written and the profile not. Such an
// argument, or one with a control character, is refused before anything runs.
TEST(CliRobust, ArgumentsThatAreNotPrintableUtf8AreBadInput) {
  const std::string dir = test::scratch_dir("robust_utf8_args");
  auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/p\xffq.profile.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "argument 5 is not valid UTF-8")) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "nothing is measured or written";
  r = run_cli({"show", "a\x01" "b.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "argument 2 holds a control character (0x01)")) << r.err;
  EXPECT_FALSE(has(r.err, "\x01")) << "the message does not echo it";
  // Printable UTF-8 is fine, and the profile records the command line as a shell re-runs it.
  const std::string out = dir + "/caf\xc3\xa9 o'clock.profile.json";
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out, "--filter", "^hbm/read/"}, {}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string invocation = read_profile(out).raw.at("measure").at("invocation").get<std::string>();
  EXPECT_NE(invocation.find(" --out '" + dir + "/caf\xc3\xa9 o'\\''clock.profile.json' --filter '^hbm/read/'"),
            std::string::npos)
      << invocation;
}

TEST(CliRobust, LongRulesKeyOrQuantityIsBadInput) {
  const std::string dir = test::scratch_dir("robust_long_rules");
  const json key = {{"schema", "ceilings.rules/1"}, {"ceilings", {{std::string(50000, 'h') + ".copy!", json::object()}}}};
  write(dir + "/key.rules.json", key.dump());
  auto r = run_cli({"qualify", kProfile, "--rules", dir + "/key.rules.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 500);
  EXPECT_TRUE(has(r.err, "not a ceiling name")) << r.err.substr(0, 500);
  EXPECT_LT(r.err.size(), 2000u);

  const json quantity = {{"schema", "ceilings.rules/1"},
                         {"ceilings", {{"hbm.copy", {{"min", std::string(100000, '4') + " TB/s"}}}}}};
  write(dir + "/quantity.rules.json", quantity.dump());
  r = run_cli({"qualify", kProfile, "--rules", dir + "/quantity.rules.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 500);
  EXPECT_TRUE(has(r.err, "ceilings.hbm.copy.min")) << r.err.substr(0, 500);
  EXPECT_LT(r.err.size(), 2000u);
}

// "1e-320 TB/s" and "1e400 TB/s" were std::stod's "error: stod" (exit 3); "1e308 TB/s" an infinite limit.
TEST(CliRobust, RulesQuantityOutOfRangeIsBadInput) {
  const std::string dir = test::scratch_dir("robust_rules_range");
  for (const char* text : {"1e-320 TB/s", "1e400 TB/s", "1e308 TB/s"}) {
    const json rules = {{"schema", "ceilings.rules/1"}, {"ceilings", {{"hbm.copy", {{"min", text}}}}}};
    write(dir + "/r.rules.json", rules.dump());
    const auto r = run_cli({"qualify", kProfile, "--rules", dir + "/r.rules.json"});
    EXPECT_EQ(r.exit_code, 2) << text << ": " << r.err;
    EXPECT_TRUE(has(r.err, std::string("'") + text + "' is out of range")) << r.err;
  }
}

// ---- files that are not what they should be ------------------------------------------------------

// 1e400 was nlohmann's out_of_range ("number overflow", exit 3) and did not name the file.
TEST(CliRobust, NumberOutOfRangeInAFileIsBadInputNamingTheFile) {
  const std::string dir = test::scratch_dir("robust_json_range");
  std::string text = read_text_file(kProfile);
  const auto at = text.find("\"cv\":");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"huge\": 1e400, ");
  write(dir + "/p.profile.json", text);
  write(dir + "/r.rules.json", R"({"schema": "ceilings.rules/1", "x": 1e400})");
  write(dir + "/c.config.json", R"({"hidden_size": 1e400})");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"show", dir + "/p.profile.json"},
           {"qualify", kProfile, "--rules", dir + "/r.rules.json"},
           {"model", "--hf-config", dir + "/c.config.json"}}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_TRUE(has(r.err, dir + "/")) << r.err;
    EXPECT_TRUE(has(r.err, "out of range")) << r.err;
  }
}

// A document nested 200 000 deep overflowed the stack when it was copied.
TEST(CliRobust, DeeplyNestedJsonIsBadInput) {
  const std::string dir = test::scratch_dir("robust_json_deep");
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "{\"a\":";
  text += "1" + std::string(200000, '}');
  write(dir + "/deep.profile.json", text);
  const auto r = run_cli({"show", dir + "/deep.profile.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 300);
  EXPECT_TRUE(has(r.err, "levels deep")) << r.err.substr(0, 300);
}

// A directory said "'dir' is empty"; /dev/zero ran out of memory (std::bad_alloc, exit 3).
TEST(CliRobust, DirectoriesDevicesAndHugeFilesAreNotRead) {
  const std::string dir = test::scratch_dir("robust_not_files");
  auto r = run_cli({"show", dir});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "is a directory")) << r.err;
  r = run_cli({"show", "/dev/zero"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "'/dev/zero' is not a regular file")) << r.err;
  r = run_cli({"qualify", kProfile, "--rules", "/dev/zero"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "not a regular file")) << r.err;
  r = run_cli({"model", "--hf-config", dir});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "is a directory")) << r.err;
  // A pipe is read to its end, as `ceilings show <(ssh node cat p.json)` does.
  const std::string fifo = dir + "/profile.fifo";
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // The writer waits at most 20 s for the reader (a non-blocking open fails until one is there), so a
  // `show` that never opens the pipe fails the test instead of hanging it.
  std::thread writer([&] {
    const std::string text = read_text_file(kProfile);
    int fd = -1;
    for (int i = 0; i < 2000 && fd < 0; ++i) {
      fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (fd < 0) return;
    fcntl(fd, F_SETFL, 0);  // blocking writes from here on
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  });
  r = run_cli({"show", fifo});
  writer.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "hbm.copy")) << r.out;
  // A sparse file over the cap: refused by its size, never read.
  const std::string huge = dir + "/huge.profile.json";
  write(huge, "{");
  std::filesystem::resize_file(huge, kMaxInputFileBytes + 1);
  r = run_cli({"show", huge});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "larger than 256 MiB")) << r.err;
}

// ---- option values -------------------------------------------------------------------------------

// NaN passed CLI11's PositiveNumber and Range (every comparison with NaN is false): `fleet --z nan
// --margin nan` exited 0 with an outlier hidden. Every floating-point option refuses nan and inf.
TEST(CliRobust, NanAndInfinityAreRefusedByEveryNumberOption) {
  const std::string fleet_dir = std::string(CEILINGS_FIXTURES) + "/profiles";
  const std::vector<std::vector<std::string>> commands = {
      {"fleet", fleet_dir, "--z", "nan"},
      {"fleet", fleet_dir, "--margin", "nan"},
      {"fleet", fleet_dir, "--min-deficit", "-nan"},
      {"fleet", fleet_dir, "--z", "inf"},
      {"health", "--watch", "nan"},
      {"measure", "--timeout", "nan"},
      {"measure", "--kill-grace", "nan"},
      {"measure", "--family-timeout", "inf"},
      {"measure", "--all-gpus", "--margin", "nan"},
      {"model", "--hf-config", kLlama, "--seq", "nan"},
      {"mfu", "--hf-config", kLlama, "--seq", "4096", "--tokens-per-sec", "nan", "--gpus", "8", "--peak-tflops", "989"},
      {"mbu", "--params", "7e9", "--tpot-ms", "inf", "--peak-bw-gbps", "1000"},
      {"train-time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--achieved-tflops", "1e400"},
      {"roofline", "--profile", kProfile, "--hf-config", kLlama, "--context", "4096", "--batch", "1", "--batch", "nan"},
      {"memory", "--mode", "infer", "--hf-config", kLlama, "--context", "NaN"}};
  for (const auto& args : commands) {
    const auto r = run_cli(args, {{"CUDA_VISIBLE_DEVICES", ""}});
    std::string line;
    for (const auto& a : args) line += a + " ";
    EXPECT_EQ(r.exit_code, 2) << line << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, "must be a")) << line << "\n" << r.err;
  }
}

// CLI11's Range said "Value 0 not in range 0.000000 to 17976931348623157...(300 digits)".
TEST(CliRobust, RangeErrorsAreReadable) {
  const std::string fleet_dir = std::string(CEILINGS_FIXTURES) + "/profiles";
  auto r = run_cli({"fleet", fleet_dir, "--z", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "--z: must be a positive number, not '0'")) << r.err;
  r = run_cli({"fleet", fleet_dir, "--margin", "101"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "--margin: must be a number from 0 to 100, not '101'")) << r.err;
  r = run_cli({"fleet", fleet_dir, "--baseline-group", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "--baseline-group: must be a positive number")) << r.err;
  r = run_cli({"measure", "--kill-grace", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "--kill-grace: must be a number from 0 to 3600, not '-1'")) << r.err;
  // 1e300 s overflowed the clock's ticks: the child was killed at once, or (9e9) waited on for ever
  r = run_cli({"measure", "--kill-grace", "1e300"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "--kill-grace: must be a number from 0 to 3600, not '1e300'")) << r.err;
  // A whole number past its option's type said only "Could not convert" (review 22 #6).
  r = run_cli({"measure", "--device", "4294967296"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "--device: must be a number within the option's range, not '4294967296' (out of range)"))
      << r.err;
  r = run_cli({"memory", "--mode", "train", "--hf-config", kLlama, "--seq", "4096", "--dp", "99999999999999999999999"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "--dp: must be a number within the option's range, not '99999999999999999999999'")) << r.err;
  for (const auto& cmd : {"fleet", "measure", "health"}) {
    r = run_cli({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_FALSE(has(r.out, "179769313486")) << r.out;
  }
}

// An empty value acted as if the option were not given (or as 0): `show --ceiling ''` printed the whole
// table, `mbu --kv-bytes-per-token ''` counted no KV cache.
TEST(CliRobust, EmptyOptionValuesAreRefused) {
  const std::string dir = test::scratch_dir("robust_empty");
  const std::vector<std::vector<std::string>> commands = {
      {"show", kProfile, "--ceiling", ""},
      {"specs", ""},
      {"roofline", "--profile", kProfile, "--svg", ""},
      {"fleet", kProfile, "--write-baseline", ""},
      {"mbu", "--params", "7e9", "--tpot-ms", "10", "--peak-bw-gbps", "1000", "--context", "4096",
       "--kv-bytes-per-token", ""},
      {"qualify", kProfile, "--rules", ""},
      {"measure", "--out", ""}};
  for (const auto& args : commands) {
    const auto r = run_cli(args, {{"CUDA_VISIBLE_DEVICES", ""}});
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[args.size() - 2] << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, "must not be empty")) << args[0] << "\n" << r.err;
  }
}

// `ceilings bogus` said "A subcommand is required".
TEST(CliRobust, UnknownSubcommandIsNamedAndTheKnownOnesListed) {
  const auto r = run_cli({"bogus", "--format", "json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "unknown subcommand 'bogus'")) << r.err;
  EXPECT_TRUE(has(r.err, "fleet, health")) << r.err;
  EXPECT_FALSE(has(r.err, "A subcommand is required")) << r.err;
  EXPECT_EQ(run_cli({"--version"}).exit_code, 0);
  EXPECT_EQ(run_cli({}).exit_code, 2);  // no subcommand at all: CLI11's "A subcommand is required" is right
  // An option before the subcommand: its value is not an unknown subcommand.
  const auto early = run_cli({"--format", "json", "show", kProfile});
  EXPECT_EQ(early.exit_code, 2);
  EXPECT_TRUE(has(early.err, "'--format' comes before the subcommand; options go after it")) << early.err;
}

// ---- numbers too large to compute with -----------------------------------------------------------

// gemm.bf16 of 1e308 FLOP/s: `roofline --svg` hung, its memory growing without bound. The profile reader now
// refuses such a value before any plot (a roof the axes cannot span is refused by the plot too: a --point
// past the axes is tested in RooflineCli.TableAndErrors).
TEST(CliRobust, RooflineSvgOfAnEnormousRoofIsRefusedNotAHang) {
  const std::string dir = test::scratch_dir("robust_roofline_huge");
  const std::string p = profile_with(dir, "huge.profile.json", [](json& d) { ceiling(d, "gemm.bf16")["value"] = 1e308; });
  const auto r = run_cli({"roofline", "--profile", p, "--svg", dir + "/o.svg"}, {}, 20);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "ceilings[2].value") && has(r.err, "1e+308")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/o.svg"));
}

// `model --seq 1e308` printed "inf FLOP"; `roofline --context 1e308` inf and nan; `memory --context 1e308`
// "inf B"; `memory --params 1e308` inf weights. All exit 0 before.
TEST(CliRobust, LengthsAndSizesThatOverflowAreBadInput) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"model", "--hf-config", kLlama, "--seq", "1e308"}, "--seq must be a whole number of tokens from 1 to 2^40"},
      {{"model", "--hf-config", kLlama, "--seq", "2048.5"}, "--seq must be a whole number of tokens from 1 to 2^40"},
      {{"memory", "--mode", "infer", "--hf-config", kLlama, "--context", "4096.5"}, "--context must be a whole number"},
      {{"train-time", "--hf-config", kLlama, "--seq", "4096.5", "--tokens", "1e12", "--gpus", "8", "--achieved-tflops",
        "400"},
       "--seq must be a whole number"},
      {{"train-time", "--params", "8e9", "--tokens", "1.5", "--gpus", "8", "--achieved-tflops", "400"},
       "--tokens must be a positive whole number"},
      {{"roofline", "--profile", kProfile, "--hf-config", kLlama, "--context", "1e308"}, "--context must be"},
      {{"memory", "--mode", "infer", "--hf-config", kLlama, "--context", "1e308"}, "--context must be"},
      {{"memory", "--mode", "train", "--hf-config", kLlama, "--seq", "2e12"}, "--seq (for the activation estimate)"},
      {{"mfu", "--hf-config", kLlama, "--seq", "1e300", "--tokens-per-sec", "1", "--gpus", "1", "--peak-tflops", "1"},
       "--seq must be"},
      {{"mbu", "--hf-config", kLlama, "--context", "1e20", "--tpot-ms", "10", "--peak-bw-gbps", "4800"},
       "--context must be"},
      {{"memory", "--mode", "train", "--params", "1e308"}, "--params must be a positive whole number"},
      {{"mbu", "--params", "1e308", "--tpot-ms", "10", "--peak-bw-gbps", "4800"},
       "--params must be a positive whole number"}};
  for (const auto& [args, message] : cases) {
    for (const bool json : {false, true}) {
      auto a = args;
      if (json) a.push_back("--json");
      const auto r = run_cli(a);
      EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[args.size() - 2] << "\n" << r.out << r.err;
      EXPECT_TRUE(has(r.err, message)) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  }
  // 2^40 tokens is still a length.
  EXPECT_EQ(run_cli({"model", "--hf-config", kLlama, "--seq", "1099511627776"}).exit_code, 0);
}

// A profile's own "datasheet" of 3.2 TB/s for an H200's hbm.read let 3.0 TB/s pass qualify, labelled as the
// built-in datasheet; compare showed two datasheets for one GPU model.
TEST(CliRobust, AProfilesDatasheetFigureNeverReplacesTheTable) {
  const std::string dir = test::scratch_dir("robust_datasheet");
  const std::string p = profile_with(dir, "slow.profile.json", [](json& d) {
    ceiling(d, "hbm.read")["value"] = 3.0e12;
    ceiling(d, "hbm.read")["datasheet"] = 3.2e12;
  });
  auto r = run_cli({"qualify", p});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "4.80 TB/s")) << r.out;
  r = run_cli({"show", p, "--format", "csv"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "hbm.read,measured,3000000000000.0,B/s,4800000000000.0,0.625,")) << r.out;
  EXPECT_FALSE(has(r.out, "3200000000000")) << r.out;
}

// Control characters and broken UTF-8 reached the terminal (a detail label, an HF architecture, a --point name)
// or made the roofline SVG malformed.
TEST(CliRobust, TextThatWouldRewriteTheTerminalOrBreakTheSvgIsBadInput) {
  const std::string dir = test::scratch_dir("robust_plain_text");
  const std::string label = profile_with(dir, "label.profile.json",
                                         [](json& d) { ceiling(d, "hbm.read")["detail"]["label"] = "x\x1b[2Jy"; });
  auto r = run_cli({"show", label, "--ceiling", "hbm.read"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "field 'ceilings[1].detail.label': holds a control character (0x1b)")) << r.err;
  EXPECT_FALSE(has(r.err, "\x1b")) << r.err;
  json hf = read_json_file(kLlama);
  hf["architectures"] = {"Llama\x1b[31mForCausalLM"};
  write(dir + "/config.json", hf.dump());
  r = run_cli({"model", "--hf-config", dir + "/config.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "architectures")) << r.err;
  for (const std::string name : {"a\x01b", "a\xff\xfe"}) {
    r = run_cli({"roofline", "--profile", kProfile, "--point", name + ":1e12:1e9", "--svg", dir + "/r.svg"});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "argument 5 ")) << r.err;  // refused with every other argument, before the command
    EXPECT_TRUE(has(r.err, "arguments must be printable UTF-8 text")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/r.svg"));
  }
  EXPECT_EQ(run_cli({"roofline", "--profile", kProfile, "--point", "d\xc3\xa9" "codage:1e12:1e9"}).exit_code, 0);
}

// A wrong type in a ceiling's detail.variants or detail.sweep passed the profile reader; show --ceiling then died
// with the JSON library's "[json.exception.type_error.302]" (exit 3, no field named). Every command that reads
// the profile refuses it, naming the field.
TEST(CliRobust, AMistypedVariantOrSweepPointIsBadInputInEveryCommand) {
  const std::string dir = test::scratch_dir("robust_detail_cases");
  struct Case {
    const char* key;
    json list;
    const char* field;  // after ceilings[0].detail.
  };
  const json good = {{"benchmark", "hbm/copy/x"}, {"value", 4.3e12}, {"cv", 0.003}};
  auto with = [&](const char* member, json v) {
    json e = good;
    e[member] = std::move(v);
    return json::array({e});
  };
  const std::vector<Case> cases = {
      {"variants", with("benchmark", 5), "variants[0].benchmark': expected a string, found a number"},
      {"sweep", with("unit", 7), "sweep[0].unit': expected a string, found a number"},
      {"sweep", with("unit", "parsecs"), "sweep[0].unit': unknown unit 'parsecs'"},
      {"variants", with("unit", "FLOP/s"), "variants[0].unit': 'FLOP/s' is not the unit of hbm.copy"},
      {"variants", with("value", "4.3e12"), "variants[0].value': expected a number, found a string"},
      {"sweep", with("cv", true), "sweep[0].cv': expected a number, found a boolean"},
      {"sweep", with("samples", 2.5), "sweep[0].samples': expected a whole number"},
      {"variants", json::array({good, {{"value", 4.2e12}, {"cv", 0.01}}}), "variants[1].benchmark': required but missing"},
      {"variants", json::array({good, 5}), "variants[1]' must be an object, found a number"},
      {"variants", "hbm/copy/x", "variants': expected an array of benchmark cases, found a string"}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    const std::string p = profile_with(dir, "c" + std::to_string(i) + ".profile.json",
                                       [&](json& d) { ceiling(d, "hbm.copy")["detail"][k.key] = k.list; });
    const std::string field = std::string("field 'ceilings[0].detail.") + k.field;
    const std::vector<std::vector<std::string>> commands = {{"show", p, "--ceiling", "hbm.copy"},
                                                            {"show", p},
                                                            {"qualify", p},
                                                            {"compare", p, "h200"},
                                                            {"roofline", "--profile", p}};
    for (const auto& args : commands) {
      const auto r = run_cli(args);
      EXPECT_EQ(r.exit_code, 2) << args[0] << " " << i << ": " << r.out << r.err;
      EXPECT_TRUE(has(r.err, field) || has(r.err, "'ceilings[0].detail." + std::string(k.field)))
          << args[0] << " " << i << ": " << r.err;
      EXPECT_FALSE(has(r.err, "json.exception")) << r.err;
    }
  }
  // The converter's own lists, as it writes them, are read and shown; a sweep case's own "sweep" argument (the
  // bench's ".../sweep" flag, read as true) is no list, and is not one to refuse.
  const std::string p = profile_with(dir, "ok.profile.json", [&](json& d) {
    ceiling(d, "hbm.copy")["detail"]["variants"] = json::array({good, with("value", 4.1e12)[0]});
    ceiling(d, "hbm.copy")["detail"]["sweep"] = json::array({{{"benchmark", "hbm/copy/size:4096/sweep"}, {"size", 4096},
                                                              {"sweep", true}, {"value", 1.1e12}, {"unit", "B/s"},
                                                              {"cv", 0.02}}});
    ceiling(d, "hbm.read")["detail"]["sweep"] = true;
  });
  auto r = run_cli({"show", p, "--ceiling", "hbm.copy"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "hbm/copy/size:4096")) << r.out;
  EXPECT_TRUE(has(r.out, "4.10 TB/s")) << r.out;
  EXPECT_EQ(run_cli({"show", p, "--ceiling", "hbm.read"}).exit_code, 0);
}

// Options that describe nothing the command uses were silently ignored; another GPU's datasheet sat beside
// the profile's measured peak.
TEST(CliRobust, OptionsTheCommandWouldIgnoreAreRefused) {
  const std::vector<std::string> rate = {"--seq", "4096", "--tokens-per-sec", "50000", "--gpus", "8"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"mfu", "--hf-config", kLlama, "--swiglu", "--peak-tflops", "989"}, "--hf-config and --swiglu are alternatives"},
      {{"mfu", "--layers", "32", "--hidden", "4096", "--heads", "32", "--head-dim", "99999", "--peak-tflops", "989"},
       "--head-dim goes with --params"},
      {{"mbu", "--params", "8e9", "--hidden", "4096", "--tpot-ms", "10", "--gpu", "h200"},
       "--hidden would change neither"},
      {{"mbu", "--params", "8e9", "--swiglu", "--tpot-ms", "10", "--gpu", "h200"}, "--swiglu would change neither"},
      {{"mbu", "--params", "8e9", "--tpot-ms", "10", "--gpu", "h200", "--ceiling", "nonsense"},
       "--ceiling names a ceiling of a measured profile: it needs --profile"},
      {{"mfu", "--hf-config", kLlama, "--profile", kProfile, "--gpu", "b200"}, "compare like with like"},
      {{"roofline", "--profile", kProfile, "--kv-dtype", "bogus"}, "--kv-dtype requires --hf-config"},
      {{"roofline", "--profile", kProfile, "--attention", "noncausal"}, "--attention requires --hf-config"},
      {{"train-time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--achieved-tflops", "400", "--attention",
        "bogus"},
       "bogus"},
      {{"train-time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--achieved-tflops", "400", "--attention",
        "causal"},
       "--attention counts attention FLOPs"},
      {{"train-time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--achieved-tflops", "400", "--dtype",
        "fp8_e4m3"},
       "--dtype picks the peak"},
      {{"train-time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--mfu", "0.4", "--peak-tflops", "989",
        "--dtype", "bogus"},
       "bogus"},
      {{"memory", "--mode", "train", "--params", "7e9", "--attention-impl", "eager"}, "--params alone cannot"},
      {{"memory", "--mode", "train", "--params", "7e9", "--seq", "4096", "--batch", "8"}, "--params alone cannot"},
      {{"train-time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--mfu", "0.4", "--peak-tflops", "989",
        "--recompute", "full"},
       "an MFU does not count"},
      {{"memory", "--mode", "train", "--hf-config", kLlama, "--seq", "4096", "--sp"}, "--sp splits activations"},
      {{"mbu", "--hf-config", kLlama, "--context", "4096", "--tpot-ms", "10", "--profile", kProfile, "--gpu", "h100 sxm"},
       "compare like with like"}};
  for (const auto& [args, message] : cases) {
    auto a = args;
    if (a[0] == "mfu") a.insert(a.end(), rate.begin(), rate.end());
    const auto r = run_cli(a);
    EXPECT_EQ(r.exit_code, 2) << message << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, message)) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// int8 roofs count integer operations: their ridges are OP/B and mfu's int8 peak OP/s, not FLOP/B and FLOP/s.
TEST(CliRobust, Int8RoofsAndPeaksAreInOperations) {
  const std::string measured = std::string(CEILINGS_SOURCE_DIR) + "/results/nvidia-h200/h200.profile.json";
  auto r = run_cli({"roofline", "--profile", measured, "--dtype", "int8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  int int8_rows = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("gemm.int8", 0) == 0) {
      ++int8_rows;
      EXPECT_TRUE(has(line, " OP/B") && !has(line, "FLOP")) << line;
    } else if (line.rfind("hbm.read ", 0) == 0) {
      EXPECT_TRUE(has(line, " OP/B")) << line;  // the ridge against the int8 roof that classifies
    }
  EXPECT_GT(int8_rows, 0) << r.out;
  r = run_cli({"mfu", "--params", "7e9", "--layers", "32", "--heads", "32", "--head-dim", "128", "--seq", "4096",
               "--tokens-per-sec", "1e5", "--gpus", "8", "--profile", measured, "--dtype", "int8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "1.58 POP/s  gemm.int8 of")) << r.out;
}

// ---- outputs never replace inputs; output paths are checked before the work -----------------------

namespace {
// Three profiles of distinct GPUs in dir (a group fleet can compare).
void three_gpus(const std::string& dir) {
  for (int i = 0; i < 3; ++i)
    profile_with(dir, "n" + std::to_string(i) + ".profile.json",
                 [i](json& d) {
                   d["device"]["uuid"] = "GPU-robust-" + std::to_string(i);
                   if (d.contains("health")) d["health"]["device"]["uuid"] = d["device"]["uuid"];  // the same GPU's
                 });
}
}  // namespace

// `fleet DIR --write-baseline DIR/n0.profile.json` replaced a measured profile with the medians.
TEST(CliRobust, FleetBaselineNeverReplacesAProfileItReads) {
  const std::string dir = test::scratch_dir("robust_fleet_overwrite");
  three_gpus(dir);
  const std::string before = read_text_file(dir + "/n0.profile.json");
  const std::string n1_before = read_text_file(dir + "/n1.profile.json");
  auto r = run_cli({"fleet", dir, "--write-baseline", dir + "/n0.profile.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "is the same file as the input")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;  // refused before the report
  EXPECT_EQ(read_text_file(dir + "/n0.profile.json"), before);
  // Named on the command line, through another spelling of the path: the same.
  r = run_cli({"fleet", dir + "/n0.profile.json", dir + "/n1.profile.json", dir + "/n2.profile.json",
               "--write-baseline", dir + "/../robust_fleet_overwrite/n1.profile.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "is the same file as the input")) << r.err;
  EXPECT_EQ(read_text_file(dir + "/n1.profile.json"), n1_before);
  // The README's batch script rewrites its baseline in the directory it scans: a set-aside baseline may go.
  for (int run = 0; run < 2; ++run) {
    r = run_cli({"fleet", dir, "--write-baseline", dir + "/baseline.profile.json"});
    EXPECT_EQ(r.exit_code, 0) << run << r.out << r.err;
  }
  // A profile it does not read (another directory), or any other file, is never replaced.
  const std::string other = test::scratch_dir("robust_fleet_overwrite_other");
  three_gpus(other);
  const std::string kept = read_text_file(other + "/n0.profile.json");
  r = run_cli({"fleet", dir, "--write-baseline", other + "/n0.profile.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "exists and is a measured profile, not a fleet baseline")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(read_text_file(other + "/n0.profile.json"), kept);
  write(other + "/mine.json", R"({"baseline": 1, "my": "data"})");  // a "baseline" key is not a fleet baseline
  r = run_cli({"fleet", dir, "--write-baseline", other + "/mine.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(read_text_file(other + "/mine.json"), R"({"baseline": 1, "my": "data"})");
  write(other + "/notes.txt", "my notes\n");
  r = run_cli({"fleet", dir, "--write-baseline", other + "/notes.txt"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "is a file that is not a profile")) << r.err;
  EXPECT_EQ(read_text_file(other + "/notes.txt"), "my notes\n");
}

// show --ceiling printed a variant's cv of 1e308 as "inf%", one of -0.5 as "-50.00%" and a value of 1e308 B/s as
// "1.00e+290 EB/s", with exit 0, where the same numbers on a ceiling are refused. A variant or sweep point is held
// to a ceiling's checks: bad input, never shown as a measurement.
TEST(CliRobust, AVariantOrSweepPointNoCeilingCouldHaveIsBadInput) {
  const std::string dir = test::scratch_dir("robust_detail_case_values");
  auto point = [](double value, double cv) {
    return json{{"benchmark", "hbm/copy/x"}, {"value", value}, {"unit", "B/s"}, {"cv", cv}};
  };
  struct Case {
    const char* key;
    json list;
    const char* field;  // after ceilings[0].detail.
  };
  json huge_count = point(4.3e12, 0.01);
  huge_count["samples"] = std::int64_t{1} << 41;
  json other_unit = point(4.3e14, 0.01);
  other_unit["unit"] = "FLOP/s";
  const std::vector<Case> cases = {
      {"variants", json::array({point(4.36e12, 1e308)}), "variants[0].cv': 1e+308 is a spread of over 1000%"},
      {"variants", json::array({point(4.36e12, 0.01), point(4.3e12, -0.5)}), "variants[1].cv': must be >= 0"},
      {"variants", json::array({point(1e308, 0.01)}), "variants[0].value': 1e+308 B/s is above 1 PB/s"},
      {"sweep", json::array({point(0, 0.01)}), "sweep[0].value': must be above zero"},
      {"sweep", json::array({point(1e-300, 0.01)}), "sweep[0].value': 1e-300 B/s is below 1 kB/s"},
      {"sweep", json::array({other_unit}), "sweep[0].unit': 'FLOP/s' is not the unit of hbm.copy"},
      {"sweep", json::array({huge_count}), "sweep[0].samples': 2199023255552 samples"}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    const std::string p = profile_with(dir, "v" + std::to_string(i) + ".profile.json",
                                       [&](json& d) { ceiling(d, "hbm.copy")["detail"][k.key] = k.list; });
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"show", p, "--ceiling", "hbm.copy"}, {"show", p}, {"qualify", p}, {"compare", p}}) {
      const auto r = run_cli(args);
      EXPECT_EQ(r.exit_code, 2) << args[0] << " " << i << ": " << r.out << r.err;
      EXPECT_TRUE(has(r.err, std::string("field 'ceilings[0].detail.") + k.field)) << args[0] << " " << i << ": " << r.err;
      EXPECT_FALSE(has(r.out, "inf%") || has(r.out, "-50.00%") || has(r.out, "EB/s")) << r.out;
    }
  }
}

// A file at --write-baseline whose baseline.source was not text (a number) made the check of it throw the JSON
// library's type error: exit 3 and no field named. It is a file that is not a fleet baseline: refused, kept.
TEST(CliRobust, FleetBaselineWithAMistypedSourceIsRefusedAndKept) {
  const std::string dir = test::scratch_dir("robust_fleet_baseline_source");
  three_gpus(dir);
  const std::string other = test::scratch_dir("robust_fleet_baseline_source_other");
  for (const std::string text : {R"({"schema":"x","baseline":{"source":5}})",
                                 R"({"schema":"x","baseline":{"source":"my notes"}})"}) {
    write(other + "/wb.json", text);
    const auto r = run_cli({"fleet", dir, "--write-baseline", other + "/wb.json"});
    EXPECT_EQ(r.exit_code, 2) << text << r.out << r.err;
    EXPECT_TRUE(has(r.err, "field 'baseline.source' is")) << r.err;
    EXPECT_TRUE(has(r.err, "not a fleet baseline: it was left as it was")) << r.err;
    EXPECT_FALSE(has(r.err, "json.exception")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;  // refused before the report
    EXPECT_EQ(read_text_file(other + "/wb.json"), text);
  }
}

// Three healthy GPUs and a corrupt profile: exit 0 said the fleet passed with a node nobody judged.
TEST(CliRobust, FleetWithAnUnreadableProfileIsIncomplete) {
  const std::string dir = test::scratch_dir("robust_fleet_corrupt");
  three_gpus(dir);
  EXPECT_EQ(run_cli({"fleet", dir}).exit_code, 0);
  write(dir + "/broken.profile.json", "{\"schema\":");
  for (const char* format : {"table", "json"}) {
    const auto r = run_cli({"fleet", dir, "--format", format});
    EXPECT_EQ(r.exit_code, 3) << format << r.out << r.err;
    EXPECT_TRUE(has(r.out + r.err, "broken.profile.json")) << r.out << r.err;
  }
}

// A bad --write-baseline or --baseline-group was found only after the whole report had printed.
TEST(CliRobust, FleetOutputOptionsAreCheckedBeforeTheReport) {
  const std::string dir = test::scratch_dir("robust_fleet_early");
  three_gpus(dir);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--write-baseline", dir + "/no/such/dir/b.json"}, "does not exist"},
      {{"--write-baseline", dir}, "is a directory"},
      {{"--write-baseline", dir + "/b.json", "--baseline-group", "9"}, "there are only 1 group(s)"},
      {{"--baseline-group", "1"}, "--write-baseline"}};  // a group for no baseline: meaningless
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args{"fleet", dir};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << extra[1] << r.err;
    EXPECT_TRUE(has(r.err, message)) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/b.json"));
  // A group of fewer than three: its "median" is one GPU's values (the CLI probe wrote a baseline of one). That
  // is the fleet's, not the command line's: the report is printed (a batch job's `> fleet.json` keeps it), then
  // exit 2 with nothing written.
  const std::string two = test::scratch_dir("robust_fleet_two");
  for (int i = 0; i < 2; ++i)
    profile_with(two, "n" + std::to_string(i) + ".profile.json",
                 [i](json& d) {
                   d["device"]["uuid"] = "GPU-two-" + std::to_string(i);
                   if (d.contains("health")) d["health"]["device"]["uuid"] = d["device"]["uuid"];  // the same GPU's
                 });
  const auto r = run_cli({"fleet", two, "--write-baseline", two + "/b.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "has 2 profile(s); a baseline is the median of at least 3 GPUs")) << r.err;
  EXPECT_TRUE(has(r.err, "qualify --baseline")) << r.err;
  const std::string plain = run_cli({"fleet", two}).out;  // the same report, but for the exit code its first line says
  EXPECT_EQ(r.out.substr(r.out.find('\n')), plain.substr(plain.find('\n')));
  EXPECT_TRUE(has(r.out.substr(0, r.out.find('\n')), "(exit 2: --write-baseline wrote nothing")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(two + "/b.json"));
}

// `roofline --profile a.json --svg a.json` turned the profile into a picture.
TEST(CliRobust, RooflineSvgNeverReplacesAnInput) {
  const std::string dir = test::scratch_dir("robust_roofline_overwrite");
  const std::string p = profile_with(dir, "a.profile.json", [](json&) {});
  std::filesystem::copy_file(kLlama, dir + "/config.json");
  const std::string before = read_text_file(p);
  auto r = run_cli({"roofline", "--profile", p, "--svg", p});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "--svg '" + p + "' is the same file as the input")) << r.err;
  EXPECT_EQ(read_text_file(p), before);
  r = run_cli({"roofline", "--profile", p, "--hf-config", dir + "/config.json", "--context", "4096", "--svg",
               dir + "/config.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(read_text_file(dir + "/config.json"), "hidden_size"));
  r = run_cli({"roofline", "--profile", p, "--svg", dir + "/missing/roof.svg"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(run_cli({"roofline", "--profile", p, "--svg", dir + "/roof.svg"}).exit_code, 0);
  EXPECT_EQ(run_cli({"roofline", "--profile", p, "--svg", dir + "/roof.svg"}).exit_code, 0);  // its own picture
  // Any other file already there is no picture to replace: another measured profile was turned into an SVG.
  std::filesystem::copy_file(p, dir + "/other.profile.json");
  std::ofstream(dir + "/notes.txt") << "kept";
  for (const std::string kept : {dir + "/other.profile.json", dir + "/notes.txt"}) {
    const std::string was = read_text_file(kept);
    r = run_cli({"roofline", "--profile", p, "--svg", kept});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(has(r.err, "--svg '" + kept + "' exists and is not an SVG picture")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(read_text_file(kept), was);
  }
}

// `measure --out /dev/stdout > log` renamed the profile over the log through /proc and wrote its raw JSON into
// /dev (review 22 #5): nothing under /dev (but /dev/shm) or /proc is written, named or linked to.
TEST(CliRobust, AStreamsNameIsNoOutputFile) {
  const std::string dir = test::scratch_dir("robust_stream_out");
  const std::string p = profile_with(dir, "a.profile.json", [](json&) {});
  std::filesystem::create_symlink("/dev/stdout", dir + "/to-stdout.svg");
  std::filesystem::create_symlink("to-stdout.svg", dir + "/two-hops.svg");  // a chain of links (review 24 #3)
  std::filesystem::create_symlink("/proc/self/fd", dir + "/fds");           // a directory linked into /proc
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", "/dev/stdout"},
        {"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", "/proc/self/fd/1"},
        {"roofline", "--profile", p, "--svg", "/dev/fd/1"},
        {"roofline", "--profile", p, "--svg", dir + "/to-stdout.svg"},
        {"roofline", "--profile", p, "--svg", dir + "/two-hops.svg"},
        {"roofline", "--profile", p, "--svg", dir + "/fds/1"},
        {"fleet", p, "--write-baseline", "/dev/stdout"}}) {
    const std::string log = dir + "/log";
    std::vector<std::string> argv{"/bin/sh", "-c", "exec \"$0\" \"$@\" > '" + log + "'", CEILINGS_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto run = ceilings::test::run_program(argv, {}, 30);
    EXPECT_EQ(run.exit_code, 2) << args[0] << " " << args.back() << "\n" << run.err;
    EXPECT_TRUE(has(run.err, "is a device's or a stream's name under /dev or /proc: give a file's name")) << run.err;
    EXPECT_EQ(read_text_file(log), "") << "the log the shell redirected into is untouched";
  }
  EXPECT_FALSE(std::filesystem::exists("/dev/stdout.bench.json"));
  // /dev/shm is a file system for files: written, named directly or through a link.
  if (std::filesystem::is_directory("/dev/shm") && ::access("/dev/shm", W_OK) == 0) {
    const std::string shm = "/dev/shm/ceilings-test-" + std::to_string(::getpid()) + ".svg";
    EXPECT_EQ(run_cli({"roofline", "--profile", p, "--svg", shm}).exit_code, 0);
    EXPECT_TRUE(has(read_text_file(shm), "<svg"));
    std::filesystem::create_symlink(shm, dir + "/to-shm.svg");
    EXPECT_EQ(run_cli({"roofline", "--profile", p, "--svg", dir + "/to-shm.svg"}).exit_code, 0);
    EXPECT_TRUE(std::filesystem::is_symlink(dir + "/to-shm.svg"));
    std::filesystem::remove(shm);
  }
}

// `measure --out` naming ceilings-bench itself would replace the program with a profile.
TEST(CliRobust, MeasureOutNeverReplacesTheBench) {
  const std::string dir = test::scratch_dir("robust_measure_overwrite");
  const std::string bench = dir + "/bench";
  std::filesystem::copy_file(CEILINGS_STANDIN_BENCH, bench);
  std::filesystem::permissions(bench, std::filesystem::perms::owner_all);
  const auto size = std::filesystem::file_size(bench);
  const auto r = run_cli({"measure", "--bench", bench, "--out", bench}, {{"CEILINGS_STANDIN_DEVICES", "1"}}, 60);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "--out '" + bench + "' is the same file as the input")) << r.err;
  EXPECT_EQ(std::filesystem::file_size(bench), size);
  // Nor anything else that is not a profile of an earlier run (nor, beside it, not a raw JSON of one).
  std::ofstream(dir + "/notes.txt") << "kept";
  auto kept = run_cli({"measure", "--bench", bench, "--out", dir + "/notes.txt"}, {}, 60);
  EXPECT_EQ(kept.exit_code, 2) << kept.err;
  EXPECT_TRUE(has(kept.err, "--out '" + dir + "/notes.txt' exists and is not a ceilings profile")) << kept.err;
  EXPECT_EQ(read_text_file(dir + "/notes.txt"), "kept");
  std::ofstream(dir + "/a.bench.json") << "[1, 2]";
  kept = run_cli({"measure", "--bench", bench, "--out", dir + "/a.profile.json"}, {}, 60);
  EXPECT_EQ(kept.exit_code, 2) << kept.err;
  EXPECT_TRUE(has(kept.err, "is not a ceilings-bench JSON output")) << kept.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.profile.json"));
  // An empty file holds nothing to lose (mktemp's): replaced. So is an earlier run's pair.
  std::ofstream(dir + "/empty.bench.json").close();
  std::ofstream(dir + "/empty.profile.json").close();
  EXPECT_EQ(run_cli({"measure", "--bench", bench, "--out", dir + "/empty.profile.json"}, {}, 60).exit_code, 0);
  EXPECT_TRUE(ceilings::is_bench_json_text(read_text_file(dir + "/empty.bench.json")));
  std::filesystem::remove(dir + "/a.bench.json");
  ASSERT_EQ(run_cli({"measure", "--bench", bench, "--out", dir + "/a.profile.json"}, {}, 60).exit_code, 0);
  EXPECT_EQ(run_cli({"measure", "--bench", bench, "--out", dir + "/a.profile.json"}, {}, 60).exit_code, 0);
}

// ---- values accepted that should not have been ----------------------------------------------------

// `mfu --global-batch 2.5` (or 1e-320) was taken as a number of sequences.
TEST(CliRobust, GlobalBatchIsAWholeNumberOfSequences) {
  for (const char* batch : {"2.5", "1e-320", "0"}) {
    const auto r = run_cli({"mfu", "--hf-config", kLlama, "--seq", "4096", "--global-batch", batch, "--iter-time", "1",
                            "--gpus", "8", "--peak-tflops", "989"});
    EXPECT_EQ(r.exit_code, 2) << batch << r.out << r.err;
    EXPECT_TRUE(has(r.err, "--global-batch must be a positive whole number")) << r.err;
  }
}

// `memory --mode infer --pp 4 --zero 3` printed the inference estimate as if the training options did not exist,
// and `--mode train --kv-dtype fp8` the training one.
TEST(CliRobust, MemoryRefusesTheOtherModesOptions) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--mode", "infer", "--context", "4096", "--pp", "4"}, "--pp is for --mode train"},
      {{"--mode", "infer", "--context", "4096", "--zero", "3"}, "--zero is for --mode train"},
      {{"--mode", "infer", "--context", "4096", "--sp"}, "--sp is for --mode train"},
      {{"--mode", "infer", "--context", "4096", "--recompute", "full"}, "--recompute is for --mode train"},
      {{"--mode", "infer", "--context", "4096", "--seq", "4096"}, "--seq is for --mode train"},
      {{"--mode", "train", "--seq", "4096", "--kv-dtype", "fp8"}, "--kv-dtype is for --mode infer"},
      {{"--mode", "train", "--seq", "4096", "--weight-dtype", "fp8"}, "--weight-dtype is for --mode infer"},
      {{"--mode", "train", "--seq", "4096", "--context", "4096"}, "--context is for --mode infer"}};
  for (const auto& [args, message] : cases) {
    std::vector<std::string> a = {"memory", "--hf-config", kLlama};
    a.insert(a.end(), args.begin(), args.end());
    const auto r = run_cli(a);
    EXPECT_EQ(r.exit_code, 2) << message << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, message)) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // tp x pp wrapped in int (46341^2 < 0): a negative memory that "fit".
  for (const auto& [tp, pp] : std::vector<std::pair<std::string, std::string>>{{"46341", "46341"}, {"65536", "65536"}}) {
    const auto r = run_cli({"memory", "--mode", "train", "--params", "7e9", "--tp", tp, "--pp", pp, "--gpu", "h200"});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "more than any job runs on")) << r.err;
  }
  // Each mode still takes its own.
  EXPECT_EQ(run_cli({"memory", "--hf-config", kLlama, "--mode", "train", "--seq", "4096", "--zero", "3", "--dp", "8"})
                .exit_code,
            0);
  EXPECT_EQ(run_cli({"memory", "--hf-config", kLlama, "--mode", "infer", "--context", "4096", "--kv-dtype", "fp8"})
                .exit_code,
            0);
}

// `health --json --format csv` printed JSON and dropped the csv without a word.
TEST(CliRobust, HealthJsonAndFormatAreAlternatives) {
  const auto r = run_cli({"health", "--json", "--format", "csv"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "--json excludes --format")) << r.err;
}

// `qualify P --format json > report.json` on a full disk exited 0 (a pass) with an empty report.
TEST(CliRobust, OutputThatCannotBeWrittenIsNotAPass) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"qualify", kProfile, "--format", "json"}, {"show", kProfile}, {"specs", "H200"}}) {
    std::string command = "exec '" + std::string(CEILINGS_CLI) + "'";
    for (const std::string& a : args) command += " '" + a + "'";
    const auto r = ceilings::test::run_program({"/bin/sh", "-c", command + " > /dev/full"});
    EXPECT_EQ(r.exit_code, 3) << args[0] << "\n" << r.err;
    EXPECT_TRUE(has(r.err, "could not write the output to standard output")) << r.err;
    // With the reason the write gave (it said "a write failed").
    EXPECT_TRUE(has(r.err, "(" + std::string(std::strerror(ENOSPC)) + ")")) << r.err;
  }
}

// `--tp 010` was 8 (CLI11 reads a leading 0 as octal), `--tp 0x2` 2, `--gpus 0x1p3` 8, while `--gpus 010` was
// 10. Numbers are decimal everywhere; a whole number's leading zeros are read as decimal.
TEST(CliRobust, NumbersAreDecimalOnly) {
  const std::vector<std::string> memory = {"memory", "--hf-config", kLlama, "--mode", "infer", "--context", "4096",
                                           "--json", "--tp"};
  for (const std::string tp : {"0x2", "0b10", "0o10", " 8", "8 ", "1_0", "1'0", "8.0", "1e1"}) {
    auto a = memory;
    a.push_back(tp);
    const auto r = run_cli(a);
    EXPECT_EQ(r.exit_code, 2) << "--tp '" << tp << "'\n" << r.out;
    EXPECT_TRUE(has(r.err, "--tp: must be a whole number in decimal digits, not '" + tp + "'")) << r.err;
  }
  auto a = memory;
  a.push_back("010");
  auto r = run_cli(a);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(has(r.err, "--tp 10 does not divide")) << r.err;  // ten, not octal eight
  a.back() = "008";
  r = run_cli(a);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).at("inputs").at("tp"), 8);
  const std::vector<std::string> mfu = {"mfu", "--hf-config", kLlama, "--seq", "4096", "--tokens-per-sec", "1000",
                                        "--peak-tflops", "900", "--gpus"};
  for (const std::string gpus : {"0x10", "0x1p3", " 8", "1,0", "1e", "1e+", "."}) {
    auto m = mfu;
    m.push_back(gpus);
    r = run_cli(m);
    EXPECT_EQ(r.exit_code, 2) << "--gpus '" << gpus << "'\n" << r.out;
    EXPECT_TRUE(has(r.err, "--gpus: must be a")) << r.err;
  }
  for (const std::string gpus : {"8", "8.", "8.0", ".8e1", "+8", "0.8E+1"}) {
    auto m = mfu;
    m.push_back(gpus);
    r = run_cli(m);
    EXPECT_EQ(r.exit_code, 0) << "--gpus '" << gpus << "'\n" << r.err;
  }
}

// An output directory the user cannot write in: `measure` ran every family and then failed with "ceilings-bench
// failed (exit code 1)"; `fleet --write-baseline` printed its report and only then exited 2. Now each is
// refused before anything runs. Run as an unprivileged user (root may write anywhere).
TEST(CliRobust, AnOutputDirectoryThatCannotBeWrittenIsRefusedFirst) {
  const std::string dir = test::scratch_dir("robust_read_only_dir");
  const std::string ro = dir + "/ro";
  std::filesystem::create_directory(ro);
  ::chmod(dir.c_str(), 0755);
  ::chmod(ro.c_str(), 0555);
  std::string why;
  const auto prefix = test::as_plain_user({CEILINGS_CLI, CEILINGS_STANDIN_BENCH, CEILINGS_FIXTURES, ro}, why);
  if (!prefix) GTEST_SKIP() << why;
  const std::vector<std::string>& as_user = *prefix;
  const auto run_as = [&](std::vector<std::string> args) {
    args.insert(args.begin(), CEILINGS_CLI);
    args.insert(args.begin(), as_user.begin(), as_user.end());
    return ceilings::test::run_program(args, {{"CUDA_VISIBLE_DEVICES", ""}}, 60);
  };
  const std::string profiles = std::string(CEILINGS_FIXTURES) + "/profiles";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", ro + "/n.profile.json"},
       "cannot write in the directory of --out"},
      {{"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", ro},
       "cannot write in the directory of --out-dir (the profile) '" + ro + "/"},
      {{"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", ro}, "cannot write in --out-dir"},
      {{"fleet", profiles, "--write-baseline", ro + "/b.profile.json"},
       "cannot write in the directory of --write-baseline"},
      {{"roofline", "--profile", kProfile, "--svg", ro + "/r.svg"}, "cannot write in the directory of --svg"}};
  for (const auto& [args, message] : cases) {
    const auto r = run_as(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args.back() << "\n" << r.err;
    EXPECT_TRUE(has(r.err, message) && has(r.err, "Permission denied")) << r.err;
    EXPECT_EQ(r.out, "") << args[0];  // nothing measured or reported first
  }
  EXPECT_TRUE(std::filesystem::is_empty(ro));
}

// An --out-dir that is a file said its profile's directory "does not exist" (review 22 #4); --all-gpus said
// "cannot create". Both now say what it is, and leave the file as it was.
TEST(CliRobust, AnOutDirThatIsAFileIsNamedSo) {
  const std::string dir = test::scratch_dir("robust_out_dir_file");
  const std::string file = dir + "/file";
  { std::ofstream(file) << "mine\n"; }
  for (const bool all : {false, true}) for (const std::string& named : {file, file + "/"}) {
    std::vector<std::string> args{"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", named};
    if (all) args.push_back("--all-gpus");
    const auto r = run_cli(args, {}, 30);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(has(r.err, "--out-dir '" + file + "' is not a directory")) << r.err;
  }
  EXPECT_EQ(read_text_file(file), "mine\n");
}

// `--out F --out-dir D` wrote F and ignored D.
TEST(CliRobust, MeasureOutAndOutDirAreAlternatives) {
  const auto r = run_cli({"measure", "--out", "x.profile.json", "--out-dir", "/tmp"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "--out excludes --out-dir") || has(r.err, "--out-dir excludes --out")) << r.err;
}

// A default name holds the GPU's CUDA index, which CUDA_VISIBLE_DEVICES renumbers: every one-GPU Slurm job is
// "gpu0". A second job's run into the same directory replaced the first GPU's profile with no word (review 28).
// It is refused (exit 2) and the earlier profile kept; the same GPU again, or a path the user names, replaces it.
TEST(CliRobust, ADefaultNameNeverReplacesAnotherGpusProfile) {
  const std::string dir = ceilings::test::scratch_dir("measure_other_gpu");
  const auto first = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  std::string profile;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().string().size() > 13 && e.path().string().find(".profile.json") != std::string::npos)
      profile = e.path().string();
  ASSERT_FALSE(profile.empty());
  const std::string before = ceilings::read_text_file(profile);
  const auto other = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir},
                             {{"CEILINGS_STANDIN_NODE", "7"}, {"CUDA_VISIBLE_DEVICES", "3"}});
  EXPECT_EQ(other.exit_code, 2) << other.out << other.err;
  EXPECT_TRUE(has(other.err, "holds the profile of another GPU (GPU-57a4d100-0000-0000-0000-000000000000")) << other.err;
  EXPECT_TRUE(has(other.err, "GPU-57a4d100-0000-0000-0007-000000000000")) << other.err;
  EXPECT_TRUE(has(other.err, "CUDA_VISIBLE_DEVICES=3 numbers the GPUs a job sees from 0")) << other.err;
  EXPECT_EQ(ceilings::read_text_file(profile), before);
  const auto all = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir},
                           {{"CEILINGS_STANDIN_NODE", "7"}});
  EXPECT_EQ(all.exit_code, 2) << all.out << all.err;
  EXPECT_TRUE(has(all.err, "GPU 0's profile")) << all.err;
  EXPECT_TRUE(has(all.err, "the GPUs were renumbered or replaced")) << all.err;
  EXPECT_TRUE(has(all.err, "give this run its own --out-dir, or remove the earlier profiles")) << all.err;
  EXPECT_FALSE(has(all.err, "--out,")) << all.err;  // --out is no option beside --all-gpus
  EXPECT_EQ(ceilings::read_text_file(profile), before);
  EXPECT_EQ(run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir}).exit_code, 0);
  const auto named = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", profile},
                             {{"CEILINGS_STANDIN_NODE", "7"}});
  EXPECT_EQ(named.exit_code, 0) << named.out << named.err;
  EXPECT_TRUE(has(ceilings::read_text_file(profile), "GPU-57a4d100-0000-0000-0007-000000000000"));
}

// `specs <100000 characters>` echoed all of them in its error message (so did compare, show --ceiling, ...).
TEST(CliRobust, AnArgumentLongerThanAPathIsRefused) {
  const auto r = run_cli({"specs", std::string(100000, 'a')});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "argument 2 is 100000 bytes long")) << r.err.substr(0, 300);
  EXPECT_LT(r.err.size(), 400u);
  EXPECT_EQ(run_cli({"show", std::string(4096, 'a')}).exit_code, 2);  // a long name that is no file: still exit 2
}
