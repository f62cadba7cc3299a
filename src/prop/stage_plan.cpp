#include "lockstep/prop/stage_plan.hpp"

#include <cstddef>

namespace lockstep::prop {

namespace {
std::size_t idx(int i) { return static_cast<std::size_t>(i); }
}  // namespace

StagePlan::StagePlan(const Tableau& tableau) : stages(tableau.stages()), sigma(tableau.interaction_node) {
  const int s = stages;
  fsal_stage = tableau.fsal && tableau.b[idx(s - 1)] == 0;
  k_needed.assign(idx(s), tableau.has_dense_output() ? 1 : 0);
  stage_inputs.resize(idx(s));
  for (int i = 1; i < s; ++i) {
    if (fsal_stage && i == s - 1) continue;  // its input is the candidate itself
    stage_inputs[idx(i)] = make_consumer(tableau, tableau.c[idx(i)], true, tableau.a[idx(i)]);
  }
  solution = make_consumer(tableau, 1.0, true, tableau.b);
  if (tableau.has_error_estimate()) {
    std::vector<double> e(idx(s));
    for (int j = 0; j < s; ++j) e[idx(j)] = tableau.b[idx(j)] - tableau.b_hat[idx(j)];
    error = make_consumer(tableau, 1.0, false, e);
  }
  k_exponential.assign(idx(s), -1);
  for (int j = 0; j < s; ++j)
    if (k_needed[idx(j)] && tableau.c[idx(j)] != sigma) k_exponential[idx(j)] = delta_index(sigma - tableau.c[idx(j)]);
  if (sigma != 0) frame_exponential = delta_index(sigma);
  n_needed.assign(idx(s), 0);
  for (int j = 0; j < s; ++j) n_needed[idx(j)] = k_needed[idx(j)] && k_exponential[idx(j)] < 0;
  if (fsal_stage) n_needed[idx(s - 1)] = 1;
  for (const Consumer* c : {&solution, &error})
    for (const Term& t : c->direct) n_needed[idx(t.stage)] = 1;
  for (const Consumer& c : stage_inputs)
    for (const Term& t : c.direct) n_needed[idx(t.stage)] = 1;
}

int StagePlan::delta_index(double delta) {
  for (std::size_t i = 0; i < deltas.size(); ++i)
    if (deltas[i] == delta) return static_cast<int>(i);
  deltas.push_back(delta);
  return static_cast<int>(deltas.size() - 1);
}

StagePlan::Consumer StagePlan::make_consumer(const Tableau& tableau, double node, bool has_y0,
                                             const std::vector<double>& weights) {
  Consumer out;
  if (has_y0) (node == 0 ? out.direct_y0 : out.frame_y0) = true;
  for (int j = 0; j < stages; ++j) {
    const double w = weights[idx(j)];
    if (w == 0) continue;
    if (tableau.c[idx(j)] == node) {
      out.direct.push_back(Term{j, w});
    } else {
      out.frame.push_back(Term{j, w});
      k_needed[idx(j)] = 1;
    }
  }
  if (out.has_frame() && node != sigma) out.exponential = delta_index(node - sigma);
  return out;
}

}  // namespace lockstep::prop
