// The base activations of a QKAN layer (docs/QKAN.md §4). (C++17: CUDA units include it.)
#pragma once

#include <string_view>

namespace lockstep::qkan {

enum class Activation { silu, gelu, relu, tanh, sigmoid };
/// "silu", "gelu", "relu", "tanh" or "sigmoid"; anything else throws std::invalid_argument.
Activation parse_activation(std::string_view name);
const char* to_string(Activation a);
/// The activation of one value (gelu is the exact, erf form, as torch's default).
double activate(Activation a, double x);

}  // namespace lockstep::qkan
