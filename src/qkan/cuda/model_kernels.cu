// The CUDA model's kernels (model_kernels.hpp). Element-wise kernels run one element per
// thread in grid-stride loops; the reductions over a batch (edge_gradients, sum_terms) run one
// block per result, each thread summing a strided share in double, then a tree in shared
// memory: a fixed order, so a result does not depend on timing.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "src/qkan/activation_math.hpp"
#include "src/qkan/cuda/launch.hpp"
#include "src/qkan/cuda/model_kernels.hpp"
#include "src/qkan/loss_math.hpp"

namespace lockstep::qkan::detail::cuda_model {

namespace {

constexpr int kThreads = 256;

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

/// Blocks for n elements, one per thread, capped (the kernels loop over the rest).
unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, 1 << 20));
}

void launched(const char* what) { cuda_lanes::check(cudaGetLastError(), what); }

__device__ std::int64_t first_index() { return std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ std::int64_t grid_stride() { return std::int64_t(gridDim.x) * blockDim.x; }

/// The sum over the block of each thread's `v` (blockDim.x == kThreads), valid in thread 0.
__device__ double block_sum(double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  return shared[0];
}

template <class From, class To> __global__ void convert_kernel(const From* from, To* to, std::int64_t n) {
  for (std::int64_t e = first_index(); e < n; e += grid_stride()) to[e] = static_cast<To>(from[e]);
}

// One thread per output o, the sum over i in double in i order (as the CPU model).
template <class T>
__global__ void layer_tables_kernel(const double* pw, const double* pb, const double* bw, const double* mask,
                                    std::int64_t O, std::int64_t I, T* W, T* base_w, T* bias) {
  for (std::int64_t o = first_index(); o < O; o += grid_stride()) {
    double sum = 0;
    for (std::int64_t i = 0; i < I; ++i) {
      const std::int64_t e = o * I + i;
      const double w = pw[e] * mask[e];
      W[e] = static_cast<T>(w);
      base_w[e] = static_cast<T>(bw[e] * mask[e]);
      sum += pb[e] * w;
    }
    bias[o] = static_cast<T>(sum);
  }
}

template <Activation A, class T> __global__ void activate_kernel(const T* in, T* base, T* slope, std::int64_t n) {
  for (std::int64_t e = first_index(); e < n; e += grid_stride()) {
    double s = 0;
    if (slope) {
      base[e] = static_cast<T>(activate_one<A, true>(double(in[e]), s));
      slope[e] = static_cast<T>(s);
    } else {
      base[e] = static_cast<T>(activate_one<A, false>(double(in[e]), s));
    }
  }
}

// One thread per (b, o).
template <class T>
__global__ void add_bias_and_base_kernel(T* y, const T* bias, const T* base, const T* base_w, std::int64_t rows,
                                         std::int64_t O, std::int64_t I) {
  for (std::int64_t e = first_index(); e < rows * O; e += grid_stride()) {
    const std::int64_t b = e / O, o = e % O;
    T acc = y[e] + bias[o];
    for (std::int64_t i = 0; i < I; ++i) acc += base[b * I + i] * base_w[o * I + i];
    y[e] = acc;
  }
}

// One thread per row (loss_math.hpp); the targets were checked when the batch was loaded.
template <class T>
__global__ void loss_terms_kernel(const T* y, const double* targets, std::int64_t rows, std::int64_t O,
                                  bool cross_entropy, double n, T* gy, double* terms) {
  for (std::int64_t b = first_index(); b < rows; b += grid_stride()) {
    T* g = gy ? gy + b * O : nullptr;
    terms[b] = cross_entropy ? cross_entropy_row<T>(y + b * O, static_cast<std::int64_t>(targets[b]), O, n, g)
                             : mse_row<T>(y + b * O, targets + b * O, O, n, g);
  }
}

// One block.
__global__ void sum_terms_kernel(const double* terms, std::int64_t count, double n, double* out) {
  __shared__ double shared[kThreads];
  double s = 0;
  for (std::int64_t k = threadIdx.x; k < count; k += kThreads) s += terms[k];
  s = block_sum(s, shared);
  if (threadIdx.x == 0) out[0] = s / n;
}

// One block per edge (o, i) = blockIdx.x (grid-stride over edges); threads split the rows.
template <class T>
__global__ void edge_gradients_kernel(const T* gy, const T* base, const T* gW, const double* pw, const double* pb,
                                      const double* mask, std::int64_t rows, std::int64_t O, std::int64_t I,
                                      double* g_bw, double* g_pw, double* g_pb) {
  __shared__ double shared[kThreads];
  for (std::int64_t e = blockIdx.x; e < O * I; e += gridDim.x) {
    const std::int64_t o = e / I, i = e % I;
    double col = 0, dot = 0;
    for (std::int64_t b = threadIdx.x; b < rows; b += kThreads) {
      const double g = double(gy[b * O + o]);
      col += g;
      if (g_bw) dot += g * double(base[b * I + i]);
    }
    col = block_sum(col, shared);
    __syncthreads();  // shared is read by thread 0 below and rewritten by the next sum
    if (g_bw) dot = block_sum(dot, shared);
    if (threadIdx.x == 0) {
      if (g_bw) g_bw[e] = dot * mask[e];
      if (g_pw) g_pw[e] = (double(gW[e]) + col * pb[e]) * mask[e];
      if (g_pb) g_pb[e] = col * pw[e] * mask[e];
    }
    __syncthreads();
  }
}

// One thread per (b, i).
template <class T>
__global__ void add_base_gradient_kernel(const T* gy, const T* base_w, const T* slope, T* gx, std::int64_t rows,
                                         std::int64_t O, std::int64_t I) {
  for (std::int64_t e = first_index(); e < rows * I; e += grid_stride()) {
    const std::int64_t b = e / I, i = e % I;
    T s = 0;
    for (std::int64_t o = 0; o < O; ++o) s += gy[b * O + o] * base_w[o * I + i];
    gx[e] += s * slope[e];
  }
}

__global__ void adam_kernel(double* p, const double* g, double* m, double* v, std::int64_t n, AdamStep step) {
  for (std::int64_t e = first_index(); e < n; e += grid_stride()) adam_update(p[e], g[e], m[e], v[e], step);
}

}  // namespace

template <class From, class To> void convert(const From* from, To* to, std::int64_t n, void* stream) {
  if (n == 0) return;
  convert_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(from, to, n);
  launched("converting a table");
}

template <class T>
void layer_tables(const double* pw, const double* pb, const double* bw, const double* mask, std::int64_t O,
                  std::int64_t I, T* W, T* base_w, T* bias, void* stream) {
  layer_tables_kernel<<<blocks_for(O), kThreads, 0, as_stream(stream)>>>(pw, pb, bw, mask, O, I, W, base_w, bias);
  launched("building a layer's tables");
}

template <class T> void activate(Activation act, const T* in, T* base, T* slope, std::int64_t n, void* stream) {
  if (n == 0) return;
  with_activation(act, [&](auto a) {
    activate_kernel<decltype(a)::value, T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(in, base, slope, n);
  });
  launched("the base activation");
}

template <class T>
void add_bias_and_base(T* y, const T* bias, const T* base, const T* base_w, std::int64_t rows, std::int64_t O,
                       std::int64_t I, void* stream) {
  if (rows * O == 0) return;
  add_bias_and_base_kernel<<<blocks_for(rows * O), kThreads, 0, as_stream(stream)>>>(y, bias, base, base_w, rows, O, I);
  launched("the layer's bias and base branch");
}

template <class T>
void loss_terms(const T* y, const double* targets, std::int64_t rows, std::int64_t O, bool cross_entropy, double n,
                T* gy, double* terms, void* stream) {
  if (rows == 0) return;
  loss_terms_kernel<<<blocks_for(rows), kThreads, 0, as_stream(stream)>>>(y, targets, rows, O, cross_entropy, n, gy,
                                                                          terms);
  launched("the loss terms");
}

void sum_terms(const double* terms, std::int64_t count, double n, double* out, void* stream) {
  sum_terms_kernel<<<1, kThreads, 0, as_stream(stream)>>>(terms, count, n, out);
  launched("summing the loss");
}

template <class T>
void edge_gradients(const T* gy, const T* base, const T* gW, const double* pw, const double* pb, const double* mask,
                    std::int64_t rows, std::int64_t O, std::int64_t I, double* g_bw, double* g_pw, double* g_pb,
                    void* stream) {
  if (!g_bw && !g_pw && !g_pb) return;
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>(O * I, 1 << 20));
  edge_gradients_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(gy, base, gW, pw, pb, mask, rows, O, I, g_bw, g_pw,
                                                                    g_pb);
  launched("the layer sum's gradients");
}

template <class T>
void add_base_gradient(const T* gy, const T* base_w, const T* slope, T* gx, std::int64_t rows, std::int64_t O,
                       std::int64_t I, void* stream) {
  if (rows * I == 0) return;
  add_base_gradient_kernel<<<blocks_for(rows * I), kThreads, 0, as_stream(stream)>>>(gy, base_w, slope, gx, rows, O, I);
  launched("the base branch's input gradient");
}

void adam(double* p, const double* g, double* m, double* v, std::int64_t n, const AdamStep& step, void* stream) {
  if (n == 0) return;
  adam_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(p, g, m, v, n, step);
  launched("the Adam step");
}

#define LOCKSTEP_MODEL_KERNELS(T)                                                                                     \
  template void layer_tables<T>(const double*, const double*, const double*, const double*, std::int64_t,             \
                                std::int64_t, T*, T*, T*, void*);                                                     \
  template void activate<T>(Activation, const T*, T*, T*, std::int64_t, void*);                                       \
  template void add_bias_and_base<T>(T*, const T*, const T*, const T*, std::int64_t, std::int64_t, std::int64_t,      \
                                     void*);                                                                          \
  template void loss_terms<T>(const T*, const double*, std::int64_t, std::int64_t, bool, double, T*, double*, void*); \
  template void edge_gradients<T>(const T*, const T*, const T*, const double*, const double*, const double*,          \
                                  std::int64_t, std::int64_t, std::int64_t, double*, double*, double*, void*);        \
  template void add_base_gradient<T>(const T*, const T*, const T*, T*, std::int64_t, std::int64_t, std::int64_t, void*);
template void convert<double, float>(const double*, float*, std::int64_t, void*);
template void convert<float, double>(const float*, double*, std::int64_t, void*);
template void convert<double, double>(const double*, double*, std::int64_t, void*);
LOCKSTEP_MODEL_KERNELS(float)
LOCKSTEP_MODEL_KERNELS(double)
#undef LOCKSTEP_MODEL_KERNELS

}  // namespace lockstep::qkan::detail::cuda_model
