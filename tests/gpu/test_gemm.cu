// GPU tests of the gemm.<type> path: every data type's cuBLASLt GEMM verified against the float64
// reference at small shapes (non-square, and not a multiple of 16 where the type allows). Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "ceilings/bench_json.hpp"
#include "ceilings/gemm_plan.hpp"
#include "ceilings/kernels/gemm_fill.cuh"
#include "cli_runner.hpp"
#include "gpu_test.hpp"
#include "harness/check.hpp"
#include "harness/gemm_lt.hpp"

namespace ceilings::bench::gemm {
namespace {

struct Ran {
  bool ran = false;
  bool guaranteed = false;  // type_support(...).guaranteed: cuBLASLt must have an algorithm for aligned shapes
  std::string skipped;      // "unsupported: ..." (or the device's reason)
  std::string error;        // anything else that went wrong
  Verification v;
  AlgoInfo algo;            // the algorithm that ran
  bool fast_accum = false;  // CUBLASLT_MATMUL_DESC_FAST_ACCUM as the descriptor holds it (fp8)
};

int compute_capability() {
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  return prop.major * 10 + prop.minor;
}

// One GEMM on input set 1 with the fastest of a few heuristic candidates; verification against `check_set`.
Ran run_one(gp::DType type, const gp::Shape& shape, int check_set = 1, bool fp8_fast_accum = true,
            ALayout layout = ALayout::kTransposed) {
  Ran r;
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  const TypeSupport support = type_support(type, prop);
  r.guaranteed = support.guaranteed;
  r.skipped = support.unsupported;
  if (!r.skipped.empty()) return r;
  try {
    Stream stream;
    DeviceBuffer<std::uint8_t> ws(std::size_t{32} << 20);
    Problem p(type, shape, fp8_fast_accum, layout);
    Operands ops(p, 2, 1234u, stream.get());
    const AlgoChoice c = pick_algo(p, ops, 4, ws.get(), ws.bytes(), stream.get());
    r.algo = algo_info(c.algo);
    r.fast_accum = p.descriptor_fast_accum();
    EXPECT_GE(r.algo.id, 0);
    EXPECT_FALSE(r.algo.tile_name.empty());
    ops.poison_c(stream.get());  // the check reads only this GEMM's output, not the search's
    EXPECT_EQ(p.run(c.algo, ops.a(1), ops.b(1), ops.c(), ws.get(), ws.bytes(), stream.get()), CUBLAS_STATUS_SUCCESS);
    stream.sync();
    r.v = verify(p, ops, check_set, stream.get());
    r.ran = true;
  } catch (const std::exception& e) {
    (std::string(e.what()).rfind("unsupported:", 0) == 0 ? r.skipped : r.error) = e.what();
  }
  return r;
}

// A type that could not run: a failure where the device guarantees it (every type on compute capability 9.0+)
// or where something other than "unsupported" went wrong; else a printed skip.
void expect_ran_or_skipped(const Ran& r, const char* what, bool may_skip = false) {
  if (r.ran) return;
  if (!r.error.empty())
    ADD_FAILURE() << what << ": " << r.error;
  else if (r.guaranteed && !may_skip)
    ADD_FAILURE() << what << " is guaranteed on this device but did not run: " << r.skipped;
  else
    std::printf("[ skipped  ] %s: %s\n", what, r.skipped.c_str());
}

// Shapes every type must run and verify: non-square small, K large enough for the tolerances to matter (the
// 8192 of the reference shape), and the smallest ragged shape the type's layout rules allow.
std::vector<gp::Shape> test_shapes(const gp::DTypeInfo& t) {
  std::vector<gp::Shape> shapes{{256, 128, 64}, {512, 384, 1024}, {256, 128, 8192}};
  if (t.dim_multiple == 1 || t.dim_multiple == 4)
    shapes.push_back({100, 36, 20});  // not a multiple of 16 (int8: multiples of 4, IMMA's minimum)
  else
    shapes.push_back({48, 80, 32});  // fp8: multiples of 16, smaller than any tile
  return shapes;
}

TEST(GemmGpu, EveryTypeVerifiesAtSmallShapes) {
  CEILINGS_REQUIRE_GPU();
  const int cc = compute_capability();
  const bool hopper_or_newer = cc >= 90;
  // FP64 tensor cores (DMMA): the data-centre parts of 8.0, 9.0 and 10.0 only, as the datasheet table takes them
  // (analysis/src/datasheet.cpp fp64_gemm_peak); 12.0 (RTX PRO 6000 Blackwell, RTX 50xx) has none.
  const bool dmma = cc == 80 || cc == 90 || cc == 100;
  for (const auto& t : gp::all_dtypes()) {
    for (const gp::Shape& s : test_shapes(t)) {
      SCOPED_TRACE(std::string(t.name) + " " + gp::to_string(s));
      const Ran r = run_one(t.type, s);
      if (hopper_or_newer) EXPECT_TRUE(r.guaranteed) << "every type is guaranteed on compute capability 9.0+";
      if (!r.ran) {
        // On Hopper cuBLASLt documents every one of these (the ragged int8 shape is the one it may lack a
        // kernel for); elsewhere a type may be missing.
        const bool may_skip = t.type == gp::DType::kInt8 && s.k % 16 != 0;
        expect_ran_or_skipped(r, (std::string(t.name) + " " + gp::to_string(s)).c_str(), may_skip);
        continue;
      }
      EXPECT_TRUE(r.v.ok) << r.v.detail;
      if (t.type == gp::DType::kFp8E4m3 || t.type == gp::DType::kFp8E5m2)
        EXPECT_TRUE(r.fast_accum) << "fp8 runs with fast accumulation by default; the descriptor should say so";
      // The units the kernel runs on, where cuBLASLt reports them: fp32 must never be a tensor-core (TF32)
      // kernel, or gemm.fp32 would name the wrong thing; at the long K, where a small shape's heuristic has
      // no reason to leave the tensor cores, int8 must be IMMA and fp64 (where the GPU has DMMA) DMMA.
      std::printf("[ units    ] %s %s: %s\n", t.name, gp::to_string(s).c_str(), r.algo.units().c_str());
      // cuBLASLt 12 and 13 answer the capability on Hopper; a 0 there is a failed query (read as "unknown"),
      // which would silently drop the checks below.
      if (hopper_or_newer) EXPECT_NE(r.algo.impl_flags, 0u) << t.name << " " << gp::to_string(s) << ": no numerical_impl_flags";
      if (r.algo.impl_flags != 0) {
        const std::uint64_t op = r.algo.impl_flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_OP_TYPE_MASK;
        if (t.type == gp::DType::kFp32) EXPECT_EQ(op, CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA) << r.algo.units();
        if (s.k == 8192 && t.type == gp::DType::kInt8)
          EXPECT_TRUE(op & CUBLASLT_NUMERICAL_IMPL_FLAGS_IMMA) << r.algo.units();
        if (s.k == 8192 && t.type == gp::DType::kFp64 && dmma)
          EXPECT_TRUE(op & CUBLASLT_NUMERICAL_IMPL_FLAGS_DMMA) << r.algo.units();
      }
      const std::int64_t expect = std::min<std::int64_t>(16, s.m) * std::min<std::int64_t>(16, s.n);
      EXPECT_EQ(r.v.checked, expect);
      EXPECT_LT(r.v.worst_ratio, 1.0) << r.v.detail;
    }
  }
}

// A stored M x K (NN, --ceilings_gemm_layout=nn) for every type that takes it: verified with A's rows read
// strided, and a result checked against the other input set fails; fp8 and int8 refuse the layout.
TEST(GemmGpu, NnLayoutVerifiesWhereTheTypeTakesIt) {
  CEILINGS_REQUIRE_GPU();
  for (const auto& t : gp::all_dtypes()) {
    if (!layout_allowed(t.type, ALayout::kNormal)) {
      EXPECT_THROW(Problem(t.type, {256, 128, 64}, true, ALayout::kNormal), std::invalid_argument) << t.name;
      continue;
    }
    for (const gp::Shape& s : {gp::Shape{256, 128, 64}, gp::Shape{384, 256, 8192}, gp::Shape{100, 36, 20}}) {
      SCOPED_TRACE(std::string(t.name) + " NN " + gp::to_string(s));
      const Ran r = run_one(t.type, s, 1, true, ALayout::kNormal);
      if (!r.ran) {
        expect_ran_or_skipped(r, (std::string(t.name) + " NN " + gp::to_string(s)).c_str());
        continue;
      }
      EXPECT_TRUE(r.v.ok) << r.v.detail;
      EXPECT_LT(r.v.worst_ratio, 1.0) << r.v.detail;
      const Ran wrong = run_one(t.type, s, 0, true, ALayout::kNormal);
      EXPECT_TRUE(wrong.ran) << "the same GEMM that just ran must run again: " << wrong.error << wrong.skipped;
      if (wrong.ran) EXPECT_FALSE(wrong.v.ok) << "checked against the other input set";
    }
  }
}

TEST(GemmGpu, Fp8WithoutFastAccumulationVerifies) {
  CEILINGS_REQUIRE_GPU();
  for (gp::DType t : {gp::DType::kFp8E4m3, gp::DType::kFp8E5m2}) {
    const Ran r = run_one(t, {256, 128, 8192}, 1, false);
    if (!r.ran) {
      expect_ran_or_skipped(r, gp::dtype_info(t).name);
      continue;
    }
    EXPECT_TRUE(r.v.ok) << gp::dtype_info(t).name << ": " << r.v.detail;
    EXPECT_FALSE(r.fast_accum) << "the descriptor still asks for fast accumulation";
  }
}

TEST(GemmGpu, BrokenResultFailsVerification) {
  CEILINGS_REQUIRE_GPU();
  // The output holds set 1's product; checking it against set 0's inputs must fail, for every type.
  for (const auto& t : gp::all_dtypes()) {
    for (const gp::Shape& s : {gp::Shape{256, 128, 64}, gp::Shape{256, 128, 8192}}) {
      const Ran r = run_one(t.type, s, 0);
      if (!r.ran) {
        expect_ran_or_skipped(r, (std::string(t.name) + " " + gp::to_string(s)).c_str());
        continue;
      }
      EXPECT_FALSE(r.v.ok) << t.name << " " << gp::to_string(s);
      EXPECT_GT(r.v.failed, 100) << t.name << " " << gp::to_string(s) << ": " << r.v.detail;
    }
  }
}

TEST(GemmGpu, UnwrittenOutputFailsVerification) {
  CEILINGS_REQUIRE_GPU();
  // Operands start with an output of all-ones bits (NaN, or -1 for int32): a GEMM that never ran must fail.
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  for (const auto& t : gp::all_dtypes()) {
    if (!type_unsupported_reason(t.type, prop).empty()) continue;
    Stream stream;
    Problem p(t.type, {256, 128, 64});
    Operands ops(p, 1, 99u, stream.get());
    const Verification v = verify(p, ops, 0, stream.get());
    EXPECT_FALSE(v.ok) << t.name;
    EXPECT_GT(v.failed, 250) << t.name << ": " << v.detail;
  }
}

// A bf16 GEMM with several heuristic candidates on Hopper, for the algorithm-choice tests (members in the order
// they are made: the operands are filled on the stream).
struct Bf16Candidates {
  Stream stream;
  DeviceBuffer<std::uint8_t> ws{std::size_t{32} << 20};
  Problem p{gp::DType::kBf16, {256, 128, 8192}};
  Operands ops{p, 2, 1234u, stream.get()};
  AlgoChoice pick(double time_limit_s = std::numeric_limits<double>::infinity()) {
    return pick_algo(p, ops, 8, ws.get(), ws.bytes(), stream.get(), time_limit_s);
  }
};

// Past its time limit the algorithm timing stops, one timed at least: with a limit of 0 s, exactly one, the rest
// counted as left untimed (a GPU with slow FP64 spent minutes timing 16 DGEMM algorithms at 8192^3).
TEST(GemmGpu, AlgorithmTimingStopsAtItsTimeLimit) {
  CEILINGS_REQUIRE_GPU();
  Bf16Candidates g;
  const AlgoChoice all = g.pick();
  EXPECT_EQ(all.left_untimed, 0);
  const AlgoChoice one = g.pick(0.0);
  ASSERT_EQ(one.ranked.size(), 1u);
  EXPECT_EQ(one.tried, 1);
  EXPECT_EQ(one.tried + one.left_untimed, all.tried + all.left_untimed) << "the same heuristic list";
  if (compute_capability() >= 90) EXPECT_GE(one.left_untimed, 1) << "Hopper has several bf16 kernels";
}

TEST(GemmGpu, FastestCandidateFailingVerificationFallsBackToTheNext) {
  CEILINGS_REQUIRE_GPU();
  Bf16Candidates g;
  const Problem& p = g.p;
  const Operands& ops = g.ops;
  const DeviceBuffer<std::uint8_t>& ws = g.ws;
  const Stream& stream = g.stream;
  const AlgoChoice timed = g.pick();
  ASSERT_FALSE(timed.ranked.empty());
  for (std::size_t i = 1; i < timed.ranked.size(); ++i) EXPECT_LE(timed.ranked[i - 1].seconds, timed.ranked[i].seconds);
  EXPECT_EQ(std::memcmp(&timed.algo, &timed.ranked[0].algo, sizeof timed.algo), 0) << "the choice is the fastest";
  if (compute_capability() >= 90) ASSERT_GE(timed.ranked.size(), 2u) << "Hopper has several bf16 kernels";
  if (timed.ranked.size() < 2) GTEST_SKIP() << "one bf16 candidate only: no fallback to test";
  // The fastest is rejected (an injected failure), the next one is checked for real and kept.
  AlgoChoice c = timed;
  int calls = 0;
  keep_fastest_verified(c, "bf16 algorithms for 256x128x8192", [&](const cublasLtMatmulAlgo_t& algo) {
    if (calls++ == 0) return Verification{false, 256, 256, 1e9, "injected failure"};
    return run_and_verify(p, ops, algo, ws.get(), ws.bytes(), stream.get());
  });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(c.rejected, 1);
  EXPECT_EQ(std::memcmp(&c.algo, &timed.ranked[1].algo, sizeof c.algo), 0);
  EXPECT_EQ(c.seconds, timed.ranked[1].seconds);
  EXPECT_NE(c.note.find("injected failure"), std::string::npos) << c.note;
  // Every candidate failing is an error (never a skip), naming the fastest one's failure.
  AlgoChoice none = timed;
  try {
    keep_fastest_verified(none, "bf16 algorithms for 256x128x8192", [](const cublasLtMatmulAlgo_t&) {
      return Verification{false, 256, 256, 1e9, "injected failure"};
    });
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.rfind("unsupported:", 0), 0u) << what;
    EXPECT_NE(what.find("failed verification"), std::string::npos) << what;
    EXPECT_NE(what.find("injected failure"), std::string::npos) << what;
  }
  // The real check passes the fastest (no rejection, no note).
  AlgoChoice real = pick_verified_algo(p, ops, 8, ws.get(), ws.bytes(), stream.get());
  EXPECT_EQ(real.rejected, 0) << real.note;
  EXPECT_TRUE(real.note.empty());
  EXPECT_TRUE(run_and_verify(p, ops, real.algo, ws.get(), ws.bytes(), stream.get()).ok);
}

// The support table itself: pure host logic, runs without a GPU.
TEST(GemmTypes, EveryTypeIsGuaranteedOnHopperAndFp8NeedsCublasLt1111) {
  for (const auto& t : gp::all_dtypes()) {
    const TypeSupport hopper = type_support(t.type, 9, 0, 130001);
    EXPECT_TRUE(hopper.unsupported.empty()) << t.name << ": " << hopper.unsupported;
    EXPECT_TRUE(hopper.guaranteed) << t.name;
    // Before 9.0 the floating-point types are guaranteed from 8.0 (Ampere, Ada); fp8 and int8 are the heuristic's.
    const bool floating = t.type == gp::DType::kFp64 || t.type == gp::DType::kFp32 || t.type == gp::DType::kTf32 ||
                          t.type == gp::DType::kBf16 || t.type == gp::DType::kFp16;
    EXPECT_EQ(type_support(t.type, 8, 0, 130001).guaranteed, floating) << t.name;
    EXPECT_EQ(type_support(t.type, 8, 9, 130001).guaranteed, floating) << t.name;
    EXPECT_FALSE(type_support(t.type, 7, 5, 130001).guaranteed) << t.name;
    // Blackwell with a cuBLAS from before it (12.8): the heuristic has the last word too.
    EXPECT_TRUE(type_support(t.type, 10, 0, 120800).guaranteed) << t.name;
    EXPECT_FALSE(type_support(t.type, 10, 0, 120400).guaranteed) << t.name;
    EXPECT_FALSE(type_support(t.type, 12, 0, 120600).guaranteed) << t.name;
    EXPECT_FALSE(type_support(t.type, 10, 3, 120800).guaranteed) << t.name;  // 10.3 came with 12.9
    EXPECT_TRUE(type_support(t.type, 10, 3, 120900).guaranteed) << t.name;
    EXPECT_FALSE(type_support(t.type, 13, 0, 130000).guaranteed) << t.name;  // newer than the table
  }
  // fp8: compute capability 8.9 and cuBLASLt 11.11 (111100, CUDA 11.8); not 11.8 (110800).
  EXPECT_NE(type_support(gp::DType::kFp8E4m3, 8, 0, 130001).unsupported.find("8.9"), std::string::npos);
  EXPECT_TRUE(type_support(gp::DType::kFp8E4m3, 8, 9, 120000).unsupported.empty());
  const TypeSupport old_lib = type_support(gp::DType::kFp8E4m3, 9, 0, 110800);
  EXPECT_NE(old_lib.unsupported.find("11.11"), std::string::npos) << old_lib.unsupported;
  EXPECT_NE(old_lib.unsupported.find("11.8.0"), std::string::npos) << "names the version found: " << old_lib.unsupported;
  EXPECT_FALSE(old_lib.guaranteed);
  EXPECT_FALSE(type_support(gp::DType::kFp8E5m2, 9, 0, 111099).unsupported.empty());
  EXPECT_TRUE(type_support(gp::DType::kFp8E5m2, 9, 0, 111100).unsupported.empty());
  EXPECT_TRUE(type_support(gp::DType::kFp8E5m2, 9, 0, 111100).guaranteed);
  // The older gates stay.
  EXPECT_FALSE(type_support(gp::DType::kInt8, 7, 0, 130001).unsupported.empty());
  EXPECT_TRUE(type_support(gp::DType::kInt8, 7, 5, 130001).unsupported.empty());
  EXPECT_FALSE(type_support(gp::DType::kBf16, 7, 5, 130001).unsupported.empty());
  EXPECT_TRUE(type_support(gp::DType::kFp64, 6, 0, 130001).unsupported.empty());
}

TEST(GemmGpu, Fp64OperandsHaveFullMantissas) {
  CEILINGS_REQUIRE_GPU();
  // fp64 inputs are uniform in (-1, 1) with all 52 mantissa bits random (not a float's 24 widened, which
  // leaves the low 29 zero), deterministic for a seed; the reference reads these same values back.
  constexpr std::size_t n = std::size_t{1} << 16;
  Stream stream;
  DeviceBuffer<double> d(n), again(n), other(n);
  kernels::fill_uniform(d.get(), n, kernels::FillType::kF64, 5u, stream.get());
  kernels::fill_uniform(again.get(), n, kernels::FillType::kF64, 5u, stream.get());
  kernels::fill_uniform(other.get(), n, kernels::FillType::kF64, 6u, stream.get());
  std::vector<double> h(n), h_again(n), h_other(n);
  CEILINGS_CUDA_CHECK(cudaMemcpyAsync(h.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost, stream.get()));
  CEILINGS_CUDA_CHECK(cudaMemcpyAsync(h_again.data(), again.get(), n * 8, cudaMemcpyDeviceToHost, stream.get()));
  CEILINGS_CUDA_CHECK(cudaMemcpyAsync(h_other.data(), other.get(), n * 8, cudaMemcpyDeviceToHost, stream.get()));
  stream.sync();
  EXPECT_EQ(h, h_again) << "deterministic for a seed";
  EXPECT_NE(h, h_other) << "another seed, other values";
  int low_zero = 0, low_bit = 0, upper_binade = 0;
  double sum = 0, sum_abs = 0;
  for (double v : h) {
    ASSERT_TRUE(std::isfinite(v));
    ASSERT_GT(std::fabs(v), 0.0);
    ASSERT_LT(std::fabs(v), 1.0);
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    low_zero += (bits & ((std::uint64_t{1} << 29) - 1)) == 0;
    low_bit += static_cast<int>(bits & 1);
    upper_binade += std::fabs(v) >= 0.5;
    sum += v;
    sum_abs += std::fabs(v);
  }
  EXPECT_LE(low_zero, 2) << "low 29 mantissa bits all zero (expected about n / 2^29)";
  EXPECT_NEAR(low_bit / static_cast<double>(n), 0.5, 0.02) << "the last mantissa bit is random";
  // Uniform in (-1, 1): mean 0, mean |v| 1/2, half of the magnitudes in [1/2, 1); bounds are ~9 sigma.
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  EXPECT_NEAR(sum_abs / n, 0.5, 0.01);
  EXPECT_NEAR(upper_binade / static_cast<double>(n), 0.5, 0.02);
}

TEST(GemmGpu, Fp8NeedsMultiplesOf16) {
  EXPECT_THROW(Problem(gp::DType::kFp8E4m3, {100, 36, 20}), std::invalid_argument);
  EXPECT_THROW(Problem(gp::DType::kInt8, {128, 128, 18}), std::invalid_argument);
}

// End to end: a short ceilings-bench pass over GEMM and FMA yields verified numbers (or skips with a
// reason), and they land in a profile under the DESIGN.md ceiling names.
TEST(GemmBench, ShortPassReportsVerifiedCeilings) {
  CEILINGS_REQUIRE_GPU();
  const auto r = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_quick", "--ceilings_gemm_types=bf16,fp8_e4m3,int8",
                                    "--ceilings_gemm_search_s=0.3", "--ceilings_gemm_sustained_s=0.5",
                                    "--benchmark_filter=^(gemm|fma)/", "--benchmark_format=json"},
                                   {}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  // On Hopper every type is guaranteed: none of these may be skipped, and each must give its three numbers.
  const bool hopper_or_newer = compute_capability() >= 90;
  int values = 0;
  for (const auto& b : out.at("benchmarks")) {
    const std::string name = b.at("name");
    if (b.value("error_occurred", false)) {
      const std::string msg = b.value("error_message", "");
      EXPECT_EQ(msg.rfind("unsupported:", 0), 0u) << name << ": " << msg;
      if (hopper_or_newer) ADD_FAILURE() << name << " was skipped on compute capability 9.0+: " << msg;
      continue;
    }
    EXPECT_EQ(b.value("verified", 0.0), 1.0) << name;
    const double v = b.value("flop_per_second", 0.0) + b.value("op_per_second", 0.0);
    // A sanity floor against a timing or unit error (a thousandfold), not a speed check: 1 TFLOP/s, and
    // 0.1 for fp64, which GPUs with FP64 at 1/64 of FP32 run at about 0.5 (L4, A10, A40).
    EXPECT_GT(v, name.find("/fp64") != std::string::npos ? 1e11 : 1e12) << name;
    ++values;
  }
  EXPECT_GE(values, 4 + (hopper_or_newer ? 9 : 3)) << "4 FMA cases and three GEMM ceilings per type that can run";
  const Profile p = profile_from_benchmark_json(out);
  std::set<std::string> names;
  for (const auto& c : p.ceilings) names.insert(c.name);
  std::vector<std::string> want{"gemm.bf16", "gemm.bf16_ref8192", "gemm.bf16_sustained", "fma.fp32", "fma.fp64",
                                "fma.fp16", "fma.bf16"};
  if (hopper_or_newer)
    for (const char* t : {"fp8_e4m3", "int8"})
      for (const char* variant : {"", "_ref8192", "_sustained"}) want.push_back(std::string("gemm.") + t + variant);
  for (const std::string& w : want) EXPECT_TRUE(names.count(w)) << w;
  // No rate above the datasheet peak where the table knows the GPU (datasheets give boost-clock peaks, and no
  // clock exceeds boost): a FLOP count too high by half or a timing that missed work would pass the floor above.
  for (const auto& c : p.ceilings)
    if (c.datasheet) EXPECT_LE(c.value, 1.02 * *c.datasheet) << c.name << " above its datasheet peak";
  // ... nor below 30% of it: a FLOP count a factor short (the H200's quick pass reads 55-90%) would pass the
  // 1 TFLOP/s floor above. Timings mean nothing under compute-sanitizer.
  if (!ceilings::test::under_sanitizer())
    for (const auto& c : p.ceilings)
      if (c.datasheet) EXPECT_GT(c.value, 0.3 * *c.datasheet) << c.name << " far below its datasheet peak";
  if (hopper_or_newer) {
    // int8 counts operations, not FLOPs; the search's detail names its shape and algorithm.
    const Ceiling* int8 = p.find("gemm.int8");
    ASSERT_NE(int8, nullptr);
    EXPECT_EQ(int8->unit, "OP/s");
    const Ceiling* fp8 = p.find("gemm.fp8_e4m3");
    ASSERT_NE(fp8, nullptr);
    for (const char* key : {"m", "n", "k", "algo_id", "tile_id", "stages_id", "splitk", "numerical_impl_flags"})
      EXPECT_TRUE(fp8->detail.contains(key)) << key;
    // The search's own entry (gemm.fp8_e4m3 may be the 8192^3 reference when that measured faster).
    bool search_seen = false;
    for (const auto& b : out["benchmarks"]) {
      const std::string name = b.value("name", "");
      if (name.rfind("gemm/fp8_e4m3/", 0) != 0 || b.value("error_occurred", false)) continue;
      search_seen = true;
      for (const char* key : {"shapes_tried", "finalists"}) EXPECT_TRUE(b.contains(key)) << name << ": " << key;
      // With two verified finalists or more, the side-by-side re-timing ran: a rate for each contender, and the
      // one measured is among them (on a healthy GPU its setup does not fail).
      ASSERT_TRUE(b.contains("finalists_verified")) << name;
      if (b.value("finalists_verified", 0.0) >= 2) {
        const int n = static_cast<int>(b.value("rerank_contenders", 0.0));
        EXPECT_EQ(n, std::min(6, static_cast<int>(b.value("finalists_verified", 0.0)))) << name;  // every verified finalist
        // A contender whose operands do not fit its share of the memory is left out (none on the H200's 141 GB).
        const int timed = n - static_cast<int>(b.value("rerank_left_out", 0.0));
        int rated = 0;
        for (int i = 1; i <= n; ++i)
          if (b.contains("rerank_rate_" + std::to_string(i))) {
            ++rated;
            EXPECT_GT(b.value("rerank_rate_" + std::to_string(i), 0.0), 1e12) << name << " #" << i;
          }
        EXPECT_EQ(rated, timed) << name;
        const int pick = static_cast<int>(b.value("rerank_pick", 0.0));
        EXPECT_GE(pick, 1) << name;
        EXPECT_LE(pick, n) << name;
        // The one kept is the fastest side by side (rates, not seconds: the contenders are different shapes).
        const double kept = b.value("rerank_rate_" + std::to_string(pick), 0.0);
        for (int i = 1; i <= n; ++i)
          EXPECT_GE(kept, b.value("rerank_rate_" + std::to_string(i), 0.0)) << name << " kept #" << pick << " over #" << i;
      } else {  // the short search verified one: the re-timing's checks did not run (said, not silently passed)
        std::printf("[   NOTE   ] %s: %.0f finalist(s) verified in the short search; the side-by-side re-timing "
                    "was not exercised\n", name.c_str(), b.value("finalists_verified", 0.0));
      }
    }
    EXPECT_TRUE(search_seen);
  }
  // The sustained window as a time series: bins whose rates agree with the median chunk's. A 0.5 s window
  // is one bin, often too short for the energy counter to move three times: its power is a smoke check,
  // printed (MeasureGpu.EnergyCounterGivesAPlausibleMeanPower asserts the counter itself).
  const Ceiling* sustained = p.find("gemm.bf16_sustained");
  ASSERT_NE(sustained, nullptr);
  ASSERT_TRUE(sustained->detail.contains("timeline")) << sustained->detail.dump();
  ASSERT_GE(sustained->detail["timeline"].size(), 1u);
  std::printf("gemm.bf16_sustained timeline: %s\n", sustained->detail["timeline"].dump().c_str());
  for (const json& bin : sustained->detail["timeline"]) {
    const double rate = bin.at("rate").get<double>();
    EXPECT_GT(rate, 0.5 * sustained->value) << bin.dump();
    EXPECT_LT(rate, 1.5 * sustained->value) << bin.dump();
    EXPECT_LT(bin.at("start_s").get<double>(), bin.at("end_s").get<double>()) << bin.dump();
    if (bin.contains("power_mean_w")) {  // the bin's own power by the energy counter: a loaded board
      EXPECT_GT(bin["power_mean_w"].get<double>(), 50.0) << bin.dump();
      EXPECT_LT(bin["power_mean_w"].get<double>(), 1500.0) << bin.dump();
    }
  }
}

}  // namespace
}  // namespace ceilings::bench::gemm
