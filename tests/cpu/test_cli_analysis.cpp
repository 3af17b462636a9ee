// Every analysis subcommand of issue 5 is registered, documents itself, and rejects unknown options with exit 2.
#include <gtest/gtest.h>

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

TEST(AnalysisCli, HelpExits0AndUnknownOptionExits2) {
  for (const char* s : kSubcommands) {
    const auto help = run_cli({s, "--help"});
    EXPECT_EQ(help.exit_code, 0) << s << help.err;
    EXPECT_NE(help.out.find("--"), std::string::npos) << s;
    EXPECT_EQ(run_cli({s, "--no-such-option", "1"}).exit_code, 2) << s;
  }
}

TEST(AnalysisCli, ErrorsGoToStderrWithTheSubcommandName) {
  const auto r = run_cli({"mbu", "--params", "7e9", "--tpot-ms", "-3", "--peak-bw-gbps", "1000"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("ceilings mbu: error: --tpot-ms"), std::string::npos) << r.err;
}
