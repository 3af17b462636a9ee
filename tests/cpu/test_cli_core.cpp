// End-to-end: `ceilings show` and `ceilings measure` as a user runs them, exit codes included.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ceilings/json_fields.hpp"
#include "cli_runner.hpp"

using namespace ceilings;
using ceilings::test::run_cli;

namespace {
const std::string kFixture = std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json";
// Hide every GPU, so `measure` behaves the same here and on the GPU machine.
const std::vector<std::pair<std::string, std::string>> kNoGpu{{"CUDA_VISIBLE_DEVICES", ""}};
}  // namespace

TEST(CliShow, PrintsTheCeilingsTable) {
  const auto r = run_cli({"show", kFixture});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(r.out.find("hbm.copy"), std::string::npos);
  EXPECT_NE(r.out.find("4.36 TB/s"), std::string::npos);
  EXPECT_NE(r.out.find("90.8%"), std::string::npos);  // 4.36 / 4.8 of the datasheet
  EXPECT_NE(r.out.find("1.98 GHz"), std::string::npos);
  EXPECT_NE(r.out.find("2.10 us"), std::string::npos);  // latency.launch
  EXPECT_NE(r.out.find("single GPU: no peer"), std::string::npos);
}

TEST(CliShow, EveryFormat) {
  auto r = run_cli({"show", kFixture, "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("ceiling,value,datasheet,% datasheet,cv,samples,SM clock,throttled\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("gemm.bf16,800 TFLOP/s,989 TFLOP/s,80.9%,0.60%,20,1.75 GHz,no"), std::string::npos) << r.out;
  r = run_cli({"show", kFixture, "--format", "markdown"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("| hbm.copy | 4.36 TB/s |"), std::string::npos) << r.out;
  r = run_cli({"show", kFixture, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["ceilings"][0]["name"], "hbm.copy");
  EXPECT_DOUBLE_EQ(j["ceilings"][0]["value"].get<double>(), 4.36e12);
  EXPECT_NEAR(j["ceilings"][0]["fraction_of_datasheet"].get<double>(), 4.36 / 4.8, 1e-12);
}

TEST(CliShow, BadInputIsExitCode2WithTheReason) {
  const std::string dir = test::scratch_dir("cli_show_bad");
  std::ofstream(dir + "/truncated.json") << "{\"schema\": \"ceilings.profile/1\", \"ceil";
  std::ofstream(dir + "/empty.json") << "";
  json doc = read_json_file(kFixture);
  doc["ceilings"][2]["value"] = -1;
  std::ofstream(dir + "/negative.json") << doc.dump();

  auto r = run_cli({"show", dir + "/truncated.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
  r = run_cli({"show", dir + "/empty.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("empty"), std::string::npos) << r.err;
  r = run_cli({"show", dir + "/negative.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ceilings[2].value"), std::string::npos) << r.err;
  r = run_cli({"show", dir + "/missing.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos) << r.err;
  r = run_cli({"show", kFixture, "--format", "xml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown format 'xml'"), std::string::npos) << r.err;
  r = run_cli({"show"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_cli({"no-such-subcommand"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(CliMeasure, NoGpuIsExitCode3AndWritesNothing) {
#ifndef CEILINGS_BENCH_BIN
  GTEST_SKIP() << "built without CUDA: no ceilings-bench";
#else
  const std::string dir = test::scratch_dir("cli_measure_nogpu");
  const auto r = run_cli({"measure", "--quick", "--out", dir + "/p.json"}, kNoGpu);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no usable GPU"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "measure left a file behind without a GPU";
#endif
}

TEST(CliMeasure, DeviceIndexOutOfRangeIsExitCode3) {
#ifndef CEILINGS_BENCH_BIN
  GTEST_SKIP() << "built without CUDA: no ceilings-bench";
#else
  const std::string dir = test::scratch_dir("cli_measure_range");
  const auto r = run_cli({"measure", "--device", "97", "--out", dir + "/p.json"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(r.err.find("out of range") != std::string::npos || r.err.find("no usable GPU") != std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
#endif
}

TEST(CliMeasure, BadArgumentsAreExitCode2) {
  auto r = run_cli({"measure", "--device", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_cli({"measure", "--out", "/nonexistent-dir/p.json"}, kNoGpu);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
}

TEST(CliMeasure, MissingBenchIsIncomplete) {
  const auto r = run_cli({"measure", "--bench", "/nonexistent/ceilings-bench"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("ceilings-bench is missing"), std::string::npos) << r.err;
}

TEST(CliBench, RejectsUnknownFlagsWithExitCode2) {
#ifndef CEILINGS_BENCH_BIN
  GTEST_SKIP() << "built without CUDA: no ceilings-bench";
#else
  auto r = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_device=abc"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_min_samples=10", "--ceilings_max_samples=5"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = test::run_program({CEILINGS_BENCH_BIN, "--benchmark_nonsense=1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  // A checkpoint needs the JSON out file it mirrors (checked before the GPU is looked for).
  r = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_checkpoint=x.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("needs --benchmark_out=FILE"), std::string::npos) << r.err;
  r = test::run_program(
      {CEILINGS_BENCH_BIN, "--ceilings_checkpoint=x.json", "--benchmark_out=y.csv", "--benchmark_out_format=csv"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
#endif
}
