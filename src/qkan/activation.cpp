// The base activations by name and value (activation.hpp); their per-element math, shared with
// the CUDA model: activation_math.hpp.
#include "lockstep/qkan/activation.hpp"

#include "lockstep/core/error.hpp"
#include "src/qkan/activation_math.hpp"

namespace lockstep::qkan {

namespace {
constexpr std::string_view kWhere = "qkan.model";
}  // namespace

Activation parse_activation(std::string_view name) {
  if (name == "silu") return Activation::silu;
  if (name == "gelu") return Activation::gelu;
  if (name == "relu") return Activation::relu;
  if (name == "tanh") return Activation::tanh;
  if (name == "sigmoid") return Activation::sigmoid;
  invalid_argument(kWhere, "unknown base activation '", name, "'; supported: silu, gelu, relu, tanh, sigmoid");
}

const char* to_string(Activation a) {
  switch (a) {
    case Activation::silu: return "silu";
    case Activation::gelu: return "gelu";
    case Activation::relu: return "relu";
    case Activation::tanh: return "tanh";
    case Activation::sigmoid: return "sigmoid";
  }
  invalid_argument(kWhere, "unknown activation value");
}

using detail::with_activation;

double activate(Activation a, double x) {
  return with_activation(a, [x](auto act) {
    double unused = 0;
    return detail::activate_one<decltype(act)::value, false>(x, unused);
  });
}

}  // namespace lockstep::qkan
