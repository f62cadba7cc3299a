// A validated solver call: sizes, the table layouts of θ / w / c, and typed pointers.
// Both paths (reference and fused) consume a Problem; validation lives only here.
#pragma once

#include <cstdint>
#include <string_view>

#include "lockstep/qkan/solver.hpp"
#include "src/qkan/schedule.hpp"

namespace lockstep::qkan::detail {

using lockstep::to_string;
using qkan::to_string;

/// Where edge (o, i) finds its row in a per-edge table: row = (po == 1 ? 0 : o)·pi + i mod pi.
struct TableLayout {
  std::int64_t po = 1, pi = 1;
  LOCKSTEP_HD std::int64_t row(std::int64_t o, std::int64_t i) const { return (po == 1 ? 0 : o) * pi + i % pi; }
  std::int64_t rows() const { return po * pi; }
  /// True when the table does not depend on o and has one row per input (g == I).
  bool shared_over_o(std::int64_t I) const { return po == 1 && pi == I; }
};

enum class Kind { solve, contract };

struct Problem {
  Kind kind = Kind::solve;
  Ansatz ansatz = Ansatz::pz;
  int reps = 3;
  int R = 4;  ///< θ rows per edge
  int K = 2;  ///< θ columns per row
  bool encoding = false;
  bool fast_measure = true;
  DType dtype = DType::f32;
  Device device = Device::cpu;
  void* stream = nullptr;            ///< CUDA stream (cudaStream_t) of a CUDA call
  std::int64_t B = 0, I = 0, O = 0;  ///< O: the contraction's (or plain solve's out_dim) output size
  std::int64_t O_edges = 0;          ///< distinct circuits over o: 1 or O (see solver.hpp)
  TableLayout theta_layout, pre_layout;
  const void* x = nullptr;
  const void* theta = nullptr;
  const void* w = nullptr;
  const void* c = nullptr;
  const void* W = nullptr;  ///< contraction weight (O, I), contract only
  /// A whole layer (layer_forward): W holds the postact weights, and y gains
  /// Σ_i W·mask·pb + Σ_i bw·mask·silu(x) (solver.hpp's LayerTerms); mask may be null (ones).
  bool layer = false;
  const void* pb = nullptr;
  const void* bw = nullptr;
  const void* mask = nullptr;
};

/// Validates a call (shapes, dtypes, options) and returns its Problem; throws
/// std::invalid_argument naming the offending argument, prefixed by [where].
Problem resolve(std::string_view where, Kind kind, const Options& opt, const ConstTensor& x, const ConstTensor& theta,
                const ConstTensor& w, const ConstTensor& c, const ConstTensor* W);

/// Checks the options alone (ansatz value, reps >= 1, px needs the encoding).
void check_options(std::string_view where, const Options& opt);

/// Checks that an output or gradient view has p's dtype and device and the expected shape.
void check_output(std::string_view where, const char* name, const MutTensor& t, const Problem& p,
                  const Shape& expected);
void check_input(std::string_view where, const char* name, const ConstTensor& t, const Problem& p,
                 const Shape& expected);

/// Typed destinations of a backward; nullptr skips that gradient.
struct GradPtrs {
  void* x = nullptr;
  void* theta = nullptr;
  void* w = nullptr;
  void* c = nullptr;
  void* W = nullptr;
  void* pb = nullptr;  ///< layer only: postact bias
  void* bw = nullptr;  ///< layer only: base weight
};

/// The two paths. `out` is postacts (B, O_edges, I) for Kind::solve and y (B, O) for
/// Kind::contract; `grad_out` has the same shape. Gradients are overwritten.
void reference_forward(const Problem& p, void* out);
void reference_backward(const Problem& p, const void* grad_out, const GradPtrs& g);
void fused_forward(const Problem& p, void* out);
void fused_backward(const Problem& p, const void* grad_out, const GradPtrs& g);
/// nullptr when the fused path implements p, else why not.
const char* fused_unsupported(const Problem& p);
/// The CUDA backend (src/qkan/cuda/dispatch.cpp over the kernels of kernels.cuh, compiled per
/// ansatz and dtype from instantiate.cu.in; src/qkan/no_cuda.cpp throws when CUDA is off).
/// Launches on p.stream without synchronising or allocating.
void cuda_forward(const Problem& p, void* out);
void cuda_backward(const Problem& p, const void* grad_out, const GradPtrs& g);
/// Zeroes `bytes` of device memory on `stream` (asynchronously).
void cuda_zero(void* ptr, std::size_t bytes, void* stream);
/// Name of the SIMD target the fused CPU path dispatches to on this machine ("AVX3", "AVX2", ...).
const char* fused_target();

}  // namespace lockstep::qkan::detail
