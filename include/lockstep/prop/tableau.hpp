// Butcher tableaux of the interaction-picture schemes, as plain data.
//
// The stepper (stepper.hpp) is driven by these numbers only: no scheme has hand-written stage
// code. A tableau is explicit (A strictly lower triangular), its nodes c are non-decreasing
// and its rows sum to c.
#pragma once

#include <string>
#include <vector>

#include "lockstep/prop/config.hpp"

namespace lockstep::prop {

struct Tableau {
  std::string name;
  int order = 0;                       ///< order of the propagated solution (weights b)
  int embedded_order = 0;              ///< order of the embedded solution (weights b_hat); 0: none
  std::vector<std::vector<double>> a;  ///< s × s, strictly lower triangular
  std::vector<double> b;               ///< propagated weights
  std::vector<double> b_hat;           ///< embedded weights (empty: no error estimate)
  std::vector<double> c;               ///< nodes, non-decreasing, c[0] = 0
  /// First same as last: the last stage evaluates N at the new solution (its row of A equals b,
  /// its node is 1), so an accepted step hands that evaluation to the next step's first stage.
  bool fsal = false;
  /// The node σ ∈ [0, 1] at which the interaction picture is referenced inside a step: the
  /// step works with A_I = e^{−L(z − z_n − σh)} Ã. The result does not depend on σ in exact
  /// arithmetic; σ only decides which diagonal exponentials are needed (see stepper.hpp).
  double interaction_node = 0;
  /// Dense output: the weights b_j(θ) = Σ_{k=1..4} dense[j][k−1] θ^k of a continuous solution
  /// y(z_n + θh) = y_n + h Σ_j b_j(θ) k_j, θ ∈ [0, 1] (empty: no dense output).
  std::vector<std::vector<double>> dense;

  int stages() const { return static_cast<int>(c.size()); }
  bool has_error_estimate() const { return !b_hat.empty(); }
  bool has_dense_output() const { return !dense.empty(); }
  /// b_j(θ) for all j.
  std::vector<double> dense_weights(double theta) const;
};

/// Classical fourth-order Runge–Kutta in the interaction picture referenced at the midpoint
/// (Hult, J. Lightwave Technol. 25, 3770 (2007)): 4 stages, no error estimate.
const Tableau& rk4ip_tableau();
/// RK4IP with a fifth, FSAL stage N(y_{n+1}) that gives an embedded third-order solution
/// (Balac & Mahé, Comput. Phys. Commun. 184, 1211 (2013)). The embedded weights are
/// b_hat = (1/6, 1/3, 1/3, 1/15, 1/10); the order conditions leave exactly the one-parameter
/// family b_hat = b + x·(0, 0, 0, −1, 1), and x = 1/10 is the published choice.
const Tableau& erk43ip_tableau();
/// Dormand & Prince, J. Comput. Appl. Math. 6, 19 (1980), RK5(4)7M: 7 stages, FSAL, the
/// fifth-order solution propagated, with the fourth-order continuous extension of Hairer,
/// Nørsett & Wanner (Solving ODEs I, §II.6) as dense output.
const Tableau& dp54ip_tableau();
/// The tableau of a configured scheme.
const Tableau& tableau(Scheme scheme);

}  // namespace lockstep::prop
