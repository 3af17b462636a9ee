// Model arithmetic against published parameter counts (real config.json fixtures), KV bytes and FLOP conventions.
#include <gtest/gtest.h>

#include <fstream>
#include <utility>
#include <vector>

#include "ceilings/error.hpp"
#include "ceilings/json_fields.hpp"
#include "ceilings/model.hpp"
#include "cli_runner.hpp"

using namespace ceilings;

namespace {
std::string fixture_path(const std::string& name) {
  return std::string(CEILINGS_FIXTURES) + "/hf/" + name + ".config.json";
}
ModelConfig fixture(const std::string& name) { return read_hf_config(fixture_path(name)); }
// The InputError a config gets from parse_hf_config, or "no error".
std::string error_of(const json& config) {
  try {
    parse_hf_config(config, "test");
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}
}  // namespace

// Published totals (Hub safetensors metadata): these fail if any module is miscounted.
TEST(ModelParams, Llama31_8B) {
  const ParamCounts c = count_params(fixture("Llama-3.1-8B"));
  EXPECT_EQ(c.total, 8030261248);
  EXPECT_EQ(c.active, c.total);
  EXPECT_EQ(c.embedding, 525336576);
  EXPECT_EQ(c.lm_head, 525336576);
}

TEST(ModelParams, Mistral7B) { EXPECT_EQ(count_params(fixture("Mistral-7B-v0.1")).total, 7241732096); }

TEST(ModelParams, Qwen2_7B_WithQkvBias) { EXPECT_EQ(count_params(fixture("Qwen2-7B")).total, 7615616512); }

TEST(ModelParams, Mixtral8x7B_TotalAndActive) {
  const ParamCounts c = count_params(fixture("Mixtral-8x7B-v0.1"));
  EXPECT_EQ(c.total, 46702792704);
  // Two of eight experts per token: 32 layers * 6 unused experts * 3*4096*14336 fewer.
  EXPECT_EQ(c.active, 46702792704 - 32LL * 6 * 3 * 4096 * 14336);
  EXPECT_EQ(c.active, 12879925248);  // the "12.9B active" of the Mixtral paper
  EXPECT_EQ(c.router, 32LL * 4096 * 8);
}

TEST(ModelParams, Gpt2_TiedWithLearnedPositions) {
  const ModelConfig m = fixture("gpt2");
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.total, 124439808);
  EXPECT_EQ(c.lm_head, 0);
  EXPECT_EQ(c.embedding, 50257LL * 768 + 1024LL * 768);
  // The tied matrix still does the logit matmul.
  EXPECT_EQ(c.matmul_active, c.total - c.embedding - c.norms + 50257LL * 768);
}

TEST(ModelParams, DeepSeekV3_671BTotal37BActive) {
  const ModelConfig m = fixture("DeepSeek-V3");
  ASSERT_TRUE(m.is_mla());
  ASSERT_TRUE(m.is_moe());
  const ParamCounts c = count_params(m);
  // 671B main model (DeepSeek-V3 report: 671B total, 37B activated; 685B on the Hub includes 14B MTP).
  EXPECT_EQ(c.total, 671026419200);
  // 8 routed + 1 shared expert per MoE layer. The router (gate weights and the 256 e_score_correction_bias
  // values) scores every expert for every token, so it counts as active; recounts that leave the bias out
  // get 58*256 = 14,848 fewer (37,552,282,624).
  EXPECT_EQ(c.active, 37552297472);
  // The MTP module as stored in the checkpoint, with its own copy of embedding and head: 671B + 14B ~ 685B.
  EXPECT_EQ(c.mtp, 2LL * 129280 * 7168 + 3 * 7168 + 2LL * 7168 * 7168 + 11507286272LL);
  EXPECT_NEAR(static_cast<double>(c.total + c.mtp), 685e9, 1e9);
}

// Qwen3: q_norm and k_norm (a head_dim-wide RMSNorm each) in every layer, and a head width of its own (128 with
// hidden 4096 and 32 heads here; 1024 and 16 heads in the 0.6B).
TEST(ModelParams, Qwen3_8B_WithQkNorms) {
  const ModelConfig m = fixture("Qwen3-8B");
  EXPECT_TRUE(m.qk_norm);
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.total, 8190735360);  // the Hub's safetensors count; "8.2B, 6.95B non-embedding" in the model card
  EXPECT_EQ(c.total - c.embedding - c.lm_head, 6946075648);
  EXPECT_EQ(c.norms, 36LL * (2 * 4096 + 2 * 128) + 4096);
}

// Tied: the Hub's safetensors count (751,632,384) holds the tied lm_head a second time; Transformers'
// num_parameters() and this count hold it once.
TEST(ModelParams, Qwen3_0_6B_Tied) {
  const ParamCounts c = count_params(fixture("Qwen3-0.6B"));
  EXPECT_EQ(c.total, 596049920);
  EXPECT_EQ(c.total + 151936LL * 1024, 751632384);
  EXPECT_EQ(c.lm_head, 0);
}

// Qwen3-MoE: 128 experts without a shared one, 8 a token, an unbiased router; "30.5B total, 3.3B activated".
TEST(ModelParams, Qwen3_30B_A3B_TotalAndActive) {
  const ModelConfig m = fixture("Qwen3-30B-A3B");
  ASSERT_TRUE(m.is_moe());
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.total, 30532122624);
  EXPECT_EQ(c.active, 3353032704);
  EXPECT_EQ(c.router, 48LL * 2048 * 128);
  EXPECT_EQ(c.active, c.total - 48LL * (128 - 8) * 3 * 2048 * 768);
}

// decoder_sparse_step counts from 1 ((layer + 1) % step == 0) and mlp_only_layers are dense, of intermediate_size
// (Transformers' Qwen3MoeDecoderLayer).
TEST(ModelParams, Qwen3MoeSparseStepAndMlpOnlyLayers) {
  json config = read_json_file(fixture_path("Qwen3-30B-A3B"));
  config["num_hidden_layers"] = 6;
  config["decoder_sparse_step"] = 2;
  config["mlp_only_layers"] = {1, 3};
  const ModelConfig m = parse_hf_config(config, "test");
  std::vector<bool> moe;
  for (std::int64_t l = 0; l < 6; ++l) moe.push_back(m.is_moe_layer(l));
  EXPECT_EQ(moe, (std::vector<bool>{false, false, false, false, false, true}));
  EXPECT_TRUE(m.has_dense_mlp_layer());
  EXPECT_EQ(count_params(m).mlp, 5LL * 3 * 2048 * 6144 + 128LL * 3 * 2048 * 768);
  config["mlp_only_layers"] = {6};
  EXPECT_THROW(parse_hf_config(config, "test"), InputError);  // no layer 6 in 6 layers
  // Every layer sparse: the 6144-wide dense MLP is in no layer, and tensor parallelism need not divide it.
  config["decoder_sparse_step"] = 1;
  config["mlp_only_layers"] = json::array();
  config["intermediate_size"] = 6143;
  const ModelConfig all_moe = parse_hf_config(config, "test");
  EXPECT_FALSE(all_moe.has_dense_mlp_layer());
  EXPECT_NO_THROW(check_parallel_split(all_moe, 4, 1, "--tp"));
  config["mlp_only_layers"] = {0};  // one dense layer: now its width must split
  EXPECT_THROW(check_parallel_split(parse_hf_config(config, "test"), 4, 1, "--tp"), InputError);
  config["mlp_only_layers"] = json::array();
  config["decoder_sparse_step"] = 2;  // layers 0, 2, 4 dense
  EXPECT_THROW(check_parallel_split(parse_hf_config(config, "test"), 4, 1, "--tp"), InputError);
  config["decoder_sparse_step"] = 1;
  // Transformers 5 saves the expert count as num_local_experts: the same count; both stated must agree.
  json saved = config;
  saved.erase("num_experts");
  saved["num_local_experts"] = 128;
  EXPECT_EQ(parse_hf_config(saved, "test").routed_experts, 128);
  saved["num_experts"] = 64;
  EXPECT_THROW(parse_hf_config(saved, "test"), InputError);
  // No experts: a dense model, whose expert keys need not be stated.
  json dense = config;
  dense["num_experts"] = 0;
  dense.erase("num_experts_per_tok");
  dense.erase("moe_intermediate_size");
  EXPECT_FALSE(parse_hf_config(dense, "test").is_moe());
  // Which layers slide under use_sliding_window depends on the Transformers version: refused without layer_types.
  config["use_sliding_window"] = true;
  config["sliding_window"] = 4096;
  EXPECT_THROW(parse_hf_config(config, "test"), InputError);
  json types = json::array();
  for (int l = 0; l < 6; ++l) types.push_back(l < 3 ? "full_attention" : "sliding_attention");
  config["layer_types"] = types;
  EXPECT_EQ(parse_hf_config(config, "test").window_layers, 3);
  // The architecture is a class name: another type is refused, as any wrong type is (review 99: it was dropped)
  config["architectures"] = {"Qwen3MoeForCausalLM"};
  EXPECT_EQ(parse_hf_config(config, "test").architecture, "Qwen3MoeForCausalLM");
  for (const json bad : {json::array({true}), json::array({json::object()}), json::array({7})}) {
    config["architectures"] = bad;
    try {
      parse_hf_config(config, "test");
      ADD_FAILURE() << bad.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("its first entry is not a class name"), std::string::npos) << e.what();
    }
  }
}

// gpt-oss (OpenAI model card: 116.83B and 20.91B total; 5.13B and 3.61B active, which leave the input embedding
// out): biased q/k/v/o, a sink logit per head, a biased router, experts with biased gate_up and down projections.
// The checkpoints store the experts in MXFP4 blocks; these are the parameters the blocks decode to.
TEST(ModelParams, GptOss_TotalAndActive) {
  const ModelConfig small = fixture("gpt-oss-20b");
  EXPECT_TRUE(small.attention_sinks);
  const ParamCounts c20 = count_params(small);
  EXPECT_EQ(c20.total, 20914757184);
  EXPECT_EQ(c20.active - c20.embedding, 3608307264);
  const ParamCounts c120 = count_params(fixture("gpt-oss-120b"));
  EXPECT_EQ(c120.total, 116829156672);
  EXPECT_EQ(c120.active - c120.embedding, 5132849472);
  // Attention per layer: q/k/v/o with biases and 64 sinks.
  EXPECT_EQ(c120.attention, 36LL * (2880LL * 4096 + 4096 + 2 * (2880LL * 512 + 512) + 4096LL * 2880 + 2880 + 64));
  EXPECT_EQ(c120.router, 36LL * (2880 * 128 + 128));
}

// gpt-oss alternates: layers 0, 2, ... attend to the last 128 tokens and cache no more, the others to everything.
TEST(ModelKv, GptOssSlidingLayersCacheTheirWindow) {
  const ModelConfig m = fixture("gpt-oss-120b");
  ASSERT_TRUE(m.sliding_window.has_value());
  EXPECT_EQ(*m.sliding_window, 128);
  EXPECT_EQ(m.window_layers, 18);
  const double kv_token = 2.0 * 36 * 8 * 64 * 2;  // K and V of 8 heads of 64, 36 layers, bf16
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, 2), kv_token);
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(m, 131072, 2), kv_token / 36 * (18.0 * 131072 + 18.0 * 128));
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(m, 100, 2), kv_token * 100);
  EXPECT_DOUBLE_EQ(attention_flops_forward(flop_shape(m), 8192, AttentionConvention::kNonCausal),
                   2.0 * 64 * 128 * (18.0 * 8192 + 18.0 * 128));
  // Without layer_types, GptOssConfig's default: every other layer from the first.
  json config = read_json_file(fixture_path("gpt-oss-20b"));
  config.erase("layer_types");
  config["num_hidden_layers"] = 5;
  EXPECT_EQ(parse_hf_config(config, "test").window_layers, 3);
  config.erase("sliding_window");  // GptOssConfig would take 128: stated or refused
  EXPECT_THROW(parse_hf_config(config, "test"), InputError);
}

// Gemma 2: four RMSNorms a layer, the output layer tied, every other layer sliding over 4096 tokens.
TEST(ModelParams, Gemma2_9B_FourNormsTiedAlternating) {
  const ModelConfig m = fixture("gemma-2-9b");
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.total, 9241705984);  // the Hub's safetensors count
  EXPECT_EQ(c.lm_head, 0);
  EXPECT_EQ(c.norms, 42LL * 4 * 3584 + 3584);
  EXPECT_EQ(m.window_layers, 21);
  EXPECT_EQ(*m.sliding_window, 4096);
}

// Gemma 3: q/k norms too, five of six layers sliding (layer i full where (i + 1) % 6 == 0).
TEST(ModelParams, Gemma3_1B_And_27B) {
  const ModelConfig small = fixture("gemma-3-1b-pt");
  EXPECT_EQ(count_params(small).total, 999885952);
  EXPECT_EQ(small.window_layers, 22);  // 26 layers, 4 full
  EXPECT_EQ(*small.sliding_window, 512);
  // The 27b with vision: its language model (the Hub's 27,432,406,640 hold the SigLIP tower and projector too,
  // 423,060,336), with Gemma3TextConfig's vocabulary of 262208 where text_config states none.
  const ModelConfig big = fixture("gemma-3-27b-pt");
  EXPECT_EQ(big.model_type, "gemma3");
  EXPECT_EQ(count_params(big).total, 27432406640 - 423060336);
  EXPECT_EQ(big.vocab, 262208);
  EXPECT_EQ(big.window_layers, 52);
  EXPECT_FALSE(big.not_counted.empty());
  // The 4b's text_config leaves heads, KV heads and head width to the defaults (8, 4, 256; not 2560 / 8 = 320).
  const ModelConfig four = fixture("gemma-3-4b-pt");
  EXPECT_EQ(four.heads, 8);
  EXPECT_EQ(four.kv_heads, 4);
  EXPECT_EQ(four.head_dim, 256);
  EXPECT_EQ(count_params(four).total, 4300079472 - 419816304);
  // The KV cache: 5 of 6 layers hold at most the 1024-token window.
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(four, 32768, 2),
                   2.0 * 4 * 256 * 2 * (29.0 * 1024 + 5.0 * 32768));
}

// Llama 4. The totals below are not the Hub's metadata (it could not be read) but Transformers' own counts (4.57.1
// and 5.24.0 alike) of Llama4ForConditionalGeneration built from these configs on the meta device, the Hub's 109B
// and 402B; of them the vision tower, 850,960,896, and its projector, 20,971,520, are not counted. Every Scout
// layer is an MoE layer: 16 experts of 3 * 5120 * 8192, a token's one of them, a shared expert of the same width
// and an unbiased router; attention without biases, its q/k norm without weights.
TEST(ModelParams, Llama4Scout_TotalAndActive) {
  const ModelConfig m = fixture("Llama-4-Scout-17B-16E");
  EXPECT_EQ(m.model_type, "llama4");
  EXPECT_FALSE(m.not_counted.empty());
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.total, 108641793536 - 850960896 - 20971520);
  EXPECT_EQ(c.total, 107769861120);
  const std::int64_t expert = 3LL * 5120 * 8192;
  EXPECT_EQ(c.mlp, 48 * (16 + 1) * expert);
  EXPECT_EQ(c.router, 48LL * 5120 * 16);
  EXPECT_EQ(c.attention, 48LL * (2 * 5120LL * 40 * 128 + 2 * 5120LL * 8 * 128));
  EXPECT_EQ(c.norms, 48LL * 2 * 5120 + 5120);
  EXPECT_EQ(c.embedding, 202048LL * 5120);
  EXPECT_EQ(c.lm_head, 202048LL * 5120);
  // Active, as for every MoE here: all but the 15 experts a token does not visit, the input embedding and the
  // router included (Meta's "17B active"; 16,138,408,960 without the embedding).
  EXPECT_EQ(c.active, c.total - 48 * 15 * expert);
  EXPECT_EQ(c.active, 17172894720);
  EXPECT_FALSE(m.has_dense_mlp_layer());
}

// Maverick interleaves: layers 1, 3, ..., 47 are MoE layers of 128 experts (interleave_moe_layer_step 2), the
// others dense MLPs of intermediate_size_mlp 16384; no q/k norm (use_qk_norm false; it has no weights anyway).
TEST(ModelParams, Llama4Maverick_InterleavedMoe) {
  const ModelConfig m = fixture("Llama-4-Maverick-17B-128E");
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.total, 401583781376 - 850960896 - 20971520);
  EXPECT_EQ(c.total, 400711848960);
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_TRUE(m.is_moe_layer(47));
  EXPECT_TRUE(m.has_dense_mlp_layer());
  const std::int64_t expert = 3LL * 5120 * 8192;
  EXPECT_EQ(c.mlp, 24 * (128 + 1) * expert + 24 * 3LL * 5120 * 16384);
  EXPECT_EQ(c.router, 24LL * 5120 * 128);
  EXPECT_EQ(c.active, c.total - 24 * 127 * expert);
  EXPECT_EQ(c.active, 17184691200);
  EXPECT_NO_THROW(check_parallel_split(m, 8, 1, "--tp"));
  EXPECT_EQ(m.attention_chunk, 8192);
  EXPECT_EQ(m.chunk_layers, 36);
}

// The language model alone (llama4_text, Llama4ForCausalLM) is the same count; it is tied by its own
// tie_word_embeddings, and so is the multimodal model's (Transformers builds Llama 4 untied whatever the top-level
// flag says).
TEST(ModelParams, Llama4TextAndTies) {
  const json scout = read_json_file(fixture_path("Llama-4-Scout-17B-16E"));
  json text = scout["text_config"];
  text["architectures"] = {"Llama4ForCausalLM"};
  const ModelConfig lm = parse_hf_config(text, "text");
  EXPECT_EQ(lm.model_type, "llama4_text");
  EXPECT_TRUE(lm.not_counted.empty());
  EXPECT_EQ(count_params(lm).total, 107769861120);
  json top_tied = scout;
  top_tied["tie_word_embeddings"] = true;
  EXPECT_EQ(count_params(parse_hf_config(top_tied)).lm_head, 202048LL * 5120);
  json text_tied = scout;
  text_tied["text_config"]["tie_word_embeddings"] = true;
  EXPECT_EQ(count_params(parse_hf_config(text_tied)).total, 107769861120 - 202048LL * 5120);
}

// Which layers attend in chunks: the RoPE layers (no_rope_layers 1), every one but each 4th by default (Scout's
// no_rope_layers is empty), or as layer_types names them; the NoPE layers attend to everything. Which are MoE
// layers: moe_layers, or every interleave_moe_layer_step-th from the step's.
TEST(ModelConfigs, Llama4LayerKinds) {
  const json scout = read_json_file(fixture_path("Llama-4-Scout-17B-16E"));
  auto parsed = [&](const json& text_changes) {
    json c = scout;
    for (const auto& [key, value] : text_changes.items()) c["text_config"][key] = value;
    return parse_hf_config(c);
  };
  EXPECT_EQ(parsed(json::object()).chunk_layers, 36);
  EXPECT_EQ(parsed({{"no_rope_layer_interval", 2}}).chunk_layers, 24);
  json rope = json::array();
  for (int l = 0; l < 48; ++l) rope.push_back(l < 40 ? 1 : 0);
  EXPECT_EQ(parsed({{"no_rope_layers", rope}}).chunk_layers, 40);
  json types = json::array();
  for (int l = 0; l < 48; ++l) types.push_back(l % 2 ? "chunked_attention" : "full_attention");
  EXPECT_EQ(parsed({{"layer_types", types}}).chunk_layers, 24);
  // No chunk: every layer full (Transformers 5).
  const ModelConfig unchunked = parsed({{"attention_chunk_size", nullptr}});
  EXPECT_FALSE(unchunked.attention_chunk.has_value());
  EXPECT_EQ(unchunked.chunk_layers, 0);
  // Absent: it must be stated where a layer would attend in chunks (Transformers would take 8192), not where
  // every layer is full.
  json no_chunk = scout;
  no_chunk["text_config"].erase("attention_chunk_size");
  EXPECT_THROW(parse_hf_config(no_chunk), InputError);
  json full = json::array();
  for (int l = 0; l < 48; ++l) full.push_back("full_attention");
  no_chunk["text_config"]["layer_types"] = full;
  EXPECT_EQ(parse_hf_config(no_chunk).chunk_layers, 0);
  no_chunk["text_config"].erase("layer_types");
  no_chunk["text_config"]["no_rope_layers"] = json::array();
  for (int l = 0; l < 48; ++l) no_chunk["text_config"]["no_rope_layers"].push_back(0);
  EXPECT_EQ(parse_hf_config(no_chunk).chunk_layers, 0);
  // MoE layers named: layers 0 and 5 (16 experts and a shared one), the other 46 dense (16384 wide).
  const ModelConfig two = parsed({{"moe_layers", {5, 0}}});
  EXPECT_TRUE(two.is_moe_layer(0));
  EXPECT_TRUE(two.is_moe_layer(5));
  EXPECT_FALSE(two.is_moe_layer(1));
  EXPECT_EQ(count_params(two).mlp, 2 * 17 * 3LL * 5120 * 8192 + 46 * 3LL * 5120 * 16384);
  // None: a dense model, whose expert keys need not be stated.
  json dense = scout;
  dense["text_config"]["moe_layers"] = json::array();
  dense["text_config"].erase("num_local_experts");
  dense["text_config"].erase("num_experts_per_tok");
  const ModelConfig all_dense = parse_hf_config(dense);
  EXPECT_FALSE(all_dense.is_moe());
  EXPECT_EQ(count_params(all_dense).mlp, 48 * 3LL * 5120 * 16384);
  // A step of 3: layers 2, 5, ..., 47.
  const ModelConfig third = parsed({{"interleave_moe_layer_step", 3}});
  EXPECT_TRUE(third.is_moe_layer(2));
  EXPECT_FALSE(third.is_moe_layer(3));
  EXPECT_EQ(count_params(third).router, 16LL * 5120 * 16);
}

// Llama 4 Scout's KV cache and attention FLOPs by hand: 36 of its 48 layers attend in chunks of 8192 tokens and
// cache at most a chunk; 12 (layers 3, 7, ..., 47) attend to everything.
TEST(ModelKv, Llama4ScoutChunkedLayers) {
  const ModelConfig m = fixture("Llama-4-Scout-17B-16E");
  const double kv_layer_token = 2.0 * 8 * 128 * 2;  // K and V of 8 KV heads of 128, bf16
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, 2), 48 * kv_layer_token);
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(m, 131072, 2), kv_layer_token * (12.0 * 131072 + 36.0 * 8192));
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(m, 8000, 2), kv_layer_token * 48 * 8000);
  const FlopShape s = flop_shape(m);
  const double per_key = 2.0 * 40 * (128 + 128);
  // 20000 tokens: chunks of 8192, 8192 and 3616; (2 * 8192^2 + 3616^2) / 20000 = 7364.6592 keys a query
  // non-causal, half that causal; the full layers 20000 and 10000.
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 20000, AttentionConvention::kNonCausal),
                   per_key * (12.0 * 20000 + 36.0 * 7364.6592));
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 20000, AttentionConvention::kCausal),
                   per_key * (12.0 * 10000 + 36.0 * 3682.3296));
  EXPECT_DOUBLE_EQ(attention_flops_decode(s, 20000), per_key * (12.0 * 20000 + 36.0 * 3616));
}

// Keys Llama4TextConfig fills with a default other than "none" must be stated; what Transformers 4.x and 5.x
// read differently (attention_bias true, a null head width or KV head count) is refused by name, as is what no
// version builds.
TEST(ModelErrors, Llama4KeysAndContradictions) {
  const json scout = read_json_file(fixture_path("Llama-4-Scout-17B-16E"));
  for (const char* key : {"num_key_value_heads", "head_dim", "attention_chunk_size", "interleave_moe_layer_step",
                          "num_local_experts", "num_experts_per_tok"}) {
    json c = scout;
    c["text_config"].erase(key);
    const std::string e = error_of(c);
    EXPECT_NE(e.find(std::string("text_config.") + key + "': is absent: Transformers' Llama4TextConfig"),
              std::string::npos)
        << e;
  }
  json maverick = read_json_file(fixture_path("Llama-4-Maverick-17B-128E"));
  maverick["text_config"].erase("intermediate_size_mlp");  // its dense layers' width
  EXPECT_NE(error_of(maverick).find("intermediate_size_mlp"), std::string::npos);
  maverick["text_config"]["intermediate_size_mlp"] = nullptr;
  EXPECT_NE(error_of(maverick).find("intermediate_size_mlp"), std::string::npos) << error_of(maverick);
  json scout_no_mlp = scout;  // every Scout layer is MoE: the dense width is not needed
  scout_no_mlp["text_config"].erase("intermediate_size_mlp");
  EXPECT_EQ(count_params(parse_hf_config(scout_no_mlp)).total, 107769861120);
  const std::vector<std::pair<json, std::string>> bad = {
      {{{"attention_bias", true}}, "attention_bias': is true"},
      {{{"head_dim", nullptr}}, "head_dim': is null"},
      {{{"num_key_value_heads", nullptr}}, "num_key_value_heads': is null"},
      {{{"moe_layers", {0, 48}}}, "moe_layers': holds 48"},
      {{{"interleave_moe_layer_step", 0}}, "interleave_moe_layer_step"},
      {{{"num_experts_per_tok", 17}}, "num_experts_per_tok': is larger than num_local_experts"},
      {{{"layer_types", json::array()}}, "layer_types': names 0 layers"},
      {{{"no_rope_layers", {1, 0}}}, "no_rope_layers': names 2 layers"},
      {{{"no_rope_layer_interval", 0}}, "no_rope_layer_interval"},
  };
  for (const auto& [changes, expected] : bad) {
    json c = scout;
    for (const auto& [key, value] : changes.items()) c["text_config"][key] = value;
    const std::string e = error_of(c);
    EXPECT_NE(e.find(expected), std::string::npos) << changes.dump() << ": " << e;
  }
  json sliding = scout;
  sliding["text_config"]["layer_types"] = json::array();
  for (int l = 0; l < 48; ++l) sliding["text_config"]["layer_types"].push_back("sliding_attention");
  EXPECT_NE(error_of(sliding).find("'sliding_attention'"), std::string::npos) << error_of(sliding);
  json no_chunk = sliding;
  for (auto& t : no_chunk["text_config"]["layer_types"]) t = "chunked_attention";
  no_chunk["text_config"]["attention_chunk_size"] = nullptr;
  EXPECT_NE(error_of(no_chunk).find("attention_chunk_size': is null"), std::string::npos) << error_of(no_chunk);
  json bits = scout;
  bits["text_config"]["no_rope_layers"] = json::array();
  for (int l = 0; l < 48; ++l) bits["text_config"]["no_rope_layers"].push_back(l == 7 ? 2 : 1);
  EXPECT_NE(error_of(bits).find("no_rope_layers': holds 2"), std::string::npos) << error_of(bits);
  json no_text = scout;
  no_text.erase("text_config");
  EXPECT_NE(error_of(no_text).find("text_config': is absent"), std::string::npos) << error_of(no_text);
}

// `model` on Llama 4: exit 0 with the chunk in its JSON and the vision tower named; bad input exits 2 naming the key.
TEST(ModelCli, Llama4) {
  auto r = test::run_cli({"model", "--hf-config", fixture_path("Llama-4-Scout-17B-16E"), "--json", "--seq", "20000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["params_total"].get<std::int64_t>(), 107769861120);
  EXPECT_EQ(j["params_active"].get<std::int64_t>(), 17172894720);
  EXPECT_EQ(j["attention_chunk_size"], 8192);
  EXPECT_EQ(j["chunked_attention_layers"], 36);
  EXPECT_EQ(j["moe"]["moe_layers"], 48);
  EXPECT_EQ(j["moe"]["shared_experts"], 1);
  EXPECT_FALSE(j["not_counted"].is_null());
  EXPECT_NE(j["convention_description"].get<std::string>().find("in 36 of the 48 layers"), std::string::npos);
  r = test::run_cli({"model", "--hf-config", fixture_path("Llama-4-Maverick-17B-128E")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("400,711,848,960"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attention chunk (caps the KV cache) in 36 of 48 layers"), std::string::npos) << r.out;
  r = test::run_cli({"memory", "--mode", "infer", "--hf-config", fixture_path("Llama-4-Scout-17B-16E"), "--context",
                     "131072", "--gpu", "H200", "--tp", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("a chunk's 8192 tokens, not the context, in the 36 of 48 layers"), std::string::npos) << r.out;
  const std::string dir = test::scratch_dir("model_cli_llama4");
  json bad = read_json_file(fixture_path("Llama-4-Scout-17B-16E"));
  bad["text_config"]["attention_bias"] = true;
  std::ofstream(dir + "/bias.json") << bad.dump();
  r = test::run_cli({"model", "--hf-config", dir + "/bias.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("attention_bias"), std::string::npos) << r.err;
}

// Phi-3/Phi-4 (Transformers' Phi3ForCausalLM): q/k/v fused into qkv_proj and gate/up into gate_up_proj, as many
// parameters as Llama's separate matrices, no biases. The Hub's safetensors counts.
TEST(ModelParams, Phi3_Phi4_Phi4Mini) {
  const ModelConfig mini = fixture("Phi-3-mini-4k-instruct");
  EXPECT_EQ(mini.model_type, "phi3");
  const ParamCounts c3 = count_params(mini);
  EXPECT_EQ(c3.total, 3821079552);
  EXPECT_EQ(c3.lm_head, 32064LL * 3072);
  EXPECT_EQ(c3.attention, 32LL * (3072LL * (3 * 3072) + 3072LL * 3072));  // qkv_proj 3072 -> 9216, o_proj
  EXPECT_EQ(c3.mlp, 32LL * (3072LL * 2 * 8192 + 8192LL * 3072));          // gate_up_proj 3072 -> 16384, down_proj
  EXPECT_EQ(count_params(fixture("phi-4")).total, 14659507200);
  // Phi-4-mini: 24 heads of 128, 8 KV heads, the output layer tied (held once in the checkpoint); its partial
  // rotary factor of 0.75 changes no count.
  const ModelConfig four_mini = fixture("Phi-4-mini-instruct");
  EXPECT_TRUE(four_mini.tied_embeddings);
  EXPECT_EQ(four_mini.head_dim, 128);
  EXPECT_EQ(four_mini.kv_heads, 8);
  const ParamCounts c4 = count_params(four_mini);
  EXPECT_EQ(c4.total, 3836021760);
  EXPECT_EQ(c4.lm_head, 0);
  EXPECT_EQ(c4.matmul_active, c4.total - c4.norms);  // the tied matrix multiplies once, for the logits
}

// Phi-3-mini-4k's window of 2047 tokens applies to every layer (Phi3Model masks them alike): past it, each query meets
// 2047 keys and the cache holds 2047 tokens. Phi-4-mini's 262144 is longer than its 131072 positions: no cap.
TEST(ModelKv, Phi3WindowOnEveryLayer) {
  const ModelConfig m = fixture("Phi-3-mini-4k-instruct");
  ASSERT_TRUE(m.sliding_window.has_value());
  EXPECT_EQ(*m.sliding_window, 2047);
  EXPECT_EQ(m.window_layers, 32);
  const double kv_token = 2.0 * 32 * 32 * 96 * 2;  // K and V, 32 layers of 32 heads of 96, bf16
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, 2), kv_token);
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(m, 4096, 2), kv_token * 2047);
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(m, 1000, 2), kv_token * 1000);
  EXPECT_DOUBLE_EQ(attention_flops_forward(flop_shape(m), 4096, AttentionConvention::kNonCausal),
                   4.0 * 32 * 32 * 96 * 2047);
  const FlopShape s = flop_shape(m);
  EXPECT_DOUBLE_EQ(forward_flops_per_token(s, 1024, AttentionConvention::kNonCausal),
                   2.0 * (3821079552.0 - 32064.0 * 3072 - 65.0 * 3072) + 4.0 * 32 * 32 * 96 * 1024);
  const ModelConfig four_mini = fixture("Phi-4-mini-instruct");
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(four_mini, 131072, 2), 2.0 * 32 * 8 * 128 * 2 * 131072);
  EXPECT_FALSE(fixture("phi-4").sliding_window.has_value());  // sliding_window null
}

// Transformers' Phi3 model builds no bias and takes a stated head_dim as it is: a config saying otherwise is refused
// by name, not counted as some other model.
TEST(ModelErrors, Phi3RefusesBiasesAndNullHeadDim) {
  for (const char* key : {"attention_bias", "mlp_bias", "lm_head_bias"}) {
    json config = read_json_file(fixture_path("Phi-4-mini-instruct"));
    config[key] = true;
    try {
      parse_hf_config(config, "phi");
      ADD_FAILURE() << key << " true was counted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  json config = read_json_file(fixture_path("Phi-3-mini-4k-instruct"));
  config["head_dim"] = nullptr;
  EXPECT_THROW(parse_hf_config(config, "phi"), InputError);
  config["head_dim"] = 128;  // stated: taken as it is (32 heads of 128 on a width of 3072)
  EXPECT_EQ(parse_hf_config(config, "phi").head_dim, 128);
  config.erase("head_dim");
  config["sliding_window"] = 0;
  EXPECT_THROW(parse_hf_config(config, "phi"), InputError);
  config["sliding_window"] = nullptr;  // none: every layer sees everything
  EXPECT_FALSE(parse_hf_config(config, "phi").sliding_window.has_value());
  const auto r = test::run_cli({"model", "--hf-config", fixture_path("Phi-3-mini-4k-instruct"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["params_total"].get<std::int64_t>(), 3821079552);
  EXPECT_EQ(j["sliding_window_layers"].get<std::int64_t>(), 32);
}

// GLM-4.5 and GLM-4.5-Air (Transformers' Glm4MoeForCausalLM): q/k/v biases, GLM-4.5's q/k norms, the first 3 (Air: 1)
// layers dense, then 160 (128) routed experts of 1536 (1408) and one shared, 8 a token, a router with
// e_score_correction_bias. Transformers 4.57.1 on the meta device: 352,797,814,784 and 106,852,245,504 parameters plus
// 14,240 and 5,760 e_score_correction_bias buffer values, which the checkpoints store. The Hub's safetensors totals
// (358,337,791,296 and 110,468,824,832) hold the MTP layer too, with its own embedding and output head, as
// DeepSeek-V3's 685B do: counted apart, as there.
TEST(ModelParams, Glm45_And_Air_TotalActiveAndMtp) {
  const ModelConfig big = fixture("GLM-4.5");
  ASSERT_TRUE(big.is_moe());
  EXPECT_TRUE(big.qk_norm);
  EXPECT_EQ(big.head_dim, 128);  // stated: 5120 / 96 heads is no whole width
  const ParamCounts c = count_params(big);
  EXPECT_EQ(c.total, 352797829024);
  EXPECT_EQ(c.total + c.mtp, 358337791296);
  EXPECT_EQ(c.active, c.total - 89LL * (160 - 8) * 3 * 5120 * 1536);
  EXPECT_EQ(c.active, 33632266144);  // "32B active" leaves out the 0.78B input embedding: 32.86B
  EXPECT_EQ(c.router, 89LL * (5120 * 160 + 160));
  EXPECT_EQ(c.attention, 92LL * (5120LL * 96 * 128 + 96 * 128 + 2 * (5120LL * 8 * 128 + 8 * 128) + 96LL * 128 * 5120));
  EXPECT_EQ(c.norms, 92LL * (2 * 5120 + 2 * 128) + 5120);
  EXPECT_EQ(c.mlp, 3LL * 3 * 5120 * 12288 + 89LL * 161 * 3 * 5120 * 1536);
  // The MTP layer: enorm, hnorm, shared_head.norm, eh_proj (2h -> h), one MoE decoder layer with its q/k norms, and its
  // own embedding and output head.
  const std::int64_t moe_layer =
      (c.attention / 92) + 2 * 5120 + 2 * 128 + (5120LL * 160 + 160) + 161LL * 3 * 5120 * 1536;
  EXPECT_EQ(c.mtp, 3 * 5120 + 2LL * 5120 * 5120 + moe_layer + 2LL * 151552 * 5120);
  const ModelConfig air = fixture("GLM-4.5-Air");
  EXPECT_FALSE(air.qk_norm);
  const ParamCounts a = count_params(air);
  EXPECT_EQ(a.total, 106852251264);
  EXPECT_EQ(a.total + a.mtp, 110468824832);
  EXPECT_EQ(a.active, a.total - 45LL * (128 - 8) * 3 * 4096 * 1408);
  EXPECT_EQ(a.active, 13424129664);
  std::int64_t moe_layers = 0;
  for (std::int64_t l = 0; l < air.layers; ++l) moe_layers += air.is_moe_layer(l) ? 1 : 0;
  EXPECT_EQ(moe_layers, 45);
  EXPECT_TRUE(air.has_dense_mlp_layer());
}

// GLM-4.5 caches K and V of 8 heads of 128 in each of its 92 layers; every layer sees every key.
TEST(ModelKv, Glm45CacheAndAttention) {
  const ModelConfig m = fixture("GLM-4.5");
  EXPECT_FALSE(m.sliding_window.has_value());
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, 2), 2.0 * 92 * 8 * 128 * 2);  // 376,832 bytes
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(m, 131072, 1), 2.0 * 92 * 8 * 128 * 131072);
  const FlopShape s = flop_shape(m);
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 4096, AttentionConvention::kNonCausal), 4.0 * 92 * 96 * 128 * 4096);
  // Active matmul parameters: the active ones less the input embedding and every norm vector (2 of 5120 and 2 of
  // 128 a layer, the final one).
  EXPECT_DOUBLE_EQ(s.matmul_params, 33632266144.0 - 151552.0 * 5120 - (92.0 * (2 * 5120 + 2 * 128) + 5120));
  const auto r = test::run_cli({"model", "--hf-config", fixture_path("GLM-4.5-Air"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["params_total"].get<std::int64_t>(), 106852251264);
  EXPECT_EQ(j["moe"]["moe_layers"].get<std::int64_t>(), 45);
  EXPECT_EQ(j["moe"]["first_dense_layers"].get<std::int64_t>(), 1);
  EXPECT_EQ(j["params_mtp"].get<std::int64_t>(), 110468824832 - 106852251264);
}

// Keys Glm4MoeConfig would fill (8 KV heads, 128 experts of 1408, 8 a token, 1 shared, 1 dense layer) must be stated;
// bad values are refused by name; Transformers 5's other names for the expert and MTP counts are read, and must agree.
TEST(ModelErrors, Glm4MoeKeys) {
  for (const char* key : {"num_key_value_heads", "moe_intermediate_size", "num_experts_per_tok", "n_shared_experts",
                          "first_k_dense_replace", "n_routed_experts"}) {
    json config = read_json_file(fixture_path("GLM-4.5"));
    config.erase(key);
    const std::string e = error_of(config);
    EXPECT_NE(e.find(key), std::string::npos) << e;
    EXPECT_NE(e.find("is absent: Transformers' Glm4MoeConfig"), std::string::npos) << e;
  }
  const json base = read_json_file(fixture_path("GLM-4.5"));
  // A value out of range, or a null where Transformers 4.x and 5.x read different defaults: refused by name.
  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{{"first_k_dense_replace", 93},
                                                                         {"num_experts_per_tok", 161},
                                                                         {"head_dim", nullptr},
                                                                         {"num_key_value_heads", nullptr},
                                                                         {"n_shared_experts", -1}}) {
    json bad = base;
    bad[key] = value;
    EXPECT_NE(error_of(bad).find(key), std::string::npos) << key << ": " << error_of(bad);
  }
  json j = base;
  j.erase("head_dim");  // 5120 / 96 is no whole head width
  EXPECT_NE(error_of(j).find("hidden_size"), std::string::npos) << error_of(j);
  // Transformers 5's names: num_local_experts for n_routed_experts, num_mtp_layers for num_nextn_predict_layers.
  j = base;
  j.erase("n_routed_experts");
  j["num_local_experts"] = 160;
  j.erase("num_nextn_predict_layers");
  j["num_mtp_layers"] = 1;
  const ModelConfig renamed = parse_hf_config(j, "glm");
  EXPECT_EQ(renamed.routed_experts, 160);
  EXPECT_EQ(renamed.mtp_layers, 1);
  j["num_nextn_predict_layers"] = 2;
  EXPECT_NE(error_of(j).find("num_mtp_layers"), std::string::npos) << error_of(j);
  j = base;
  j["num_local_experts"] = 128;
  EXPECT_NE(error_of(j).find("num_local_experts"), std::string::npos) << error_of(j);
  // No MTP layer stated: none counted (Transformers builds none either way).
  j = base;
  j.erase("num_nextn_predict_layers");
  EXPECT_EQ(count_params(parse_hf_config(j, "glm")).mtp, 0);
  // attention_bias false: no q/k/v biases.
  j = base;
  j["attention_bias"] = false;
  EXPECT_EQ(count_params(parse_hf_config(j, "glm")).total, 352797829024 - 92LL * (96 + 2 * 8) * 128);
  EXPECT_EQ(test::run_cli({"model", "--hf-config", fixture_path("GLM-4.5"), "--seq", "0"}).exit_code, 2);
}

TEST(ModelKv, BytesPerToken) {
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(fixture("Llama-3.1-8B"), 2), 131072);  // 2*32*8*128*2 = 128 KiB
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(fixture("Llama-3.1-8B"), 1), 65536);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(fixture("gpt2"), 2), 2.0 * 12 * 768 * 2);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(fixture("Qwen2-7B"), 2), 2.0 * 28 * 4 * 128 * 2);
  // MLA caches the 512-wide latent plus the 64-wide shared rope key per layer.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(fixture("DeepSeek-V3"), 2), 61.0 * 576 * 2);
  // Mistral's every layer slides: its cache holds the window's 4096 tokens at most.
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(fixture("Mistral-7B-v0.1"), 32768, 2), 4096 * 131072.0);
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(fixture("Mistral-7B-v0.1"), 1000, 2), 1000 * 131072.0);
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(fixture("Llama-3.1-8B"), 32768, 2), 32768 * 131072.0);
}

TEST(ModelFlops, ConventionsOnLlama) {
  const FlopShape s = flop_shape(fixture("Llama-3.1-8B"));
  const double n = 8030261248.0 - 525336576.0 - (32 * 2 + 1) * 4096.0;  // no embedding lookup, no norms
  EXPECT_DOUBLE_EQ(s.matmul_params, n);
  const double attn = 4.0 * 32 * 32 * 128 * 8192;  // 4*L*H*Q*T forward, non-causal
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 8192, AttentionConvention::kNonCausal), attn);
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 8192, AttentionConvention::kCausal), attn / 2);
  // PaLM appendix B: 6N + 12*L*H*Q*T per trained token.
  EXPECT_DOUBLE_EQ(model_flops_per_token(s, 8192, AttentionConvention::kNonCausal),
                   6 * n + 12.0 * 32 * 32 * 128 * 8192);
  EXPECT_DOUBLE_EQ(hardware_flops_per_token(s, 8192, AttentionConvention::kNonCausal, Recompute::kSelective),
                   6 * n + 16.0 * 32 * 32 * 128 * 8192);
}

// Narayanan et al. 2021 eq. 3, full recompute: 96*B*s*l*h^2*(1 + s/6h + V/16lh) per iteration.
TEST(ModelFlops, MegatronEquation3) {
  const double l = 96, h = 12288, s = 2048, v = 51200;
  const FlopShape shape = flop_shape(flags_model(96, 12288, 96, 0, 0, 51200, false));
  const double eq3_per_token = 96 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  EXPECT_NEAR(hardware_flops_per_token(shape, s, AttentionConvention::kNonCausal, Recompute::kFull) / eq3_per_token,
              1.0, 1e-12);
  // Model FLOPs (Korthikanti et al. 2022): 72*B*s*l*h^2*(1 + s/6h + V/12lh).
  const double model = 72 * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
  EXPECT_NEAR(model_flops_per_token(shape, s, AttentionConvention::kNonCausal) / model, 1.0, 1e-12);
}

TEST(ModelFlops, SlidingWindowCapsAttentionSpan) {
  const FlopShape s = flop_shape(fixture("Mistral-7B-v0.1"));
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 16384, AttentionConvention::kNonCausal), 4.0 * 32 * 32 * 128 * 4096);
  // Causal, T=8192, W=4096: mean span (W^2/2 + (T-W)*W)/T = 3072.
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 8192, AttentionConvention::kCausal), 4.0 * 32 * 32 * 128 * 3072);
}

// Chunked attention (Llama 4's RoPE layers) is not a window: the sequence is cut into chunks of C tokens from the
// first, and a query meets the keys of its own chunk only, from the chunk's first token to itself. Llama-3.1-8B's
// shape (32 layers, 32 heads of 128) with a chunk of 4096 in 24 layers, the other 8 full; by hand.
TEST(ModelFlops, ChunkedAttentionMeetsItsOwnChunk) {
  ModelConfig m = fixture("Llama-3.1-8B");
  m.attention_chunk = 4096;
  m.chunk_layers = 24;
  const FlopShape s = flop_shape(m);
  const double per_key = 2.0 * 32 * (128 + 128);  // QK^T and attention*V, 32 heads, a layer
  // T = 10000: two whole chunks and one of 1808 tokens; a query of a chunk of n meets n keys non-causal, so the
  // mean is (2 * 4096^2 + 1808^2) / 10000 = 3682.3296 keys, half that causal.
  const double chunk_mean = (2.0 * 4096 * 4096 + 1808.0 * 1808) / 10000;
  EXPECT_DOUBLE_EQ(chunk_mean, 3682.3296);
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 10000, AttentionConvention::kNonCausal),
                   per_key * (8.0 * 10000 + 24.0 * 3682.3296));
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 10000, AttentionConvention::kCausal),
                   per_key * (8.0 * 5000 + 24.0 * 1841.1648));
  // A sliding window of 4096 in the same layers would meet 4096 keys a query non-causal, and causal
  // (4096^2 / 2 + (10000 - 4096) * 4096) / 10000 = 3257.1392: not the chunk's.
  ModelConfig window = fixture("Llama-3.1-8B");
  window.sliding_window = 4096;
  window.window_layers = 24;
  EXPECT_DOUBLE_EQ(attention_flops_forward(flop_shape(window), 10000, AttentionConvention::kCausal),
                   per_key * (8.0 * 5000 + 24.0 * 3257.1392));
  EXPECT_NE(attention_flops_forward(flop_shape(window), 10000, AttentionConvention::kCausal),
            attention_flops_forward(s, 10000, AttentionConvention::kCausal));
  // T = 8192, two whole chunks: 4096 keys non-causal (as the window), 2048 causal (the window's mean is 3072).
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 8192, AttentionConvention::kCausal),
                   per_key * (8.0 * 4096 + 24.0 * 2048));
  // Within one chunk every layer sees every earlier key.
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 4096, AttentionConvention::kNonCausal), per_key * 32 * 4096);
  EXPECT_NE(convention_name(AttentionConvention::kCausal, s, 10000).find("chunked attention (chunks of 4096 tokens"),
            std::string::npos);
  EXPECT_NE(convention_name(AttentionConvention::kCausal, s, 10000).find("in 24 of the 32 layers"), std::string::npos);
  EXPECT_EQ(convention_name(AttentionConvention::kCausal, s, 4096).find("chunk"), std::string::npos);
  // A decoded token meets its own chunk's keys: at a context of 10000 tokens (itself the 10000th) the 1808 of the
  // third chunk, at 8192 the whole second chunk, at 8193 itself alone; a full layer meets them all.
  EXPECT_DOUBLE_EQ(attention_flops_decode(s, 10000), per_key * (8.0 * 10000 + 24.0 * 1808));
  EXPECT_DOUBLE_EQ(attention_flops_decode(s, 8192), per_key * (8.0 * 8192 + 24.0 * 4096));
  EXPECT_DOUBLE_EQ(attention_flops_decode(s, 8193), per_key * (8.0 * 8193 + 24.0 * 1));
  EXPECT_DOUBLE_EQ(attention_flops_decode(s, 100), per_key * 32 * 100);
  // The KV cache: a chunked layer holds at most its chunk (its cache is fullest at a chunk's last token).
  const double kv_layer_token = 2.0 * 8 * 128 * 2;  // K and V of 8 KV heads of 128, bf16, one layer
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(m, 10000, 2), kv_layer_token * (8.0 * 10000 + 24.0 * 4096));
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(m, 3000, 2), kv_layer_token * 32 * 3000);
  const json j = model_summary_json(m, 10000, "bf16", AttentionConvention::kCausal);
  EXPECT_EQ(j["attention_chunk_size"], 4096);
  EXPECT_EQ(j["chunked_attention_layers"], 24);
  EXPECT_TRUE(j["sliding_window"].is_null());
}

// A decoded token meets every key of a full layer and the window's of a sliding one (the non-causal span).
TEST(ModelFlops, DecodeMeetsTheWindow) {
  const FlopShape mistral = flop_shape(fixture("Mistral-7B-v0.1"));
  EXPECT_DOUBLE_EQ(attention_flops_decode(mistral, 16384), 4.0 * 32 * 32 * 128 * 4096);
  EXPECT_DOUBLE_EQ(attention_flops_decode(mistral, 16384),
                   attention_flops_forward(mistral, 16384, AttentionConvention::kNonCausal));
  const FlopShape llama = flop_shape(fixture("Llama-3.1-8B"));
  EXPECT_DOUBLE_EQ(attention_flops_decode(llama, 5000), 4.0 * 32 * 32 * 128 * 5000);
}

TEST(ModelFlops, MlaUsesQkAndVWidths) {
  const FlopShape s = flop_shape(fixture("DeepSeek-V3"));
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 4096, AttentionConvention::kNonCausal),
                   2.0 * 61 * 128 * (192 + 128) * 4096);
}

// DeepSeek-V3 trained with its one multi-token-prediction module (report sec. 2.2; Megatron-LM --mtp-num-layers 1),
// by hand at seq 4096 (h 7168, V 129280, 128 heads, q_lora 1536, kv_lora 512, qk 128 + 64, v 128; 8 of 256 experts
// of 2048 and 1 shared). Per token the module runs
//   eh_proj (2h -> h):                 2 x 7168 x 7168                                      =   102,760,448
//   its decoder layer (layer 61, MoE), counted as a main layer is (norms and unvisited experts not):
//     MLA: q_a 7168 x 1536 = 11,010,048, q_a_layernorm 1,536, q_b 1536 x 128 x 192 = 37,748,736, kv_a 7168 x 576
//     = 4,128,768, kv_a_layernorm 512, kv_b 512 x 128 x 256 = 16,777,216, o 128 x 128 x 7168 = 117,440,512
//                                                                                          =   187,107,328
//     router 7168 x 256 + 256 (e_score_correction_bias)                                     =     1,835,264
//     9 experts (8 routed + 1 shared) x 3 x 7168 x 2048                                     =   396,361,728
//   the shared output head again:      129280 x 7168                                        =   926,679,040
// = 1,614,743,808 matmul parameters, 3,229,487,616 FLOPs forward, and its attention 2 x 128 x (192 + 128) x 4096 =
// 335,544,320 non-causal: 3,565,031,936 forward, 10,695,095,808 trained (3x). The main model: 36,624,736,768 matmul
// parameters (37,552,297,472 active less the 926,679,040 embedding and 881,664 norm weights) and 61 x 335,544,320 of
// attention, 93,717,677,056 forward, 281,153,031,168 trained; with the module 291,848,126,976 (3.8% more).
TEST(ModelFlops, DeepSeekV3MtpModuleByHand) {
  const ModelConfig v3 = fixture("DeepSeek-V3");
  const auto nc = AttentionConvention::kNonCausal, causal = AttentionConvention::kCausal;
  const FlopShape main = flop_shape(v3), with = flop_shape(v3, 1);
  EXPECT_DOUBLE_EQ(main.matmul_params, 36624736768.0);
  EXPECT_DOUBLE_EQ(model_flops_per_token(main, 4096, nc), 281153031168.0);
  EXPECT_DOUBLE_EQ(with.matmul_params, 36624736768.0 + 102760448 + 187107328 + 1835264 + 396361728 + 926679040);
  EXPECT_DOUBLE_EQ(with.logit_params, 2.0 * 926679040);
  EXPECT_DOUBLE_EQ(with.layers, 62);
  EXPECT_DOUBLE_EQ(forward_flops_per_token(with, 4096, nc) - forward_flops_per_token(main, 4096, nc), 3565031936.0);
  EXPECT_DOUBLE_EQ(model_flops_per_token(with, 4096, nc), 291848126976.0);
  // The attention convention applies to the module's layer as to the main ones: causal halves its 335,544,320 too,
  // 3 x (3,229,487,616 + 167,772,160) = 10,191,779,328 trained.
  EXPECT_DOUBLE_EQ(model_flops_per_token(with, 4096, causal) - model_flops_per_token(main, 4096, causal),
                   10191779328.0);
  // So does recomputation. Selective: its attention core once more, 10,695,095,808 + 335,544,320. Full: a fourth
  // forward of all but the logits, its own head's included: + 3,565,031,936 - 2 x 926,679,040 = 12,406,769,664.
  EXPECT_DOUBLE_EQ(hardware_flops_per_token(with, 4096, nc, Recompute::kSelective) -
                       hardware_flops_per_token(main, 4096, nc, Recompute::kSelective),
                   11030640128.0);
  EXPECT_DOUBLE_EQ(hardware_flops_per_token(with, 4096, nc, Recompute::kFull), 385424119808.0);
  EXPECT_DOUBLE_EQ(hardware_flops_per_token(with, 4096, nc, Recompute::kFull) -
                       hardware_flops_per_token(main, 4096, nc, Recompute::kFull),
                   12406769664.0);
  // Two modules cost twice one; none is the main model's shape.
  EXPECT_DOUBLE_EQ(model_flops_per_token(flop_shape(v3, 2), 4096, nc) - 281153031168.0, 2 * 10695095808.0);
  EXPECT_DOUBLE_EQ(flop_shape(v3, 0).matmul_params, main.matmul_params);
  EXPECT_DOUBLE_EQ(flop_shape(v3, 0).layers, 61);
  EXPECT_THROW(flop_shape(v3, -1), InputError);
  EXPECT_THROW(flop_shape(v3, 1000001), InputError);
}

// An MTP module's layer attends as the checkpoint's layer num_hidden_layers would, the one it is built as: Mistral's
// slides as all of them do (a window of 4096 keys, so 33 layers of 4096 keys at seq 16384); Gemma 2 9b's layer 42
// slides (every other one from layer 0); Gemma 3 27b's layer 62 too (full where (i + 1) % 6 == 0), so the module's
// attention stays its 1024-key window past it. By hand for Gemma 3 27b (h 5376, 32 heads and 16 KV heads of 128,
// MLP 21504, V 262208): eh_proj 2 x 5376^2 = 57,802,752, attention q/k/v/o 66,060,288, MLP 3 x 5376 x 21504 =
// 346,816,512, the shared head 262208 x 5376 = 1,409,630,208: 1,880,309,760 matmul parameters, and its attention
// 2 x 32 x 256 x 1024 = 16,777,216 at any seq past the window: 3 x (3,760,619,520 + 16,777,216) = 11,332,190,208
// model FLOPs a token at seq 4096 and 32768 alike (it grew by 469,762,048 forward a module as full attention).
TEST(ModelFlops, MtpLayerAttendsAsItsLayerWould) {
  const auto nc = AttentionConvention::kNonCausal;
  const FlopShape mistral = flop_shape(fixture("Mistral-7B-v0.1"), 1);
  EXPECT_DOUBLE_EQ(attention_flops_forward(mistral, 16384, nc), 4.0 * 33 * 32 * 128 * 4096);
  const ModelConfig gemma2 = fixture("gemma-2-9b");
  EXPECT_DOUBLE_EQ(flop_shape(gemma2, 1).window_layers, flop_shape(gemma2).window_layers + 1);
  const ModelConfig gemma3 = fixture("gemma-3-27b-pt");
  const FlopShape g0 = flop_shape(gemma3), g1 = flop_shape(gemma3, 1);
  EXPECT_DOUBLE_EQ(g0.window_layers, 52);
  EXPECT_DOUBLE_EQ(g1.window_layers, 53);
  for (double seq : {4096.0, 32768.0}) {
    EXPECT_DOUBLE_EQ(attention_flops_forward(g1, seq, nc) - attention_flops_forward(g0, seq, nc),
                     2.0 * 32 * 256 * 1024)
        << seq;
    EXPECT_DOUBLE_EQ(model_flops_per_token(g1, seq, nc) - model_flops_per_token(g0, seq, nc), 11332190208.0) << seq;
  }
  // 65 layers: layer 65 is a full one ((65 + 1) % 6 == 0), and the module's layer sees every key.
  json config = read_json_file(fixture_path("gemma-3-27b-pt"));
  config["text_config"]["num_hidden_layers"] = 65;
  const ModelConfig g65 = parse_hf_config(config, "test");
  EXPECT_DOUBLE_EQ(flop_shape(g65, 1).window_layers, flop_shape(g65).window_layers);
  EXPECT_DOUBLE_EQ(attention_flops_forward(flop_shape(g65, 1), 65536, nc) -
                       attention_flops_forward(flop_shape(g65), 65536, nc),
                   2.0 * 32 * 256 * 65536);
  // Where layer_types names each layer, the list continued: gpt-oss-20b's alternation gives layer 24 a window; a
  // list that does not repeat a period gives it the last layer's kind.
  const ModelConfig oss = fixture("gpt-oss-20b");
  EXPECT_DOUBLE_EQ(flop_shape(oss, 1).window_layers, 13);
  json types = read_json_file(fixture_path("gpt-oss-20b"));
  for (int l = 0; l < 24; ++l) types["layer_types"][l] = l < 4 ? "sliding_attention" : "full_attention";
  EXPECT_DOUBLE_EQ(flop_shape(parse_hf_config(types, "test"), 1).window_layers, 4);
  for (int l = 0; l < 24; ++l) types["layer_types"][l] = l < 20 ? "full_attention" : "sliding_attention";
  EXPECT_DOUBLE_EQ(flop_shape(parse_hf_config(types, "test"), 1).window_layers, 5);
  // Llama 4 Scout's layer 48 attends in chunks (every 4th layer is a NoPE, full one: 47, then 51), so does a
  // module's; as it would where no_rope_layers names each layer.
  const ModelConfig scout = fixture("Llama-4-Scout-17B-16E");
  EXPECT_DOUBLE_EQ(flop_shape(scout, 1).chunk_layers, 37);
  json rope = read_json_file(fixture_path("Llama-4-Scout-17B-16E"));
  for (int l = 0; l < 48; ++l) rope["text_config"]["no_rope_layers"][l] = l % 4 == 3 ? 0 : 1;
  EXPECT_DOUBLE_EQ(flop_shape(parse_hf_config(rope, "test"), 1).chunk_layers, 37);
  rope["text_config"]["no_rope_layers"][47] = 1;  // no period repeated: as layer 47, chunked
  rope["text_config"]["no_rope_layers"][0] = 0;
  EXPECT_DOUBLE_EQ(flop_shape(parse_hf_config(rope, "test"), 1).chunk_layers, 37);
  rope["text_config"]["no_rope_layers"][47] = 0;  // as layer 47, full (a period of 47 is not repeated)
  EXPECT_DOUBLE_EQ(flop_shape(parse_hf_config(rope, "test"), 1).chunk_layers, 35);
}

// `model` shows what the config's MTP modules cost per token beside the main model's figures, which stay the main
// model's (by hand above).
TEST(ModelCli, MtpFlopsShownApart) {
  auto r = test::run_cli({"model", "--hf-config", fixture_path("DeepSeek-V3"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["flops_per_token"].get<double>(), 93717677056.0);
  EXPECT_DOUBLE_EQ(j["training_flops_per_token"].get<double>(), 281153031168.0);
  EXPECT_DOUBLE_EQ(j["mtp_flops_per_token"].get<double>(), 3565031936.0);
  EXPECT_DOUBLE_EQ(j["mtp_training_flops_per_token"].get<double>(), 10695095808.0);
  r = test::run_cli({"model", "--hf-config", fixture_path("DeepSeek-V3")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The rows are of all the config's modules together, saying how many.
  EXPECT_NE(r.out.find("parameters, 1 MTP module(s) (not in total)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("forward FLOPs per token, 1 MTP module(s) (not in the above)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("training FLOPs per token, 1 MTP module(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("10.70 GFLOP"), std::string::npos) << r.out;
  r = test::run_cli({"model", "--hf-config", fixture_path("Llama-3.1-8B"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = json::parse(r.out);
  EXPECT_FALSE(j.contains("mtp_flops_per_token"));
  EXPECT_FALSE(j.contains("params_mtp"));
}

// More MTP modules than this version counts (kMaxMtpModules) is bad input in the config itself: every command that
// reads it refuses it alike (exit 2), naming the field, not only `model` with a message naming no field.
TEST(ModelCli, MtpModulesPastTheLimitRefusedByEveryCommand) {
  const std::string dir = test::scratch_dir("model_cli_mtp_limit");
  json config = read_json_file(fixture_path("DeepSeek-V3"));
  config["num_nextn_predict_layers"] = 1000001;
  const std::string path = dir + "/mtp.json";
  std::ofstream(path) << config.dump();
  const std::vector<std::vector<std::string>> commands = {
      {"model", "--hf-config", path},
      {"mfu", "--hf-config", path, "--seq", "4096", "--gpus", "2048", "--tokens-per-sec", "3e6", "--peak-tflops", "989"},
      {"memory", "--mode", "train", "--hf-config", path, "--seq", "4096", "--tp", "8", "--pp", "16", "--dp", "16"},
      {"train-time", "--hf-config", path, "--seq", "4096", "--tokens", "14.8e12", "--gpus", "2048", "--mfu", "0.4",
       "--peak-tflops", "989"}};
  for (const auto& args : commands) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.out;
    EXPECT_NE(r.err.find("field '" + path + ".num_nextn_predict_layers': 1000001 multi-token-prediction modules"),
              std::string::npos)
        << args[0] << ": " << r.err;
  }
  // The limit itself is counted; GLM-4.5's count is held to it too, here under its Transformers 5 name.
  config["num_nextn_predict_layers"] = 1000000;
  EXPECT_EQ(parse_hf_config(config, "test").mtp_layers, 1000000);
  json glm = read_json_file(fixture_path("GLM-4.5"));
  glm.erase("num_nextn_predict_layers");
  glm["num_mtp_layers"] = 1000001;
  EXPECT_NE(error_of(glm).find("field 'test.num_mtp_layers': 1000001"), std::string::npos) << error_of(glm);
}

TEST(ModelDecode, MoeWeightsReadGrowWithBatch) {
  const ModelConfig m = fixture("Mixtral-8x7B-v0.1");
  const double b1 = decode_weight_bytes(m, 1, 2);
  const double big = decode_weight_bytes(m, 1024, 2);
  const double expert = 3.0 * 4096 * 14336;
  // Batch 1 visits exactly 2 of 8 experts per layer.
  EXPECT_NEAR(b1, 2.0 * (12879925248.0 - 32000.0 * 4096), 1.0);
  EXPECT_NEAR(big, 2.0 * (46702792704.0 - 32000.0 * 4096), 2.0 * 32 * expert * 1e-6);
  EXPECT_DOUBLE_EQ(decode_weight_bytes(fixture("Llama-3.1-8B"), 7, 1), 8030261248.0 - 525336576.0);
}

// Tensor parallelism splits heads, KV heads, the dense MLP and every expert's MLP into equal parts.
TEST(ModelSplit, TensorParallelismDividesHeadsAndMlpWidths) {
  const ModelConfig llama = fixture("Llama-3.1-8B");  // 32 heads, 8 KV heads, MLP 14336
  EXPECT_NO_THROW(check_parallel_split(llama, 16, 1, "--tp"));
  ModelConfig odd_mlp = llama;
  odd_mlp.ffn = 14344;  // 8 x 1793
  EXPECT_NO_THROW(check_parallel_split(odd_mlp, 8, 1, "--tp"));
  try {
    check_parallel_split(odd_mlp, 16, 1, "--gpus");
    ADD_FAILURE() << "a width of 14344 split 16 ways";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--gpus 16 does not divide the model's MLP width of 14344"), std::string::npos)
        << e.what();
  }
  // DeepSeek-V3: 3 dense layers of 18432, experts of 2048.
  ModelConfig ds = fixture("DeepSeek-V3");
  EXPECT_NO_THROW(check_parallel_split(ds, 16, 1, "--tp"));
  ds.expert_ffn = 2040;  // 8 x 255
  EXPECT_NO_THROW(check_parallel_split(ds, 8, 1, "--tp"));
  EXPECT_THROW(check_parallel_split(ds, 16, 1, "--tp"), InputError);
  ds.expert_ffn = 2048;
  ds.ffn = 18440;  // the dense layers' width: 8 x 2305
  EXPECT_THROW(check_parallel_split(ds, 16, 1, "--tp"), InputError);
  // Mixtral has no dense layer: its intermediate_size is the experts' width, and only that counts.
  ModelConfig mixtral = fixture("Mixtral-8x7B-v0.1");
  mixtral.ffn = 14344;
  EXPECT_NO_THROW(check_parallel_split(mixtral, 16, 1, "--tp"));
  mixtral.expert_ffn = 14344;
  EXPECT_THROW(check_parallel_split(mixtral, 16, 1, "--tp"), InputError);
}

TEST(ModelErrors, NamesTheField) {
  auto err = [](const json& j) -> std::string {
    try {
      parse_hf_config(j);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  json base = json::parse(R"({"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,
      "num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000})");
  EXPECT_NO_THROW(parse_hf_config(base));
  json j = base;
  j["hidden_size"] = 4000;
  j["num_attention_heads"] = 48;
  j["num_key_value_heads"] = 8;
  EXPECT_NE(err(j).find("hidden_size"), std::string::npos) << err(j);
  j["head_dim"] = 128;  // an explicit head_dim resolves it (as Gemma/Qwen3 configs do)
  EXPECT_EQ(err(j), "no error");
  j = base;
  j["num_key_value_heads"] = 5;
  EXPECT_NE(err(j).find("num_key_value_heads"), std::string::npos);
  j = base;
  j["num_hidden_layers"] = -2;
  EXPECT_NE(err(j).find("num_hidden_layers"), std::string::npos);
  j = base;
  j.erase("vocab_size");
  EXPECT_NE(err(j).find("vocab_size"), std::string::npos);
  j = base;
  j["model_type"] = "mamba";
  EXPECT_NE(err(j).find("model_type"), std::string::npos);
  j = base;
  j.erase("model_type");
  EXPECT_NE(err(j).find("model_type"), std::string::npos);
  j = base;
  j["model_type"] = "mixtral";
  j["num_local_experts"] = 2;
  j["num_experts_per_tok"] = 4;
  EXPECT_NE(err(j).find("num_experts_per_tok"), std::string::npos);
  // More dense layers than layers (a CLI probe: DeepSeek-V3 with 1000 read as 37.4B parameters, not 671B).
  j = json::parse(read_text_file(std::string(CEILINGS_FIXTURES) + "/hf/DeepSeek-V3.config.json"));
  EXPECT_EQ(err(j), "no error");
  j["first_k_dense_replace"] = 1000;
  EXPECT_NE(err(j).find("first_k_dense_replace"), std::string::npos) << err(j);
  j["first_k_dense_replace"] = 61;  // every layer dense: a config may say so
  EXPECT_EQ(err(j), "no error");
}

// A key Transformers' config class fills with a default other than "none" must be stated: absent, Mistral-7B
// counted 805 million parameters too many (32 KV heads, not MistralConfig's 8) and a 4x KV cache, DeepSeek-V3 33
// billion too many (no first_k_dense_replace: every layer MoE, not DeepseekV3Config's first 3 dense). null
// still means none.
TEST(ModelErrors, KeysTransformersDefaultsOtherwiseMustBeStated) {
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"Mistral-7B-v0.1", "num_key_value_heads"}, {"Mistral-7B-v0.1", "sliding_window"},
      {"Mixtral-8x7B-v0.1", "num_key_value_heads"}, {"Qwen2-7B", "num_key_value_heads"},
      {"DeepSeek-V3", "q_lora_rank"},           {"DeepSeek-V3", "n_routed_experts"},
      {"DeepSeek-V3", "n_shared_experts"},      {"DeepSeek-V3", "first_k_dense_replace"},
      {"Qwen3-8B", "num_key_value_heads"},      {"Qwen3-8B", "head_dim"},
      {"Qwen3-30B-A3B", "num_key_value_heads"}, {"Qwen3-30B-A3B", "num_experts"},
      {"Qwen3-30B-A3B", "num_experts_per_tok"}, {"Qwen3-30B-A3B", "moe_intermediate_size"},
      {"gpt-oss-20b", "num_key_value_heads"},   {"gpt-oss-20b", "head_dim"},
      {"gpt-oss-20b", "num_local_experts"},     {"gpt-oss-20b", "sliding_window"},
      {"gemma-2-9b", "num_key_value_heads"},    {"gemma-2-9b", "head_dim"},
      {"gemma-2-9b", "sliding_window"},         {"gemma-3-1b-pt", "head_dim"}};
  for (const auto& [model, key] : keys) {
    json config = read_json_file(fixture_path(model));
    ASSERT_TRUE(config.contains(key)) << model << " " << key;
    config.erase(key);
    try {
      parse_hf_config(config, model);
      ADD_FAILURE() << model << " without " << key << " was counted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("is absent: Transformers'"), std::string::npos) << e.what();
    }
  }
  // null: every head a KV head (Transformers' reading of None), no window.
  json mistral = read_json_file(fixture_path("Mistral-7B-v0.1"));
  mistral["num_key_value_heads"] = nullptr;
  mistral["sliding_window"] = nullptr;
  const ModelConfig m = parse_hf_config(mistral);
  EXPECT_EQ(m.kv_heads, m.heads);
  EXPECT_FALSE(m.sliding_window.has_value());
  // Qwen3's and Gemma's head width, and Gemma's KV heads, have no "none": null is refused, not read as
  // hidden_size / heads (320 for a Gemma 3 of 2560 and 8 heads, where Transformers refuses the config).
  for (const auto& [model, key] : std::vector<std::pair<std::string, std::string>>{
           {"Qwen3-8B", "head_dim"}, {"gemma-2-9b", "head_dim"}, {"gemma-2-9b", "num_key_value_heads"},
           // the layers' modulo in Transformers fails on None (review 48): no default of 1 or 6 taken
           {"Qwen3-30B-A3B", "decoder_sparse_step"}, {"gemma-3-1b-pt", "sliding_window_pattern"}}) {
    json config = read_json_file(fixture_path(model));
    config[key] = nullptr;
    try {
      parse_hf_config(config, model);
      ADD_FAILURE() << model << " with " << key << " null was counted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key + "': is null"), std::string::npos) << e.what();
    }
  }
  // Llama's class default is None (every head a KV head): an absent key is that, no error.
  json llama = read_json_file(fixture_path("Llama-3.1-8B"));
  llama.erase("num_key_value_heads");
  EXPECT_EQ(parse_hf_config(llama).kv_heads, 32);
}

TEST(ModelCli, JsonKeys) {
  const auto r = test::run_cli({"model", "--hf-config", fixture_path("Mixtral-8x7B-v0.1"), "--json", "--seq", "2048"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["params_total"].get<std::int64_t>(), 46702792704);
  EXPECT_EQ(j["params_active"].get<std::int64_t>(), 12879925248);
  EXPECT_DOUBLE_EQ(j["kv_bytes_per_token"].get<double>(), 131072);
  EXPECT_EQ(j["convention"], "noncausal");
  // Active matmul parameters: the active ones less the input embedding table (32000 x 4096) and the 65 norm
  // vectors of 4096 (two a layer and the final one), by hand.
  const double n = 12879925248.0 - 32000.0 * 4096 - 65.0 * 4096;
  EXPECT_DOUBLE_EQ(j["params_matmul_active"].get<double>(), n);
  EXPECT_DOUBLE_EQ(j["flops_per_token"].get<double>(), 2 * n + 4.0 * 32 * 32 * 128 * 2048);
}

TEST(ModelCli, TableNamesConventionAndKvDtype) {
  const auto r = test::run_cli(
      {"model", "--hf-config", fixture_path("DeepSeek-V3"), "--kv-dtype", "fp8", "--attention", "causal"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("671,026,419,200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("causal (masked half not counted"), std::string::npos);
  EXPECT_NE(r.out.find("35.14 kB"), std::string::npos) << r.out;  // 61*576 bytes
}

TEST(ModelCli, BadInputExits2) {
  const std::string dir = test::scratch_dir("model_cli_bad");
  EXPECT_EQ(test::run_cli({"model", "--hf-config", dir + "/missing.json"}).exit_code, 2);
  const auto r = test::run_cli({"model", "--hf-config", fixture_path("gpt2"), "--kv-dtype", "fp7"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("fp7"), std::string::npos);
  EXPECT_EQ(test::run_cli({"model", "--hf-config", fixture_path("gpt2"), "--seq", "0"}).exit_code, 2);
  EXPECT_EQ(test::run_cli({"model", "--hf-config", fixture_path("gpt2"), "--seq", "inf"}).exit_code, 2);
  EXPECT_EQ(test::run_cli({"model"}).exit_code, 2);
}

// GPT-2 learned 1024 positions: a longer sequence is refused wherever a length meets the model, and `model`'s
// default length (4096) shortens to them, saying so in its output.
TEST(ModelCli, NoSequencePastLearnedPositions) {
  const std::string gpt2 = fixture_path("gpt2");
  auto r = test::run_cli({"model", "--hf-config", gpt2});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("forward FLOPs per token at seq 1024"), std::string::npos) << r.out;
  const std::string why = "is more tokens than the 1024 positions gpt2 learned";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"model", "--hf-config", gpt2, "--seq", "1025"},
        {"mfu", "--hf-config", gpt2, "--seq", "2048", "--gpus", "1", "--tokens-per-sec", "1000", "--peak-tflops", "100"},
        {"train-time", "--hf-config", gpt2, "--seq", "2048", "--tokens", "1e9", "--gpus", "8", "--achieved-tflops", "100"},
        {"memory", "--hf-config", gpt2, "--mode", "train", "--seq", "2048"},
        {"memory", "--hf-config", gpt2, "--mode", "infer", "--context", "4096"},
        {"mbu", "--hf-config", gpt2, "--context", "4096", "--tpot-ms", "5", "--peak-bw-gbps", "1000"},
        {"roofline", "--profile", std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json",
         "--hf-config", gpt2, "--context", "4096", "--batch", "1"}}) {
    r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << args[0] << ": " << r.err;
  }
  EXPECT_EQ(test::run_cli({"model", "--hf-config", gpt2, "--seq", "1024"}).exit_code, 0);
  EXPECT_EQ(test::run_cli({"model", "--hf-config", fixture_path("Llama-3.1-8B"), "--seq", "1000000"}).exit_code, 0);
}

// Without --ffn a gated MLP takes Megatron-LM's width, 8h/3 rounded down to a multiple of 64 (10880 for
// h = 4096), so its three matrices hold about what 4h in two would: not 4h in three (a third more FLOPs).
TEST(ModelFlags, SwigluDefaultWidthIsMegatrons) {
  const ModelConfig gated = flags_model(32, 4096, 32, 0, 0, 0, true);
  EXPECT_EQ(gated.ffn, 10880);
  EXPECT_EQ(count_params(gated).mlp, 32LL * 3 * 4096 * 10880);
  EXPECT_EQ(flags_model(32, 4096, 32, 0, 0, 0, false).ffn, 4 * 4096);
  EXPECT_EQ(flags_model(32, 4096, 32, 0, 11008, 0, true).ffn, 11008);  // a given width is kept
}

// Qwen2's use_sliding_window applies to the layers from max_window_layers on (Transformers): none of them
// when that is the layer count, all of them at 0, the last 14 of 28 at 14: those cache and attend to the window
// only, the others to everything.
TEST(ModelConfigs, Qwen2SlidingWindowFollowsMaxWindowLayers) {
  const std::string dir = test::scratch_dir("qwen2_window");
  json config = read_json_file(fixture_path("Qwen2-7B"));
  config["use_sliding_window"] = true;
  config["sliding_window"] = 4096;
  auto parsed = [&](int full) {
    config["max_window_layers"] = full;
    return parse_hf_config(config, "test");
  };
  EXPECT_FALSE(parsed(28).sliding_window.has_value());  // 28 of 28 layers attend to everything
  ASSERT_TRUE(parsed(0).sliding_window.has_value());
  EXPECT_EQ(*parsed(0).sliding_window, 4096);
  EXPECT_EQ(parsed(0).window_layers, 28);
  const ModelConfig half = parsed(14);
  ASSERT_TRUE(half.sliding_window.has_value());
  EXPECT_EQ(half.window_layers, 14);
  const double kv_token = 2.0 * 28 * 4 * 128 * 2;  // every layer's K and V, bf16
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(half, 32768, 2), kv_token * (14.0 * 32768 + 14.0 * 4096) / 28);
  EXPECT_DOUBLE_EQ(kv_cache_bytes_per_sequence(half, 4096, 2), kv_token * 4096);  // within the window: all cached
  const FlopShape s = flop_shape(half);
  // Non-causal at 32768 tokens: 14 layers meet 32768 keys a query, 14 the window's 4096.
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 32768, AttentionConvention::kNonCausal),
                   4.0 * 28 * 128 * (14.0 * 32768 + 14.0 * 4096));
  // Causal: 32768/2 keys in a full layer; (W^2/2 + (T-W)W)/T in a sliding one.
  EXPECT_DOUBLE_EQ(attention_flops_forward(s, 32768, AttentionConvention::kCausal),
                   4.0 * 28 * 128 * (14.0 * 16384 + 14.0 * (4096.0 * 4096 / 2 + (32768.0 - 4096) * 4096) / 32768));
  EXPECT_NE(convention_name(AttentionConvention::kCausal, s, 32768).find("in 14 of the 28 layers"), std::string::npos);
  // Without use_sliding_window no layer slides, whatever max_window_layers says.
  config["use_sliding_window"] = false;
  EXPECT_FALSE(parsed(0).sliding_window.has_value());
  // With it, the window must be stated (Qwen2Config would take 4096).
  config["use_sliding_window"] = true;
  config.erase("sliding_window");
  EXPECT_THROW(parsed(0), InputError);
}

// layer_types, where a config names each layer's kind (Transformers 4.53 on), decides which layers slide; a list
// of another length or an unknown kind is refused by name, not guessed.
TEST(ModelConfigs, LayerTypesNameTheSlidingLayers) {
  json config = read_json_file(fixture_path("Qwen2-7B"));
  config["use_sliding_window"] = true;
  config["sliding_window"] = 4096;
  config["max_window_layers"] = 28;  // would say none slides: layer_types wins
  json types = json::array();
  for (int l = 0; l < 28; ++l) types.push_back(l % 4 == 3 ? "full_attention" : "sliding_attention");
  config["layer_types"] = types;
  const ModelConfig m = parse_hf_config(config, "test");
  EXPECT_EQ(m.window_layers, 21);
  json short_list = config;
  short_list["layer_types"].erase(short_list["layer_types"].begin());
  EXPECT_NE(error_of(short_list).find("layer_types': names 27 layers, the model has 28"), std::string::npos)
      << error_of(short_list);
  json unknown = config;
  unknown["layer_types"][5] = "chunked_attention";
  EXPECT_NE(error_of(unknown).find("'chunked_attention'"), std::string::npos) << error_of(unknown);
  unknown["layer_types"][5] = 3;
  EXPECT_NE(error_of(unknown).find("layer_types"), std::string::npos) << error_of(unknown);
  // A sliding layer without a window sees everything (Transformers builds it so).
  config["use_sliding_window"] = false;
  EXPECT_FALSE(parse_hf_config(config, "test").sliding_window.has_value());
}

// Sizes whose counts would overflow int64 are refused by name, not printed as negative parameter counts.
TEST(ModelCli, CountsPastInt64AreInputErrors) {
  const std::string dir = test::scratch_dir("model_cli_huge");
  json config = read_json_file(fixture_path("Llama-3.1-8B"));
  config["vocab_size"] = 1125899906842624LL;  // 2^50: no model's
  std::ofstream(dir + "/vocab.json") << config.dump();
  auto r = test::run_cli({"model", "--hf-config", dir + "/vocab.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("vocab_size"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("larger than any model's (2^40)"), std::string::npos) << r.err;
  config = read_json_file(fixture_path("Llama-3.1-8B"));
  config["hidden_size"] = 1073741824LL;         // 2^30, and an MLP of 2^40: each size allowed, their product not
  config["intermediate_size"] = 1099511627776LL;
  std::ofstream(dir + "/product.json") << config.dump();
  r = test::run_cli({"model", "--hf-config", dir + "/product.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("2^62"), std::string::npos) << r.err;
  // 2^40 layers of experts only: refused at once (asking whether any layer is dense walked them all, a hang).
  config = read_json_file(fixture_path("Mixtral-8x7B-v0.1"));
  config["num_hidden_layers"] = 1099511627776LL;
  std::ofstream(dir + "/layers.json") << config.dump();
  r = test::run_cli({"memory", "--mode", "infer", "--hf-config", dir + "/layers.json", "--context", "1024", "--gpu",
                     "H200"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("layers"), std::string::npos) << r.err;
  // A sum that would wrap int64 (2^63 - 1 shared experts, or as the query head's no-RoPE width) is refused by
  // name: wrapped, the count read a plausible 666 billion parameters with exit 0.
  for (const char* key : {"n_shared_experts", "qk_nope_head_dim"}) {
    json deepseek = read_json_file(fixture_path("DeepSeek-V3"));
    deepseek[key] = INT64_MAX;
    try {
      count_params(parse_hf_config(deepseek));
      ADD_FAILURE() << key << " = 2^63 - 1 was counted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(test::run_cli({"mfu", "--layers", "32", "--hidden", "4096", "--heads", "32", "--ffn", "9223372036854775807",
                           "--seq", "4096", "--tokens-per-sec", "10", "--gpus", "1", "--peak-tflops", "100"})
                .exit_code,
            2);
  config = read_json_file(fixture_path("Llama-3.1-8B"));
  config["num_hidden_layers"] = 1000000000000LL;  // counted layer by layer: refused before the loop
  std::ofstream(dir + "/layers.json") << config.dump();
  EXPECT_EQ(test::run_cli({"model", "--hf-config", dir + "/layers.json"}).exit_code, 2);
  // The same model from flags: the layer count is a whole number well inside a double.
  for (const char* layers : {"1e30", "inf", "2.5"})
    EXPECT_EQ(test::run_cli({"mfu", "--layers", layers, "--hidden", "4096", "--heads", "32", "--seq", "4096",
                             "--tokens-per-sec", "10", "--gpus", "1", "--peak-tflops", "100"})
                  .exit_code,
              2)
        << layers;
}

// A checkpoint's quantization_config sets the bytes of the weights it quantizes. gpt-oss-120b, by hand (36 layers,
// h 2880, 128 experts of width 2880, 4 a token, vocabulary 201088): each layer keeps in bf16 its attention
// (q 2880 x 4096 + 4096, k and v 2 x (2880 x 512 + 512), o 4096 x 2880 + 2880, 64 sinks: 26,550,144), router
// (2880 x 128 + 128 = 368,768) and two norms (5,760): 26,924,672 parameters; each expert stores its three
// 2880 x 2880 matrices (24,883,200) in MXFP4, 4 bits and one 8-bit scale per 32 weights (4.25 / 8 bytes), and its
// biases (2 x 2880 + 2880 = 8,640) in bf16; the final norm (2880), embedding and head (201088 x 2880 each) in bf16.
TEST(ModelQuantization, GptOssExpertsInMxfp4) {
  const double layer_bf16 = 26550144.0 + 368768 + 5760, expert_w = 3.0 * 2880 * 2880, expert_b = 8640;
  const double head = 201088.0 * 2880;
  EXPECT_DOUBLE_EQ(layer_bf16, 26924672.0);
  const ModelConfig m = fixture("gpt-oss-120b");
  ASSERT_TRUE(m.quantization && m.quantization->applied);
  EXPECT_EQ(m.quantization->layout, "mxfp4 experts, bf16 rest");
  auto bytes = [&](double layers, double experts, double heads) {
    return layers * (2 * layer_bf16 + experts * (expert_w * 4.25 / 8 + 2 * expert_b)) + 2 * 2880 + 2 * heads * head;
  };
  // The checkpoint: every expert, the embedding and the head: 65.25 GB, the published safetensors' ~65 GB (the
  // tool said 58.4 GB at --weight-dtype fp4, 233.7 GB at bf16).
  EXPECT_DOUBLE_EQ(bytes(36, 128, 2), 65248815744.0);
  EXPECT_NEAR(stored_weight_bytes(m, m.quantization->bytes), 65248815744.0, 1.0);
  // A decode step at batch 1 reads 4 experts a layer and the head, not the embedding: 5.00 GB (fp4 said 2.57 GB,
  // bf16 10.27 GB).
  EXPECT_DOUBLE_EQ(bytes(36, 4, 1), 5002902144.0);
  EXPECT_NEAR(decode_weight_bytes(m, 1, m.quantization->bytes), 5002902144.0, 1.0);
  // One storage type for all is as before: every parameter at it.
  EXPECT_DOUBLE_EQ(stored_weight_bytes(m, 2), 2 * 116829156672.0);
  // gpt-oss-20b: 24 layers, 32 experts (a router of 2880 x 32 + 32 = 92,192): 13.76 GB (published ~13.8 GB),
  // and 3.71 GB a decode step at batch 1.
  const ModelConfig small = fixture("gpt-oss-20b");
  ASSERT_TRUE(small.quantization && small.quantization->applied);
  const double small_layer = 26550144.0 + 92192 + 5760;
  auto small_bytes = [&](double experts, double heads) {
    return 24 * (2 * small_layer + experts * (expert_w * 4.25 / 8 + 2 * expert_b)) + 2 * 2880 + 2 * heads * head;
  };
  EXPECT_DOUBLE_EQ(small_bytes(32, 2), 13761264768.0);
  EXPECT_NEAR(stored_weight_bytes(small, small.quantization->bytes), 13761264768.0, 1.0);
  EXPECT_DOUBLE_EQ(small_bytes(4, 1), 3708083328.0);
  EXPECT_NEAR(decode_weight_bytes(small, 1, small.quantization->bytes), 3708083328.0, 1.0);
}

// DeepSeek-V3, by hand (61 layers, h 7168, the first 3 dense of MLP width 18432, then 256 routed experts of width
// 2048 and 1 shared, 8 a token; MLA with q rank 1536, kv rank 512, rope 64, 128 heads of 128 + 64 and value 128):
// every weight matrix of a layer is fp8, 1 byte and one fp32 scale per 128 x 128 block (1 + 4/16384 bytes):
// attention 7168 x 1536 + 1536 x 128 x 192 + 7168 x 576 + 512 x 128 x 256 + 128 x 128 x 7168 = 187,105,280,
// a dense MLP 3 x 7168 x 18432 = 396,361,728, an expert 3 x 7168 x 2048 = 44,040,192. In bf16: the latent norms
// (1536 + 512) and two norms (2 x 7168) a layer, the 58 routers (7168 x 256 + 256 correction biases, fp32 in
// the checkpoint: 30 kB more than counted), the final norm, embedding and head (129280 x 7168 each). The main
// model, without the MTP module: 673.15 GB (the published 688.6 GB holds the MTP layer too, 15.3 GB more by the
// same rule; the tool said 1342 GB at its bf16 default).
TEST(ModelQuantization, DeepSeekV3LayersInFp8Blocks) {
  const ModelConfig m = fixture("DeepSeek-V3");
  ASSERT_TRUE(m.quantization && m.quantization->applied);
  EXPECT_EQ(m.quantization->layout, "fp8 layer matrices with fp32 scales a 128x128 block, bf16 rest");
  const double attention = 187105280, dense = 396361728, expert = 44040192, fp8 = 1 + 4.0 / (128 * 128);
  EXPECT_DOUBLE_EQ(attention, 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168);
  const double bf16_layers = 61 * (1536 + 512 + 2 * 7168.0) + 58 * (7168 * 256 + 256.0) + 7168;
  const double head = 129280.0 * 7168;
  auto bytes = [&](double experts, double heads) {
    const double matrices = 61 * attention + 3 * dense + 58 * (experts + 1) * expert;
    return matrices * fp8 + 2 * (bf16_layers + heads * head);
  };
  EXPECT_DOUBLE_EQ(bytes(256, 2), 673150575280.0);
  EXPECT_NEAR(stored_weight_bytes(m, m.quantization->bytes), 673150575280.0, 1.0);
  // A decode step at batch 1: 8 routed experts and the shared one a MoE layer, the head, not the embedding:
  // 37.67 GB (--weight-dtype fp8 said 36.63 GB: the head, routers and norms at 1 byte, no scales).
  EXPECT_DOUBLE_EQ(bytes(8, 1), 37668438704.0);
  EXPECT_NEAR(decode_weight_bytes(m, 1, m.quantization->bytes), 37668438704.0, 1.0);
}

TEST(ModelQuantization, MalformedRefusedUnknownNotApplied) {
  json oss = read_json_file(fixture_path("gpt-oss-20b"));
  auto with = [&](const json& q) {
    json c = oss;
    c["quantization_config"] = q;
    return c;
  };
  EXPECT_NE(error_of(with("mxfp4")).find("'test.quantization_config': expected an object"), std::string::npos)
      << error_of(with("mxfp4"));
  EXPECT_NE(error_of(with(json::object())).find("quantization_config.quant_method"), std::string::npos);
  EXPECT_NE(error_of(with({{"quant_method", "mxfp4"}, {"modules_to_not_convert", "lm_head"}}))
                .find("quantization_config.modules_to_not_convert"),
            std::string::npos);
  EXPECT_NE(error_of(with({{"quant_method", "mxfp4"}, {"modules_to_not_convert", {1}}}))
                .find("quantization_config.modules_to_not_convert': holds 1"),
            std::string::npos);
  for (const json& block : {json({128}), json({0, 128}), json({128, 1.5}), json("128x128")})
    EXPECT_NE(error_of(with({{"quant_method", "fp8"}, {"weight_block_size", block}}))
                  .find("quantization_config.weight_block_size"),
              std::string::npos)
        << block;
  EXPECT_NE(error_of(with({{"quant_method", "fp8"}, {"fmt", "e3m4"}, {"weight_block_size", {128, 128}}}))
                .find("quantization_config.fmt': is 'e3m4'"),
            std::string::npos);
  // What this version cannot place is parsed (the counts stand) but not applied, with the reason.
  auto layout_of = [&](const json& q) {
    const ModelConfig m = parse_hf_config(with(q), "test");
    EXPECT_TRUE(m.quantization && !m.quantization->applied);
    return m.quantization ? m.quantization->layout : std::string();
  };
  EXPECT_NE(layout_of({{"quant_method", "awq"}, {"bits", 4}}).find("quant_method 'awq' is not one"), std::string::npos);
  EXPECT_NE(layout_of({{"quant_method", "fp8"}}).find("without weight_block_size"), std::string::npos);
  EXPECT_NE(layout_of({{"quant_method", "mxfp4"}, {"modules_to_not_convert", {"lm_head", "model.layers.*.mlp.experts"}}})
                .find("names 'model.layers.*.mlp.experts'"),
            std::string::npos);
  json llama = read_json_file(fixture_path("Llama-3.1-8B"));
  llama["quantization_config"] = {{"quant_method", "mxfp4"}};
  const ModelConfig dense = parse_hf_config(llama, "test");
  EXPECT_TRUE(dense.quantization && !dense.quantization->applied);
  // fp8 on another model's layers, its routers named as kept: applied.
  llama["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}},
                                  {"modules_to_not_convert", {"lm_head", "model.layers.0.mlp.gate"}}};
  EXPECT_TRUE(parse_hf_config(llama, "test").quantization->applied);
  // Without quantization_config: none, and every weight at the one type.
  EXPECT_FALSE(fixture("Llama-3.1-8B").quantization);
}
