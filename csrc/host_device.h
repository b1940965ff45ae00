// DASH_HOST_DEVICE: callable from host and device code under nvcc, plain inline under a
// host compiler (so the schedule header also builds in CPU-only tests).
#pragma once

#if defined(__CUDACC__)
#define DASH_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define DASH_HOST_DEVICE inline
#endif
