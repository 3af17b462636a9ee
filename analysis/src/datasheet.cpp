// The embedded datasheet table and the mapping from ceiling names to datasheet figures.
#include "ceilings/datasheet.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

namespace ceilings {
namespace embedded {
std::string_view gpus_json();
}

std::vector<GpuSpec> parse_datasheet(const json& document) {
  const Fields doc(document, "datasheet");
  std::vector<GpuSpec> out;
  const json& gpus = doc.array("gpus");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const Fields g(gpus[i], "gpus[" + std::to_string(i) + "]");
    GpuSpec s;
    s.raw = gpus[i];
    s.name = g.string("name");
    if (g.has("match"))
      for (const auto& m : g.array("match")) {
        if (!m.is_string()) g.fail("match", "expected strings");
        s.match.push_back(m.get<std::string>());
      }
    s.source = g.string("source");
    s.architecture = g.optional_string("architecture").value_or("");
    s.compute_capability = g.optional_string("compute_capability").value_or("");
    s.sm_count = static_cast<int>(g.optional_integer("sm_count").value_or(0));
    s.boost_clock_hz = g.optional_number("boost_clock_hz").value_or(0);
    s.tensor_clock_hz = g.optional_number("tensor_clock_hz").value_or(0);
    if (s.tensor_clock_hz < 0 || (s.boost_clock_hz > 0 && s.tensor_clock_hz > s.boost_clock_hz))
      g.fail("tensor_clock_hz", "expected a clock above zero and at most boost_clock_hz");
    s.memory_bytes = g.number("memory_bytes");
    s.memory_bandwidth = g.number("memory_bandwidth");
    s.tdp_w = g.optional_number("tdp_w").value_or(0);
    const std::string scope = g.optional_string("tdp_scope").value_or("gpu");
    if (scope != "gpu" && scope != "module") g.fail("tdp_scope", "expected \"gpu\" or \"module\"");
    s.tdp_whole_module = scope == "module";
    s.tdp_min_w = g.optional_number("tdp_min_w").value_or(0);
    if (s.tdp_min_w < 0 || (s.tdp_min_w > 0 && !(s.tdp_w > 0 && s.tdp_min_w <= s.tdp_w)))
      g.fail("tdp_min_w", "expected the lowest TDP of a configurable range, above zero and at most tdp_w");
    if (auto p = g.optional_object("pcie")) {
      s.pcie_gen = static_cast<int>(p->integer("gen", 1));
      s.pcie_width = static_cast<int>(p->integer("width", 1));
    }
    s.nvlink_bandwidth = g.optional_number("nvlink_bandwidth");
    s.nvlink_c2c_bandwidth = g.optional_number("nvlink_c2c_bandwidth");
    const Fields dense = g.object("dense");
    for (const auto& [k, v] : dense.raw().items()) s.dense[k] = dense.number(k);
    out.push_back(std::move(s));
  }
  return out;
}

const std::vector<GpuSpec>& datasheet() {
  static const std::vector<GpuSpec> table =
      parse_datasheet(parse_json_text(std::string(embedded::gpus_json()), "embedded datasheet"));
  return table;
}

std::string normalize_gpu_name(const std::string& name) {
  std::string s;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c))) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.rfind("nvidia", 0) == 0) s = s.substr(6);
  return s;
}

const GpuSpec* find_gpu(const std::string& name) {
  const std::string want = normalize_gpu_name(name);
  for (const GpuSpec& s : datasheet()) {
    if (normalize_gpu_name(s.name) == want) return &s;
    for (const std::string& m : s.match)
      if (normalize_gpu_name(m) == want) return &s;
  }
  return nullptr;
}

std::size_t mig_instance_suffix(const std::string& name) {
  const std::size_t at = name.find(" MIG ");
  return at != std::string::npos && name.find("g.", at) != std::string::npos ? at : std::string::npos;
}

const GpuSpec* find_gpu_board(const std::string& name) { return find_gpu(name.substr(0, mig_instance_suffix(name))); }

double pcie_lane_transfers_per_second(int gen) {
  static const double gts[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0};  // GT/s per lane
  return gen < 1 || gen > 7 ? 0.0 : gts[gen] * 1e9;
}

double pcie_link_bandwidth(int gen, int width) {
  if (gen < 1 || gen > 7 || width < 1) return 0.0;
  // The line code's overhead only, as for 8b/10b and 128b/130b: Gen6 and 7 send 256-byte FLITs of which 8 bytes of
  // CRC and 6 of FEC carry no packets; the 6 bytes of link-layer packets (DLLPs) a FLIT holds are counted as Gen5's
  // DLLPs are, inside the rate (review 98 #6: 236/256 would count them off for Gen6 alone).
  const double encoding = gen <= 2 ? 8.0 / 10.0 : gen <= 5 ? 128.0 / 130.0 : 242.0 / 256.0;
  return pcie_lane_transfers_per_second(gen) * encoding / 8.0 * width;
}

std::optional<double> fp64_gemm_peak(const GpuSpec& spec) {
  if (const auto it = spec.dense.find("fp64_tensor"); it != spec.dense.end()) return it->second;
  // cuBLAS runs FP64 GEMMs on the FP64 tensor cores (DMMA) where the GPU has them: the data-centre parts of
  // compute capability 8.0 (A100, A800, A30), 9.0 (H100, H200) and 10.0 (B200), at up to twice the FP64 units'
  // figure. An entry of one of those without an FP64 tensor-core figure (the A800 40GB Active's sheet prints only
  // the units' 9.7 TFLOPS) gets no roof rather than one a healthy GPU passes by 100%. Every other GPU (Volta,
  // Ada, GeForce and workstation Ampere, unknown) runs them on its FP64 units: their figure is the roof.
  const std::string& cc = spec.compute_capability;
  if (cc == "8.0" || cc == "9.0" || cc == "10.0") return std::nullopt;
  const auto it = spec.dense.find("fp64");
  if (it == spec.dense.end()) return std::nullopt;
  return it->second;
}

std::optional<double> datasheet_value(const GpuSpec& spec, const std::string& ceiling) {
  auto dense = [&](const char* type) -> std::optional<double> {
    auto it = spec.dense.find(type);
    if (it == spec.dense.end()) return std::nullopt;
    return it->second;
  };
  const auto dot = ceiling.find('.');
  const std::string family = ceiling.substr(0, dot);
  std::string variant = dot == std::string::npos ? "" : ceiling.substr(dot + 1);
  for (const char* suffix : {"_sustained", "_ref8192"}) {  // same roof as the plain ceiling
    const auto at = variant.find(suffix);
    if (at != std::string::npos) variant = variant.substr(0, at);
  }
  if (family == "hbm") return spec.memory_bandwidth;
  if (family == "gemm") {
    if (variant == "fp64") return fp64_gemm_peak(spec);
    if (variant.rfind("fp8", 0) == 0) return dense("fp8");
    return dense(variant.c_str());
  }
  if (family == "fma") {
    if (variant == "fp32" || variant == "fp64") return dense(variant.c_str());
    return std::nullopt;
  }
  if (family == "pcie" && spec.nvlink_c2c_bandwidth && variant.find("pageable") == std::string::npos)  // GH200
    return variant.rfind("bidir", 0) == 0 ? *spec.nvlink_c2c_bandwidth : *spec.nvlink_c2c_bandwidth / 2;
  if (family == "pcie" && spec.pcie_gen && spec.pcie_width && variant.find("pageable") == std::string::npos) {
    const double one_way = pcie_link_bandwidth(*spec.pcie_gen, *spec.pcie_width);
    return variant.rfind("bidir", 0) == 0 ? 2 * one_way : one_way;  // bidir, bidir_sm: both directions
  }
  if (family == "nvlink" && spec.nvlink_bandwidth) {
    return variant == "p2p_bidir" ? *spec.nvlink_bandwidth : *spec.nvlink_bandwidth / 2;
  }
  return std::nullopt;
}

std::optional<double> datasheet_value(const GpuSpec& spec, const std::string& ceiling_name, const json& detail) {
  const auto whole = datasheet_value(spec, ceiling_name);
  if (!whole || (ceiling_name != "nvlink.p2p_uni" && ceiling_name != "nvlink.p2p_bidir") || !detail.is_object())
    return whole;
  const auto number = [&](const char* key) -> double {
    const auto it = detail.find(key);
    return it != detail.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  const double pair = number("nvlink_pair_links"), gpu = number("nvlink_gpu_links");
  if (!(pair > 0 && gpu > 0 && std::isfinite(pair) && std::isfinite(gpu))) return whole;
  // Through NVSwitches every pair is owed the GPU's whole figure: fewer links there are a GPU that lost some
  // (a fault its ceiling must show), not a smaller share by design.
  if (number("nvlink_switched") > 0) return whole;
  return *whole * std::min(1.0, pair / gpu);
}

}  // namespace ceilings
