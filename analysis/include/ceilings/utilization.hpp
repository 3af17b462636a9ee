// MFU/HFU, MBU and training-time arithmetic against peaks from several sources side by side: given by
// the user, measured (a profile's gemm.* / hbm.* ceiling) and datasheet. Feeds `ceilings mfu|mbu|train-time`.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ceilings/model.hpp"
#include "ceilings/profile.hpp"
#include "ceilings/specs.hpp"

namespace ceilings {

// One peak a utilization is computed against.
struct Peak {
  std::string source;  // "given" | "measured" | "measured_sustained" | "datasheet"
  std::string label;   // e.g. "gemm.bf16 of node001 (NVIDIA H200)", "H100 SXM dense bf16"
  double value = 0;    // FLOP/s or B/s, per GPU
};

// A compute peak's data type: a GEMM type this build measures (gemm::parse_dtype's), or fp4, which datasheets
// give (Blackwell's FP4 tensor cores) and no benchmark of this build measures: a datasheet or given peak only.
// An unknown name is an InputError listing both.
void require_peak_dtype(const std::string& dtype);

// The compute peaks for data type `dtype`, primary first: given (--peak-tflops), measured (the
// profile's gemm.<dtype>), measured_sustained (its gemm.<dtype>_sustained, where it has one: the rate at the
// power cap, shown beside the burst rate and never checked against 100%), datasheet (--gpu, else the
// profile's device when the table knows it).
// Throws InputError when none is given, or the profile lacks gemm.<dtype>.
std::vector<Peak> compute_peaks(const std::optional<double>& given_flops, const Profile* profile,
                                const std::string& profile_origin, const std::optional<std::string>& gpu,
                                const std::string& dtype);
// The memory bandwidth peaks, same order: given (--peak-bw-gbps), measured (the profile's `ceiling`,
// or hbm.read, else hbm.copy, else any hbm.*), datasheet memory bandwidth.
std::vector<Peak> bandwidth_peaks(const std::optional<double>& given_bytes_per_s, const Profile* profile,
                                  const std::string& profile_origin, const std::optional<std::string>& ceiling,
                                  const std::optional<std::string>& gpu);

struct PeakUtilization {
  Peak peak;
  double model = 0, hardware = 0;  // MFU, HFU (MBU in model; hardware unused)
};

struct MfuInput {
  FlopShape shape;
  double seq = 0;
  double tokens_per_s = 0;  // the whole job's
  double gpus = 0;
  AttentionConvention attention = AttentionConvention::kNonCausal;
  Recompute recompute = Recompute::kNone;
  std::string throughput_inputs;  // how the user gave throughput, to name it in errors
};

struct MfuResult {
  double model_flops_per_token = 0, hardware_flops_per_token = 0;
  double achieved_flops_per_gpu = 0, achieved_hardware_flops_per_gpu = 0;
  // What the job's kernels execute at least (executed_flops_per_token): its hardware FLOPs with attention counted
  // causal (FlashAttention-style kernels skip the masked half) and the scores their backward recomputes, whatever
  // convention MFU is reported in.
  double executed_flops_per_token = 0, achieved_executed_flops_per_gpu = 0;
  std::vector<PeakUtilization> peaks;  // primary first
  // Where the noncausal convention puts MFU or HFU above 100% of a peak the executed FLOPs stay below (a long
  // sequence): why, with the executed share; empty otherwise.
  std::string note;
  // Where MFU against the first peak is below 2% on more than one GPU: the likely slip, a per-GPU throughput given as
  // the job's (torchtitan and others log tokens/s per GPU), with the figure to give instead; empty otherwise.
  std::string low_note;
};
// MFU = achieved model FLOP/s per GPU / peak; HFU likewise with recomputation counted. Executed FLOP/s above a
// peak (the sustained one aside) is an InputError naming the inputs that disagree; MFU or HFU above 100% only by
// the noncausal convention's masked half is a reading, with its note (review 57: 128k-token training at 60% of the
// measured peak had been refused as 102%).
MfuResult compute_mfu(const MfuInput& in, const std::vector<Peak>& peaks);

struct MbuInput {
  double weight_bytes = 0;  // read per decode step
  double kv_bytes = 0;      // KV cache read per decode step (all sequences of the batch)
  double tpot_s = 0;        // time per output token (one decode step)
  double gpus = 1;          // tensor parallel: the weights are spread over this many GPUs
  // The weight bytes one GPU reads per step; 0 = weight_bytes / gpus (the K/V projections of a model with fewer
  // KV heads than GPUs are split less: weight_bytes_per_gpu in model.hpp).
  double weight_bytes_per_gpu = 0;
  // GPUs the KV cache is split over: `gpus` for plain multi-head attention, at most the KV heads for GQA
  // (past that, heads are copied), 1 for MLA (every GPU holds the whole latent cache). 0 = `gpus`.
  double kv_split = 0;
};
struct MbuResult {
  double bytes_per_step = 0;                // model bytes: weights + KV cache, each counted once
  double bytes_per_step_per_gpu = 0;        // what one GPU reads: its weight shard + its KV share
  double weight_bytes_per_gpu = 0;          // its weight shard
  double achieved_bytes_per_s = 0;          // all GPUs together (copied KV heads counted on every GPU)
  double achieved_bytes_per_s_per_gpu = 0;  // bytes_per_step_per_gpu / TPOT
  std::vector<PeakUtilization> peaks;
};
// MBU = (weight bytes per GPU + KV bytes / kv_split) / TPOT / peak bandwidth of one GPU. Every percentage
// above 100% is an InputError naming the inputs that disagree.
MbuResult compute_mbu(const MbuInput& in, const std::vector<Peak>& peaks);

struct TrainTime {
  double flops_per_token = 0;  // FLOPs per trained token the time is computed from
  double total_flops = 0, seconds = 0, days = 0, gpu_hours = 0;
};
// Wall-clock training time F*T/(n*X): F FLOPs per token (k*P in Narayanan et al. 2021 eq. 4, or the
// model/hardware FLOPs per token with attention), T tokens, n GPUs at X FLOP/s each.
TrainTime training_time(double flops_per_token, double tokens, double gpus, double flops_per_gpu);

}  // namespace ceilings
