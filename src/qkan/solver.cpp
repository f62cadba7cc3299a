// Front end of the solver: validate (problem.cpp), check outputs, pick the path (the one
// dispatch point), call it.
#include "lockstep/qkan/solver.hpp"

#include <cstring>
#include <string>
#include <tuple>

#include "lockstep/core/backend.hpp"
#include "lockstep/core/error.hpp"
#include "problem.hpp"

namespace lockstep::qkan {

using namespace detail;

const char* to_string(Path p) {
  switch (p) {
    case Path::automatic: return "automatic";
    case Path::reference: return "reference";
    case Path::fused: return "fused";
  }
  return "?";
}

Path parse_path(std::string_view name) {
  if (name == "automatic" || name == "auto") return Path::automatic;
  if (name == "reference") return Path::reference;
  if (name == "fused") return Path::fused;
  invalid_argument("qkan", "unknown path '", name, "'; supported: automatic, reference, fused");
}

namespace {

// build_summary() (backend.hpp) names the SIMD target the CPU kernels chose on this machine.
const bool kReported =
    (report_in_build_summary(+[] { return std::string("CPU SIMD target ") + fused_target(); }), true);

std::string implements(const Problem& p) {
  return to_string(p.ansatz) + std::string(", ") + lockstep::to_string(p.dtype) +
         (p.encoding ? ", encoding on" : ", encoding off");
}

/// CUDA tensors run on the CUDA kernels or not at all: the reference path is host code.
Dispatch choose_cuda(const Options& opt, const Problem& p) {
  if (!LOCKSTEP_WITH_CUDA)
    invalid_argument("qkan",
                     "CUDA tensors were given but this build of lockstep has no CUDA backend "
                     "(configured with LOCKSTEP_CUDA=OFF or without nvcc)");
  if (opt.path == Path::reference)
    invalid_argument("qkan", "the reference path runs on the CPU; pass CPU tensors to use it");
  if (const char* why_not = fused_unsupported(p))
    invalid_argument("qkan", "the CUDA kernels cannot run this call: ", why_not,
                     "; pass CPU tensors to use the reference path");
  return {Path::fused, "fused CUDA kernels implement " + implements(p)};
}

Dispatch choose(const Options& opt, const Problem& p) {
  if (p.device == Device::cuda) return choose_cuda(opt, p);
  const char* why_not = fused_unsupported(p);
  switch (opt.path) {
    case Path::reference: return {Path::reference, "reference path requested"};
    case Path::fused:
      if (why_not) invalid_argument("qkan", "the fused path was requested but ", why_not);
      [[fallthrough]];
    case Path::automatic:
      if (why_not) return {Path::reference, std::string("fused path unavailable: ") + why_not};
      return {Path::fused, std::string("fused CPU kernels (") + fused_target() + ") implement " + implements(p)};
  }
  invalid_argument("qkan", "unknown path value");
}

void forward(Path path, const Problem& p, void* out) {
  if (p.device == Device::cuda) cuda_forward(p, out);
  else if (path == Path::fused) fused_forward(p, out);
  else reference_forward(p, out);
}

void backward(Path path, const Problem& p, const void* gout, const GradPtrs& g) {
  if (p.device == Device::cuda) cuda_backward(p, gout, g);
  else if (path == Path::fused) fused_backward(p, gout, g);
  else reference_backward(p, gout, g);
}

/// Checks the requested gradient views against their inputs and returns typed pointers.
/// Without the encoding, w and c do not enter the circuit: their gradients are zero.
GradPtrs grad_ptrs(std::string_view where, const Problem& p, const Grads& g, const ConstTensor& x,
                   const ConstTensor& theta, const ConstTensor& w, const ConstTensor& c, const ConstTensor* W) {
  GradPtrs out;
  auto take = [&](const char* name, const MutTensor& t, const ConstTensor& like) -> void* {
    if (!t.given()) return nullptr;
    if (!like.given()) invalid_argument(where, "grad ", name, " was requested but ", name, " is missing");
    check_output(where, ("grad " + std::string(name)).c_str(), t, p, like.shape);
    return t.data;
  };
  out.x = take("x", g.x, x);
  out.theta = take("theta", g.theta, theta);
  out.w = take("preacts_weight", g.w, w);
  out.c = take("preacts_bias", g.c, c);
  if (W) out.W = take("weight", g.W, *W);
  else if (g.W.given()) invalid_argument(where, "grad weight was requested from a plain solve, which has no weight");
  if (!p.encoding) {
    for (auto [ptr, t] : {std::pair{out.w, &w}, std::pair{out.c, &c}}) {
      if (!ptr) continue;
      const std::size_t bytes = numel(t->shape) * size_of(p.dtype);
      if (p.device == Device::cuda) cuda_zero(ptr, bytes, p.stream);
      else std::memset(ptr, 0, bytes);
    }
    out.w = out.c = nullptr;
  }
  return out;
}

}  // namespace

Dispatch explain(const Options& opt, DType dtype, Device device) {
  check_options("qkan.explain", opt);
  Problem p;
  p.device = device;
  p.ansatz = opt.ansatz;
  p.reps = opt.reps;
  p.dtype = dtype;
  p.encoding = encoding_active(opt.ansatz, opt.preacts_trainable);
  return choose(opt, p);
}

Shape solve_output_shape(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                         const ConstTensor& c) {
  const Problem p = resolve("qkan.solve", Kind::solve, opt, x, theta, w, c, nullptr);
  return {p.B, p.O_edges, p.I};
}

void solve_forward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                   const ConstTensor& c, const MutTensor& postacts) {
  constexpr const char* where = "qkan.solve";
  const Problem p = resolve(where, Kind::solve, opt, x, theta, w, c, nullptr);
  check_output(where, "postacts", postacts, p, {p.B, p.O_edges, p.I});
  forward(choose(opt, p).path, p, postacts.data);
}

void solve_backward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                    const ConstTensor& c, const ConstTensor& grad_postacts, const Grads& grads) {
  constexpr const char* where = "qkan.solve_backward";
  const Problem p = resolve(where, Kind::solve, opt, x, theta, w, c, nullptr);
  check_input(where, "grad_postacts", grad_postacts, p, {p.B, p.O_edges, p.I});
  const Path path = choose(opt, p).path;  // may refuse: before any gradient buffer is touched
  backward(path, p, grad_postacts.data, grad_ptrs(where, p, grads, x, theta, w, c, nullptr));
}

void contract_forward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                      const ConstTensor& c, const ConstTensor& W, const MutTensor& y) {
  constexpr const char* where = "qkan.contract";
  const Problem p = resolve(where, Kind::contract, opt, x, theta, w, c, &W);
  check_output(where, "y", y, p, {p.B, p.O});
  forward(choose(opt, p).path, p, y.data);
}

void contract_backward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                       const ConstTensor& c, const ConstTensor& W, const ConstTensor& grad_y, const Grads& grads) {
  constexpr const char* where = "qkan.contract_backward";
  const Problem p = resolve(where, Kind::contract, opt, x, theta, w, c, &W);
  check_input(where, "grad_y", grad_y, p, {p.B, p.O});
  const Path path = choose(opt, p).path;  // may refuse: before any gradient buffer is touched
  backward(path, p, grad_y.data, grad_ptrs(where, p, grads, x, theta, w, c, &W));
}

namespace {

/// The contraction's Problem with the layer's terms checked and attached; CUDA only.
Problem layer_problem(std::string_view where, const Options& opt, const ConstTensor& x, const ConstTensor& theta,
                      const ConstTensor& w, const ConstTensor& c, const ConstTensor& pw, const LayerTerms& terms) {
  Problem p = resolve(where, Kind::contract, opt, x, theta, w, c, &pw);
  if (p.device != Device::cuda)
    invalid_argument(where,
                     "the fused layer runs on CUDA tensors; on the CPU, use contract_forward and the base branch");
  check_input(where, "postact_bias", terms.postact_bias, p, {p.O, p.I});
  check_input(where, "base_weight", terms.base_weight, p, {p.O, p.I});
  if (terms.mask.given()) check_input(where, "mask", terms.mask, p, {p.O, p.I});
  p.layer = true;
  p.pb = terms.postact_bias.data;
  p.bw = terms.base_weight.data;
  p.mask = terms.mask.given() ? terms.mask.data : nullptr;
  return p;
}

}  // namespace

void layer_forward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                   const ConstTensor& c, const ConstTensor& postact_weights, const LayerTerms& terms,
                   const MutTensor& y) {
  constexpr const char* where = "qkan.layer";
  const Problem p = layer_problem(where, opt, x, theta, w, c, postact_weights, terms);
  check_output(where, "y", y, p, {p.B, p.O});
  choose(opt, p);  // refuses what the kernels do not implement
  cuda_forward(p, y.data);
}

void layer_backward(const Options& opt, const ConstTensor& x, const ConstTensor& theta, const ConstTensor& w,
                    const ConstTensor& c, const ConstTensor& postact_weights, const LayerTerms& terms,
                    const ConstTensor& grad_y, const Grads& grads, const LayerGrads& layer_grads) {
  constexpr const char* where = "qkan.layer_backward";
  const Problem p = layer_problem(where, opt, x, theta, w, c, postact_weights, terms);
  check_input(where, "grad_y", grad_y, p, {p.B, p.O});
  choose(opt, p);  // may refuse: before any gradient buffer is touched
  GradPtrs g = grad_ptrs(where, p, grads, x, theta, w, c, &postact_weights);
  for (auto [ptr, t, name] : {std::tuple{&g.pb, &layer_grads.postact_bias, "grad postact_bias"},
                              std::tuple{&g.bw, &layer_grads.base_weight, "grad base_weight"}}) {
    if (!t->given()) continue;
    check_output(where, name, *t, p, {p.O, p.I});
    *ptr = t->data;
  }
  cuda_backward(p, grad_y.data, g);
}

}  // namespace lockstep::qkan
