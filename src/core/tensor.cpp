#include "lockstep/core/tensor.hpp"

#include <stdexcept>

namespace lockstep {

const char* to_string(DType d) { return d == DType::f32 ? "float32" : "float64"; }
const char* to_string(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }
std::size_t size_of(DType d) { return d == DType::f32 ? 4 : 8; }

std::string to_string(const Shape& shape) {
  std::string s = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) s += (k ? "," : "") + std::to_string(shape[k]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) {
    if (d < 0) throw std::invalid_argument("negative dimension in shape " + to_string(shape));
    if (d != 0 && n > INT64_MAX / d)
      throw std::overflow_error("shape " + to_string(shape) + " has more than 2^63 elements");
    n *= d;
  }
  return n;
}

}  // namespace lockstep
