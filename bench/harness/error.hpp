// The one error type every check in ceilings-bench throws (CUDA runtime, cuBLAS, NVML,
// verification): it carries the failing expression, the status text, file and line.
#pragma once
#include <stdexcept>
#include <string>

namespace ceilings {

class CheckError : public std::runtime_error {
 public:
  CheckError(const std::string& what_failed, const std::string& status, const char* file, int line)
      : std::runtime_error(what_failed + " failed: " + status + " (" + file + ":" + std::to_string(line) + ")") {}
};

}  // namespace ceilings
