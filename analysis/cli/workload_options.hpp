// Options shared by the analysis subcommands that take a model (mfu, mbu, memory, roofline) and a peak
// source (--profile / --gpu / a given number): one definition so every subcommand spells them the same.
#pragma once
#include <CLI/CLI.hpp>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "ceilings/model.hpp"
#include "ceilings/profile.hpp"
#include "ceilings/units.hpp"

namespace ceilings::cli {

// A number option that may be absent (CLI11 2.1 has no std::optional binding we rely on).
struct OptNumber {
  double value = NAN;
  CLI::Option* option = nullptr;
  bool given() const { return option && option->count() > 0; }
  std::optional<double> get() const { return given() ? std::optional<double>(value) : std::nullopt; }
};

inline OptNumber& add_number(CLI::App& app, OptNumber& n, const std::string& name, const std::string& help) {
  n.option = app.add_option(name, n.value, help);
  return n;
}

// What a config's model is not counted with (Gemma 3's or Llama 4's vision tower), for every command's notes.
inline std::optional<std::string> not_counted_note(const ModelConfig& m) {
  if (m.not_counted.empty()) return std::nullopt;
  return "not counted: " + m.not_counted;
}

// --hf-config FILE, or --layers/--hidden/--heads[/--kv-heads/--ffn/--vocab/--swiglu/--tied-embeddings], or --params with
// --layers/--heads/--head-dim (attention term only).
struct ModelOptions {
  std::string hf_config;
  OptNumber layers, hidden, heads, kv_heads, ffn, vocab, params, head_dim;
  bool swiglu = false;
  bool tied_embeddings = false;

  // `params_help` says which N --params means to the subcommand (the FLOP count's, the bytes read, the memory).
  static constexpr const char* kMatmulParams =
      "Parameters N in matrix multiplies (2N FLOPs a token forward; a MoE's active ones; not the input embedding "
      "lookup), with --layers --heads --head-dim for the attention term";
  void add(CLI::App& app, const std::string& params_help = kMatmulParams) {
    app.add_option("--hf-config", hf_config, "Hugging Face config.json of the model");
    add_number(app, layers, "--layers", "Transformer layers (model from flags)");
    add_number(app, hidden, "--hidden", "Hidden size (model from flags)");
    add_number(app, heads, "--heads", "Attention heads");
    add_number(app, kv_heads, "--kv-heads", "Key/value heads (GQA; default: --heads)");
    add_number(app, ffn, "--ffn", "MLP width (default 4*hidden; with --swiglu 8*hidden/3 rounded down to a multiple of 64, as Megatron-LM)");
    add_number(app, vocab, "--vocab", "Vocabulary size (default: no logit layer)");
    app.add_flag("--swiglu", swiglu, "Gated MLP (three matrices) instead of two");
    app.add_flag("--tied-embeddings", tied_embeddings,
                 "The output layer shares the input embedding's V*h weights (Megatron-LM's GPT default; without it "
                 "they are two tables, as Llama's)");
    add_number(app, params, "--params", params_help);
    add_number(app, head_dim, "--head-dim", "Head width (with --params)");
  }

  static std::int64_t whole(const OptNumber& n, const char* name) {
    if (!n.given()) return 0;
    return static_cast<std::int64_t>(require_count(n.value, name));
  }

  bool from_config() const { return !hf_config.empty(); }
  bool from_params() const { return params.given(); }

  // The model for configs and flags; nullopt for --params (no structure known).
  std::optional<ModelConfig> model() const {
    if (from_config()) {
      for (const OptNumber* n : {&layers, &hidden, &heads, &kv_heads, &ffn, &vocab, &params, &head_dim})
        if (n->given())
          throw InputError("--hf-config and " + n->option->get_name() +
                           " are alternatives: give one model description");
      if (swiglu) throw InputError("--hf-config and --swiglu are alternatives: the config says which MLP it has");
      if (tied_embeddings)
        throw InputError("--hf-config and --tied-embeddings are alternatives: the config's tie_word_embeddings says it");
      return read_hf_config(hf_config);
    }
    if (from_params()) return std::nullopt;
    if (head_dim.given())
      throw InputError("--head-dim goes with --params; with --layers/--hidden/--heads the head width is "
                       "hidden / heads");
    if (!layers.given() && !hidden.given() && !heads.given())
      throw InputError("no model given: use --hf-config FILE, --layers/--hidden/--heads, or --params");
    if (!layers.given()) throw InputError("--layers is missing");
    if (!hidden.given()) throw InputError("--hidden is missing");
    if (!heads.given()) throw InputError("--heads is missing");
    if (tied_embeddings && !vocab.given())
      throw InputError("--tied-embeddings ties the output layer to the embedding table: it needs --vocab");
    return flags_model(whole(layers, "--layers"), whole(hidden, "--hidden"), whole(heads, "--heads"),
                       whole(kv_heads, "--kv-heads"), whole(ffn, "--ffn"), vocab.given() ? whole(vocab, "--vocab") : 0,
                       swiglu, tied_embeddings);
  }

  // --params counting the weights as given (mbu, memory): a layer shape beside it would change nothing the command
  // computes from it, so each flag of one is refused by name: "<what>: --hidden <would> (drop it, ...)".
  void refuse_shape_beside_params(const std::string& what, const std::string& would) const {
    auto refuse = [&](const std::string& flag) {
      throw InputError(what + ": " + flag + " " + would +
                       " (drop it, or describe the model with --hf-config or --layers/--hidden/--heads)");
    };
    for (const OptNumber* n : {&layers, &hidden, &heads, &kv_heads, &ffn, &vocab, &head_dim})
      if (n->given()) refuse(n->option->get_name());
    if (swiglu) refuse("--swiglu");
    if (tied_embeddings) refuse("--tied-embeddings");
  }

  // --params N: the FLOP shape with N matmul parameters and the attention term from the flags.
  FlopShape params_shape() const {
    require_count(params.value, "--params");  // 7.5 is a typo for 7.5e9, not 7.5 parameters
    if (hidden.given()) throw InputError("--params and --hidden are alternatives: give one model description");
    for (const OptNumber* n : {&ffn, &vocab, &kv_heads})
      if (n->given())
        throw InputError("--params takes the parameter count as given: " + n->option->get_name() +
                         " would not change it (drop it, or describe the model with --layers/--hidden/--heads)");
    for (const auto& [flag, set] : {std::pair<const char*, bool>{"--swiglu", swiglu}, {"--tied-embeddings", tied_embeddings}})
      if (set)
        throw InputError(std::string("--params takes the parameter count as given: ") + flag +
                         " would not change it (drop it, or describe the model with --layers/--hidden/--heads)");
    FlopShape s;
    s.matmul_params = params.value;
    if (!layers.given() || !heads.given() || !head_dim.given())
      throw InputError("--params needs --layers, --heads and --head-dim for the attention term");
    s.layers = static_cast<double>(whole(layers, "--layers"));
    s.heads = static_cast<double>(whole(heads, "--heads"));
    s.qk_dim = s.v_dim = static_cast<double>(whole(head_dim, "--head-dim"));
    return s;
  }

  // A sequence longer than the configured model's learned positions is refused (see require_positions).
  void require_positions_for(double tokens, const std::string& flag) const {
    if (from_params() && !from_config()) return;
    require_positions(*model(), tokens, flag);
  }

  // With `mtp_modules` multi-token-prediction modules trained beside the model (MtpOption: never with --params).
  FlopShape shape(std::int64_t mtp_modules = 0) const {
    if (from_params() && !from_config()) return params_shape();
    return flop_shape(*model(), mtp_modules);
  }

  // The `mtp_modules` MTP modules' share of each token's model and hardware FLOPs at `seq`: the count with them
  // less the count without (mfu and train-time alike).
  struct MtpShare {
    double model = 0, hardware = 0;
  };
  MtpShare mtp_share(std::int64_t mtp_modules, double seq, AttentionConvention c, Recompute rc) const {
    if (mtp_modules <= 0) return {};
    const FlopShape with = shape(mtp_modules), main = shape();
    return {model_flops_per_token(with, seq, c) - model_flops_per_token(main, seq, c),
            hardware_flops_per_token(with, seq, c, rc) - hardware_flops_per_token(main, seq, c, rc)};
  }

  // What the FLOPs per token count beside the main model, or leave out that a reader might assume in: a DeepSeek-V3
  // style model's multi-token-prediction modules, trained beside the model but not part of it (nor of its
  // parameter counts), counted only where --mtp-layers says the job trains them.
  // Also what a model given by flags leaves out or assumes (no --vocab: no output layer; --swiglu without --ffn: the
  // MLP width taken), and what a config's model is not counted with (a vision tower).
  std::optional<std::string> flop_note(std::int64_t mtp_modules = 0) const {
    const std::optional<ModelConfig> m = from_config() || !from_params() ? model() : std::nullopt;
    const std::optional<std::string> extra = shape_note(Counted::kFlops);
    std::optional<std::string> mtp = mtp_note(m, mtp_modules);
    if (!mtp) return extra;
    return extra ? std::optional<std::string>(*mtp + "; " + *extra) : mtp;
  }

  // What a model given by flags leaves out or assumes (no --vocab; --swiglu's MLP width without --ffn), and what a
  // config's model is not counted with (a vision tower): of its FLOPs per token (mfu, train-time), or of its weights
  // (mbu, memory). Nothing for --params, which counts what it is given.
  enum class Counted { kFlops, kWeights };
  std::optional<std::string> shape_note(Counted counted) const {
    const std::optional<ModelConfig> m = from_config() || !from_params() ? model() : std::nullopt;
    if (!m) return std::nullopt;
    std::string note;
    auto add = [&](const std::string& s) { note += (note.empty() ? "" : "; ") + s; };
    if (!from_config()) {
      if (m->vocab == 0)
        add(counted == Counted::kFlops
                ? "no --vocab: the output layer (2*V*h FLOPs a token forward, 6*V*h in training) is not counted"
                : "no --vocab: neither the input embedding table nor the output layer (V*h weights each) is counted");
      if (swiglu && !ffn.given()) add("--swiglu without --ffn: an MLP width of " + std::to_string(m->ffn));
      // The FLOPs are the same either way (the logits multiply by the table whether it is shared or not).
      if (counted == Counted::kWeights && m->vocab > 0 && !tied_embeddings)
        add("the input embedding and the output layer counted as two V*h tables (--tied-embeddings: one, as "
            "Megatron-LM's GPT by default)");
    }
    if (const std::optional<std::string> n = not_counted_note(*m)) add(*n);
    return note.empty() ? std::nullopt : std::optional<std::string>(note);
  }

 private:
  std::optional<std::string> mtp_note(const std::optional<ModelConfig>& m, std::int64_t mtp_modules) const {
    if (mtp_modules > 0) {
      const std::string n = std::to_string(mtp_modules);
      std::string note = "the FLOPs per token count " + n + " multi-token-prediction module(s) trained beside the "
                         "main model (--mtp-layers " + n + "): each token through each one's eh_proj" +
                         (m && m->vocab == 0 ? std::string(" and decoder layer (no output head: the model has none)")
                                             : std::string(", decoder layer and the shared output head"));
      if (from_config() && m->mtp_layers != mtp_modules)
        note += m->mtp_layers > 0 ? "; the config has " + std::to_string(m->mtp_layers)
                                  : "; the config has none, each built as its layer " + std::to_string(m->layers) +
                                        " would be";
      return note;
    }
    if (!from_config() || m->mtp_layers <= 0) return std::nullopt;
    const std::string n = std::to_string(m->mtp_layers);
    return "the FLOPs per token are the main model's: its " + n + " multi-token-prediction module(s), trained beside "
           "it, are not counted (--mtp-layers " + n + " counts them where the job trains them)";
  }
};

// Serving (mbu, roofline's LLM view, memory --mode infer) counts the main model: a config's multi-token-prediction
// modules are read and held only where an engine runs them as a speculative-decoding draft, which these commands do
// not model. Said where the config has them, so that a reader does not take them as counted.
inline std::optional<std::string> mtp_serving_note(const ModelConfig& m) {
  if (m.mtp_layers <= 0) return std::nullopt;
  return "the main model only: its " + std::to_string(m.mtp_layers) + " multi-token-prediction module(s) (" +
         format_fixed(static_cast<double>(count_params(m).mtp) / 1e9, 2) +
         "B parameters as the checkpoint stores them, read and held only where an engine serves them as a "
         "speculative-decoding draft) are not counted";
}

// --mtp-layers N (mfu, train-time): the job trains N multi-token-prediction modules beside the model (DeepSeek-V3's
// recipe, Megatron-LM's --mtp-num-layers), whose FLOPs every token costs. Opt-in: a config that stores MTP modules
// says nothing about whether a job trains them. Each module is built like the model's layers, so a model given by
// --params, which has no layers to build one from, refuses it.
struct MtpOption {
  OptNumber layers;
  void add(CLI::App& app) {
    add_number(app, layers, "--mtp-layers",
               "Multi-token-prediction modules the job trains beside the model (DeepSeek-V3: its config's "
               "num_nextn_predict_layers, 1), 1 or more: their FLOPs are counted (not given: none)");
  }
  std::int64_t modules(const ModelOptions& model) const {
    if (!layers.given()) return 0;
    const auto n = static_cast<std::int64_t>(require_count(layers.value, "--mtp-layers"));
    if (n > kMaxMtpModules)
      throw InputError("--mtp-layers " + std::to_string(n) + " is more multi-token-prediction modules than this "
                       "version counts (at most " + std::to_string(kMaxMtpModules) + ")");
    if (model.from_params() && !model.from_config())
      throw InputError("--mtp-layers counts modules built like the model's layers: --params gives no layers to build "
                       "them from (describe the model with --hf-config or --layers/--hidden/--heads, or count the "
                       "modules' parameters in --params)");
    return n;
  }
};

// --weight-dtype: every weight stored at one type. Not given, a config whose quantization_config this version
// counts gives the checkpoint's own layout instead (gpt-oss's mxfp4 experts, DeepSeek-V3's fp8 layers); a layout it
// cannot count, or one an explicit type overrides, is said in a note, never dropped silently.
struct WeightDtypeOption {
  std::string dtype = "bf16";
  CLI::Option* option = nullptr;
  CLI::Option* add(CLI::App& app, const std::string& help) {
    option = app.add_option("--weight-dtype", dtype,
                            help + ": " + kStorageTypes + " (every weight at that size; default: the checkpoint's "
                                   "layout where the config's quantization_config states one this version counts, "
                                   "else bf16)");
    return option;
  }
  struct Choice {
    WeightBytes bytes;
    std::string label;  // "bf16", or "checkpoint (mxfp4 experts, bf16 rest)"
    std::string note;   // what the checkpoint stores where the bytes are not its layout; "" otherwise
  };
  // `model`: null where no model is described (--params).
  Choice choose(const ModelConfig* model) const {
    const bool given = option && option->count() > 0;
    const std::optional<CheckpointQuantization> q = model ? model->quantization : std::nullopt;
    if (q && q->applied && !given) return {q->bytes, "checkpoint (" + q->layout + ")", ""};
    Choice c{dtype_bytes(dtype), dtype, ""};
    if (q && q->applied)
      c.note = "every weight counted at --weight-dtype " + dtype + "; the checkpoint stores " + q->layout +
               " (its quantization_config; without --weight-dtype its layout is counted)";
    else if (q)
      c.note = "the config's quantization_config is not applied: " + q->layout + "; every weight counted at " +
               (given ? "--weight-dtype " : "the default ") + dtype;
    return c;
  }
};

// --profile P, --gpu NAME: where measured and datasheet peaks come from.
struct PeakOptions {
  std::string profile, gpu;
  void add(CLI::App& app, const std::string& profile_help = "Measured profile: its ceilings are the measured peaks") {
    app.add_option("--profile", profile, profile_help);
    app.add_option("--gpu", gpu, "Datasheet entry (`ceilings specs` lists them)");
  }
  std::optional<Profile> read() const {
    if (profile.empty()) return std::nullopt;
    return read_profile(profile);
  }
  std::optional<std::string> gpu_name() const { return gpu.empty() ? std::nullopt : std::optional<std::string>(gpu); }
};

}  // namespace ceilings::cli
