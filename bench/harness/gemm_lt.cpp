// cuBLASLt GEMM plumbing for the gemm.<type> ceilings (see gemm_lt.hpp): descriptors, operands,
// heuristic candidates, brief algorithm timing and sampled float64 verification.
#include "gemm_lt.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <sstream>

#include "ceilings/kernels/gemm_fill.cuh"
#include "check.hpp"

namespace ceilings::bench::gemm {

namespace {

struct LtTypes {
  cudaDataType_t a, b, c, scale;
  cublasComputeType_t compute;
  kernels::FillType fill_a, fill_b;
};

LtTypes lt_types(gp::DType t) {
  using F = kernels::FillType;
  switch (t) {
    case gp::DType::kFp64: return {CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, F::kF64, F::kF64};
    case gp::DType::kFp32: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, F::kF32, F::kF32};
    case gp::DType::kTf32:
      return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, F::kF32, F::kF32};
    case gp::DType::kBf16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, F::kBf16, F::kBf16};
    case gp::DType::kFp16: return {CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, F::kF16, F::kF16};
    case gp::DType::kFp8E4m3:
      return {CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, F::kE4m3, F::kE4m3};
    case gp::DType::kFp8E5m2:
      return {CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, F::kE5m2, F::kE4m3};
    case gp::DType::kInt8: return {CUDA_R_8I, CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, F::kI8, F::kI8};
  }
  throw std::logic_error("unknown GEMM type");
}

int type_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_64F: return 8;
    case CUDA_R_32F:
    case CUDA_R_32I: return 4;
    case CUDA_R_16BF:
    case CUDA_R_16F: return 2;
    default: return 1;
  }
}

double decode(const std::uint8_t* p, cudaDataType_t t) {
  switch (t) {
    case CUDA_R_64F: {
      double v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case CUDA_R_32F: {
      float v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case CUDA_R_32I: {
      std::int32_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case CUDA_R_16BF:
    case CUDA_R_16F: {
      std::uint16_t v;
      std::memcpy(&v, p, sizeof v);
      return t == CUDA_R_16BF ? gp::bf16_to_double(v) : gp::half_to_double(v);
    }
    case CUDA_R_8F_E4M3: return gp::fp8_e4m3_to_double(*p);
    case CUDA_R_8F_E5M2: return gp::fp8_e5m2_to_double(*p);
    case CUDA_R_8I: return static_cast<std::int8_t>(*p);
    default: throw std::logic_error("no decoder for this cuBLASLt data type");
  }
}

#include "gemm_lt_names.inc"

std::string lookup(const LtName* begin, const LtName* end, std::uint32_t v) {
  for (const LtName* n = begin; n != end; ++n)
    if (n->value == v) return n->name;
  return v == 0 ? "undefined" : "id" + std::to_string(v);
}
std::string tile_name(std::uint32_t v) { return lookup(std::begin(kLtTiles), std::end(kLtTiles), v); }
std::string stages_name(std::uint32_t v) { return lookup(std::begin(kLtStages), std::end(kLtStages), v); }
std::string cluster_name(std::uint32_t v) {
  return v == 0 ? "auto" : lookup(std::begin(kLtClusters), std::end(kLtClusters), v);
}

template <class T>
T config_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr, T fallback) {
  T v{};
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS) return fallback;
  return v;
}


}  // namespace

cublasLtHandle_t lt_handle() {
  static cublasLtHandle_t handle = [] {
    cublasLtHandle_t h = nullptr;
    CEILINGS_CUBLAS_CHECK(cublasLtCreate(&h));
    return h;
  }();
  return handle;
}

TypeSupport type_support(gp::DType type, int cc_major, int cc_minor, int cublaslt_version) {
  const int cc = cc_major * 10 + cc_minor;
  const std::string here = " (this device is " + std::to_string(cc_major) + "." + std::to_string(cc_minor) + ")";
  TypeSupport s;
  switch (type) {
    case gp::DType::kFp8E4m3:
    case gp::DType::kFp8E5m2:
      if (cc < 89) {
        s.unsupported = "fp8 GEMMs need compute capability 8.9 or newer" + here;
      } else if (cublaslt_version < 111100) {  // cuBLAS 11.11 (CUDA 11.8) brought fp8 matmuls
        const int v = cublaslt_version;
        s.unsupported = "fp8 GEMMs need cuBLASLt 11.11 or newer (this is " + std::to_string(v / 10000) + "." +
                        std::to_string(v / 100 % 100) + "." + std::to_string(v % 100) + ")";
      }
      break;
    case gp::DType::kTf32:
    case gp::DType::kBf16:
      // Before Ampere cuBLASLt would fall back to plain fp32 maths: not what the ceiling names.
      if (cc < 80) s.unsupported = std::string(gp::dtype_info(type).name) + " tensor cores need compute capability 8.0+" + here;
      break;
    case gp::DType::kInt8:
      if (cc < 75) s.unsupported = "int8 tensor cores (IMMA) need compute capability 7.5+" + here;
      break;
    default: break;
  }
  // Blackwell came with cuBLAS 12.8 (10.0, 10.1, 12.0), 12.9 (10.3, 12.1) and 13.0 (11.0): an older library
  // runs it through PTX it may have no kernels for. A newer compute capability than these is never guaranteed.
  int first_library = std::numeric_limits<int>::max();
  if (cc < 100) first_library = 0;
  else if (cc == 100 || cc == 101 || cc == 120) first_library = 120800;
  else if (cc == 103 || cc == 121) first_library = 120900;
  else if (cc == 110) first_library = 130000;
  const bool library_knows_device = cublaslt_version >= first_library;
  // Documented: every type on 9.0+; on Ampere and Ada (8.x) the floating-point types cuBLASLt has run there since
  // CUDA 11 (a missing algorithm on an A100 or an L40S had been a silent skip: review 38). fp8 on 8.9 and int8's
  // layouts before Hopper are left to the heuristic.
  const bool floating = type == gp::DType::kFp64 || type == gp::DType::kFp32 || type == gp::DType::kTf32 ||
                        type == gp::DType::kBf16 || type == gp::DType::kFp16;
  const bool documented = cc >= 90 || (cc >= 80 && floating);
  s.guaranteed = s.unsupported.empty() && documented && library_knows_device;
  return s;
}

TypeSupport type_support(gp::DType type, const cudaDeviceProp& prop) {
  return type_support(type, prop.major, prop.minor, static_cast<int>(cublasLtGetVersion()));
}

std::string type_unsupported_reason(gp::DType type, const cudaDeviceProp& prop) {
  return type_support(type, prop).unsupported;
}

const char* layout_name(ALayout a) { return a == ALayout::kTransposed ? "TN" : "NN"; }

bool layout_allowed(gp::DType type, ALayout a) {
  const bool tn_only = type == gp::DType::kFp8E4m3 || type == gp::DType::kFp8E5m2 || type == gp::DType::kInt8;
  return a == ALayout::kTransposed || !tn_only;
}

Problem::Problem(gp::DType type, const gp::Shape& shape, bool fp8_fast_accum, ALayout a_layout)
    : info_(&gp::dtype_info(type)), shape_(shape), a_layout_(a_layout) {
  const std::string problem = gp::shape_problem(shape, *info_, std::numeric_limits<std::size_t>::max());
  if (!problem.empty()) throw std::invalid_argument(problem);
  if (!layout_allowed(type, a_layout))
    throw std::invalid_argument(std::string(info_->name) + " GEMMs take A transposed (TN) only, not " +
                                layout_name(a_layout));
  const LtTypes t = lt_types(type);
  const bool fp8 = type == gp::DType::kFp8E4m3 || type == gp::DType::kFp8E5m2;
  try {
    CEILINGS_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, t.compute, t.scale));
    const cublasOperation_t ta = a_layout == ALayout::kTransposed ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
    CEILINGS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CEILINGS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (fp8) {
      // Device-resident float scalars (the compute type), each on its own 16-byte boundary so no kernel's
      // vector load of a scale can straddle into the other.
      scales_ = DeviceBuffer<float>(8);
      const float host[8] = {kFp8ScaleA, 0, 0, 0, kFp8ScaleB, 0, 0, 0};
      CEILINGS_CUDA_CHECK(cudaMemcpy(scales_.get(), host, sizeof host, cudaMemcpyHostToDevice));
      // From pageable memory cudaMemcpy may return before its DMA lands, and the GEMMs run on non-blocking
      // streams that do not wait for the legacy stream: the scales are in place before any GEMM is queued.
      CEILINGS_CUDA_CHECK(cudaDeviceSynchronize());
      const void* pa = scales_.get();
      const void* pb = scales_.get() + 4;
      CEILINGS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &pa, sizeof pa));
      CEILINGS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &pb, sizeof pb));
      fast_accum_ = fp8_fast_accum;
      const std::int8_t fast = fp8_fast_accum ? 1 : 0;
      CEILINGS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    }
    const auto m = static_cast<std::uint64_t>(shape.m), n = static_cast<std::uint64_t>(shape.n),
               k = static_cast<std::uint64_t>(shape.k);
    if (a_layout == ALayout::kTransposed)
      CEILINGS_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la_, t.a, k, m, static_cast<std::int64_t>(k)));
    else
      CEILINGS_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la_, t.a, m, k, static_cast<std::int64_t>(m)));
    CEILINGS_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb_, t.b, k, n, static_cast<std::int64_t>(k)));
    CEILINGS_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc_, t.c, m, n, static_cast<std::int64_t>(m)));
  } catch (...) {
    release();
    throw;
  }
  if (type == gp::DType::kFp64) {
    alpha_.d = 1.0;
    beta_.d = 0.0;
  } else if (type == gp::DType::kInt8) {
    alpha_.i = 1;
    beta_.i = 0;
  } else {
    alpha_.f = 1.0f;
    beta_.f = 0.0f;
  }
}

bool Problem::descriptor_fast_accum() const {
  std::int8_t fast = 0;
  std::size_t written = 0;
  if (!op_ || cublasLtMatmulDescGetAttribute(op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast, &written) !=
                  CUBLAS_STATUS_SUCCESS)
    return false;
  return fast != 0;
}

Problem::~Problem() { release(); }

void Problem::release() {
  if (lc_) cublasLtMatrixLayoutDestroy(lc_);
  if (lb_) cublasLtMatrixLayoutDestroy(lb_);
  if (la_) cublasLtMatrixLayoutDestroy(la_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  lc_ = lb_ = la_ = nullptr;
  op_ = nullptr;
}

double Problem::scale() const {
  const bool fp8 = info_->type == gp::DType::kFp8E4m3 || info_->type == gp::DType::kFp8E5m2;
  return fp8 ? static_cast<double>(kFp8ScaleA) * static_cast<double>(kFp8ScaleB) : 1.0;
}

std::vector<cublasLtMatmulAlgo_t> Problem::heuristic(int count, std::size_t workspace_bytes, std::string* why) const {
  cublasLtMatmulPreference_t pref = nullptr;
  CEILINGS_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::uint64_t ws = workspace_bytes;
  cublasStatus_t st =
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  std::vector<cublasLtMatmulHeuristicResult_t> res(static_cast<std::size_t>(std::max(1, count)));
  int returned = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(lt_handle(), op_, la_, lb_, lc_, lc_, pref, static_cast<int>(res.size()),
                                        res.data(), &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  std::vector<cublasLtMatmulAlgo_t> out;
  if (st != CUBLAS_STATUS_SUCCESS) {
    if (why)
      *why = std::string("cublasLtMatmulAlgoGetHeuristic returned ") + cublasGetStatusName(st) + " (" +
             cublasGetStatusString(st) + ")";
    return out;
  }
  cublasStatus_t refused = CUBLAS_STATUS_SUCCESS;
  for (int i = 0; i < returned; ++i) {
    const auto& r = res[static_cast<std::size_t>(i)];
    // A result that asks for more workspace than the preference allowed would fail (or overrun) at run time:
    // left out like a refused one.
    const cublasStatus_t state = r.state == CUBLAS_STATUS_SUCCESS && r.workspaceSize > workspace_bytes
                                     ? CUBLAS_STATUS_INVALID_VALUE
                                     : r.state;
    if (state == CUBLAS_STATUS_SUCCESS)
      out.push_back(r.algo);
    else if (refused == CUBLAS_STATUS_SUCCESS)
      refused = state;
  }
  if (out.empty() && why)
    *why = "cublasLtMatmulAlgoGetHeuristic returned CUBLAS_STATUS_SUCCESS with " + std::to_string(returned) +
           " results and no usable algorithm" +
           (refused != CUBLAS_STATUS_SUCCESS ? std::string("; first result's state ") + cublasGetStatusName(refused) : "");
  return out;
}

cublasStatus_t Problem::run(const cublasLtMatmulAlgo_t& algo, const void* a, const void* b, void* c, void* workspace,
                            std::size_t workspace_bytes, cudaStream_t stream) const {
  return cublasLtMatmul(lt_handle(), op_, &alpha_, a, la_, b, lb_, &beta_, c, lc_, c, lc_, &algo, workspace,
                        workspace_bytes, stream);
}

Operands::Operands(const Problem& p, int sets, std::uint32_t seed, cudaStream_t stream) {
  const LtTypes t = lt_types(p.info().type);
  const gp::Shape& s = p.shape();
  const auto a_count = static_cast<std::size_t>(s.m * s.k), b_count = static_cast<std::size_t>(s.n * s.k);
  for (int i = 0; i < sets; ++i) {
    a_.emplace_back(a_count * static_cast<std::size_t>(type_bytes(t.a)));
    b_.emplace_back(b_count * static_cast<std::size_t>(type_bytes(t.b)));
    kernels::fill_uniform(a_.back().get(), a_count, t.fill_a, seed + 2u * static_cast<std::uint32_t>(i), stream);
    CEILINGS_LAUNCH_CHECK();
    kernels::fill_uniform(b_.back().get(), b_count, t.fill_b, seed + 2u * static_cast<std::uint32_t>(i) + 1u, stream);
    CEILINGS_LAUNCH_CHECK();
  }
  c_ = DeviceBuffer<std::uint8_t>(static_cast<std::size_t>(s.m * s.n) * static_cast<std::size_t>(type_bytes(t.c)));
  // A recognisable non-result (NaN for floats, -1 for int32) so a GEMM that wrote nothing fails the check.
  poison_c(stream);
  CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void Operands::poison_c(cudaStream_t stream) const {
  CEILINGS_CUDA_CHECK(cudaMemsetAsync(c_.get(), 0xff, c_.bytes(), stream));
}

// What cuBLASLt's numerical-implementation flags say, as they say it: cuBLAS 13.1 on the H200 flags its tf32
// kernels FMA although they run at 378 TFLOP/s, far above the CUDA cores' 67 (2026-11-30), so the label
// quotes the flags instead of naming the hardware.
std::string AlgoInfo::units() const {
  if (impl_flags == 0) return "units not reported";
  std::string s = "cuBLASLt flags ";
  const std::uint64_t op = impl_flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_OP_TYPE_MASK;
  if (op & CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA) s += "FMA";
  else if (op & CUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA) s += "HMMA";
  else if (op & CUBLASLT_NUMERICAL_IMPL_FLAGS_IMMA) s += "IMMA";
  else if (op & CUBLASLT_NUMERICAL_IMPL_FLAGS_DMMA) s += "DMMA";
  else s += "op type " + std::to_string(op);
  const std::uint64_t acc = impl_flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_TYPE_MASK;
  if (acc == CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_16F) s += ", fp16 accumulate";
  else if (acc == CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F) s += ", fp32 accumulate";
  else if (acc == CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_64F) s += ", fp64 accumulate";
  else if (acc == CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32I) s += ", int32 accumulate";
  return s;
}

std::string AlgoInfo::describe() const {
  std::ostringstream os;
  os << "algo " << id << " tile " << tile_name << " stages " << stages_name << " splitK " << splitk << " reduction "
     << reduction << " swizzle " << swizzle << " custom " << custom << " cluster " << cluster_name << "; " << units();
  return os.str();
}

AlgoInfo algo_info(const cublasLtMatmulAlgo_t& algo) {
  AlgoInfo a;
  a.id = config_attr<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID, -1);
  a.tile = static_cast<int>(config_attr<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, 0));
  a.stages = static_cast<int>(config_attr<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, 0));
  a.splitk = config_attr<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 1);
  a.reduction = static_cast<int>(config_attr<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, 0));
  a.swizzle = static_cast<int>(config_attr<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 0));
  a.custom = static_cast<int>(config_attr<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 0));
  a.cluster = config_attr<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, 0);
  a.tile_name = tile_name(static_cast<std::uint32_t>(a.tile));
  a.stages_name = stages_name(static_cast<std::uint32_t>(a.stages));
  a.cluster_name = cluster_name(static_cast<std::uint32_t>(a.cluster));
  std::size_t written = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS, &a.impl_flags,
                                        sizeof a.impl_flags, &written) != CUBLAS_STATUS_SUCCESS)
    a.impl_flags = 0;
  return a;
}

double time_algo(const Problem& p, const Operands& ops, const cublasLtMatmulAlgo_t& algo, void* workspace,
                 std::size_t workspace_bytes, int reps, cudaStream_t stream, cublasStatus_t* status) {
  constexpr double kFailed = std::numeric_limits<double>::infinity();
  // A refused candidate may leave its launch error behind: the status reports it, so clear it (or the
  // next candidate's error check would blame that one).
  cublasStatus_t st = p.run(algo, ops.a(0), ops.b(0), ops.c(), workspace, workspace_bytes, stream);
  if (status) *status = st;
  if (st != CUBLAS_STATUS_SUCCESS) {
    (void)cudaGetLastError();
    return kFailed;
  }
  // One more untimed GEMM ahead of the start event: the GPU works through it while the host enqueues the first
  // timed one, so the host's cost of a cuBLASLt call (several microseconds, a tenth of the shortest candidates'
  // GEMMs) is not inside the timing and does not favour the longer shapes.
  st = p.run(algo, ops.a(0), ops.b(0), ops.c(), workspace, workspace_bytes, stream);
  if (status) *status = st;
  if (st != CUBLAS_STATUS_SUCCESS) {
    (void)cudaGetLastError();
    return kFailed;
  }
  const Event start, stop;
  CEILINGS_CUDA_CHECK(cudaEventRecord(start.get(), stream));
  for (int r = 0; r < reps; ++r) {
    const int set = (r + 1) % ops.sets();
    st = p.run(algo, ops.a(set), ops.b(set), ops.c(), workspace, workspace_bytes, stream);
    if (st != CUBLAS_STATUS_SUCCESS) break;
  }
  CEILINGS_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
  CEILINGS_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  if (status) *status = st;
  if (st != CUBLAS_STATUS_SUCCESS) {
    (void)cudaGetLastError();
    return kFailed;
  }
  float ms = 0;
  CEILINGS_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms * 1e-3 / std::max(1, reps);
}

namespace {

// The type's support on the current device.
TypeSupport support_here(gp::DType type) {
  int device = 0, major = 0, minor = 0;
  CEILINGS_CUDA_CHECK(cudaGetDevice(&device));
  CEILINGS_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CEILINGS_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return type_support(type, major, minor, static_cast<int>(cublasLtGetVersion()));
}

}  // namespace

AlgoChoice pick_algo(const Problem& p, const Operands& ops, int count, void* workspace, std::size_t workspace_bytes,
                     cudaStream_t stream, double time_limit_s) {
  const auto begun = std::chrono::steady_clock::now();
  std::string why;
  const auto algos = p.heuristic(count, workspace_bytes, &why);
  if (algos.empty()) {
    const std::string what = std::string("cuBLASLt has no ") + p.info().name + " algorithm for " +
                             gp::to_string(p.shape()) + " on this device: " + why;
    const gp::Shape& s = p.shape();
    const bool aligned = s.m % 16 == 0 && s.n % 16 == 0 && s.k % 16 == 0;
    // Where the device and library document the type, an aligned shape without an algorithm is a fault
    // (a broken install, a wrong descriptor), not a type to skip.
    if (aligned && support_here(p.info().type).guaranteed)
      throw CheckError("cublasLtMatmulAlgoGetHeuristic", what + " (" + p.info().name + " is supported on this device)",
                       __FILE__, __LINE__);
    unsupported(what);
  }
  AlgoChoice best;
  best.seconds = std::numeric_limits<double>::infinity();
  int reps = 0;
  cublasStatus_t last = CUBLAS_STATUS_SUCCESS;
  for (std::size_t i = 0; i < algos.size(); ++i) {
    if (!best.ranked.empty() &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count() >= time_limit_s) {
      best.left_untimed = static_cast<int>(algos.size() - i);
      break;
    }
    const cublasLtMatmulAlgo_t& algo = algos[i];
    double t = 0;
    if (reps == 0) {
      // Size the brief timing from the first algorithm that runs: about 4 ms of GEMMs, 3 to 30 of them. A GEMM
      // of 0.2 s or more (fp64 at 8192^3 on a GPU with FP64 at 1/64 of FP32 takes 1-2.4 s; the H200's longest in
      // the search, fp32 at 7936x8448x16384, about 43 ms) is timed by these two, and the next candidates by one
      // each.
      const double est = time_algo(p, ops, algo, workspace, workspace_bytes, 2, stream, &last);
      if (!std::isfinite(est)) continue;
      constexpr double kLongGemm_s = 0.2;
      reps = est >= kLongGemm_s ? 1 : std::clamp(static_cast<int>(std::ceil(4e-3 / std::max(est, 1e-7))), 3, 30);
      t = est >= kLongGemm_s ? est : time_algo(p, ops, algo, workspace, workspace_bytes, reps, stream, &last);
    } else {
      t = time_algo(p, ops, algo, workspace, workspace_bytes, reps, stream, &last);
    }
    if (std::isfinite(t)) best.ranked.push_back({algo, t});
  }
  best.tried = static_cast<int>(algos.size()) - best.left_untimed;
  if (best.ranked.empty())
    throw CheckError("cublasLtMatmul", std::string("every one of the ") + std::to_string(algos.size()) + " " +
                                           p.info().name + " candidates for " + gp::to_string(p.shape()) +
                                           " failed; last status " + cublasGetStatusName(last) + " (" +
                                           cublasGetStatusString(last) + ")",
                     __FILE__, __LINE__);
  std::stable_sort(best.ranked.begin(), best.ranked.end(),
                   [](const TimedAlgo& a, const TimedAlgo& b) { return a.seconds < b.seconds; });
  best.algo = best.ranked.front().algo;
  best.seconds = best.ranked.front().seconds;
  return best;
}

namespace {
// An algorithm whose reported accumulator is not the one the compute type names: fp64 accumulates in fp64, int8 in
// int32, every other type in fp32 (CUBLAS_COMPUTE_32F and its TF32 mode; the H200's kernels report exactly these,
// fp8 with fast accumulation too). A narrower one (fp16 accumulation) is within the tolerances at these K (review 85:
// its error grows as sqrt(K), the bound as K), so it is refused by its flags. Empty where it matches or cuBLASLt
// reports none.
std::string accumulator_mismatch(const gp::DTypeInfo& info, std::uint64_t impl_flags) {
  const std::uint64_t acc = impl_flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_TYPE_MASK;
  if (acc == 0) return "";  // not reported
  const std::uint64_t want = info.type == gp::DType::kFp64   ? CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_64F
                             : info.type == gp::DType::kInt8 ? CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32I
                                                             : CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F;
  if (acc == want) return "";
  std::ostringstream os;
  os << "cuBLASLt reports another accumulator than " << info.compute << " names (numerical impl flags 0x" << std::hex
     << impl_flags << "): its result would not be this type's arithmetic";
  return os.str();
}
}  // namespace

Verification run_and_verify(const Problem& p, const Operands& ops, const cublasLtMatmulAlgo_t& algo, void* workspace,
                            std::size_t workspace_bytes, cudaStream_t stream, int set) {
  if (const std::string why = accumulator_mismatch(p.info(), algo_info(algo).impl_flags); !why.empty()) {
    Verification v;
    v.detail = why;
    return v;
  }
  // A recognisable non-result first, so an algorithm that returns success without writing fails.
  CEILINGS_CUDA_CHECK(cudaMemsetAsync(ops.c(), 0xff, gp::output_bytes(p.shape(), p.info()), stream));
  const cublasStatus_t st = p.run(algo, ops.a(set), ops.b(set), ops.c(), workspace, workspace_bytes, stream);
  if (st != CUBLAS_STATUS_SUCCESS) {
    (void)cudaGetLastError();  // the status says what failed; a launch error it left is not another fault
    CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));
    Verification v;
    v.detail = std::string("cublasLtMatmul returned ") + cublasGetStatusName(st) + " (" + cublasGetStatusString(st) + ")";
    return v;
  }
  CEILINGS_CUDA_CHECK(cudaGetLastError());
  CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  return verify(p, ops, set, stream);
}

void keep_fastest_verified(AlgoChoice& choice, const std::string& what,
                           const std::function<Verification(const cublasLtMatmulAlgo_t&)>& check) {
  std::string first_failure;
  for (std::size_t i = 0; i < choice.ranked.size(); ++i) {
    const TimedAlgo& cand = choice.ranked[i];
    const Verification v = check(cand.algo);
    if (v.ok) {
      choice.algo = cand.algo;
      choice.seconds = cand.seconds;
      choice.rejected = static_cast<int>(i);
      if (i > 0)
        choice.note = std::to_string(i) + " faster " + what + " failed verification, the fastest: " + first_failure;
      return;
    }
    if (first_failure.empty()) first_failure = algo_info(cand.algo).describe() + ": " + v.detail;
  }
  throw std::runtime_error("every one of the " + std::to_string(choice.ranked.size()) + " timed " + what +
                           " failed verification; the fastest, " + first_failure);
}

void keep_fastest_verified(AlgoChoice& choice, const Problem& p, const Operands& ops, void* workspace,
                           std::size_t workspace_bytes, cudaStream_t stream) {
  keep_fastest_verified(choice, std::string(p.info().name) + " algorithms for " + gp::to_string(p.shape()),
                        [&](const cublasLtMatmulAlgo_t& algo) {
                          return run_and_verify(p, ops, algo, workspace, workspace_bytes, stream);
                        });
}

AlgoChoice pick_verified_algo(const Problem& p, const Operands& ops, int count, void* workspace,
                              std::size_t workspace_bytes, cudaStream_t stream, double time_limit_s) {
  AlgoChoice c = pick_algo(p, ops, count, workspace, workspace_bytes, stream, time_limit_s);
  keep_fastest_verified(c, p, ops, workspace, workspace_bytes, stream);
  return c;
}

Verification verify(const Problem& p, const Operands& ops, int set, cudaStream_t stream, std::uint32_t seed) {
  static std::atomic<std::uint32_t> calls{0};
  if (seed == 0) seed = 7u + 0x9e3779b9u * calls.fetch_add(1);
  if (seed == 0) seed = 7u;  // 0 is the "next" marker, not a seed
  const LtTypes t = lt_types(p.info().type);
  const gp::Shape& s = p.shape();
  const auto samples = gp::sample_elements(s, 16, 16, seed);
  std::vector<std::int64_t> rows, cols;
  for (const auto& e : samples) {
    rows.push_back(e.row);
    cols.push_back(e.col);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end()), cols.end());

  const std::size_t ka = static_cast<std::size_t>(s.k) * static_cast<std::size_t>(type_bytes(t.a));
  const std::size_t kb = static_cast<std::size_t>(s.k) * static_cast<std::size_t>(type_bytes(t.b));
  const std::size_t mc = static_cast<std::size_t>(s.m) * static_cast<std::size_t>(type_bytes(t.c));
  std::vector<std::uint8_t> a_raw(rows.size() * ka), b_raw(cols.size() * kb), c_raw(cols.size() * mc);
  const auto* a = static_cast<const std::uint8_t*>(ops.a(set));
  const auto* b = static_cast<const std::uint8_t*>(ops.b(set));
  const auto* c = static_cast<const std::uint8_t*>(ops.c());
  // Row i of op(A): with A transposed, column i of the stored K x M matrix, K contiguous elements; else row i
  // of the stored M x K matrix, K elements M apart, gathered on the device first (a strided copy straight
  // into pageable host memory goes element by element) and brought over in one copy.
  const std::size_t a_elem = static_cast<std::size_t>(type_bytes(t.a));
  if (p.a_layout() == ALayout::kTransposed) {
    for (std::size_t r = 0; r < rows.size(); ++r)
      CEILINGS_CUDA_CHECK(cudaMemcpyAsync(&a_raw[r * ka], a + static_cast<std::size_t>(rows[r]) * ka, ka,
                                          cudaMemcpyDeviceToHost, stream));
  } else {
    DeviceBuffer<std::uint8_t> gathered(a_raw.size());
    for (std::size_t r = 0; r < rows.size(); ++r)
      CEILINGS_CUDA_CHECK(cudaMemcpy2DAsync(gathered.get() + r * ka, a_elem, a + static_cast<std::size_t>(rows[r]) * a_elem,
                                            static_cast<std::size_t>(s.m) * a_elem, a_elem,
                                            static_cast<std::size_t>(s.k), cudaMemcpyDeviceToDevice, stream));
    CEILINGS_CUDA_CHECK(cudaMemcpyAsync(a_raw.data(), gathered.get(), a_raw.size(), cudaMemcpyDeviceToHost, stream));
    CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));  // before `gathered` goes
  }
  for (std::size_t q = 0; q < cols.size(); ++q) {
    CEILINGS_CUDA_CHECK(cudaMemcpyAsync(&b_raw[q * kb], b + static_cast<std::size_t>(cols[q]) * kb, kb,
                                        cudaMemcpyDeviceToHost, stream));
    CEILINGS_CUDA_CHECK(cudaMemcpyAsync(&c_raw[q * mc], c + static_cast<std::size_t>(cols[q]) * mc, mc,
                                        cudaMemcpyDeviceToHost, stream));
  }
  CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));

  auto decode_all = [](const std::vector<std::uint8_t>& raw, std::size_t count, cudaDataType_t type) {
    std::vector<double> out(count);
    const int bytes = type_bytes(type);
    for (std::size_t i = 0; i < count; ++i) out[i] = decode(&raw[i * static_cast<std::size_t>(bytes)], type);
    return out;
  };
  const std::size_t k = static_cast<std::size_t>(s.k);
  const auto a_val = decode_all(a_raw, rows.size() * k, t.a);
  const auto b_val = decode_all(b_raw, cols.size() * k, t.b);

  Verification v;
  const double scale = p.scale();
  std::string worst_fail, worst_ok;
  double worst_fail_ratio = -1, worst_ok_ratio = -1;
  const std::size_t c_bytes = static_cast<std::size_t>(type_bytes(t.c));
  for (const auto& e : samples) {
    const std::size_t r = static_cast<std::size_t>(std::lower_bound(rows.begin(), rows.end(), e.row) - rows.begin());
    const std::size_t q = static_cast<std::size_t>(std::lower_bound(cols.begin(), cols.end(), e.col) - cols.begin());
    gp::RefElement want = gp::reference_dot(&a_val[r * k], &b_val[q * k], s.k);
    if (p.info().integer) {
      // int32 accumulation wraps modulo 2^32 (only reachable with K beyond ~133k): compare like for like.
      const auto exact = static_cast<std::int64_t>(want.value);
      want.value = static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(exact)));
    }
    const double got = decode(&c_raw[q * mc + static_cast<std::size_t>(e.row) * c_bytes], t.c);
    ++v.checked;
    const double tol = gp::tolerance(p.info(), want.value, want.magnitude, scale);
    const double err = std::fabs(got - want.value * scale);
    const double ratio = tol > 0 ? err / tol : (err == 0 ? 0.0 : std::numeric_limits<double>::infinity());
    const bool ok = gp::within_tolerance(p.info(), got, want, scale);
    auto describe = [&] {
      std::ostringstream os;
      os.precision(10);
      os << "C(" << e.row << "," << e.col << ") = " << got << ", float64 reference " << want.value * scale
         << ", tolerance " << tol;
      return os.str();
    };
    if (!ok) {
      ++v.failed;
      if (worst_fail.empty() || ratio > worst_fail_ratio) {
        worst_fail_ratio = ratio;
        worst_fail = describe();
      }
    } else if (ratio > worst_ok_ratio) {
      worst_ok_ratio = ratio;
      worst_ok = describe();
    }
    if (std::isfinite(ratio)) v.worst_ratio = std::max(v.worst_ratio, ratio);
  }
  const std::string worst = v.failed ? worst_fail : worst_ok;
  v.ok = v.failed == 0 && v.checked > 0;
  std::ostringstream os;
  os << v.failed << " of " << v.checked << " sampled " << p.info().name << " outputs of " << gp::to_string(s)
     << " outside tolerance (" << p.info().out_tolerance << " of |C| + " << p.info().acc_tolerance
     << " of sum|a*b|); worst " << worst;
  v.detail = os.str();
  return v;
}

}  // namespace ceilings::bench::gemm
