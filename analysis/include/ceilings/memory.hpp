// Memory estimates for training (weights, gradients, Adam state per the ZeRO paper; activations per
// Korthikanti et al. 2022) and inference (weights, KV cache), and whether they fit a device. Feeds `ceilings memory`.
#pragma once
#include <optional>
#include <string>

#include "ceilings/model.hpp"

namespace ceilings {

struct TrainMemoryInput {
  double params = 0;                 // total parameters
  std::optional<ModelConfig> model;  // for activations; none: activations not estimated
  double micro_batch = 1, seq = 0;
  int tp = 1, pp = 1, dp = 1, zero_stage = 0;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  // Eager attention keeps the softmax scores, their dropout mask and output (Korthikanti's 5*a*s/h term,
  // quadratic in s); a fused kernel (FlashAttention, cuDNN SDPA) stores none of them.
  bool eager_attention = false;
};

struct MemoryEstimate {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, kv_cache = 0;
  bool activations_estimated = false;
  double total() const { return weights + gradients + optimizer + activations + kv_cache; }
};

// What one token keeps for the backward pass in one transformer layer, in units of h bytes (16-bit activations,
// 1-byte dropout masks), by where it lives under tensor parallelism (Korthikanti et al. 2022 sec. 4.1):
//   replicated  the two norms' inputs (4), the attention and MLP inputs (2 + 2), two dropout masks (1 + 1): 10
//   sharded     attention: Q, K, V and the output projection's input, 2 bytes per element of each (a GPT layer:
//               8; GQA's K and V are kv_heads/heads of that; MLA's latents go to replicated); MLP: a 4h GELU
//               MLP keeps its two 4h-wide outputs (16); a gated (SwiGLU) MLP of width f keeps gate, up, their
//               product's inputs and the product, 8f/h; an MoE layer keeps per routed expert its copy of the
//               token, its gated MLP and its output (2 + 8f_e/h + 2), times experts_per_token, plus the shared
//               experts' MLPs
//   score_heads the heads whose s x s softmax scores, dropout mask and output eager attention keeps (5*a*s/h)
// A GPT-3-style layer (MHA, 4h GELU MLP) is Korthikanti's {10, 24, a}: 34*s*b*h.
struct LayerActivations {
  double replicated = 10, sharded = 24, score_heads = 0;
};
LayerActivations layer_activations(const ModelConfig& model, std::int64_t layer);

// Bytes of one layer (Korthikanti et al. 2022, Table 2, for the shape above):
//   no parallelism       s*b*h*(R + S + 5*a*s/h)
//   tensor parallel t    s*b*h*(R + S/t + 5*a*s/(h*t))
//   + sequence parallel  s*b*h*((R + S)/t + 5*a*s/(h*t))
//   selective recompute  drops the 5*a*s/h term (the attention core is recomputed)
//   full recompute       2*s*b*h (only each layer's input; /t with sequence parallel)
// `scores_stored` false (fused attention such as FlashAttention) drops the 5*a*s/h term as well.
double activation_bytes_per_layer(const LayerActivations& shape, double s, double b, double h, int t, bool sp,
                                  Recompute r, bool scores_stored = true);
// Korthikanti's GPT layer with a heads: {10, 24, a}.
double activation_bytes_per_layer(double s, double b, double h, double a, int t, bool sp, Recompute r,
                                  bool scores_stored = true);

// Per GPU. Mixed-precision Adam keeps 16 bytes per parameter (ZeRO paper, Rajbhandari et al. 2020,
// sec. 3.1): 2 fp16/bf16 weights + 2 gradients + 12 optimizer (fp32 master weights, momentum, variance).
// tp*pp split the model (past one KV head a GPU, the K/V projections are copied, as for inference); ZeRO stage
// 1/2/3 additionally split optimizer / + gradients / + weights over dp.
// Activations: the layers a pipeline stage holds with 1F1B keep ~L layers in flight on the first stage
// (Korthikanti et al. 2022 sec. 4.2.3), so L * per-layer bytes regardless of pp.
MemoryEstimate train_memory(const TrainMemoryInput& in);

struct InferMemoryInput {
  ModelConfig model;
  double batch = 1, context = 0;
  double weight_bytes = 2, kv_bytes = 2;
  int tp = 1;
};
// Per GPU: weights / tp, KV cache batch * cached tokens * bytes per token, split over tp when the KV heads
// are; past one KV head a rank, the K/V heads' cache and projections are copied, and MLA's latent cache and
// down-projections are whole on every rank (kv_tensor_split in model.hpp).
MemoryEstimate infer_memory(const InferMemoryInput& in);

}  // namespace ceilings
