// The roofline of a device from its profile: compute roofs (every verified FLOP/s or OP/s ceiling: gemm.*, fma.*),
// memory roofs (every verified B/s ceiling: smem, l2, hbm, pcie, nvlink, and a family added later), measured and
// datasheet; classification of workload points; an SVG
// picture; and the LLM view (prefill/decode steps of a model). Feeds `ceilings roofline`.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ceilings/model.hpp"
#include "ceilings/profile.hpp"

namespace ceilings {

struct Roof {
  std::string name;  // the ceiling: "gemm.bf16", "hbm.read", "l2.read", "pcie.h2d", ...
  bool compute = false;
  std::optional<double> measured, datasheet;  // in `unit`
  std::string unit;                           // the ceiling's: "FLOP/s", "OP/s" (gemm.int8*) or "B/s"
  // Operations per byte of a compute roof's kind: "OP/B" for an OP/s roof, "FLOP/B" otherwise.
  std::string intensity_unit() const { return unit == "OP/s" ? "OP/B" : "FLOP/B"; }
};

struct Roofline {
  std::string title;
  std::optional<std::string> note;  // the profile's note: a fixture or a fleet baseline, not one GPU's run
  std::vector<Roof> compute, memory;
  // The profile's roof ceilings that are no roof, each with why: skipped (nvlink.* on one GPU), failed, unverified.
  std::vector<std::pair<std::string, std::string>> not_roofs;
  std::string dtype;         // the GEMM data type asked for
  std::string compute_level; // the compute roof the classification uses ("gemm.<dtype>", or a --compute roof)
  std::string memory_level;  // the memory roof the classification uses (default hbm.read, else hbm.copy, ...)
  const Roof& compute_roof() const;
  const Roof& memory_roof() const;
};

// Roofs from a profile, by unit: every verified FLOP/s or OP/s ceiling (gemm.*, fma.*) is a compute roof, every
// verified B/s ceiling (smem, l2, hbm, pcie, nvlink) a memory roof; datasheet values from the profile or the embedded table. The classification
// uses gemm.<dtype>, or `compute_level` where given (fma.fp32: a kernel without tensor cores). Throws
// InputError when the profile lacks that roof, the chosen memory level, or any bandwidth ceiling, and
// IncompleteError (with the profile's reason) where it records one as skipped, failed or unverified.
Roofline roofline_from_profile(const Profile& profile, const std::string& dtype,
                               const std::optional<std::string>& memory_level = std::nullopt,
                               const std::optional<std::string>& compute_level = std::nullopt);

struct Point {
  std::string name;
  double flops = 0, bytes = 0;
};
// "NAME:FLOPS:BYTES" (numbers may use exponents: "attn:1.2e12:3e9"); both positive.
Point parse_point(const std::string& text);

struct Placement {
  double intensity = 0;  // FLOP per byte
  // Against one set of roofs (measured or datasheet): attainable FLOP/s, the bounding roof, ridge.
  struct Side {
    bool available = false;
    double attainable = 0, ridge = 0, time_s = 0;
    bool memory_bound = false;
    std::string bound_by;
  } measured, datasheet;
};
Placement place(const Roofline& r, double flops, double bytes);

// The LLM view: one decode step and one prefill of `model` at batch B and context S. A prefill computes logits at
// each prompt's last token only, as serving engines do (not at all S, as training does).
// Over `gpus` tensor-parallel GPUs (Megatron-LM's and vLLM's split: heads, MLP columns, vocabulary), a step is placed
// by one GPU's share: its weight shard with the parameters every GPU holds whole (weight_bytes_per_gpu), its KV heads'
// cache (kv_tensor_split: GQA's K/V heads copied past one a GPU, MLA's latent cache whole on each), and its FLOPs:
// the matmuls and attention split over the GPUs but for the K/V (MLA: down-) projections, which only kv_split GPUs
// divide, and the MoE routers, which every GPU runs whole. The all-reduces between the GPUs are not counted: the floors are the roofs' alone.
struct LlmStep {
  std::string name;  // "prefill b=8", "decode b=8"
  double batch = 0;
  double flops = 0, bytes = 0, kv_bytes = 0;  // one GPU's (all of it where gpus is 1); what `placement` places
  double model_flops = 0, model_bytes = 0;    // the whole step's, each weight and cached token counted once
  Placement placement;
};
// The largest batch the decode crossover is searched to.
constexpr double kCrossoverSearchLimit = 1e9;
struct LlmView {
  std::vector<LlmStep> prefill, decode;
  // The smallest batch at which decode reaches the ridge (compute-bound), counting KV-cache reads;
  // nullopt when it never does (KV traffic grows as fast as the FLOPs), or not by kCrossoverSearchLimit. Per roof set.
  std::optional<double> crossover_measured, crossover_datasheet;
  double decode_intensity_limit = 0;  // FLOP/B as batch -> infinity: flops per token / KV bytes per token (one GPU's)
  bool has_kv_traffic = true;
  double gpus = 1, kv_split = 1;  // tensor-parallel GPUs; of them, the ones the KV cache is divided over
};
LlmView llm_view(const Roofline& r, const ModelConfig& m, double context, const std::vector<double>& batches,
                 const WeightBytes& weight_bytes, double kv_bytes, AttentionConvention prefill_attention,
                 double gpus = 1);

// A log-log roofline picture: title, axis labels with units, legend, measured roofs solid and
// datasheet roofs dashed, each measured roof labelled on the plot, the two the classification uses drawn thicker,
// points labelled. `all_roofs` false draws each data type's roof (gemm.<type>, fma.*) and each memory level's main
// one (hbm.read, l2.read, smem.read, pcie.h2d, nvlink.p2p_uni; where absent, the level's first), and the
// classification's; the variants (_sustained, _ref*, the other HBM patterns, pageable and SM copies) are counted
// under the legend: 41 roofs in 8 colours could not be told apart (review 94).
std::string roofline_svg(const Roofline& r, const std::vector<std::pair<std::string, Placement>>& points,
                         bool all_roofs = false);

}  // namespace ceilings
