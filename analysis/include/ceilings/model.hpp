// Model arithmetic from a Hugging Face config.json: exact parameter counts, FLOPs per token under a
// named convention, KV-cache bytes per token. Feeds `ceilings model`, mfu, mbu, memory and roofline.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ceilings/json_fields.hpp"

namespace ceilings {

// Bytes per weight by class: `quantized` for the weights a checkpoint's quantization covers, `other` for the rest.
// A plain number is one storage type for every weight (what --weight-dtype gives).
struct WeightBytes {
  enum class Covers {
    kNothing,        // every weight at `other`
    kRoutedExperts,  // the routed experts' weight matrices (gpt-oss's mxfp4; their biases are not)
    kLayerMatrices,  // every weight matrix of the decoder layers (DeepSeek-V3's fp8): attention, MLP, experts
  };
  Covers covers = Covers::kNothing;
  double quantized = 2, other = 2;
  WeightBytes(double uniform = 2) : quantized(uniform), other(uniform) {}  // NOLINT: implicit, one type for all
  // Bytes of `params` parameters, `layer_matrices` of them in the decoder layers' weight matrices and
  // `routed_matrices` of those in the routed experts'.
  double of(double params, double layer_matrices, double routed_matrices) const;
};

// A config's quantization_config: how the checkpoint stores its weights.
struct CheckpointQuantization {
  std::string method;     // quant_method as stated
  bool applied = false;   // `bytes` is the checkpoint's layout (mxfp4; fp8 with weight_block_size)
  WeightBytes bytes;      // the rest bf16
  std::string layout;     // applied: "mxfp4 experts, bf16 rest"; not applied: why not
};

// The shape of a decoder-only transformer, as far as counting needs it. Built from a Hugging Face
// config (parse_hf_config) or from flags (a Megatron-style GPT).
struct ModelConfig {
  std::string model_type;    // "llama", "llama4", "qwen3", "mixtral", "gpt_oss", "gemma3_text", ... or "flags"
  // What the count leaves out of the checkpoint (Gemma 3's and Llama 4's vision towers), "" when nothing.
  std::string not_counted;
  std::string architecture;  // architectures[0] when given
  std::int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  bool gated_mlp = true;  // SwiGLU: gate, up and down projections
  bool tied_embeddings = false;
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  int norm_params_per_hidden = 1;      // RMSNorm 1 (weight), LayerNorm 2 (weight + bias), 0 (flags: matmuls only)
  int layer_norms = 2;                 // hidden-wide norms a layer (Gemma 2/3: 4, around attention and MLP both)
  bool qk_norm = false;                // Qwen3: an RMSNorm over each head's query and key (q_norm, k_norm)
  bool attention_sinks = false;        // gpt-oss: one learned sink logit per attention head
  // The dropout training applies, whose masks the backward pass keeps (Korthikanti et al. 2022): after attention and
  // after the MLP (hidden), on the attention probabilities (attention), on the input embedding (embedding). From the
  // probabilities above 0 of the config keys its model type's Transformers modules read (none applied at 0, the
  // default of every config class counted here but GPT-2's, 0.1); a model described by flags is Korthikanti's GPT,
  // with all three.
  bool hidden_dropout = true, attention_dropout = true, embedding_dropout = true;
  // Eager attention as the type's Transformers eager_attention_forward runs it in 16-bit training: its softmax in
  // fp32 (the Llama family, Mistral, Qwen, Mixtral, Phi-3, GLM-4.5, DeepSeek, Gemma; GPT-2 with
  // reorder_and_upcast_attn) or in the 16-bit type (GPT-2, gpt-oss, Llama 4; Korthikanti's GPT, a model given by
  // flags); Gemma 2's attention logit softcapping keeps its tanh output too.
  bool eager_fp32_softmax = false, attention_softcapping = false;
  std::int64_t learned_positions = 0;  // GPT-2: a position embedding table of this many rows
  // Sliding-window attention: window_layers of the layers (Mistral all, gpt-oss every other one) attend to the
  // last sliding_window tokens only and cache no more; the others attend to everything. Unset: none slides.
  std::optional<std::int64_t> sliding_window;
  std::int64_t window_layers = 0;
  // Chunked local attention (Llama 4's RoPE layers): chunk_layers of the layers cut the sequence into chunks of
  // attention_chunk tokens from its first token, and a query attends to the keys of its own chunk only, from the
  // chunk's first token to itself (not the last attention_chunk tokens, as a window would); such a layer caches
  // at most a chunk. Unset: no layer is chunked.
  std::optional<std::int64_t> attention_chunk;
  std::int64_t chunk_layers = 0;
  // How the checkpoint's layer `layers`, the one past the model's last, would attend (a multi-token-prediction
  // module's decoder layer is built as it: flop_shape): by the rule that gives each layer its kind (Gemma 3: full
  // where (layers + 1) % 6 == 0, else sliding), or by layer_types / no_rope_layers continued with their shortest
  // period (gpt-oss's alternation: 2) where they hold it twice or more, else as their last layer. Sliding or
  // chunked only where some layer of the model is (the window or chunk above is set).
  enum class LayerAttention { kFull, kSliding, kChunked };
  LayerAttention next_layer_attention = LayerAttention::kFull;
  // Mixture of experts (0 experts: dense). Layer l is an MoE layer when l >= first_dense_layers,
  // (l + moe_layer_offset) % moe_layer_freq == 0 and l is not in dense_layers (DeepSeek: first_k_dense_replace and
  // moe_layer_freq; Qwen3-MoE: decoder_sparse_step counted from 1 and mlp_only_layers).
  std::int64_t routed_experts = 0, experts_per_token = 0, shared_experts = 0, expert_ffn = 0;
  std::int64_t first_dense_layers = 0, moe_layer_freq = 1, moe_layer_offset = 0;
  std::vector<std::int64_t> dense_layers;
  bool router_bias_per_expert = false;  // DeepSeek-V3's e_score_correction_bias, gpt-oss's router bias
  // Multi-head latent attention (DeepSeek-V2/V3): kv_lora_rank > 0.
  std::int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  std::int64_t mtp_layers = 0;  // DeepSeek-V3 multi-token-prediction modules (counted apart)
  std::optional<CheckpointQuantization> quantization;  // the config's quantization_config, when it has one

  bool is_moe() const { return routed_experts > 0; }
  bool is_mla() const { return kv_lora_rank > 0; }
  bool is_moe_layer(std::int64_t layer) const;
  bool has_dense_mlp_layer() const;  // a layer with the plain MLP of width ffn (every layer of a dense model)
  // Per-head width of the query/key dot product and of the value vector.
  std::int64_t qk_head_dim() const { return is_mla() ? qk_nope_head_dim + qk_rope_head_dim : head_dim; }
  std::int64_t value_head_dim() const { return is_mla() ? v_head_dim : head_dim; }
};

// Reads a Hugging Face config.json. Missing, negative or contradictory fields and model types this
// version cannot count are InputErrors naming the field.
ModelConfig parse_hf_config(const json& document, const std::string& origin = "config.json");

// A model with learned absolute positions (GPT-2's n_positions) has no position for a token past them: `tokens`
// beyond them is an InputError naming `flag`. Rotary and other relative positions have no such table.
void require_positions(const ModelConfig& model, double tokens, const std::string& flag);
ModelConfig read_hf_config(const std::string& path);

// A Megatron-style GPT from flags: no biases or norms counted (matmul parameters only, as in
// Narayanan et al. 2021 eq. 3). ffn 0 means 4*hidden (gated, swiglu: 8*hidden/3 rounded down to a multiple
// of 64, as Megatron-LM). vocab 0 leaves out the logit layer; tied: the logit layer is the embedding table
// (Megatron-LM's GPT default), otherwise a table of its own (Llama's).
ModelConfig flags_model(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t kv_heads,
                        std::int64_t ffn, std::int64_t vocab, bool swiglu, bool tied = false);

// Counted in T: std::int64_t (ParamCounts, exact), or long double (a bound that cannot overflow).
template <class T>
struct ParamCountsOf {
  T total{};      // every parameter of the main model (MTP modules excluded)
  T active{};     // used per token: total minus the routed experts a token does not visit
  T embedding{};  // input token (+ position) embedding tables
  T lm_head{};    // the output projection when untied (0 when tied to the embedding)
  T attention{}, mlp{}, norms{}, router{};  // over all layers
  T mtp{};  // DeepSeek-V3 multi-token-prediction module(s), not in total
  // Parameters that multiply each token's activations (2 FLOPs each per token): active minus the
  // input embedding (a lookup), plus a tied embedding matrix once for the logits.
  T matmul_active{};
  T matmul_logits{};  // the part of matmul_active that is the logit layer (not recomputed)
};
using ParamCounts = ParamCountsOf<std::int64_t>;
// An InputError when the counts would not fit in int64 (more than 2^62) or the model has more than a
// million layers.
ParamCounts count_params(const ModelConfig& model);

// Attention FLOP conventions. Non-causal: every query meets every key (PaLM appendix B and
// Narayanan et al. 2021 eq. 3, 12*L*H*Q*T per token for training). Causal: the masked half is not
// counted (current Megatron-LM, FlashAttention), half the non-causal term in a full or chunked layer; a sliding-window
// layer counts its window w non-causal and its mean causal span causal, near w where the sequence is much longer.
enum class AttentionConvention { kNonCausal, kCausal };
AttentionConvention parse_attention_convention(const std::string& name);  // "noncausal" | "causal"
std::string convention_name(AttentionConvention c);
struct FlopShape;
// The same, saying where a sliding window or an attention chunk shorter than `seq` caps each query's keys (the T
// of L*H*Q*T) and in how many of the layers.
std::string convention_name(AttentionConvention c, const FlopShape& shape, double seq);

enum class Recompute { kNone, kSelective, kFull };
Recompute parse_recompute(const std::string& name);  // "none" | "selective" | "full"
std::string recompute_name(Recompute r);

// The shape the FLOP formulas need: matmul parameters, and the attention dimensions.
struct FlopShape {
  double matmul_params = 0;                             // per token, 2 FLOPs each in the forward pass
  double logit_params = 0;                              // the part of matmul_params not recomputed under full recompute
  double layers = 0, heads = 0, qk_dim = 0, v_dim = 0;  // attention term; 0 layers: no attention term
  std::optional<double> window;                         // sliding-window attention span ...
  double window_layers = 0;                             // ... of this many of the layers (the rest see every key)
  std::optional<double> chunk;                          // chunked local attention's chunk ...
  double chunk_layers = 0;                              // ... in this many other layers
};
FlopShape flop_shape(const ModelConfig& model);
// The same with `mtp_modules` multi-token-prediction modules trained beside the model (DeepSeek-V3's recipe,
// Megatron-LM's --mtp-num-layers; DeepSeek-V3 report sec. 2.2): each token goes through each module's eh_proj
// (2h -> h), its decoder layer (built as the checkpoint's layer `layers`, the one mtp_params counts: DeepSeek-V3's an
// MoE layer, its active experts only) and the shared output head again. Their matmul parameters join matmul_params,
// their heads logit_params, their layers the attention layers (sliding, chunked or seeing every key as that layer
// would: next_layer_attention), so the attention convention and the recomputation apply to them as to the main layers.
// Their norms, as the main model's, are not counted; nor is the shared embedding's lookup. 0: flop_shape(model).
// A negative count, or more than kMaxMtpModules, is an InputError.
inline constexpr std::int64_t kMaxMtpModules = 1000000;  // as many as the layers a model may have
FlopShape flop_shape(const ModelConfig& model, std::int64_t mtp_modules);

// Forward attention-score FLOPs per token at sequence length `seq` (QK^T and attention*V):
// non-causal 2*L*H*(d_qk + d_v)*T (= 4*L*H*Q*T with d_qk = d_v = Q); causal the mean over positions; T capped
// by the window in the layers that slide. A chunked layer splits the seq tokens into q = floor(seq / C) whole
// chunks of C and one of r = seq - q*C, each query meeting its own chunk's keys: T = (q*C^2 + r^2) / seq
// non-causal (every key of the chunk), half that causal (the chunk's keys up to the query).
double attention_flops_forward(const FlopShape& s, double seq, AttentionConvention c);
// Forward attention-score FLOPs of one decoded token whose context holds `context` tokens, itself included: it
// meets every key in a full layer, the last min(context, W) in a sliding one, and in a chunked one the keys of
// its own chunk, context - C*floor((context - 1) / C) (C where context is a multiple of C, 1 just past it).
double attention_flops_decode(const FlopShape& s, double context);
// Forward FLOPs per token: 2*matmul_params + attention.
double forward_flops_per_token(const FlopShape& s, double seq, AttentionConvention c);
// Model FLOPs per trained token: 3x forward (backward costs two forwards), = 6N + 12*L*H*Q*T
// non-causal (PaLM appendix B). The MFU numerator.
double model_flops_per_token(const FlopShape& s, double seq, AttentionConvention c);
// Hardware FLOPs per trained token with recomputation (the HFU numerator):
// none: = model FLOPs; selective (Korthikanti et al. 2022 sec. 5): + one more forward of the attention
// core, as the recomputation runs (the paper's own HFU figures count more for it, so its HFU for selective
// recompute reads a point or two above this one); full: + one more forward of every layer but not the logit layer (Narayanan et al. 2021 eq. 3:
// 96*B*s*l*h^2*(1 + s/6h + V/16lh)).
double hardware_flops_per_token(const FlopShape& s, double seq, AttentionConvention c, Recompute r);
// The least FLOPs per trained token a job's kernels execute: its hardware FLOPs with attention causal (the masked
// half skipped), plus the score matrix (QK^T, half the attention forward) that a fused attention's backward
// computes once more (FlashAttention's and cuDNN's backward recompute it instead of storing it: 3.5 attention
// forwards per step, as FlashAttention's own benchmarks count). An attention that stores its scores runs the
// masked half instead, which is more. What utilization above 100% of a peak is tested with.
double executed_flops_per_token(const FlopShape& s, double seq, Recompute r);

// Bytes per element of a storage type: fp32 4, bf16/fp16 2, fp8/int8 1, fp4/int4 0.5.
double dtype_bytes(const std::string& dtype);
// The storage types dtype_bytes knows, for help texts (it also takes the long names: float32, bfloat16, ...).
inline constexpr const char* kStorageTypes = "fp32 | bf16 | fp16 | fp8 | int8 | fp4 | int4";

// KV-cache bytes per token of context: 2*L*kv_heads*head_dim elements (K and V), or for MLA the
// compressed latent plus the shared rope key, L*(kv_lora_rank + qk_rope_head_dim).
double kv_bytes_per_token(const ModelConfig& model, double bytes_per_element);
// KV-cache bytes of one sequence at context S: kv_bytes_per_token for each cached token, a sliding layer's share
// caching at most its window's tokens, a chunked layer's at most its chunk's (min(S, C): the most its cache
// holds up to S, where a chunk fills; Transformers' cache for those layers holds C - 1 tokens between steps and
// C during one).
double kv_cache_bytes_per_sequence(const ModelConfig& model, double context, double bytes_per_element);
// KV-cache bytes a decode step at context S reads for one sequence: the keys and values its new token attends to,
// as attention_flops_decode counts them (all S, the window's, or in a chunked layer its own chunk's, S - C *
// floor((S - 1) / C): what an engine that attends by chunk, as vLLM does, reads; one that reads the whole cached
// chunk and masks, as Transformers does, reads up to kv_cache_bytes_per_sequence).
double kv_bytes_read_per_decode_step(const ModelConfig& model, double context, double bytes_per_element);

// Bytes of every weight of the main model (count_params's total) stored as `bytes` says.
double stored_weight_bytes(const ModelConfig& model, const WeightBytes& bytes);

// Weight bytes a decode step reads at batch B: every matrix except the input embedding lookup; for
// MoE the expected number of distinct routed experts B tokens visit per layer under uniform routing,
// E*(1 - (1 - k/E)^B), plus the shared experts.
double decode_weight_bytes(const ModelConfig& model, double batch, const WeightBytes& bytes);

// Tensor parallelism over `gpus` GPUs splits attention by heads, except where there are fewer heads than GPUs:
// GQA's K/V heads (k_proj and v_proj with their biases, and their cache) are copied once the GPUs outnumber
// them, as vLLM does; MLA's down-projections (q_a_proj and kv_a_proj_with_mqa with their norms and biases) and
// its latent cache are whole on every GPU (replicated layers in vLLM's DeepSeek model).
struct KvTensorSplit {
  double split = 1;              // GPUs the K/V projections and the KV cache are divided over
  double projection_params = 0;  // the parameters split only that far, all layers (GQA: k/v; MLA: q_a, kv_a)
  double projection_matrices = 0;  // of those, in weight matrices (not biases or norms)
};
KvTensorSplit kv_tensor_split(const ModelConfig& model, double gpus);
// Parameters every tensor-parallel GPU holds whole, as Megatron-LM and vLLM hold them:
//   - the norms (each layer's, its q/k norms, and the final one);
//   - the MoE routers with their biases (a DeepSeek-V3 router is 1.8M a layer);
//   - the biases of the row-parallel projections, which split their input, so that each GPU's partial product
//     is summed over the GPUs before the bias is added once: the attention output's (o_proj, GPT-2's attn.c_proj)
//     and the MLP down projection's (down_proj, GPT-2's mlp.c_proj), in an MoE layer each routed and shared
//     expert's (gpt-oss: down_proj_bias, hidden_size an expert). The column-parallel biases (q/k/v, gate/up,
//     GPT-2's c_attn and c_fc) split with their outputs;
//   - a learned position table (GPT-2's wpe), whose rows are positions, not the vocabulary the token embedding
//     is split by.
// Of the main model, as count_params's total (MTP modules not included).
double replicated_params(const ModelConfig& model);
// Of replicated_params, the parameters a decode step at batch B reads, as decode_weight_bytes counts them: all but
// the learned position table (a lookup, as the token embedding is) and the down-projection biases of the routed
// experts no token visits (E - E*(1 - (1 - k/E)^B) of them an MoE layer).
double decode_replicated_params(const ModelConfig& model, double batch);
// Weight bytes one of `gpus` tensor-parallel GPUs holds (or reads) of `weight_bytes`: an even share, except the
// K/V projections above, which are divided over kv_tensor_split(...).split GPUs only, and `replicated`
// parameters, which every GPU holds whole: replicated_params, or the part of it the weight bytes cover
// (decode_replicated_params for a decode step's, less the routed experts' biases where expert parallelism holds
// those). Replicated parameters (norms, routers, biases) are never quantized: `bytes.other` each.
double weight_bytes_per_gpu(const ModelConfig& model, double weight_bytes, const WeightBytes& bytes, double gpus,
                            double replicated);

// Parameters of transformer layer `layer` alone: its attention, two norms and MLP (or router and experts), and
// of those its routed experts' (what expert parallelism divides).
struct LayerParams {
  double total = 0, routed_experts = 0;
  // Of total, what every tensor-parallel GPU holds whole (norms, router, row-parallel biases: replicated_params);
  // of that and of routed_experts, the routed experts' down-projection biases, which expert parallelism divides
  // with their experts.
  double replicated = 0, routed_replicated = 0;
  // Of total and of routed_experts, the weight matrices (what a checkpoint's quantization covers).
  double matrices = 0, routed_matrices = 0;
};
LayerParams layer_params(const ModelConfig& model, std::int64_t layer);
// The mtp_layers multi-token-prediction modules as training holds them (count_params's mtp less each module's own
// embedding and output head, which training shares with the model), by the same parts: enorm, hnorm, eh_proj,
// shared_head.norm and a decoder layer, the checkpoint's layer `layers` (an MoE layer in DeepSeek-V3 and GLM-4.5).
// replicated: the three norms and the layer's replicated parts; its K/V (MLA: down-) projections are not in it, but
// split as a main layer's do (kv_tensor_split).
LayerParams mtp_params(const ModelConfig& model);

// Everything `ceilings model --json` prints.
json model_summary_json(const ModelConfig& model, double seq, const std::string& kv_dtype, AttentionConvention c);

// Tensor parallelism splits whole attention heads (Megatron-LM and vLLM refuse anything else): `tp` divides the
// query heads, and divides the KV heads or is a multiple of them (each KV head then held by tp/kv GPUs); it
// divides the MLP width where a layer is dense and the expert MLP width of a MoE (each split into equal
// column blocks); a pipeline stage holds at least one layer. InputError naming `tp_flag` (--tp, --gpus)
// otherwise.
void check_parallel_split(const ModelConfig& model, double tp, double pp, const std::string& tp_flag);

}  // namespace ceilings
