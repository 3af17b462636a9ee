// Runs the `ceilings` CLI (or any program) for end-to-end tests: exit code, stdout and stderr.
#pragma once
#include <unistd.h>

#include <optional>
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

// The argument list's start that runs a program as a user file permissions apply to: nothing for a user that is
// not root; for root, setpriv as nobody (root opens a chmod 000 directory anyway). nullopt, with `why` said, where
// that cannot be done: root without setpriv, or one of `reachable` out of nobody's reach (a checkout under /root,
// or under another directory closed to others: the tests' inputs and the CLI itself must be reached).
inline std::optional<std::vector<std::string>> as_plain_user(const std::vector<std::string>& reachable,
                                                             std::string& why) {
  if (::geteuid() != 0) return std::vector<std::string>{};
  const std::vector<std::string> prefix{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  if (::access(prefix[0].c_str(), X_OK) != 0) {
    why = "root, and no setpriv to run as a user that permissions apply to";
    return std::nullopt;
  }
  for (const std::string& path : reachable) {
    std::vector<std::string> probe = prefix;
    probe.insert(probe.end(), {"/usr/bin/test", "-e", path});
    if (run_program(probe, {}, 30).exit_code != 0) {
      why = "nobody (uid 65534) cannot reach '" + path + "': a directory above it is closed to other users";
      return std::nullopt;
    }
  }
  return prefix;
}

// A fresh scratch directory under the build tree for one test.
std::string scratch_dir(const std::string& name);

}  // namespace ceilings::test
