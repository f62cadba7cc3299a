// The CUDA engine (cuda_engine.hpp): the stepper of stepper.hpp executed as device kernels over
// the whole batch (launch.hpp), from the same StagePlan.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "device_physics.hpp"
#include "fft_plan.hpp"
#include "launch.hpp"
#include "lockstep/core/backend.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/prop/cuda_engine.hpp"
#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/stage_plan.hpp"
#include "plane_reader.hpp"
#include "src/core/cuda/runtime.hpp"

namespace lockstep::prop {

namespace {

constexpr const char* kWhere = "prop.cuda_engine";

namespace rt = ::lockstep::cuda;

void check(cudaError_t e, const char* what) { rt::check(e, kWhere, what); }

// Whether the FSAL evaluation forms the error norms (cuda::ErrorTarget, its partial estimate
// in a row of its own) instead of a pass of their own (cuda::norms).
bool fsal_forms_norms(const Tableau& tableau, const StagePlan& plan, bool fused) {
  return fused && plan.fsal_stage && tableau.has_error_estimate();
}

std::int64_t rows_per_member(const Tableau& tableau, const StagePlan& plan, bool fused) {
  // y, candidate, A_I, time samples; N_j and k_j per stage; exponentials (one per exponent
  // plus the dense output's) and physics (L: 1, γs: ½, H_R: ½, windows: 1) per group, counted
  // per member; cuFFT's work area (1); the planes on their way to the host (2). The fused path
  // needs the time row and work area for time windows only; they are counted all the same. The
  // cuFFT path also needs the stage input and the intensity with its half spectrum (1 each);
  // the fused path, where the FSAL evaluation forms the norms, the partial estimate (1).
  const std::int64_t rows = 4 + 2 * plan.stages + static_cast<std::int64_t>(plan.deltas.size()) + 1 + 3 + 1 + 2;
  if (fused) return fsal_forms_norms(tableau, plan, fused) ? rows + 1 : rows;
  return rows + 2;
}

template <class R> class CudaEngine final : public Engine {
  using Cx = cuda::C<R>;

 public:
  CudaEngine(std::span<const Config* const> configs, const Tableau& tableau, const CudaOptions& options)
      : CudaEngine(fitting_the_device(make_batch_physics(configs), tableau, options), tableau, options) {}
  ~CudaEngine() override {
    // A trial may still run (an error between start_trial() and finish_trial()): it finishes
    // before anything is freed (the reader waits for its planes itself).
    cudaStreamSynchronize(stream_);
  }

  const Tableau& tableau() const override { return tableau_; }
  std::int64_t members() const override { return m_; }
  std::int64_t points() const override { return n_; }
  void load(std::int64_t member, const Complex* spectrum, const ErrorControl& control) override;
  void start_trial(double h, Evaluation evaluation) override;
  void finish_trial() override;
  int evaluations(std::int64_t) const override { return evaluations_; }
  std::int64_t ffts_per_evaluation(std::int64_t) const override { return physics_.raman ? 4 : 2; }
  double norm(std::int64_t member) const override { return norms_.get()[2 * checked(member)]; }
  bool finite(std::int64_t member) const override { return norms_.get()[2 * checked(member) + 1] != 0; }
  void accept() override;
  FieldMeasures measures(std::int64_t member) override;
  void read_solutions(std::span<Complex* const> rows) override;
  void read_dense_output(double theta, std::span<Complex* const> rows) override;
  void finish_reads() override { reader_.finish(); }

 private:
  // Members [first, first + count), whose kernels run on `stream`.
  struct Range {
    std::int64_t first, count;
    cudaStream_t stream;
  };
  // A range of members whose trial runs on a stream of its own (CudaOptions::lanes), joined
  // back into stream_ by `done`; or on stream_ itself (CudaOptions::concurrent_lanes false).
  struct Lane {
    Range range;
    rt::Stream own;  // range.stream, where the lanes run concurrently
    rt::Event done{kWhere};
  };
  // A trial's kernels captured once per arrangement of the rows they read (the FSAL stage's
  // row and the solution swap places from step to step).
  struct CapturedTrial {
    bool fsal_ready;
    const Cx* first_stage;
    const Cx* solution;
    rt::GraphExec exec;
  };

  CudaEngine(const BatchPhysics& batch, const Tableau& tableau, const CudaOptions& options);
  /// `batch`, where the engine's memory fits the device; DeviceMemoryExhausted otherwise
  /// (refused clearly rather than failing in the middle of an allocation).
  static BatchPhysics fitting_the_device(BatchPhysics batch, const Tableau& tableau, const CudaOptions& options);

  std::int64_t checked(std::int64_t member) const {
    if (member < 0 || member >= m_) invalid_argument(kWhere, "member ", member, " outside [0, ", m_, ")");
    return member;
  }
  std::int64_t total() const { return m_ * n_; }
  /// `count` zeros on the engine's device, in its stream's order.
  template <class T> rt::DeviceBuffer<T> device_array(std::int64_t count) const {
    return rt::DeviceBuffer<T>(count, stream_, kWhere);
  }
  const Cx* k_row(int stage) const {
    return plan_.k_exponential[static_cast<std::size_t>(stage)] < 0 ? n_rows_[static_cast<std::size_t>(stage)]
                                                                    : k_rows_[static_cast<std::size_t>(stage)];
  }
  /// Exponential `index` of group 0; group g's is exponential_stride() further on.
  const Cx* exponential(int index) const { return exponentials_.get() + index * n_; }
  std::int64_t exponential_stride() const { return static_cast<std::int64_t>(plan_.deltas.size()) * n_; }
  cuda::Combination<R> combination(const StagePlan::Consumer& c) const;
  cuda::StageOutput<R> stage_output(int stage, Cx* input) const;
  Range whole_batch() const { return {0, m_, stream_}; }
  void combine(const cuda::Combination<R>& c, Cx* out, const Range& range);
  void update_exponentials(double h);
  void evaluate(const cuda::Combination<R>& input, const cuda::StageOutput<R>& out, const Range& range);
  void enqueue_trial();
  void enqueue_trial(const Range& range);
  void launch_trial();
  void apply_windows();
  void compute_measures();
  cuda::MeasureTarget measure_target(double* out) const {
    return {out, physics_.omega.get(), grid_.omega0(), grid_.dt(), kHbar};
  }
  Cx* claim_plane(std::span<Complex* const> rows);
  void upload_loaded();

  const Tableau& tableau_;
  StagePlan plan_;
  Grid grid_;
  std::int64_t m_, n_;
  // The stepping stream, declared before every buffer, so that it outlives them.
  rt::Stream stepping_stream_{kWhere};
  cudaStream_t stream_ = stepping_stream_.get();
  cuda::DevicePhysics<R> physics_;
  cuda::DeviceErrorControls controls_;
  bool use_graphs_;
  bool fused_;               // each evaluation of N as one kernel (fused_evaluation.cu), where the build has it
  cuda::Prefetch prefetch_;  // the fused evaluation's (CudaOptions::l2_prefetch)
  std::vector<std::unique_ptr<Lane>> lanes_;  // empty: the trial runs as one range on stream_
  rt::Event fork_{kWhere};                    // the lanes start from stream_
  std::vector<CapturedTrial> graphs_;
  // An FSAL stage and no windows: N(candidate) is the next step's first stage, and the trial
  // measures the candidate (windows change the solution after the trial).
  bool fsal_carries_ = false;

  rt::DeviceBuffer<Cx> exponentials_;  // groups × deltas × n (group stride deltas·n)
  rt::DeviceBuffer<Cx> dense_exponential_;
  // Rows (members × n)
  rt::DeviceBuffer<Cx> y_, candidate_, frame_, input_, time_, stage_values_, k_values_;
  std::vector<Cx*> n_rows_, k_rows_;  // per stage
  rt::DeviceBuffer<R> intensity_;
  rt::DeviceBuffer<Cx> half_spectrum_;
  std::unique_ptr<cuda::FftPlan> c2c_, r2c_, c2r_;
  // The step length of the trial, on the device (the captured kernels read it there)
  rt::DeviceBuffer<double> step_;
  rt::PinnedBuffer<double> step_host_;
  // Results copied back
  rt::DeviceBuffer<double> device_norms_, device_measures_, device_candidate_measures_;
  rt::PinnedBuffer<double> norms_, measures_, candidate_measures_;  // candidate's: where fsal_carries_
  rt::PinnedBuffer<Cx> staging_;                                    // rows loaded (allocated at the first load)
  std::vector<char> loaded_;  // per member: a staged row waits for upload_loaded()
  cuda::PlaneReader<R> reader_;

  // Without an FSAL stage, when the solution takes the last stage's N as a direct term (and
  // not its k): the solution's other terms and that weight, so that the last evaluation writes
  // the candidate (StageOutput::candidate); otherwise empty and a pass of its own forms it.
  std::optional<StagePlan::Consumer> solution_rest_;
  double solution_last_weight_ = 0;
  // On the fused path with an FSAL stage and an error estimate: the estimate's other terms and
  // the FSAL stage's weight, so that the FSAL evaluation forms the error norm
  // (cuda::ErrorTarget, its partial estimate parked in error_); otherwise empty and a pass of
  // its own (cuda::norms) does.
  std::optional<StagePlan::Consumer> error_rest_;
  double error_fsal_weight_ = 0;
  rt::DeviceBuffer<Cx> error_;

  double cached_h_ = std::numeric_limits<double>::quiet_NaN(), trial_h_ = 0;
  bool fsal_ready_ = false, fsal_pending_ = false, measures_stale_ = true;
  bool in_flight_ = false;  // a trial started and not finished
  int evaluations_ = 0;
};

template <class R>
BatchPhysics CudaEngine<R>::fitting_the_device(BatchPhysics batch, const Tableau& tableau, const CudaOptions& options) {
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  const auto members = static_cast<std::int64_t>(batch.physics.size());
  const std::int64_t points = batch.grid.size();
  const std::int64_t needed =
      members * cuda_engine_bytes_per_member(tableau, points, sizeof(R) == 8 ? DType::f64 : DType::f32, options);
  if (needed > static_cast<std::int64_t>(free_bytes))
    device_memory_exhausted(kWhere, members, " members of ", points, " points need about ", needed / 1048576,
                            " MiB of device memory; ", free_bytes / 1048576,
                            " MiB are free (run fewer members per batch)");
  return batch;
}

template <class R>
CudaEngine<R>::CudaEngine(const BatchPhysics& batch, const Tableau& tableau, const CudaOptions& options)
    : tableau_(tableau),
      plan_(tableau),
      grid_(batch.grid),
      m_(static_cast<std::int64_t>(batch.physics.size())),
      n_(grid_.size()),
      physics_(batch, stream_),
      controls_(m_, stream_),
      use_graphs_(options.graphs),
      fused_(options.fused_evaluation && cuda::fused_evaluation_supported<R>(n_)),
      loaded_(static_cast<std::size_t>(m_), 0),
      reader_(m_, n_, stream_) {
  if (options.lanes < 1) invalid_argument(kWhere, "lanes = ", options.lanes, " must be ≥ 1");
  if (!(options.l2_prefetch >= 0 && options.l2_prefetch <= 1))
    invalid_argument(kWhere, "l2_prefetch = ", options.l2_prefetch, " must lie in [0, 1]");
  if (static_cast<int>(plan_.deltas.size()) > cuda::Exponents::kMax)
    invalid_argument(kWhere, tableau.name, " needs more exponentials than the engine supports");
  const int s = plan_.stages;
  const auto is_last = [s](const StagePlan::Term& t) { return t.stage == s - 1; };
  if (!plan_.fsal_stage && s > 1) {
    const auto& direct = plan_.solution.direct;
    if (std::count_if(direct.begin(), direct.end(), is_last) == 1 &&
        std::none_of(plan_.solution.frame.begin(), plan_.solution.frame.end(), is_last)) {
      StagePlan::Consumer rest = plan_.solution;
      const auto last = std::find_if(rest.direct.begin(), rest.direct.end(), is_last);
      solution_last_weight_ = last->weight;
      rest.direct.erase(last);
      solution_rest_ = std::move(rest);
    }
  }
  if (fsal_forms_norms(tableau, plan_, fused_)) {
    // The FSAL stage sits at the error's node (c = 1): its term, if any, is a direct one.
    StagePlan::Consumer rest = plan_.error;
    const auto last = std::find_if(rest.direct.begin(), rest.direct.end(), is_last);
    if (last != rest.direct.end()) {
      error_fsal_weight_ = last->weight;
      rest.direct.erase(last);
    }
    error_rest_ = std::move(rest);
  }
  fsal_carries_ = plan_.fsal_stage && !physics_.frequency_windows && !physics_.time_windows;

  // Lanes on the fused path only: the cuFFT path's plans transform the whole batch.
  const std::int64_t lanes = fused_ ? std::min<std::int64_t>(options.lanes, m_) : 1;
  for (std::int64_t l = 0; lanes > 1 && l < lanes; ++l) {
    auto lane = std::make_unique<Lane>();
    // Contiguous ranges, the first m % lanes one member longer.
    lane->range.first = l * (m_ / lanes) + std::min(l, m_ % lanes);
    lane->range.count = m_ / lanes + (l < m_ % lanes ? 1 : 0);
    lane->range.stream = stream_;
    if (options.concurrent_lanes) {
      lane->own = rt::Stream(kWhere);
      lane->range.stream = lane->own.get();
    }
    lanes_.push_back(std::move(lane));
  }

  exponentials_ = device_array<Cx>(physics_.groups * exponential_stride());
  if (tableau.has_dense_output()) dense_exponential_ = device_array<Cx>(physics_.groups * n_);
  for (rt::DeviceBuffer<Cx>* rows : {&y_, &candidate_, &frame_}) *rows = device_array<Cx>(total());
  if (!fused_) input_ = device_array<Cx>(total());
  if (error_rest_) error_ = device_array<Cx>(total());
  // The complex plan and its time row: the cuFFT path's evaluations and measures, and the
  // time windows on either path.
  if (!fused_ || physics_.time_windows) {
    time_ = device_array<Cx>(total());
    c2c_ = std::make_unique<cuda::FftPlan>(cuda::Fft<R>::c2c, n_, m_, stream_);
  }
  stage_values_ = device_array<Cx>(s * total());
  k_values_ = device_array<Cx>(s * total());
  for (int j = 0; j < s; ++j) {
    n_rows_.push_back(stage_values_.get() + j * total());
    k_rows_.push_back(k_values_.get() + j * total());
  }
  if (fused_) {
    const int per_multiprocessor = cuda::prepare_fused_evaluation<R>(n_, physics_.raman);
    int device = 0, multiprocessors = 0, l2 = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
    prefetch_.ahead = std::int64_t{per_multiprocessor} * multiprocessors;
    if (prefetch_.ahead > 0) prefetch_.budget = static_cast<std::int64_t>(options.l2_prefetch * l2) / prefetch_.ahead;
  } else if (physics_.raman) {
    intensity_ = device_array<R>(total());
    half_spectrum_ = device_array<Cx>(m_ * (n_ / 2 + 1));
    r2c_ = std::make_unique<cuda::FftPlan>(cuda::Fft<R>::r2c, n_, m_, stream_);
    c2r_ = std::make_unique<cuda::FftPlan>(cuda::Fft<R>::c2r, n_, m_, stream_);
  }
  device_norms_ = device_array<double>(2 * m_);
  device_measures_ = device_array<double>(4 * m_);
  if (fsal_carries_) {
    device_candidate_measures_ = device_array<double>(4 * m_);
    candidate_measures_ = rt::PinnedBuffer<double>(4 * m_, kWhere);
  }
  step_ = device_array<double>(1);
  step_host_ = rt::PinnedBuffer<double>(1, kWhere);
  norms_ = rt::PinnedBuffer<double>(2 * m_, kWhere);
  measures_ = rt::PinnedBuffer<double>(4 * m_, kWhere);
  std::fill(norms_.get(), norms_.get() + 2 * m_, std::numeric_limits<double>::quiet_NaN());
  // The zero fills and uploads above are complete before the first call.
  check(cudaStreamSynchronize(stream_), "construction");
}

template <class R> void CudaEngine<R>::load(std::int64_t member, const Complex* spectrum, const ErrorControl& control) {
  checked(member);
  if (in_flight_) runtime_failure(kWhere, "load() before finish_trial()");
  // Staged on the host; upload_loaded() copies the staged rows in one transfer when all
  // members were loaded (a run's start), row by row otherwise.
  if (!staging_) staging_ = rt::PinnedBuffer<Cx>(total(), kWhere);
  Cx* row = staging_.get() + member * n_;
  for (std::int64_t k = 0; k < n_; ++k)
    row[k] = {static_cast<R>(spectrum[k].real()), static_cast<R>(spectrum[k].imag())};
  loaded_[static_cast<std::size_t>(member)] = 1;
  controls_.set(member, control);
  fsal_ready_ = fsal_pending_ = false;
  measures_stale_ = true;
}

template <class R> void CudaEngine<R>::upload_loaded() {
  const auto count = std::count(loaded_.begin(), loaded_.end(), 1);
  if (count == 0) return;
  if (count == m_) {
    check(cudaMemcpyAsync(y_.get(), staging_.get(), sizeof(Cx) * static_cast<std::size_t>(total()),
                          cudaMemcpyHostToDevice, stream_),
          "load");
  } else {
    for (std::int64_t i = 0; i < m_; ++i)
      if (loaded_[static_cast<std::size_t>(i)])
        check(cudaMemcpyAsync(y_.get() + i * n_, staging_.get() + i * n_, sizeof(Cx) * static_cast<std::size_t>(n_),
                              cudaMemcpyHostToDevice, stream_),
              "load");
  }
  // The staging rows are reused by the next read: the copy must have finished.
  check(cudaStreamSynchronize(stream_), "load");
  std::fill(loaded_.begin(), loaded_.end(), 0);
}

template <class R> cuda::Combination<R> CudaEngine<R>::combination(const StagePlan::Consumer& c) const {
  cuda::Combination<R> out;
  constexpr int kMax = cuda::Combination<R>::kMaxTerms;
  if (static_cast<int>(c.frame.size()) > kMax || static_cast<int>(c.direct.size()) > kMax)
    runtime_failure(kWhere, "a tableau with more than ", kMax, " stages in one combination");
  if (c.frame_y0) out.frame_y0 = frame_.get();
  for (const auto& t : c.frame) {
    out.frame[out.frames] = k_row(t.stage);
    out.frame_weight[out.frames++] = static_cast<R>(t.weight);
  }
  if (c.direct_y0) out.direct_y0 = y_.get();
  for (const auto& t : c.direct) {
    out.direct[out.directs] = n_rows_[static_cast<std::size_t>(t.stage)];
    out.direct_weight[out.directs++] = static_cast<R>(t.weight);
  }
  out.step = step_.get();
  if (c.exponential >= 0) {
    out.exponential = exponential(c.exponential);
    out.group_stride = exponential_stride();
  }
  return out;
}

// Stage j's evaluation writes N_j where something reads it and k_j = D((σ − c_j)h) N_j where
// that differs from N_j, so no pass of its own forms k_j.
template <class R> cuda::StageOutput<R> CudaEngine<R>::stage_output(int stage, Cx* input) const {
  const auto j = static_cast<std::size_t>(stage);
  cuda::StageOutput<R> out;
  out.input = input;
  if (plan_.n_needed[j]) out.n = n_rows_[j];
  if (plan_.k_needed[j] && plan_.k_exponential[j] >= 0) {
    out.k = k_rows_[j];
    out.k_exponential = exponential(plan_.k_exponential[j]);
    out.group_stride = exponential_stride();
  }
  return out;
}

template <class R> void CudaEngine<R>::combine(const cuda::Combination<R>& c, Cx* out, const Range& range) {
  cuda::combine<R>(cuda::from_member(c, range.first, n_), physics_.group.get() + range.first, out + range.first * n_,
                   n_, range.count, range.stream);
}

template <class R> void CudaEngine<R>::update_exponentials(double h) {
  cuda::Exponents e;
  e.count = static_cast<int>(plan_.deltas.size());
  if (e.count == 0) return;
  for (int d = 0; d < e.count; ++d) e.x[d] = plan_.deltas[static_cast<std::size_t>(d)] * h;
  cuda::exponentials<R>(physics_.linear.get(), e, exponentials_.get(), n_, physics_.groups, stream_);
}

template <class R>
void CudaEngine<R>::evaluate(const cuda::Combination<R>& input, const cuda::StageOutput<R>& out, const Range& range) {
  if (fused_) {
    const std::int64_t f = range.first;
    cuda::fused_evaluation<R>(cuda::from_member(input, f, n_), cuda::from_member(out, f, n_), physics_.group.get() + f,
                              physics_.raman ? physics_.raman_response.get() : nullptr, physics_.gamma_shock.get(),
                              physics_.kerr.get() + f, physics_.raman_coefficient.get() + f, n_, range.count, prefetch_,
                              range.stream);
    return;
  }
  // The cuFFT path has no lanes: the range is the whole batch, on stream_.
  // The input row: Ã_n itself, or the combination formed into out.input (or a scratch row).
  const bool plain = input.direct_y0 && !input.frame_y0 && input.frames == 0 && input.directs == 0;
  Cx* in = out.input ? out.input : input_.get();
  if (plain) in = const_cast<Cx*>(input.direct_y0);  // read only: the transform is out of place
  else combine(input, in, range);
  cuda::Fft<R>::complex(c2c_->get(), in, time_.get(), CUFFT_FORWARD);  // a = n·A
  const cuda::MeasureTarget& t = out.measures;
  if (t.out) cuda::measures<R>(in, time_.get(), t.omega, t.omega0, t.dt, t.hbar, t.out, m_, n_, stream_);
  const R* r = nullptr;
  if (physics_.raman) {
    // h_R ⊛ |A|² through the real transforms (e^{−i} forward: the product takes conj(H_R), as
    // the host's NonlinearBatch explains).
    const std::int64_t half = n_ / 2 + 1;
    cuda::intensity<R>(time_.get(), intensity_.get(), n_, m_, stream_);
    cuda::Fft<R>::forward_real(r2c_->get(), intensity_.get(), half_spectrum_.get());
    cuda::raman_product<R>(half_spectrum_.get(), physics_.raman_response.get(), physics_.group.get(), half, m_,
                           stream_);
    cuda::Fft<R>::inverse_real(c2r_->get(), half_spectrum_.get(), intensity_.get());
    r = intensity_.get();
  }
  cuda::kerr_raman<R>(time_.get(), r, physics_.kerr.get(), physics_.raman_coefficient.get(), n_, m_, stream_);
  cuda::Fft<R>::complex(c2c_->get(), time_.get(), time_.get(), CUFFT_INVERSE);
  cuda::finish_stage<R>(time_.get(), physics_.gamma_shock.get(), physics_.group.get(), out, n_, m_, stream_);
}

template <class R> void CudaEngine<R>::start_trial(double h, Evaluation evaluation) {
  if (in_flight_) runtime_failure(kWhere, "a trial was started before the last one finished");
  if (evaluation != Evaluation::batched)
    invalid_argument(kWhere, "the CUDA engine evaluates whole batches only (for members one at a time, run ",
                     "batches of one member)");
  if (!(h > 0) || !std::isfinite(h)) invalid_argument(kWhere, "step length ", h, " m must be > 0");
  const int s = plan_.stages;
  upload_loaded();
  controls_.upload(stream_);
  if (h != cached_h_) {
    update_exponentials(h);
    cached_h_ = h;
  }
  // The last trial synchronised: the pinned value is free.
  *step_host_.get() = h;
  check(cudaMemcpyAsync(step_.get(), step_host_.get(), sizeof(double), cudaMemcpyHostToDevice, stream_), "step");
  trial_h_ = h;
  fsal_ready_ = fsal_pending_;
  if (fsal_pending_) {
    std::swap(n_rows_[0], n_rows_[static_cast<std::size_t>(s - 1)]);
    fsal_pending_ = false;
  }
  evaluations_ = fsal_ready_ ? s - 1 : s;
  launch_trial();
  check(cudaGetLastError(), "trial kernels");
  in_flight_ = true;
}

template <class R> void CudaEngine<R>::finish_trial() {
  if (!in_flight_) runtime_failure(kWhere, "no trial to finish");
  in_flight_ = false;
  check(cudaStreamSynchronize(stream_), "trial");
}

// The trial's kernels, for the step length in step_, its exponentials computed: for the whole
// batch on stream_, or for each lane's members on the lane's stream, forked from stream_ and
// joined back into it (on stream_ itself: one range after another); then the norms (and
// measures) copied back.
template <class R> void CudaEngine<R>::enqueue_trial() {
  if (lanes_.empty()) {
    enqueue_trial(whole_batch());
  } else {
    check(cudaEventRecord(fork_.get(), stream_), "cudaEventRecord");
    for (const auto& lane : lanes_) {
      if (lane->range.stream == stream_) {
        enqueue_trial(lane->range);
        continue;
      }
      check(cudaStreamWaitEvent(lane->range.stream, fork_.get(), 0), "cudaStreamWaitEvent");
      enqueue_trial(lane->range);
      check(cudaEventRecord(lane->done.get(), lane->range.stream), "cudaEventRecord");
      check(cudaStreamWaitEvent(stream_, lane->done.get(), 0), "cudaStreamWaitEvent");
    }
  }
  check(cudaMemcpyAsync(norms_.get(), device_norms_.get(), sizeof(double) * 2 * m_, cudaMemcpyDeviceToHost, stream_),
        "norms copy");
  if (fsal_carries_)
    check(cudaMemcpyAsync(candidate_measures_.get(), device_candidate_measures_.get(), sizeof(double) * 4 * m_,
                          cudaMemcpyDeviceToHost, stream_),
          "measures copy");
}

// The trial's kernels for the members of `range`.
template <class R> void CudaEngine<R>::enqueue_trial(const Range& range) {
  const int s = plan_.stages;
  const std::int64_t stride = exponential_stride();
  // A_I = D(σh) Ã_n
  cuda::Combination<R> a_i;
  if (plan_.frame_exponential < 0) {
    a_i.direct_y0 = y_.get();
  } else {
    a_i.frame_y0 = y_.get();
    a_i.exponential = exponential(plan_.frame_exponential);
    a_i.group_stride = stride;
  }
  combine(a_i, frame_.get(), range);
  if (fsal_ready_) {
    // N_0 is the last step's N(candidate); k_0 = D(σh) N_0 for this step's h.
    const cuda::StageOutput<R> out = stage_output(0, nullptr);
    if (out.k) {
      cuda::Combination<R> k;
      k.frame_y0 = n_rows_[0];
      k.exponential = out.k_exponential;
      k.group_stride = stride;
      combine(k, out.k, range);
    }
  } else {
    cuda::Combination<R> y0;
    y0.direct_y0 = y_.get();
    evaluate(y0, stage_output(0, nullptr), range);
  }
  for (int i = 1; i < s; ++i) {
    const bool is_fsal = plan_.fsal_stage && i == s - 1;
    cuda::StageOutput<R> out = stage_output(i, is_fsal ? candidate_.get() : nullptr);
    if (i == s - 1 && solution_rest_) {
      out.candidate = candidate_.get();
      out.solution = combination(*solution_rest_);
      out.solution_weight = static_cast<R>(solution_last_weight_);
    }
    if (is_fsal && fsal_carries_) out.measures = measure_target(device_candidate_measures_.get());
    if (is_fsal && error_rest_)
      out.error = {device_norms_.get(),
                   combination(*error_rest_),
                   static_cast<R>(error_fsal_weight_),
                   error_.get(),
                   y_.get(),
                   candidate_.get(),
                   controls_.kind(),
                   controls_.rtol(),
                   controls_.atol()};
    evaluate(combination(is_fsal ? plan_.solution : plan_.stage_inputs[static_cast<std::size_t>(i)]), out, range);
  }
  if (!plan_.fsal_stage && !solution_rest_) combine(combination(plan_.solution), candidate_.get(), range);
  if (error_rest_) return;  // the FSAL evaluation formed the norms
  const bool estimated = tableau_.has_error_estimate();
  const cuda::Combination<R> error = estimated ? combination(plan_.error) : cuda::Combination<R>{};
  const std::int64_t f = range.first, row = f * n_;
  cuda::norms<R>(cuda::from_member(error, f, n_), estimated, physics_.group.get() + f, y_.get() + row,
                 candidate_.get() + row, controls_.kind() + f, controls_.rtol() + f, controls_.atol() + f,
                 device_norms_.get() + 2 * f, range.count, n_, range.stream);
}

// Enqueues the trial directly, or replays it as a CUDA graph captured at the first trial with
// the same rows (the kernels read h and the exponentials from device memory, so one capture
// serves every step length).
template <class R> void CudaEngine<R>::launch_trial() {
  if (!use_graphs_) {
    enqueue_trial();
    return;
  }
  const Cx* first = n_rows_[0];
  for (const CapturedTrial& g : graphs_)
    if (g.fsal_ready == fsal_ready_ && g.first_stage == first && g.solution == y_.get()) {
      check(cudaGraphLaunch(g.exec.get(), stream_), "cudaGraphLaunch");
      return;
    }
  check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
  cudaGraph_t graph = nullptr;
  try {
    enqueue_trial();
  } catch (...) {
    cudaStreamEndCapture(stream_, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  check(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check(instantiated, "cudaGraphInstantiate");
  graphs_.push_back({fsal_ready_, first, y_.get(), rt::GraphExec(exec)});
  check(cudaGraphLaunch(exec, stream_), "cudaGraphLaunch");
}

template <class R> void CudaEngine<R>::apply_windows() {
  if (physics_.frequency_windows)
    cuda::window<R>(y_.get(), physics_.frequency_window.get(), physics_.group.get(),
                    physics_.has_frequency_window.get(), R(1), n_, m_, stream_);
  if (physics_.time_windows) {
    cuda::Fft<R>::complex(c2c_->get(), y_.get(), time_.get(), CUFFT_FORWARD);
    cuda::window<R>(time_.get(), physics_.time_window.get(), physics_.group.get(), physics_.has_time_window.get(),
                    static_cast<R>(1.0 / static_cast<double>(n_)), n_, m_, stream_);
    cuda::Fft<R>::complex(c2c_->get(), time_.get(), time_.get(), CUFFT_INVERSE);
    cuda::copy_flagged<R>(time_.get(), y_.get(), physics_.has_time_window.get(), n_, m_, stream_);
  }
}

template <class R> void CudaEngine<R>::accept() {
  if (in_flight_) runtime_failure(kWhere, "accept() before finish_trial()");
  std::swap(y_, candidate_);
  apply_windows();
  // N(candidate) becomes the next step's first stage (at the next trial: the dense output of
  // this step still reads the stage rows as they are).
  fsal_pending_ = fsal_carries_;
  if (fsal_pending_) {
    // The FSAL stage measured the candidate, now the solution, in the trial.
    std::swap(measures_, candidate_measures_);
    measures_stale_ = false;
  } else {
    compute_measures();
  }
}

template <class R> void CudaEngine<R>::compute_measures() {
  upload_loaded();
  const cuda::MeasureTarget t = measure_target(device_measures_.get());
  if (fused_) {
    cuda::fused_measures<R>(y_.get(), t.omega, t.omega0, t.dt, t.hbar, t.out, m_, n_, stream_);
  } else {
    cuda::Fft<R>::complex(c2c_->get(), y_.get(), time_.get(), CUFFT_FORWARD);
    cuda::measures<R>(y_.get(), time_.get(), t.omega, t.omega0, t.dt, t.hbar, t.out, m_, n_, stream_);
  }
  check(cudaGetLastError(), "measures kernel");
  check(cudaMemcpyAsync(measures_.get(), device_measures_.get(), sizeof(double) * 4 * m_, cudaMemcpyDeviceToHost,
                        stream_),
        "measures copy");
  check(cudaStreamSynchronize(stream_), "measures");
  measures_stale_ = false;
}

template <class R> FieldMeasures CudaEngine<R>::measures(std::int64_t member) {
  checked(member);
  if (measures_stale_) compute_measures();
  const double* v = measures_.get() + 4 * member;
  return {v[0], v[1], v[2], v[3]};
}

// The reader's next slot for `rows`, once the rows loaded are on the device.
template <class R> typename CudaEngine<R>::Cx* CudaEngine<R>::claim_plane(std::span<Complex* const> rows) {
  upload_loaded();
  return reader_.claim(rows);
}

template <class R> void CudaEngine<R>::read_solutions(std::span<Complex* const> rows) {
  Cx* plane = claim_plane(rows);
  check(cudaMemcpyAsync(plane, y_.get(), sizeof(Cx) * static_cast<std::size_t>(total()), cudaMemcpyDeviceToDevice,
                        stream_),
        "solutions copy");
  reader_.send(stream_);
}

template <class R> void CudaEngine<R>::read_dense_output(double theta, std::span<Complex* const> rows) {
  if (!tableau_.has_dense_output()) invalid_argument(kWhere, tableau_.name, " has no dense output");
  if (!(theta >= 0 && theta <= 1)) invalid_argument(kWhere, "θ = ", theta, " outside [0, 1]");
  Cx* plane = claim_plane(rows);
  const double h = trial_h_;
  cuda::Exponents e;
  e.count = 1;
  e.x[0] = (theta - plan_.sigma) * h;
  cuda::exponentials<R>(physics_.linear.get(), e, dense_exponential_.get(), n_, physics_.groups, stream_);
  // Ã(z_n + θh) = D((θ − σ)h)(A_I + h Σ_j w_j(θ) k_j)
  const auto w = tableau_.dense_weights(theta);
  cuda::Combination<R> c;
  c.frame_y0 = frame_.get();
  for (int j = 0; j < plan_.stages; ++j) {
    const double wj = w[static_cast<std::size_t>(j)];
    if (wj == 0) continue;
    if (c.frames == cuda::Combination<R>::kMaxTerms) runtime_failure(kWhere, "a dense output with too many terms");
    c.frame[c.frames] = k_row(j);
    c.frame_weight[c.frames++] = static_cast<R>(h * wj);
  }
  c.exponential = dense_exponential_.get();
  c.group_stride = n_;
  combine(c, plane, whole_batch());
  check(cudaGetLastError(), "dense output");
  reader_.send(stream_);
}

}  // namespace

std::int64_t cuda_engine_bytes_per_member(const Tableau& tableau, std::int64_t points, DType precision,
                                          const CudaOptions& options) {
  const std::int64_t complex_bytes = precision == DType::f32 ? 8 : 16;
  const bool fused = options.fused_evaluation && cuda_fused_evaluation_available(points, precision);
  return rows_per_member(tableau, StagePlan(tableau), fused) * points * complex_bytes;
}

std::string cuda_engine_summary() {
  return cuda::fused_evaluation_supported<double>(4096) ? ", CUDA (fused evaluation of N on sm_90, cuFFT elsewhere)"
                                                        : ", CUDA (cuFFT evaluation of N)";
}

std::int64_t cuda_free_memory() {
  if (!cuda_available()) return 0;
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return static_cast<std::int64_t>(free_bytes);
}

namespace {
/// The fused kernels are compiled for sm_90 alone (cufftdx.cmake): a device of compute
/// capability 9.0 runs them. A failed query (no device) is cleared, not left for a later check.
bool device_runs_fused_kernels() {
  int device = 0, major = 0, minor = 0;
  const bool known = cudaGetDevice(&device) == cudaSuccess &&
                     cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                     cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess;
  if (!known) cudaGetLastError();
  return known && major == 9 && minor == 0;
}
}  // namespace

bool cuda_fused_evaluation_available(std::int64_t points, DType precision) {
  if (!device_runs_fused_kernels()) return false;
  if (precision == DType::f32) return cuda::fused_evaluation_supported<float>(points);
  return precision == DType::f64 && cuda::fused_evaluation_supported<double>(points);
}

void require_cuda_engine() {
  if (!cuda_available())
    runtime_failure(kWhere, "no CUDA device is visible (nvidia-smi lists none, or the driver is missing)");
}

std::unique_ptr<Engine> make_cuda_engine(std::span<const Config* const> configs, const Tableau& tableau,
                                         DType precision, const CudaOptions& options) {
  // Before anything of the members is built: without a device, that is the error to report.
  require_cuda_engine();
  if (precision == DType::f32) return std::make_unique<CudaEngine<float>>(configs, tableau, options);
  if (precision == DType::f64) return std::make_unique<CudaEngine<double>>(configs, tableau, options);
  invalid_argument(kWhere, "precision must be f32 or f64");
}

}  // namespace lockstep::prop
