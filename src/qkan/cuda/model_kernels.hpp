// The CUDA model's own kernels (model_kernels.cu), for model.cpp: the layer around the
// contracted solver, the losses and Adam. Each launches on `stream` and returns without
// waiting; launch failures throw std::runtime_error. T is float or double (the compute
// precision); parameters, losses and the gradient's batch sums are double. C++17 (nvcc).
#pragma once

#include <cstdint>

#include "lockstep/qkan/activation.hpp"
#include "src/qkan/adam_math.hpp"

namespace lockstep::qkan::detail::cuda_model {

/// to[e] = To(from[e]) for e < n.
template <class From, class To> void convert(const From* from, To* to, std::int64_t n, void* stream);

/// One layer's tables in T from its double parameters (each (O, I)): the contraction weight
/// W = pw·mask, the base weight bw·mask, and bias[o] = Σ_i pb·pw·mask (summed in double, in i order).
template <class T>
void layer_tables(const double* pw, const double* pb, const double* bw, const double* mask, std::int64_t O,
                  std::int64_t I, T* W, T* base_w, T* bias, void* stream);

/// base[e] = act(in[e]) and, when slope is not null, slope[e] = act'(in[e]), for e < n;
/// computed in double, rounded to T.
template <class T> void activate(Activation act, const T* in, T* base, T* slope, std::int64_t n, void* stream);

/// y[b, o] += bias[o] + Σ_i base[b, i]·base_w[o, i] (T, in i order), for y (rows, O).
template <class T>
void add_bias_and_base(T* y, const T* bias, const T* base, const T* base_w, std::int64_t rows, std::int64_t O,
                       std::int64_t I, void* stream);

/// Each row's loss term (mse: Σ_o (y − t)²; cross-entropy: −log softmax(y)[t], t a checked
/// class index) into terms (rows) in double and, when gy is not null, its gradient divided by
/// n into gy (rows, O).
template <class T>
void loss_terms(const T* y, const double* targets, std::int64_t rows, std::int64_t O, bool cross_entropy, double n,
                T* gy, double* terms, void* stream);

/// out[0] = Σ terms / n over `count` terms, in one fixed order.
void sum_terms(const double* terms, std::int64_t count, double n, double* out, void* stream);

/// The layer sum's parameter gradients per edge (o, i), sums over rows in double, each only
/// where its destination is not null: base_weight Σ_b gy·base·mask; postact_weights
/// (gW + Σ_b gy·pb)·mask; postact_bias Σ_b gy·pw·mask.
template <class T>
void edge_gradients(const T* gy, const T* base, const T* gW, const double* pw, const double* pb, const double* mask,
                    std::int64_t rows, std::int64_t O, std::int64_t I, double* g_bw, double* g_pw, double* g_pb,
                    void* stream);

/// The base branch's share of dL/dx: gx[b, i] += (Σ_o gy[b, o]·base_w[o, i])·slope[b, i] (T).
template <class T>
void add_base_gradient(const T* gy, const T* base_w, const T* slope, T* gx, std::int64_t rows, std::int64_t O,
                       std::int64_t I, void* stream);

/// Adam's update (adam_math.hpp) of n parameters p from gradients g, moments m and v.
void adam(double* p, const double* g, double* m, double* v, std::int64_t n, const AdamStep& step, void* stream);

}  // namespace lockstep::qkan::detail::cuda_model
