// `ceilings memory`: per-GPU memory for training (weights, gradients, Adam state, activations) or inference
// (weights, KV cache), and whether it fits the device of a profile or a datasheet entry.
#include "ceilings/memory.hpp"

#include <algorithm>
#include <iostream>

#include "ceilings/specs.hpp"
#include "ceilings/table.hpp"
#include "ceilings/units.hpp"
#include "subcommand.hpp"
#include "workload_options.hpp"

namespace {

using namespace ceilings;

struct MemoryOptions {
  cli::ModelOptions model;
  cli::PeakOptions device;
  std::string mode, recompute = "none", kv_dtype = "bf16", attention_impl = "flash", grad_dtype = "bf16";
  cli::WeightDtypeOption weight_dtype;
  cli::OptNumber batch, seq, context;
  int tp = 1, pp = 1, dp = 1, zero = 0, ep = 1;
  bool sp = false, json = false;
  // Options that only one mode reads: given in the other, they would be silently ignored.
  std::vector<CLI::Option*> train_only, infer_only;
};

// What every tensor-parallel GPU holds whole of this model (replicated_params), for the notes: the norms, and the
// rest only where the model has it. `experts_over_tp`: the routed experts' widths are split over tp, their
// down-projection biases whole on each GPU (not so under inference's expert parallelism, where they go whole with
// their experts).
std::string whole_on_each_gpu(const ModelConfig& m, bool experts_over_tp) {
  bool moe_layer = false;
  for (std::int64_t l = 0; l < m.layers && !moe_layer; ++l) moe_layer = m.is_moe_layer(l);
  std::vector<std::string> parts = {"norms"};
  if (moe_layer) parts.push_back("MoE routers");
  std::vector<std::string> biases;  // the row-parallel projections'
  if (m.o_bias) biases.push_back("attention output");
  if (m.mlp_bias && m.has_dense_mlp_layer()) biases.push_back("MLP down");
  if (m.mlp_bias && moe_layer && (experts_over_tp || m.shared_experts > 0))
    biases.push_back(experts_over_tp ? "expert down" : "shared expert down");
  if (!biases.empty()) {
    std::string b = "row-parallel biases (";
    for (std::size_t i = 0; i < biases.size(); ++i) b += (i > 0 ? ", " : "") + biases[i];
    parts.push_back(b + ")");
  }
  if (m.learned_positions > 0) parts.push_back("the position embedding");
  std::string out = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) out += (i + 1 < parts.size() ? ", " : " and ") + parts[i];
  return out;
}

// The first option of `opts` the user gave, or null.
const CLI::Option* given_one(const std::vector<CLI::Option*>& opts) {
  for (const CLI::Option* opt : opts)
    if (opt->count() > 0) return opt;
  return nullptr;
}

int run(const MemoryOptions& o) {
  if (o.mode != "train" && o.mode != "infer") throw InputError("--mode must be train or infer");
  if (const CLI::Option* opt = given_one(o.mode == "train" ? o.infer_only : o.train_only))
    throw InputError(opt->get_name() + " is for --mode " + (o.mode == "train" ? "infer" : "train") +
                     "; --mode " + o.mode + " does not use it");
  const double batch = o.batch.given() ? o.batch.value : 1.0;
  require_count(batch, "--batch");
  MemoryEstimate est;
  std::vector<std::string> notes;
  json inputs = {{"mode", o.mode}, {"batch", batch}, {"tp", o.tp}};
  if (o.mode == "train") {
    TrainMemoryInput in;
    in.micro_batch = batch;
    in.tp = o.tp;
    in.pp = o.pp;
    in.dp = o.dp;
    in.ep = o.ep;
    in.zero_stage = o.zero;
    in.sequence_parallel = o.sp;
    in.recompute = parse_recompute(o.recompute);
    if (o.attention_impl != "flash" && o.attention_impl != "eager")
      throw InputError("--attention-impl must be flash or eager, not '" + o.attention_impl + "'");
    in.eager_attention = o.attention_impl == "eager";
    if (o.grad_dtype != "bf16" && o.grad_dtype != "fp16" && o.grad_dtype != "fp32")
      throw InputError("--grad-dtype must be bf16, fp16 or fp32, not '" + o.grad_dtype + "'");
    in.grad_bytes = o.grad_dtype == "fp32" ? 4.0 : 2.0;
    if (o.sp && o.tp < 2)
      throw InputError("--sp splits activations over the tensor-parallel GPUs: it needs --tp of 2 or more");
    if (o.model.from_params() && !o.model.from_config()) {
      o.model.refuse_shape_beside_params("memory --params takes the parameter count as given (weights, gradients and "
                                         "optimizer state; no activations)",
                                         "would not change it, and estimates no activations beside it");
      if (in.eager_attention || in.recompute != Recompute::kNone || o.sp || o.seq.given() || o.batch.given())
        throw InputError("--seq, --batch, --attention-impl, --recompute and --sp shape the activation estimate, "
                         "which --params alone cannot make (use --hf-config or --layers/--hidden/--heads)");
      in.params = require_count(o.model.params.value, "--params");
      notes.push_back(
          "activations not estimated: --params gives no layer shape (use --hf-config or --layers/--hidden/--heads)");
    } else {
      in.model = o.model.model();
      in.params = static_cast<double>(count_params(*in.model).total);
      if (const auto shape = o.model.shape_note(cli::ModelOptions::Counted::kWeights)) notes.push_back(*shape);
      if (in.model->mtp_layers > 0) {
        // DeepSeek-V3 trains its multi-token-prediction modules with the model; in training they share its
        // embedding and output head, so only the rest of each module adds weights, gradients and optimizer state,
        // beside the output head on the last pipeline stage (past one stage with a copy of the embedding there).
        in.last_stage = mtp_params(*in.model);
        in.last_stage_layers = in.model->mtp_layers;
        const double mtp = in.last_stage.total;
        in.params += mtp;
        notes.push_back("parameters include the " + std::to_string(in.model->mtp_layers) +
                        " multi-token-prediction module(s) trained with the model (" + format_fixed(mtp / 1e9, 2) +
                        "B parameters; their embedding and output head are the model's" +
                        (o.pp > 1 ? std::string(", the embedding copied to the last pipeline stage, which runs them")
                                  : std::string()) +
                        "); their activations are not estimated");
      }
      if (!o.seq.given()) throw InputError("--seq is missing (training sequence length, for activations)");
      in.seq = o.seq.value;
      const ModelConfig& mc = *in.model;
      std::string masks;
      if (mc.hidden_dropout) masks += "two a layer, after attention and the MLP";
      if (mc.attention_dropout && in.eager_attention)
        masks += std::string(masks.empty() ? "" : ", ") + "the attention probabilities'";
      if (mc.embedding_dropout) masks += std::string(masks.empty() ? "" : ", ") + "the embedding's (first stage)";
      notes.push_back(
          "activations: Korthikanti et al. 2022 (16-bit; " +
          (masks.empty() ? std::string("no dropout masks: the model trains without dropout")
                         : "dropout masks where it trains with dropout: " + masks) +
          ") for this model's layers: its "
          "attention widths (GQA, MLA), its MLP (gated: gate, up, SiLU(gate) and product), per routed expert the token's "
          "copy, MLP and output (MoE); " +
          std::string(in.model->vocab > 0 ? "the output layer's inputs and fp32 logits, 4*s*b*h (/t with --sp) + "
                                            "4*s*b*V/t (last stage; sec. 4.3)"
                                          : "no output layer (no --vocab)") +
          "; an estimate: framework buffers and temporaries not included");
      if (in.recompute == Recompute::kNone && in.eager_attention) {
        const LayerActivations a = layer_activations(mc, 0);
        std::string kept =
            mc.eager_fp32_softmax ? "the fp32 softmax output and its 16-bit copy" : "the 16-bit softmax output";
        if (mc.attention_dropout) kept += ", the dropout mask and the dropped copy";
        if (mc.attention_softcapping) kept += ", the logit softcapping's tanh output";
        notes.push_back("attention: eager" +
                        std::string(mc.model_type == "flags" ? " (Korthikanti's GPT)"
                                                             : " as Transformers runs a " + mc.model_type) +
                        ", the s x s scores kept per head: " + kept + " (" + format_fixed(a.score_bytes, 0) +
                        "*a*s/h per s*b*h)" +
                        (a.eager_sharded > 0 ? ", and K and V repeated to every query head (GQA)" : ""));
      } else if (in.recompute == Recompute::kNone) {
        notes.push_back("attention: fused (FlashAttention), no s x s scores stored; --attention-impl eager counts them");
      }
    }
    est = train_memory(in);
    // Without a model (--params) the split is even: nothing is known to be copied or whole.
    notes.push_back("weights + gradients + optimizer: mixed-precision Adam, " +
                    (o.grad_dtype == "fp32" ? std::string("18 bytes per parameter (16-bit weights, fp32 gradients as "
                                                          "Megatron-LM keeps them, fp32 master weights and moments)")
                                            : std::string("16 bytes per parameter (ZeRO paper; --grad-dtype fp32 for "
                                                          "Megatron-LM's fp32 gradients: 18)")) +
                    (o.tp > 1 ? ", split over tp" +
                                    (in.model ? std::string(" (") +
                                                    (o.tp > in.model->kv_heads && !in.model->is_mla()
                                                         ? "K/V projections copied past one KV head a GPU; "
                                                         : "") +
                                                    whole_on_each_gpu(*in.model, true) + " whole on each)"
                                              : std::string())
                              : std::string()) +
                    (o.zero > 0 ? std::string(o.tp > 1 ? " and over dp" : ", split over dp") + " by ZeRO stage " +
                                      std::to_string(o.zero)
                                : std::string(", whole on every data-parallel GPU (ZeRO stage 0)")));
    if (o.ep > 1)
      notes.push_back("experts: each MoE layer's " + std::to_string(in.model->routed_experts) + " routed experts over " +
                      std::to_string(o.ep) + " GPUs (" + std::to_string(in.model->routed_experts / o.ep) +
                      " each, their width split over tp too), their ZeRO partitions over dp/ep = " +
                      std::to_string(o.dp / o.ep) + "; routing taken as balanced, so each GPU holds as many token "
                      "copies as without expert parallelism");
    if (o.pp > 1 && in.model) {
      std::vector<std::string> parts = {std::to_string(est.stage_layers) + " layer(s)"};
      if (est.stage_embedding) parts.push_back("the input embedding");
      if (est.stage_head) {
        parts.push_back("the output head" + std::string(in.model->tied_embeddings ? " (a copy of the tied embedding)" : ""));
        if (in.last_stage_layers > 0)  // train_memory's copy of the word embedding for them
          parts.insert(parts.end(), {std::to_string(in.last_stage_layers) + " MTP module(s)",
                                     "their copy of the word embedding"});
      }
      std::string holds = parts[0];
      for (std::size_t i = 1; i < parts.size(); ++i) holds += (i + 1 < parts.size() ? ", " : " and ") + parts[i];
      notes.push_back("pipeline: per GPU of stage " + std::to_string(est.stage + 1) + " of " + std::to_string(o.pp) +
                      ", the most loaded: " + holds + ", and with 1F1B the activations of " +
                      std::to_string(o.pp - est.stage) + " micro-batch(es) in flight");
    } else if (o.pp > 1) {
      notes.push_back("pipeline: --params / (tp * pp), an average stage; the first holds the input embedding and the "
                      "last the output head besides (--hf-config or --layers/--hidden/--heads count them)");
    }
    inputs.update({{"seq", o.seq.given() ? json(in.seq) : json(nullptr)},  // --params: no sequence
                   {"batch", o.model.from_params() && !o.model.from_config() ? json(nullptr) : json(batch)},  // nor a batch
                   {"pp", o.pp},
                   {"dp", o.dp},
                   {"ep", o.ep},
                   {"zero", o.zero},
                   {"grad_dtype", o.grad_dtype},
                   {"sequence_parallel", o.sp},
                   {"recompute", recompute_name(in.recompute)},
                   {"attention_impl", o.attention_impl},
                   {"params", in.params}});
  } else {
    if (o.model.from_params() && !o.model.from_config())
      throw InputError("--mode infer needs the model's attention shape, which --params does not give: use --hf-config "
                       "or --layers/--hidden/--heads (without --params)");
    InferMemoryInput in;
    in.model = *o.model.model();
    in.batch = batch;
    if (!o.context.given()) throw InputError("--context is missing (tokens per sequence in the KV cache)");
    in.context = o.context.value;
    const cli::WeightDtypeOption::Choice weights = o.weight_dtype.choose(&in.model);
    in.weight_bytes = weights.bytes;
    in.kv_bytes = dtype_bytes(o.kv_dtype);
    in.tp = o.tp;
    in.ep = o.ep;
    est = infer_memory(in);
    notes.push_back("weights " + weights.label + " split over tp" +
                    (o.tp > 1 ? " (" + whole_on_each_gpu(in.model, o.ep == 1) + " whole on each GPU)" : "") +
                    (o.ep > 1 ? " (routed experts over ep)" : "") +
                    "; KV cache " + o.kv_dtype + ", batch * context * bytes per token" +
                    (in.model.sliding_window && in.context > static_cast<double>(*in.model.sliding_window)
                         ? " (the window's " + std::to_string(*in.model.sliding_window) + " tokens, not the context, in the " +
                               std::to_string(in.model.window_layers) + " of " + std::to_string(in.model.layers) +
                               " layers that slide)"
                         : std::string()) +
                    (in.model.attention_chunk && in.context > static_cast<double>(*in.model.attention_chunk)
                         ? " (a chunk's " + std::to_string(*in.model.attention_chunk) + " tokens, not the context, in the " +
                               std::to_string(in.model.chunk_layers) + " of " + std::to_string(in.model.layers) +
                               " layers that attend in chunks)"
                         : std::string()) +
                    "; activations and framework overhead not included");
    if (o.ep > 1)
      notes.push_back("experts: each MoE layer's " + std::to_string(in.model.routed_experts) +
                      " routed experts whole over " + std::to_string(o.ep) + " GPUs (" +
                      std::to_string(in.model.routed_experts / o.ep) + " each, not split over tp)" +
                      (o.ep > o.tp ? "; past the tp group, " + std::to_string(o.ep / o.tp) +
                                         " data-parallel attention groups, each holding the other weights and "
                                         "serving --batch sequences of its own"
                                   : std::string()));
    if (!weights.note.empty()) notes.push_back(weights.note);
    if (const auto mtp = cli::mtp_serving_note(in.model)) notes.push_back(*mtp);
    if (const auto shape = o.model.shape_note(cli::ModelOptions::Counted::kWeights)) notes.push_back(*shape);
    const double wb = in.weight_bytes.other;  // every weight's, unless the checkpoint's layout is counted
    if (in.weight_bytes.covers == WeightBytes::Covers::kNothing && wb < 2) {
      const ParamCounts counts = count_params(in.model);
      const double head = static_cast<double>(counts.embedding + counts.lm_head) * (2 - wb) / in.tp;
      notes.push_back("every weight counted at " + format_fixed(wb, wb < 1 ? 1 : 0) +
                      " byte(s): quantization's scales (fp4/int4 block scales: about 0.25-0.5 bit a weight) are not "
                      "included, and an embedding and output head kept in 16 bits, as quantized checkpoints often "
                      "keep them, would add " + format_quantity(head, "B", 3) + " per GPU");
    }
    const KvTensorSplit kv = kv_tensor_split(in.model, in.tp);
    if (kv.split < in.tp)
      notes.push_back(in.model.is_mla()
                          ? std::string("MLA: the latent KV cache and the attention down-projections (q_a, kv_a) are "
                                        "whole on every GPU")
                          : "KV cache and k/v projections split over " + format_fixed(kv.split, 0) + " of the " +
                                std::to_string(in.tp) + " GPUs (" + std::to_string(in.model.kv_heads) +
                                " KV heads: the others hold copies)");
    inputs.update({{"context", in.context}, {"ep", o.ep}, {"weight_dtype", weights.label}, {"kv_dtype", o.kv_dtype}});
  }
  struct Device {
    std::string source, name;
    double bytes;
  };
  std::vector<Device> devices;
  if (const auto p = o.device.read()) {
    if (p->device.memory_bytes == 0) throw InputError("profile " + o.device.profile + " has no device.memory_bytes");
    devices.push_back({"profile", p->device.name, static_cast<double>(p->device.memory_bytes)});  // "[profile]" says it
  }
  if (!o.device.gpu.empty()) {
    const GpuSpec& s = resolve_gpu(o.device.gpu);
    devices.push_back({"datasheet", s.name, s.memory_bytes});
    notes.push_back("a datasheet capacity is the vendor's figure in GiB; the driver reports a little less (an H200 "
                    "measured here: 139.8 of 141.0 GiB, 150.1 of 151.4 GB) and the CUDA context and framework take "
                    "more: --profile judges against a measured GPU's total");
  }
  // Training without activations (--params), or of a model with MTP modules (DeepSeek-V3), whose activations are not
  // estimated (whichever stage is the most loaded: the MTP stage's own total is not known): a total that fits is a
  // lower bound, which cannot say the job fits; one that does not fit is a verdict all the same.
  const bool mtp_unestimated =
      o.mode == "train" && est.activations_estimated && o.model.from_config() && o.model.model()->mtp_layers > 0;
  const bool lower_bound = (o.mode == "train" && !est.activations_estimated) || mtp_unestimated;
  const std::string left_out = !est.activations_estimated ? "activations, which --params cannot estimate"
                                                          : "the MTP modules' activations, which are not estimated";
  auto fits = [&](const Device& d) { return est.total() <= d.bytes; };
  const bool all_fit = std::all_of(devices.begin(), devices.end(), fits);
  const int exit_code = !all_fit ? 1 : (lower_bound && !devices.empty()) ? 3 : 0;
  if (o.json) {
    json out = {{"weights_bytes", est.weights},
                {"gradients_bytes", est.gradients},
                {"optimizer_bytes", est.optimizer},
                {"activations_bytes", est.activations},
                {"kv_cache_bytes", est.kv_cache},
                {"total_bytes", est.total()},
                {"activations_estimated", est.activations_estimated},
                {"total_is_lower_bound", lower_bound},
                {"pipeline_stage", est.stage_layers > 0 ? json{{"stage", est.stage + 1},  // of "stages", as the note
                                                               {"stages", o.pp},
                                                               {"layers", est.stage_layers},
                                                               {"embedding", est.stage_embedding},
                                                               {"output_head", est.stage_head}}
                                                         : json()},
                {"per", "GPU"},
                {"inputs", inputs},
                {"notes", notes}};
    out["devices"] = json::array();
    for (const Device& d : devices)
      out["devices"].push_back({{"source", d.source},
                                {"name", d.name},
                                {"memory_bytes", d.bytes},
                                // A lower bound that fits cannot say the job does (null: not known).
                                {"fits", fits(d) && lower_bound ? json(nullptr) : json(fits(d))},
                                {"headroom_bytes", d.bytes - est.total()}});
    std::cout << out.dump(2) << "\n";
    return exit_code;
  }
  Table t;
  t.columns = {"per GPU", "bytes"};
  t.right_aligned = {false, true};
  t.add_row({"weights", format_quantity(est.weights, "B", 4)});
  if (o.mode == "train") {
    t.add_row({"gradients", format_quantity(est.gradients, "B", 4)});
    t.add_row({"optimizer state", format_quantity(est.optimizer, "B", 4)});
    t.add_row({"activations", est.activations_estimated ? format_quantity(est.activations, "B", 4) : "not estimated"});
  } else {
    t.add_row({"KV cache", format_quantity(est.kv_cache, "B", 4)});
  }
  t.add_row({"total", format_quantity(est.total(), "B", 4)});
  std::cout << render(t, Format::kTable);
  for (const auto& n : notes) std::cout << "note: " << n << "\n";
  for (const Device& d : devices) {
    const bool ok = fits(d);
    std::cout << (!ok ? "does NOT fit" : lower_bound ? "cannot tell whether it fits" : "fits") << " on " << d.name
              << " [" << d.source << "]: " << format_capacity(d.bytes) << ", "
              << (ok ? "headroom " : "short by ") << format_quantity(std::fabs(d.bytes - est.total()), "B", 4)
              << (ok && lower_bound ? " before " + left_out : std::string()) << "\n";
  }
  return exit_code;  // a verdict: 1 does not fit; 3 a lower bound that fits
}

cli::Runner setup(CLI::App& app) {
  auto o = std::make_shared<MemoryOptions>();
  o->model.add(app, "Parameters N the GPUs store (all of them: embeddings, every expert)");
  o->device.add(app, "Measured profile: the measured GPU's memory is the capacity the estimate is judged against");
  app.add_option("--mode", o->mode, "train | infer")->required();
  cli::add_number(app, o->batch, "--batch", "Micro-batch (train) or concurrent sequences (infer); default 1");
  app.add_option("--tp", o->tp, "Tensor-parallel degree")->capture_default_str();
  app.add_option("--ep", o->ep,
                 "Expert-parallel degree (MoE): each MoE layer's routed experts divided over this many GPUs; train: "
                 "of the --dp GPUs (experts' width split over tp too); infer: whole experts, a multiple of --tp")
      ->capture_default_str();
  o->train_only = {
      cli::add_number(app, o->seq, "--seq", "Training sequence length").option,
      app.add_option("--pp", o->pp, "Pipeline-parallel degree (train)")->capture_default_str(),
      app.add_option("--dp", o->dp, "Data-parallel degree (train, for ZeRO)")->capture_default_str(),
      app.add_option("--zero", o->zero, "ZeRO stage 0-3 (train)")->capture_default_str(),
      app.add_flag("--sp", o->sp, "Sequence parallelism (train, with --tp)"),
      app.add_option("--recompute", o->recompute, "none | selective | full (train)")->capture_default_str(),
      app.add_option("--grad-dtype", o->grad_dtype,
                     "bf16 | fp16 | fp32: the gradients' bytes (train; fp32 as Megatron-LM accumulates them)")
          ->capture_default_str(),
      app.add_option("--attention-impl", o->attention_impl,
                     "flash (fused: no s x s scores kept) | eager (the s x s scores kept per head as the model "
                     "type's Transformers eager attention keeps them: an fp32 softmax's output and 16-bit copy or a 16-bit softmax's "
                     "output, a dropout mask and dropped copy, Gemma 2's softcapping tanh; with GQA, K and V repeated "
                     "to every query head; train)")
          ->capture_default_str()};
  o->infer_only = {
      cli::add_number(app, o->context, "--context", "Inference: tokens per sequence in the KV cache").option,
      o->weight_dtype.add(app, "Inference weight storage"),
      app.add_option("--kv-dtype", o->kv_dtype, std::string("Inference KV-cache storage: ") + kStorageTypes)->capture_default_str()};
  app.add_flag("--json", o->json, "Print JSON");
  return [o] { return run(*o); };
}

CEILINGS_SUBCOMMAND("memory", "Training or inference memory per GPU, and whether it fits a device", setup);

}  // namespace
