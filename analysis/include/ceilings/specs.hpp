// Looking up datasheet entries by the names people type ("h100", "A100 80GB SXM4", "NVIDIA L40S"),
// and the peaks the utilization and roofline commands take from them.
#pragma once
#include <string>
#include <vector>

#include "ceilings/datasheet.hpp"
#include "ceilings/table.hpp"

namespace ceilings {

// Levenshtein distance (insert, delete, substitute each cost 1).
std::size_t edit_distance(const std::string& a, const std::string& b);

// The datasheet names closest to `name` (normalised edit distance, substrings first), best first.
std::vector<std::string> near_gpu_names(const std::string& name, std::size_t limit = 5);

// Loose lookup: find_gpu's match, else the same with "SXM"/"SXM4"/"SXM5" ignored on both sides when
// that leaves exactly one entry. nullptr when nothing (or more than one entry) matches.
const GpuSpec* match_gpu_loosely(const std::string& name);

// Like match_gpu_loosely, but an unknown name is an InputError that lists the near matches.
const GpuSpec& resolve_gpu(const std::string& name);

// A dense datasheet peak by data type ("bf16", "fp8_e4m3" -> fp8, "fp64" -> fp64_gemm_peak: the FP64
// tensor-core figure, or a Volta's FP64 figure). Throws InputError naming the GPU and type when absent.
double datasheet_dense_peak(const GpuSpec& spec, const std::string& dtype);

// The whole table: one row per GPU with the headline figures (dense peaks).
Table specs_table();
// One entry as rows of field, value (dense and sparse peaks labelled apart), and its source.
Table spec_detail_table(const GpuSpec& spec);

}  // namespace ceilings
