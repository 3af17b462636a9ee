// Runs the Google Benchmark cases a test registered, in this process: the JSON result to `out`, the
// checkpoint (bench/harness/checkpoint.hpp) to `checkpoint`, the console output swallowed. For the tests
// of the reporting path; clears the registered cases afterwards.
#pragma once
#include <benchmark/benchmark.h>

#include <sstream>
#include <string>
#include <vector>

#include "harness/checkpoint.hpp"

namespace ceilings::test {

struct BenchmarkRun {
  std::size_t ran = 0;         // cases run
  std::string checkpoint_problem;  // the checkpoint reporter's, empty when every checkpoint was written
};

inline BenchmarkRun run_registered_benchmarks(const std::string& out, const std::string& checkpoint) {
  std::string argv0 = "ceilings_test", out_flag = "--benchmark_out=" + out;
  std::vector<char*> argv{argv0.data(), out_flag.data(), nullptr};
  int argc = 2;
  benchmark::Initialize(&argc, argv.data());
  std::ostringstream console;
  benchmark::ConsoleReporter display(benchmark::ConsoleReporter::OO_None);
  display.SetOutputStream(&console);
  display.SetErrorStream(&console);
  ceilings::bench::CheckpointReporter file_reporter(checkpoint);
  BenchmarkRun r;
  r.ran = benchmark::RunSpecifiedBenchmarks(&display, &file_reporter);
  r.checkpoint_problem = file_reporter.problem();
  benchmark::ClearRegisteredBenchmarks();
  return r;
}

}  // namespace ceilings::test
