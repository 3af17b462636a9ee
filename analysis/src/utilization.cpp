// MFU/HFU (Narayanan et al. 2021, Korthikanti et al. 2022, PaLM appendix B), MBU and training time,
// each against every peak the user supplied (given, measured, datasheet).
#include "ceilings/utilization.hpp"

#include <cmath>
#include <sstream>

#include "ceilings/ceiling_families.hpp"
#include "ceilings/gemm_plan.hpp"
#include "ceilings/report.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

namespace {

// "node001 (NVIDIA H200)"; a document that says what it is (a fixture's "not a measurement") says it too.
std::string device_label(const Profile& p, const std::string& origin) {
  // A MIG instance's peak is a slice's: said, as CUDA's own name for one does (" MIG 3g.40gb"), where the name
  // does not (review 38: a 42-SM slice read as the whole A100 in train-time's 64-GPU estimate).
  const bool mig_unnamed = p.device.is_mig() && p.device.name.find(" MIG ") == std::string::npos;
  std::string label = (p.hostname.empty() ? origin : p.hostname) + " (" + p.device.name +
                      (mig_unnamed ? ", a MIG instance of " + std::to_string(p.device.sm_count) + " SMs" : "") + ")";
  if (const auto note = p.note()) label += " [" + *note + "]";
  return label;
}

std::string ceiling_names(const Profile& p, const std::string& family) {
  std::string out;
  for (const Ceiling& c : p.ceilings)
    if (c.name.rfind(family + ".", 0) == 0) out += (out.empty() ? "" : ", ") + c.name;
  return out.empty() ? "none" : out;
}

void require_positive(double v, const std::string& what) {
  if (std::isinf(v) && v > 0) throw InputError(what + " is too large to compute with (not finite)");
  if (!(v > 0) || !std::isfinite(v)) throw InputError(what + " must be a positive number");
}

// --gpu beside --profile: the datasheet shown beside the measured peak must be the same GPU model's (as
// qualify --baseline refuses another model's). A profile of a GPU the table lacks may take an entry of its SM count
// and compute capability (a GB200 profile beside the H200's 989 TFLOP/s had read as one GPU's two peaks: review
// 33); a MIG instance's none: the datasheet's figures are the whole GPU's, not a slice's (review 21: a 60-SM
// slice's MFU against the whole H200 read about half).
const GpuSpec& datasheet_entry(const std::string& gpu, const Profile* profile) {
  const GpuSpec& s = resolve_gpu(gpu);
  if (profile && profile->device.is_mig())
    throw InputError("--gpu " + gpu + " is the whole " + s.name + "'s datasheet, but the profile measured a MIG "
                     "instance (" + std::to_string(profile->device.sm_count) + " SMs), a slice of a GPU: measured and "
                     "datasheet peaks side by side compare like with like (drop --gpu: a MIG instance has no "
                     "datasheet figure)");
  if (profile)
    if (const GpuSpec* own = find_gpu(profile->device.name); own && own != &s)
      throw InputError("--gpu " + gpu + " is the " + s.name + " datasheet, but the profile measured an " +
                       profile->device.name + ": measured and datasheet peaks side by side compare like with like "
                       "(drop --gpu: the profile's own datasheet is shown)");
  if (profile && !find_gpu(profile->device.name)) {
    const DeviceInfo& d = profile->device;
    const bool sms = s.sm_count > 0 && d.sm_count > 0 && s.sm_count != d.sm_count;
    const bool cc = !s.compute_capability.empty() && !d.compute_capability.empty() &&
                    s.compute_capability != d.compute_capability;
    // The same chip on another board: H100 SXM (80 GB) and the 94 GB board the driver names "NVIDIA H100"
    // (review 97). A device reports a little under its datasheet's binary size (79.6 of 80 GiB).
    const double memory = static_cast<double>(d.memory_bytes);
    if (!sms && !cc && s.memory_bytes > 0 && memory > 0 && std::fabs(memory / s.memory_bytes - 1) > 0.1)
      throw InputError("--gpu " + gpu + " is the " + s.name + " datasheet (" + format_gib(s.memory_bytes) +
                       "), but the profile measured an " + d.name + " with " + format_gib(memory) +
                       ", which the datasheet table does not know: another board's peak is no datasheet of this one "
                       "(give the vendor's figure with --peak-tflops or --peak-bw-gbps)");
    if (sms || cc)
      throw InputError("--gpu " + gpu + " is the " + s.name + " datasheet (" + std::to_string(s.sm_count) +
                       " SMs, compute capability " + s.compute_capability + "), but the profile measured an " +
                       d.name + " (" + std::to_string(d.sm_count) + " SMs, compute capability " +
                       d.compute_capability + "), which the datasheet table does not know: another GPU's peak is no "
                       "datasheet of this one (give the vendor's figure with --peak-tflops or --peak-bw-gbps)");
  }
  return s;
}

}  // namespace

namespace {
constexpr const char* kDatasheetOnlyDtype = "fp4";
}  // namespace

void require_peak_dtype(const std::string& dtype) {
  if (dtype == kDatasheetOnlyDtype) return;
  try {
    gemm::parse_dtype(dtype);
  } catch (const InputError&) {
    throw InputError("unknown data type '" + dtype + "' for a compute peak (valid: " + gemm::dtype_names() + ", and " +
                     kDatasheetOnlyDtype + " from a datasheet, with --gpu)");
  }
}

std::vector<Peak> compute_peaks(const std::optional<double>& given, const Profile* profile, const std::string& origin,
                                const std::optional<std::string>& gpu, const std::string& dtype) {
  require_peak_dtype(dtype);  // a type name even where only a given peak uses it (as a label)
  std::vector<Peak> out;
  if (given) {
    require_positive(*given, "--peak-tflops");
    out.push_back({"given", "given peak", *given});
  }
  if (profile && dtype == kDatasheetOnlyDtype)
    throw InputError("ceilings measures no " + dtype + " GEMM (no benchmark of this build runs one), so profile " +
                     origin + " has no gemm." + dtype + ": drop --profile and use --gpu for the datasheet's " + dtype +
                     " peak, or give one with --peak-tflops and without --dtype");
  if (profile) {
    const std::string name = "gemm." + dtype;
    const Ceiling* c = usable_ceiling(*profile, name, origin);
    if (!c)
      throw InputError("profile " + origin + " has no " + name +
                       " ceiling (its gemm ceilings: " + ceiling_names(*profile, "gemm") + "); pick one with --dtype");
    require_positive(c->value, "the profile's " + name + " value");
    out.push_back({"measured", name + " of " + device_label(*profile, origin), c->value});
    // What the same GEMM keeps up at the power cap, beside the burst rate: a long job's GEMMs run there.
    if (const Ceiling* s = profile->find(name + "_sustained"); s && s->verified && s->value > 0)
      out.push_back({"measured_sustained", s->name + " of " + device_label(*profile, origin), s->value});
  }
  if (gpu) {
    const GpuSpec& s = datasheet_entry(*gpu, profile);
    out.push_back({"datasheet", s.name + " dense " + dtype, datasheet_dense_peak(s, dtype)});
  } else if (profile) {
    const Ceiling* c = profile->find("gemm." + dtype);
    if (auto ds = datasheet_for(*profile, *c)) {
      // The datasheet entry by its own name (an H100 SXM, not PCIe or NVL), as mbu names it.
      const GpuSpec* entry = find_gpu(profile->device.name);
      out.push_back({"datasheet", (entry ? entry->name : profile->device.name) + " dense " + dtype +
                                      (entry ? " (datasheet)" : " (datasheet recorded in the profile)"),
                     *ds});
    }
  }
  if (out.empty()) throw InputError("no peak given: use --profile, --gpu or --peak-tflops");
  return out;
}

std::vector<Peak> bandwidth_peaks(const std::optional<double>& given, const Profile* profile, const std::string& origin,
                                  const std::optional<std::string>& ceiling, const std::optional<std::string>& gpu) {
  std::vector<Peak> out;
  if (given) {
    require_positive(*given, "--peak-bw-gbps");
    out.push_back({"given", "given peak", *given});
  }
  const Ceiling* used = nullptr;
  if (profile) {
    if (ceiling) {
      // Decode reads its weights from where they are stored: HBM, or over PCIe or NVLink when offloaded. A
      // model's weights never sit in the L2 or shared memory, so an MBU against them would mean nothing.
      // Where weights can be stored, named (an allow-list: a family added later, an L1 or another on-chip level,
      // must not pass as a memory MBU can be against: review 35).
      const std::string family = family_of(*ceiling);
      if (!holds_weights(*ceiling))
        throw InputError("--ceiling " + *ceiling + " is not where weights are read from: MBU is against device memory "
                         "(hbm.*), or the host or a peer link for offloaded weights (pcie.* / nvlink.*)" +
                         std::string(is_on_chip(*ceiling) ? " (" + family + " is on-chip bandwidth)" : ""));
      used = usable_ceiling(*profile, *ceiling, origin);
      if (!used) {
        throw InputError("profile " + origin + " has no " + *ceiling + " ceiling (its " + family +
                         " ceilings: " + ceiling_names(*profile, family) + ")");
      }
    } else {
      // The first verified one (one that failed its check is no peak).
      used = default_hbm_ceiling(*profile);
      if (!used) {
        // HBM ceilings the profile names but cannot serve (skipped, failed, unverified) say why: exit 3.
        explain_unusable_family(*profile, "hbm", origin);
        throw InputError("profile " + origin + " has no hbm.* bandwidth ceiling (pick another with --ceiling)");
      }
    }
    if (used->unit != "B/s")
      throw InputError("ceiling " + used->name + " is not a bandwidth (unit " + used->unit + ")");
    require_positive(used->value, "the profile's " + used->name + " value");
    out.push_back({"measured", used->name + " of " + device_label(*profile, origin), used->value});
  }
  // The datasheet figure of the same path as the measured one: HBM bandwidth beside an hbm.* ceiling, the
  // link's rate beside pcie.* or nvlink.* (none where the datasheet has no figure for that path).
  const bool memory_path = !used || used->name.rfind("hbm.", 0) == 0;
  auto datasheet = [&](const GpuSpec& s, const std::string& suffix) {
    if (memory_path) {
      out.push_back({"datasheet", s.name + " memory bandwidth" + suffix, s.memory_bandwidth});
    } else if (const auto v = datasheet_value(s, used->name, used->detail)) {
      out.push_back({"datasheet", s.name + " " + used->name + suffix, *v});
    }
  };
  if (gpu) {
    datasheet(datasheet_entry(*gpu, profile), "");
  } else if (profile) {
    // None for a MIG instance: the datasheet's bandwidth is the whole GPU's (datasheet_for's rule).
    if (const GpuSpec* s = find_gpu(profile->device.name); s && !profile->device.is_mig())
      datasheet(*s, " (datasheet)");
    else if (!s && used)  // a GPU the table does not know: the figure its profile recorded, said to be (as mfu)
      if (const auto v = datasheet_for(*profile, *used))
        out.push_back({"datasheet", profile->device.name + " " + used->name + " (datasheet recorded in the profile)", *v});
  }
  if (out.empty()) throw InputError("no bandwidth peak given: use --profile, --gpu or --peak-bw-gbps");
  return out;
}

MfuResult compute_mfu(const MfuInput& in, const std::vector<Peak>& peaks) {
  require_positive(in.seq, "--seq");
  require_positive(in.tokens_per_s, "the throughput (" + in.throughput_inputs + ")");
  require_positive(in.gpus, "--gpus");
  require_positive(in.shape.matmul_params, "the model's parameter count");
  MfuResult r;
  r.model_flops_per_token = model_flops_per_token(in.shape, in.seq, in.attention);
  r.hardware_flops_per_token = hardware_flops_per_token(in.shape, in.seq, in.attention, in.recompute);
  r.achieved_flops_per_gpu = in.tokens_per_s * r.model_flops_per_token / in.gpus;
  r.achieved_hardware_flops_per_gpu = in.tokens_per_s * r.hardware_flops_per_token / in.gpus;
  r.executed_flops_per_token = executed_flops_per_token(in.shape, in.seq, in.recompute);
  r.achieved_executed_flops_per_gpu = in.tokens_per_s * r.executed_flops_per_token / in.gpus;
  if (!std::isfinite(r.achieved_flops_per_gpu) || !std::isfinite(r.achieved_hardware_flops_per_gpu))
    throw InputError("the model FLOP/s per GPU implied by " + in.throughput_inputs +
                     ", --seq and --gpus are not finite; check their sizes");
  // The model FLOP/s with attention causal: MFU's share of a peak where nothing but the recompute is counted on top.
  const double causal_model_per_gpu =
      in.tokens_per_s * model_flops_per_token(in.shape, in.seq, AttentionConvention::kCausal) / in.gpus;
  for (const Peak& p : peaks) {
    PeakUtilization u{p, r.achieved_flops_per_gpu / p.value, r.achieved_hardware_flops_per_gpu / p.value};
    // The sustained rate is below the burst peak by what the power cap takes: a job whose GEMMs run cooler
    // (communication gaps, smaller power draw) may pass it, so above 100% there is a reading, not an error.
    if (p.source == "measured_sustained") {
      r.peaks.push_back(u);
      continue;
    }
    const double executed = r.achieved_executed_flops_per_gpu / p.value;
    if (causal_model_per_gpu / p.value > 1.0) {
      std::ostringstream os;
      os << "MFU against the " << p.source << " peak (" << p.label << ", " << format_quantity(p.value, "FLOP/s")
         << ") would be " << format_percent(causal_model_per_gpu / p.value)
         << " even with attention counted causal: the model FLOP/s per GPU implied by " << in.throughput_inputs
         << " and --gpus " << in.gpus << " (" << format_quantity(causal_model_per_gpu, "FLOP/s")
         << ") exceed the peak; one of them, the model size, or the peak ("
         << (p.source == "given"      ? "--peak-tflops"
             : p.source == "measured" ? "the profile's ceiling"
                                      : "--gpu / --dtype")
         << ") is wrong";
      throw InputError(os.str());
    }
    if (executed > 1.0) {
      std::ostringstream os;
      os << "the FLOPs the kernels execute (attention causal, the scores a fused attention's backward recomputes, "
         << "--recompute " << recompute_name(in.recompute) << ") would be " << format_percent(executed) << " of the "
         << p.source << " peak (" << p.label << "), while MFU is " << format_percent(causal_model_per_gpu / p.value)
         << " with attention counted causal: the throughput, the recompute setting or the peak is inconsistent";
      throw InputError(os.str());
    }
    if ((u.model > 1.0 || u.hardware > 1.0) && r.note.empty())
      r.note = "MFU or HFU above 100% of the " + p.source + " peak (" + p.label +
               "): the noncausal convention counts the masked half of causal attention, which FlashAttention-style "
               "kernels skip; what they execute (attention causal, the scores their backward recomputes, recompute " +
               recompute_name(in.recompute) + ") is " + format_percent(executed) +
               " of it (--attention causal counts the model FLOPs that way)";
    r.peaks.push_back(u);
  }
  // Far below any training job (they run at 30-60% MFU): said with the reading, which stands (review 108: a per-GPU
  // tokens/s, as torchtitan logs it, read as "MFU 0.9%" without a word).
  if (!r.peaks.empty() && r.peaks.front().model < 0.02 && in.gpus > 1) {
    std::ostringstream os;
    os << "MFU " << format_percent(r.peaks.front().model, 2) << " is far below what training jobs reach: if "
       << in.throughput_inputs << " is one GPU's rate (torchtitan and others log tokens/s per GPU), give the job's, "
       << "that times --gpus " << format_fixed(in.gpus, 0) << " (the throughput is every GPU's together)";
    r.low_note = os.str();
  }
  return r;
}

MbuResult compute_mbu(const MbuInput& in, const std::vector<Peak>& peaks) {
  require_positive(in.tpot_s, "--tpot-ms");
  require_positive(in.gpus, "--gpus");
  if (!std::isfinite(in.weight_bytes))
    throw InputError("the weight bytes per step are too large to compute with (not finite): check the sizes of "
                     "--params or the model, and --batch");
  require_positive(in.weight_bytes, "the weight bytes per step");
  if (in.kv_bytes < 0) throw InputError("the KV bytes per step must not be negative");
  const double kv_split = in.kv_split > 0 ? in.kv_split : in.gpus;
  if (kv_split > in.gpus) throw InputError("the KV cache cannot be split over more GPUs than --gpus");
  MbuResult r;
  r.bytes_per_step = in.weight_bytes + in.kv_bytes;
  if (in.weight_bytes_per_gpu < 0 || in.weight_bytes_per_gpu > in.weight_bytes)
    throw InputError("the weight bytes per GPU must be from 0 to the weight bytes per step");
  r.weight_bytes_per_gpu = in.weight_bytes_per_gpu > 0 ? in.weight_bytes_per_gpu : in.weight_bytes / in.gpus;
  r.bytes_per_step_per_gpu = r.weight_bytes_per_gpu + in.kv_bytes / kv_split;
  r.achieved_bytes_per_s_per_gpu = r.bytes_per_step_per_gpu / in.tpot_s;
  r.achieved_bytes_per_s = r.achieved_bytes_per_s_per_gpu * in.gpus;
  if (!std::isfinite(r.achieved_bytes_per_s_per_gpu))
    throw InputError("the bytes per second implied by the weights, the KV cache and --tpot-ms are not finite; "
                     "check their sizes");
  for (const Peak& p : peaks) {
    PeakUtilization u{p, r.achieved_bytes_per_s_per_gpu / p.value, 0};
    if (u.model > 1.0) {
      std::ostringstream os;
      os << "MBU against the " << p.source << " peak (" << p.label << ", " << format_quantity(p.value, "B/s")
         << ") would be " << format_percent(u.model) << ": " << format_quantity(r.bytes_per_step_per_gpu, "B")
         << " per GPU and step in --tpot-ms " << in.tpot_s * 1e3 << " on --gpus " << in.gpus
         << " is faster than the memory allows; check --tpot-ms, --gpus, the dtypes, --batch/--context, or the peak";
      throw InputError(os.str());
    }
    r.peaks.push_back(u);
  }
  return r;
}

TrainTime training_time(double flops_per_token, double tokens, double gpus, double flops_per_gpu) {
  require_positive(flops_per_token, "the FLOPs per token (--params or the model)");
  require_positive(tokens, "--tokens");
  require_positive(gpus, "--gpus");
  require_positive(flops_per_gpu, "the achieved FLOP/s per GPU");
  TrainTime t;
  t.flops_per_token = flops_per_token;
  t.total_flops = flops_per_token * tokens;
  t.seconds = t.total_flops / (gpus * flops_per_gpu);
  t.days = t.seconds / 86400.0;
  t.gpu_hours = t.seconds * gpus / 3600.0;
  if (!std::isfinite(t.total_flops) || !std::isfinite(t.seconds) || !std::isfinite(t.gpu_hours) || !(t.seconds > 0))
    throw InputError("the model, --tokens, --gpus and the FLOP/s give no finite training time; check their sizes");
  return t;
}

}  // namespace ceilings
