// Stand-in for PyTorch's version header (launch evaluation): a 2.x version, so the newer code paths are taken.
#pragma once
#define TORCH_VERSION_MAJOR 2
#define TORCH_VERSION_MINOR 4
#define TORCH_VERSION_PATCH 0
