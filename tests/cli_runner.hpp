// Runs the `ceilings` CLI (or any program) for end-to-end tests: exit code, stdout and stderr.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "ceilings/subprocess.hpp"

namespace ceilings::test {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

inline CliResult run_program(std::vector<std::string> argv,
                             std::vector<std::pair<std::string, std::string>> env = {}, double timeout_s = 120) {
  CliResult r;
  ProcessSpec spec{std::move(argv), std::move(env), timeout_s, 2};
  const ProcessResult p = run_process(
      spec, [&](const std::string& l) { r.out += l + "\n"; }, [&](const std::string& l) { r.err += l + "\n"; });
  r.exit_code = p.exit_code;
  if (!p.ok() && p.exit_code < 0) r.err += "[" + p.describe() + "]\n";
  return r;
}

#ifdef CEILINGS_CLI
// `ceilings ARGS...`
inline CliResult run_cli(std::vector<std::string> args, std::vector<std::pair<std::string, std::string>> env = {},
                         double timeout_s = 120) {
  args.insert(args.begin(), CEILINGS_CLI);
  return run_program(std::move(args), std::move(env), timeout_s);
}
#endif

// A fresh scratch directory under the build tree for one test.
std::string scratch_dir(const std::string& name);

}  // namespace ceilings::test
