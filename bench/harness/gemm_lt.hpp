// cuBLASLt GEMM plumbing for the gemm.<type> ceilings: one problem per (type, shape), TN or NN, its random
// operands rotated across input sets, heuristic algorithm candidates and their names, sampled float64
// verification. Shared by bench/gemm.cpp and the GPU tests.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ceilings/gemm_plan.hpp"
#include "measure.hpp"

namespace ceilings::bench::gemm {

namespace gp = ::ceilings::gemm;

// The process-wide cuBLASLt handle (created on first use).
cublasLtHandle_t lt_handle();

// fp8 operand scale factors (device scalars); their product times alpha scales the reference.
constexpr float kFp8ScaleA = 0.5f, kFp8ScaleB = 0.25f;

// Whether this device and library can run the type.
struct TypeSupport {
  std::string unsupported;  // why they cannot ("" when they can, or might: then the heuristic has the last word)
  // They document the type (every type on compute capability 9.0+, with a cuBLASLt that has fp8 and, on 10.0+,
  // knows Blackwell: 12.8 or newer; fp64, fp32, tf32, bf16 and fp16 on 8.x): cuBLASLt
  // finding no algorithm for an aligned shape is then a fault to report, not a type to skip.
  bool guaranteed = false;
};
TypeSupport type_support(gp::DType type, int cc_major, int cc_minor, int cublaslt_version);
TypeSupport type_support(gp::DType type, const cudaDeviceProp& prop);
// type_support(...).unsupported.
std::string type_unsupported_reason(gp::DType type, const cudaDeviceProp& prop);

// How A is stored. kTransposed: K x M (lda = K), op(A) = A^T, the "TN" layout every cuBLASLt type accepts
// and the only one fp8 and int8 take. kNormal: M x K (lda = M), op(A) = A, "NN", what a row-major
// framework's A @ B becomes in cuBLAS's column-major terms.
enum class ALayout { kTransposed, kNormal };
const char* layout_name(ALayout a);  // "TN" | "NN"
bool layout_allowed(gp::DType type, ALayout a);

// Descriptors of D = alpha * op(A) op(B) with op(A) as `a_layout` says, op(B) = B (K x N, ldb = K), C = D
// (M x N, ldc = M), beta = 0. std::invalid_argument for a layout the type does not take.
class Problem {
 public:
  Problem(gp::DType type, const gp::Shape& shape, bool fp8_fast_accum = true, ALayout a_layout = ALayout::kTransposed);
  ~Problem();
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  const gp::DTypeInfo& info() const { return *info_; }
  const gp::Shape& shape() const { return shape_; }
  double scale() const;  // alpha * a_scale * b_scale, the factor the reference is multiplied by
  bool fast_accum() const { return fast_accum_; }
  ALayout a_layout() const { return a_layout_; }
  // CUBLASLT_MATMUL_DESC_FAST_ACCUM read back from the operation descriptor (false where it is not set).
  bool descriptor_fast_accum() const;

  // Up to `count` candidates from the heuristic for `workspace_bytes`; an empty list means cuBLASLt has
  // no algorithm for this problem (`why` says what it answered, with the cuBLAS status).
  std::vector<cublasLtMatmulAlgo_t> heuristic(int count, std::size_t workspace_bytes, std::string* why) const;
  // Enqueues one GEMM; returns the status instead of throwing (a candidate may fail).
  cublasStatus_t run(const cublasLtMatmulAlgo_t& algo, const void* a, const void* b, void* c, void* workspace,
                     std::size_t workspace_bytes, cudaStream_t stream) const;

 private:
  void release();
  const gp::DTypeInfo* info_;
  gp::Shape shape_;
  bool fast_accum_ = false;
  ALayout a_layout_ = ALayout::kTransposed;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  DeviceBuffer<float> scales_;  // fp8: a_scale, b_scale
  union {
    double d;
    float f;
    std::int32_t i;
  } alpha_{}, beta_{};
};

// `sets` input sets (A, B) filled with random values and one output, on the device.
class Operands {
 public:
  Operands(const Problem& p, int sets, std::uint32_t seed, cudaStream_t stream);
  int sets() const { return static_cast<int>(a_.size()); }
  const void* a(int set) const { return a_[set].get(); }
  const void* b(int set) const { return b_[set].get(); }
  void* c() const { return c_.get(); }
  // Sets C to the recognisable non-result again (NaN for floats, -1 for int32; as at construction): before the
  // GEMMs whose output a check reads, when others (an algorithm search) wrote C first.
  void poison_c(cudaStream_t stream) const;

 private:
  std::vector<DeviceBuffer<std::uint8_t>> a_, b_;
  DeviceBuffer<std::uint8_t> c_;
};

// What an algorithm is, read back from its config (CUBLASLT_ALGO_CONFIG_*).
struct AlgoInfo {
  int id = -1, tile = 0, stages = 0, splitk = 1, reduction = 0, swizzle = 0, custom = 0, cluster = 0;
  std::string tile_name, stages_name, cluster_name;
  // CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS: which units the kernel computes on (FMA, HMMA, IMMA, DMMA), its
  // accumulator and input types; 0 where the library does not say.
  std::uint64_t impl_flags = 0;
  std::string units() const;     // "cuBLASLt flags IMMA, int32 accumulate": the flags as cuBLASLt reports them
  std::string describe() const;  // "algo 66 tile 128x256 stages 64x4 splitK 1 ... cluster 2x1x1 on HMMA ..."
};
AlgoInfo algo_info(const cublasLtMatmulAlgo_t& algo);

// Seconds per GEMM of `algo`, from `reps` GEMMs rotated over the sets (after one warm-up); +inf when the
// algorithm fails to run (its status in *status).
double time_algo(const Problem& p, const Operands& ops, const cublasLtMatmulAlgo_t& algo, void* workspace,
                 std::size_t workspace_bytes, int reps, cudaStream_t stream, cublasStatus_t* status = nullptr);

struct TimedAlgo {
  cublasLtMatmulAlgo_t algo{};
  double seconds = 0;  // per GEMM in the brief timing
};
struct AlgoChoice {
  cublasLtMatmulAlgo_t algo{};
  double seconds = 0;  // per GEMM in the brief timing
  int tried = 0;       // candidates timed: those the heuristic returned, less any the time limit left untimed
  int left_untimed = 0;  // candidates not timed: the time limit had passed
  std::vector<TimedAlgo> ranked;  // the candidates that ran, fastest first (the first is `algo`)
  int rejected = 0;    // faster candidates that failed verification (pick_verified_algo)
  std::string note;    // which failed and how, when one did
};
// Times every heuristic candidate (up to `count`) briefly and keeps the fastest; once `time_limit_s` has passed
// (and one has been timed) the rest are left untimed (`left_untimed`). When cuBLASLt has no algorithm:
// "unsupported: ..." where the type is not guaranteed here (type_support) or the shape is not a multiple of 16,
// else an error naming the cuBLAS status. An error when none of them runs.
AlgoChoice pick_algo(const Problem& p, const Operands& ops, int count, void* workspace, std::size_t workspace_bytes,
                     cudaStream_t stream, double time_limit_s = std::numeric_limits<double>::infinity());

struct Verification {
  bool ok = false;
  int checked = 0, failed = 0;
  double worst_ratio = 0;  // max |got - want| / tolerance
  std::string detail;
};
// Checks 16x16 sampled output elements (the whole output when smaller) of the GEMM on input set `set`,
// whose result is in ops.c(), against the float64 reference computed from the same inputs copied back.
// seed 0: each call of the process samples other rows and columns (7, then a counter's successors), so the
// many checks of a run together cover far more of the output than one fixed sample repeated.
Verification verify(const Problem& p, const Operands& ops, int set, cudaStream_t stream, std::uint32_t seed = 0);

// Runs `algo` once on input set `set` and verifies its output; a failing cuBLAS status fails it too.
Verification run_and_verify(const Problem& p, const Operands& ops, const cublasLtMatmulAlgo_t& algo, void* workspace,
                            std::size_t workspace_bytes, cudaStream_t stream, int set = 0);

// Verifies `choice`'s candidates fastest first and keeps the first that passes: choice.algo and .seconds
// become it, .rejected counts the faster ones that failed and .note names the first of them with its
// failure. Throws (an error, not a skip) when every one fails, with the fastest one's failure.
void keep_fastest_verified(AlgoChoice& choice, const Problem& p, const Operands& ops, void* workspace,
                           std::size_t workspace_bytes, cudaStream_t stream);
// The same with the check of one candidate given (tests inject failures); `what` names the problem in the
// note and the error ("bf16 algorithms for 8192x8192x8192").
void keep_fastest_verified(AlgoChoice& choice, const std::string& what,
                           const std::function<Verification(const cublasLtMatmulAlgo_t&)>& check);

// pick_algo, then keep_fastest_verified.
AlgoChoice pick_verified_algo(const Problem& p, const Operands& ops, int count, void* workspace,
                              std::size_t workspace_bytes, cudaStream_t stream,
                              double time_limit_s = std::numeric_limits<double>::infinity());

}  // namespace ceilings::bench::gemm
