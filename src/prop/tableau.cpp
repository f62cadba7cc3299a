#include "lockstep/prop/tableau.hpp"

#include "lockstep/core/error.hpp"

namespace lockstep::prop {

std::vector<double> Tableau::dense_weights(double theta) const {
  std::vector<double> w(dense.size());
  for (std::size_t j = 0; j < dense.size(); ++j) {
    double acc = 0, power = theta;
    for (double coefficient : dense[j]) {
      acc += coefficient * power;
      power *= theta;
    }
    w[j] = acc;
  }
  return w;
}

namespace {

Tableau make_rk4ip() {
  Tableau t;
  t.name = "rk4ip";
  t.order = 4;
  t.a = {{0, 0, 0, 0}, {0.5, 0, 0, 0}, {0, 0.5, 0, 0}, {0, 0, 1, 0}};
  t.b = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};
  t.c = {0, 0.5, 0.5, 1};
  // Midpoint reference: every exponential is e^{Lh/2} (Hult's form).
  t.interaction_node = 0.5;
  return t;
}

Tableau make_erk43ip() {
  Tableau t = make_rk4ip();
  t.name = "erk43ip";
  t.embedded_order = 3;
  for (auto& row : t.a) row.push_back(0);
  t.a.push_back({1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6, 0});
  t.b.push_back(0);
  t.b_hat = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 15, 1.0 / 10};
  t.c.push_back(1);
  t.fsal = true;
  return t;
}

Tableau make_dp54ip() {
  Tableau t;
  t.name = "dp54ip";
  t.order = 5;
  t.embedded_order = 4;
  t.c = {0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1};
  t.a = {
      {0, 0, 0, 0, 0, 0, 0},
      {1.0 / 5, 0, 0, 0, 0, 0, 0},
      {3.0 / 40, 9.0 / 40, 0, 0, 0, 0, 0},
      {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0, 0},
      {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0, 0},
      {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0, 0},
      {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0},
  };
  t.b = t.a[6];
  t.b_hat = {5179.0 / 57600, 0, 7571.0 / 16695, 393.0 / 640, -92097.0 / 339200, 187.0 / 2100, 1.0 / 40};
  t.fsal = true;
  // Referenced at the end of the step: the solution and the error estimate need no further
  // exponential, and the dense output needs one e^{L(θ−1)h} per plane.
  t.interaction_node = 1;
  // Hairer's continuous extension: y(θ) − y_n = θ[hB + (1−θ)(h(k1 − B) + θ(h(2B − k1 − k7)
  // + (1−θ) h Σ d_j k_j))] with B = Σ b_j k_j; expanded below into powers of θ.
  const std::vector<double> d = {-12715105075.0 / 11282082432.0,  0,
                                 87487479700.0 / 32700410799.0,   -10690763975.0 / 1880347072.0,
                                 701980252875.0 / 199316789632.0, -1453857185.0 / 822651844.0,
                                 69997945.0 / 29380423.0};
  t.dense.resize(7);
  for (int j = 0; j < 7; ++j) {
    const double first = j == 0 ? 1 : 0;  // δ_{j,1}
    const double last = j == 6 ? 1 : 0;   // δ_{j,7}
    const double e = 2 * t.b[j] - first - last;
    t.dense[j] = {first, -(first - t.b[j]) + e + d[j], -e - 2 * d[j], d[j]};
  }
  return t;
}

}  // namespace

const Tableau& rk4ip_tableau() {
  static const Tableau t = make_rk4ip();
  return t;
}
const Tableau& erk43ip_tableau() {
  static const Tableau t = make_erk43ip();
  return t;
}
const Tableau& dp54ip_tableau() {
  static const Tableau t = make_dp54ip();
  return t;
}

const Tableau& tableau(Scheme scheme) {
  switch (scheme) {
    case Scheme::rk4ip: return rk4ip_tableau();
    case Scheme::erk43ip: return erk43ip_tableau();
    case Scheme::dp54ip: return dp54ip_tableau();
  }
  invalid_argument("prop.tableau", "stepping.scheme has an unknown value");
}

}  // namespace lockstep::prop
