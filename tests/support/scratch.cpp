// Scratch directories under the build tree for tests that write files (CPU and GPU suites).
#include <filesystem>

#include "cli_runner.hpp"

namespace ceilings::test {

std::string scratch_dir(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(CEILINGS_TEST_TMP) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

}  // namespace ceilings::test
