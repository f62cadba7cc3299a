// What a runner advances: the fields of one batch of members and the trial of one step for all
// of them (docs/PROPAGATION.md §3). The runner's logic — schedules, step control, policies, planes,
// statistics, ledgers — is the same on every device; an engine holds the fields where its
// device computes on them and hands the runner only what it books: per-member norms after a
// trial, measures after an acceptance, and rows of spectra when a plane is saved.
//
// Two engines: host_engine.hpp (the Stepper over a Problem, on the CPU) and cuda_engine.hpp
// (the whole batch as device arrays, batched cuFFT).
#pragma once

#include <complex>
#include <cstdint>
#include <span>

#include "lockstep/core/tensor.hpp"
#include "lockstep/prop/controller.hpp"
#include "lockstep/prop/measures.hpp"
#include "lockstep/prop/tableau.hpp"

namespace lockstep::prop {

/// How a trial's nonlinear evaluations are made.
enum class Evaluation {
  per_member,  ///< the reference: each member's trial and norm in turn
  batched,     ///< one evaluation per stage over all members, element-wise work threaded
};

/// How the CUDA engine computes (cuda_engine.hpp).
struct CudaOptions {
  /// A trial's kernels replayed as a CUDA graph (captured at the first trial); false: launched
  /// one by one.
  bool graphs = true;
  /// Each evaluation of N as one kernel, a thread block per member with cuFFTDx's transforms,
  /// where this build has it for the grid and precision (cuda_engine.hpp's
  /// cuda_fused_evaluation_available); elsewhere, and with false, cuFFT's batched transforms
  /// and element-wise kernels.
  bool fused_evaluation = true;
  /// With the fused evaluation: the batch split into this many contiguous ranges of members
  /// (at most one per member), each range's trial on a stream of its own (branches of the
  /// captured graph), so that one range's streaming passes (the frame, k_0, the error norms)
  /// run beside another's evaluations. The evaluation kernel fills a multiprocessor's
  /// registers with one member and keeps little memory traffic in flight; the passes are
  /// memory-bound. 1: the whole batch as one range.
  int lanes = 2;
  /// false: the ranges' trials run one after another on the engine's stream instead (chunks),
  /// so that the rows a stage writes for a range are read by its next stage while they are
  /// still in L2 (a whole batch's row, 134 MB at 1024 members of 2^13 points, is not).
  bool concurrent_lanes = true;
  /// With the fused evaluation: the share of the device's L2 cache, in [0, 1], that each
  /// evaluation asks to be filled ahead of time, while its transforms run, with the stage rows
  /// of the members whose blocks take the multiprocessors next (and with the rows its own
  /// candidate reads after its transforms). The kernel holds one member per multiprocessor and
  /// reads its rows before its transforms, so without this, memory is idle while every block
  /// transforms and the transforms wait while every block loads. 0: no prefetch.
  double l2_prefetch = 0.5;
};

/// Which engine runs a batch of GNLSE members, and how (make_gnlse_engine, physics_problem.hpp).
struct EngineOptions {
  Device device = Device::cpu;
  /// f64, or f32 (CUDA only): the fields, stage values and transforms in single precision.
  DType precision = DType::f64;
  /// CPU threads (≤ 0: lockstep::num_threads()); the CPU engine only.
  int threads = 0;
  /// CUDA only.
  CudaOptions cuda;
};

/// Working memory per member of the engine `options` selects (select_batch's budget): host
/// bytes on the CPU, device bytes on CUDA. The one place that chooses by device, with
/// make_gnlse_engine.
std::int64_t engine_bytes_per_member(const EngineOptions& options, const Tableau& tableau, std::int64_t points);

class Engine {
 public:
  using Complex = std::complex<double>;
  virtual ~Engine() = default;

  virtual const Tableau& tableau() const = 0;
  virtual std::int64_t members() const = 0;
  virtual std::int64_t points() const = 0;

  /// Sets `member`'s current solution (points() values, FFT order) and its error control.
  virtual void load(std::int64_t member, const Complex* spectrum, const ErrorControl& control) = 0;

  /// Starts the trial of a step of length h (m) for every member: candidates and norms. The
  /// CUDA engine returns once the trial is queued on the device, the CPU engine once it is
  /// computed; finish_trial() returns when it is complete. In between, only tableau(), members(),
  /// points() and measures() (of the current solution) may be called; norm(), finite() and
  /// evaluations() tell of the new trial after finish_trial(). (The runner books the step it
  /// accepted last while the device computes the next one.)
  virtual void start_trial(double h, Evaluation evaluation) = 0;
  virtual void finish_trial() = 0;
  /// start_trial(), then finish_trial().
  void trial(double h, Evaluation evaluation) {
    start_trial(h, evaluation);
    finish_trial();
  }
  /// The N-evaluations `member`'s last trial used and the one-dimensional FFTs each costs.
  virtual int evaluations(std::int64_t member) const = 0;
  virtual std::int64_t ffts_per_evaluation(std::int64_t member) const = 0;
  /// The last trial's error norm of `member` (NaN when the tableau has no error estimate) …
  virtual double norm(std::int64_t member) const = 0;
  /// … and whether its candidate is finite.
  virtual bool finite(std::int64_t member) const = 0;

  /// Makes every member's candidate its solution, then applies each member's windows.
  virtual void accept() = 0;
  /// The measures of `member`'s current solution (after load() or accept()).
  virtual FieldMeasures measures(std::int64_t member) = 0;
  /// Copies every member's current solution to the host: rows[i] receives points() values.
  /// The copy may complete later (the CUDA engine streams it while stepping goes on): the rows
  /// are written, and must stay valid, until finish_reads() returns or the engine is destroyed
  /// (which waits for them). Any number of reads may be in flight; each holds the state as it
  /// was at its call.
  virtual void read_solutions(std::span<Complex* const> rows) = 0;
  /// After accept(): every member's dense output Ã(z_n + θh) of the accepted step, θ ∈ [0, 1]
  /// (before windows), into rows[i], completed as read_solutions'. Only for tableaux with dense
  /// output.
  virtual void read_dense_output(double theta, std::span<Complex* const> rows) = 0;
  /// Returns when every row of the reads above is written.
  virtual void finish_reads() = 0;
};

}  // namespace lockstep::prop
