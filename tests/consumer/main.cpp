// Uses each installed engine once: a QKAN model's forward on the CPU engine, and a propagation
// recipe parsed into its grid. Prints what it computed; exits non-zero on a wrong answer.
#include <cmath>
#include <cstdio>

#include "lockstep/core/backend.hpp"
#include "lockstep/qkan/model_engine.hpp"
#include "lockstep/qkan/train.hpp"
#if WITH_PROP
#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/recipe.hpp"
#endif

int main() {
  using namespace lockstep;
  qkan::Model model = qkan::init_model({2, 3, 1}, 2, qkan::ModelOptions{}, 1);
  const auto engine = qkan::make_model_engine(model, Device::cpu);
  const auto rows = engine->make_rows();
  engine->load(*rows, std::vector<double>{0.1, -0.2, 0.3, 0.4}, 2);
  const std::vector<double> y = engine->forward(*rows);
  if (y.size() != 2 || !std::isfinite(y[0]) || !std::isfinite(y[1])) return 1;
  std::printf("%s\nqkan forward: %g %g\n", build_summary().c_str(), y[0], y[1]);
#if WITH_PROP
  const prop::Recipe recipe = prop::parse_recipe("[grid]\npoints = 1024\n", "consumer");
  const prop::Grid grid(recipe.config.grid);
  if (grid.size() != 1024) return 1;
  std::printf("prop grid: %lld points\n", static_cast<long long>(grid.size()));
#endif
  return 0;
}
