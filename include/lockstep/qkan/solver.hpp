// The QKAN circuit solver (docs/QKAN.md §1-4): the plain solve, postacts[b,o,i] = φ_{o,i}(x[b,i]),
// and the contracted solve, y[b,o] = Σ_i postacts[b,o,i]·W[o,i], each with a first-order,
// state-free backward.
//
// Inputs (all one dtype, f32 or f64, C-contiguous, all on one device: CPU or CUDA):
//   x      (B, I)
//   theta  (O, I, R', k) natural, or (g, R', k) / (1, g, R', k) grouped: edge (o, i) uses row i mod g.
//          R' = reps + 1 (reps for `real`), k = 2 for pz/mix, 1 otherwise.
//   w, c   preacts weight / bias, (O, I, reps) or (g, reps) / (1, g, reps); read only when the
//          encoding is active (preacts_trainable, always for rpz); may be omitted otherwise.
//   W      (O, I), the contraction weight (postact weight · mask).
// The plain output is (B, O', I) with O' = 1 when every table read is grouped with g == I
// (the circuit does not depend on o), else O' = O = out_dim, as in qkan's torch_exact_solver.
//
// Numbers: NaN in gives NaN out. px needs the encoding active; |w·x + c| > 1 gives NaN (arccos).
#pragma once

#include <cstdint>
#include <string>

#include "lockstep/core/tensor.hpp"
#include "lockstep/qkan/ansatz.hpp"

namespace lockstep::qkan {

/// Which implementation runs a call.
enum class Path {
  automatic,  ///< the fused path when it implements the configuration, else the reference
  reference,  ///< plain double-precision spinor simulation
  fused,      ///< threads + SIMD (CPU) or CUDA kernels; throws if it does not implement the configuration
};

const char* to_string(Path path);
Path parse_path(std::string_view name);

struct Options {
  Ansatz ansatz = Ansatz::pz;
  int reps = 3;
  bool preacts_trainable = false;
  bool fast_measure = true;   ///< |α| - |β| (true) or ⟨Z⟩ = |α|² - |β|² (false)
  std::int64_t out_dim = -1;  ///< O for the plain solve; -1 means I (upstream's default)
  Path path = Path::automatic;
  /// For CUDA tensors: the cudaStream_t to launch on (nullptr: the legacy default stream).
  /// Calls on CUDA tensors are asynchronous on that stream, never synchronise the host and
  /// never allocate, so they can be captured in a CUDA graph. Ignored for CPU tensors.
  /// Synchronisation: a call returns once its kernels are queued on `stream`; they read the
  /// inputs and write the outputs when that stream reaches them, so the views' memory must stay
  /// allocated, and unwritten by other streams, until then (torch's allocator keeps a tensor
  /// for the stream it was made on; see torch.Tensor.record_stream for others). The solver keeps
  /// no state between calls and no memory of its own: calls on different streams, threads or
  /// processes never share anything but their inputs.
  void* stream = nullptr;
};

/// The path a call with these options and dtype would take, and why.
struct Dispatch {
  Path path;
  std::string reason;
};
Dispatch explain(const Options& opt, DType dtype, Device device = Device::cpu);

/// Shape of the plain solve's output, (B, O', I).
Shape solve_output_shape(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                         const ConstTensor& c);

/// Gradients to compute; a view left empty (data == nullptr) is skipped. Each given view is
/// overwritten (not accumulated into) and has the shape of its input.
struct Grads {
  MutTensor x, theta, w, c;
  MutTensor W;  ///< contracted solve only
};

void solve_forward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                   const ConstTensor& c, const MutTensor& postacts);

/// grad_postacts has the shape of the forward output.
void solve_backward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                    const ConstTensor& c, const ConstTensor& grad_postacts, const Grads& grads);

/// y is (B, O) with O = W.shape[0]; out_dim, when set, must equal it.
void contract_forward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                      const ConstTensor& c, const ConstTensor& W, const MutTensor& y);

/// grad_y is (B, O).
void contract_backward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                       const ConstTensor& c, const ConstTensor& W, const ConstTensor& grad_y, const Grads& grads);

/// A whole QKAN layer with a SiLU base branch, in one call each way (CUDA tensors only; on the
/// CPU, contract_forward and the base branch compose it):
///   y[b,o] = Σ_i W[o,i]·(postacts[b,o,i] + pb[o,i]) + Σ_i Wb[o,i]·silu(x[b,i]),
///   W = postact_weights·mask, Wb = base_weight·mask,
/// the contraction's W argument being the postact weights. Each term is (O, I); mask may be
/// omitted (all ones).
struct LayerTerms {
  ConstTensor postact_bias, base_weight, mask;
};
/// Gradients of the postact bias and the base weight (the postact weights' is Grads::W), each
/// skipped when empty, overwritten when given.
struct LayerGrads {
  MutTensor postact_bias, base_weight;
};

void layer_forward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                   const ConstTensor& c, const ConstTensor& postact_weights, const LayerTerms& terms,
                   const MutTensor& y);

void layer_backward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                    const ConstTensor& c, const ConstTensor& postact_weights, const LayerTerms& terms,
                    const ConstTensor& grad_y, const Grads& grads, const LayerGrads& layer_grads);

}  // namespace lockstep::qkan
