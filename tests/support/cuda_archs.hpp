// Whether a build's CUDA code runs on a GPU, told from the architectures it was built for (CMake's
// CMAKE_CUDA_ARCHITECTURES) and the GPU's compute capability, without a CUDA context to ask the driver: the GPU
// tests decide with it whether to run (a context of their own would keep another process, ceilings-bench, off a
// GPU in EXCLUSIVE_PROCESS compute mode).
#pragma once
#include <cctype>
#include <sstream>
#include <string>

namespace ceilings::test {

// `archs`: "90", "80;90" or "80,90", "90-real" (machine code only), "90-virtual" (PTX only), "90a" (machine code and PTX for
// 9.0 alone), "100f" (for the 10.x family). Machine code for X.Y runs on X.Z with Z >= Y; PTX for X.Y on any GPU
// of compute capability X.Y or newer (the driver compiles it). An entry CMake resolves itself ("all", "native") or
// one that does not parse says nothing either way: it counts as running.
inline bool cuda_archs_run_on(const std::string& archs, int major, int minor) {
  const int gpu = major * 10 + minor;
  std::string separated = archs;
  for (char& c : separated)
    if (c == ',') c = ';';
  std::stringstream list(separated);
  for (std::string entry; std::getline(list, entry, ';');) {
    if (entry.empty()) continue;
    std::size_t i = 0;
    while (i < entry.size() && std::isdigit(static_cast<unsigned char>(entry[i]))) ++i;
    if (i == 0 || i > 4) return true;  // "all", "all-major", "native", or something else: not ours to judge
    const int arch = std::stoi(entry.substr(0, i));
    std::string rest = entry.substr(i);
    char variant = 0;  // 'a': this compute capability alone; 'f': its family (the same major)
    if (!rest.empty() && (rest[0] == 'a' || rest[0] == 'f')) {
      variant = rest[0];
      rest = rest.substr(1);
    }
    const bool sass = rest.empty() || rest == "-real", ptx = rest.empty() || rest == "-virtual";
    if (!sass && !ptx) return true;
    const bool same_major = arch / 10 == major;
    if (variant == 'a') {
      if (arch == gpu) return true;
    } else if (variant == 'f' || sass) {
      if (same_major && gpu >= arch) return true;
    }
    if (ptx && variant == 0 && gpu >= arch) return true;
  }
  return false;
}

}  // namespace ceilings::test
