// Stand-in for the cuRAND device header (launch evaluation). The state types are real-sized structs;
// the functions have trivial bodies, so a kernel that calls them compiles with figures that are NOT
// its real ones. The labels never take ptxas truth from such a kernel (they say notruth=...); every
// other kernel in the file is unaffected, as ptxas allocates each kernel on its own.
#pragma once
#include <cuda_runtime.h>
struct curandStateXORWOW { unsigned int d, v[5]; int boxmuller_flag, boxmuller_flag_double; float boxmuller_extra; double boxmuller_extra_double; };
typedef struct curandStateXORWOW curandStateXORWOW_t;
typedef struct curandStateXORWOW curandState_t;
typedef struct curandStateXORWOW curandState;
struct curandStatePhilox4_32_10 { uint4 ctr; uint4 output; uint2 key; unsigned int STATE; int boxmuller_flag, boxmuller_flag_double; float boxmuller_extra; double boxmuller_extra_double; };
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;
__device__ inline void curand_init(unsigned long long seed, unsigned long long, unsigned long long, curandState_t* s) { s->d = (unsigned int)seed; }
__device__ inline void curand_init(unsigned long long seed, unsigned long long, unsigned long long, curandStatePhilox4_32_10_t* s) { s->STATE = (unsigned int)seed; }
__device__ inline unsigned int curand(curandState_t* s) { return s->d++; }
__device__ inline float curand_uniform(curandState_t* s) { return (s->d++ & 0xffff) * (1.0f / 65536.0f); }
__device__ inline float curand_normal(curandState_t* s) { return curand_uniform(s) - 0.5f; }
__device__ inline float curand_uniform(curandStatePhilox4_32_10_t* s) { return (s->STATE++ & 0xffff) * (1.0f / 65536.0f); }
__device__ inline float4 curand_uniform4(curandStatePhilox4_32_10_t* s) { float a = curand_uniform(s); return make_float4(a, a, a, a); }
__device__ inline float4 curand_normal4(curandStatePhilox4_32_10_t* s) { float a = curand_uniform(s) - 0.5f; return make_float4(a, a, a, a); }
__device__ inline uint4 curand4(curandStatePhilox4_32_10_t* s) { unsigned int a = s->STATE++; return make_uint4(a, a, a, a); }
