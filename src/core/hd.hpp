// LOCKSTEP_HD marks per-element math compiled for both the CPU and the CUDA backends, so the
// CPU path is the GPU path's reference by construction.
#pragma once

#if defined(__CUDACC__)
#define LOCKSTEP_HD __host__ __device__ __forceinline__
#define LOCKSTEP_UNROLL _Pragma("unroll")
#else
#define LOCKSTEP_HD inline
#define LOCKSTEP_UNROLL
#endif
