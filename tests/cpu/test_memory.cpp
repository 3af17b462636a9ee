// Memory estimates: the ZeRO paper's 7.5B example, Korthikanti et al. 2022 activation formulas, KV cache; CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "ceilings/memory.hpp"
#include "ceilings/units.hpp"
#include "cli_runner.hpp"

using namespace ceilings;

namespace {
std::string hf(const std::string& name) { return std::string(CEILINGS_FIXTURES) + "/hf/" + name + ".config.json"; }
// Bytes of DeepSeek-V3's checkpoint every tensor-parallel GPU holds whole, by hand: the MLA down-projections
// (61 x 7168 x (1536 + 576) fp8 weights, 1 + 4/16384 bytes each, and their norms, 61 x (1536 + 512) in bf16), the
// norms and the routers with their correction biases (61 x 2 x 7168 + 58 x 256 x 7169 + 7168, bf16).
double deepseek_v3_whole_on_each_gpu() {
  const double fp8 = 1 + 4.0 / (128 * 128);
  return 61 * 7168.0 * (1536 + 576) * fp8 + 2 * 61 * (1536 + 512.0) + 2 * (61.0 * 2 * 7168 + 58.0 * 256 * 7169 + 7168);
}
}  // namespace

// Rajbhandari et al. 2020, Figure 1: Psi = 7.5B, K = 12, Nd = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
TEST(TrainMemory, ZeroPaperFigure1) {
  TrainMemoryInput in;
  in.params = 7.5e9;
  in.dp = 64;
  EXPECT_DOUBLE_EQ(train_memory(in).total(), 120e9);
  in.zero_stage = 1;
  EXPECT_NEAR(train_memory(in).total(), 31.4e9, 0.05e9);
  in.zero_stage = 2;
  EXPECT_NEAR(train_memory(in).total(), 16.6e9, 0.05e9);
  in.zero_stage = 3;
  EXPECT_NEAR(train_memory(in).total(), 1.875e9, 1e6);
  in.zero_stage = 4;
  EXPECT_THROW(train_memory(in), InputError);
}

// Korthikanti et al. 2022 Table 2, GPT-3 175B (a=96, h=12288, s=2048, b=1, t=8).
TEST(TrainMemory, KorthikantiTable2) {
  const double s = 2048, b = 1, h = 12288, a = 96, sbh = s * b * h;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(s, b, h, a, 1, false, Recompute::kNone), sbh * (34 + 5 * a * s / h));
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(s, b, h, a, 8, false, Recompute::kNone),
                   sbh * (10 + 24.0 / 8 + 5 * a * s / (h * 8)));
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(s, b, h, a, 8, true, Recompute::kNone),
                   sbh * (34.0 / 8 + 5 * a * s / (h * 8)));
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(s, b, h, a, 8, true, Recompute::kSelective), sbh * 34.0 / 8);
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(s, b, h, a, 8, false, Recompute::kSelective), sbh * (10 + 24.0 / 8));
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(s, b, h, a, 1, false, Recompute::kFull), 2 * sbh);
  // Sequence parallel + selective recompute cuts the 96-layer total from 34.4 GB to 10.3 GB per GPU.
  EXPECT_NEAR(96 * activation_bytes_per_layer(s, b, h, a, 8, true, Recompute::kNone), 34.43e9, 0.01e9);
  EXPECT_NEAR(96 * activation_bytes_per_layer(s, b, h, a, 8, true, Recompute::kSelective), 10.27e9, 0.01e9);
  // Fused attention keeps no scores: the same as selective recompute's activations, without its FLOPs.
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(s, b, h, a, 1, false, Recompute::kNone, false), sbh * 34);
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(s, b, h, a, 1, false, Recompute::kFull, false), 2 * sbh);
}

// Outside the layers (Korthikanti sec. 4.3): the output layer's 4*s*b*h*(1 + V/h), the logits vocabulary-parallel.
// For a large vocabulary it outweighs the layers under full recompute: Llama-3 8B (V 128256) at s 4096 keeps
// 2.17 GB there against its 32 layers' 1.07 GB of checkpoints.
TEST(TrainMemory, OutsideTheLayers) {
  const double s = 4096, b = 1, h = 4096, v = 128256;
  EXPECT_DOUBLE_EQ(output_activation_bytes(s, b, h, v, 1, false), 4 * s * b * h * (1 + v / h));
  EXPECT_DOUBLE_EQ(output_activation_bytes(s, b, h, v, 8, false), 4 * s * b * h + 4 * s * b * v / 8);
  EXPECT_DOUBLE_EQ(output_activation_bytes(s, b, h, v, 8, true), 4 * s * b * h * (1 + v / h) / 8);
  EXPECT_DOUBLE_EQ(embedding_activation_bytes(s, 2, h, 8, false), s * 2 * h);
  EXPECT_DOUBLE_EQ(embedding_activation_bytes(s, 2, h, 8, true), s * 2 * h / 8);
  TrainMemoryInput in;
  in.model = read_hf_config(hf("Llama-3.1-8B"));
  in.params = static_cast<double>(count_params(*in.model).total);
  in.seq = s;
  in.recompute = Recompute::kFull;
  // Llama trains without dropout (attention_dropout 0, no residual or embedding dropout): no embedding mask. In the
  // backward pass one layer at a time runs forward again beside the checkpoints, its 41 sbh (GQA, SwiGLU) less the
  // 2 sbh kept (review 75: Korthikanti's 2sbhL is the checkpoints alone); never at once with the output layer's,
  // freed by then: the larger of the two counts (here the output layer's 2.17 GB; without it, the rebuilt layer).
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(layer_activations(*in.model, 0), s, b, h, 1, false, Recompute::kNone,
                                              false),
                   41 * s * h);
  EXPECT_NEAR(train_memory(in).activations, 32 * 2 * s * h + 2.169e9, 0.001e9);
  in.model->vocab = 0;  // no output layer
  EXPECT_NEAR(train_memory(in).activations, 32 * 2 * s * h + 39 * s * h, 0.001e9);
  // Selective recompute with eager attention rebuilds one layer's attention core (its s x s scores) at a time, beside
  // what every layer keeps.
  in.model = read_hf_config(hf("Llama-3.1-8B"));
  in.recompute = Recompute::kSelective;
  in.eager_attention = true;
  const double kept = 32 * activation_bytes_per_layer(layer_activations(*in.model, 0), s, b, h, 1, false,
                                                      Recompute::kSelective, true);
  const double scores = activation_bytes_per_layer(layer_activations(*in.model, 0), s, b, h, 1, false,
                                                   Recompute::kNone, true) -
                        kept / 32;
  EXPECT_GT(scores, 2.169e9);  // 32 heads x 4096^2 x 6 bytes and GQA's repeated K/V: more than the output layer's
  EXPECT_NEAR(train_memory(in).activations, kept + scores, 0.001e9);
  in.recompute = Recompute::kFull;
  in.eager_attention = false;
  // A model given by its shape without --vocab has no output layer: nothing is kept for one (4*s*b*h had been).
  auto flags = test::run_cli({"memory", "--layers", "24", "--hidden", "2048", "--heads", "16", "--mode", "train", "--seq",
                        "2048", "--attention-impl", "eager", "--json"});
  ASSERT_EQ(flags.exit_code, 0) << flags.err;
  const double s2 = 2048, h2 = 2048, a2 = 16;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(flags.out).at("activations_bytes").get<double>(),
                   24 * s2 * h2 * (34 + 5 * a2 * s2 / h2) + s2 * h2);
  flags = test::run_cli({"memory", "--layers", "24", "--hidden", "2048", "--heads", "16", "--mode", "train", "--seq",
                         "2048"});
  EXPECT_NE(flags.out.find("no output layer (no --vocab)"), std::string::npos) << flags.out;
  EXPECT_EQ(flags.out.find("fp32 logits"), std::string::npos) << flags.out;
}

// The layer's shape decides what it keeps: a GPT layer is Korthikanti's 34; GQA keeps narrower K and V; a SwiGLU
// MLP keeps gate, up and product; an MoE layer keeps, per routed expert, the token's copy, the expert's MLP and its
// output, the copy and the output whole on every tensor-parallel GPU.
TEST(TrainMemory, ActivationsFollowTheLayerShape) {
  auto near = [](const LayerActivations& got, double replicated, double sharded, double whole, double heads) {
    EXPECT_NEAR(got.replicated, replicated, 1e-9);
    EXPECT_NEAR(got.sharded, sharded, 1e-9);
    EXPECT_NEAR(got.whole, whole, 1e-9);
    EXPECT_DOUBLE_EQ(got.score_heads, heads);
  };
  near(layer_activations(flags_model(96, 12288, 96, 96, 0, 50257, false), 0), 10, 24, 0, 96);  // GPT-3 175B
  // Models that train without dropout keep no masks: 8 replicated, not 10 (review 57).
  near(layer_activations(read_hf_config(hf("Llama-3.1-8B")), 5), 8, 2 + 0.5 + 0.5 + 2 + 28, 0, 32);
  // Gemma 2: the norms after attention and the MLP keep their inputs too (2 + 2 more); q 16 x 256, k and v 8 x 256
  // of h 3584 (2 bytes each), and a 14336-wide gated MLP.
  near(layer_activations(read_hf_config(hf("gemma-2-9b")), 0), 12,
       2.0 * (16 * 256 + 8 * 256 + 8 * 256 + 16 * 256) / 3584 + 8 * 14336.0 / 3584, 0, 16);
  // Qwen3-8B: q 32 x 128, k and v 8 x 128 of h 4096 (5), Q and K again as the inputs of their per-head norms
  // (2 x 5120 / 4096 = 2.5), a 12288-wide gated MLP (24).
  near(layer_activations(read_hf_config(hf("Qwen3-8B")), 0), 8, 5 + 2.5 + 24, 0, 32);
  const ModelConfig mixtral = read_hf_config(hf("Mixtral-8x7B-v0.1"));
  near(layer_activations(mixtral, 0), 8, 5 + 2 * 8 * 14336.0 / 4096, 2 * (2 + 2), 32);  // top-2 of 8 experts
  // Twice the dense Llama's MLP activations: the Korthikanti GPT layer (34) understated Mixtral's (77) by 2.3x.
  TrainMemoryInput in;
  in.params = static_cast<double>(count_params(mixtral).total);
  in.model = mixtral;
  in.seq = 4096;
  // Outside the layers: no embedding mask (no dropout), the output layer's inputs and fp32 logits
  // (4*s*h + 4*s*V/t), V = 32000.
  const double s = 4096, h = 4096, vocab = 32000;
  EXPECT_NEAR(train_memory(in).activations, 32 * s * h * 77 + 4 * s * h + 4 * s * vocab, 1);
  // Over 2 GPUs the experts' widths split, each routed token's copy and output do not: 8 + 8 + 61/2 (it was
  // 8 + (5 + 64)/2, 9% less).
  in.tp = 2;
  EXPECT_NEAR(train_memory(in).activations, 32 * s * h * 46.5 + 4 * s * h + 4 * s * vocab / 2, 1);
  in.sequence_parallel = true;  // sequence parallel splits the norms' and inputs' part, not the gathered tokens
  EXPECT_NEAR(train_memory(in).activations, 32 * s * h * (69 / 2.0 + 8) + 4 * s * h / 2 + 4 * s * vocab / 2, 1);
  // DeepSeek-V3: 3 dense layers, then MoE layers with a shared expert; MLA's latents are replicated.
  const ModelConfig v3 = read_hf_config(hf("DeepSeek-V3"));
  const LayerActivations dense = layer_activations(v3, 0), moe = layer_activations(v3, 3);
  EXPECT_GT(dense.replicated, 8);
  EXPECT_DOUBLE_EQ(dense.replicated, moe.replicated);
  EXPECT_NEAR(moe.sharded - dense.sharded, 8 * 8 * 2048.0 / 7168 + 8 * 2048.0 / 7168 - 8 * 18432.0 / 7168, 1e-9);
  EXPECT_DOUBLE_EQ(moe.whole, 8 * 4);
  EXPECT_DOUBLE_EQ(dense.whole, 0);
}

// Dropout masks are kept only where the model trains with dropout, by its config (review 57: Llama's activations
// had counted Korthikanti's masks, 4.7% too many, and eager attention's dropped copy of the probabilities).
TEST(TrainMemory, DropoutMasksFollowTheConfig) {
  const ModelConfig gpt2 = read_hf_config(hf("gpt2")), llama = read_hf_config(hf("Llama-3.1-8B")),
                    phi3 = read_hf_config(hf("Phi-3-mini-4k-instruct"));
  EXPECT_TRUE(gpt2.hidden_dropout && gpt2.attention_dropout && gpt2.embedding_dropout);  // 0.1 each
  EXPECT_FALSE(llama.hidden_dropout || llama.attention_dropout || llama.embedding_dropout);
  EXPECT_FALSE(phi3.hidden_dropout || phi3.attention_dropout || phi3.embedding_dropout);  // stated 0.0
  const ModelConfig flags = flags_model(24, 2048, 16, 16, 0, 0, false);  // Korthikanti's GPT
  EXPECT_TRUE(flags.hidden_dropout && flags.attention_dropout && flags.embedding_dropout);
  EXPECT_DOUBLE_EQ(layer_activations(gpt2, 0).replicated, 10);
  // Eager attention as each type's Transformers eager attention keeps its scores (reviews 59, 60): an fp32 softmax's
  // output and 16-bit copy (Llama: 6), a 16-bit softmax's output (gpt-oss, Llama 4: 2), with attention dropout its
  // mask and dropped copy (GPT-2 and Korthikanti's GPT given by flags: 5), Gemma 2's softcapping tanh (8).
  EXPECT_DOUBLE_EQ(layer_activations(gpt2, 0).score_bytes, 5);
  EXPECT_DOUBLE_EQ(layer_activations(llama, 0).score_bytes, 6);
  EXPECT_DOUBLE_EQ(layer_activations(flags, 0).score_bytes, 5);
  EXPECT_DOUBLE_EQ(layer_activations(read_hf_config(hf("gpt-oss-20b")), 0).score_bytes, 2);
  EXPECT_DOUBLE_EQ(layer_activations(read_hf_config(hf("Llama-4-Scout-17B-16E")), 0).score_bytes, 2);
  EXPECT_DOUBLE_EQ(layer_activations(read_hf_config(hf("gemma-2-9b")), 0).score_bytes, 8);
  EXPECT_DOUBLE_EQ(layer_activations(read_hf_config(hf("gemma-3-1b-pt")), 0).score_bytes, 6);
  // Gemma 3's modules never apply a softcapping its config states; GPT-2 upcasts where reorder_and_upcast_attn says
  // (review 61).
  json g3 = read_json_file(hf("gemma-3-1b-pt"));
  g3["attn_logit_softcapping"] = 50.0;
  EXPECT_DOUBLE_EQ(layer_activations(parse_hf_config(g3, "gemma3-softcap"), 0).score_bytes, 6);
  json upcast = read_json_file(hf("gpt2"));
  upcast["reorder_and_upcast_attn"] = true;
  EXPECT_DOUBLE_EQ(layer_activations(parse_hf_config(upcast, "gpt2-upcast"), 0).score_bytes, 7);
  // GQA's K and V repeated to the 32 query heads: 24 more heads of 128 + 128, 2 bytes each, per h.
  EXPECT_DOUBLE_EQ(layer_activations(llama, 0).eager_sharded, 2.0 * 24 * 256 / 4096);
  EXPECT_DOUBLE_EQ(layer_activations(gpt2, 0).eager_sharded, 0);
  // GPT-2's config class defaults each probability to 0.1: one that states none keeps them all.
  json doc = read_json_file(hf("gpt2"));
  for (const char* k : {"attn_pdrop", "embd_pdrop", "resid_pdrop"}) doc.erase(k);
  const ModelConfig bare = parse_hf_config(doc, "gpt2-bare");
  EXPECT_TRUE(bare.hidden_dropout && bare.attention_dropout && bare.embedding_dropout);
  // The keys are the model type's (review 59): GPT-2 drops attention at attn_pdrop, whatever an attention_dropout
  // says; a Llama's resid_pdrop or embd_pdrop are read by none of its modules.
  doc = read_json_file(hf("gpt2"));
  doc["attention_dropout"] = 0.0;
  EXPECT_TRUE(parse_hf_config(doc, "gpt2-extra").attention_dropout);
  doc = read_json_file(hf("Llama-3.1-8B"));
  doc["resid_pdrop"] = 0.1;
  doc["embd_pdrop"] = 0.1;
  const ModelConfig stray = parse_hf_config(doc, "llama-stray");
  EXPECT_FALSE(stray.hidden_dropout || stray.embedding_dropout);
  // A Llama trained with attention dropout keeps that mask; a probability above 1 is refused.
  doc = read_json_file(hf("Llama-3.1-8B"));
  doc["attention_dropout"] = 0.1;
  const ModelConfig dropped = parse_hf_config(doc, "llama-dropout");
  EXPECT_TRUE(dropped.attention_dropout);
  EXPECT_FALSE(dropped.hidden_dropout);
  doc["attention_dropout"] = 1.5;
  EXPECT_THROW(parse_hf_config(doc, "llama-bad"), InputError);
  // Eager attention at s 4096: Llama keeps the fp32 probabilities and their 16-bit copy, 6*a*s/h more per layer, and
  // K and V repeated to every query head.
  TrainMemoryInput in;
  in.model = llama;
  in.params = static_cast<double>(count_params(llama).total);
  in.seq = 4096;
  const double fused = train_memory(in).activations;
  in.eager_attention = true;
  EXPECT_NEAR(train_memory(in).activations - fused,
              32 * 4096.0 * 4096 * (6 * 32 * 4096 / 4096.0 + 2.0 * 24 * 256 / 4096), 1);
  const auto cli = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "train", "--seq", "4096",
                                  "--attention-impl", "eager"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("no dropout masks: the model trains without dropout"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("the fp32 softmax output and its 16-bit copy (6*a*s/h per s*b*h), and K and V repeated"),
            std::string::npos)
      << cli.out;
}

// Pipeline stages are not alike: the first holds the input embedding and, with 1F1B, pp micro-batches of
// activations; the last the output head (a tied one as a copy). The estimate is of the most loaded stage.
TEST(TrainMemory, TheMostLoadedPipelineStage) {
  const ModelConfig llama = read_hf_config(hf("Llama-3.1-8B"));
  const ParamCounts counts = count_params(llama);
  const double layer = layer_params(llama, 0).total;
  EXPECT_DOUBLE_EQ(32 * layer + counts.embedding + counts.lm_head + 4096, static_cast<double>(counts.total));
  TrainMemoryInput in;
  in.model = llama;
  in.params = static_cast<double>(counts.total);
  in.seq = 8192;
  in.pp = 8;
  MemoryEstimate m = train_memory(in);
  EXPECT_EQ(m.stage, 0);
  EXPECT_EQ(m.stage_layers, 4);
  EXPECT_TRUE(m.stage_embedding);
  // 4 layers and the 525M-parameter embedding: 1.40B parameters, not 8.03B / 8 (22.4 GB of state, not 16.1)
  EXPECT_DOUBLE_EQ(m.weights, 2 * (4 * layer + counts.embedding));
  EXPECT_DOUBLE_EQ(m.optimizer, 12 * (4 * layer + counts.embedding));
  // 8 micro-batches of 4 layers in flight: the 32 layers' worth the first stage of Korthikanti's 4.2.3 holds
  // (no embedding mask: Llama trains without dropout); the output layer (one stage, pp 1) is on the last stage.
  in.pp = 1;
  const double sh = 8192.0 * 4096, mask = 0, output = 4 * sh + 4 * 8192.0 * 128256;
  const double all_layers = train_memory(in).activations - mask - output;
  in.pp = 8;
  EXPECT_DOUBLE_EQ(m.activations, all_layers + 8 * mask);
  // The last stage: one micro-batch of its 4 layers, and the output layer's 4.3 GB.
  in.last_stage.total = 4e9;  // enough to make it the most loaded
  const MemoryEstimate last = train_memory(in);
  ASSERT_EQ(last.stage, 7);
  EXPECT_DOUBLE_EQ(last.activations, all_layers / 8 + output);
  in.last_stage.total = 0;
  // The last stage holds the head, the final norm and what trains beside them (DeepSeek-V3's MTP modules):
  // 2B parameters of those make it the most loaded.
  in.recompute = Recompute::kFull;
  in.last_stage.total = 2e9;
  m = train_memory(in);
  EXPECT_EQ(m.stage, 7);
  EXPECT_TRUE(m.stage_head);
  EXPECT_FALSE(m.stage_embedding);
  EXPECT_DOUBLE_EQ(m.weights, 2 * (4 * layer + counts.lm_head + 4096 + 2e9));
  in.last_stage.total = 0;
  // 32 layers over 5 stages: the first two take 7, the other three 6.
  in.pp = 5;
  in.recompute = Recompute::kNone;
  EXPECT_EQ(train_memory(in).stage_layers, 7);
  // A tied embedding (GPT-2) is copied to the last stage for the logits.
  const ModelConfig gpt2 = read_hf_config(hf("gpt2"));
  const ParamCounts g = count_params(gpt2);
  ASSERT_EQ(g.lm_head, 0);
  in.model = gpt2;
  in.params = static_cast<double>(g.total);
  in.seq = 1024;
  in.pp = 12;
  in.recompute = Recompute::kFull;
  in.last_stage.total = 1e8;
  m = train_memory(in);
  EXPECT_EQ(m.stage, 11);
  EXPECT_DOUBLE_EQ(m.weights, 2 * (layer_params(gpt2, 11).total + 2 * 768 + 50257.0 * 768 + 1e8));
}

// Expert parallelism divides the routed experts over ep of the data-parallel GPUs; ZeRO then partitions the
// experts' state over the dp/ep GPUs that hold the same experts, the rest over dp.
TEST(TrainMemory, ExpertParallelismDividesTheRoutedExperts) {
  const ModelConfig mixtral = read_hf_config(hf("Mixtral-8x7B-v0.1"));
  const ParamCounts counts = count_params(mixtral);
  double routed = 0;
  for (std::int64_t l = 0; l < mixtral.layers; ++l) routed += layer_params(mixtral, l).routed_experts;
  EXPECT_DOUBLE_EQ(routed, 32.0 * 8 * 3 * 4096 * 14336);  // 8 experts of three 4096 x 14336 matrices a layer
  const double dense = static_cast<double>(counts.total) - routed;
  TrainMemoryInput in;
  in.model = mixtral;
  in.params = static_cast<double>(counts.total);
  in.seq = 4096;
  in.dp = 16;
  in.ep = 8;
  MemoryEstimate m = train_memory(in);
  EXPECT_DOUBLE_EQ(m.weights, 2 * (dense + routed / 8));
  in.zero_stage = 1;
  m = train_memory(in);
  EXPECT_DOUBLE_EQ(m.optimizer, 12 * (dense / 16 + routed / 8 / 2));
  EXPECT_DOUBLE_EQ(m.weights, 2 * (dense + routed / 8));
  in.zero_stage = 3;
  EXPECT_DOUBLE_EQ(train_memory(in).weights, 2 * (dense / 16 + routed / 8 / 2));
  in.ep = 1;
  in.zero_stage = 0;
  in.tp = 2;
  in.ep = 4;
  const double whole = 32.0 * (2 * 4096 + 8 * 4096) + 4096;  // norms and routers, whole on every tp GPU
  EXPECT_DOUBLE_EQ(train_memory(in).weights, 2 * ((dense - whole) / 2 + whole + routed / 2 / 4));
  // Bad splits: ep must divide dp and the experts; a dense model has none; no model, no experts to divide.
  in.tp = 1;
  in.ep = 3;
  in.dp = 12;
  EXPECT_THROW(train_memory(in), InputError);  // 8 experts
  in.ep = 16;
  in.dp = 8;
  EXPECT_THROW(train_memory(in), InputError);  // 16 does not divide dp 8
  in.ep = 2;
  in.dp = 2;
  in.model = read_hf_config(hf("Llama-3.1-8B"));
  EXPECT_THROW(train_memory(in), InputError);
  in.model.reset();
  EXPECT_THROW(train_memory(in), InputError);
  in.model = mixtral;
  in.ep = 0;
  EXPECT_THROW(train_memory(in), InputError);
  // What trains beside the model on the last stage (DeepSeek-V3's MTP module, an MoE layer) has its routed
  // experts divided by ep too: 2 stages, the last with 16 layers, the head and 10B parameters, 8B of them experts.
  in.ep = 8;
  in.dp = 8;
  in.pp = 2;
  in.recompute = Recompute::kFull;
  in.last_stage.total = 10e9;
  in.last_stage.routed_experts = 8e9;
  double last = 4096 + 32000.0 * 4096 + 10e9, last_routed = 8e9;
  for (std::int64_t l = 16; l < 32; ++l) {
    last += layer_params(mixtral, l).total;
    last_routed += layer_params(mixtral, l).routed_experts;
  }
  m = train_memory(in);
  EXPECT_EQ(m.stage, 1);
  EXPECT_DOUBLE_EQ(m.weights, 2 * (last - last_routed + last_routed / 8));
  const auto r = test::run_cli({"memory", "--hf-config", hf("Mixtral-8x7B-v0.1"), "--mode", "train", "--seq", "4096",
                                "--dp", "16", "--ep", "8", "--zero", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("routed experts over 8 GPUs (1 each"), std::string::npos) << r.out;
  // DeepSeek-V3's MTP module is an MoE layer on the last stage: its 9.87B routed-expert parameters divide over ep
  // too (undivided, the last stage read 87.68 GB here; by hand 48.2 GB), its output layer keeps 2.24 GB
  // (4*s*(h + V), h 7168, V 129280), and the stage's own copy of the word embedding 4.05 GB (129280 x 7168
  // parameters at 2 + 2 + 12/32 bytes).
  const auto v3 = test::run_cli({"memory", "--hf-config", hf("DeepSeek-V3"), "--mode", "train", "--seq", "4096",
                                 "--pp", "16", "--dp", "32", "--ep", "8", "--zero", "1", "--recompute", "full", "--json"});
  ASSERT_EQ(v3.exit_code, 0) << v3.err;
  // Full recompute: one MoE layer run again in the backward pass, beside the checkpoints, and not at once with the
  // output layer's activations: the larger of the two.
  const double rebuilt = activation_bytes_per_layer(layer_activations(read_hf_config(hf("DeepSeek-V3")), 60), 4096, 1,
                                                    7168, 1, false, Recompute::kNone, false) -
                         2.0 * 4096 * 7168;
  EXPECT_NEAR(json::parse(v3.out)["total_bytes"].get<double>(),
              48.22e9 + std::max(2.236e9, rebuilt) + 129280.0 * 7168 * (4 + 12.0 / 32), 0.01e9)
      << v3.out;
  EXPECT_EQ(json::parse(v3.out)["pipeline_stage"]["stage"], 16);
}

// An MTP module trains on the last stage, each tensor-parallel GPU holding whole what it holds whole of a main layer:
// DeepSeek-V3's enorm, hnorm and shared_head.norm (3 x 7168), its decoder layer's norms (2 x 7168) and router with
// the correction bias (256 x 7169), and MLA's down-projections with their norms (q_a 7168 x 1536 + 1536, kv_a
// 7168 x 576 + 512: 15,140,864). eh_proj (2 x 7168^2) splits, as Megatron-LM's column-parallel one does. By hand:
//   the module less its embedding and head: 21,504 + 102,760,448 + 11,507,286,272 (its layer) = 11,610,068,224,
//   whole 21,504 + 14,336 + 1,835,264 + 15,140,864 = 17,011,968;
//   tp 8: (11,610,068,224 - 17,011,968) / 8 + 17,011,968 = 1,466,144,000 a GPU (an even eighth: 1,451,258,528);
//   tp 8, ep 8: its 256 x 3 x 7168 x 2048 = 11,274,289,152 routed-expert parameters / 8 / 8 = 176,160,768, and
//   (11,610,068,224 - 11,274,289,152 - 17,011,968) / 8 + 17,011,968 = 56,857,856 (evenly: 41,972,384).
// GLM-4.5 (GQA, 8 KV heads) at tp 16: whole 3 x 5120 + 2 x 5120 + 2 x 128 (q/k norms) + 160 x 5121 = 845,216, its
// k/v projections 2 x (5120 x 1024 + 1024) = 10,487,808 over 8 GPUs as a main layer's, the module 3,988,069,792:
//   (3,988,069,792 - 845,216 - 10,487,808) / 16 + 10,487,808 / 8 + 845,216 = 250,702,240 (evenly: 249,254,362).
TEST(TrainMemory, MtpModuleWholeWhereTheModelsLayersAre) {
  const ModelConfig v3 = read_hf_config(hf("DeepSeek-V3"));
  const LayerParams mtp = mtp_params(v3);
  EXPECT_DOUBLE_EQ(mtp.total, 11610068224.0);
  EXPECT_DOUBLE_EQ(mtp.total, static_cast<double>(count_params(v3).mtp) - 2.0 * 129280 * 7168);
  EXPECT_DOUBLE_EQ(mtp.replicated, 3 * 7168 + 2 * 7168 + 256 * 7169.0);
  EXPECT_DOUBLE_EQ(mtp.routed_experts, 11274289152.0);
  EXPECT_DOUBLE_EQ(mtp.routed_replicated, 0);
  // The module's share of a GPU's weights, 2 bytes a parameter: with it less without it.
  auto module_weights = [](const ModelConfig& model, int tp, int ep) {
    TrainMemoryInput in;
    in.model = model;
    in.params = static_cast<double>(count_params(model).total);
    in.seq = 4096;
    in.tp = tp;
    in.dp = in.ep = ep;
    in.recompute = Recompute::kFull;
    TrainMemoryInput with = in;
    with.last_stage = mtp_params(model);
    with.last_stage_layers = model.mtp_layers;
    return train_memory(with).weights - train_memory(in).weights;
  };
  EXPECT_NEAR(module_weights(v3, 8, 1), 2 * 1466144000.0, 1);
  EXPECT_NEAR(module_weights(v3, 8, 8), 2 * (56857856.0 + 176160768.0), 1);
  const ModelConfig glm = read_hf_config(hf("GLM-4.5"));
  EXPECT_DOUBLE_EQ(mtp_params(glm).total, 3988069792.0);
  EXPECT_DOUBLE_EQ(mtp_params(glm).replicated, 845216.0);
  EXPECT_NEAR(module_weights(glm, 16, 1), 2 * 250702240.0, 1);
}

// Serving an MoE model with expert parallelism (vLLM, SGLang): the routed experts whole over ep GPUs, a multiple
// of tp; the attention and everything else split over tp as before.
TEST(InferMemory, ExpertParallelPlacesWholeExperts) {
  InferMemoryInput in;
  in.model = read_hf_config(hf("Mixtral-8x7B-v0.1"));
  in.context = 4096;
  in.tp = 2;
  const double total = 46702792704;  // Mixtral 8x7B, as test_model.cpp counts it
  const double routed = 32.0 * 8 * 3 * 4096 * 14336;  // 32 layers x 8 experts x gate, up, down
  const double whole = 32.0 * (2 * 4096 + 8 * 4096) + 4096;  // norms and routers, whole on every tp GPU
  EXPECT_DOUBLE_EQ(infer_memory(in).weights, 2 * ((total - whole) / 2 + whole));
  in.ep = 8;  // one expert a GPU; 4 attention groups of 2 GPUs
  EXPECT_DOUBLE_EQ(infer_memory(in).weights, 2 * ((total - routed - whole) / 2 + whole) + 2 * routed / 8);
  in.ep = 2;  // the tp group: whole experts or split ones, the same bytes
  EXPECT_DOUBLE_EQ(infer_memory(in).weights, 2 * ((total - whole) / 2 + whole));
  // ep must be a multiple of tp and divide the experts; a dense model has none to divide.
  in.ep = 3;
  EXPECT_THROW(infer_memory(in), InputError);
  in.ep = 16;
  EXPECT_THROW(infer_memory(in), InputError);
  in.tp = 4;
  in.ep = 2;
  EXPECT_THROW(infer_memory(in), InputError);
  in.ep = 0;
  EXPECT_THROW(infer_memory(in), InputError);
  InferMemoryInput dense;
  dense.model = read_hf_config(hf("Llama-3.1-8B"));
  dense.context = 4096;
  dense.ep = 2;
  EXPECT_THROW(infer_memory(dense), InputError);

  const auto r = test::run_cli({"memory", "--hf-config", hf("Mixtral-8x7B-v0.1"), "--mode", "infer", "--context",
                                "4096", "--tp", "2", "--ep", "8", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["weights_bytes"].get<double>(), 2 * ((total - routed - whole) / 2 + whole) + 2 * routed / 8)
      << r.out;
  EXPECT_EQ(j["inputs"]["ep"], 8);
  const auto text = test::run_cli({"memory", "--hf-config", hf("Mixtral-8x7B-v0.1"), "--mode", "infer", "--context",
                                   "4096", "--tp", "2", "--ep", "8"});
  EXPECT_NE(text.out.find("8 routed experts whole over 8 GPUs (1 each, not split over tp); past the tp group, 4 "
                          "data-parallel attention groups"),
            std::string::npos)
      << text.out;
  const auto bad = test::run_cli({"memory", "--hf-config", hf("Mixtral-8x7B-v0.1"), "--mode", "infer", "--context",
                                  "4096", "--tp", "4", "--ep", "2"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--ep 2 is not a multiple of --tp 4"), std::string::npos) << bad.err;
}

// Norms and routers are whole on every tensor-parallel GPU (Megatron-LM and vLLM replicate them): Mixtral's
// 32 layers of two 4096 norms and an 8 x 4096 router, and its final norm, 1,314,816 parameters; DeepSeek-V3's
// routers alone are 58 x 256 x (7168 + 1), 106 million, of which an even eighth would miss 93 million a GPU.
TEST(InferMemory, NormsAndRoutersWholeOnEveryTensorParallelGpu) {
  const ModelConfig mixtral = read_hf_config(hf("Mixtral-8x7B-v0.1"));
  const double whole = 32.0 * (2 * 4096 + 8 * 4096) + 4096;
  EXPECT_DOUBLE_EQ(replicated_params(mixtral), whole);
  const double total = 46702792704;
  EXPECT_DOUBLE_EQ(weight_bytes_per_gpu(mixtral, 2 * total, 2, 8, whole), 2 * ((total - whole) / 8 + whole));
  EXPECT_DOUBLE_EQ(weight_bytes_per_gpu(mixtral, 2 * total, 2, 1, whole), 2 * total);
  const ModelConfig v3 = read_hf_config(hf("DeepSeek-V3"));
  EXPECT_GT(replicated_params(v3), 58.0 * 256 * 7169);
  TrainMemoryInput in;
  in.model = mixtral;
  in.params = total;
  in.seq = 4096;
  in.tp = 8;
  in.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(train_memory(in).weights, 2 * ((total - whole) / 8 + whole));
}

// Megatron-style tensor parallelism also keeps whole on every GPU the biases of the row-parallel projections,
// added once after the GPUs' partial products are summed: the attention output's and each MLP's or expert's down
// projection's; the column-parallel ones (q/k/v, gate/up) split. gpt-oss-20b, by hand: 24 layers of two 2880
// norms, a 32 x 2880 router with 32 biases, o_proj's 2880 bias and its 32 experts' 2880-wide down_proj_bias,
// and the final 2880 norm: 24 x 192,992 + 2880 = 4,634,688 (the norms and routers alone, 2,353,728).
TEST(InferMemory, RowParallelBiasesWholeOnEveryTensorParallelGpu) {
  const ModelConfig oss = read_hf_config(hf("gpt-oss-20b"));
  const double total = 20914757184;  // gpt-oss-20b, as test_model.cpp counts it
  const double layer_whole = 2 * 2880 + (32 * 2880 + 32) + 2880 + 32 * 2880;
  EXPECT_DOUBLE_EQ(layer_whole, 192992.0);
  const double experts_bias = 24.0 * 32 * 2880;  // of it, the routed experts' down_proj_bias
  const double whole = 24 * layer_whole + 2880;
  EXPECT_DOUBLE_EQ(whole, 4634688.0);
  EXPECT_DOUBLE_EQ(replicated_params(oss), whole);
  EXPECT_DOUBLE_EQ(layer_params(oss, 7).replicated, layer_whole);
  EXPECT_DOUBLE_EQ(layer_params(oss, 7).routed_replicated, 32.0 * 2880);
  InferMemoryInput in;
  in.model = oss;
  in.context = 4096;
  in.tp = 4;  // 8 KV heads: split evenly
  EXPECT_DOUBLE_EQ(infer_memory(in).weights, 2 * ((total - whole) / 4 + whole));
  // Under expert parallelism each GPU holds its 8 experts whole, their biases with them.
  in.ep = 4;
  const double routed = 24.0 * 32 * (3 * 2880.0 * 2880 + 3 * 2880);  // gate_up and down, with their biases
  EXPECT_DOUBLE_EQ(infer_memory(in).weights,
                   2 * ((total - routed - (whole - experts_bias)) / 4 + (whole - experts_bias)) + 2 * routed / 4);
  // Training splits each expert's width over tp as well; its down_proj_bias stays whole on those tp GPUs.
  TrainMemoryInput t;
  t.model = oss;
  t.params = total;
  t.seq = 4096;
  t.tp = 4;
  t.dp = 4;
  t.ep = 4;
  t.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(train_memory(t).weights,
                   2 * ((total - routed - (whole - experts_bias)) / 4 + (whole - experts_bias) +
                        ((routed - experts_bias) / 4 + experts_bias) / 4));
  // A shared expert's down-projection bias is whole too, and is no routed expert's.
  ModelConfig shared = oss;
  shared.shared_experts = 1;
  EXPECT_DOUBLE_EQ(replicated_params(shared), whole + 24 * 2880);
  EXPECT_DOUBLE_EQ(layer_params(shared, 7).routed_replicated, 32.0 * 2880);

  // A decode step at batch 1 reads 4 of the 32 experts a layer, and of the experts' biases those 4 only:
  // 24 x (5760 + 92192 + 2880 + 4 x 2880) + 2880 = 2,699,328 whole on each GPU.
  const double read_whole = 24.0 * (2 * 2880 + (32 * 2880 + 32) + 2880 + 4 * 2880) + 2880;
  EXPECT_DOUBLE_EQ(read_whole, 2699328.0);
  EXPECT_DOUBLE_EQ(decode_replicated_params(oss, 1), read_whole);
  const auto r = test::run_cli({"mbu", "--hf-config", hf("gpt-oss-20b"), "--batch", "1", "--context", "4096",
                                "--gpus", "4", "--tpot-ms", "10", "--peak-bw-gbps", "4800", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  const double step = j["weight_bytes_per_step"].get<double>();
  EXPECT_DOUBLE_EQ(j["weight_bytes_per_gpu"].get<double>(), (step - 2 * read_whole) / 4 + 2 * read_whole);
  // The notes say what is whole: under expert parallelism the experts' biases are not among it.
  auto note = [](std::vector<std::string> args) {
    std::vector<std::string> a{"memory", "--hf-config", hf("gpt-oss-20b"), "--tp", "4"};
    a.insert(a.end(), args.begin(), args.end());
    return test::run_cli(a).out;
  };
  std::string out = note({"--mode", "train", "--seq", "4096", "--dp", "4", "--ep", "4"});
  EXPECT_NE(out.find("norms, MoE routers and row-parallel biases (attention output, expert down) whole on each)"),
            std::string::npos)
      << out;
  out = note({"--mode", "infer", "--context", "4096", "--ep", "4"});
  EXPECT_NE(out.find("(norms, MoE routers and row-parallel biases (attention output) whole on each GPU)"),
            std::string::npos)
      << out;
}

// GPT-2: LayerNorms of weight and bias, Conv1D layers that all carry biases, and a learned table of 1024 positions,
// which Megatron-LM and vLLM keep whole where they split the token embedding by vocabulary. By hand: 12 layers of
// 2 x 2 x 768 norm parameters and the 768 biases of attn.c_proj and mlp.c_proj (c_attn's and c_fc's split), the
// final 2 x 768, and wpe's 1024 x 768: 12 x 4608 + 1536 + 786,432 = 843,264.
TEST(TrainMemory, Gpt2PositionTableAndRowBiasesWholeOnEveryTensorParallelGpu) {
  const ModelConfig gpt2 = read_hf_config(hf("gpt2"));
  const double total = 124439808;  // GPT-2 small, tied
  const double whole = 12.0 * (2 * 2 * 768 + 768 + 768) + 2 * 768 + 1024.0 * 768;
  EXPECT_DOUBLE_EQ(whole, 843264.0);
  EXPECT_DOUBLE_EQ(replicated_params(gpt2), whole);
  EXPECT_DOUBLE_EQ(layer_params(gpt2, 0).replicated, 4608.0);
  EXPECT_DOUBLE_EQ(layer_params(gpt2, 0).routed_replicated, 0.0);
  TrainMemoryInput in;
  in.model = gpt2;
  in.params = total;
  in.seq = 1024;
  in.tp = 4;
  in.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(train_memory(in).weights, 2 * ((total - whole) / 4 + whole));
  // Two stages: the first holds 6 layers and both tables, the position table whole. A layer by hand: c_attn
  // 768 x 2304 + 2304, attn.c_proj 768 x 768 + 768, c_fc 768 x 3072 + 3072, mlp.c_proj 3072 x 768 + 768, two
  // LayerNorms 4 x 768: 7,087,872. At 128 tokens the last stage's fp32 logits (6.4 MB a GPU) do not make it the
  // most loaded.
  in.pp = 2;
  in.seq = 128;
  const double layer = 768.0 * 2304 + 2304 + 768.0 * 768 + 768 + 768.0 * 3072 + 3072 + 3072.0 * 768 + 768 + 4 * 768;
  EXPECT_DOUBLE_EQ(layer, layer_params(gpt2, 0).total);
  const double tables = 50257.0 * 768 + 1024.0 * 768, first_whole = 6 * 4608.0 + 1024.0 * 768;
  const MemoryEstimate m = train_memory(in);
  EXPECT_EQ(m.stage, 0);
  EXPECT_DOUBLE_EQ(m.weights, 2 * ((6 * layer + tables - first_whole) / 4 + first_whole));

  InferMemoryInput infer;
  infer.model = gpt2;
  infer.context = 1024;
  infer.tp = 4;
  EXPECT_DOUBLE_EQ(infer_memory(infer).weights, 2 * ((total - whole) / 4 + whole));
  // A decode step looks up its position's row and reads no table whole: the position table is not among the
  // weights it reads (all but the two tables, and the tied one again for the logits), nor among those whole.
  EXPECT_DOUBLE_EQ(decode_replicated_params(gpt2, 1), 12.0 * 4608 + 1536);
  const auto r = test::run_cli({"mbu", "--hf-config", hf("gpt2"), "--batch", "1", "--context", "1024", "--gpus", "4",
                                "--tpot-ms", "1", "--peak-bw-gbps", "4800", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  const double read = total - 1024.0 * 768, read_whole = 12.0 * 4608 + 1536;
  EXPECT_DOUBLE_EQ(j["weight_bytes_per_step"].get<double>(), 2 * read);
  EXPECT_DOUBLE_EQ(j["weight_bytes_per_gpu"].get<double>(), 2 * ((read - read_whole) / 4 + read_whole));
  const auto text = test::run_cli({"memory", "--hf-config", hf("gpt2"), "--mode", "infer", "--context", "1024",
                                   "--tp", "4"});
  EXPECT_NE(text.out.find("(norms, row-parallel biases (attention output, MLP down) and the position embedding "
                          "whole on each GPU)"),
            std::string::npos)
      << text.out;
}

// A dense model with biases (Llama-3.1-8B's shape, with mlp_bias and then attention_bias as well): down_proj's and
// o_proj's 4096-wide biases are whole on every GPU; gate_proj's, up_proj's and q_proj's split, k_proj's and
// v_proj's with their KV heads.
TEST(InferMemory, DenseMlpBiasWholeOnEveryTensorParallelGpu) {
  json config = read_json_file(hf("Llama-3.1-8B"));
  config["mlp_bias"] = true;
  InferMemoryInput in;
  in.model = parse_hf_config(config, "Llama-3.1-8B with mlp_bias");
  in.context = 4096;
  in.tp = 8;
  // 32 layers x (2 x 4096 norms + 4096 down_proj bias) + the final 4096 = 397,312; the model 8,030,261,248 and
  // 32 x (2 x 14336 + 4096) biases.
  double whole = 32.0 * (2 * 4096 + 4096) + 4096, total = 8030261248.0 + 32.0 * (2 * 14336 + 4096);
  EXPECT_DOUBLE_EQ(whole, 397312.0);
  EXPECT_DOUBLE_EQ(replicated_params(in.model), whole);
  EXPECT_DOUBLE_EQ(static_cast<double>(count_params(in.model).total), total);
  EXPECT_DOUBLE_EQ(infer_memory(in).weights, 2 * ((total - whole) / 8 + whole));
  // Its training state the same way.
  TrainMemoryInput t;
  t.model = in.model;
  t.params = total;
  t.seq = 4096;
  t.tp = 8;
  EXPECT_DOUBLE_EQ(train_memory(t).weights, 2 * ((total - whole) / 8 + whole));

  config["attention_bias"] = true;
  in.model = parse_hf_config(config, "Llama-3.1-8B with mlp_bias and attention_bias");
  whole += 32.0 * 4096;  // o_proj's
  total += 32.0 * (4096 + 2 * 1024 + 4096);
  EXPECT_DOUBLE_EQ(replicated_params(in.model), whole);
  EXPECT_DOUBLE_EQ(static_cast<double>(count_params(in.model).total), total);
  // 16 GPUs over 8 KV heads: k_proj and v_proj, with their biases, split over 8 of them, the rest over 16, the
  // norms and the row-parallel biases whole.
  in.tp = 16;
  const double kv = 32.0 * 2 * (4096 * 1024 + 1024);
  EXPECT_DOUBLE_EQ(infer_memory(in).weights, 2 * ((total - kv - whole) / 16 + kv / 8 + whole));
}

// Past one KV head a GPU, training copies the K/V projections as inference does.
TEST(TrainMemory, KvProjectionsCopiedPastOneKvHeadAGpu) {
  TrainMemoryInput in;
  in.model = read_hf_config(hf("Llama-3.1-8B"));
  in.params = 8030261248;
  in.seq = 4096;
  in.tp = 16;
  const double kv_proj = 32.0 * 2 * 4096 * 1024;
  const double whole = 32.0 * 2 * 4096 + 4096;  // the norms, whole on every tp GPU
  EXPECT_DOUBLE_EQ(train_memory(in).weights, 2 * ((8030261248 - kv_proj - whole) / 16 + kv_proj / 8 + whole));
  in.tp = 8;
  EXPECT_DOUBLE_EQ(train_memory(in).weights, 2 * ((8030261248.0 - whole) / 8 + whole));
}

TEST(InferMemory, KvCacheAndTensorParallel) {
  InferMemoryInput in;
  in.model = read_hf_config(hf("Llama-3.1-8B"));
  in.batch = 32;
  in.context = 8192;
  MemoryEstimate m = infer_memory(in);
  EXPECT_DOUBLE_EQ(m.weights, 2.0 * 8030261248);
  EXPECT_DOUBLE_EQ(m.kv_cache, 32.0 * 8192 * 131072);
  in.tp = 16;  // 8 KV heads: each rank holds one, replicated twice
  m = infer_memory(in);
  EXPECT_DOUBLE_EQ(m.kv_cache, 32.0 * 8192 * 131072 / 8);
  // So are the k/v projections that compute them: 32 layers x 2 x 4096 x 1024 bf16 weights over 8 ranks, the
  // rest over 16.
  // The norms are whole on every rank.
  const double kv_proj = 32.0 * 2 * 4096 * 1024 * 2, whole = (32.0 * 2 * 4096 + 4096) * 2;
  EXPECT_DOUBLE_EQ(m.weights, (2.0 * 8030261248 - kv_proj - whole) / 16 + kv_proj / 8 + whole);
  in.tp = 8;  // one KV head a rank: an even split
  EXPECT_DOUBLE_EQ(infer_memory(in).weights, (2.0 * 8030261248 - whole) / 8 + whole);
  in.model = read_hf_config(hf("Mistral-7B-v0.1"));
  in.tp = 1;
  EXPECT_DOUBLE_EQ(infer_memory(in).kv_cache, 32.0 * 4096 * 131072);  // sliding window caps the cache
  // gpt-oss-120b: half its 36 layers slide over 128 tokens; they cache that, the others all 131072.
  in.model = read_hf_config(hf("gpt-oss-120b"));
  in.batch = 2;
  in.context = 131072;
  const double per_layer_token = 2.0 * 8 * 64 * 2;
  EXPECT_DOUBLE_EQ(infer_memory(in).kv_cache, 2.0 * per_layer_token * (18.0 * 131072 + 18.0 * 128));
}

// mbu reads the same cache: the sliding layers' window, every other layer's whole context.
TEST(MemoryCli, MbuReadsTheSlidingLayersWindowOnly) {
  auto r = test::run_cli({"mbu", "--hf-config", hf("gpt-oss-20b"), "--batch", "1", "--context", "65536", "--tpot-ms",
                          "10", "--peak-bw-gbps", "4800", "--weight-dtype", "bf16", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  const double kv = 2.0 * 8 * 64 * 2 * (12.0 * 65536 + 12.0 * 128);
  const double experts_read = 32.0 * (1 - std::pow(1 - 4.0 / 32, 1));  // 4 of 32 at batch 1
  const double weights = (20914757184.0 - 201088.0 * 2880 - 24 * (32 - experts_read) * (3.0 * 2880 * 2880 + 3 * 2880)) * 2;
  EXPECT_NEAR(j["bytes_per_step"].get<double>(), weights + kv, 1.0);
}

TEST(MemoryCli, TrainJsonFitsVerdict) {
  const std::string profile = std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json";
  auto r = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "train", "--seq", "8192", "--tp", "8",
                          "--sp", "--recompute", "selective", "--profile", profile, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  const double whole = 32.0 * 2 * 4096 + 4096;  // the norms, whole on every tp GPU
  EXPECT_DOUBLE_EQ(j["weights_bytes"].get<double>(), 2.0 * ((8030261248 - whole) / 8 + whole));
  EXPECT_DOUBLE_EQ(j["optimizer_bytes"].get<double>(), 12.0 * ((8030261248 - whole) / 8 + whole));
  // Per token and layer, in h bytes: 8 replicated (no dropout masks); Q 2 + K 0.5 + V 0.5 (8 of 32 heads) + output
  // input 2, and the SwiGLU MLP's 8 * 14336 / 4096 = 28: 41, all split 8 ways with --sp.
  // Outside them: the output layer's inputs (4*s*h), split 8 ways with --sp, and the fp32 logits of its 128256/8
  // vocabulary rows, 4*s*V/8 (no embedding mask).
  EXPECT_DOUBLE_EQ(j["activations_bytes"].get<double>(),
                   32 * 8192.0 * 4096 * 41 / 8 + 4 * 8192.0 * 4096 / 8 + 4 * 8192.0 * 128256 / 8);
  EXPECT_TRUE(j["devices"][0]["fits"].get<bool>());
  r = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "train", "--seq", "8192", "--gpu", "L4"});
  EXPECT_EQ(r.exit_code, 1);  // the verdict: does not fit
  EXPECT_NE(r.out.find("does NOT fit on L4"), std::string::npos) << r.out;
}

// A model by flags counts the output layer as a table of its own (Llama's), which the note says; --tied-embeddings
// shares the embedding's, as Megatron-LM's GPT by default (review 88: a 1.3B GPT counted 8% more weights). The
// FLOPs are the same either way: the logits multiply by the table, shared or not.
TEST(MemoryCli, FlagsModelTiesTheOutputLayerOnRequest) {
  const std::vector<std::string> gpt = {"--layers", "24", "--hidden", "2048", "--heads", "16", "--vocab", "51200"};
  auto run = [&](std::vector<std::string> args, bool tied) {
    args.insert(args.end(), gpt.begin(), gpt.end());
    if (tied) args.push_back("--tied-embeddings");
    args.push_back("--json");
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  };
  const double layers = 24 * 12.0 * 2048 * 2048, table = 51200.0 * 2048;
  const json untied = run({"memory", "--mode", "train", "--seq", "2048"}, false);
  const json tied = run({"memory", "--mode", "train", "--seq", "2048"}, true);
  EXPECT_DOUBLE_EQ(untied["inputs"]["params"].get<double>(), layers + 2 * table);
  EXPECT_DOUBLE_EQ(tied["inputs"]["params"].get<double>(), layers + table);
  EXPECT_NE(untied["notes"].dump().find("counted as two V*h tables"), std::string::npos) << untied["notes"];
  EXPECT_EQ(tied["notes"].dump().find("two V*h tables"), std::string::npos) << tied["notes"];
  const std::vector<std::string> mfu = {"mfu", "--seq", "2048", "--tokens-per-sec", "1000", "--gpus", "1",
                                        "--peak-tflops", "100"};
  const json flops_untied = run(mfu, false), flops_tied = run(mfu, true);
  EXPECT_DOUBLE_EQ(flops_tied["model_flops_per_token"].get<double>(),
                   flops_untied["model_flops_per_token"].get<double>());
  EXPECT_DOUBLE_EQ(flops_tied["model_flops_per_token"].get<double>(), 6 * (layers + table) + 12 * 24 * 2048 * 2048.0);
  // Nothing to tie without --vocab; a config says it itself; --params counts what it is given.
  for (const auto& [args, why] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"memory", "--mode", "train", "--seq", "2048", "--layers", "24", "--hidden", "2048", "--heads", "16",
             "--tied-embeddings"},
            "it needs --vocab"},
           {{"memory", "--mode", "train", "--seq", "2048", "--hf-config", hf("gpt2"), "--tied-embeddings"},
            "--hf-config and --tied-embeddings are alternatives"},
           {{"memory", "--mode", "train", "--params", "7e9", "--tied-embeddings"}, "--tied-embeddings would not change it"},
           {{"train-time", "--params", "7e9", "--tokens", "1e12", "--gpus", "8", "--achieved-tflops", "400",
             "--tied-embeddings"},
            "--tied-embeddings describes a model"}}) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << why;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
  }
}

// Megatron-LM keeps fp32 gradients under bf16 (18 bytes a parameter; with its distributed optimizer, ZeRO 1,
// 6 + 12/dp): --grad-dtype fp32 counts them; the default stays the ZeRO paper's 16-bit gradients.
TEST(MemoryCli, GradientBytesFollowGradDtype) {
  const double n = 8030261248;  // Llama-3.1-8B
  auto train = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "train", "--seq", "4096",
                                     "--dp", "8", "--zero", "1", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  };
  const json bf16 = train({}), fp32 = train({"--grad-dtype", "fp32"});
  EXPECT_DOUBLE_EQ(bf16["gradients_bytes"].get<double>(), 2 * n);
  EXPECT_DOUBLE_EQ(fp32["gradients_bytes"].get<double>(), 4 * n);
  EXPECT_DOUBLE_EQ(fp32["weights_bytes"].get<double>() + fp32["gradients_bytes"].get<double>() +
                       fp32["optimizer_bytes"].get<double>(),
                   (6 + 12.0 / 8) * n);
  EXPECT_EQ(fp32["inputs"]["grad_dtype"], "fp32");
  auto r = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "train", "--seq", "4096",
                          "--grad-dtype", "fp8"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--grad-dtype must be bf16, fp16 or fp32, not 'fp8'"), std::string::npos) << r.err;
  r = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "infer", "--context", "4096",
                     "--grad-dtype", "fp32"});
  EXPECT_EQ(r.exit_code, 2);  // a training option, refused in inference
  EXPECT_NE(r.err.find("--grad-dtype is for --mode train; --mode infer does not use it"), std::string::npos) << r.err;
}

// What the estimate leaves out or picks is said: the pipeline stage, quantized weights' scales and 16-bit head.
TEST(MemoryCli, SaysWhichStageAndWhatQuantizedWeightsLeaveOut) {
  auto r = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "train", "--seq", "8192", "--pp",
                          "8", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["pipeline_stage"]["stage"], 1);  // of 8, as the note says
  EXPECT_EQ(j["pipeline_stage"]["stages"], 8);
  EXPECT_EQ(j["pipeline_stage"]["layers"], 4);
  EXPECT_EQ(j["pipeline_stage"]["embedding"], true);
  EXPECT_EQ(j["pipeline_stage"]["output_head"], false);
  r = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "train", "--seq", "8192", "--pp", "8"});
  EXPECT_NE(r.out.find("stage 1 of 8, the most loaded: 4 layer(s) and the input embedding"), std::string::npos) << r.out;
  r = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "infer", "--context", "8192",
                     "--weight-dtype", "fp4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 2 x 128256 x 4096 embedding and head parameters at 2 bytes instead of 0.5: 1.58 GB more
  EXPECT_NE(r.out.find("would add 1.58 GB per GPU"), std::string::npos) << r.out;
  r = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "infer", "--context", "8192"});
  EXPECT_EQ(r.out.find("would add"), std::string::npos) << r.out;  // 16-bit weights: nothing left out
}

// Llama-2-7B-like (32 layers, h 4096, 32 heads), seq 4096, micro-batch 1, no recompute: fused attention
// stores 34*s*h bytes per layer; eager adds the 5*a*s/h score term, 4.7x more here.
TEST(MemoryCli, AttentionImplementation) {
  auto run = [](const std::string& impl) {
    return test::run_cli({"memory", "--layers", "32", "--hidden", "4096", "--heads", "32", "--ffn", "11008",
                          "--swiglu", "--vocab", "32000", "--mode", "train", "--seq", "4096", "--attention-impl", impl,
                          "--json"});
  };
  const auto flash = run("flash"), eager = run("eager");
  ASSERT_EQ(flash.exit_code, 0) << flash.err;
  ASSERT_EQ(eager.exit_code, 0) << eager.err;
  const double s = 4096, h = 4096, a = 32, per_layer = 10 + 8 + 8 * 11008 / h;  // MHA, SwiGLU of width 11008
  const double outside = s * h + 4 * s * h + 4 * s * 32000;  // the embedding's mask, the output layer's 4.3
  EXPECT_DOUBLE_EQ(json::parse(flash.out)["activations_bytes"].get<double>(), 32 * s * h * per_layer + outside);
  EXPECT_DOUBLE_EQ(json::parse(eager.out)["activations_bytes"].get<double>(),
                   32 * s * h * (per_layer + 5 * a * s / h) + outside);
  EXPECT_EQ(json::parse(flash.out)["inputs"]["attention_impl"], "flash");
  EXPECT_EQ(run("sdpa").exit_code, 2);
}

// Whole heads per GPU, at least a layer per stage: Llama-3.1-8B has 32 heads, 8 KV heads, 32 layers.
TEST(MemoryCli, TensorAndPipelineSplitsFitTheModel) {
  auto run = [](std::vector<std::string> extra) {
    std::vector<std::string> a{"memory", "--hf-config", hf("Llama-3.1-8B")};
    a.insert(a.end(), extra.begin(), extra.end());
    return test::run_cli(a);
  };
  const auto tp3 = run({"--mode", "train", "--seq", "4096", "--tp", "3"});
  EXPECT_EQ(tp3.exit_code, 2);
  EXPECT_NE(tp3.err.find("32 attention heads"), std::string::npos) << tp3.err;
  const auto pp64 = run({"--mode", "train", "--seq", "4096", "--pp", "64"});
  EXPECT_EQ(pp64.exit_code, 2);
  EXPECT_NE(pp64.err.find("32 layers"), std::string::npos) << pp64.err;
  EXPECT_EQ(run({"--mode", "infer", "--context", "4096", "--tp", "6"}).exit_code, 2);
  EXPECT_EQ(run({"--mode", "infer", "--context", "4096", "--tp", "16"}).exit_code, 0);  // 32 heads; KV heads copied twice
  EXPECT_EQ(run({"--mode", "train", "--seq", "4096", "--tp", "8", "--pp", "32"}).exit_code, 0);
}

// DeepSeek-V3's multi-token-prediction module is trained with the model: its weights, gradients and optimizer
// state count, less the embedding and output head it shares in training.
TEST(MemoryCli, TrainingCountsTheMtpModule) {
  const auto r = test::run_cli({"memory", "--hf-config", hf("DeepSeek-V3"), "--mode", "train", "--seq", "4096", "--tp",
                                "8", "--pp", "8", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  // 671026419200 (the model) + 13463426304 (the MTP module as stored) - 2 x 129280 x 7168 (its own copies of the
  // embedding and head), by hand.
  EXPECT_DOUBLE_EQ(j["inputs"]["params"].get<double>(), 671026419200.0 + 13463426304.0 - 2.0 * 129280 * 7168);
  EXPECT_NE(j["notes"].dump().find("multi-token-prediction"), std::string::npos) << j["notes"];
  // At tp 8 the module's whole parts are whole beside the model's, as if a 62nd layer (a 59th MoE one): MLA's
  // down-projections 62 x 15140864, norms 62 x 2 x 7168, routers 59 x 256 x 7169, the final norm and the module's
  // enorm, hnorm and shared_head.norm 4 x 7168: 1,047,931,648 of the 682,636,487,424, by hand.
  const auto tp8 = test::run_cli({"memory", "--hf-config", hf("DeepSeek-V3"), "--mode", "train", "--seq", "4096",
                                  "--tp", "8", "--recompute", "full", "--json"});
  ASSERT_EQ(tp8.exit_code, 0) << tp8.err;
  const double whole = 62 * 15140864.0 + 62 * 2 * 7168.0 + 59 * 256 * 7169.0 + 4 * 7168.0;
  EXPECT_NEAR(json::parse(tp8.out)["weights_bytes"].get<double>(),
              2 * ((671026419200.0 + 11610068224.0 - whole) / 8 + whole), 1);
  EXPECT_NE(json::parse(tp8.out)["notes"].dump().find("(11.61B parameters; their embedding and output head are the "
                                                      "model's); their activations are not estimated"),
            std::string::npos)
      << tp8.out;
  // Past one pipeline stage, the last (the MTP module's) holds its own copy of the word embedding too, split by
  // vocabulary: 2 bytes x 129280 x 7168 / 8 more than the 13,906,845,184 it held without one (seq 16: the last
  // stage is the most loaded, with its head and the module).
  const auto pp2 = test::run_cli({"memory", "--hf-config", hf("DeepSeek-V3"), "--mode", "train", "--seq", "16",
                                  "--tp", "8", "--pp", "2", "--dp", "8", "--ep", "8", "--json"});
  ASSERT_EQ(pp2.exit_code, 0) << pp2.err;
  const json last = json::parse(pp2.out);
  EXPECT_EQ(last["pipeline_stage"]["stage"], 2);
  EXPECT_NEAR(last["weights_bytes"].get<double>(), 13906845184.0 + 2.0 * 129280 * 7168 / 8, 1);
  // The notes say so: the module and the embedding's copy on that stage, beside its layers and the head.
  const std::string notes = last["notes"].dump();
  EXPECT_NE(notes.find("pipeline: per GPU of stage 2 of 2, the most loaded: 30 layer(s), the output head, 1 MTP "
                       "module(s) and their copy of the word embedding, and with 1F1B"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("their embedding and output head are the model's, the embedding copied to the last pipeline "
                       "stage, which runs them)"),
            std::string::npos)
      << notes;
  // A model without one is counted as before.
  const auto llama = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "train", "--seq", "4096",
                                    "--json"});
  ASSERT_EQ(llama.exit_code, 0) << llama.err;
  EXPECT_DOUBLE_EQ(json::parse(llama.out)["inputs"]["params"].get<double>(), 8030261248.0);
}

TEST(MemoryCli, InferAndBadInput) {
  auto r = test::run_cli({"memory", "--hf-config", hf("DeepSeek-V3"), "--mode", "infer", "--weight-dtype", "fp8",
                          "--context", "32768", "--batch", "8", "--tp", "8", "--gpu", "H200", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["kv_cache_bytes"].get<double>(), 8.0 * 32768 * 61 * 576 * 2);  // MLA latent replicated
  // As are its down-projections (q_a_proj, kv_a_proj_with_mqa and their norms, fp8): 61 x 15140864 bytes whole.
  const double replicated = 61.0 * (7168.0 * 1536 + 1536 + 7168.0 * 576 + 512);
  // So are the norms and the routers (with their correction biases): 61 x 2 x 7168 + 58 x 256 x 7169 + 7168.
  const double whole = 61.0 * 2 * 7168 + 58.0 * 256 * 7169 + 7168;
  EXPECT_DOUBLE_EQ(j["weights_bytes"].get<double>(), (671026419200.0 - replicated - whole) / 8 + replicated + whole);
  EXPECT_EQ(test::run_cli({"memory", "--hf-config", hf("gpt2"), "--mode", "serve"}).exit_code, 2);
  EXPECT_EQ(test::run_cli({"memory", "--hf-config", hf("gpt2"), "--mode", "infer"}).exit_code, 2);  // no context
  EXPECT_EQ(test::run_cli({"memory", "--hf-config", hf("gpt2"), "--mode", "train"}).exit_code, 2);  // no seq
  EXPECT_EQ(
      test::run_cli({"memory", "--hf-config", hf("gpt2"), "--mode", "train", "--seq", "1024", "--tp", "0"}).exit_code,
      2);
  EXPECT_EQ(test::run_cli({"memory", "--params", "7e9", "--mode", "infer", "--context", "10"}).exit_code, 2);
  // --params counts the weights as given: a layer shape beside it is refused by name (it was ignored), and so is a
  // count that is no whole number (7.5 is a typo for 7.5e9, not 7.5 parameters).
  for (const std::vector<std::string>& extra : {std::vector<std::string>{"--layers", "32"}, {"--hidden", "4096"},
                                                {"--swiglu"}, {"--head-dim", "128"}}) {
    std::vector<std::string> args = {"memory", "--params", "7e9", "--mode", "train"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto bad = test::run_cli(args);
    EXPECT_EQ(bad.exit_code, 2) << extra[0] << bad.out;
    EXPECT_NE(bad.err.find(extra[0] + " would not change it"), std::string::npos) << bad.err;
  }
  r = test::run_cli({"memory", "--params", "7.5", "--mode", "train"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("--params must be a positive whole number"), std::string::npos) << r.err;
  // Training from --params: weights, gradients and optimizer state without activations. A total that fits is a
  // lower bound: "cannot tell", exit 3, fits null; one that does not fit is a verdict (exit 1).
  r = test::run_cli({"memory", "--params", "3e9", "--mode", "train", "--gpu", "H100 SXM"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("cannot tell whether it fits on H100"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("before activations, which --params cannot estimate"), std::string::npos) << r.out;
  r = test::run_cli({"memory", "--params", "3e9", "--mode", "train", "--gpu", "H100 SXM", "--json"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  j = json::parse(r.out);
  EXPECT_EQ(j["total_is_lower_bound"], true);
  EXPECT_TRUE(j["devices"][0]["fits"].is_null()) << j.dump();
  EXPECT_DOUBLE_EQ(j["total_bytes"].get<double>(), 3e9 * 16);
  r = test::run_cli({"memory", "--params", "7e9", "--mode", "train", "--gpu", "H100 SXM"});  // 112 GB of state
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("does NOT fit on H100"), std::string::npos) << r.out;
  EXPECT_TRUE(j["inputs"]["seq"].is_null()) << j["inputs"].dump();  // no sequence was given or used
  EXPECT_TRUE(j["inputs"]["batch"].is_null()) << j["inputs"].dump();  // nor a batch (it read 1.0, review 77)
  // DeepSeek-V3's MTP modules' activations are not estimated, whichever stage is the most loaded: a total that fits
  // is a lower bound there too.
  // (Here stage 2 is the most loaded, not the MTP modules' last stage: review 80.)
  r = test::run_cli({"memory", "--hf-config", hf("DeepSeek-V3"), "--mode", "train", "--seq", "4096", "--pp", "16",
                     "--dp", "32", "--ep", "8", "--zero", "1", "--recompute", "selective", "--tp", "8", "--sp", "--gpu",
                     "H200"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("stage 2 of 16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("before the MTP modules' activations, which are not estimated"), std::string::npos) << r.out;
  // The weights note says what applies: nothing split over dp at ZeRO stage 0, nothing over tp at tp 1, no K/V copies
  // while every GPU has a KV head of its own (Llama-3.1-8B: 8).
  r = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "train", "--seq", "4096", "--tp", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("split over tp (norms whole on each), whole on every data-parallel GPU (ZeRO stage 0)"),
            std::string::npos)
      << r.out;
  r = test::run_cli({"memory", "--hf-config", hf("Llama-3.1-8B"), "--mode", "train", "--seq", "4096", "--tp", "16",
                     "--zero", "3", "--dp", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(K/V projections copied past one KV head a GPU; norms whole on each) and over dp by ZeRO "
                       "stage 3"),
            std::string::npos)
      << r.out;
  // An infinite length is an input error, not an "inf B" estimate.
  EXPECT_EQ(test::run_cli({"memory", "--hf-config", hf("gpt2"), "--mode", "infer", "--context", "inf"}).exit_code, 2);
  EXPECT_EQ(test::run_cli({"memory", "--hf-config", hf("gpt2"), "--mode", "train", "--seq", "inf"}).exit_code, 2);
}

// Without --weight-dtype, a config's quantization_config gives the checkpoint's layout (the bytes by hand in
// test_model.cpp's ModelQuantization tests); an explicit type keeps every weight at it and says what the
// checkpoint stores; a quantization this version cannot count is said, not dropped.
TEST(MemoryCli, InferCountsTheCheckpointLayout) {
  auto infer = [](const std::string& model, std::vector<std::string> extra) {
    std::vector<std::string> a{"memory", "--hf-config", model, "--mode", "infer", "--context", "4096"};
    a.insert(a.end(), extra.begin(), extra.end());
    return test::run_cli(a);
  };
  auto r = infer(hf("gpt-oss-120b"), {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_NEAR(j["weights_bytes"].get<double>(), 65248815744.0, 1.0);  // 58.4 GB before, at --weight-dtype fp4
  EXPECT_EQ(j["inputs"]["weight_dtype"], "checkpoint (mxfp4 experts, bf16 rest)");
  EXPECT_EQ(j["notes"].dump().find("byte(s)"), std::string::npos) << j["notes"];  // scales and bf16 rest counted
  r = infer(hf("gpt-oss-120b"), {"--weight-dtype", "fp4", "--json"});
  j = json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["weights_bytes"].get<double>(), 0.5 * 116829156672.0);
  EXPECT_EQ(j["inputs"]["weight_dtype"], "fp4");
  EXPECT_NE(j["notes"].dump().find("the checkpoint stores mxfp4 experts, bf16 rest"), std::string::npos) << j["notes"];
  r = infer(hf("gpt-oss-120b"), {"--weight-dtype", "bf16"});
  EXPECT_NE(r.out.find("note: every weight counted at --weight-dtype bf16; the checkpoint stores mxfp4 experts"),
            std::string::npos)
      << r.out;
  // Expert parallelism over 4 GPUs holds a quarter of the routed experts, at their mxfp4 bytes with their bf16
  // biases: 36 x 128 x (24,883,200 x 4.25/8 + 2 x 8,640) bytes of the 65.25 GB.
  r = infer(hf("gpt-oss-120b"), {"--ep", "4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double routed = 36.0 * 128 * (3.0 * 2880 * 2880 * 4.25 / 8 + 2 * 8640);
  EXPECT_NEAR(json::parse(r.out)["weights_bytes"].get<double>(), 65248815744.0 - routed + routed / 4, 1.0);
  // DeepSeek-V3 over 8 GPUs: the MLA down-projections whole on each (fp8 matrices, bf16 norms), as are the norms
  // and routers (bf16); the rest of its 673.15 GB split.
  r = infer(hf("DeepSeek-V3"), {"--tp", "8", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = json::parse(r.out);
  const double whole = deepseek_v3_whole_on_each_gpu();
  EXPECT_NEAR(j["weights_bytes"].get<double>(), (673150575280.0 - whole) / 8 + whole, 1.0);
  EXPECT_EQ(j["inputs"]["weight_dtype"], "checkpoint (fp8 layer matrices with fp32 scales a 128x128 block, bf16 rest)");
  // A method this version does not count: every weight at the dtype, and the note says the layout was not applied.
  const std::string dir = test::scratch_dir("memory_unknown_quantization");
  json config = read_json_file(hf("Llama-3.1-8B"));
  config["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}};
  const std::string path = dir + "/config.json";
  std::ofstream(path) << config.dump();
  r = infer(path, {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["weights_bytes"].get<double>(), 2 * 8030261248.0);
  EXPECT_EQ(j["inputs"]["weight_dtype"], "bf16");
  EXPECT_NE(j["notes"].dump().find("quantization_config is not applied: quant_method 'awq'"), std::string::npos)
      << j["notes"];
  r = infer(path, {});
  EXPECT_NE(r.out.find("every weight counted at the default bf16"), std::string::npos) << r.out;
}

// mbu at batch 1: gpt-oss-120b reads 5.00 GB a step, DeepSeek-V3 37.67 GB (by hand in test_model.cpp), split over
// the GPUs but for what each holds whole, at their own bytes.
TEST(MemoryCli, MbuReadsTheCheckpointLayout) {
  auto mbu = [](const std::string& model, std::vector<std::string> extra) {
    std::vector<std::string> a{"mbu", "--hf-config", hf(model), "--context", "4096", "--tpot-ms", "50",
                               "--peak-bw-gbps", "4800", "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return test::run_cli(a);
  };
  auto r = mbu("gpt-oss-120b", {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_NEAR(j["weight_bytes_per_step"].get<double>(), 5002902144.0, 1.0);  // 2.57 GB at fp4, 10.27 at bf16
  EXPECT_EQ(j["weight_dtype"], "checkpoint (mxfp4 experts, bf16 rest)");
  r = mbu("DeepSeek-V3", {"--gpus", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = json::parse(r.out);
  EXPECT_NEAR(j["weight_bytes_per_step"].get<double>(), 37668438704.0, 1.0);  // 36.63 GB at fp8
  const double whole = deepseek_v3_whole_on_each_gpu();
  EXPECT_NEAR(j["weight_bytes_per_gpu"].get<double>(), (37668438704.0 - whole) / 8 + whole, 1.0);
  r = mbu("DeepSeek-V3", {"--gpus", "8", "--weight-dtype", "fp8"});
  j = json::parse(r.out);
  EXPECT_EQ(j["weight_dtype"], "fp8");
  EXPECT_NE(j["note"].get<std::string>().find("the checkpoint stores fp8 layer matrices"), std::string::npos)
      << j["note"];
}

// Serving counts the main model and says so where the config stores multi-token-prediction modules (DeepSeek-V3's
// one, 13.46B parameters as the checkpoint stores it: `model`'s params_mtp): mbu, memory --mode infer and the
// roofline's LLM view each name them as not counted; a config without any says nothing of them.
TEST(MemoryCli, ServingSaysTheMtpModulesAreNotCounted) {
  const std::string note = "the main model only: its 1 multi-token-prediction module(s) (";
  const std::string profile = std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json";
  for (const std::string model : {"DeepSeek-V3", "Llama-3.1-8B"}) {
    const bool mtp = model == "DeepSeek-V3";
    const auto mbu = test::run_cli({"mbu", "--hf-config", hf(model), "--context", "4096", "--tpot-ms", "50",
                                    "--peak-bw-gbps", "4800", "--gpus", "8", "--json"});
    ASSERT_EQ(mbu.exit_code, 0) << mbu.err;
    EXPECT_EQ(json::parse(mbu.out).value("note", "").find(note) != std::string::npos, mtp) << mbu.out;
    const auto mem = test::run_cli(
        {"memory", "--hf-config", hf(model), "--mode", "infer", "--context", "4096", "--tp", "8", "--json"});
    ASSERT_EQ(mem.exit_code, 0) << mem.err;
    EXPECT_EQ(mem.out.find(note) != std::string::npos, mtp) << mem.out;
    const auto roof = test::run_cli({"roofline", "--profile", profile, "--hf-config", hf(model), "--context", "4096"});
    ASSERT_EQ(roof.exit_code, 0) << roof.err;
    EXPECT_EQ(roof.out.find("note: " + note) != std::string::npos, mtp) << roof.out;
  }
  const auto model = test::run_cli({"model", "--hf-config", hf("DeepSeek-V3"), "--json"});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  const auto mem = test::run_cli(
      {"memory", "--hf-config", hf("DeepSeek-V3"), "--mode", "infer", "--context", "4096", "--tp", "8", "--json"});
  EXPECT_NE(mem.out.find(note + format_fixed(json::parse(model.out)["params_mtp"].get<double>() / 1e9, 2) +
                         "B parameters as the checkpoint stores them"),
            std::string::npos)
      << mem.out;
}

// One GPU's memory reads alike in `show` and `memory --profile`, and a datasheet's alike in `specs` and
// `memory --gpu`: GiB with its GB (review 108 #12: 139.8 GiB in `show`, 150.1 GB in `memory`, nothing relating them).
TEST(MemoryCli, CapacitiesReadAlikeInEveryCommand) {
  const std::string profile = std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json";
  const std::string measured = "140.4 GiB = 150.8 GB", datasheet = "141.0 GiB = 151.4 GB";
  auto r = test::run_cli({"memory", "--mode", "infer", "--hf-config", hf("Llama-3.1-8B"), "--context", "4096",
                          "--profile", profile, "--gpu", "H200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("[profile]: " + measured + ", headroom"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[datasheet]: " + datasheet + ", headroom"), std::string::npos) << r.out;
  r = test::run_cli({"show", profile});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("132 SMs, " + measured + ", L2"), std::string::npos) << r.out;
  r = test::run_cli({"specs", "H200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(datasheet), std::string::npos) << r.out;
}
