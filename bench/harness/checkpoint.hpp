// Keeps the finished cases of a ceilings-bench run on disk while it runs, so a run stopped by a timeout,
// Ctrl-C or a crash still leaves every case that finished (`ceilings measure` turns them into a profile).
#pragma once
#include <benchmark/benchmark.h>

#include <sstream>
#include <string>
#include <vector>

namespace ceilings::bench {

// The --benchmark_out file reporter (Google Benchmark's JSON, unchanged) that also rewrites `path`
// atomically after the context and after every reported case: a complete JSON document in the same
// format holding the cases reported so far. The --benchmark_out file itself is flushed as it goes.
class CheckpointReporter : public benchmark::JSONReporter {
 public:
  explicit CheckpointReporter(std::string path);
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;

  // Why the last checkpoint could not be written (empty when it was); the run goes on without it.
  const std::string& problem() const { return problem_; }

 private:
  void write();

  std::string path_;
  std::ostringstream text_;        // what a JSONReporter has printed so far: the document minus its end
  benchmark::JSONReporter shadow_;  // prints into text_
  std::string problem_;
};

// The flags ceilings-bench needs beside --ceilings_checkpoint (a --benchmark_out file in JSON), checked
// on the arguments Google Benchmark will see. Returns what is wrong, or an empty string.
std::string checkpoint_flags_problem(const std::vector<std::string>& benchmark_args);

}  // namespace ceilings::bench
