// `ceilings model --hf-config FILE`: parameters, FLOPs per token and KV-cache bytes of a Hugging Face model.
#include "ceilings/model.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

#include "ceilings/table.hpp"
#include "ceilings/units.hpp"
#include "subcommand.hpp"

namespace {

struct ModelOptions {
  std::string config;
  double seq = 4096;
  std::string kv_dtype = "bf16";
  std::string attention = "noncausal";
  bool json = false;
};

std::string count(std::int64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

ceilings::cli::Runner setup(CLI::App& app) {
  auto o = std::make_shared<ModelOptions>();
  app.add_option("--hf-config", o->config, "Hugging Face config.json")->required();
  auto* seq_opt = app.add_option("--seq", o->seq,
                                 "Sequence length for the attention FLOPs (default 4096, or a model's learned "
                                 "positions where fewer)");
  app.add_option("--kv-dtype", o->kv_dtype, std::string("KV-cache storage: ") + ceilings::kStorageTypes)->capture_default_str();
  app.add_option("--attention", o->attention, "FLOP convention: noncausal | causal")->capture_default_str();
  app.add_flag("--json", o->json, "Print JSON");
  return [o, seq_opt] {
    using namespace ceilings;
    require_length(o->seq, "--seq");
    const AttentionConvention conv = parse_attention_convention(o->attention);
    dtype_bytes(o->kv_dtype);  // validates
    const ModelConfig m = read_hf_config(o->config);
    // Not given: the default, shortened to a GPT-2's learned positions (the output says which length it used).
    if (seq_opt->count() == 0 && m.learned_positions > 0)
      o->seq = std::min(o->seq, static_cast<double>(m.learned_positions));
    require_positions(m, o->seq, "--seq");
    const json s = model_summary_json(m, o->seq, o->kv_dtype, conv);
    if (o->json) {
      std::cout << s.dump(2) << "\n";
      return 0;
    }
    Table t;
    t.columns = {"quantity", "value"};
    t.right_aligned = {false, true};
    t.add_row({"model", m.model_type + (m.architecture.empty() ? "" : " (" + m.architecture + ")")});
    if (m.is_mla())  // one latent K/V cache a layer, not K/V heads
      t.add_row({"layers / hidden / heads / kv latent + rope / qk, v head dim",
                 std::to_string(m.layers) + " / " + std::to_string(m.hidden) + " / " + std::to_string(m.heads) +
                     " / " + std::to_string(m.kv_lora_rank) + " + " + std::to_string(m.qk_rope_head_dim) + " / " +
                     std::to_string(m.qk_head_dim()) + ", " + std::to_string(m.value_head_dim())});
    else
      t.add_row({"layers / hidden / heads / kv heads / head dim",
                 std::to_string(m.layers) + " / " + std::to_string(m.hidden) + " / " + std::to_string(m.heads) + " / " +
                     std::to_string(m.kv_heads) + " / " + std::to_string(m.head_dim)});
    t.add_row({"attention", s["attention"].get<std::string>()});
    t.add_row({"parameters, total", count(s["params_total"])});
    t.add_row({"parameters, active per token", count(s["params_active"])});
    t.add_row({"parameters, embedding", count(s["params_embedding"])});
    t.add_row({"parameters, lm head", m.tied_embeddings ? "tied to the embedding" : count(s["params_lm_head"])});
    // The config's multi-token-prediction modules, all of them together.
    const std::string mtp = std::to_string(m.mtp_layers) + " MTP module(s)";
    if (s.contains("params_mtp")) t.add_row({"parameters, " + mtp + " (not in total)", count(s["params_mtp"])});
    if (!m.not_counted.empty()) t.add_row({"not counted", m.not_counted});
    std::ostringstream seq;
    seq << "forward FLOPs per token at seq " << format_fixed(o->seq, 0);
    t.add_row({seq.str(), format_quantity(s["flops_per_token"].get<double>(), "FLOP", 4)});
    t.add_row(
        {"  of which attention (QK^T and AV)", format_quantity(s["attention_flops_per_token"].get<double>(), "FLOP", 4)});
    t.add_row({"training FLOPs per token (3x forward)",
               format_quantity(s["training_flops_per_token"].get<double>(), "FLOP", 4)});
    if (s.contains("mtp_flops_per_token")) {  // trained beside the model only where a job trains them
      t.add_row({"forward FLOPs per token, " + mtp + " (not in the above)",
                 format_quantity(s["mtp_flops_per_token"].get<double>(), "FLOP", 4)});
      t.add_row({"training FLOPs per token, " + mtp,
                 format_quantity(s["mtp_training_flops_per_token"].get<double>(), "FLOP", 4)});
    }
    const bool capped = m.sliding_window || m.attention_chunk;
    t.add_row({"KV cache per token (" + o->kv_dtype + (capped ? ", every layer, before the caps below)" : ")"),
               format_quantity(s["kv_bytes_per_token"].get<double>(), "B", 4)});
    std::ostringstream per_seq;
    per_seq << "KV cache of a sequence of " << format_fixed(o->seq, 0) << " tokens";
    t.add_row({per_seq.str(), format_quantity(s["kv_bytes_per_sequence"].get<double>(), "B", 4)});
    if (m.sliding_window)
      t.add_row({m.window_layers < m.layers ? "sliding window (caps the KV cache) in " + std::to_string(m.window_layers) +
                                                  " of " + std::to_string(m.layers) + " layers"
                                            : std::string("sliding window (caps the KV cache)"),
                 std::to_string(*m.sliding_window)});
    if (m.attention_chunk)
      t.add_row({m.chunk_layers < m.layers ? "attention chunk (caps the KV cache) in " + std::to_string(m.chunk_layers) +
                                                 " of " + std::to_string(m.layers) + " layers"
                                           : std::string("attention chunk (caps the KV cache)"),
                 std::to_string(*m.attention_chunk)});
    std::cout << render(t, Format::kTable);
    std::cout << "FLOP convention: " << s["convention_description"].get<std::string>()
              << "; N = matmul parameters per token (the input embedding lookup is not a matmul)\n";
    return 0;
  };
}

CEILINGS_SUBCOMMAND("model", "Parameters, FLOPs per token and KV-cache bytes from a Hugging Face config.json", setup);

}  // namespace
