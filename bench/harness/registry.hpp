// Benchmark families register themselves here (one file each, see bench/hbm.cu): their flags, and
// a function that registers their Google Benchmark cases once the device and options are known.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace ceilings::nvml {
class Device;
}

namespace ceilings::bench {

// Options every family shares (set from --ceilings_* flags; see bench/main.cpp).
struct Options {
  int device = 0;
  bool quick = false;          // --ceilings_quick: fewer variants and samples, meant to take under a minute in all
  bool tma = false;            // --ceilings_tma: the TMA bulk-copy variants too (not yet validated on a GPU)
  int min_samples = 10;        // timed samples per configuration, at least
  int max_samples = 100;       // and at most
  double max_seconds = 1.0;    // time budget for the samples of one configuration
  double target_cv = 0.005;    // stop early once the samples' cv is below this
  double min_sample_seconds = 2e-3;  // a sample repeats the work until it lasts this long
};

// What a family may know about the device when it registers its cases.
struct Context {
  int device = 0;
  cudaDeviceProp prop{};
  std::size_t l2_bytes = 0;
  std::size_t free_bytes = 0, total_bytes = 0;
  Options options;
  std::shared_ptr<nvml::Device> nvml;  // null when NVML is unavailable
  // Confidential computing on (NVML; false where NVML cannot tell): the GPU reaches no host memory directly, the
  // driver moves every host<->device copy through encrypted bounce buffers.
  bool confidential_computing = false;
  // Its NVLink-encryption mode (multi-GPU Blackwell): peer copies are encrypted too, another measurement of the
  // NVLink family.
  bool nvlink_encrypted = false;
};

using OptionsHook = void (*)(CLI::App&);
using RegisterHook = void (*)(const Context&);

// Adds a family; `order` sorts families (lower runs first), ties by name.
bool add_family(const char* name, int order, RegisterHook register_cases, OptionsHook add_options = nullptr);

void add_all_options(CLI::App& app);
void register_all(const Context& context);

// The context of this run (valid once main has set it; benchmarks read it at run time).
const Context& context();
void set_context(Context context);

}  // namespace ceilings::bench

#define CEILINGS_BENCH_FAMILY(name, order, register_cases, add_options) \
  static const bool ceilings_family_registered_##name =                 \
      ::ceilings::bench::add_family(#name, order, register_cases, add_options)
