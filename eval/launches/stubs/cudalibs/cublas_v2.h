// Host-only stand-in for the cuBLAS header, written for the launch evaluation.
// It only declares enough for host code to type-check; device code is untouched,
// so ptxas figures of the kernels are the same as with the real header.
#pragma once
#include <cuda_runtime.h>
#include <library_types.h>
typedef struct eval_cublas_context* cublasHandle_t;
typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1, CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_ARCH_MISMATCH = 8, CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13, CUBLAS_STATUS_INTERNAL_ERROR = 14, CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;
typedef enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 } cublasPointerMode_t;
typedef enum { CUBLAS_DEFAULT_MATH = 0, CUBLAS_TENSOR_OP_MATH = 1 } cublasMath_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1, CUBLAS_GEMM_ALGO0 = 0, CUBLAS_GEMM_ALGO23 = 23,
  CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99, CUBLAS_GEMM_ALGO0_TENSOR_OP = 100, CUBLAS_GEMM_ALGO15_TENSOR_OP = 115 } cublasGemmAlgo_t;
typedef enum { CUBLAS_COMPUTE_16F = 64, CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77, CUBLAS_COMPUTE_32F_FAST_16BF = 75,
  CUBLAS_COMPUTE_32I = 72, CUBLAS_COMPUTE_64F = 70 } cublasComputeType_t;
cublasStatus_t cublasCreate_v2(cublasHandle_t*);
#define cublasCreate cublasCreate_v2
cublasStatus_t cublasDestroy_v2(cublasHandle_t);
#define cublasDestroy cublasDestroy_v2
cublasStatus_t cublasSetStream_v2(cublasHandle_t, cudaStream_t);
#define cublasSetStream cublasSetStream_v2
cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t);
cublasStatus_t cublasSetWorkspace(cublasHandle_t, void*, size_t);
cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
  const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int, ...);
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
  const void*, cudaDataType, int, long long, const void*, cudaDataType, int, long long, const void*, void*, cudaDataType,
  int, long long, int, ...);
cublasStatus_t cublasGemmBatchedEx(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
  const void* const[], cudaDataType, int, const void* const[], cudaDataType, int, const void*, void* const[], cudaDataType,
  int, int, ...);
cublasStatus_t cublasSgemm(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float*,
  const float*, int, const float*, int, const float*, float*, int);
const char* cublasGetStatusString(cublasStatus_t);
