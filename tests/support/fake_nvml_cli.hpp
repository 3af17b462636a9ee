// Runs `ceilings health` against the scripted fake NVML library, for end-to-end health tests.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "ceilings/json_fields.hpp"
#include "ceilings/kernel_log.hpp"
#include "cli_runner.hpp"

namespace ceilings::test {

// `ceilings health ARGS...` with the fake NVML answering `script`; its "kernel_log" key, where given, is the kernel
// log `health` reads (never the machine's own: an empty one otherwise). The script lives in a scratch directory
// named `prefix`, the test's name and a count: ctest runs each test in its own process, several at once.
inline CliResult health_with_fake_nvml(const json& script, std::vector<std::string> args, const std::string& prefix) {
  static int n = 0;
  const std::string dir =
      scratch_dir(prefix + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + std::to_string(n++));
  json nvml = script;
  std::ofstream(dir + "/kernel.log") << nvml.value("kernel_log", kQuietKernelLog);
  nvml.erase("kernel_log");
  std::ofstream(dir + "/script.json") << nvml.dump();
  args.insert(args.begin(), "health");
  return run_cli(args, {{"CEILINGS_NVML_LIBRARY", CEILINGS_FAKE_NVML},
                        {"CEILINGS_FAKE_NVML_SCRIPT", dir + "/script.json"},
                        {"CEILINGS_KERNEL_LOG", dir + "/kernel.log"}});
}

}  // namespace ceilings::test
