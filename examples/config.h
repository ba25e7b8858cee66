// Launch configuration shared by the examples.
#pragma once

#define REDUCE_THREADS 256
#define SAXPY_THREADS 512

constexpr int kTile = 16;
constexpr int kStencilX = 32;
constexpr int kStencilY = 8;
constexpr int kRadius = 4;
