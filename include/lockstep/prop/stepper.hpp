// The interaction-picture Runge–Kutta stepper over a batch, driven by tableau data.
//
// Derivation. With D(x) = e^{L x} (diagonal in ω) and the picture referenced at z_n + σh,
// A_I(z) = D(z_n + σh − z) Ã(z) obeys dA_I/dz = D(z_n + σh − z) N(D(z − z_n − σh) A_I). An
// explicit RK step on A_I with stage values k_j = D((σ − c_j)h) N(u_j) gives, back in the
// physical frame at node c,
//     u_i     = D(c_i h) Ã_n + h Σ_j a_ij D((c_i − c_j)h) N_j
//     Ã_{n+1} = D(h) Ã_n     + h Σ_j b_j  D((1 − c_j)h)  N_j,
// which does not depend on σ: σ only decides where the exponentials fall. The stepper evaluates
// each consumer (a stage input, the solution, the error estimate) at node c as
//     [direct]  Ã_n if c = 0, and h Σ a_j N_j over stages with c_j = c, plus
//     [frame]   D((c − σ)h) (A_I + h Σ a_j k_j) over the other stages, A_I = D(σh) Ã_n,
// so terms at the consumer's own node need no exponential. For RK4 with σ = ½ (Hult's RK4IP)
// this is exactly Hult's algorithm: one exponential e^{Lh/2}, applied 4 times per step
// (to Ã_n, to N_1, to the input of the last stage and to the solution), and 4 evaluations of N.
// DP5(4) is referenced at σ = 1 (10 diagonal products; the solution and the error need none).
// Exponentials of a negative argument (e^{+α…} with loss) occur for some nodes; they are bounded
// by e^{αh/2} and a step so long that they overflow yields a non-finite trial, which an adaptive
// run answers by halving the step.
//
// The exponentials are cached for the last step length (a fixed schedule recomputes them only
// when dz changes) and shared by members with the same L(ω) (a shot-noise ensemble computes
// them once per step). FSAL tableaux hand N(y_{n+1}) to the next step.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "lockstep/prop/controller.hpp"
#include "lockstep/prop/problem.hpp"
#include "lockstep/prop/stage_plan.hpp"
#include "lockstep/prop/tableau.hpp"

namespace lockstep::prop {

/// Allocates on 64-byte boundaries, so that every row of an even number of complex values
/// starts aligned: the FFT plans of NonlinearBatch then read every row directly (a misaligned
/// row takes a copying path whose rounding may differ, which would break the bit-identity of a
/// member alone and in a batch).
template <class T> struct AlignedAllocator {
  using value_type = T;
  static constexpr std::size_t kAlignment = 64;
  AlignedAllocator() = default;
  template <class U> AlignedAllocator(const AlignedAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{kAlignment})); }
  void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{kAlignment}); }
  template <class U> bool operator==(const AlignedAllocator<U>&) const { return true; }
};

class Stepper {
 public:
  /// A stepper for the problem's members (slot i = problem member i).
  Stepper(const Tableau& tableau, Problem& problem);

  const Tableau& tableau() const { return tableau_; }
  std::int64_t members() const { return members_; }
  std::int64_t points() const { return n_; }

  /// Sets `member`'s current solution Ã_n (points() values) and error control; forgets its FSAL
  /// evaluation.
  void load(std::int64_t member, const Complex* spectrum, const ErrorControl& control);
  /// Replaces the current solution (e.g. after a window); forgets the FSAL evaluation.
  void replace(std::int64_t member, const Complex* spectrum);
  const Complex* solution(std::int64_t member) const { return row(y_, member); }

  /// Computes, for members [first, first + count), the trial of one step of length h (m):
  /// the candidate Ã_{n+1} and the member's error norm. The nonlinear operator is evaluated once
  /// per stage over all `count` members together.
  void trial(std::int64_t first, std::int64_t count, double h);
  /// The N-evaluations the member's last trial used (one fewer when FSAL supplied the first).
  int evaluations(std::int64_t member) const { return evaluations_[static_cast<std::size_t>(member)]; }
  const Complex* candidate(std::int64_t member) const { return row(candidate_, member); }
  /// The last trial's error norm (NaN when the tableau has no error estimate) …
  double norm(std::int64_t member) const { return norm_[static_cast<std::size_t>(member)]; }
  /// … and whether its candidate is finite.
  bool finite(std::int64_t member) const { return finite_[static_cast<std::size_t>(member)] != 0; }
  /// Makes the candidate the current solution (FSAL: keeps N(candidate) for the next step).
  void accept(std::int64_t member);
  /// After accept(): the dense output Ã(z_n + θh), θ ∈ [0, 1], of the accepted step into `out`.
  /// Only for tableaux with dense output.
  void dense_output(std::int64_t member, double theta, Complex* out) const;

  /// Bytes of working memory per member for `tableau` at `points` samples (select_batch's budget).
  static std::int64_t bytes_per_member(const Tableau& tableau, std::int64_t points);

 private:
  using Rows = std::vector<Complex, AlignedAllocator<Complex>>;
  using Consumer = StagePlan::Consumer;
  // Computes the exponentials of `group` (members with one L(ω)) for step h at points
  // [begin, end).
  void update_exponentials(int group, double h, std::int64_t begin, std::int64_t end);
  void combine(const Consumer& consumer, std::int64_t member, double h, Complex* out) const;
  // N for stage `stage` of members [first, first + count) from rows of `inputs` (indexed by
  // member).
  void evaluate(int stage, std::int64_t first, std::int64_t count, const Complex* inputs);
  Complex* n_row(int stage, std::int64_t member) { return n_values_.data() + (stage * members_ + member) * n_; }
  const Complex* n_row(int stage, std::int64_t member) const {
    return n_values_.data() + (stage * members_ + member) * n_;
  }
  // k_j in the interaction frame: N_j itself when c_j = σ.
  const Complex* k_row(int stage, std::int64_t member) const {
    return plan_.k_exponential[static_cast<std::size_t>(stage)] < 0
               ? n_row(stage, member)
               : k_values_.data() + (stage * members_ + member) * n_;
  }
  const Complex* exponential(std::int64_t member, int index) const {
    return exponentials_.data() +
           (group_[static_cast<std::size_t>(member)] * static_cast<std::int64_t>(plan_.deltas.size()) + index) * n_;
  }

  Complex* row(Rows& v, std::int64_t member) { return v.data() + member * n_; }
  const Complex* row(const Rows& v, std::int64_t member) const { return v.data() + member * n_; }

  const Tableau& tableau_;
  Problem& problem_;
  std::int64_t members_, n_;
  StagePlan plan_;

  // Per member rows (members_ × n_), per stage rows (stages_ × members_ × n_).
  Rows y_, candidate_, frame_, inputs_, scratch_;
  Rows n_values_, k_values_, exponentials_;
  // Members whose L(ω) are equal share their exponentials (an ensemble computes them once).
  std::vector<std::int64_t> group_;           // per member
  std::vector<std::int64_t> representative_;  // per group: its first member
  std::vector<double> cached_h_;              // per group
  std::vector<double> trial_h_, norm_;
  std::vector<char> finite_, fsal_ready_, fsal_pending_;
  std::vector<ErrorControl> control_;
  std::vector<int> evaluations_;
};

}  // namespace lockstep::prop
