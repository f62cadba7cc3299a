// What one interaction-picture RK step computes, derived from a tableau once (stepper.hpp's
// header gives the derivation): for every consumer of stage values (each stage input, the
// solution, the error estimate) its terms at its own node ("direct") and in the interaction
// frame ("frame", then one exponential D((c − σ)h)), which stages need k_j = D((σ − c_j)h) N_j,
// and the distinct exponents x of the D(xh) used. The CPU stepper and the CUDA engine execute
// the same plan.
#pragma once

#include <vector>

#include "lockstep/prop/tableau.hpp"

namespace lockstep::prop {

struct StagePlan {
  struct Term {
    int stage;
    double weight;  // multiplied by h
  };
  // A linear combination evaluated at node c.
  struct Consumer {
    bool direct_y0 = false, frame_y0 = false;  // Ã_n directly (c = 0) or A_I = D(σh)Ã_n
    std::vector<Term> direct, frame;
    int exponential = -1;  // index into deltas of D((c − σ)h); −1: none
    bool has_frame() const { return frame_y0 || !frame.empty(); }
  };

  explicit StagePlan(const Tableau& tableau);

  int stages;
  double sigma;                        // the interaction node
  bool fsal_stage;                     // the last stage is N(candidate)
  std::vector<Consumer> stage_inputs;  // index i ≥ 1 (entry 0 unused; the FSAL stage's unused)
  Consumer solution, error;            // error: only with an error estimate
  std::vector<char> k_needed;          // per stage: k_j is used
  std::vector<int> k_exponential;      // per stage: index into deltas, −1 when c_j = σ (k_j = N_j)
  std::vector<char> n_needed;          // per stage: N_j itself is read (a direct term, k_j = N_j,
                                       // or the FSAL stage, the next step's first)
  int frame_exponential = -1;          // D(σh) for A_I, −1 when σ = 0
  std::vector<double> deltas;          // the distinct exponents x of D(xh)

 private:
  Consumer make_consumer(const Tableau& tableau, double node, bool has_y0, const std::vector<double>& weights);
  int delta_index(double delta);
};

}  // namespace lockstep::prop
