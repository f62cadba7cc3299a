// lockstep._lockstep: the validate-and-call shim between Python and the C++ QKAN solver.
//
// Arrays arrive through DLPack (zero copy from torch tensors or numpy arrays). The shim checks
// device (CPU, or CUDA when the module is built with it), dtype (float32/float64), C-contiguity
// and, for outputs, writability; it never converts or copies. The C++ API checks shapes and
// dtype agreement between arguments and throws std::invalid_argument naming the argument,
// which nanobind turns into ValueError (std::runtime_error into RuntimeError). Outputs and
// gradient buffers are allocated by the Python side and passed in. The GIL is released around
// every compute call. Autograd lives in Python (lockstep/qkan.py).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "lockstep/core/backend.hpp"
#include "lockstep/core/parallel.hpp"
#include "lockstep/core/tensor.hpp"
#include "lockstep/qkan/ansatz.hpp"
#include "lockstep/qkan/solver.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using lockstep::ConstTensor;
using lockstep::DType;
using lockstep::MutTensor;
using lockstep::Shape;
namespace q = lockstep::qkan;

/// Any array: constraints are checked below so that a mismatch is a ValueError naming the
/// argument, never a silent conversion (a converted output would be written to a copy).
/// Inputs are taken read-only; outputs must be writable (nanobind refuses read-only ones).
using Array = nb::ndarray<nb::ro>;
using OptArray = std::optional<Array>;
using OutArray = nb::ndarray<>;
using OptOutArray = std::optional<OutArray>;

[[noreturn]] void bad(std::string_view where, std::string_view name, const std::string& what) {
  throw std::invalid_argument("[" + std::string(where) + "] " + std::string(name) + " " + what);
}

std::string dtype_name(nb::dlpack::dtype dt) {
  const char* kind = "?";
  switch (static_cast<nb::dlpack::dtype_code>(dt.code)) {
    case nb::dlpack::dtype_code::Int: kind = "int"; break;
    case nb::dlpack::dtype_code::UInt: kind = "uint"; break;
    case nb::dlpack::dtype_code::Float: kind = "float"; break;
    case nb::dlpack::dtype_code::Bfloat: kind = "bfloat"; break;
    case nb::dlpack::dtype_code::Complex: kind = "complex"; break;
    case nb::dlpack::dtype_code::Bool: return "bool";
    default: break;
  }
  return kind + std::to_string(dt.bits);
}

template <class A> std::string shape_of(const A& a) {
  std::string s = "(";
  for (size_t k = 0; k < a.ndim(); ++k) s += (k ? "," : "") + std::to_string(a.shape(k));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

/// Validates device, dtype and C-contiguity; returns the view the C++ API takes.
template <class A> ConstTensor view(std::string_view where, std::string_view name, const A& a) {
  lockstep::Device device = lockstep::Device::cpu;
  if (a.device_type() == nb::device::cuda::value) {
    if (!lockstep::cuda_available())
      bad(where, name, "is a CUDA array, and lockstep was built without CUDA: move it to the CPU");
    device = lockstep::Device::cuda;
  } else if (a.device_type() != nb::device::cpu::value) {
    bad(where, name, "is on a device other than the CPU or CUDA");
  }
  DType dtype;
  if (a.dtype() == nb::dtype<float>()) dtype = DType::f32;
  else if (a.dtype() == nb::dtype<double>()) dtype = DType::f64;
  else bad(where, name, "has dtype " + dtype_name(a.dtype()) + "; expected float32 or float64");
  Shape shape(a.ndim());
  std::int64_t expect = 1;
  bool contiguous = true;
  for (size_t k = a.ndim(); k-- > 0;) {
    shape[k] = static_cast<std::int64_t>(a.shape(k));
    if (a.shape(k) != 1 && a.stride(k) != expect) contiguous = false;
    expect *= static_cast<std::int64_t>(a.shape(k));
  }
  if (!contiguous && a.size() > 1)
    bad(where, name, "with shape " + shape_of(a) + " is not C-contiguous (make it contiguous first)");
  if (a.size() > 0 && a.data() == nullptr) bad(where, name, "has no data");
  return {a.data(), dtype, std::move(shape), device};
}

ConstTensor view(std::string_view where, std::string_view name, const OptArray& a) {
  return a ? view(where, name, *a) : ConstTensor{};
}

MutTensor mut(std::string_view where, std::string_view name, const OptOutArray& a) {
  if (!a) return {};
  const ConstTensor v = view(where, name, *a);
  return {const_cast<void*>(v.data), v.dtype, v.shape, v.device};
}

/// The circuit's inputs, which every entry point takes, as views (checked in this order).
struct Inputs {
  ConstTensor x, theta, w, c;
};
Inputs inputs(std::string_view where, const Array& x, const Array& theta, const OptArray& w, const OptArray& c) {
  return {view(where, "x", x), view(where, "theta", theta), view(where, "preacts_weight", w),
          view(where, "preacts_bias", c)};
}

/// The gradient views of a backward call (None skips one); `weight` names the contraction's.
q::Grads grads_of(std::string_view where, const OptOutArray& x, const OptOutArray& theta, const OptOutArray& w,
                  const OptOutArray& c, const OptOutArray& W = std::nullopt, const char* weight = "grad_weight") {
  q::Grads g;
  g.x = mut(where, "grad_x", x);
  g.theta = mut(where, "grad_theta", theta);
  g.w = mut(where, "grad_preacts_weight", w);
  g.c = mut(where, "grad_preacts_bias", c);
  g.W = mut(where, weight, W);
  return g;
}

q::Options options(const std::string& ansatz, int reps, bool preacts_trainable, bool fast_measure, std::int64_t out_dim,
                   const std::string& path, std::uintptr_t stream) {
  q::Options o;
  o.ansatz = q::parse_ansatz(ansatz);
  o.reps = reps;
  o.preacts_trainable = preacts_trainable;
  o.fast_measure = fast_measure;
  o.out_dim = out_dim;
  o.path = q::parse_path(path);
  o.stream = reinterpret_cast<void*>(stream);
  return o;
}

DType parse_dtype(std::string_view name) {
  if (name == "float32" || name == "f32") return DType::f32;
  if (name == "float64" || name == "f64") return DType::f64;
  throw std::invalid_argument("[lockstep.explain] dtype must be 'float32' or 'float64', got '" + std::string(name) +
                              "'");
}

// The keyword-only options every solver entry point takes, with the C++ defaults.
#define LOCKSTEP_OPTION_ARGS                                                                                       \
  nb::kw_only(), "ansatz"_a = "pz_encoding", "reps"_a = 3, "preacts_trainable"_a = false, "fast_measure"_a = true, \
                 "out_dim"_a = -1, "path"_a = "automatic", "stream"_a = 0

#define LOCKSTEP_OPTION_PARAMS                                                                          \
  const std::string &ansatz, int reps, bool preacts_trainable, bool fast_measure, std::int64_t out_dim, \
      const std::string &path, std::uintptr_t stream

#define LOCKSTEP_OPTIONS options(ansatz, reps, preacts_trainable, fast_measure, out_dim, path, stream)

}  // namespace

#if LOCKSTEP_PYTHON_PROP
void add_prop_bindings(nb::module_& parent);  // prop_bindings.cpp
#endif

NB_MODULE(_lockstep, m) {
  m.doc() =
      "Low-level bindings of the lockstep C++ library (validate-and-call; no autograd). "
      "Use lockstep.qkan for the torch-facing API.";

  m.def(
      "version", [] { return std::string(lockstep::version()); }, "The library version, e.g. '0.1.0'.");
  m.def("build_summary", &lockstep::build_summary,
        "One line describing the build: version, CUDA on/off, SIMD target, threads.");
  m.def("cuda_available", &lockstep::cuda_available, "True when built with CUDA and a CUDA device is visible.");
  m.def("num_threads", &lockstep::num_threads, "Threads the CPU kernels use.");
  m.def("set_num_threads", &lockstep::set_num_threads, "n"_a,
        "Sets the CPU kernels' thread count for later calls (n >= 1).");

  // Test hook: throws the named C++ exception so the tests can check how nanobind translates
  // it (invalid_argument -> ValueError, runtime_error -> RuntimeError, overflow_error ->
  // OverflowError); the library's own runtime_error paths cannot be provoked from Python.
  m.def(
      "_raise_cpp_exception",
      [](const std::string& kind) {
        if (kind == "invalid_argument") throw std::invalid_argument("[test] invalid_argument");
        if (kind == "runtime_error") throw std::runtime_error("[test] runtime_error");
        if (kind == "overflow_error") throw std::overflow_error("[test] overflow_error");
        throw std::invalid_argument("[test] unknown kind '" + kind + "'");
      },
      "kind"_a);

  m.def(
      "explain",
      [](const std::string& dtype, const std::string& device, LOCKSTEP_OPTION_PARAMS) {
        if (device != "cpu" && device != "cuda")
          throw std::invalid_argument("[lockstep.explain] device must be 'cpu' or 'cuda', got '" + device + "'");
        const q::Dispatch d = q::explain(LOCKSTEP_OPTIONS, parse_dtype(dtype),
                                         device == "cuda" ? lockstep::Device::cuda : lockstep::Device::cpu);
        return std::make_pair(std::string(q::to_string(d.path)), d.reason);
      },
      "dtype"_a = "float32", "device"_a = "cpu", LOCKSTEP_OPTION_ARGS,
      "(path, reason): the path a call with these options, dtype and device would take, and why.");

  m.def(
      "solve_output_shape",
      [](const Array& x, const Array& theta, const OptArray& w, const OptArray& c, LOCKSTEP_OPTION_PARAMS) {
        constexpr const char* where = "qkan.solve";
        const Inputs in = inputs(where, x, theta, w, c);
        const Shape s = q::solve_output_shape(LOCKSTEP_OPTIONS, in.x, in.theta, in.w, in.c);
        return nb::make_tuple(s.at(0), s.at(1), s.at(2));
      },
      "x"_a, "theta"_a, "preacts_weight"_a.none(), "preacts_bias"_a.none(), LOCKSTEP_OPTION_ARGS,
      "Shape (B, O', I) of the plain solve's output.");

  m.def(
      "solve_forward",
      [](const Array& x, const Array& theta, const OptArray& w, const OptArray& c, const OutArray& postacts,
         LOCKSTEP_OPTION_PARAMS) {
        constexpr const char* where = "qkan.solve";
        const q::Options opt = LOCKSTEP_OPTIONS;
        const Inputs in = inputs(where, x, theta, w, c);
        const MutTensor out = mut(where, "postacts", OptOutArray(postacts));
        nb::gil_scoped_release release;
        q::solve_forward(opt, in.x, in.theta, in.w, in.c, out);
      },
      "x"_a, "theta"_a, "preacts_weight"_a.none(), "preacts_bias"_a.none(), "postacts"_a, LOCKSTEP_OPTION_ARGS,
      "Writes postacts (B, O', I).");

  m.def(
      "solve_backward",
      [](const Array& x, const Array& theta, const OptArray& w, const OptArray& c, const Array& grad_postacts,
         const OptOutArray& grad_x, const OptOutArray& grad_theta, const OptOutArray& grad_w, const OptOutArray& grad_c,
         LOCKSTEP_OPTION_PARAMS) {
        constexpr const char* where = "qkan.solve_backward";
        const q::Options opt = LOCKSTEP_OPTIONS;
        const Inputs in = inputs(where, x, theta, w, c);
        const ConstTensor vg = view(where, "grad_postacts", grad_postacts);
        const q::Grads g = grads_of(where, grad_x, grad_theta, grad_w, grad_c);
        nb::gil_scoped_release release;
        q::solve_backward(opt, in.x, in.theta, in.w, in.c, vg, g);
      },
      "x"_a, "theta"_a, "preacts_weight"_a.none(), "preacts_bias"_a.none(), "grad_postacts"_a, "grad_x"_a.none(),
      "grad_theta"_a.none(), "grad_preacts_weight"_a.none(), "grad_preacts_bias"_a.none(), LOCKSTEP_OPTION_ARGS,
      "Overwrites each given gradient buffer (None skips it).");

  m.def(
      "contract_forward",
      [](const Array& x, const Array& theta, const OptArray& w, const OptArray& c, const Array& weight,
         const OutArray& y, LOCKSTEP_OPTION_PARAMS) {
        constexpr const char* where = "qkan.contract";
        const q::Options opt = LOCKSTEP_OPTIONS;
        const Inputs in = inputs(where, x, theta, w, c);
        const ConstTensor vW = view(where, "weight", weight);
        const MutTensor out = mut(where, "y", OptOutArray(y));
        nb::gil_scoped_release release;
        q::contract_forward(opt, in.x, in.theta, in.w, in.c, vW, out);
      },
      "x"_a, "theta"_a, "preacts_weight"_a.none(), "preacts_bias"_a.none(), "weight"_a, "y"_a, LOCKSTEP_OPTION_ARGS,
      "Writes y (B, O) = sum_i postacts[b,o,i] * weight[o,i].");

  m.def(
      "contract_backward",
      [](const Array& x, const Array& theta, const OptArray& w, const OptArray& c, const Array& weight,
         const Array& grad_y, const OptOutArray& grad_x, const OptOutArray& grad_theta, const OptOutArray& grad_w,
         const OptOutArray& grad_c, const OptOutArray& grad_weight, LOCKSTEP_OPTION_PARAMS) {
        constexpr const char* where = "qkan.contract_backward";
        const q::Options opt = LOCKSTEP_OPTIONS;
        const Inputs in = inputs(where, x, theta, w, c);
        const ConstTensor vW = view(where, "weight", weight), vg = view(where, "grad_y", grad_y);
        const q::Grads g = grads_of(where, grad_x, grad_theta, grad_w, grad_c, grad_weight);
        nb::gil_scoped_release release;
        q::contract_backward(opt, in.x, in.theta, in.w, in.c, vW, vg, g);
      },
      "x"_a, "theta"_a, "preacts_weight"_a.none(), "preacts_bias"_a.none(), "weight"_a, "grad_y"_a, "grad_x"_a.none(),
      "grad_theta"_a.none(), "grad_preacts_weight"_a.none(), "grad_preacts_bias"_a.none(), "grad_weight"_a.none(),
      LOCKSTEP_OPTION_ARGS, "Overwrites each given gradient buffer (None skips it).");

  m.def(
      "layer_forward",
      [](const Array& x, const Array& theta, const OptArray& w, const OptArray& c, const Array& postact_weights,
         const Array& postact_bias, const Array& base_weight, const OptArray& mask, const OutArray& y,
         LOCKSTEP_OPTION_PARAMS) {
        constexpr const char* where = "qkan.layer";
        const q::Options opt = LOCKSTEP_OPTIONS;
        const Inputs in = inputs(where, x, theta, w, c);
        const ConstTensor vpw = view(where, "postact_weights", postact_weights);
        const q::LayerTerms terms{view(where, "postact_bias", postact_bias), view(where, "base_weight", base_weight),
                                  view(where, "mask", mask)};
        const MutTensor out = mut(where, "y", OptOutArray(y));
        nb::gil_scoped_release release;
        q::layer_forward(opt, in.x, in.theta, in.w, in.c, vpw, terms, out);
      },
      "x"_a, "theta"_a, "preacts_weight"_a.none(), "preacts_bias"_a.none(), "postact_weights"_a, "postact_bias"_a,
      "base_weight"_a, "mask"_a.none(), "y"_a, LOCKSTEP_OPTION_ARGS,
      "Writes y (B, O) of a whole layer with a SiLU base branch (CUDA tensors; see solver.hpp's LayerTerms).");

  m.def(
      "layer_backward",
      [](const Array& x, const Array& theta, const OptArray& w, const OptArray& c, const Array& postact_weights,
         const Array& postact_bias, const Array& base_weight, const OptArray& mask, const Array& grad_y,
         const OptOutArray& grad_x, const OptOutArray& grad_theta, const OptOutArray& grad_w, const OptOutArray& grad_c,
         const OptOutArray& grad_postact_weights, const OptOutArray& grad_postact_bias,
         const OptOutArray& grad_base_weight, LOCKSTEP_OPTION_PARAMS) {
        constexpr const char* where = "qkan.layer_backward";
        const q::Options opt = LOCKSTEP_OPTIONS;
        const Inputs in = inputs(where, x, theta, w, c);
        const ConstTensor vpw = view(where, "postact_weights", postact_weights), vg = view(where, "grad_y", grad_y);
        const q::LayerTerms terms{view(where, "postact_bias", postact_bias), view(where, "base_weight", base_weight),
                                  view(where, "mask", mask)};
        const q::Grads g =
            grads_of(where, grad_x, grad_theta, grad_w, grad_c, grad_postact_weights, "grad_postact_weights");
        const q::LayerGrads lg{mut(where, "grad_postact_bias", grad_postact_bias),
                               mut(where, "grad_base_weight", grad_base_weight)};
        nb::gil_scoped_release release;
        q::layer_backward(opt, in.x, in.theta, in.w, in.c, vpw, terms, vg, g, lg);
      },
      "x"_a, "theta"_a, "preacts_weight"_a.none(), "preacts_bias"_a.none(), "postact_weights"_a, "postact_bias"_a,
      "base_weight"_a, "mask"_a.none(), "grad_y"_a, "grad_x"_a.none(), "grad_theta"_a.none(),
      "grad_preacts_weight"_a.none(), "grad_preacts_bias"_a.none(), "grad_postact_weights"_a.none(),
      "grad_postact_bias"_a.none(), "grad_base_weight"_a.none(), LOCKSTEP_OPTION_ARGS,
      "Overwrites each given gradient buffer (None skips it).");

#if LOCKSTEP_PYTHON_PROP
  add_prop_bindings(m);
#endif
}
