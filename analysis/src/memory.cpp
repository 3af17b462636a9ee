// Training and inference memory per GPU: ZeRO-paper optimizer accounting, Korthikanti et al. 2022
// activation formulas, KV cache from the model's attention shape.
#include "ceilings/memory.hpp"

#include <algorithm>
#include <cmath>

namespace ceilings {

namespace {
constexpr double kMaxJobGpus = 1048576;  // 2^20 GPUs: far beyond any training or serving job
}  // namespace

double activation_bytes_per_layer(double s, double b, double h, double a, int t, bool sp, Recompute r,
                                  bool scores_stored) {
  const double sbh = s * b * h, td = static_cast<double>(t);
  if (r == Recompute::kFull) return 2.0 * sbh / (sp ? td : 1.0);
  const double attention_core = r == Recompute::kSelective || !scores_stored ? 0.0 : 5.0 * a * s / (h * td);
  if (t == 1) return sbh * (34.0 + attention_core);
  if (sp) return sbh * (34.0 / td + attention_core);
  return sbh * (10.0 + 24.0 / td + attention_core);
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
  require_count(in.micro_batch, "--batch (micro-batch)");
  const double per_rank = in.params / (static_cast<double>(in.tp) * in.pp);
  const double dp = in.dp;
  MemoryEstimate m;
  m.weights = 2.0 * per_rank / (in.zero_stage >= 3 ? dp : 1.0);
  m.gradients = 2.0 * per_rank / (in.zero_stage >= 2 ? dp : 1.0);
  m.optimizer = 12.0 * per_rank / (in.zero_stage >= 1 ? dp : 1.0);
  if (in.model) {
    require_length(in.seq, "--seq (for the activation estimate)");
    const ModelConfig& c = *in.model;
    check_parallel_split(c, in.tp, in.pp, "--tp");
    m.activations = static_cast<double>(c.layers) *
                    activation_bytes_per_layer(in.seq, in.micro_batch, static_cast<double>(c.hidden),
                                               static_cast<double>(c.heads), in.tp, in.sequence_parallel, in.recompute,
                                               in.eager_attention);
    m.activations_estimated = true;
  }
  if (!std::isfinite(m.total()))
    throw InputError("the training memory is too large to compute with (not finite): check the sizes of --params, "
                     "--batch and --seq");
  return m;
}

MemoryEstimate infer_memory(const InferMemoryInput& in) {
  if (in.tp < 1) throw InputError("--tp must be at least 1");
  if (in.tp > kMaxJobGpus) throw InputError("--tp is more GPUs than any job runs on (at most 2^20)");
  require_count(in.batch, "--batch");
  require_length(in.context, "--context");
  check_parallel_split(in.model, in.tp, 1, "--tp");
  MemoryEstimate m;
  // Heads split over the GPUs, but GQA's K/V heads are copied past one per GPU, and MLA keeps its latent cache and
  // down-projections whole on every GPU.
  m.weights = weight_bytes_per_gpu(in.model, static_cast<double>(count_params(in.model).total) * in.weight_bytes,
                                   in.weight_bytes, in.tp);
  const double kv_split = kv_tensor_split(in.model, in.tp).split;
  m.kv_cache = in.batch * cached_tokens(in.model, in.context) * kv_bytes_per_token(in.model, in.kv_bytes) / kv_split;
  if (!std::isfinite(m.total()))
    throw InputError("the inference memory is too large to compute with (not finite): check the sizes of --batch and "
                     "--context");
  return m;
}

}  // namespace ceilings
