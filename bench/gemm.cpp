// GEMM ceilings through cuBLASLt, per data type: gemm.<type> (time-budgeted shape search x heuristic
// algorithm search, the best verified FLOP/s), gemm.<type>_ref8192 (the fixed 8192^3 shape, comparable
// across machines) and gemm.<type>_sustained (the best configuration back to back for a window).
// gemm.<type> and _ref8192 are burst rates: after 1 s of idle and 10 ms of warm-up, exactly 5 samples
// (--ceilings_gemm_burst_samples), each after one untimed GEMM. The search's verified finalists (up to six) are first timed again side by side (after
// the same idle), and the fastest of them is the one gemm.<type> measures. _sustained is the rate at the
// power cap. (On the H200 at 700 W the cap acts within tens of milliseconds: a burst's clock and throttle
// telemetry says how much of its window ran capped.)
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ceilings/cli_checks.hpp"
#include "ceilings/gemm_plan.hpp"
#include "ceilings/stats.hpp"
#include "ceilings/timeline.hpp"
#include "harness/gemm_lt.hpp"
#include "harness/measure.hpp"
#include "harness/telemetry.hpp"

namespace ceilings::bench {
namespace {

namespace gp = ::ceilings::gemm;
namespace lt = ::ceilings::bench::gemm;

// Defaults sized so the whole default GEMM pass (8 types x (search + best + 8192^3 + sustained)) takes about
// 8 x (4 + ~2.5 + 3 x 1 cool-down + 15) s, about 3 minutes on an H200; --ceilings_quick took 20.5 s there
// (before the side-by-side re-timing and its cool-down were added: about 8 x 0.3 s more).
struct Flags {
  std::string types, shapes;
  double search_s = 4.0;
  double sustained_s = 15.0;
  double cooldown_s = 1.0;
  double burst_warmup_s = 0.01;
  int burst_preroll = 1;
  int burst_samples = 5;
  int algos = 16;
  int workspace_mib = 64;
  bool fp8_fast_accum = true;
  std::string layout = "tn";
};
Flags g_flags;
CLI::Option* g_search_opt = nullptr;
CLI::Option* g_sustained_opt = nullptr;
CLI::Option* g_algos_opt = nullptr;
CLI::Option* g_cooldown_opt = nullptr;

// What the cases run with, settled once the options and the device are known.
struct Settings {
  std::vector<gp::DType> types;
  std::vector<gp::Shape> shapes;  // empty: generated candidates
  double search_s = 4.0, sustained_s = 15.0;
  double cooldown_s = 1.0, burst_warmup_s = 0.01;
  int burst_preroll = 1;
  int burst_samples = 5;
  int algos = 16;
  std::size_t workspace_bytes = 64u << 20;
  bool fp8_fast_accum = true;
  lt::ALayout layout = lt::ALayout::kTransposed;  // fp8 and int8 stay TN whatever this says
  bool quick = false;
};
Settings g_settings;

// The A layout a type runs with: --ceilings_gemm_layout's where the type takes it, else TN.
lt::ALayout layout_for(gp::DType type) {
  return lt::layout_allowed(type, g_settings.layout) ? g_settings.layout : lt::ALayout::kTransposed;
}

// The fastest verified configuration of each type (the search's, or the 8192^3 reference where that measured
// faster, as gemm.<type> takes it), reused by its sustained case.
struct Best {
  gp::Shape shape;
  cublasLtMatmulAlgo_t algo{};
  double rate = 0;  // FLOP/s (OP/s) measured, 0 before
};
std::map<gp::DType, Best> g_best;

// Every (type, shape) the search re-timed with all its heuristic candidates, with the fastest one that
// verified: the 8192^3 reference reuses it when 8192^3 was one of the search's finalists, instead of timing
// the same candidates again.
std::map<std::pair<gp::DType, std::string>, lt::AlgoChoice> g_picked;

constexpr gp::Shape kRefShape{8192, 8192, 8192};
constexpr std::uint32_t kSeed = 0x51f15eedu;
// Seconds of timing a shape's algorithms after which the rest are left untimed, one always timed (the search's,
// and a shape's own pick where the search did not time it). No shape of the H200 comes near it (its whole fp64 search, 19 shapes
// screened and 5 re-timed, 102 algorithm timings, took 3.7 s); a GPU with FP64 at 1/64 of FP32 (L4, A10, A40:
// about 0.5 TFLOP/s, 2.4 s a DGEMM at 8192^3) would otherwise spend minutes timing every one.
constexpr double kAlgoTimeLimit_s = 4.0;

template <class Parse>
std::function<std::string(const std::string&)> validator(Parse parse) {
  return [parse](const std::string& v) -> std::string {
    try {
      parse(v);
      return "";
    } catch (const std::exception& e) {
      return e.what();
    }
  };
}

void add_options(CLI::App& app) {
  app.add_option("--ceilings_gemm_types", g_flags.types,
                 "GEMM data types, comma-separated (default: all): " + gp::dtype_names())
      ->check(validator([](const std::string& v) { gp::parse_dtype_list(v); }));
  app.add_option("--ceilings_gemm_shapes", g_flags.shapes,
                 "GEMM shapes MxNxK, comma-separated, instead of the generated search candidates")
      ->check(validator([](const std::string& v) { gp::parse_shape_list(v); }));
  g_search_opt = app.add_option("--ceilings_gemm_search_s", g_flags.search_s,
                                "Shape-search budget per data type, seconds (default 4; 0.5 with --ceilings_quick)")
                     ->check(ceilings::cli::number_in(0.0, 3600.0));
  g_sustained_opt = app.add_option("--ceilings_gemm_sustained_s", g_flags.sustained_s,
                                   "Sustained window per data type, seconds (default 15; 1 with --ceilings_quick; "
                                   "0 disables gemm.<type>_sustained; else at least 0.25, a window of 5 chunks)")
                        ->check(ceilings::cli::number_in(0.0, 3600.0))
                        // A window shorter than a few 50 ms chunks is one chunk: one sample, which no profile takes
                        // (review 98: 0.001 s failed every gemm.<type>_sustained).
                        ->check(validator([](const std::string& v) {
                          errno = 0;
                          const double s = std::strtod(v.c_str(), nullptr);
                          // 1e-400 reads as 0 (an underflow, ERANGE): not the 0 that switches the windows off
                          if ((s > 0 && s < 0.25) || (s == 0 && errno == ERANGE))
                            throw std::invalid_argument("a sustained window of " + v +
                                                        " s is shorter than 0.25 s (5 chunks of 50 ms): give 0 to "
                                                        "leave gemm.<type>_sustained out, or at least 0.25");
                        }));
  g_algos_opt = app.add_option("--ceilings_gemm_algos", g_flags.algos,
                               "cuBLASLt heuristic candidates timed per re-timed shape of the search (default 16; 4 "
                               "with --ceilings_quick); the screening of every shape uses a quarter, at least 2")
                    ->check(ceilings::cli::number_in(1, 64));
  g_cooldown_opt =
      app.add_option("--ceilings_gemm_cooldown_s", g_flags.cooldown_s,
                     "Idle seconds before gemm.<type> and gemm.<type>_ref8192 are timed, so they are burst rates "
                     "from a GPU whose power controller has recovered from the search (default 1; 0.25 with "
                     "--ceilings_quick; 0 times them hot, as the search left the card)")
          ->check(ceilings::cli::number_in(0.0, 60.0));
  app.add_option("--ceilings_gemm_burst_warmup_s", g_flags.burst_warmup_s,
                 "Warm-up of gemm.<type> and gemm.<type>_ref8192 after the cool-down: at least one one-GEMM "
                 "sample (each after its pre-roll) and this long, seconds (default 0.01; the harness's usual warm-up is "
                 "0.05, long enough for a power cap to act before the samples)")
      ->check(ceilings::cli::number_in(0.0, 10.0));
  app.add_option("--ceilings_gemm_burst_preroll", g_flags.burst_preroll,
                 "GEMMs each sample of gemm.<type> and gemm.<type>_ref8192 runs untimed before its timed ones, so "
                 "those start on a busy GPU (default 1; 0 times every GEMM of a sample)")
      ->check(ceilings::cli::number_in(0, 100));
  app.add_option("--ceilings_gemm_burst_samples", g_flags.burst_samples,
                 "Samples gemm.<type> and gemm.<type>_ref8192 take, whatever their spread (default 5, at most "
                 "--ceilings_min_samples; the cv says how much they differ: taking more while the rate drifts "
                 "would time the power cap, not the burst)")
      ->check(ceilings::cli::number_in(3, 1000));
  app.add_option("--ceilings_gemm_workspace_mib", g_flags.workspace_mib, "cuBLASLt workspace, MiB (default 64)")
      ->check(ceilings::cli::number_in(0, 4096));
  app.add_option("--ceilings_gemm_fp8_fast_accum", g_flags.fp8_fast_accum,
                 "fp8 fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM; default true)");
  app.add_option("--ceilings_gemm_layout", g_flags.layout,
                 "How A is stored: tn (A transposed, K x M; the default, and the only layout fp8 and int8 take) "
                 "or nn (M x K, as a row-major framework's A @ B reaches cuBLAS; fp8 and int8 stay tn)")
      ->check(CLI::IsMember({"tn", "nn"}));
}

std::size_t usable_memory(std::size_t workspace_bytes) {
  std::size_t free_b = 0, total_b = 0;
  CEILINGS_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  // Leave a fifth to the runtime and cuBLASLt's own allocations.
  const std::size_t usable = static_cast<std::size_t>(0.8 * static_cast<double>(free_b));
  return usable > workspace_bytes ? usable - workspace_bytes : 0;
}

std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

struct Extra {
  std::map<std::string, double> counters;
  std::string label;
};

// The shape and the cuBLASLt algorithm configuration, as counters in the ceiling's detail.
void record_config(benchmark::State& state, const gp::Shape& shape, const lt::AlgoInfo& a) {
  auto& c = state.counters;
  c["m"] = static_cast<double>(shape.m);
  c["n"] = static_cast<double>(shape.n);
  c["k"] = static_cast<double>(shape.k);
  c["algo_id"] = a.id;
  c["tile_id"] = a.tile;
  c["stages_id"] = a.stages;
  c["splitk"] = a.splitk;
  c["reduction_scheme"] = a.reduction;
  c["cta_swizzling"] = a.swizzle;
  c["custom_option"] = a.custom;
  c["cluster_shape_id"] = a.cluster;
  // Exact in a double: the flags use bits 0-39 (CUBLASLT_NUMERICAL_IMPL_FLAGS_*).
  c["numerical_impl_flags"] = static_cast<double>(a.impl_flags);
}

// Measures one (type, shape) with the given algorithm (or the fastest heuristic candidate that verifies), verifies the
// last timed GEMM's output, and reports; returns the configuration with its measured rate (a failed
// verification throws).
Best measure_config(benchmark::State& state, gp::DType type, const gp::Shape& shape, const cublasLtMatmulAlgo_t* algo,
                    const Extra& extra) {
  const Context& ctx = context();
  const gp::DTypeInfo& info = gp::dtype_info(type);
  const Settings& g = g_settings;
  // The budget before this workspace is taken, as the search's and the sustained run's are (review 98: counted
  // after, the workspace came off twice, and a shape the search fitted could fail here).
  const std::size_t budget = usable_memory(g.workspace_bytes);
  Stream stream;
  DeviceBuffer<std::uint8_t> workspace(g.workspace_bytes);
  const int sets = gp::rotation_sets(shape, info, ctx.l2_bytes, budget);
  if (sets == 0) throw std::runtime_error(gp::shape_problem(shape, info, budget));
  lt::Problem p(type, shape, g.fp8_fast_accum, layout_for(type));
  lt::Operands ops(p, sets, kSeed, stream.get());
  lt::AlgoChoice choice;
  if (algo) {
    choice.algo = *algo;
  } else {
    // The fastest candidate that verifies (a faster one that fails is named in the label).
    choice = lt::pick_verified_algo(p, ops, g.algos, workspace.get(), workspace.bytes(), stream.get(),
                                    kAlgoTimeLimit_s);
  }
  int next = 0, last = 0;
  MeasureSpec spec;
  // C is poisoned before every sample (outside its timed region): the check after the run reads what the last
  // sample's GEMMs wrote, not what the search, the first unit or the warm-up left there.
  spec.before_sample = [&](cudaStream_t s) { ops.poison_c(s); };
  // A burst rate: the card idles first (the search before this ran it at its power cap), then a short
  // warm-up (one-GEMM samples for g.burst_warmup_s, at least one), then g.burst_samples samples. On the H200 the power cap
  // acts within tens of milliseconds: with 10 samples the bursts' clocks fell to 1.5-1.6 GHz within their
  // 0.1 s windows. The samples are a fixed number, not "until they agree": bursts that took more samples
  // while their cv stayed above 0.5% ran into the cap (2026-11-30, H200: fp64 11 samples over 108 ms, cv
  // 4.8%, median 56.8 TFLOP/s where the same configuration timed side by side read 61.2; fp16 23 samples,
  // cv 6.1%, 776 against 790), so their median measured the cap, not the burst. Bursts whose telemetry read 1.98 GHz
  // and no throttle (fp16, fp8, tf32) still ran 5-10% below the search's timings of the same
  // configuration (3-30 GEMMs back to back after an untimed one), where each burst sample began on an idle
  // GPU (the blocking kernel) and their instantaneous power read as low as 232 W (fp16), as if the
  // idle-to-busy step cost 0.1-0.3 ms a sample (inferred from the deficits and the sample lengths, not
  // measured). So a sample's first g.burst_preroll GEMMs run untimed, and the warm-up is shorter than the
  // harness's 50 ms: with both (and 5 samples instead of at least 10) the same 8192^3 configurations read
  // bf16, fp16 and fp8_e4m3 at 815, 780 and 1540 TFLOP/s where the old timing read 727, 693 and 1308
  // (H200, 2026-11-30, device-check.sh --gemm-ab).
  // What the same configuration keeps up at the cap is gemm.<type>_sustained.
  spec.cooldown_s = g.cooldown_s;
  spec.warmup_s = g.burst_warmup_s;
  // Not the harness's 3 units: with each sample's pre-roll GEMM, 3 samples of a 4.6 ms DGEMM (fp64's pick on
  // the H200) ran 28 ms at full power before the first timed one, and an 18 ms one (8192^3) 110 ms, well into
  // the power cap this burst is to stay out of; now 2 samples (18 ms: the 10 ms is not over after one) and 1
  // (36 ms). The unblocked first unit has loaded the modules already, and the cool-down has let the power
  // controller recover (review 27; not yet run on a GPU).
  spec.min_warmup_units = 1;
  // With one input set (a shape two sets of which do not fit) the pre-roll would write C as the timed GEMM does,
  // after C was poisoned: a timed GEMM that wrote nothing would verify. No pre-roll there (review 85).
  const int preroll = sets > 1 ? g.burst_preroll : 0;
  spec.preroll_units = preroll;
  // Exactly this many (the run's --ceilings_min_samples caps it, as for every case).
  const int samples = std::min(g.burst_samples, context().options.min_samples);
  spec.min_samples = samples;
  spec.max_samples = samples;
  spec.work = [&](cudaStream_t s) {
    last = next;
    next = (next + 1) % sets;
    CEILINGS_CUBLAS_CHECK(p.run(choice.algo, ops.a(last), ops.b(last), ops.c(), workspace.get(), workspace.bytes(), s));
  };
  const Measurement m = run_measurement(state, stream.get(), spec);
  CEILINGS_LAUNCH_CHECK();
  stream.sync();
  const lt::Verification v = lt::verify(p, ops, last, stream.get());

  const lt::AlgoInfo a = lt::algo_info(choice.algo);
  record_config(state, shape, a);
  auto& c = state.counters;
  c["rotation_sets"] = sets;
  c["rotation_bytes"] = static_cast<double>(sets) * static_cast<double>(gp::input_set_bytes(shape, info));
  c["a_transposed"] = p.a_layout() == lt::ALayout::kTransposed ? 1 : 0;
  c["workspace_bytes"] = static_cast<double>(g.workspace_bytes);
  c["cooldown_s"] = g.cooldown_s;
  c["burst_warmup_s"] = g.burst_warmup_s;
  c["burst_warmup_min_units"] = spec.min_warmup_units;
  c["burst_preroll_units"] = preroll;
  // The count the measurement ran with (the run's --ceilings_min_samples caps it).
  c["burst_samples"] = samples;
  if (choice.tried) c["algos_tried"] = choice.tried;
  if (choice.left_untimed) c["algos_untimed"] = choice.left_untimed;
  if (choice.rejected) c["verify_rejected"] = choice.rejected;
  c["verified_elements"] = v.checked;
  c["verify_worst_error_ratio"] = v.worst_ratio;
  if (type == gp::DType::kFp8E4m3 || type == gp::DType::kFp8E5m2) c["fp8_fast_accum"] = p.fast_accum() ? 1 : 0;
  for (const auto& [k, val] : extra.counters) c[k] = val;
  std::ostringstream label;
  label << gp::to_string(shape) << " " << lt::layout_name(p.a_layout()) << "; A,B " << info.inputs << " -> " << info.output << "; " << info.compute << "; "
        << a.describe();
  if (!extra.label.empty()) label << "; " << extra.label;
  if (!choice.note.empty()) label << "; " << choice.note;
  state.SetLabel(label.str());
  report(state, m, info.integer ? Amount::kOps : Amount::kFlops, gp::gemm_flops(shape), v.ok, v.detail);
  return {shape, choice.algo, gp::gemm_flops(shape) / m.median_s};
}

void check_type(gp::DType type) {
  const std::string why = lt::type_unsupported_reason(type, context().prop);
  if (!why.empty()) unsupported(why);
}

// The search's split of its budget: screening every shape it can with a few algorithms gets this share, the
// best few shapes re-timed with every algorithm (and verified) the rest.
constexpr double kScreenShare = 2.0 / 3.0;
constexpr std::size_t kFinalists = 6;  // re-timed with every algorithm while the budget lasts

// Before a search's clock starts: the process's first cuBLASLt calls, the type's first heuristic query and the
// lazy loads of the fill and GEMM kernels, then about 50 ms of GEMMs so the clocks have left idle. Otherwise
// that one-time cost counts in the first screened shape's seconds per FLOP, and the budget (--quick's most
// of all) stops the screening early. Failures are left to the search, which reports them.
void warm_up(gp::DType type, const DeviceBuffer<std::uint8_t>& workspace, cudaStream_t stream) {
  try {
    lt::Problem p(type, gp::Shape{2048, 2048, 2048}, g_settings.fp8_fast_accum, layout_for(type));
    lt::Operands ops(p, 1, kSeed, stream);
    const auto algos = p.heuristic(1, workspace.bytes(), nullptr);
    if (algos.empty()) return;
    const double one = lt::time_algo(p, ops, algos.front(), workspace.get(), workspace.bytes(), 2, stream);
    if (!std::isfinite(one) || one <= 0) return;
    lt::time_algo(p, ops, algos.front(), workspace.get(), workspace.bytes(),
                  std::clamp(static_cast<int>(0.05 / one), 1, 2000), stream);
  } catch (const std::exception&) {
  }
  (void)cudaGetLastError();
}

// A verified finalist of the search: its shape, its fastest verified algorithm and the search's timing of it.
struct Contender {
  gp::Shape shape;
  cublasLtMatmulAlgo_t algo{};
  double seconds = 0;  // per GEMM, in the search
  double rate() const { return seconds > 0 ? gp::gemm_flops(shape) / seconds : 0.0; }
};
// Every verified finalist is timed again side by side: the search ranks them at the power cap, and that order is
// not the rested one (H200 fp64: the search's #1 and #2 read 56.6 and 61.2 side by side; fp16 774.9 and 790.3),
// so one ranked 4th to 6th at the cap may be the fastest rested. Each adds a round, and a slot in every round,
// of about 5 ms.
constexpr std::size_t kContenders = kFinalists;
constexpr std::size_t kRerankLeastRounds = 3;
constexpr double kRerankTiming_s = 5e-3;  // seconds of GEMMs per contender per round

// The search timed its shapes one after another at whatever clock the power cap left (its first ones
// cooler than its last), so its order can pick a configuration that is not the fastest from a rested card.
// The contenders (fastest first) are timed again side by side: after the bursts' cool-down, rounds of about 5 ms
// of GEMMs each, every contender taking every slot equally often (gp::rerank_order over gp::rerank_rounds: with
// 6 contenders and 3 rounds the search's #1 would sit 5 slots later than its #2 in its median round); the
// highest rate (FLOPs over the median seconds per GEMM: the contenders are different shapes) wins. A contender
// whose operands do not fit its share of the memory is left out, not the whole re-timing. Returns the winner's
// index into `cs` (0, the search's fastest, when they cannot be compared) and records the side-by-side rates in
// `extra` (rerank_rate_<i>, i as in the search's order; none for one left out), with each one's slowest and
// fastest round (rerank_min_rate_<i>, rerank_max_rate_<i>): a contender far faster in one round than in another
// was ranked by where its rounds fell against the power cap, not by its configuration.
std::size_t rerank(gp::DType type, const std::vector<Contender>& cs, const DeviceBuffer<std::uint8_t>& workspace,
                   cudaStream_t stream, Extra& extra) {
  if (cs.size() < 2) return 0;
  extra.counters["rerank_contenders"] = static_cast<double>(cs.size());
  const gp::DTypeInfo& info = gp::dtype_info(type);
  const Settings& g = g_settings;
  struct Setup {
    std::size_t index = 0;  // into cs
    std::unique_ptr<lt::Problem> p;
    std::unique_ptr<lt::Operands> ops;
    int reps = 1;
  };
  std::vector<Setup> setups;
  std::string left_out;
  try {
    // Every contender's operands at once: a share of the memory each.
    // The search's workspace is taken already (it is `workspace`): not counted off again (review 100).
    const std::size_t budget = usable_memory(0) / cs.size();
    for (std::size_t i = 0; i < cs.size(); ++i) {
      const Contender& c = cs[i];
      const int sets = gp::rotation_sets(c.shape, info, context().l2_bytes, budget);
      if (sets == 0) {
        left_out += (left_out.empty() ? "" : "; ") + ("#" + std::to_string(i + 1) + " " + gp::to_string(c.shape)) +
                    ": " + gp::shape_problem(c.shape, info, budget);
        continue;
      }
      Setup su;
      su.index = i;
      su.p = std::make_unique<lt::Problem>(type, c.shape, g.fp8_fast_accum, layout_for(type));
      su.ops = std::make_unique<lt::Operands>(*su.p, sets, kSeed, stream);
      su.reps = std::clamp(static_cast<int>(std::ceil(kRerankTiming_s / std::max(c.seconds, 1e-7))), 2, 30);
      setups.push_back(std::move(su));
    }
  } catch (const std::exception& e) {
    extra.label = std::string("the search's fastest kept: its best ") + std::to_string(cs.size()) +
                  " could not be set up side by side (" + e.what() + ")";
    (void)cudaGetLastError();
    return 0;
  }
  if (!left_out.empty()) extra.counters["rerank_left_out"] = static_cast<double>(cs.size() - setups.size());
  // The search's fastest must be among them: the others could only be measured in its place unchecked.
  if (setups.empty() || setups.front().index != 0) {
    extra.label = "the search's fastest kept: it does not fit its share of the memory side by side (" + left_out + ")";
    return 0;
  }
  if (setups.size() < 2) {
    extra.label = "the search's fastest kept: too few of its best " + std::to_string(cs.size()) +
                  " fit side by side (" + left_out + ")";
    return 0;
  }
  CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (g.cooldown_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(g.cooldown_s));
  std::vector<std::vector<double>> seconds(setups.size());
  const std::size_t rounds = gp::rerank_rounds(setups.size(), kRerankLeastRounds);
  for (std::size_t round = 0; round < rounds; ++round)
    for (std::size_t k : gp::rerank_order(setups.size(), round)) {
      const Setup& su = setups[k];
      seconds[k].push_back(lt::time_algo(*su.p, *su.ops, cs[su.index].algo, workspace.get(), workspace.bytes(),
                                         su.reps, stream));
    }
  std::vector<double> flops;
  for (const Setup& su : setups) flops.push_back(gp::gemm_flops(cs[su.index].shape));
  const std::size_t best = gp::rerank_winner(seconds, flops);
  std::ostringstream rates;
  rates << std::fixed << std::setprecision(1);
  for (std::size_t k = 0; k < setups.size(); ++k) {
    const double med = median(seconds[k]);
    const double rate = std::isfinite(med) && med > 0 ? flops[k] / med : 0.0;
    const std::string i = std::to_string(setups[k].index + 1);
    extra.counters["rerank_rate_" + i] = rate;
    const auto [fastest, slowest] = std::minmax_element(seconds[k].begin(), seconds[k].end());
    if (std::isfinite(*slowest) && *fastest > 0) {
      extra.counters["rerank_min_rate_" + i] = flops[k] / *slowest;
      extra.counters["rerank_max_rate_" + i] = flops[k] / *fastest;
    }
    rates << (k ? ", " : "") << gp::to_string(cs[setups[k].index].shape) << " " << rate / 1e12;
  }
  if (best == setups.size()) {
    extra.label = "the search's fastest kept: a side-by-side timing of its best " + std::to_string(cs.size()) + " failed";
    return 0;
  }
  const std::size_t winner = setups[best].index;
  extra.counters["rerank_pick"] = static_cast<double>(winner + 1);
  extra.label = "its best " + std::to_string(setups.size()) + " timed again side by side (" +
                (info.integer ? "TOP/s" : "TFLOP/s") + "): " + rates.str() +
                (left_out.empty() ? std::string() : " (left out: " + left_out + ")") + "; the " +
                (winner == 0 ? std::string("first") : "search's #" + std::to_string(winner + 1)) + " measured";
  return winner;
}

// gemm.<type>: screen the candidate shapes with a few heuristic algorithms each until the screening share of
// the budget is spent, re-time the fastest few shapes with every algorithm, keep the fastest (shape,
// algorithm) that verifies, then measure it properly.
void run_search(benchmark::State& state, gp::DType type) {
  guarded(state, [&] {
    check_type(type);
    const Context& ctx = context();
    const gp::DTypeInfo& info = gp::dtype_info(type);
    const Settings& g = g_settings;
    const std::size_t budget = usable_memory(g.workspace_bytes);
    std::vector<gp::Shape> candidates;
    if (!g.shapes.empty()) {
      std::string problems;
      for (const gp::Shape& s : g.shapes) {
        const std::string why = gp::shape_problem(s, info, budget);
        if (why.empty())
          candidates.push_back(s);
        else
          problems += (problems.empty() ? "" : "; ") + why;
      }
      if (candidates.empty())
        throw std::runtime_error("no --ceilings_gemm_shapes entry can run as " + std::string(info.name) + ": " + problems);
    } else {
      gp::ShapeSearchParams sp;
      sp.sm_count = ctx.prop.multiProcessorCount;
      sp.memory_bytes = budget;
      sp.dim_scales = gp::search_dim_scales(type);
      if (g.quick) sp.max_candidates = 8;
      candidates = gp::shape_candidates(sp, info);
      if (candidates.empty()) unsupported("no search shape fits in " + std::to_string(budget >> 20) + " MiB");
    }

    Stream stream;
    DeviceBuffer<std::uint8_t> workspace(g.workspace_bytes);
    warm_up(type, workspace, stream.get());
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    auto since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
    std::string skip_reason, first_error;
    int errors = 0;
    auto failed = [&](const std::string& what) {
      if (what.rfind("unsupported:", 0) == 0) {
        skip_reason = what;
        return;
      }
      ++errors;
      if (first_error.empty()) first_error = what;
    };

    // Screening: every shape the budget allows, with the heuristic's first few algorithms.
    const int screen = gp::screening_algos(g.algos);
    std::vector<double> rates(candidates.size(), 0.0);
    int attempts = 0, screened = 0, algos_tried = 0, algos_untimed = 0;
    double spent_s = 0, spent_flops = 0;  // what the shapes so far cost, to predict the next one
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const gp::Shape& s = candidates[i];
      const double cost = spent_flops > 0 ? spent_s / spent_flops : 0.0;
      if (!gp::search_should_try(since(start), kScreenShare * g.search_s, cost, gp::gemm_flops(s), attempts)) continue;
      ++attempts;
      const auto t0 = clock::now();
      try {
        const int sets = gp::rotation_sets(s, info, ctx.l2_bytes, budget);
        if (sets == 0) unsupported(gp::shape_problem(s, info, budget));
        lt::Problem p(type, s, g.fp8_fast_accum, layout_for(type));
        lt::Operands ops(p, sets, kSeed, stream.get());
        const lt::AlgoChoice c =
            lt::pick_algo(p, ops, screen, workspace.get(), workspace.bytes(), stream.get(), kAlgoTimeLimit_s);
        ++screened;
        algos_tried += c.tried;
        algos_untimed += c.left_untimed;
        rates[i] = gp::gemm_flops(s) / c.seconds;
      } catch (const std::exception& e) {
        failed(e.what());
      }
      // Every attempt counts, a failed one too: its setup took time.
      spent_s += since(t0);
      spent_flops += gp::gemm_flops(s);
    }

    // The fastest few shapes with every algorithm, each verified (fastest algorithm first) before it counts.
    const std::vector<std::size_t> finals = gp::finalists(rates, kFinalists);
    if (finals.empty()) {
      if (!first_error.empty()) throw std::runtime_error("no " + std::string(info.name) + " GEMM shape ran: " + first_error);
      throw std::runtime_error(skip_reason.empty() ? "unsupported: no shape could be set up" : skip_reason);
    }
    double final_s = 0, final_flops = 0;
    std::vector<Contender> verified;  // every finalist that verified, with its fastest verified algorithm
    int retimed = 0, rejected = 0, unverified = 0;
    std::string note, final_error;
    for (std::size_t idx : finals) {
      const gp::Shape& s = candidates[idx];
      // Every finalist until one has verified; after that the next ones while the budget lasts, predicted from
      // the seconds per FLOP of the finalists so far (each re-timed with every algorithm).
      if (!verified.empty() &&
          !gp::search_should_try(since(start), g.search_s, final_s / final_flops, gp::gemm_flops(s), retimed))
        continue;
      ++retimed;
      const auto t0 = clock::now();
      try {
        const int sets = gp::rotation_sets(s, info, ctx.l2_bytes, budget);
        if (sets == 0) unsupported(gp::shape_problem(s, info, budget));
        lt::Problem p(type, s, g.fp8_fast_accum, layout_for(type));
        lt::Operands ops(p, sets, kSeed, stream.get());
        lt::AlgoChoice c =
            lt::pick_algo(p, ops, g.algos, workspace.get(), workspace.bytes(), stream.get(), kAlgoTimeLimit_s);
        algos_tried += c.tried;
        algos_untimed += c.left_untimed;
        // Throws when none of the shape's algorithms verifies: the shape is dropped (counted below).
        lt::keep_fastest_verified(c, p, ops, workspace.get(), workspace.bytes(), stream.get());
        rejected += c.rejected;
        if (note.empty()) note = c.note;
        g_picked[{type, gp::to_string(s)}] = c;
        verified.push_back({s, c.algo, c.seconds});
      } catch (const std::exception& e) {
        const std::string what = e.what();
        if (what.rfind("unsupported:", 0) != 0) {
          ++unverified;
          if (final_error.empty()) final_error = what;
        }
        failed(what);
      }
      final_s += since(t0);
      final_flops += gp::gemm_flops(s);
    }
    if (verified.empty())
      throw std::runtime_error("no " + std::string(info.name) + " GEMM configuration verified: " +
                               (!final_error.empty() ? final_error : !skip_reason.empty() ? skip_reason : first_error));
    // Fastest first, as the search timed them (ties: the order they were re-timed in).
    std::stable_sort(verified.begin(), verified.end(),
                     [](const Contender& a, const Contender& b) { return a.rate() > b.rate(); });
    const std::size_t verified_count = verified.size();
    if (verified.size() > kContenders) verified.resize(kContenders);
    const double search_s = since(start);
    Extra extra;
    const Contender& pick = verified[rerank(type, verified, workspace, stream.get(), extra)];
    extra.counters["shapes_tried"] = screened;
    extra.counters["shape_candidates"] = static_cast<double>(candidates.size());
    extra.counters["screen_algos"] = screen;
    extra.counters["finalists"] = retimed;
    extra.counters["finalists_verified"] = static_cast<double>(verified_count);
    extra.counters["search_algos_tried"] = algos_tried;
    if (algos_untimed) extra.counters["search_algos_untimed"] = algos_untimed;
    extra.counters["search_rate"] = pick.rate();  // the search's timing of the configuration measured
    extra.counters["search_s"] = search_s;
    if (rejected) extra.counters["verify_rejected"] = rejected;
    if (errors) extra.counters["search_errors"] = errors;
    if (unverified) extra.counters["finalists_dropped"] = unverified;
    std::ostringstream label;
    label << "best of " << screened << " shapes screened with up to " << screen << " algorithms, " << retimed
          << " re-timed with up to " << g.algos << " and verified";
    if (algos_untimed)
      label << "; " << algos_untimed << " heuristic algorithm(s) left untimed, past " << kAlgoTimeLimit_s
            << " s of timing a shape's";
    if (rejected) label << "; verification rejected " << rejected << " faster candidate(s), the first: " << note;
    if (errors) label << "; " << errors << " search attempt(s) failed, the first: " << first_error;
    if (unverified) label << "; " << unverified << " finalist shape(s) dropped, the first: " << final_error;
    if (!extra.label.empty()) label << "; " << extra.label;
    extra.label = label.str();
    workspace = DeviceBuffer<std::uint8_t>();  // measure_config takes its own: the memory the search had
    g_best[type] = measure_config(state, type, pick.shape, &pick.algo, extra);
  });
}

// gemm.<type>_ref8192: the fixed shape, its fastest heuristic algorithm that verifies (as the search timed
// them when 8192^3 was one of its finalists, else timed here).
void run_reference(benchmark::State& state, gp::DType type) {
  guarded(state, [&] {
    check_type(type);
    const std::string why =
        gp::shape_problem(kRefShape, gp::dtype_info(type), usable_memory(g_settings.workspace_bytes));
    if (!why.empty()) unsupported(why);
    // Measured faster than the search's choice, this is gemm.<type> (bench_json takes the faster) and what
    // the sustained window runs.
    auto keep_if_faster = [&](const Best& ref) {
      const auto best = g_best.find(type);
      if (best != g_best.end() && ref.rate > best->second.rate) best->second = ref;
    };
    const auto picked = g_picked.find({type, gp::to_string(kRefShape)});
    if (picked == g_picked.end()) {
      keep_if_faster(measure_config(state, type, kRefShape, nullptr, Extra{}));
      return;
    }
    Extra extra;
    extra.counters["algos_tried"] = picked->second.tried;
    if (picked->second.left_untimed) extra.counters["algos_untimed"] = picked->second.left_untimed;
    if (picked->second.rejected) extra.counters["verify_rejected"] = picked->second.rejected;
    extra.label = "fastest verified of " + std::to_string(picked->second.tried) + " heuristic algorithms in the search";
    if (picked->second.left_untimed)
      extra.label += " (" + std::to_string(picked->second.left_untimed) + " more left untimed, past " +
                     number(kAlgoTimeLimit_s) + " s of timing)";
    if (!picked->second.note.empty()) extra.label += "; " + picked->second.note;
    keep_if_faster(measure_config(state, type, kRefShape, &picked->second.algo, extra));
  });
}

// A sustained run: its measurement, and when each chunk was seen done and the telemetry readings, for
// the time series.
struct Sustained {
  Measurement m;
  std::vector<double> chunk_end_s;  // host time each chunk was seen done, s since the window began
  std::vector<TimedReading> readings;
};

// Runs `work` back to back for `window_s`: chunks of about 50 ms timed by events recorded between them,
// several chunks kept queued so the GPU never idles while the host reads a timing. The host waits on
// the oldest queued chunk, so it sees each one finish as it does.
Sustained sustain(cudaStream_t stream, const Enqueue& work, double window_s, double unit_estimate_s) {
  constexpr int kRing = 8, kAhead = 3;
  Sustained out;
  Measurement& m = out.m;
  const int units = std::clamp(static_cast<int>(std::ceil(0.05 / std::max(unit_estimate_s, 1e-7))), 1, 100000);
  m.units_per_sample = units;
  std::vector<cudaEvent_t> ev(kRing, nullptr);
  struct Cleanup {  // before the events are made: one that fails leaves those made before it destroyed
    std::vector<cudaEvent_t>& ev;
    ~Cleanup() {
      for (auto& e : ev)
        if (e) cudaEventDestroy(e);
    }
  } cleanup{ev};
  for (auto& e : ev) CEILINGS_CUDA_CHECK(cudaEventCreate(&e));
  TelemetrySampler telemetry(context().nvml, 0.02, TelemetrySampler::Energy::kFollow);
  telemetry.start();
  const auto start = telemetry.started();  // chunk ends and telemetry readings on one clock, one zero
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  long long launched = 0, completed = 0;
  CEILINGS_CUDA_CHECK(cudaEventRecord(ev[0], stream));
  while (true) {
    while (launched - completed < kAhead && (launched == 0 || elapsed() < window_s)) {
      for (int u = 0; u < units; ++u) work(stream);
      m.total_units += units;
      CEILINGS_CUDA_CHECK(cudaEventRecord(ev[static_cast<std::size_t>((launched + 1) % kRing)], stream));
      ++launched;
    }
    if (completed == launched) break;
    cudaEvent_t from = ev[static_cast<std::size_t>(completed % kRing)];
    cudaEvent_t to = ev[static_cast<std::size_t>((completed + 1) % kRing)];
    CEILINGS_CUDA_CHECK(cudaEventSynchronize(to));
    float ms = 0;
    CEILINGS_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
    m.unit_seconds.push_back(ms * 1e-3 / units);
    out.chunk_end_s.push_back(elapsed());
    ++completed;
  }
  m.stopped_by = SamplingStop::kWindow;
  m.telemetry = telemetry.stop();
  out.readings = telemetry.timed_readings();
  m.median_s = median(m.unit_seconds);
  m.cv = coefficient_of_variation(m.unit_seconds);
  return out;
}

// gemm.<type>_sustained: the configuration gemm.<type> measured (the search's best, or 8192^3 where that measured
// faster; 8192^3 with its fastest verified algorithm when the search did not run) back to back for the window;
// clocks and power over the window come with it.
void run_sustained(benchmark::State& state, gp::DType type) {
  guarded(state, [&] {
    check_type(type);
    const Context& ctx = context();
    const gp::DTypeInfo& info = gp::dtype_info(type);
    const Settings& g = g_settings;
    const auto found = g_best.find(type);
    const gp::Shape shape = found != g_best.end() ? found->second.shape : kRefShape;
    const std::size_t budget = usable_memory(g.workspace_bytes);
    const int sets = gp::rotation_sets(shape, info, ctx.l2_bytes, budget);
    if (sets == 0) unsupported(gp::shape_problem(shape, info, budget));
    Stream stream;
    DeviceBuffer<std::uint8_t> workspace(g.workspace_bytes);
    lt::Problem p(type, shape, g.fp8_fast_accum, layout_for(type));
    lt::Operands ops(p, sets, kSeed, stream.get());
    lt::AlgoChoice choice;
    if (found != g_best.end()) {
      choice.algo = found->second.algo;
      choice.seconds = lt::time_algo(p, ops, choice.algo, workspace.get(), workspace.bytes(), 3, stream.get());
    } else {
      choice = lt::pick_verified_algo(p, ops, g.algos, workspace.get(), workspace.bytes(), stream.get(),
                                      kAlgoTimeLimit_s);
    }
    ops.poison_c(stream.get());  // the timing or the search wrote C: the check reads only the window's GEMMs
    int next = 0, last = 0;
    const Enqueue work = [&](cudaStream_t s) {
      last = next;
      next = (next + 1) % sets;
      CEILINGS_CUBLAS_CHECK(p.run(choice.algo, ops.a(last), ops.b(last), ops.c(), workspace.get(), workspace.bytes(), s));
    };
    Sustained run;
    for (auto _ : state) {
      run = sustain(stream.get(), work, g.sustained_s, choice.seconds);
      state.SetIterationTime(run.m.median_s);
    }
    const Measurement& m = run.m;
    CEILINGS_LAUNCH_CHECK();
    stream.sync();
    const lt::Verification v = lt::verify(p, ops, last, stream.get());
    // How far the rate fell from the first tenth of the window to the last (1 = no drop).
    const std::size_t tenth = std::max<std::size_t>(1, m.unit_seconds.size() / 10);
    const std::vector<double> head(m.unit_seconds.begin(), m.unit_seconds.begin() + static_cast<long>(tenth));
    const std::vector<double> tail(m.unit_seconds.end() - static_cast<long>(tenth), m.unit_seconds.end());
    const lt::AlgoInfo a = lt::algo_info(choice.algo);
    record_config(state, shape, a);
    auto& c = state.counters;
    c["a_transposed"] = p.a_layout() == lt::ALayout::kTransposed ? 1 : 0;
    double timed_s = 0;
    for (double u : m.unit_seconds) timed_s += u * m.units_per_sample;
    c["window_s"] = timed_s;
    c["chunks"] = static_cast<double>(m.unit_seconds.size());
    c["end_over_start"] = m.unit_seconds.empty() ? 0.0 : median(head) / median(tail);
    c["rate_min"] = m.unit_seconds.empty() ? 0.0 : gp::gemm_flops(shape) / *std::max_element(m.unit_seconds.begin(), m.unit_seconds.end());
    c["verified_elements"] = v.checked;
    if (choice.tried) c["algos_tried"] = choice.tried;  // its own pick (no search result), as gemm.<type>_ref8192's
    if (choice.left_untimed) c["algos_untimed"] = choice.left_untimed;
    if (choice.rejected) c["verify_rejected"] = choice.rejected;
    // The window as a time series of about a second a bin (ceilings/timeline.hpp).
    std::vector<TimedChunk> chunks;
    for (std::size_t i = 0; i < m.unit_seconds.size() && i < run.chunk_end_s.size(); ++i)
      chunks.push_back({run.chunk_end_s[i], m.unit_seconds[i] * m.units_per_sample, gp::gemm_flops(shape) * m.units_per_sample});
    const double window = run.chunk_end_s.empty() ? 0.0 : run.chunk_end_s.back();
    for (const auto& [key, value] : timeline_counters(build_timeline(chunks, run.readings, window))) c[key] = value;
    std::ostringstream label;
    label << gp::to_string(shape) << " " << lt::layout_name(p.a_layout()) << "; A,B " << info.inputs << " -> " << info.output << "; " << info.compute << "; "
          << a.describe() << "; " << (found != g_best.end() ? "the fastest verified configuration" : "8192^3 (no search result)")
          << " run back to back for " << g.sustained_s << " s";
    if (choice.left_untimed)
      label << "; its algorithm the fastest verified of " << choice.tried << " timed (" << choice.left_untimed
            << " more left untimed, past " << kAlgoTimeLimit_s << " s of timing)";
    if (!choice.note.empty()) label << "; " << choice.note;
    state.SetLabel(label.str());
    report(state, m, info.integer ? Amount::kOps : Amount::kFlops, gp::gemm_flops(shape), v.ok, v.detail);
  });
}

void register_cases(const Context& ctx) {
  Settings& g = g_settings;
  g.quick = ctx.options.quick;
  g.types = g_flags.types.empty() ? std::vector<gp::DType>{} : gp::parse_dtype_list(g_flags.types);
  if (g.types.empty())
    for (const auto& t : gp::all_dtypes()) g.types.push_back(t.type);
  if (!g_flags.shapes.empty()) g.shapes = gp::parse_shape_list(g_flags.shapes);
  const bool search_set = g_search_opt && g_search_opt->count() > 0;
  const bool sustained_set = g_sustained_opt && g_sustained_opt->count() > 0;
  const bool algos_set = g_algos_opt && g_algos_opt->count() > 0;
  g.search_s = search_set || !g.quick ? g_flags.search_s : 0.5;
  g.sustained_s = sustained_set || !g.quick ? g_flags.sustained_s : 1.0;
  g.algos = algos_set || !g.quick ? g_flags.algos : 4;
  g.workspace_bytes = static_cast<std::size_t>(g_flags.workspace_mib) << 20;
  g.fp8_fast_accum = g_flags.fp8_fast_accum;
  g.layout = g_flags.layout == "nn" ? lt::ALayout::kNormal : lt::ALayout::kTransposed;
  g.cooldown_s = (g_cooldown_opt && g_cooldown_opt->count() > 0) || !g.quick ? g_flags.cooldown_s : 0.25;
  g.burst_warmup_s = g_flags.burst_warmup_s;
  g.burst_preroll = g_flags.burst_preroll;
  g.burst_samples = g_flags.burst_samples;

  // A shape larger than the whole device is a usage error, not a measurement failure.
  for (const gp::Shape& s : g.shapes)
    for (gp::DType t : g.types) {
      const auto& info = gp::dtype_info(t);
      if (gp::input_set_bytes(s, info) + gp::output_bytes(s, info) > ctx.total_bytes) {
        std::fprintf(stderr, "ceilings-bench: --ceilings_gemm_shapes: %s (the device has %zu MiB)\n",
                     gp::shape_problem(s, info, ctx.total_bytes).c_str(), ctx.total_bytes >> 20);
        std::exit(2);
      }
    }

  // Most wanted first, so a run cut short by its deadline keeps them: every type's search (the ceilings the
  // targets name), then every 8192^3 reference, then the sustained windows (which also leave the card hot,
  // after the burst numbers). The profile lists GEMM ceilings in table order whatever the order here.
  const std::vector<gp::DType> order = gp::measurement_order(g.types);
  for (gp::DType t : order)
    configure(benchmark::RegisterBenchmark(("gemm/" + std::string(gp::dtype_info(t).name)).c_str(),
                                           [t](benchmark::State& st) { run_search(st, t); }));
  for (gp::DType t : order)
    configure(benchmark::RegisterBenchmark(
        ("gemm/" + std::string(gp::dtype_info(t).name) + "_ref8192/m:8192/n:8192/k:8192").c_str(),
        [t](benchmark::State& st) { run_reference(st, t); }));
  if (g.sustained_s > 0)
    for (gp::DType t : order)
      configure(benchmark::RegisterBenchmark(
          ("gemm/" + std::string(gp::dtype_info(t).name) + "_sustained/window_s:" + number(g.sustained_s)).c_str(),
          [t](benchmark::State& st) { run_sustained(st, t); }));
}

}  // namespace
}  // namespace ceilings::bench

// Last: the longest family (about 3 minutes) and the hottest; the bandwidth families before it see a cool GPU,
// and a run cut by its deadline has measured every other family first.
CEILINGS_BENCH_FAMILY(gemm, 90, ceilings::bench::register_cases, ceilings::bench::add_options);
