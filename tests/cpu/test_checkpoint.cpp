// The checkpoint reporter of ceilings-bench, driven by a real Google Benchmark run in this process: after
// each case the checkpoint file is a complete JSON document with exactly the cases finished so far.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "ceilings/bench_json.hpp"
#include "support/run_benchmarks.hpp"

namespace {

using nlohmann::json;

std::string g_checkpoint;
std::vector<std::string> g_seen_by_second;  // what the checkpoint held while the second case ran
bool g_second_saw_valid_json = false;

std::vector<std::string> names_in(const json& doc) {
  std::vector<std::string> names;
  for (const auto& b : doc.at("benchmarks")) names.push_back(b.at("name").get<std::string>());
  return names;
}

json read(const std::string& path) { return ceilings::read_benchmark_json_file(path); }

void first_case(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(state.iterations());
  state.counters["samples"] = 7;
  state.counters["ratio"] = std::nan("");  // written as a bare NaN token: the checkpoint must still be kept
}

void second_case(benchmark::State& state) {
  for (auto _ : state) {
    std::ifstream in(g_checkpoint);
    std::stringstream text;
    text << in.rdbuf();
    try {
      g_seen_by_second = names_in(ceilings::parse_benchmark_json_text(text.str(), "checkpoint"));
      g_second_saw_valid_json = true;
    } catch (const ceilings::InputError&) {
      g_second_saw_valid_json = false;
    }
  }
}

void failing_case(benchmark::State& state) {
  for (auto _ : state) state.SkipWithError("unsupported: a case that cannot run here");
}

// Runs the three probe cases with `checkpoint` as the checkpoint path; returns the reporter's problem.
std::string run_probes(const std::string& out, const std::string& checkpoint) {
  g_checkpoint = checkpoint;
  g_seen_by_second.clear();
  g_second_saw_valid_json = false;
  benchmark::ClearRegisteredBenchmarks();
  benchmark::RegisterBenchmark("ckpt_probe/first", first_case)->Iterations(1);
  benchmark::RegisterBenchmark("ckpt_probe/second", second_case)->Iterations(1);
  benchmark::RegisterBenchmark("ckpt_probe/failing", failing_case)->Iterations(1);
  const auto run = ceilings::test::run_registered_benchmarks(out, checkpoint);
  EXPECT_EQ(run.ran, 3u);
  return run.checkpoint_problem;
}

TEST(CheckpointReporter, HoldsExactlyTheFinishedCasesAsValidJson) {
  const std::string dir = ceilings::test::scratch_dir("checkpoint_valid");
  const std::string out = dir + "/out.json", checkpoint = dir + "/run.checkpoint.json";
  EXPECT_EQ(run_probes(out, checkpoint), "");

  // While the second case ran, the checkpoint held the first one and nothing else.
  EXPECT_TRUE(g_second_saw_valid_json);
  EXPECT_EQ(g_seen_by_second, std::vector<std::string>{"ckpt_probe/first/iterations:1"});

  // At the end it holds every case, the same document as the --benchmark_out file.
  const json final_checkpoint = read(checkpoint), complete = read(out);
  EXPECT_EQ(names_in(final_checkpoint), (std::vector<std::string>{"ckpt_probe/first/iterations:1", "ckpt_probe/second/iterations:1",
                                                                  "ckpt_probe/failing/iterations:1"}));
  EXPECT_EQ(final_checkpoint.at("benchmarks"), complete.at("benchmarks"));
  EXPECT_EQ(final_checkpoint.at("context").at("executable"), complete.at("context").at("executable"));
  EXPECT_EQ(final_checkpoint.at("benchmarks").at(0).at("samples").get<double>(), 7);
  EXPECT_TRUE(final_checkpoint.at("benchmarks").at(0).at("ratio").is_null());
  EXPECT_EQ(final_checkpoint.at("benchmarks").at(2).at("error_message"), "unsupported: a case that cannot run here");
}

TEST(CheckpointReporter, AnUnwritableCheckpointIsReportedAndTheRunGoesOn) {
  const std::string dir = ceilings::test::scratch_dir("checkpoint_unwritable");
  const std::string out = dir + "/out.json";
  const std::string problem = run_probes(out, dir + "/missing-dir/run.checkpoint.json");
  EXPECT_NE(problem.find("missing-dir"), std::string::npos) << problem;
  EXPECT_EQ(names_in(read(out)).size(), 3u);  // the complete result is untouched
}

TEST(CheckpointReporter, NeedsAJsonBenchmarkOutFile) {
  using ceilings::bench::checkpoint_flags_problem;
  EXPECT_EQ(checkpoint_flags_problem({"--benchmark_out=x.json"}), "");
  EXPECT_EQ(checkpoint_flags_problem({"--benchmark_out=x.json", "--benchmark_out_format=json"}), "");
  EXPECT_NE(checkpoint_flags_problem({}).find("needs --benchmark_out=FILE"), std::string::npos);
  EXPECT_NE(checkpoint_flags_problem({"--benchmark_out="}).find("needs --benchmark_out=FILE"), std::string::npos);
  EXPECT_NE(checkpoint_flags_problem({"--benchmark_out=x.csv", "--benchmark_out_format=csv"}).find("got 'csv'"),
            std::string::npos);
}

}  // namespace
