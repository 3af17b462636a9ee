// Training and inference memory per GPU: ZeRO-paper optimizer accounting, Korthikanti et al. 2022
// activation formulas, KV cache from the model's attention shape.
#include "ceilings/memory.hpp"

#include <algorithm>
#include <cmath>

namespace ceilings {

namespace {
constexpr double kMaxJobGpus = 1048576;  // 2^20 GPUs: far beyond any training or serving job
}  // namespace

LayerActivations layer_activations(const ModelConfig& c, std::int64_t layer) {
  const double h = static_cast<double>(c.hidden), heads = static_cast<double>(c.heads);
  LayerActivations out;
  out.score_heads = heads;
  if (!c.hidden_dropout) out.replicated -= 2.0;  // no masks after attention and the MLP
  // Eager attention's bytes per score (reviews 59, 60: autograd's saved tensors in Transformers' eager attention):
  // an fp32 softmax keeps its output (4) and the AV product its 16-bit copy (2); a 16-bit one its output (2), which
  // the AV product shares (Korthikanti's GPT). Attention dropout adds its 1-byte mask, the dropped 16-bit copy taking
  // the copy's place (7) or added (5); a logit softcapping keeps its tanh output (2).
  out.score_bytes = c.eager_fp32_softmax ? 6.0 : 2.0;
  if (c.attention_dropout) out.score_bytes += c.eager_fp32_softmax ? 1.0 : 3.0;
  if (c.attention_softcapping) out.score_bytes += 2.0;
  // Eager attention multiplies with K and V repeated to every query head (repeat_kv): the copies are what the
  // products keep, beyond the fewer heads counted above (review 60: 1.6 GB for Llama-3.1-8B at s 4096).
  if (!c.is_mla() && c.kv_heads < c.heads)
    out.eager_sharded = 2.0 * (heads - static_cast<double>(c.kv_heads)) *
                        static_cast<double>(c.qk_head_dim() + c.value_head_dim()) / h;
  // Attention: Q and K (qk width a head), V and the output projection's input (value width a head).
  const double q_width = heads * static_cast<double>(c.qk_head_dim());
  const double kv_heads = c.is_mla() ? heads : static_cast<double>(c.kv_heads);  // MLA expands K/V to every head
  const double k_width = kv_heads * static_cast<double>(c.qk_head_dim());
  const double v_width = kv_heads * static_cast<double>(c.value_head_dim());
  const double o_width = heads * static_cast<double>(c.value_head_dim());
  out.sharded = 2.0 * (q_width + k_width + v_width + o_width) / h;
  if (c.qk_norm) out.sharded += 2.0 * (q_width + k_width) / h;  // Q and K before their per-head norms (Qwen3, Gemma 3)
  out.replicated += 2.0 * static_cast<double>(c.layer_norms - 2);  // Gemma's norms after attention and the MLP
  if (c.is_mla())  // the query and key/value latents, each the input of its norm and of its up-projection
    out.replicated += 2.0 * 2.0 *
                      static_cast<double>(c.q_lora_rank + c.kv_lora_rank + c.qk_rope_head_dim) / h;
  auto mlp = [&](std::int64_t width) {
    const double f = static_cast<double>(width);
    return c.gated_mlp ? 8.0 * f / h : 4.0 * f / h;
  };
  if (c.is_moe_layer(layer)) {
    const double routed = static_cast<double>(c.experts_per_token);
    out.sharded += routed * mlp(c.expert_ffn) + static_cast<double>(c.shared_experts) * mlp(c.expert_ffn);
    out.whole += routed * (2.0 + 2.0);
  } else {
    out.sharded += mlp(c.ffn);
  }
  return out;
}

double activation_bytes_per_layer(const LayerActivations& shape, double s, double b, double h, int t, bool sp,
                                  Recompute r, bool scores_stored) {
  const double sbh = s * b * h, td = static_cast<double>(t);
  if (r == Recompute::kFull) return 2.0 * sbh / (sp ? td : 1.0);
  const double attention_core =
      r == Recompute::kSelective || !scores_stored
          ? 0.0
          : (shape.score_bytes * shape.score_heads * s / h + shape.eager_sharded) / td;
  if (sp) return sbh * ((shape.replicated + shape.sharded) / td + shape.whole + attention_core);
  return sbh * (shape.replicated + shape.whole + shape.sharded / td + attention_core);
}

double activation_bytes_per_layer(double s, double b, double h, double a, int t, bool sp, Recompute r,
                                  bool scores_stored) {
  return activation_bytes_per_layer(LayerActivations{10, 24, a}, s, b, h, t, sp, r, scores_stored);
}

double embedding_activation_bytes(double s, double b, double h, int t, bool sp) {
  return s * b * h / (sp ? static_cast<double>(t) : 1.0);
}

double output_activation_bytes(double s, double b, double h, double vocab, int t, bool sp) {
  const double td = static_cast<double>(t);
  return 4.0 * s * b * h / (sp ? td : 1.0) + 4.0 * s * b * vocab / td;
}

MemoryEstimate train_memory(const TrainMemoryInput& in) {
  if (!(in.params > 0) || !std::isfinite(in.params)) throw InputError("the parameter count must be positive");
  if (in.tp < 1 || in.pp < 1 || in.dp < 1) throw InputError("--tp, --pp and --dp must be at least 1");
  // Products in double: tp * pp in int wrapped (46341^2) to a negative memory that "fit".
  const double gpus = static_cast<double>(in.tp) * in.pp * in.dp;
  if (gpus > kMaxJobGpus)
    throw InputError("--tp x --pp x --dp is " + std::to_string(static_cast<long long>(gpus)) +
                     " GPUs, more than any job runs on (at most 2^20)");
  if (in.zero_stage < 0 || in.zero_stage > 3) throw InputError("--zero must be 0, 1, 2 or 3");
  if (in.ep < 1) throw InputError("--ep must be at least 1");
  if (in.ep > 1) {
    if (!in.model)
      throw InputError("--ep divides a mixture-of-experts model's routed experts: it needs the model's description "
                       "(--hf-config), not --params");
    if (!in.model->is_moe())
      throw InputError("--ep divides a mixture-of-experts model's routed experts, and this model has none");
    if (in.dp % in.ep != 0)
      throw InputError("--ep " + std::to_string(in.ep) + " does not divide --dp " + std::to_string(in.dp) +
                       ": expert parallelism takes its GPUs from the data-parallel ones");
    if (in.model->routed_experts % in.ep != 0)
      throw InputError("--ep " + std::to_string(in.ep) + " does not divide the model's " +
                       std::to_string(in.model->routed_experts) + " routed experts");
  }
  require_count(in.micro_batch, "--batch (micro-batch)");
  const double dp = in.dp;
  // Weights, gradients and Adam state of the parameters one GPU of a stage holds: the dense ones ZeRO partitions
  // over dp, the experts' over the GPUs that hold the same experts (dp / ep).
  auto with_states = [&](MemoryEstimate m, double per_rank, double experts_per_rank) {
    auto zero = [&](int stage) {
      return in.zero_stage >= stage ? per_rank / dp + experts_per_rank / (dp / in.ep) : per_rank + experts_per_rank;
    };
    m.weights = 2.0 * zero(3);
    m.gradients = in.grad_bytes * zero(2);
    m.optimizer = 12.0 * zero(1);
    if (!std::isfinite(m.total()))
      throw InputError("the training memory is too large to compute with (not finite): check the sizes of --params, "
                       "--batch and --seq");
    return m;
  };
  if (!in.model) return with_states(MemoryEstimate{}, in.params / (static_cast<double>(in.tp) * in.pp), 0);

  require_length(in.seq, "--seq (for the activation estimate)");
  const ModelConfig& c = *in.model;
  require_positions(c, in.seq, "--seq");
  check_parallel_split(c, in.tp, in.pp, "--tp");
  const ParamCounts counts = count_params(c);
  const double h = static_cast<double>(c.hidden);
  // Past one KV head a GPU, tensor parallelism copies the K/V projections (as inference does; Megatron-LM
  // refuses such a split for training, where the estimate still says what it would hold).
  const KvTensorSplit kv = kv_tensor_split(c, in.tp);
  const double kv_per_layer = kv.projection_params / static_cast<double>(c.layers);
  MemoryEstimate most;
  std::int64_t first = 0;
  for (int i = 0; i < in.pp; ++i) {
    MemoryEstimate m;
    m.stage = i;
    m.stage_layers = c.layers / in.pp + (i < c.layers % in.pp ? 1 : 0);
    m.stage_embedding = i == 0;
    m.stage_head = i == in.pp - 1;
    // replicated: whole on every tensor-parallel GPU; routed_replicated, of it and of routed, the routed experts'
    // down-projection biases, whole on each GPU that holds their expert.
    double params = 0, routed = 0, replicated = 0, routed_replicated = 0, activations = 0;
    // Recompute keeps less of each layer (full: its input; selective: all but the attention core); in the backward
    // pass one layer at a time is run forward again, and what it rebuilds sits beside what is kept: the largest
    // layer's, for one micro-batch, adds to the peak (never at once with the output layer's, freed by then).
    double rebuilt_layer = 0;
    for (std::int64_t layer = first; layer < first + m.stage_layers; ++layer) {
      const LayerParams lp = layer_params(c, layer);
      params += lp.total;
      routed += lp.routed_experts;
      replicated += lp.replicated;
      routed_replicated += lp.routed_replicated;
      activations += activation_bytes_per_layer(layer_activations(c, layer), in.seq, in.micro_batch, h, in.tp,
                                                in.sequence_parallel, in.recompute, in.eager_attention);
      if (in.recompute != Recompute::kNone)
        rebuilt_layer = std::max(
            rebuilt_layer, activation_bytes_per_layer(layer_activations(c, layer), in.seq, in.micro_batch, h, in.tp,
                                                      in.sequence_parallel, Recompute::kNone, in.eager_attention) -
                               activation_bytes_per_layer(layer_activations(c, layer), in.seq, in.micro_batch, h,
                                                          in.tp, in.sequence_parallel, in.recompute, in.eager_attention));
    }
    first += m.stage_layers;
    if (m.stage_embedding) {
      params += static_cast<double>(counts.embedding);
      replicated += static_cast<double>(c.learned_positions) * h;  // split by vocabulary, the positions whole
    }
    if (m.stage_head) {
      const double head = counts.lm_head > 0 || in.pp == 1 ? static_cast<double>(counts.lm_head)
                                                           : static_cast<double>(c.vocab) * h;  // a tied head's copy
      params += static_cast<double>(c.norm_params_per_hidden) * h + head + in.last_stage.total;
      // Megatron-LM builds the word embedding again on the stage that runs the MTP modules (they embed the shifted
      // tokens), a copy kept in step with the first stage's as a tied head's is.
      if (in.last_stage_layers > 0 && in.pp > 1) params += static_cast<double>(c.vocab) * h;
      routed += in.last_stage.routed_experts;
      // The final norm, and of last_stage its norms, routers and row-parallel biases.
      replicated += static_cast<double>(c.norm_params_per_hidden) * h + in.last_stage.replicated;
      routed_replicated += in.last_stage.routed_replicated;
    }
    const double kv_params =
        kv_per_layer * static_cast<double>(m.stage_layers + (m.stage_head ? in.last_stage_layers : 0));
    if (m.stage_embedding && c.embedding_dropout)  // the embedding's dropout mask
      activations += embedding_activation_bytes(in.seq, in.micro_batch, h, in.tp, in.sequence_parallel);
    // 1F1B: pp - i micro-batches in flight (the last stage, which holds the output layer, one).
    m.activations = static_cast<double>(in.pp - i) * activations;
    double output = 0;
    if (m.stage_head && c.vocab > 0)  // a model given without --vocab has no output layer to keep inputs for
      output = output_activation_bytes(in.seq, in.micro_batch, h, static_cast<double>(c.vocab), in.tp,
                                       in.sequence_parallel);
    m.activations += std::max(output, rebuilt_layer);
    m.activations_estimated = true;
    // Norms, routers, row-parallel biases and the position table whole on every tensor-parallel GPU (Megatron-LM
    // replicates them); the routed experts' widths split over tp too, their down-projection biases whole.
    const double dense_replicated = replicated - routed_replicated;
    m = with_states(m,
                    (params - routed - kv_params - dense_replicated) / in.tp + kv_params / kv.split + dense_replicated,
                    ((routed - routed_replicated) / in.tp + routed_replicated) / in.ep);
    if (i == 0 || m.total() > most.total()) most = m;
  }
  return most;
}

MemoryEstimate infer_memory(const InferMemoryInput& in) {
  if (in.tp < 1) throw InputError("--tp must be at least 1");
  if (in.tp > kMaxJobGpus) throw InputError("--tp is more GPUs than any job runs on (at most 2^20)");
  require_count(in.batch, "--batch");
  require_length(in.context, "--context");
  require_positions(in.model, in.context, "--context");
  check_parallel_split(in.model, in.tp, 1, "--tp");
  if (in.ep < 1) throw InputError("--ep must be at least 1");
  if (in.ep > 1) {
    if (in.ep > kMaxJobGpus) throw InputError("--ep is more GPUs than any job runs on (at most 2^20)");
    if (!in.model.is_moe())
      throw InputError("--ep divides a mixture-of-experts model's routed experts, and this model has none");
    if (in.ep % in.tp != 0)
      throw InputError("--ep " + std::to_string(in.ep) + " is not a multiple of --tp " + std::to_string(in.tp) +
                       ": expert parallelism spans the tensor-parallel GPUs (and data-parallel attention groups "
                       "past them)");
    if (in.model.routed_experts % in.ep != 0)
      throw InputError("--ep " + std::to_string(in.ep) + " does not divide the model's " +
                       std::to_string(in.model.routed_experts) + " routed experts");
  }
  MemoryEstimate m;
  // Heads split over the GPUs, but GQA's K/V heads are copied past one per GPU, and MLA keeps its latent cache and
  // down-projections whole on every GPU. With expert parallelism the routed experts are whole, routed_experts / ep a GPU.
  // Under tp alone, every GPU holds each routed expert's down-projection bias whole with the other replicated
  // parameters; under ep, with the rest of its expert.
  const double stored = stored_weight_bytes(in.model, in.weight_bytes);
  double routed = 0, routed_matrices = 0, routed_replicated = 0;
  if (in.ep > 1)
    for (std::int64_t layer = 0; layer < in.model.layers; ++layer) {
      const LayerParams lp = layer_params(in.model, layer);
      routed += lp.routed_experts;
      routed_matrices += lp.routed_matrices;
      routed_replicated += lp.routed_replicated;
    }
  const double routed_bytes = in.weight_bytes.of(routed, routed_matrices, routed_matrices);
  m.weights = weight_bytes_per_gpu(in.model, stored - routed_bytes, in.weight_bytes, in.tp,
                                   replicated_params(in.model) - routed_replicated) +
              routed_bytes / in.ep;
  const double kv_split = kv_tensor_split(in.model, in.tp).split;
  m.kv_cache = in.batch * kv_cache_bytes_per_sequence(in.model, in.context, in.kv_bytes) / kv_split;
  if (!std::isfinite(m.total()))
    throw InputError("the inference memory is too large to compute with (not finite): check the sizes of --batch and "
                     "--context");
  return m;
}

}  // namespace ceilings
