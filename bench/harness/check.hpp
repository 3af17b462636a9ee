// Throwing checks for CUDA runtime and cuBLAS results: each names the expression,
// the status and the file and line. A benchmark that throws is skipped with that message.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "error.hpp"

namespace ceilings {

inline void check_cuda(cudaError_t rc, const char* expr, const char* file, int line) {
  if (rc != cudaSuccess)
    throw CheckError(expr, std::string(cudaGetErrorName(rc)) + " (" + cudaGetErrorString(rc) + ")", file, line);
}

inline void check_cublas(cublasStatus_t rc, const char* expr, const char* file, int line) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw CheckError(expr, std::string(cublasGetStatusName(rc)) + " (" + cublasGetStatusString(rc) + ")", file, line);
}

}  // namespace ceilings

#define CEILINGS_CUDA_CHECK(expr) ::ceilings::check_cuda((expr), #expr, __FILE__, __LINE__)
#define CEILINGS_CUBLAS_CHECK(expr) ::ceilings::check_cublas((expr), #expr, __FILE__, __LINE__)
// The last launch's error, right after a kernel launch.
#define CEILINGS_LAUNCH_CHECK() ::ceilings::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
