// Loose datasheet lookup with near-match suggestions, and the tables `ceilings specs` prints.
#include "ceilings/specs.hpp"

#include <algorithm>
#include <regex>

#include "ceilings/units.hpp"

namespace ceilings {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {

// The name without its SXM form factor, normalized: "SXM"/"SXM5" as a word of the name as written (in the
// normalized name its version digit would run into a memory size that follows: a100sxm80gb), or at the
// end of a name typed without spaces ("h200sxm").
std::string loose_key(const std::string& name) {
  static const std::regex word("\\bsxm[0-9]?\\b", std::regex::icase), tail("sxm[0-9]?$");
  return std::regex_replace(normalize_gpu_name(std::regex_replace(name, word, " ")), tail, "");
}

// The name without any form factor (SXM, PCIe, NVL), normalized: "H100", "H100 PCIe" and "H100 NVL" share one.
std::string form_free_key(const std::string& name) {
  static const std::regex word("\\b(sxm[0-9]?|pcie|nvl)\\b", std::regex::icase);
  return normalize_gpu_name(std::regex_replace(name, word, " "));
}

}  // namespace

std::vector<std::string> near_gpu_names(const std::string& name, std::size_t limit) {
  const std::string want = normalize_gpu_name(name);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const GpuSpec& s : datasheet()) {
    std::size_t best = edit_distance(want, normalize_gpu_name(s.name));
    for (const std::string& m : s.match) best = std::min(best, edit_distance(want, normalize_gpu_name(m)));
    const std::string n = normalize_gpu_name(s.name);
    // A typed fragment of a real name ("h100" in "h100nvl") is nearer than any spelling distance.
    if (!want.empty() && (n.find(want) != std::string::npos || want.find(n) != std::string::npos)) best = 0;
    const std::size_t allowed = std::max<std::size_t>(3, want.size() / 2);
    if (best <= allowed) scored.emplace_back(best, s.name);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [d, n] : scored) {
    if (out.size() == limit) break;
    out.push_back(n);
  }
  return out;
}

const GpuSpec* match_gpu_loosely(const std::string& name) {
  if (const GpuSpec* s = find_gpu(name)) return s;
  const std::string want = loose_key(name);
  if (want.empty()) return nullptr;
  const GpuSpec* found = nullptr;
  for (const GpuSpec& s : datasheet()) {
    bool hit = loose_key(s.name) == want;
    for (const std::string& m : s.match) hit = hit || loose_key(m) == want;
    if (!hit) continue;
    if (found && found != &s) return nullptr;  // ambiguous: let the caller list the candidates
    found = &s;
  }
  // A name that says no form factor matches the SXM entry above only where no PCIe or NVL board shares it (review
  // 97: "H100", "A100 80GB" and the driver's "NVIDIA H100", a 94 GB board, all read as the SXM's datasheet).
  const std::string bare = form_free_key(name);
  if (found && bare == normalize_gpu_name(name))
    for (const GpuSpec& s : datasheet()) {
      if (&s == found) continue;
      bool shares = form_free_key(s.name) == bare;
      for (const std::string& m : s.match) shares = shares || form_free_key(m) == bare;
      if (shares) return nullptr;
    }
  return found;
}

const GpuSpec& resolve_gpu(const std::string& name) {
  if (const GpuSpec* s = match_gpu_loosely(name)) return *s;
  // A name several boards answer to (the form factor left out) is ambiguous, not unknown (review 108).
  // Also a name that leaves out the memory size of boards that differ by it ("A100": 40 and 80 GB, SXM and PCIe): the
  // board's name with its memory size as a word of its own taken off (review 110: cut out of the joined key, "h20"
  // matched "h200141gb", the H20 a board of its own).
  std::vector<std::string> boards;
  const std::string loose = loose_key(name), bare = form_free_key(name);
  static const std::regex memory_word("\\b[0-9]+ ?gb\\b", std::regex::icase);
  const auto same_board = [&](const std::string& candidate) {
    return form_free_key(candidate) == bare || form_free_key(std::regex_replace(candidate, memory_word, " ")) == bare;
  };
  for (const GpuSpec& s : datasheet()) {
    bool hit = !loose.empty() && loose_key(s.name) == loose;
    bool shares = !bare.empty() && same_board(s.name);
    for (const std::string& m : s.match) {
      hit = hit || (!loose.empty() && loose_key(m) == loose);
      shares = shares || (!bare.empty() && same_board(m));
    }
    if (hit || shares) boards.push_back(s.name);
  }
  if (boards.size() > 1) {
    std::string msg = "'" + name + "' names several boards of the datasheet table:";
    for (std::size_t i = 0; i < boards.size(); ++i) msg += (i ? ", " : " ") + boards[i];
    throw InputError(msg + "; give one of them");
  }
  std::string msg = "unknown GPU '" + name + "' in the datasheet table";
  const auto near = near_gpu_names(name);
  if (!near.empty()) {
    msg += "; near matches:";
    for (std::size_t i = 0; i < near.size(); ++i) msg += (i ? ", " : " ") + near[i];
  } else {
    msg += " (`ceilings specs` lists the table)";
  }
  throw InputError(msg);
}

double datasheet_dense_peak(const GpuSpec& spec, const std::string& dtype) {
  if (dtype == "fp64") {
    const auto peak = fp64_gemm_peak(spec);
    if (!peak || *peak <= 0)
      throw InputError("the datasheet entry " + spec.name + " has no dense fp64 GEMM peak" +
                       (spec.dense.count("fp64") ? " (its datasheet prints no FP64 tensor-core figure)" : ""));
    return *peak;
  }
  std::string key = dtype;
  if (key.rfind("fp8", 0) == 0) key = "fp8";
  auto it = spec.dense.find(key);
  if (it == spec.dense.end() || it->second <= 0)
    throw InputError("the datasheet entry " + spec.name + " has no dense " + dtype + " peak");
  return it->second;
}

namespace {
std::string tdp_text(const GpuSpec& s) {
  if (s.tdp_w <= 0) return "-";
  const std::string low = s.tdp_min_w > 0 ? format_fixed(s.tdp_min_w, 0) + "-" : "";  // a configurable range
  return low + format_quantity(s.tdp_w, "W") + (s.tdp_whole_module ? " (module)" : "");
}
std::string peak_or_dash(const GpuSpec& s, const char* key) {
  auto it = s.dense.find(key);
  if (it == s.dense.end()) return "-";
  return format_quantity(it->second, std::string(key) == "int8" ? "OP/s" : "FLOP/s");
}
}  // namespace

Table specs_table() {
  Table t;
  // Vector fp64 and fp16 beside the tensor figures: a GPU without fp64 tensor cores (V100, T4, Ada) or without
  // bf16 (V100, T4) has its fp64 and tensor peak there (review 33).
  t.columns = {"gpu",  "arch", "SMs",  "boost", "memory", "bandwidth", "fp64", "fp64 tc",
               "fp32", "tf32", "bf16", "fp16",  "fp8",    "fp4",       "int8", "TDP"};
  t.right_aligned = {false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true};
  for (const GpuSpec& s : datasheet())
    t.add_row({s.name, s.architecture, s.sm_count ? std::to_string(s.sm_count) : "-",
               s.boost_clock_hz > 0 ? format_quantity(s.boost_clock_hz, "Hz") : "-",
               format_gib(s.memory_bytes), format_quantity(s.memory_bandwidth, "B/s"),
               peak_or_dash(s, "fp64"), peak_or_dash(s, "fp64_tensor"), peak_or_dash(s, "fp32"),
               peak_or_dash(s, "tf32"), peak_or_dash(s, "bf16"), peak_or_dash(s, "fp16"), peak_or_dash(s, "fp8"),
               peak_or_dash(s, "fp4"), peak_or_dash(s, "int8"), tdp_text(s)});
  return t;
}

Table spec_detail_table(const GpuSpec& s) {
  Table t;
  t.columns = {"field", "value"};
  t.right_aligned = {false, false};
  t.add_row({"name", s.name});
  t.add_row({"architecture", s.architecture});
  t.add_row({"compute capability", s.compute_capability});
  t.add_row({"SMs", s.sm_count ? std::to_string(s.sm_count) : "not published"});
  t.add_row({"boost clock", s.boost_clock_hz > 0 ? format_quantity(s.boost_clock_hz, "Hz") : "not published"});
  if (s.tensor_clock_hz > 0)
    t.add_row({"tensor-core figures at", format_quantity(s.tensor_clock_hz, "Hz") + " (what the dense peaks imply)"});
  t.add_row({"memory", format_capacity(s.memory_bytes)});
  t.add_row({"memory bandwidth", format_quantity(s.memory_bandwidth, "B/s")});
  t.add_row({"TDP", tdp_text(s)});
  if (s.pcie_gen && s.pcie_width)
    t.add_row({"PCIe", "Gen" + std::to_string(*s.pcie_gen) + " x" + std::to_string(*s.pcie_width) + " (" +
                           format_quantity(pcie_link_bandwidth(*s.pcie_gen, *s.pcie_width), "B/s") +
                           " per direction)"});
  else
    t.add_row({"PCIe", "-"});
  t.add_row({"NVLink", s.nvlink_bandwidth ? format_quantity(*s.nvlink_bandwidth, "B/s") + " total" : "-"});
  if (s.nvlink_c2c_bandwidth)
    t.add_row({"NVLink-C2C", format_quantity(*s.nvlink_c2c_bandwidth, "B/s") + " total (the host link; " +
                                 format_quantity(*s.nvlink_c2c_bandwidth / 2, "B/s") + " per direction)"});
  for (const auto& [k, v] : s.dense) t.add_row({"dense " + k, format_quantity(v, k == "int8" ? "OP/s" : "FLOP/s")});
  if (s.raw.contains("sparse") && s.raw["sparse"].is_object())
    for (const auto& [k, v] : s.raw["sparse"].items())
      if (v.is_number())
        t.add_row(
            {"sparse " + k + " (2:4, not a peak)", format_quantity(v.get<double>(), k == "int8" ? "OP/s" : "FLOP/s")});
  if (s.raw.contains("notes") && s.raw["notes"].is_string()) t.add_row({"notes", s.raw["notes"].get<std::string>()});
  t.add_row({"source", s.source});
  return t;
}

}  // namespace ceilings
