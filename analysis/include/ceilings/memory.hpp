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

// Activation bytes of one transformer layer (Korthikanti et al. 2022, Table 2), 16-bit activations:
//   no parallelism       s*b*h*(34 + 5*a*s/h)
//   tensor parallel t    s*b*h*(10 + 24/t + 5*a*s/(h*t))
//   + sequence parallel  s*b*h*(34/t + 5*a*s/(h*t))
//   selective recompute  drops the 5*a*s/h term (the attention core is recomputed)
//   full recompute       2*s*b*h (only each layer's input; /t with sequence parallel)
// `scores_stored` false (fused attention such as FlashAttention) drops the 5*a*s/h term as well.
double activation_bytes_per_layer(double s, double b, double h, double a, int t, bool sp, Recompute r,
                                  bool scores_stored = true);

// Per GPU. Mixed-precision Adam keeps 16 bytes per parameter (ZeRO paper, Rajbhandari et al. 2020,
// sec. 3.1): 2 fp16/bf16 weights + 2 gradients + 12 optimizer (fp32 master weights, momentum, variance).
// tp*pp split the model; ZeRO stage 1/2/3 additionally split optimizer / + gradients / + weights over dp.
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
