// The training losses by name and the checks of their inputs and targets (model.hpp); the per-row math,
// shared with the CUDA model: loss_math.hpp.
#include <cmath>

#include "lockstep/core/error.hpp"
#include "lockstep/qkan/model.hpp"

namespace lockstep::qkan {

namespace {
constexpr std::string_view kWhere = "qkan.model";
}  // namespace

void check_inputs(const Model& m, std::span<const double> x, std::int64_t B) {
  if (B < 0 || static_cast<std::int64_t>(x.size()) != B * m.widths.front())
    invalid_argument(kWhere, "x has ", x.size(), " values, expected B·", m.widths.front(), " = ", B * m.widths.front());
}

void check_targets(const Model& m, std::span<const double> t, std::int64_t B, Loss kind) {
  const std::int64_t O = m.widths.back();
  if (kind == Loss::mse && static_cast<std::int64_t>(t.size()) != B * O)
    invalid_argument(kWhere, "mse targets have ", t.size(), " values, expected B·O = ", B * O);
  if (kind != Loss::cross_entropy) return;
  if (static_cast<std::int64_t>(t.size()) != B)
    invalid_argument(kWhere, "cross-entropy targets have ", t.size(), " values, expected B = ", B);
  for (std::int64_t r = 0; r < B; ++r) {
    const double c = t[r];
    if (!(c >= 0 && c < double(O) && c == std::floor(c)))
      invalid_argument(kWhere, "cross-entropy target ", c, " of row ", r, " is not a class index in [0, ", O, ")");
  }
}

Loss parse_loss(std::string_view name) {
  if (name == "mse") return Loss::mse;
  if (name == "cross_entropy" || name == "ce") return Loss::cross_entropy;
  invalid_argument(kWhere, "unknown loss '", name, "'; supported: mse, cross_entropy");
}

}  // namespace lockstep::qkan
