// The checkpointing file reporter: the shadow reporter prints the same JSON into a string, which is
// closed off, checked and written to the checkpoint path after each case.
#include "harness/checkpoint.hpp"

#include "ceilings/bench_json.hpp"
#include "ceilings/error.hpp"
#include "ceilings/profile.hpp"

namespace ceilings::bench {

CheckpointReporter::CheckpointReporter(std::string path) : path_(std::move(path)) {
  shadow_.SetOutputStream(&text_);
  shadow_.SetErrorStream(&text_);
}

bool CheckpointReporter::ReportContext(const Context& context) {
  const bool go = JSONReporter::ReportContext(context);
  GetOutputStream().flush();
  shadow_.ReportContext(context);
  write();
  return go;
}

void CheckpointReporter::ReportRuns(const std::vector<Run>& runs) {
  JSONReporter::ReportRuns(runs);
  GetOutputStream().flush();
  shadow_.ReportRuns(runs);
  write();
}

void CheckpointReporter::write() {
  // A JSONReporter ends its document with the benchmarks array and the object closed; the text so far
  // always stops after a complete context or case, so closing both gives the document as it stands.
  const std::string document = text_.str() + "\n  ]\n}\n";
  try {
    parse_benchmark_json_text(document, "checkpoint");  // what `ceilings measure` will read it with
  } catch (const Error&) {
    problem_ = "the reporter's output could not be closed into valid JSON; no checkpoint written";
    return;
  }
  try {
    write_file_atomic(path_, document);
    problem_.clear();
  } catch (const Error& e) {
    problem_ = e.what();
  }
}

std::string checkpoint_flags_problem(const std::vector<std::string>& args) {
  bool out = false;
  for (const std::string& a : args) {
    if (a.rfind("--benchmark_out=", 0) == 0 && a.size() > 16) out = true;
    if (a.rfind("--benchmark_out_format=", 0) == 0 && a != "--benchmark_out_format=json")
      return "--ceilings_checkpoint writes JSON: --benchmark_out_format must be json (got '" + a.substr(23) + "')";
  }
  return out ? "" : "--ceilings_checkpoint needs --benchmark_out=FILE (the complete result goes there)";
}

}  // namespace ceilings::bench
