// Stand-in for the cuRAND host header (launch evaluation): declarations only.
#pragma once
#include <cuda_runtime.h>
typedef enum { CURAND_STATUS_SUCCESS = 0 } curandStatus_t;
typedef struct eval_curand_generator* curandGenerator_t;
