// ceilings-bench: the Google Benchmark binary that measures every ceiling on one GPU.
// Its own flags (--ceilings_*) select the device and the sampling budgets. Google Benchmark's flags are accepted,
// but each case runs one iteration (configure()), so only those that pick cases or shape output matter.
// Exit codes: 0 ran, 2 bad flags, 3 no usable GPU (no driver, no device, index out of range).
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "ceilings/bench_json.hpp"
#include "ceilings/cli_checks.hpp"
#include "ceilings/kernels/gemm_fill.cuh"
#include "ceilings/version.hpp"
#include "harness/checkpoint.hpp"
#include "harness/device_info.hpp"
#include "harness/host_memory.hpp"
#include "harness/nvml.hpp"
#include "harness/registry.hpp"

#ifndef CEILINGS_VERSION
#define CEILINGS_VERSION "unknown"
#endif

namespace {

constexpr int kExitBadFlags = 2;
constexpr int kExitNoGpu = 3;

int no_gpu(const std::string& why) {
  std::fprintf(stderr, "ceilings-bench: no usable GPU: %s\n", why.c_str());
  return kExitNoGpu;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ceilings::bench;
  // Device indices in PCI bus order, as nvidia-smi and NVML number GPUs (CUDA's default puts the fastest
  // first), so "GPU 3" in a peer matrix or --ceilings_device 3 is the board nvidia-smi calls 3 where every GPU
  // is visible (under CUDA_VISIBLE_DEVICES, as Slurm sets it, it is the 4th visible one). A user's own
  // CUDA_DEVICE_ORDER stands. Before any CUDA call: the runtime reads it once.
  setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);
  Options options;
  CLI::App app("ceilings-bench: measured GPU ceilings (Google Benchmark flags are accepted too)", "ceilings-bench");
  app.allow_extras();
  app.set_help_flag("--ceilings_help", "Print the ceilings-bench flags (--help prints Google Benchmark's)");
  app.add_option("--ceilings_device", options.device, "CUDA device index (default 0)")
      ->check(ceilings::cli::non_negative_number());
  app.add_flag("--ceilings_quick", options.quick, "Fewer variants and samples: a full pass of about 40 s on an H200 (min samples at most 5, max "
               "samples at most 20, max seconds at most 0.25, whatever those flags say)");
  app.add_flag("--ceilings_tma", options.tma,
               "Also time the TMA unit's bulk copies (hbm.copy's engine:bulk variants, pcie.h2d_sm's engine:bulk "
               "candidate; compute capability 9.0+, full pass only). Opt-in until they have run on a GPU: a fault "
               "in one would end its family's process (they run last in it)");
  // Two at least: a cv (the spread every number carries, and the stopping rule's test) needs two samples.
  CLI::Option* min_samples_opt = app.add_option("--ceilings_min_samples", options.min_samples,
                 "Timed samples per configuration, at least (2 or more; default 10, at most 5 with --ceilings_quick)")
      ->check(ceilings::cli::number_in(2, 100000));
  app.add_option("--ceilings_max_samples", options.max_samples,
                 "Timed samples per configuration, at most (2 or more; default 100, at most 20 with --ceilings_quick)")
      ->check(ceilings::cli::number_in(2, 100000));
  app.add_option("--ceilings_max_seconds", options.max_seconds,
                 "Time budget per configuration, seconds (default 1, at most 0.25 with --ceilings_quick; 0: stop at "
                 "the min samples)")
      ->check(ceilings::cli::number_in(0.0, 3600.0));
  app.add_option("--ceilings_target_cv", options.target_cv, "Stop sampling once the cv is below this (default 0.005; 0: never early, sample to the "
                 "max samples or the time budget)")
      ->check(ceilings::cli::number_in(0.0, 1.0));
  std::string checkpoint;
  app.add_option("--ceilings_checkpoint", checkpoint,
                 "Rewrite this file after every case: the finished cases as a complete JSON document (needs "
                 "--benchmark_out=FILE); a run stopped early keeps them");
  bool list_devices = false;
  app.add_flag("--ceilings_list_devices", list_devices,
               "Print one JSON line per visible device (index, name, uuid, pci_bus_id) and exit");
  add_all_options(app);
  // As the `ceilings` subcommands: no option takes an empty value, no floating-point one nan or inf.
  ceilings::cli::harden_options(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ceilings-bench: %s\n", e.what());
    return kExitBadFlags;
  }
  // --ceilings_quick lowers the defaults first, so `--ceilings_quick --ceilings_max_samples=5` is a
  // quick run of five samples, not a conflict with the full run's minimum of 10.
  if (options.quick) {
    options.min_samples = std::min(options.min_samples, 5);
    options.max_samples = std::min(options.max_samples, 20);
    options.max_seconds = std::min(options.max_seconds, 0.25);
  }
  // A maximum below the default minimum, which the user did not set, lowers it (review 98:
  // `--ceilings_quick --ceilings_max_samples=3` was refused for the quick minimum of 5).
  if (min_samples_opt->count() == 0) options.min_samples = std::min(options.min_samples, options.max_samples);
  if (options.max_samples < options.min_samples) {
    std::fprintf(stderr, "ceilings-bench: --ceilings_max_samples (%d) is below --ceilings_min_samples (%d)%s\n",
                 options.max_samples, options.min_samples, options.quick ? " (after --ceilings_quick)" : "");
    return kExitBadFlags;
  }

  // Google Benchmark gets argv[0] plus whatever CLI11 did not consume.
  std::vector<std::string> rest = app.remaining();
  std::vector<char*> gb_argv{argv[0]};
  for (auto& s : rest) gb_argv.push_back(s.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  gb_argv.push_back(nullptr);
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data())) return kExitBadFlags;
  if (!checkpoint.empty()) {
    if (const std::string why = checkpoint_flags_problem(rest); !why.empty()) {
      std::fprintf(stderr, "ceilings-bench: %s\n", why.c_str());
      return kExitBadFlags;
    }
  }

  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    const char* hint = rc == cudaErrorInsufficientDriver ? " (no NVIDIA driver, or one older than this CUDA runtime)"
                       : rc == cudaErrorNoDevice         ? " (CUDA_VISIBLE_DEVICES may hide every GPU)"
                                                         : "";
    return no_gpu(std::string(cudaGetErrorName(rc)) + ": " + cudaGetErrorString(rc) + hint);
  }
  if (count == 0) return no_gpu("the CUDA runtime sees no device");
  if (list_devices) {  // `ceilings measure --all-gpus` discovers the GPUs this way (analysis/ has no CUDA)
    // A MIG instance's UUID as nvidia-smi -L and the profile write it ("MIG-..."), where NVML says the board is
    // split (without NVML, as CUDA gives it).
    std::string why_not;
    const std::shared_ptr<ceilings::nvml::Library> lib = ceilings::nvml::Library::open(&why_not);
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp prop{};
      char bus[32] = {};
      if (cudaGetDeviceProperties(&prop, i) != cudaSuccess || cudaDeviceGetPCIBusId(bus, sizeof bus, i) != cudaSuccess)
        return no_gpu("cannot read the properties of device " + std::to_string(i));
      const auto* bytes = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
      std::string uuid = format_uuid(bytes);
      if (lib)
        if (auto dev = lib->device_by_pci_bus_id(bus); dev.ok())
          uuid = device_uuids(bytes, &dev.value).uuid;  // as device_fingerprint names it
      std::printf("%s\n", nlohmann::json{{"index", i}, {"name", prop.name}, {"uuid", uuid}, {"pci_bus_id", bus}}
                              .dump()
                              .c_str());
    }
    return 0;
  }
  if (options.device >= count)
    return no_gpu("device index " + std::to_string(options.device) + " is out of range (" + std::to_string(count) +
                  " device" + (count == 1 ? "" : "s") + ")");
  // The context is made from the GPU's own NUMA node, and the process stays there: the driver allocates its
  // staging buffers for pageable copies and starts its threads as the context is made, on the node the
  // creating thread runs on and prefers. Each host<->device case pins again (the same CPUs) and says so.
  // Only where the launcher lets the process use every one of the GPU's CPUs: one that bound it elsewhere (or to
  // a CPU or two of the node) keeps its binding and its memory policy for the whole run.
  std::optional<NumaPlacement> placement;
  try {
    const GpuLocality where = gpu_locality(options.device);
    const std::vector<int> allowed = ceilings::current_thread_cpus();
    if (where.numa_node >= 0 && !where.local_cpus.empty() &&
        std::all_of(where.local_cpus.begin(), where.local_cpus.end(),
                    [&](int c) { return std::binary_search(allowed.begin(), allowed.end(), c); }))
      placement.emplace(options.device);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ceilings-bench: the process is not placed on GPU %d's NUMA node: %s\n", options.device,
                 e.what());
  }
  if (cudaSetDevice(options.device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess)
    return no_gpu("cannot create a context on device " + std::to_string(options.device));
  // A binary built for other GPUs (CUDAARCHS) would fail every case, one launch at a time: said once, here.
  if (const cudaError_t image = ceilings::kernels::kernel_image_status(); image != cudaSuccess) {
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, options.device);
    const std::string cc = std::to_string(prop.major) + std::to_string(prop.minor);
    const std::string which = "this binary has no code device " + std::to_string(options.device) +
                              " (compute capability " + std::to_string(prop.major) + "." + std::to_string(prop.minor) +
                              ") can run (" + cudaGetErrorName(image) + ")";
    if (prop.major < 8) return no_gpu(which + ": ceilings needs compute capability 8.0 or newer");
    return no_gpu(which + ": rebuild with CUDAARCHS=" + cc + " (a list builds for several GPUs: CUDAARCHS=\"80;90\")");
  }
  // Threads the driver started before the placement (as cudaGetDeviceCount initialised it) join the node's CPUs;
  // those it starts with the context inherit them. (A memory policy is each thread's own: theirs stay.)
  if (placement && placement->pinned() && !ceilings::pin_other_threads(placement->cpus()))
    std::fprintf(stderr, "ceilings-bench: cannot list this process's threads: only the measuring ones are on GPU "
                         "%d's NUMA node's CPUs\n", options.device);

  Context ctx;
  ctx.device = options.device;
  ctx.options = options;
  // A failure here is the device's, with its status: a free size left at 0 would skip every HBM case as "only 0
  // MiB fit" (review 35).
  if (const cudaError_t props = cudaGetDeviceProperties(&ctx.prop, options.device); props != cudaSuccess)
    return no_gpu(std::string("cudaGetDeviceProperties: ") + cudaGetErrorName(props) + ": " + cudaGetErrorString(props));
  ctx.l2_bytes = static_cast<std::size_t>(ctx.prop.l2CacheSize);
  if (const cudaError_t mem = cudaMemGetInfo(&ctx.free_bytes, &ctx.total_bytes); mem != cudaSuccess)
    return no_gpu(std::string("cudaMemGetInfo: ") + cudaGetErrorName(mem) + ": " + cudaGetErrorString(mem));

  char bus[32] = {};
  std::string why;
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, options.device) != cudaSuccess) {
    why = std::string("CUDA gave no PCI bus id for device ") + std::to_string(options.device) + ": " +
          cudaGetErrorString(cudaGetLastError());
    bus[0] = '\0';
  }
  std::shared_ptr<ceilings::nvml::Library> nvml_lib = ceilings::nvml::Library::open(&why);
  if (nvml_lib && bus[0] == '\0') {
    // NVML's indices need not be CUDA's: without the bus id there is no telling which GPU to read.
  } else if (nvml_lib) {
    auto dev = nvml_lib->device_by_pci_bus_id(bus);
    if (dev.ok())
      ctx.nvml = std::make_shared<ceilings::nvml::Device>(dev.value);
    else
      why = "NVML has no device at " + std::string(bus) + ": " + nvml_lib->error_string(dev.code);
  }
  if (!ctx.nvml) std::fprintf(stderr, "ceilings-bench: telemetry unavailable (%s)\n", why.c_str());
  if (nvml_lib)
    if (const auto cc = nvml_lib->confidential_computing_settings().get()) {
      ctx.confidential_computing = cc->on;
      ctx.nvlink_encrypted = cc->nvlink_encrypted;
    }

  try {
    benchmark::AddCustomContext(ceilings::kContextDevice,
                                device_fingerprint(options.device, nvml_lib.get(), ctx.nvml.get()).dump());
    benchmark::AddCustomContext(ceilings::kContextHost, host_facts(bus).dump());
  } catch (const std::exception& e) {
    return no_gpu(std::string("cannot read the device fingerprint: ") + e.what());
  }
  benchmark::AddCustomContext(ceilings::kContextVersion, CEILINGS_VERSION);
  benchmark::AddCustomContext(ceilings::kContextGit, ceilings::git_describe());
  benchmark::AddCustomContext(ceilings::kContextMeasurementCode, ceilings::measurement_code());
  benchmark::AddCustomContext(ceilings::kContextOptions, nlohmann::json{{"quick", options.quick},
                                                                 {"tma", options.tma},
                                                                 {"min_samples", options.min_samples},
                                                                 {"max_samples", options.max_samples},
                                                                 {"max_seconds", options.max_seconds},
                                                                 {"target_cv", options.target_cv}}
                                                      .dump());
  set_context(ctx);
  register_all(ctx);
  if (checkpoint.empty()) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    CheckpointReporter file_reporter(checkpoint);
    benchmark::RunSpecifiedBenchmarks(nullptr, &file_reporter);
    if (!file_reporter.problem().empty())
      std::fprintf(stderr, "ceilings-bench: checkpoint %s: %s\n", checkpoint.c_str(), file_reporter.problem().c_str());
  }
  benchmark::Shutdown();
  return 0;
}
