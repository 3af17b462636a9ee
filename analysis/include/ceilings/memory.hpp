// Memory estimates for training (weights, gradients, Adam state per the ZeRO paper; activations per
// Korthikanti et al. 2022) and inference (weights, KV cache), and whether they fit a device. Feeds `ceilings memory`.
#pragma once
#include <optional>
#include <string>

#include "ceilings/model.hpp"

namespace ceilings {

struct TrainMemoryInput {
  double params = 0;                 // total parameters (without a model: split evenly over tp*pp)
  std::optional<ModelConfig> model;  // its layers, embedding and head per pipeline stage, and activations
  // Trained beside the model on its last stage (DeepSeek-V3's MTP modules: mtp_params in model.hpp), by the parts
  // a layer's are (its replicated ones whole on every tensor-parallel GPU, its routed experts divided by ep), and of
  // those the transformer layers, whose K/V (MLA: down-) projections split as the model's.
  LayerParams last_stage;
  std::int64_t last_stage_layers = 0;
  double micro_batch = 1, seq = 0;
  int tp = 1, pp = 1, dp = 1, zero_stage = 0;
  int ep = 1;  // expert parallel: each MoE layer's routed experts divided over ep of the dp GPUs
  // Bytes of a gradient: 2 (bf16/fp16, the ZeRO paper's 16 bytes per parameter) or 4 (fp32 main gradients, as
  // Megatron-LM accumulates them under bf16: 18 bytes, 6 + 12/dp with its distributed optimizer).
  double grad_bytes = 2;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  // Eager attention keeps the softmax scores, their dropout mask and output (Korthikanti's 5*a*s/h term,
  // quadratic in s); a fused kernel (FlashAttention, cuDNN SDPA) stores none of them.
  bool eager_attention = false;
};

struct MemoryEstimate {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, kv_cache = 0;
  bool activations_estimated = false;
  // Training with a model: the pipeline stage these bytes are of (0-based; the most loaded one), its layers,
  // and whether it holds the input embedding or the output head.
  int stage = 0;
  std::int64_t stage_layers = 0;
  bool stage_embedding = false, stage_head = false;
  double total() const { return weights + gradients + optimizer + activations + kv_cache; }
};

// What one token keeps for the backward pass in one transformer layer, in units of h bytes (16-bit activations,
// 1-byte dropout masks), by where it lives under tensor parallelism (Korthikanti et al. 2022 sec. 4.1):
//   replicated  the two norms' inputs (4), the attention and MLP inputs (2 + 2), two dropout masks (1 + 1): 10
//               (split over the GPUs by sequence parallelism); 8 for a model that trains without hidden dropout
//   sharded     attention: Q, K, V and the output projection's input, 2 bytes per element of each (a GPT layer:
//               8; GQA's K and V are kv_heads/heads of that; MLA's latents go to replicated; per-head q/k norms
//               keep Q and K once more, as their inputs); MLP: a 4h GELU
//               MLP keeps its two 4h-wide outputs (16); a gated (SwiGLU) MLP of width f keeps gate, up,
//               SiLU(gate) and the product, 8f/h (eager PyTorch; Megatron-LM's fused SwiGLU keeps 6f/h); an MoE layer keeps per routed expert its gated MLP
//               (8f_e/h), times experts_per_token, plus the shared experts' MLPs
//   whole       an MoE layer's per routed expert copy of the token (the expert's input) and its output
//               (2 + 2, times experts_per_token): with the experts' widths split over the tensor-parallel GPUs
//               every GPU holds each routed token whole and a whole-width partial output, sequence parallel or not
//   score_heads the heads whose s x s softmax scores, dropout mask and output eager attention keeps (5*a*s/h:
//               score_bytes 5, Korthikanti's 16-bit softmax with dropout; a config's model as its type's
//               Transformers eager attention keeps them: an fp32 softmax's output and a 16-bit copy, 6, a 16-bit
//               softmax's output, 2, attention dropout's mask and dropped copy, +1 or +3, a softcapping's tanh, +2);
//               with GQA also K and V repeated to every query head (eager_sharded), split like `sharded`
// A GPT-3-style layer (MHA, 4h GELU MLP) is Korthikanti's {10, 24, a}: 34*s*b*h.
struct LayerActivations {
  double replicated = 10, sharded = 24, score_heads = 0, whole = 0, score_bytes = 5;
  double eager_sharded = 0;  // eager attention's K and V repeated to every query head (GQA), beyond `sharded`'s
};
LayerActivations layer_activations(const ModelConfig& model, std::int64_t layer);

// Bytes of one layer (Korthikanti et al. 2022, Table 2, for the shape above; W, MoE's whole part, added):
//   no parallelism       s*b*h*(R + W + S + 5*a*s/h)
//   tensor parallel t    s*b*h*(R + W + S/t + 5*a*s/(h*t))
//   + sequence parallel  s*b*h*((R + S)/t + W + 5*a*s/(h*t))
//   selective recompute  drops the 5*a*s/h term (the attention core is recomputed)
//   full recompute       2*s*b*h (only each layer's input; /t with sequence parallel)
// `scores_stored` false (fused attention such as FlashAttention) drops the 5*a*s/h term as well.
double activation_bytes_per_layer(const LayerActivations& shape, double s, double b, double h, int t, bool sp,
                                  Recompute r, bool scores_stored = true);
// Korthikanti's GPT layer with a heads: {10, 24, a}.
double activation_bytes_per_layer(double s, double b, double h, double a, int t, bool sp, Recompute r,
                                  bool scores_stored = true);

// Bytes outside the transformer layers (Korthikanti et al. 2022 sec. 4.3), per micro-batch:
//   the first stage  the input embedding's dropout mask, s*b*h (1 byte an element; none without embedding dropout)
//   the last stage   the final norm's and the output projection's inputs, 4*s*b*h, and the fp32 logits the
//                    cross-entropy keeps, 4*s*b*V/t (vocabulary-parallel over t): 4*s*b*h*(1 + V/h) at t = 1
// The h-wide parts split over t with sequence parallelism only. No recompute mode recomputes them.
double embedding_activation_bytes(double s, double b, double h, int t, bool sp);
double output_activation_bytes(double s, double b, double h, double vocab, int t, bool sp);

// Per GPU of the most loaded pipeline stage. Mixed-precision Adam keeps 16 bytes per parameter (ZeRO paper,
// Rajbhandari et al. 2020, sec. 3.1): 2 fp16/bf16 weights + 2 gradients + 12 optimizer (fp32 master weights,
// momentum, variance). With a model, pp stages hold L/pp layers each (the first L mod pp stages one more), the
// first stage the input embedding, the last the final norm and output head (a tied one as a copy of the
// embedding, as Megatron-LM keeps it) and `last_stage`; tp splits a stage but for what every GPU holds
// whole (replicated_params in model.hpp: norms, routers, row-parallel biases, the first stage's position table;
// past one KV head a GPU, the K/V projections are copied, as for inference); ep divides the routed experts
// further, each expert's down-projection bias whole on the tp GPUs that split the rest of it (Megatron-LM's expert
// parallelism, drawn from the data-parallel GPUs), whose ZeRO partitions are then over dp/ep; ZeRO stage 1/2/3
// additionally split optimizer / + gradients / + weights over dp. Activations (routing taken as balanced, so
// expert parallelism moves token copies between GPUs but does not change how many each holds): with 1F1B, stage i holds pp - i micro-batches in flight (Korthikanti et al.
// 2022 sec. 4.2.3: the first stage about L layers' worth), its layers' and the embedding's (first stage) or
// output layer's (last stage; one micro-batch there) bytes above. Without a model: params / (tp*pp), an average stage.
MemoryEstimate train_memory(const TrainMemoryInput& in);

struct InferMemoryInput {
  ModelConfig model;
  double batch = 1, context = 0;
  WeightBytes weight_bytes = 2;  // per weight, by class where a checkpoint quantizes some
  double kv_bytes = 2;
  int tp = 1;
  int ep = 1;  // expert parallel (MoE): each MoE layer's routed experts, whole, over ep GPUs, a multiple of tp
};
// Per GPU: weights / tp but for replicated_params, whole on each (model.hpp), KV cache batch * cached tokens *
// bytes per token, split over tp when the KV heads are; past one KV head a rank, the K/V heads' cache and
// projections are copied, and MLA's latent cache and down-projections are whole on every rank (kv_tensor_split in
// model.hpp). With ep > 1 (as vLLM and SGLang
// serve an MoE model) the routed experts are not split over tp but placed whole, routed_experts / ep a GPU,
// over ep GPUs: the tp group and, past it, ep / tp data-parallel attention groups, each with its own batch.
MemoryEstimate infer_memory(const InferMemoryInput& in);

}  // namespace ceilings
