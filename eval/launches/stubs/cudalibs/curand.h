// Stand-in for the cuRAND host header (launch evaluation): declarations only.
#pragma once
#include <cuda_runtime.h>
typedef enum { CURAND_STATUS_SUCCESS = 0 } curandStatus_t;
typedef enum { CURAND_RNG_PSEUDO_DEFAULT = 100, CURAND_RNG_PSEUDO_XORWOW = 101, CURAND_RNG_PSEUDO_PHILOX4_32_10 = 161 } curandRngType_t;
typedef struct eval_curand_generator* curandGenerator_t;
curandStatus_t curandCreateGenerator(curandGenerator_t* generator, curandRngType_t rng_type);
curandStatus_t curandDestroyGenerator(curandGenerator_t generator);
curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed);
curandStatus_t curandSetStream(curandGenerator_t generator, cudaStream_t stream);
