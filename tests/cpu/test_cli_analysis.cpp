// Every analysis subcommand of issue 5 is registered, documents itself, and rejects unknown options with exit 2.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cli_runner.hpp"

using ceilings::test::run_cli;

namespace {
const char* kSubcommands[] = {"specs", "model", "mfu", "mbu", "train-time", "memory", "roofline", "compare"};
}

TEST(AnalysisCli, ListedInTopLevelHelp) {
  const auto r = run_cli({"--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : kSubcommands) EXPECT_NE(r.out.find(std::string("  ") + s), std::string::npos) << s;
}

// Scripts branch on the exit code: every --help says what each means (it was in the README alone).
TEST(AnalysisCli, EveryHelpNamesTheExitCodes) {
  std::vector<std::string> all = {"measure", "show", "qualify", "fleet", "health", "self-test"};
  for (const char* s : kSubcommands) all.push_back(s);
  for (const std::string& s : all) {
    const auto help = run_cli({s, "--help"});
    EXPECT_EQ(help.exit_code, 0) << s;
    EXPECT_NE(help.out.find("Exit codes: 0 ok / pass, 1 a verdict failed, 2 usage or bad input, 3 incomplete"),
              std::string::npos)
        << s << help.out;
  }
  EXPECT_NE(run_cli({"--help"}).out.find("Exit codes: 0 ok / pass"), std::string::npos);
}

TEST(AnalysisCli, HelpExits0AndUnknownOptionExits2) {
  for (const char* s : kSubcommands) {
    const auto help = run_cli({s, "--help"});
    EXPECT_EQ(help.exit_code, 0) << s << help.err;
    // Its own usage line and an option of its own, described (not the top-level help).
    EXPECT_NE(help.out.find(std::string("Usage: ceilings ") + s + " "), std::string::npos) << s << help.out;
    static const std::map<std::string, std::string> own = {
        {"specs", "--format"},  {"model", "--hf-config"}, {"mfu", "--tokens-per-sec"}, {"mbu", "--tpot-ms"},
        {"train-time", "--tokens"}, {"memory", "--mode"}, {"roofline", "--profile"},  {"compare", "--format"}};
    ASSERT_TRUE(own.count(s)) << s;
    EXPECT_NE(help.out.find("  " + own.at(s) + " "), std::string::npos) << s << help.out;
    // With the subcommand's required options given, so the refusal is for the unknown one.
    std::vector<std::string> args{s};
    const std::string name = s;
    if (name == "model") args.insert(args.end(), {"--hf-config", "x.json"});
    if (name == "memory") args.insert(args.end(), {"--mode", "train"});
    if (name == "roofline") args.insert(args.end(), {"--profile", "x.json"});
    args.insert(args.end(), {"--no-such-option", "1"});
    const auto bad = run_cli(args);
    EXPECT_EQ(bad.exit_code, 2) << s;
    EXPECT_NE(bad.err.find("--no-such-option"), std::string::npos) << s << ": " << bad.err;
  }
}

TEST(AnalysisCli, ErrorsGoToStderrWithTheSubcommandName) {
  const auto r = run_cli({"mbu", "--params", "7e9", "--tpot-ms", "-3", "--peak-bw-gbps", "1000"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("ceilings mbu: error: --tpot-ms"), std::string::npos) << r.err;
}
