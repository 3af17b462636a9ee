// Device fill of GEMM operands with uniform random values, never zero where the type can avoid it (zeros
// draw less power and inflate FLOP/s; fp8 still rounds the smallest draws, about 0.1%, to zero). Feeds gemm.<type>; bench/harness/gemm_lt.cpp copies sampled rows back for the float64
// reference.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ceilings::kernels {

enum class FillType { kF64, kF32, kBf16, kF16, kE4m3, kE5m2, kI8 };

// Element i gets a value derived from hash(seed, i): floats uniform in (-1, 1) rounded to the type (fp32
// and narrower from 23 random bits and a half step, never zero before rounding; fp64 with all 52 mantissa
// bits random), int8 uniform over -127..-1 and 1..127. Deterministic for (seed, i), independent of the
// launch shape.
void fill_uniform(void* dst, std::size_t count, FillType type, std::uint32_t seed, cudaStream_t stream);

// Whether this binary holds code the current device can run (machine code for its architecture, or PTX its
// driver can compile): cudaSuccess, else the error a launch would give (cudaErrorNoKernelImageForDevice for
// a binary built for other GPUs). Asked of the fill kernel, which every GEMM case launches.
cudaError_t kernel_image_status();

}  // namespace ceilings::kernels
