// The datasheet table (analysis/data/gpus.json, embedded at build time): vendor peaks per GPU,
// the numbers measured ceilings are compared with.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ceilings/json_fields.hpp"

namespace ceilings {

struct GpuSpec {
  std::string name;                // canonical, e.g. "H200"
  std::vector<std::string> match;  // other names it goes by, CUDA's device name among them
  std::string source;              // where the numbers come from
  std::string architecture, compute_capability;
  int sm_count = 0;
  double boost_clock_hz = 0, memory_bytes = 0, memory_bandwidth = 0, tdp_w = 0;
  // The SM clock the dense tensor-core figures imply where it is not the boost clock (Hopper's tf32, bf16, fp16,
  // fp8 and int8 peaks are quoted at 1.83 GHz on the SXM parts, its fp64 and fp32 at 1.98); 0 = boost_clock_hz.
  double tensor_clock_hz = 0;
  bool tdp_whole_module = false;  // tdp_scope "module": tdp_w covers more than the GPU (GH200: CPU and memory)
  double tdp_min_w = 0;  // the lowest of a TDP range the datasheet prints as configurable (H100 PCIe 300-350 W); 0: none
  std::optional<int> pcie_gen, pcie_width;
  std::optional<double> nvlink_bandwidth;  // total, both directions, B/s
  // A Grace superchip's GPU reaches its host over NVLink-C2C (total, both directions, B/s), not PCIe: its
  // host<->device ceilings are judged against this.
  std::optional<double> nvlink_c2c_bandwidth;
  std::map<std::string, double> dense;    // data type -> dense peak FLOP/s (OP/s for int8)
  json raw;                               // the entry as written (fields this version does not model)
};

// The embedded table, parsed once.
const std::vector<GpuSpec>& datasheet();
// Parses a datasheet document (the embedded one, or a test's).
std::vector<GpuSpec> parse_datasheet(const json& document);

// Normalised for loose matching: lower case, no spaces/dashes/underscores, "nvidia" dropped.
std::string normalize_gpu_name(const std::string& name);
// The entry whose name or match list equals `name` loosely; nullptr when none does.
const GpuSpec* find_gpu(const std::string& name);
// Where a MIG instance's suffix starts in a device name, as CUDA and NVML name instances ("<GPU> MIG <n>g.<m>gb", also
// "<n>c.<n>g.<m>gb", "+me" and "-me" profiles: " MIG " with a "g." after it); npos in a whole GPU's name.
std::size_t mig_instance_suffix(const std::string& name);
// The entry of the board a device is on: find_gpu of its name without a MIG instance's suffix ("NVIDIA GH200 480GB
// MIG 3g.48gb" -> GH200). For the board's own facts only (its host link, PCIe, TDP), which its instances share; never
// for compute or memory figures, which are the whole GPU's (review 97: a GH200 instance's C2C copies were judged
// as 555% of PCIe).
const GpuSpec* find_gpu_board(const std::string& name);

// Theoretical PCIe bandwidth per direction after line encoding, B/s (Gen1-2: 8b/10b, Gen3+: 128b/130b).
double pcie_link_bandwidth(int gen, int width);
// Transfers per second of one lane of PCIe generation `gen` (2.5e9 for Gen1 ... 128e9 for Gen7); 0 outside 1-7.
double pcie_lane_transfers_per_second(int gen);

// The roof of an FP64 GEMM: the FP64 tensor-core figure; on a GPU without FP64 tensor cores (Volta, Ada, all but
// compute capability 8.0, 9.0 and 10.0) its FP64 units' figure; nullopt for a GPU with them whose entry prints no
// FP64 tensor-core figure (an A800 40GB Active), whose DMMA GEMMs run past the FP64 units'.
std::optional<double> fp64_gemm_peak(const GpuSpec& spec);

// The datasheet value of a named ceiling for this GPU ("hbm.copy" -> memory bandwidth,
// "gemm.bf16" -> dense bf16), or nullopt when the datasheet has no comparable figure.
std::optional<double> datasheet_value(const GpuSpec& spec, const std::string& ceiling_name);
// The same with the ceiling's detail: a pair's NVLink ceiling (nvlink.p2p_uni, nvlink.p2p_bidir) gets the
// share of the GPU's NVLink bandwidth that the links joining its pairs carry, nvlink_pair_links (the fewest
// any measured pair has) over nvlink_gpu_links (the most any of its GPUs has), where the detail holds both
// (ceilings-bench's peer family records them where NVML names every link's far end): a 4-way bridge gives a
// pair a third of a GPU's links, an NVSwitch all of them. Other ceilings as above.
std::optional<double> datasheet_value(const GpuSpec& spec, const std::string& ceiling_name, const json& detail);

}  // namespace ceilings
