// Throwing checks for CUDA runtime, CUDA driver and cuBLAS results: each names the expression,
// the status and the file and line. A benchmark that throws is skipped with that message.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

#include "error.hpp"

namespace ceilings {

inline void check_cuda(cudaError_t rc, const char* expr, const char* file, int line) {
  if (rc != cudaSuccess)
    throw CheckError(expr, std::string(cudaGetErrorName(rc)) + " (" + cudaGetErrorString(rc) + ")", file, line);
}

// The driver API is reached through the runtime's entry points (no link against libcuda, so the
// binary starts, and says "no driver", on machines without one).
std::string driver_error_name(CUresult rc);
inline void check_cu(CUresult rc, const char* expr, const char* file, int line) {
  if (rc != CUDA_SUCCESS) throw CheckError(expr, driver_error_name(rc), file, line);
}

inline void check_cublas(cublasStatus_t rc, const char* expr, const char* file, int line) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw CheckError(expr, std::string(cublasGetStatusName(rc)) + " (" + cublasGetStatusString(rc) + ")", file, line);
}

}  // namespace ceilings

#define CEILINGS_CUDA_CHECK(expr) ::ceilings::check_cuda((expr), #expr, __FILE__, __LINE__)
#define CEILINGS_CU_CHECK(expr) ::ceilings::check_cu((expr), #expr, __FILE__, __LINE__)
#define CEILINGS_CUBLAS_CHECK(expr) ::ceilings::check_cublas((expr), #expr, __FILE__, __LINE__)
// The last launch's error, right after a kernel launch.
#define CEILINGS_LAUNCH_CHECK() ::ceilings::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
