// Model arithmetic from a Hugging Face config.json: exact parameter counts (summed module by module as
// the Transformers implementation allocates them), FLOPs per token and KV-cache bytes per token.
#include "ceilings/model.hpp"
#include "ceilings/units.hpp"

#include <algorithm>
#include <cmath>

namespace ceilings {

void require_positions(const ModelConfig& m, double tokens, const std::string& flag) {
  if (m.learned_positions > 0 && tokens > static_cast<double>(m.learned_positions))
    throw InputError(flag + " " + format_fixed(tokens, 0) + " is more tokens than the " +
                     std::to_string(m.learned_positions) + " positions " +
                     (m.model_type.empty() ? std::string("the model") : m.model_type) +
                     " learned (n_positions): it has no position for the rest");
}

bool ModelConfig::is_moe_layer(std::int64_t layer) const {
  if (!is_moe()) return false;
  return layer >= first_dense_layers && moe_layer_freq > 0 && (layer + moe_layer_offset) % moe_layer_freq == 0 &&
         !std::binary_search(dense_layers.begin(), dense_layers.end(), layer);
}

bool ModelConfig::has_dense_mlp_layer() const {
  if (!is_moe()) return layers > 0;
  if (!dense_layers.empty()) return true;
  // Past the first dense layers the pattern repeats every moe_layer_freq layers: one period tells (a config of 2^40
  // layers is not walked).
  const std::int64_t n = std::min(layers, first_dense_layers + std::max<std::int64_t>(moe_layer_freq, 1) + 1);
  for (std::int64_t l = 0; l < n; ++l)
    if (!is_moe_layer(l)) return true;
  return false;
}

namespace {

const char* kKnownTypes =
    "llama, llama4_text, llama4, mistral, qwen2, qwen3, qwen3_moe, mixtral, gpt_oss, gemma2, gemma3_text, gemma3, "
    "phi3, glm4_moe, gpt2, deepseek_v2, deepseek_v3";

// Layers are counted one by one; far more than any model has would only make that loop long.
constexpr std::int64_t kMaxLayers = 1000000;

// No model's size, width, count or rank comes near 2^40; below it a sum of two never leaves int64 (a typo of
// 2^63 - 1 shared experts wrapped the count to a plausible 666 billion parameters), and products are bounded in
// count_params.
constexpr std::int64_t kMaxSize = std::int64_t{1} << 40;
std::int64_t size_of(const Fields& f, const std::string& key, std::int64_t minimum) {
  const std::int64_t v = f.integer(key, minimum);
  if (v > kMaxSize) f.fail(key, std::to_string(v) + " is larger than any model's (2^40): check it");
  return v;
}
std::optional<std::int64_t> optional_size_of(const Fields& f, const std::string& key, std::int64_t minimum) {
  if (!f.has(key)) return std::nullopt;
  return size_of(f, key, minimum);
}

// A config's multi-token-prediction modules (DeepSeek's and GLM-4.5's `key`), 0 when not stated: refused here past
// kMaxMtpModules, so that every command refuses such a config alike, by its field.
std::int64_t mtp_modules_of(const Fields& f, const std::string& key) {
  const std::int64_t n = optional_size_of(f, key, 0).value_or(0);
  if (n > kMaxMtpModules)
    f.fail(key, std::to_string(n) + " multi-token-prediction modules are more than this version counts (at most " +
                    std::to_string(kMaxMtpModules) + ")");
  return n;
}

// A key whose absence Transformers' config class fills with a default that is not "none" (MistralConfig's 8 KV
// heads and 4096-token window, DeepseekV3Config's 256 experts): absent, the count would silently differ from the
// model Transformers builds. null still means none (every head a KV head, no window, no query LoRA).
void require_stated(const Fields& f, const std::string& key, const std::string& config_class,
                    const std::string& transformers_default) {
  if (!f.raw().contains(key))
    f.fail(key, "is absent: Transformers' " + config_class + " would take " + transformers_default +
                    ", and this version counts only what the config states; add the key (null where the model has "
                    "none)");
}

// A key the config class has no "none" for (Qwen3's and Gemma's head_dim, Gemma's KV heads): stated as null,
// Transformers refuses the config, where read_attention would quietly take hidden_size / heads or every head.
void refuse_null(const Fields& f, const std::string& key, const std::string& config_class) {
  if (f.raw().contains(key) && f.raw()[key].is_null())
    f.fail(key, "is null, which Transformers' " + config_class + " refuses: state the number");
}

// Phi3's and Glm4Moe's attention take a stated head_dim as it is (hidden_size / heads only where the key is absent):
// null builds no model there, and is not read as absent here.
void refuse_null_head_dim(const Fields& f, const std::string& model) {
  if (f.raw().contains("head_dim") && f.raw()["head_dim"].is_null())
    f.fail("head_dim", "is null, with which Transformers' " + model +
                           " attention builds no model: state the number or leave the key out (hidden_size / "
                           "num_attention_heads)");
}

// An expert count Transformers 5 saves under either of two names (an attribute_map alias: Qwen3-MoE's num_experts
// is num_local_experts there, and gpt-oss takes num_experts for its num_local_experts): the key the config states,
// required as require_stated requires `key`; both stated must agree.
std::string stated_expert_key(const Fields& f, const std::string& key, const std::string& alias,
                              const std::string& config_class, const std::string& transformers_default) {
  const json& raw = f.raw();
  const bool has_key = raw.contains(key), has_alias = raw.contains(alias);
  if (has_key && has_alias && raw[key] != raw[alias])
    f.fail(alias, "is " + raw[alias].dump() + " where " + key + " (the same count under Transformers' other name) is " +
                      raw[key].dump());
  if (!has_key && has_alias) return alias;
  require_stated(f, key, config_class, transformers_default);
  return key;
}

// Heads and head width of standard (non-MLA) attention, validated against each other.
void read_attention(const Fields& f, ModelConfig& m) {
  if (m.model_type == "mistral") require_stated(f, "num_key_value_heads", "MistralConfig", "8");
  if (m.model_type == "mixtral") require_stated(f, "num_key_value_heads", "MixtralConfig", "8");
  if (m.model_type == "qwen2") require_stated(f, "num_key_value_heads", "Qwen2Config", "32");
  if (m.model_type == "qwen3") require_stated(f, "num_key_value_heads", "Qwen3Config", "32");
  if (m.model_type == "qwen3_moe") require_stated(f, "num_key_value_heads", "Qwen3MoeConfig", "4");
  // Qwen3's head width is its own (128 by default), not hidden_size / heads (Qwen3-MoE's default is that).
  if (m.model_type == "qwen3") {
    require_stated(f, "head_dim", "Qwen3Config", "128");
    refuse_null(f, "head_dim", "Qwen3Config");
  }
  m.heads = size_of(f, "num_attention_heads", 1);
  m.kv_heads = optional_size_of(f, "num_key_value_heads", 1).value_or(m.heads);
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    f.fail("num_key_value_heads",
           "must divide num_attention_heads (" + std::to_string(m.heads) + "), found " + std::to_string(m.kv_heads));
  if (auto hd = optional_size_of(f, "head_dim", 1)) {
    m.head_dim = *hd;
  } else {
    if (m.hidden % m.heads != 0)
      f.fail("hidden_size", std::to_string(m.hidden) + " is not divisible by num_attention_heads (" +
                                std::to_string(m.heads) + ") and no head_dim is given");
    m.head_dim = m.hidden / m.heads;
  }
}

// The fields every Hugging Face decoder config of the Llama family spells alike.
ModelConfig read_decoder_sizes(const Fields& f, const std::string& type) {
  ModelConfig m;
  m.model_type = type;
  m.hidden = size_of(f, "hidden_size", 1);
  m.layers = size_of(f, "num_hidden_layers", 1);
  m.vocab = size_of(f, "vocab_size", 1);
  m.ffn = size_of(f, "intermediate_size", 1);
  return m;
}

// Which layers attend through a sliding window. Transformers' Qwen2/Qwen3 and gpt-oss configs name each layer's
// kind in layer_types ("sliding_attention" or "full_attention"); absent, Qwen's layers from max_window_layers on
// slide (only when use_sliding_window), gpt-oss's every other one from the first. A sliding layer without a window
// (sliding_window null) sees everything, as Transformers builds it.
// The kind a list of each layer's kind gives the layer past its last (ModelConfig::next_layer_attention): that of
// layer n - p, p the list's shortest period (kinds[i] == kinds[i + p] throughout: gpt-oss's alternation 2, Gemma 3's
// 6) where the list holds it twice or more, else the last layer's (Qwen's sliding layers from max_window_layers on).
bool next_layer_is(const std::vector<bool>& kinds) {
  const std::size_t n = kinds.size();
  std::vector<std::size_t> border(n, 0);  // the longest proper prefix of kinds[0..i] that also ends it
  for (std::size_t i = 1; i < n; ++i) {
    std::size_t k = border[i - 1];
    while (k > 0 && kinds[i] != kinds[k]) k = border[k - 1];
    border[i] = kinds[i] == kinds[k] ? k + 1 : 0;
  }
  const std::size_t period = n - border[n - 1];
  return 2 * period <= n ? kinds[n - period] : kinds[n - 1];
}

// layer_types: one entry a layer, each "full_attention" or `other`; how many are `other` (`known` ends the
// message that refuses any other entry), and whether the layer past the last would be (next_layer_is).
struct LayerTypeCount {
  std::int64_t other = 0;
  bool next_other = false;
};
LayerTypeCount count_layer_types(const Fields& f, const ModelConfig& m, const std::string& other,
                                 const std::string& known) {
  const json& types = f.array("layer_types");
  if (static_cast<std::int64_t>(types.size()) != m.layers)
    f.fail("layer_types", "names " + std::to_string(types.size()) + " layers, the model has " +
                              std::to_string(m.layers) + " (num_hidden_layers)");
  LayerTypeCount n;
  std::vector<bool> kinds;
  for (const json& t : types) {
    const std::string kind = t.is_string() ? t.get<std::string>() : std::string();
    if (kind == other)
      ++n.other;
    else if (kind != "full_attention")
      f.fail("layer_types", "holds " + (t.is_string() ? "'" + kind + "'" : t.dump()) + ": " + known);
    kinds.push_back(kind == other);
  }
  n.next_other = next_layer_is(kinds);
  return n;
}

void read_layer_windows(const Fields& f, ModelConfig& m, std::optional<std::int64_t> window) {
  std::int64_t sliding = 0;
  bool next_slides = false;  // layer `layers`, by the same rule
  if (f.has("layer_types")) {
    const LayerTypeCount n =
        count_layer_types(f, m, "sliding_attention", "this version knows full_attention and sliding_attention");
    sliding = n.other;
    next_slides = n.next_other;
  } else if (m.model_type == "gpt_oss" || m.model_type == "gemma2") {
    sliding = (m.layers + 1) / 2;  // GptOssConfig, Gemma2Config: layers 0, 2, 4, ... slide
    next_slides = m.layers % 2 == 0;
  } else if (m.model_type == "gemma3_text") {
    // Gemma3TextConfig: layer i attends to everything where (i + 1) % sliding_window_pattern == 0 (null: the modulo
    // fails there, review 48).
    refuse_null(f, "sliding_window_pattern", "Gemma3TextConfig");
    const std::int64_t pattern = optional_size_of(f, "sliding_window_pattern", 1).value_or(6);
    sliding = m.layers - m.layers / pattern;
    next_slides = (m.layers + 1) % pattern != 0;
  } else {
    const std::int64_t full = std::min(m.layers, optional_size_of(f, "max_window_layers", 0).value_or(28));
    sliding = m.layers - full;
    next_slides = sliding > 0;  // from max_window_layers on
  }
  if (window && sliding > 0) {
    m.sliding_window = window;
    m.window_layers = sliding;
    if (next_slides) m.next_layer_attention = ModelConfig::LayerAttention::kSliding;
  }
}

ModelConfig parse_llama_like(const Fields& f, const std::string& type) {
  ModelConfig m = read_decoder_sizes(f, type);
  read_attention(f, m);
  m.tied_embeddings = f.optional_boolean("tie_word_embeddings").value_or(false);
  m.gated_mlp = true;
  m.norm_params_per_hidden = 1;
  const bool qwen3 = type == "qwen3" || type == "qwen3_moe";
  if (type == "qwen2") {
    m.qkv_bias = true;  // Qwen2 always has q/k/v biases and no o_proj bias
  } else {
    m.qkv_bias = m.o_bias = f.optional_boolean("attention_bias").value_or(false);
    if (!qwen3) m.mlp_bias = f.optional_boolean("mlp_bias").value_or(false);
  }
  if (type == "qwen2" || qwen3) {
    std::optional<std::int64_t> window;
    if (f.optional_boolean("use_sliding_window").value_or(false)) {
      const std::string config_class = type == "qwen2" ? "Qwen2Config" : type == "qwen3" ? "Qwen3Config" : "Qwen3MoeConfig";
      require_stated(f, "sliding_window", config_class, "a 4096-token window");
      window = optional_size_of(f, "sliding_window", 1);
      // Transformers 4.51 slid Qwen3-MoE's layers from max_window_layers on, 4.55 and later slide every one
      // (max_window_layers dropped): which the model was trained with, the config does not say.
      if (type == "qwen3_moe" && window && !f.has("layer_types"))
        f.fail("use_sliding_window",
               "is true: Transformers 4.51 slides Qwen3-MoE's layers from max_window_layers on and 4.55 on every "
               "layer, so which ones slide is not in the config; name each layer's kind in layer_types "
               "(full_attention or sliding_attention)");
    }
    read_layer_windows(f, m, window);
  } else {
    if (type == "mistral") require_stated(f, "sliding_window", "MistralConfig", "a 4096-token window");
    if (type == "mistral" || type == "mixtral") {
      m.sliding_window = optional_size_of(f, "sliding_window", 1);
      if (m.sliding_window) {
        m.window_layers = m.layers;
        m.next_layer_attention = ModelConfig::LayerAttention::kSliding;
      }
    }
  }
  m.qk_norm = qwen3;
  if (type == "mixtral") {
    m.routed_experts = size_of(f, "num_local_experts", 1);
    m.experts_per_token = size_of(f, "num_experts_per_tok", 1);
    if (m.experts_per_token > m.routed_experts)
      f.fail("num_experts_per_tok", "is larger than num_local_experts (" + std::to_string(m.routed_experts) + ")");
    m.expert_ffn = m.ffn;
  }
  if (type == "qwen3_moe") {
    const std::string experts = stated_expert_key(f, "num_experts", "num_local_experts", "Qwen3MoeConfig", "128");
    m.routed_experts = optional_size_of(f, experts, 0).value_or(0);
    if (m.routed_experts > 0) {
      require_stated(f, "num_experts_per_tok", "Qwen3MoeConfig", "8");
      require_stated(f, "moe_intermediate_size", "Qwen3MoeConfig", "768");
      m.experts_per_token = size_of(f, "num_experts_per_tok", 1);
      if (m.experts_per_token > m.routed_experts)
        f.fail("num_experts_per_tok", "is larger than " + experts + " (" + std::to_string(m.routed_experts) + ")");
      m.expert_ffn = size_of(f, "moe_intermediate_size", 1);
      // Qwen3MoeDecoderLayer: sparse where (layer + 1) % decoder_sparse_step == 0 and not in mlp_only_layers (null:
      // the modulo fails there, review 48).
      refuse_null(f, "decoder_sparse_step", "Qwen3MoeConfig");
      m.moe_layer_freq = optional_size_of(f, "decoder_sparse_step", 1).value_or(1);
      m.moe_layer_offset = 1;
      if (f.has("mlp_only_layers")) {
        for (const json& l : f.array("mlp_only_layers")) {
          if (!l.is_number_integer() || l.get<std::int64_t>() < 0 || l.get<std::int64_t>() >= m.layers)
            f.fail("mlp_only_layers", "holds " + l.dump() + ", not a layer index below num_hidden_layers (" +
                                          std::to_string(m.layers) + ")");
          m.dense_layers.push_back(l.get<std::int64_t>());
        }
        std::sort(m.dense_layers.begin(), m.dense_layers.end());  // is_moe_layer searches it
      }
    }
  }
  return m;
}

// Gemma 2 and Gemma 3's language model (Transformers' Gemma2ForCausalLM, Gemma3ForCausalLM): four RMSNorms a layer
// (before and after attention and the MLP), Gemma 3's q/k norms, a head width of its own (256 by default, not
// hidden_size / heads), the output layer tied to the embedding by default, and layers that slide: Gemma 2 every
// other one, Gemma 3 five of six.
ModelConfig parse_gemma(const Fields& f, const std::string& type) {
  const std::string config_class = type == "gemma2" ? "Gemma2Config" : "Gemma3TextConfig";
  require_stated(f, "num_key_value_heads", config_class, "4");
  require_stated(f, "head_dim", config_class, "256");
  require_stated(f, "sliding_window", config_class, "a 4096-token window");
  refuse_null(f, "num_key_value_heads", config_class);
  refuse_null(f, "head_dim", config_class);
  ModelConfig m = read_decoder_sizes(f, type);
  read_attention(f, m);
  m.tied_embeddings = f.optional_boolean("tie_word_embeddings").value_or(true);
  m.gated_mlp = true;
  m.norm_params_per_hidden = 1;
  m.layer_norms = 4;
  m.qkv_bias = m.o_bias = f.optional_boolean("attention_bias").value_or(false);
  m.qk_norm = type == "gemma3_text";
  read_layer_windows(f, m, optional_size_of(f, "sliding_window", 1));
  return m;
}

// Gemma 3 with vision (Gemma3ForConditionalGeneration): its language model from text_config, whose omitted keys
// take Gemma3TextConfig's defaults as Transformers builds it (the published configs of the 4b, 12b and 27b leave
// the heads, the head width and the vocabulary to them); the SigLIP vision tower and the projector are not counted.
ModelConfig parse_gemma3_multimodal(const Fields& f, const std::string& origin) {
  json text = f.has("text_config") ? f.object("text_config").raw() : json::object();
  const json defaults = {{"vocab_size", 262208},       {"hidden_size", 2304},     {"intermediate_size", 9216},
                         {"num_hidden_layers", 26},    {"num_attention_heads", 8}, {"num_key_value_heads", 4},
                         {"head_dim", 256},            {"sliding_window", 4096},   {"attention_bias", false}};
  for (const auto& [key, value] : defaults.items())
    if (!text.contains(key)) text[key] = value;
  // Transformers 5 ties the output layer by the top-level flag, 4.x by text_config's; both default to tied.
  if (!text.contains("tie_word_embeddings") && f.has("tie_word_embeddings"))
    text["tie_word_embeddings"] = f.raw()["tie_word_embeddings"];
  ModelConfig m = parse_gemma(Fields(text, origin + ".text_config"), "gemma3_text");
  m.model_type = "gemma3";
  m.not_counted = "the vision tower and its projector (SigLIP, about 0.42 billion parameters in Gemma 3 4b-27b)";
  return m;
}

// Llama 4's language model (Transformers' Llama4ForCausalLM, Llama4TextConfig; the same in 4.57 and 5.x except
// where said). Attention: q/k/v/o without biases, the RoPE layers' q/k norm an L2 norm without weights. MoE layers
// (moe_layers, or every interleave_moe_layer_step-th counted from 1) hold num_local_experts routed experts of
// intermediate_size, a token's num_experts_per_tok of them, one shared expert of the same width and an unbiased
// router; the other layers a dense MLP of intermediate_size_mlp. Layers whose kind layer_types names, or else the
// RoPE layers of no_rope_layers (a 1 is a RoPE layer; empty or absent, every layer but each
// no_rope_layer_interval-th, 4 by default, which the published configs rely on), attend within chunks of
// attention_chunk_size tokens; the NoPE layers attend to everything.
ModelConfig parse_llama4(const Fields& f, const std::string& type) {
  const std::string config_class = "Llama4TextConfig";
  require_stated(f, "num_key_value_heads", config_class, "8");
  require_stated(f, "head_dim", config_class, "128");
  for (const auto& [key, read_as] : {std::pair<const char*, const char*>{"num_key_value_heads", "every head"},
                                     {"head_dim", "hidden_size / num_attention_heads"}})
    if (f.raw().contains(key) && f.raw()[key].is_null())
      f.fail(key, std::string("is null, which Transformers 5's ") + config_class + " refuses (4.x read it as " +
                      read_as + "): state the number");
  // Transformers 4.x builds Llama 4's attention without biases whatever attention_bias says; 5.x gives q/k/v/o
  // biases where it is true. Which one the checkpoint holds, the config does not say.
  if (f.optional_boolean("attention_bias").value_or(false))
    f.fail("attention_bias", "is true: Transformers 4.x builds Llama 4's attention without biases whatever it says, "
                             "5.x with them, so the count depends on the version; Llama 4 has none (false)");
  ModelConfig m = read_decoder_sizes(f, type);
  read_attention(f, m);
  m.tied_embeddings = f.optional_boolean("tie_word_embeddings").value_or(false);
  m.gated_mlp = true;
  m.norm_params_per_hidden = 1;

  // MoE layers: moe_layers, or from interleave_moe_layer_step (layers step-1, 2*step-1, ...).
  bool any_moe_layer = false;
  if (f.has("moe_layers")) {
    if (m.layers > kMaxLayers)
      f.fail("num_hidden_layers", std::to_string(m.layers) + " layers are more than this version counts (" +
                                      std::to_string(kMaxLayers) + ")");
    std::vector<bool> moe(static_cast<std::size_t>(m.layers), false);
    for (const json& l : f.array("moe_layers")) {
      if (!l.is_number_integer() || l.get<std::int64_t>() < 0 || l.get<std::int64_t>() >= m.layers)
        f.fail("moe_layers", "holds " + l.dump() + ", not a layer index below num_hidden_layers (" +
                                 std::to_string(m.layers) + ")");
      moe[static_cast<std::size_t>(l.get<std::int64_t>())] = true;
    }
    for (std::int64_t l = 0; l < m.layers; ++l) {
      if (moe[static_cast<std::size_t>(l)])
        any_moe_layer = true;
      else
        m.dense_layers.push_back(l);  // ascending: is_moe_layer searches it
    }
  } else {
    require_stated(f, "interleave_moe_layer_step", config_class, "1 (every layer an MoE layer)");
    m.moe_layer_freq = size_of(f, "interleave_moe_layer_step", 1);
    m.moe_layer_offset = 1;
    any_moe_layer = m.moe_layer_freq <= m.layers;
  }
  if (any_moe_layer) {
    require_stated(f, "num_local_experts", config_class, "16");
    require_stated(f, "num_experts_per_tok", config_class, "1");
    m.routed_experts = size_of(f, "num_local_experts", 1);
    m.experts_per_token = size_of(f, "num_experts_per_tok", 1);
    if (m.experts_per_token > m.routed_experts)
      f.fail("num_experts_per_tok", "is larger than num_local_experts (" + std::to_string(m.routed_experts) + ")");
    m.shared_experts = 1;
    m.expert_ffn = m.ffn;
  } else {  // no MoE layer: a dense model
    m.dense_layers.clear();
    m.moe_layer_freq = 1;
    m.moe_layer_offset = 0;
  }
  // The dense layers' MLP width (intermediate_size is the experts'); needed only where a layer is dense.
  if (m.has_dense_mlp_layer()) {
    require_stated(f, "intermediate_size_mlp", config_class, "16384");
    m.ffn = size_of(f, "intermediate_size_mlp", 1);
  } else {
    m.ffn = optional_size_of(f, "intermediate_size_mlp", 1).value_or(0);
  }

  // Which layers attend within chunks. attention_chunk_size null: none (Transformers 5 makes every layer full;
  // 4.x cannot run such a model); absent, where some layer would attend in chunks: Llama4TextConfig's 8192 would
  // decide it, so it must be stated (a model whose every layer is full needs none).
  const std::optional<std::int64_t> chunk = optional_size_of(f, "attention_chunk_size", 1);
  const bool chunk_stated = f.raw().contains("attention_chunk_size");
  std::int64_t chunked = 0;
  bool next_chunked = false;  // layer `layers`, by the same rule
  if (f.has("layer_types")) {
    const LayerTypeCount n = count_layer_types(f, m, "chunked_attention",
                                               "Llama 4's layers attend in full_attention or chunked_attention only");
    chunked = n.other;
    next_chunked = n.next_other;
    if (chunked > 0 && chunk_stated && !chunk)
      f.fail("attention_chunk_size", "is null, and layer_types names chunked_attention layers, which need a chunk");
  } else if (chunk || !chunk_stated) {
    const json empty = json::array();
    const json& rope = f.has("no_rope_layers") ? f.array("no_rope_layers") : empty;
    if (rope.empty()) {  // Llama4TextConfig: layer i is a NoPE layer where (i + 1) % no_rope_layer_interval == 0
      const std::int64_t interval = optional_size_of(f, "no_rope_layer_interval", 1).value_or(4);
      chunked = m.layers - m.layers / interval;
      next_chunked = (m.layers + 1) % interval != 0;
    } else {
      if (static_cast<std::int64_t>(rope.size()) != m.layers)
        f.fail("no_rope_layers", "names " + std::to_string(rope.size()) + " layers, the model has " +
                                     std::to_string(m.layers) + " (num_hidden_layers)");
      std::vector<bool> kinds;
      for (const json& r : rope) {
        const bool is_bit = r.is_boolean() || (r.is_number_integer() && (r.get<std::int64_t>() == 0 ||
                                                                          r.get<std::int64_t>() == 1));
        if (!is_bit)
          f.fail("no_rope_layers", "holds " + r.dump() + ": each layer is 1 (RoPE, chunked) or 0 (NoPE, full)");
        kinds.push_back(r.is_boolean() ? r.get<bool>() : r.get<std::int64_t>() == 1);
        if (kinds.back()) ++chunked;
      }
      next_chunked = next_layer_is(kinds);
    }
  }
  if (chunked > 0 && !chunk_stated) require_stated(f, "attention_chunk_size", config_class, "an 8192-token chunk");
  if (chunk && chunked > 0) {
    m.attention_chunk = chunk;
    m.chunk_layers = chunked;
    if (next_chunked) m.next_layer_attention = ModelConfig::LayerAttention::kChunked;
  }
  return m;
}

// Llama 4 with vision (Llama4ForConditionalGeneration): its language model from text_config, which must be
// there (absent, Llama4Config builds Llama4TextConfig's defaults, a Scout) and is read as llama4_text is; the
// output layer is tied by text_config's tie_word_embeddings alone (Transformers 4.57 and 5.x build it untied
// whatever the top-level flag says). The vision tower and the projector are not counted.
ModelConfig parse_llama4_multimodal(const Fields& f) {
  if (!f.has("text_config"))
    f.fail("text_config", "is absent: Transformers' Llama4Config would take Llama4TextConfig's defaults (a model "
                          "the size of Scout), and this version counts only what the config states");
  ModelConfig m = parse_llama4(f.object("text_config"), "llama4_text");
  m.model_type = "llama4";
  m.not_counted = "the vision tower and its projector (about 0.87 billion parameters in Llama 4 Scout and Maverick)";
  return m;
}

// gpt-oss (Transformers' GptOssForCausalLM): biased q/k/v/o projections, a learned sink logit per head, a biased
// router and experts whose gate_up and down projections carry biases; every layer is an MoE layer.
ModelConfig parse_gpt_oss(const Fields& f) {
  ModelConfig m = read_decoder_sizes(f, "gpt_oss");
  require_stated(f, "num_key_value_heads", "GptOssConfig", "8");
  require_stated(f, "head_dim", "GptOssConfig", "64");
  read_attention(f, m);
  m.tied_embeddings = f.optional_boolean("tie_word_embeddings").value_or(false);
  m.gated_mlp = true;
  m.norm_params_per_hidden = 1;
  m.qkv_bias = m.o_bias = f.optional_boolean("attention_bias").value_or(true);
  m.attention_sinks = true;
  const std::string experts = stated_expert_key(f, "num_local_experts", "num_experts", "GptOssConfig", "128");
  m.routed_experts = size_of(f, experts, 1);
  m.experts_per_token = size_of(f, "num_experts_per_tok", 1);
  if (m.experts_per_token > m.routed_experts)
    f.fail("num_experts_per_tok", "is larger than " + experts + " (" + std::to_string(m.routed_experts) + ")");
  m.expert_ffn = m.ffn;
  m.mlp_bias = true;
  m.router_bias_per_expert = true;
  require_stated(f, "sliding_window", "GptOssConfig", "a 128-token window");
  read_layer_windows(f, m, optional_size_of(f, "sliding_window", 1));
  return m;
}

// Phi-3, Phi-3.5, Phi-4 and Phi-4-mini (Transformers' Phi3ForCausalLM): Llama's layer with q, k and v fused into
// qkv_proj and gate and up into gate_up_proj (as many parameters as the separate matrices), no biases, and, where
// sliding_window is stated, a window on every layer (Phi3Model masks each one alike). partial_rotary_factor
// (Phi-4-mini's 0.75) rotates part of each head and changes no count, FLOP or cache. Phi3Config's defaults leave no
// count to chance: every head a KV head, no window, untied.
ModelConfig parse_phi3(const Fields& f) {
  // Phi3Attention and Phi3MLP build no bias whatever the config says; a config claiming one describes another model.
  for (const char* key : {"attention_bias", "mlp_bias", "lm_head_bias"})
    if (f.optional_boolean(key).value_or(false))
      f.fail(key, "is true, but Transformers' Phi3 model has no biases: this config is not a phi3 model's");
  refuse_null_head_dim(f, "Phi3");
  ModelConfig m = read_decoder_sizes(f, "phi3");
  read_attention(f, m);
  m.tied_embeddings = f.optional_boolean("tie_word_embeddings").value_or(false);
  m.sliding_window = optional_size_of(f, "sliding_window", 1);
  if (m.sliding_window) {
    m.window_layers = m.layers;
    m.next_layer_attention = ModelConfig::LayerAttention::kSliding;
  }
  return m;
}

// GLM-4.5, GLM-4.5-Air and GLM-4.6 (Transformers' Glm4MoeForCausalLM): grouped-query attention with q/k/v biases
// (attention_bias; o_proj has none), q/k norms where use_qk_norm, the first first_k_dense_replace layers dense (an
// MLP of intermediate_size), every later one a sigmoid-routed MoE of n_routed_experts experts of
// moe_intermediate_size, with e_score_correction_bias, and n_shared_experts experts' width of shared MLP.
// partial_rotary_factor rotates part of each head (half by default) and changes no count. num_nextn_predict_layers
// MTP layers are in the checkpoint, not in the model Transformers builds: counted apart, as DeepSeek-V3's (a decoder
// layer, enorm, hnorm, eh_proj, shared_head.norm and the module's own embedding and output head, which the published
// safetensors totals hold).
ModelConfig parse_glm4_moe(const Fields& f) {
  const std::string config_class = "Glm4MoeConfig";
  require_stated(f, "num_key_value_heads", config_class, "8");
  refuse_null(f, "num_key_value_heads", config_class);  // None builds no k_proj there, not one KV head a head
  require_stated(f, "moe_intermediate_size", config_class, "1408");
  require_stated(f, "num_experts_per_tok", config_class, "8");
  require_stated(f, "n_shared_experts", config_class, "1");
  require_stated(f, "first_k_dense_replace", config_class, "1");
  refuse_null_head_dim(f, "Glm4Moe");
  // Transformers 5 reads n_routed_experts as num_local_experts too, and the MTP layers as num_mtp_layers.
  const std::string experts = stated_expert_key(f, "n_routed_experts", "num_local_experts", config_class, "128");
  ModelConfig m = read_decoder_sizes(f, "glm4_moe");
  read_attention(f, m);
  m.tied_embeddings = f.optional_boolean("tie_word_embeddings").value_or(false);
  m.qkv_bias = f.optional_boolean("attention_bias").value_or(false);
  m.qk_norm = f.optional_boolean("use_qk_norm").value_or(false);
  m.routed_experts = size_of(f, experts, 1);
  m.experts_per_token = size_of(f, "num_experts_per_tok", 1);
  if (m.experts_per_token > m.routed_experts)
    f.fail("num_experts_per_tok", "is larger than " + experts + " (" + std::to_string(m.routed_experts) + ")");
  m.shared_experts = size_of(f, "n_shared_experts", 0);
  m.expert_ffn = size_of(f, "moe_intermediate_size", 1);
  m.first_dense_layers = size_of(f, "first_k_dense_replace", 0);
  if (m.first_dense_layers > m.layers)
    f.fail("first_k_dense_replace", "is larger than num_hidden_layers (" + std::to_string(m.layers) + ")");
  m.router_bias_per_expert = true;  // Glm4MoeTopkRouter's e_score_correction_bias, stored with the checkpoint
  const json& raw = f.raw();
  if (f.has("num_nextn_predict_layers") && f.has("num_mtp_layers") &&
      raw["num_nextn_predict_layers"] != raw["num_mtp_layers"])
    f.fail("num_mtp_layers", "is " + raw["num_mtp_layers"].dump() + " where num_nextn_predict_layers (the same count "
                             "under Transformers' other name) is " + raw["num_nextn_predict_layers"].dump());
  const std::string mtp = f.has("num_nextn_predict_layers") || !f.has("num_mtp_layers") ? "num_nextn_predict_layers"
                                                                                        : "num_mtp_layers";
  m.mtp_layers = mtp_modules_of(f, mtp);
  return m;
}

ModelConfig parse_gpt2(const Fields& f) {
  ModelConfig m;
  m.model_type = "gpt2";
  m.hidden = size_of(f, "n_embd", 1);
  m.layers = size_of(f, "n_layer", 1);
  m.heads = m.kv_heads = size_of(f, "n_head", 1);
  if (m.hidden % m.heads != 0)
    f.fail("n_embd", std::to_string(m.hidden) + " is not divisible by n_head (" + std::to_string(m.heads) + ")");
  m.head_dim = m.hidden / m.heads;
  m.vocab = size_of(f, "vocab_size", 1);
  m.ffn = optional_size_of(f, "n_inner", 1).value_or(4 * m.hidden);
  m.learned_positions = size_of(f, "n_positions", 1);
  m.tied_embeddings = f.optional_boolean("tie_word_embeddings").value_or(true);
  m.gated_mlp = false;
  m.qkv_bias = m.o_bias = m.mlp_bias = true;  // Conv1D layers all carry biases
  m.norm_params_per_hidden = 2;               // LayerNorm: weight and bias
  return m;
}

ModelConfig parse_deepseek(const Fields& f, const std::string& type) {
  ModelConfig m = read_decoder_sizes(f, type);
  m.heads = size_of(f, "num_attention_heads", 1);
  m.kv_heads = m.heads;
  const std::string config_class = type == "deepseek_v3" ? "DeepseekV3Config" : "DeepseekV2Config";
  require_stated(f, "q_lora_rank", config_class, "1536");
  if (type == "deepseek_v3") {
    require_stated(f, "n_routed_experts", config_class, "256");
    require_stated(f, "n_shared_experts", config_class, "1");
    require_stated(f, "first_k_dense_replace", config_class, "3");
  }
  m.q_lora_rank = optional_size_of(f, "q_lora_rank", 1).value_or(0);
  m.kv_lora_rank = size_of(f, "kv_lora_rank", 1);
  m.qk_nope_head_dim = size_of(f, "qk_nope_head_dim", 0);
  m.qk_rope_head_dim = size_of(f, "qk_rope_head_dim", 1);
  m.v_head_dim = size_of(f, "v_head_dim", 1);
  m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  m.qkv_bias = m.o_bias = f.optional_boolean("attention_bias").value_or(false);
  m.tied_embeddings = f.optional_boolean("tie_word_embeddings").value_or(false);
  m.gated_mlp = true;
  m.norm_params_per_hidden = 1;
  if (f.has("n_routed_experts")) {
    m.routed_experts = size_of(f, "n_routed_experts", 1);
    m.experts_per_token = size_of(f, "num_experts_per_tok", 1);
    if (m.experts_per_token > m.routed_experts)
      f.fail("num_experts_per_tok", "is larger than n_routed_experts (" + std::to_string(m.routed_experts) + ")");
    m.shared_experts = optional_size_of(f, "n_shared_experts", 0).value_or(0);
    m.expert_ffn = size_of(f, "moe_intermediate_size", 1);
    m.first_dense_layers = optional_size_of(f, "first_k_dense_replace", 0).value_or(0);
    // More dense layers than layers would leave no MoE layer, and the counts would quietly drop the experts.
    if (m.first_dense_layers > m.layers)
      f.fail("first_k_dense_replace", "is larger than num_hidden_layers (" + std::to_string(m.layers) + ")");
    m.moe_layer_freq = optional_size_of(f, "moe_layer_freq", 1).value_or(1);
    m.router_bias_per_expert = f.optional_string("topk_method").value_or("") == "noaux_tc";
  }
  m.mtp_layers = mtp_modules_of(f, "num_nextn_predict_layers");
  return m;
}

// A modules_to_not_convert entry's last name ("model.layers.*.mlp.router": router): the modules the layout
// keeps unquantized anyway may be named; any other (part of what it quantizes, or a name this version does not
// place) leaves the layout not applied rather than guessed.
std::string last_name(const std::string& module) { return module.substr(module.rfind('.') + 1); }

// quantization_config, as Transformers reads it: mxfp4 (gpt-oss) quantizes the routed experts' weight matrices
// to 4-bit values with one 8-bit (E8M0) scale per 32, 4.25 bits a weight; fp8 with weight_block_size (DeepSeek-V3)
// quantizes every nn.Linear of the decoder layers to 1 byte with one fp32 scale a block (a partial block's scale
// is not counted: DeepSeek-V3's kv_a_proj_with_mqa, 576 rows, has 28 of them a layer, 7 kB in all). Both keep the
// embedding, the output head, norms, routers (not nn.Linear in Transformers, bf16 in DeepSeek-V3's checkpoint but
// for e_score_correction_bias, fp32: 30 kB more) and biases in bf16. Malformed values are InputErrors; a method
// or a modules_to_not_convert this version cannot place is returned not applied, for the CLI to say so.
std::optional<CheckpointQuantization> read_quantization(const Fields& top, const ModelConfig& m) {
  if (!top.has("quantization_config")) return std::nullopt;
  const Fields q = top.object("quantization_config");
  CheckpointQuantization out;
  out.method = q.name_string("quant_method");
  std::vector<std::string> not_converted;
  if (q.has("modules_to_not_convert"))
    for (const json& e : q.array("modules_to_not_convert")) {
      if (!e.is_string() || e.get<std::string>().empty() || !plain_text_problem(e.get<std::string>()).empty())
        q.fail("modules_to_not_convert", "holds " + e.dump() + ", not a module name");
      not_converted.push_back(e.get<std::string>());
    }
  std::vector<std::string> unquantized = {"embed_tokens", "lm_head", "norm", "router", "gate"};
  if (out.method == "mxfp4" && !m.is_moe()) {
    out.layout = "mxfp4 quantizes a model's routed experts, and this one has none";
    return out;
  }
  if (out.method == "mxfp4") {
    unquantized.push_back("self_attn");
    out.bytes.covers = WeightBytes::Covers::kRoutedExperts;
    out.bytes.quantized = (4.0 + 8.0 / 32) / 8;
    out.layout = "mxfp4 experts, bf16 rest";
  } else if (out.method == "fp8") {
    const auto fmt = q.optional_string("fmt");
    if (fmt && *fmt != "e4m3" && *fmt != "e5m2") q.fail("fmt", "is '" + excerpt(*fmt) + "', not an fp8 format (e4m3, e5m2)");
    const std::string fp8 = fmt && *fmt == "e5m2" ? "fp8 e5m2" : "fp8";  // the layout names it (roofline's 8-bit roof)
    if (!q.has("weight_block_size")) {
      out.layout = "fp8 without weight_block_size (one scale a block of a stated size is what this version counts)";
      return out;
    }
    const json& block = q.array("weight_block_size");
    if (block.size() != 2 || !block[0].is_number_integer() || !block[1].is_number_integer() ||
        block[0].get<std::int64_t>() < 1 || block[1].get<std::int64_t>() < 1 ||
        block[0].get<std::int64_t>() > kMaxSize || block[1].get<std::int64_t>() > kMaxSize)
      q.fail("weight_block_size", "is " + block.dump() + ", not two positive integers [rows, columns]");
    const std::int64_t rows = block[0].get<std::int64_t>(), cols = block[1].get<std::int64_t>();
    out.bytes.covers = WeightBytes::Covers::kLayerMatrices;
    out.bytes.quantized = 1.0 + 4.0 / (static_cast<double>(rows) * static_cast<double>(cols));
    out.layout = fp8 + " layer matrices with fp32 scales a " + std::to_string(rows) + "x" + std::to_string(cols) +
                 " block, bf16 rest";
  } else {
    out.layout = "quant_method '" + excerpt(out.method) + "' is not one this version counts (mxfp4; fp8 with "
                 "weight_block_size)";
    return out;
  }
  for (const std::string& module : not_converted)
    if (std::find(unquantized.begin(), unquantized.end(), last_name(module)) == unquantized.end()) {
      out.bytes = WeightBytes();
      out.layout = "modules_to_not_convert names '" + excerpt(module) + "', which this version cannot place in the " +
                   out.method + " layout";
      return out;
    }
  out.applied = true;
  return out;
}

// The counts are computed twice with the same code: in long double first, to refuse a model whose counts
// would overflow int64 (a typo in a config's sizes must not print a negative parameter count), then exactly.
// An MLP's (or one expert's) weight matrices, and with its biases.
template <class T>
T mlp_matrix_params(const ModelConfig& m, std::int64_t ffn_size) {
  return (m.gated_mlp ? 3 : 2) * static_cast<T>(m.hidden) * static_cast<T>(ffn_size);
}
template <class T>
T mlp_params(const ModelConfig& m, std::int64_t ffn_size) {
  const T h = static_cast<T>(m.hidden), ffn = static_cast<T>(ffn_size);
  const T bias = m.mlp_bias ? (m.gated_mlp ? 2 * ffn : ffn) + h : T(0);
  return mlp_matrix_params<T>(m, ffn_size) + bias;
}

// A layer's attention: its weight matrices, and the rest (biases, MLA's latent norms, gpt-oss's sinks), which a
// quantized checkpoint keeps unquantized.
template <class T>
struct AttentionParts {
  T matrices{}, other{};
};
template <class T>
AttentionParts<T> attention_parts(const ModelConfig& m) {
  const T h = static_cast<T>(m.hidden), nh = static_cast<T>(m.heads);
  if (m.is_mla()) {
    const T qk = static_cast<T>(m.qk_head_dim()), q_rank = static_cast<T>(m.q_lora_rank);
    const T kv_rank = static_cast<T>(m.kv_lora_rank), rope = static_cast<T>(m.qk_rope_head_dim);
    // attention_bias gives q_a_proj, kv_a_proj_with_mqa and o_proj biases (Transformers' DeepseekV3Attention).
    const T bias = m.o_bias ? T(1) : T(0);
    const T q = m.q_lora_rank > 0 ? h * q_rank + q_rank * nh * qk : h * nh * qk;
    const T q_other = m.q_lora_rank > 0 ? bias * q_rank + q_rank /* q_a_layernorm */ : T(0);
    const T kv_a = h * (kv_rank + rope), kv_a_other = bias * (kv_rank + rope) + kv_rank /* kv_a_layernorm */;
    const T kv_b = kv_rank * nh * static_cast<T>(m.qk_nope_head_dim + m.v_head_dim);
    const T o = nh * static_cast<T>(m.v_head_dim) * h;
    return {q + kv_a + kv_b + o, q_other + kv_a_other + (m.o_bias ? h : T(0))};
  }
  const T hd = static_cast<T>(m.head_dim), kvh = static_cast<T>(m.kv_heads);
  const T matrices = h * nh * hd + 2 * h * kvh * hd + nh * hd * h;
  const T biases = (m.qkv_bias ? nh * hd + 2 * kvh * hd : T(0)) + (m.o_bias ? h : T(0));
  return {matrices, biases + (m.attention_sinks ? nh : T(0))};
}
template <class T>
T attention_params(const ModelConfig& m) {
  const AttentionParts<T> a = attention_parts<T>(m);
  return a.matrices + a.other;
}

template <class T>
T router_params(const ModelConfig& m) {
  const T e = static_cast<T>(m.routed_experts);
  return static_cast<T>(m.hidden) * e + (m.router_bias_per_expert ? e : T(0));
}

// One layer's parameters by part (count sums them; layer_params adds them up). row_biases are in attention and mlp
// too, routed_row_biases in routed: the parts tensor parallelism does not split.
template <class T>
struct LayerParts {
  T attention{}, norms{}, router{}, mlp{}, unvisited{}, routed{};
  T row_biases{}, routed_row_biases{};
  T matrices{}, routed_matrices{};  // weight matrices of attention and MLP, and of the routed experts
  T total() const { return attention + norms + router + mlp; }
};

template <class T>
LayerParts<T> layer_parts(const ModelConfig& m, std::int64_t l) {
  LayerParts<T> p;
  const AttentionParts<T> attention = attention_parts<T>(m);
  p.attention = attention.matrices + attention.other;
  p.norms = static_cast<T>(m.layer_norms) * static_cast<T>(m.norm_params_per_hidden) * static_cast<T>(m.hidden) +
            (m.qk_norm ? 2 * static_cast<T>(m.head_dim) : T(0));
  // A row-parallel projection (the attention output, an MLP's down projection) splits its input over the
  // tensor-parallel GPUs and sums their partial products, then adds its bias once: Megatron-LM's and vLLM's
  // RowParallelLinear keep that bias whole on every GPU. Each is hidden_size wide (the `+ h` of attention_params's
  // o and of mlp_params).
  const T h = static_cast<T>(m.hidden);
  const T down_bias = m.mlp_bias ? h : T(0);
  p.row_biases = m.o_bias ? h : T(0);
  if (m.is_moe_layer(l)) {
    const T expert = mlp_params<T>(m, m.expert_ffn);
    p.router = router_params<T>(m);
    p.mlp = static_cast<T>(m.routed_experts + m.shared_experts) * expert;
    p.routed = static_cast<T>(m.routed_experts) * expert;
    p.unvisited = static_cast<T>(m.routed_experts - m.experts_per_token) * expert;
    p.row_biases += static_cast<T>(m.routed_experts + m.shared_experts) * down_bias;
    p.routed_row_biases = static_cast<T>(m.routed_experts) * down_bias;
    p.routed_matrices = static_cast<T>(m.routed_experts) * mlp_matrix_params<T>(m, m.expert_ffn);
    p.matrices = attention.matrices + static_cast<T>(m.routed_experts + m.shared_experts) *
                                          mlp_matrix_params<T>(m, m.expert_ffn);
  } else {
    p.mlp = mlp_params<T>(m, m.ffn);
    p.row_biases += down_bias;
    p.matrices = attention.matrices + mlp_matrix_params<T>(m, m.ffn);
  }
  return p;
}

// A multi-token-prediction module's own norms: enorm, hnorm and shared_head.norm.
template <class T>
T mtp_norms(const ModelConfig& m) {
  return 3 * static_cast<T>(m.norm_params_per_hidden) * static_cast<T>(m.hidden);
}

template <class T>
ParamCountsOf<T> count(const ModelConfig& m) {
  ParamCountsOf<T> c;
  const T h = static_cast<T>(m.hidden), vocab = static_cast<T>(m.vocab);
  T unvisited{};
  for (std::int64_t l = 0; l < m.layers; ++l) {
    const LayerParts<T> p = layer_parts<T>(m, l);
    c.attention += p.attention;
    c.norms += p.norms;
    c.router += p.router;
    c.mlp += p.mlp;
    unvisited += p.unvisited;
  }
  c.norms += static_cast<T>(m.norm_params_per_hidden) * h;  // final norm
  c.embedding = vocab * h + static_cast<T>(m.learned_positions) * h;
  c.lm_head = m.tied_embeddings ? T(0) : vocab * h;
  c.total = c.attention + c.mlp + c.norms + c.router + c.embedding + c.lm_head;
  c.active = c.total - unvisited;
  c.matmul_logits = vocab * h;
  c.matmul_active = c.active - c.embedding - c.norms + (m.tied_embeddings ? c.matmul_logits : T(0));
  if (m.mtp_layers > 0) {
    // Each MTP module as the checkpoint stores it: enorm, hnorm, eh_proj (2h -> h), a decoder layer (the checkpoint's
    // layer num_hidden_layers, an MoE layer), shared_head.norm, and its own copies of the embedding and output head
    // (DeepSeek-V3 README: 671B + 14B).
    const T layer = layer_parts<T>(m, m.layers).total();
    c.mtp = static_cast<T>(m.mtp_layers) * (mtp_norms<T>(m) + 2 * h * h + layer + 2 * vocab * h);
  }
  return c;
}

}  // namespace

namespace {
// The dropout `f` (the config, or a multimodal one's text_config) trains with, by the keys the model type's
// Transformers modules read (review 59: a key another type's modules never read counts nothing): GPT-2 attn_pdrop,
// resid_pdrop and embd_pdrop (its class's defaults 0.1 each); Phi-3 attention_dropout and resid_pdrop (no embedding
// dropout in its model); every other type attention_dropout alone (default 0).
void read_dropout(const Fields& f, ModelConfig& m) {
  const auto probability = [&](const char* key, double class_default) {
    const auto v = f.optional_number(key);
    if (v && *v > 1) f.fail(key, format_fixed(*v, 3) + " is no dropout probability (0 to 1)");
    return v.value_or(class_default);
  };
  const bool gpt2 = m.model_type == "gpt2", phi3 = m.model_type == "phi3";
  m.attention_dropout = probability(gpt2 ? "attn_pdrop" : "attention_dropout", gpt2 ? 0.1 : 0.0) > 0;
  m.hidden_dropout = (gpt2 || phi3) && probability("resid_pdrop", gpt2 ? 0.1 : 0.0) > 0;
  m.embedding_dropout = gpt2 && probability("embd_pdrop", 0.1) > 0;
}

// How the type's eager attention keeps its scores (ModelConfig::eager_fp32_softmax, attention_softcapping; review
// 60, from the tensors autograd saves in Transformers 5's eager_attention_forward of each type).
void read_eager_attention(const Fields& f, ModelConfig& m) {
  const std::string& t = m.model_type;
  const json& raw = f.raw();
  // GPT-2 upcasts its softmax to fp32 where reorder_and_upcast_attn says so (review 61).
  const bool gpt2_upcast = t == "gpt2" && raw.contains("reorder_and_upcast_attn") &&
                           raw["reorder_and_upcast_attn"].is_boolean() && raw["reorder_and_upcast_attn"].get<bool>();
  m.eager_fp32_softmax = gpt2_upcast || !(t == "gpt2" || t == "gpt_oss" || t == "llama4" || t == "llama4_text");
  // Gemma 2 alone applies attn_logit_softcapping (its class's default 50; null turns it off): Gemma 3's modules never
  // read it, whatever its config says (review 61).
  const bool stated = raw.contains("attn_logit_softcapping");
  m.attention_softcapping =
      t == "gemma2" &&
      (!stated || (raw["attn_logit_softcapping"].is_number() && raw["attn_logit_softcapping"].get<double>() > 0));
}
}  // namespace

ModelConfig parse_hf_config(const json& document, const std::string& origin) {
  const Fields f(document, origin);
  if (!f.has("model_type"))
    f.fail("model_type", std::string("required to know how to count (known: ") + kKnownTypes + ")");
  const std::string type = f.string("model_type");
  ModelConfig m;
  if (type == "llama" || type == "mistral" || type == "qwen2" || type == "qwen3" || type == "qwen3_moe" ||
      type == "mixtral")
    m = parse_llama_like(f, type);
  else if (type == "gpt_oss")
    m = parse_gpt_oss(f);
  else if (type == "gemma2" || type == "gemma3_text")
    m = parse_gemma(f, type);
  else if (type == "gemma3")
    m = parse_gemma3_multimodal(f, origin);
  else if (type == "llama4_text")
    m = parse_llama4(f, type);
  else if (type == "llama4")
    m = parse_llama4_multimodal(f);
  else if (type == "phi3")
    m = parse_phi3(f);
  else if (type == "glm4_moe")
    m = parse_glm4_moe(f);
  else if (type == "gpt2")
    m = parse_gpt2(f);
  else if (type == "deepseek_v3" || type == "deepseek_v2")
    m = parse_deepseek(f, type);
  else
    f.fail("model_type", "'" + type + "' is not a model type this version can count (known: " + kKnownTypes + ")");
  if ((type == "gemma3" || type == "llama4") && f.has("text_config")) {
    read_dropout(f.object("text_config"), m);
    read_eager_attention(f.object("text_config"), m);
  } else {
    read_dropout(f, m);
    read_eager_attention(f, m);
  }
  m.quantization = read_quantization(f, m);
  if (f.has("architectures")) {
    const json& a = f.array("architectures");
    // A class name, as Transformers writes it ("LlamaForCausalLM"): another type is refused as any other wrong type
    // in a config is (review 99: it was left out without a word).
    if (!a.empty() && !a[0].is_string()) f.fail("architectures", "its first entry is not a class name (a string)");
    if (!a.empty()) {
      m.architecture = a[0].get<std::string>();
      if (const std::string problem = plain_text_problem(m.architecture); !problem.empty())
        f.fail("architectures", "its first entry " + problem);
    }
  }
  return m;
}

ModelConfig read_hf_config(const std::string& path) { return parse_hf_config(read_json_file(path), path); }

ModelConfig flags_model(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t kv_heads,
                        std::int64_t ffn, std::int64_t vocab, bool swiglu, bool tied) {
  if (layers <= 0) throw InputError("--layers must be positive");
  if (hidden <= 0) throw InputError("--hidden must be positive");
  if (heads <= 0) throw InputError("--heads must be positive");
  if (hidden % heads != 0) throw InputError("--hidden (" + std::to_string(hidden) + ") is not divisible by --heads");
  if (kv_heads <= 0) kv_heads = heads;
  if (kv_heads > heads || heads % kv_heads != 0) throw InputError("--kv-heads must divide --heads");
  if (ffn < 0 || vocab < 0) throw InputError(ffn < 0 ? "--ffn must not be negative" : "--vocab must not be negative");
  for (const auto& [flag, v] : {std::pair<const char*, std::int64_t>{"--layers", layers}, {"--hidden", hidden},
                                {"--heads", heads}, {"--kv-heads", kv_heads}, {"--ffn", ffn}, {"--vocab", vocab}})
    if (v > kMaxSize) throw InputError(std::string(flag) + " " + std::to_string(v) + " is larger than any model's (2^40)");
  ModelConfig m;
  m.model_type = "flags";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = hidden / heads;
  // Megatron-LM's defaults: 4h, or with a gated MLP 8h/3 rounded down to a multiple of 64 (the same
  // parameter count as 4h in two matrices).
  m.ffn = ffn > 0 ? ffn : swiglu ? std::max<std::int64_t>(64, 8 * hidden / 3 / 64 * 64) : 4 * hidden;
  m.vocab = vocab;
  m.gated_mlp = swiglu;
  m.tied_embeddings = tied && vocab > 0;
  m.norm_params_per_hidden = 0;
  return m;
}

LayerParams layer_params(const ModelConfig& m, std::int64_t layer) {
  const LayerParts<double> p = layer_parts<double>(m, layer);
  return {p.total(), p.routed, p.norms + p.router + p.row_biases, p.routed_row_biases, p.matrices, p.routed_matrices};
}

LayerParams mtp_params(const ModelConfig& m) {
  const double n = static_cast<double>(m.mtp_layers), h = static_cast<double>(m.hidden);
  const double norms = mtp_norms<double>(m);
  const LayerParams layer = layer_params(m, m.layers);
  // eh_proj (2h -> h) splits over tp: Megatron-LM's is column-parallel, its output gathered before the layer.
  return {n * (norms + 2 * h * h + layer.total), n * layer.routed_experts, n * (norms + layer.replicated),
          n * layer.routed_replicated, n * (2 * h * h + layer.matrices), n * layer.routed_matrices};
}

double replicated_params(const ModelConfig& m) {
  // The final norm, and the position table: Megatron-LM's and vLLM's GPT-2 split the token embedding by vocabulary
  // and keep the position embedding whole.
  double out = static_cast<double>(m.norm_params_per_hidden + m.learned_positions) * static_cast<double>(m.hidden);
  for (std::int64_t l = 0; l < m.layers; ++l) out += layer_params(m, l).replicated;
  return out;
}

ParamCounts count_params(const ModelConfig& m) {
  if (m.layers > kMaxLayers)
    throw InputError("the model has " + std::to_string(m.layers) + " layers, more than this version counts (" +
                     std::to_string(kMaxLayers) + "); check the layer count");
  const ParamCountsOf<long double> bound = count<long double>(m);
  for (long double v : {bound.total, bound.mtp, bound.matmul_active})
    if (!(v >= 0 && v < 0x1p62L))
      throw InputError("the model's sizes give more than 2^62 parameters, more than this version counts; check "
                       "the hidden size, vocabulary, MLP width, heads and experts");
  return count<std::int64_t>(m);
}

AttentionConvention parse_attention_convention(const std::string& name) {
  if (name == "noncausal" || name == "non-causal") return AttentionConvention::kNonCausal;
  if (name == "causal") return AttentionConvention::kCausal;
  throw InputError("unknown attention convention '" + name + "' (known: noncausal, causal)");
}

std::string convention_name(AttentionConvention c) {
  return c == AttentionConvention::kNonCausal ? "noncausal (PaLM / Megatron paper: 6N + 12*L*H*Q*T per trained token)"
                                              : "causal (masked half not counted: 6N + 6*L*H*Q*T per trained token)";
}

std::string convention_name(AttentionConvention c, const FlopShape& shape, double seq) {
  std::string out = convention_name(c);
  auto in_layers = [&](double n) {
    return n < shape.layers ? " in " + format_fixed(n, 0) + " of the " + format_fixed(shape.layers, 0) + " layers"
                            : std::string();
  };
  if (shape.window && shape.window_layers > 0 && seq > *shape.window)
    out += "; a sliding window of " + format_fixed(*shape.window, 0) + " tokens caps the keys a query meets" +
           in_layers(shape.window_layers) + ", so T is the " +
           (c == AttentionConvention::kCausal ? "mean causal span" : "window") + " there";
  if (shape.chunk && shape.chunk_layers > 0 && seq > *shape.chunk)
    out += "; chunked attention (chunks of " + format_fixed(*shape.chunk, 0) +
           " tokens from the first, a query meeting its own chunk's keys only)" + in_layers(shape.chunk_layers) +
           ", so T is the mean " + (c == AttentionConvention::kCausal ? "causal " : "") + "chunk span there";
  return out;
}

Recompute parse_recompute(const std::string& name) {
  if (name == "none") return Recompute::kNone;
  if (name == "selective") return Recompute::kSelective;
  if (name == "full") return Recompute::kFull;
  throw InputError("unknown recompute '" + name + "' (known: none, selective, full)");
}

std::string recompute_name(Recompute r) {
  return r == Recompute::kNone ? "none" : r == Recompute::kSelective ? "selective" : "full";
}

namespace {
// The sliding window and the attention chunk, and how many layers each caps.
void set_layer_spans(const ModelConfig& m, FlopShape& s) {
  if (m.sliding_window) {
    s.window = static_cast<double>(*m.sliding_window);
    s.window_layers = static_cast<double>(m.window_layers);
  }
  if (m.attention_chunk) {
    s.chunk = static_cast<double>(*m.attention_chunk);
    s.chunk_layers = static_cast<double>(m.chunk_layers);
  }
}
}  // namespace

FlopShape flop_shape(const ModelConfig& m) {
  const ParamCounts c = count_params(m);
  FlopShape s;
  s.matmul_params = static_cast<double>(c.matmul_active);
  s.logit_params = static_cast<double>(c.matmul_logits);
  s.layers = static_cast<double>(m.layers);
  s.heads = static_cast<double>(m.heads);
  s.qk_dim = static_cast<double>(m.qk_head_dim());
  s.v_dim = static_cast<double>(m.value_head_dim());
  set_layer_spans(m, s);
  return s;
}

FlopShape flop_shape(const ModelConfig& m, std::int64_t mtp_modules) {
  if (mtp_modules < 0 || mtp_modules > kMaxMtpModules)
    throw InputError(std::to_string(mtp_modules) + " multi-token-prediction modules: this version counts 0 to " +
                     std::to_string(kMaxMtpModules));
  FlopShape s = flop_shape(m);
  if (mtp_modules == 0) return s;
  const double n = static_cast<double>(mtp_modules), h = static_cast<double>(m.hidden);
  const double head = static_cast<double>(m.vocab) * h;
  // The module's decoder layer as the main model's are counted (count's matmul_active): all but its norms and the
  // routed experts a token does not visit. mtp_params holds the same layer.
  const LayerParts<double> layer = layer_parts<double>(m, m.layers);
  const double layer_matmul = layer.total() - layer.norms - layer.unvisited;
  s.matmul_params += n * (2 * h * h + layer_matmul + head);
  s.logit_params += n * head;
  // Each module's layer attends as the checkpoint's layer `layers` would: Mistral's slides as every layer does,
  // Gemma 3 27b's (its layer 62) through the window of the five of six that slide.
  if (m.next_layer_attention == ModelConfig::LayerAttention::kSliding && s.window) s.window_layers += n;
  if (m.next_layer_attention == ModelConfig::LayerAttention::kChunked && s.chunk) s.chunk_layers += n;
  s.layers += n;
  return s;
}

namespace {
// How many of the layers slide and how many attend in chunks (the rest see every key).
struct LayerKinds {
  double sliding = 0, chunked = 0, full = 0;
};
LayerKinds layer_kinds(const FlopShape& s) {
  LayerKinds k;
  k.sliding = s.window ? std::clamp(s.window_layers, 0.0, s.layers) : 0.0;
  k.chunked = s.chunk ? std::clamp(s.chunk_layers, 0.0, s.layers - k.sliding) : 0.0;
  k.full = s.layers - k.sliding - k.chunked;
  return k;
}
LayerKinds layer_kinds(const ModelConfig& m) {
  FlopShape s;  // only the layer counts
  s.layers = static_cast<double>(m.layers);
  set_layer_spans(m, s);
  return layer_kinds(s);
}
}  // namespace

double attention_flops_forward(const FlopShape& s, double seq, AttentionConvention c) {
  // Keys each query meets, averaged over the sequence, in a layer that sees everything, in one that slides and
  // in one that attends within chunks.
  const bool causal = c == AttentionConvention::kCausal;
  const double full = causal ? seq / 2 : seq;
  double windowed = full;
  if (s.window && seq > *s.window) {
    const double w = *s.window;
    windowed = causal ? (w * w / 2 + (seq - w) * w) / seq : w;
  }
  double chunked = full;
  if (s.chunk && seq > *s.chunk) {
    // q whole chunks of C and a last one of r tokens: a query of a chunk of n tokens meets n keys (its whole chunk)
    // non-causal, n/2 on average causal.
    const double C = *s.chunk, q = std::floor(seq / C), r = seq - q * C;
    chunked = (q * C * C + r * r) / seq / (causal ? 2.0 : 1.0);
  }
  const LayerKinds k = layer_kinds(s);
  return 2.0 * s.heads * (s.qk_dim + s.v_dim) * (k.full * full + k.sliding * windowed + k.chunked * chunked);
}

namespace {
// The keys a decoded token at `context` meets, summed over the layers: every one in a full layer, the window's in
// a sliding one, its own chunk's in a chunked one.
double decode_keys(const FlopShape& s, double context) {
  const double windowed = s.window ? std::min(context, *s.window) : context;
  double chunked = context;
  if (s.chunk && context > *s.chunk) {
    // The token at position context - 1 (from 0) meets the keys from its chunk's first token to itself.
    const double C = *s.chunk;
    chunked = context - C * std::floor((context - 1) / C);
  }
  const LayerKinds k = layer_kinds(s);
  return k.full * context + k.sliding * windowed + k.chunked * chunked;
}
}  // namespace

double attention_flops_decode(const FlopShape& s, double context) {
  return 2.0 * s.heads * (s.qk_dim + s.v_dim) * decode_keys(s, context);
}

double forward_flops_per_token(const FlopShape& s, double seq, AttentionConvention c) {
  return 2.0 * s.matmul_params + attention_flops_forward(s, seq, c);
}

double model_flops_per_token(const FlopShape& s, double seq, AttentionConvention c) {
  // PaLM (Chowdhery et al. 2022) appendix B: 6N + 12*L*H*Q*T, i.e. three forward passes' worth.
  return 3.0 * forward_flops_per_token(s, seq, c);
}

double hardware_flops_per_token(const FlopShape& s, double seq, AttentionConvention c, Recompute r) {
  const double model = model_flops_per_token(s, seq, c);
  switch (r) {
    case Recompute::kNone:
      return model;
    case Recompute::kSelective:  // Korthikanti et al. 2022: only QK^T, softmax, attention*V are recomputed
      return model + attention_flops_forward(s, seq, c);
    case Recompute::kFull:  // Narayanan et al. 2021 eq. 3: a 4th forward of every layer, logits not repeated
      return model + forward_flops_per_token(s, seq, c) - 2.0 * s.logit_params;
  }
  return model;
}

double executed_flops_per_token(const FlopShape& s, double seq, Recompute r) {
  return hardware_flops_per_token(s, seq, AttentionConvention::kCausal, r) +
         0.5 * attention_flops_forward(s, seq, AttentionConvention::kCausal);
}

double dtype_bytes(const std::string& dtype) {
  if (dtype == "fp32" || dtype == "float32" || dtype == "tf32") return 4;
  if (dtype == "bf16" || dtype == "fp16" || dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "fp8" || dtype == "int8" || dtype == "fp8_e4m3" || dtype == "fp8_e5m2") return 1;
  if (dtype == "fp4" || dtype == "int4" || dtype == "nvfp4") return 0.5;
  throw InputError("unknown data type '" + dtype + "' (known: fp32, bf16, fp16, fp8, int8, fp4, int4)");
}

double kv_bytes_per_token(const ModelConfig& m, double b) {
  if (m.is_mla()) return static_cast<double>(m.layers) * static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) * b;
  return 2.0 * static_cast<double>(m.layers) * static_cast<double>(m.kv_heads * m.head_dim) * b;
}

double kv_cache_bytes_per_sequence(const ModelConfig& m, double context, double b) {
  const double layers = static_cast<double>(m.layers);
  if (!(layers > 0)) return 0;
  const LayerKinds k = layer_kinds(m);
  const double windowed = m.sliding_window ? std::min(context, static_cast<double>(*m.sliding_window)) : context;
  const double chunked = m.attention_chunk ? std::min(context, static_cast<double>(*m.attention_chunk)) : context;
  // The mean tokens a layer caches (each layer caches the same bytes a token).
  const double cached = (k.full * context + k.sliding * windowed + k.chunked * chunked) / layers;
  return kv_bytes_per_token(m, b) * cached;
}

double kv_bytes_read_per_decode_step(const ModelConfig& m, double context, double b) {
  const double layers = static_cast<double>(m.layers);
  if (!(layers > 0)) return 0;
  FlopShape s;  // only the layer counts and spans
  s.layers = layers;
  set_layer_spans(m, s);
  return kv_bytes_per_token(m, b) * decode_keys(s, context) / layers;
}

namespace {
std::int64_t moe_layer_count(const ModelConfig& m) {
  std::int64_t n = 0;
  for (std::int64_t l = 0; l < m.layers; ++l) n += m.is_moe_layer(l) ? 1 : 0;
  return n;
}

// The routed experts of an MoE layer that no token of a decode step at batch B visits, under uniform routing:
// E minus the expected distinct experts, E*(1 - (1 - k/E)^B).
double unvisited_experts(const ModelConfig& m, double batch) {
  const double e = static_cast<double>(m.routed_experts), k = static_cast<double>(m.experts_per_token);
  return e - e * (1.0 - std::pow(1.0 - k / e, batch));
}

// The weight matrices of every layer, and of them the routed experts'.
LayerParams layer_matrices(const ModelConfig& m) {
  LayerParams sum;
  for (std::int64_t l = 0; l < m.layers; ++l) {
    const LayerParams p = layer_params(m, l);
    sum.matrices += p.matrices;
    sum.routed_matrices += p.routed_matrices;
  }
  return sum;
}
}  // namespace

double WeightBytes::of(double params, double layer_matrices, double routed_matrices) const {
  if (covers == Covers::kNothing) return params * other;
  const double q = covers == Covers::kRoutedExperts ? routed_matrices : layer_matrices;
  return q * quantized + (params - q) * other;
}

double stored_weight_bytes(const ModelConfig& m, const WeightBytes& bytes) {
  const double total = static_cast<double>(count_params(m).total);  // first: it refuses a model too large to walk
  const LayerParams t = layer_matrices(m);
  return bytes.of(total, t.matrices, t.routed_matrices);
}

double decode_weight_bytes(const ModelConfig& m, double batch, const WeightBytes& bytes) {
  const ParamCounts c = count_params(m);
  double read = static_cast<double>(c.total - c.embedding + (m.tied_embeddings ? c.matmul_logits : 0));
  LayerParams t = layer_matrices(m);
  if (m.is_moe()) {
    const double unvisited = static_cast<double>(moe_layer_count(m)) * unvisited_experts(m, batch);
    const double expert_matrices = unvisited * static_cast<double>(mlp_matrix_params<std::int64_t>(m, m.expert_ffn));
    read -= unvisited * static_cast<double>(mlp_params<std::int64_t>(m, m.expert_ffn));
    t.matrices -= expert_matrices;
    t.routed_matrices -= expert_matrices;
  }
  return bytes.of(read, t.matrices, t.routed_matrices);
}

double decode_replicated_params(const ModelConfig& m, double batch) {
  const double h = static_cast<double>(m.hidden);
  double read = replicated_params(m) - static_cast<double>(m.learned_positions) * h;
  if (m.is_moe() && m.mlp_bias)  // an unvisited expert's down-projection bias is not read either
    read -= static_cast<double>(moe_layer_count(m)) * unvisited_experts(m, batch) * h;
  return read;
}

KvTensorSplit kv_tensor_split(const ModelConfig& m, double gpus) {
  KvTensorSplit k;
  const double h = static_cast<double>(m.hidden), layers = static_cast<double>(m.layers);
  if (m.is_mla()) {
    const double bias = m.o_bias ? 1.0 : 0.0;
    const double q_rank = static_cast<double>(m.q_lora_rank);
    const double kv_a = static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim);
    const double q_a = m.q_lora_rank > 0 ? h * q_rank + bias * q_rank + q_rank : 0.0;
    k.split = 1;
    k.projection_params = layers * (q_a + h * kv_a + bias * kv_a + static_cast<double>(m.kv_lora_rank));
    k.projection_matrices = layers * h * (q_rank + kv_a);
    return k;
  }
  const double kv = static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim);
  k.split = std::min(gpus, static_cast<double>(m.kv_heads));
  k.projection_params = layers * 2 * (h * kv + (m.qkv_bias ? kv : 0.0));
  k.projection_matrices = layers * 2 * h * kv;
  return k;
}

double weight_bytes_per_gpu(const ModelConfig& m, double weight_bytes, const WeightBytes& bytes, double gpus,
                            double replicated) {
  const KvTensorSplit k = kv_tensor_split(m, gpus);
  const double kv = std::min(weight_bytes, bytes.of(k.projection_params, k.projection_matrices, 0));
  const double whole = std::min(weight_bytes - kv, replicated * bytes.other);
  return (weight_bytes - kv - whole) / gpus + kv / k.split + whole;
}

json model_summary_json(const ModelConfig& m, double seq, const std::string& kv_dtype, AttentionConvention conv) {
  const ParamCounts c = count_params(m);
  const FlopShape s = flop_shape(m);
  json out = {{"model_type", m.model_type},
              {"architecture", m.architecture},
              {"layers", m.layers},
              {"hidden_size", m.hidden},
              {"attention_heads", m.heads},
              {"kv_heads", m.kv_heads},
              {"head_dim", m.head_dim},
              {"vocab_size", m.vocab},
              {"attention", m.is_mla()             ? "mla"
                            : m.kv_heads == 1      ? "mqa"
                            : m.kv_heads < m.heads ? "gqa"
                                                   : "mha"},
              {"mlp", m.gated_mlp ? "gated (SwiGLU)" : "dense"},
              {"tied_embeddings", m.tied_embeddings},
              {"params_total", c.total},
              {"params_active", c.active},
              {"params_embedding", c.embedding},
              {"params_lm_head", c.lm_head},
              {"params_non_embedding", c.total - c.embedding - c.lm_head},
              {"params_attention", c.attention},
              {"params_mlp", c.mlp},
              {"params_norms", c.norms},
              {"params_router", c.router},
              {"params_matmul_active", c.matmul_active},
              {"seq", seq},
              {"convention", conv == AttentionConvention::kNonCausal ? "noncausal" : "causal"},
              {"convention_description", convention_name(conv, s, seq)},
              {"flops_per_token", forward_flops_per_token(s, seq, conv)},
              {"attention_flops_per_token", attention_flops_forward(s, seq, conv)},
              {"training_flops_per_token", model_flops_per_token(s, seq, conv)},
              {"kv_dtype", kv_dtype},
              // Every layer's, before a sliding window or an attention chunk caps it; what a sequence of `seq`
              // tokens holds, capped (review 57: 508 kB a token for Gemma 3 27B, where 32k tokens hold 95 kB each).
              {"kv_bytes_per_token", kv_bytes_per_token(m, dtype_bytes(kv_dtype))},
              {"kv_bytes_per_sequence", kv_cache_bytes_per_sequence(m, seq, dtype_bytes(kv_dtype))}};
  if (m.is_moe())
    out["moe"] = {{"routed_experts", m.routed_experts},
                  {"experts_per_token", m.experts_per_token},
                  {"shared_experts", m.shared_experts},
                  {"expert_ffn", m.expert_ffn},
                  {"first_dense_layers", m.first_dense_layers},
                  {"moe_layers", moe_layer_count(m)}};
  if (m.is_mla())
    out["mla"] = {{"q_lora_rank", m.q_lora_rank},
                  {"kv_lora_rank", m.kv_lora_rank},
                  {"qk_nope_head_dim", m.qk_nope_head_dim},
                  {"qk_rope_head_dim", m.qk_rope_head_dim},
                  {"v_head_dim", m.v_head_dim}};
  if (m.mtp_layers > 0) {
    out["params_mtp"] = c.mtp;
    // What the config's MTP modules add per token where a job trains them (mfu/train-time --mtp-layers), apart from
    // the main model's figures above.
    const FlopShape with = flop_shape(m, m.mtp_layers);
    out["mtp_flops_per_token"] = forward_flops_per_token(with, seq, conv) - forward_flops_per_token(s, seq, conv);
    out["mtp_training_flops_per_token"] = model_flops_per_token(with, seq, conv) - model_flops_per_token(s, seq, conv);
  }
  out["sliding_window"] = m.sliding_window ? json(*m.sliding_window) : json(nullptr);
  out["sliding_window_layers"] = m.sliding_window ? m.window_layers : std::int64_t{0};
  out["attention_chunk_size"] = m.attention_chunk ? json(*m.attention_chunk) : json(nullptr);
  out["chunked_attention_layers"] = m.attention_chunk ? m.chunk_layers : std::int64_t{0};
  out["not_counted"] = m.not_counted.empty() ? json(nullptr) : json(m.not_counted);
  return out;
}

void check_parallel_split(const ModelConfig& c, double tp, double pp, const std::string& tp_flag) {
  const auto t = static_cast<std::int64_t>(tp);
  const std::string ts = tp_flag + " " + std::to_string(t);
  if (c.heads > 0 && c.heads % t != 0)
    throw InputError(ts + " does not divide the model's " + std::to_string(c.heads) +
                     " attention heads: tensor parallelism splits whole heads");
  if (!c.is_mla() && c.kv_heads > 0 && (c.kv_heads >= t ? c.kv_heads % t != 0 : t % c.kv_heads != 0))
    throw InputError(ts + " and the model's " + std::to_string(c.kv_heads) + " KV heads: each GPU needs whole KV heads (" +
                     tp_flag + " must divide them or be a multiple of them)");
  // The MLP's first projection is split by columns and its last by rows, evenly (Megatron-LM's and vLLM's
  // column-parallel layers refuse a width tp does not divide); experts too, when tp splits them.
  if (c.has_dense_mlp_layer() && c.ffn > 0 && c.ffn % t != 0)
    throw InputError(ts + " does not divide the model's MLP width of " + std::to_string(c.ffn) +
                     ": tensor parallelism splits the MLP into equal column blocks");
  if (c.is_moe() && c.expert_ffn > 0 && c.expert_ffn % t != 0)
    throw InputError(ts + " does not divide the model's expert MLP width of " + std::to_string(c.expert_ffn) +
                     ": tensor parallelism splits every expert into equal column blocks");
  if (pp > 1 && c.layers > 0 && static_cast<std::int64_t>(pp) > c.layers)
    throw InputError("--pp " + std::to_string(static_cast<std::int64_t>(pp)) + " is more pipeline stages than the model's " +
                     std::to_string(c.layers) + " layers");
}

}  // namespace ceilings
