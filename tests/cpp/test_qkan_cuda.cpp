// The CUDA backend against the CPU reference path. Needs an NVIDIA GPU (CTest label "gpu";
// scripts/test.sh leaves the label out on machines without one); without a GPU every test here
// fails in SetUp with a message saying so, never passes vacuously.
//
//   CudaVsReference  the fused-vs-reference grid (qkan_test_util.hpp) plus shapes that span
//                    several CUDA input chunks (32) and output tiles (8): plain and contracted,
//                    forward and backward, gradient subsets
//   CudaNearPoles    circuits that reach a pole of the Bloch sphere (the fast measure's slope
//                    ~1/(2r)), against the reference
//   CudaRowsBackward the rows kernel (the backward of a contraction that fills the device) on
//                    device-sized shapes for each of its rows per lane, and CudaRowsNearPoles
//                    near the poles; CudaBackwardPlan checks that those shapes take it, and
//                    that records too long for its shared memory do not
//   CudaStream       calls run on Options::stream, asynchronously, without host synchronisation
//   CudaGraph        forward + backward captured into a CUDA graph and replayed on new inputs
//   CudaLarge        B·O·I > 2^31 (64-bit indexing)
//   CudaErrors       device mix-ups, Path::reference on CUDA tensors, explain()
//   CudaEmptyBatch   B = 0: no launch, zero parameter gradients
//
// Device buffers are flanked by canaries and poisoned with NaN before every call, like the host
// Guarded buffers, so unwritten elements and out-of-view writes on the device are caught.
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>

#include "gpu_test_util.hpp"
#include "qkan_test_util.hpp"
#include "src/qkan/cuda/launch.hpp"  // backward_split
#include "src/qkan/problem.hpp"      // kFusedMaxReps

namespace lockstep::test {
namespace {

// ---------------------------------------------------------------------------------------------
// CUDA runtime calls: every return code checked; a failure throws, which GoogleTest reports
// as a failure of the running test with this message.

void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::ostringstream s;
  s << call << " failed: " << cudaGetErrorName(e) << " (" << cudaGetErrorString(e) << ") at " << file << ":" << line;
  throw std::runtime_error(s.str());
}
#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)

/// A non-blocking stream: it does not synchronise with the legacy default stream, so work the
/// library puts on the default stream instead of this one is not ordered with it.
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return s_; }
  void sync() const { CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Device buffers.

/// Device memory for a (named) tensor, laid out like Guarded<T>: canaries on both sides of the
/// view, the view itself poisoned with NaN from construction on (never zero-filled).
/// Copies are synchronous with respect to the host: they run on `stream` and wait for it.
template <class T> class DeviceBuffer {
 public:
  static constexpr std::size_t kGuard = Guarded<T>::kGuard;

  DeviceBuffer(std::string name, Shape shape)
      : name_(std::move(name)), shape_(std::move(shape)), n_(static_cast<std::size_t>(numel(shape_))) {
    CUDA_CHECK(cudaMalloc(&base_, (n_ + 2 * kGuard) * sizeof(T)));
    // Canaries and NaN in one copy.
    const std::vector<T> init = host_image(Guarded<T>(shape_));
    const cudaError_t e = cudaMemcpy(base_, init.data(), init.size() * sizeof(T), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) cudaFree(std::exchange(base_, nullptr));
    CUDA_CHECK(e);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : name_(std::move(o.name_)), shape_(std::move(o.shape_)), n_(o.n_), base_(std::exchange(o.base_, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (base_) cudaFree(base_);
  }

  const Shape& shape() const { return shape_; }
  T* data() const { return base_ + kGuard; }
  MutTensor mut() const { return mut_view(data(), shape_, Device::cuda); }
  ConstTensor view() const { return const_view<T>(data(), shape_, Device::cuda); }

  void upload(const Guarded<T>& h, cudaStream_t stream = nullptr) const {
    if (h.shape() != shape_)
      throw std::logic_error("upload into " + name_ + ": shape " + to_string(h.shape()) + " vs " + to_string(shape_));
    if (n_ == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(data(), h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  /// NaN into every element of the view.
  void poison(cudaStream_t stream = nullptr) const { upload(Guarded<T>(shape_), stream); }

  /// The view's contents; a failure of the running test when a canary was overwritten.
  Guarded<T> download(cudaStream_t stream = nullptr) const {
    std::vector<T> img(n_ + 2 * kGuard);
    CUDA_CHECK(cudaMemcpyAsync(img.data(), base_, img.size() * sizeof(T), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t k = 0; k < kGuard; ++k)
      if (img[k] != Guarded<T>::kCanary || img[kGuard + n_ + k] != Guarded<T>::kCanary) {
        ADD_FAILURE() << name_ << " " << to_string(shape_) << ": written outside its view on the device";
        break;
      }
    Guarded<T> out(shape_);
    std::copy(img.begin() + kGuard, img.begin() + kGuard + n_, out.data());
    return out;
  }

 private:
  static std::vector<T> host_image(const Guarded<T>& g) {
    std::vector<T> img(g.size() + 2 * kGuard, Guarded<T>::kCanary);
    std::copy(g.data(), g.data() + g.size(), img.begin() + kGuard);
    return img;
  }

  std::string name_;
  Shape shape_;
  std::size_t n_;
  T* base_ = nullptr;
};

/// The inputs of a call, on the device.
template <class T> struct DeviceInputs {
  DeviceBuffer<T> x, theta, w, c, W;
  bool pass_pre;

  explicit DeviceInputs(const Inputs<T>& in)
      : x("x", in.x.shape()),
        theta("theta", in.theta.shape()),
        w("preacts_weight", in.w.shape()),
        c("preacts_bias", in.c.shape()),
        W("weight", in.W.shape()),
        pass_pre(in.pass_pre) {
    upload(in);
  }
  void upload(const Inputs<T>& in, cudaStream_t stream = nullptr) const {
    x.upload(in.x, stream);
    theta.upload(in.theta, stream);
    w.upload(in.w, stream);
    c.upload(in.c, stream);
    W.upload(in.W, stream);
  }
  ConstTensor xv() const { return x.view(); }
  ConstTensor thetav() const { return theta.view(); }
  ConstTensor wv() const { return pass_pre ? w.view() : ConstTensor{}; }
  ConstTensor cv() const { return pass_pre ? c.view() : ConstTensor{}; }
  ConstTensor Wv() const { return W.view(); }
};

/// Gradient buffers on the device (poisoned), mirroring alloc_grads().
template <class T> struct DeviceGrads {
  std::optional<DeviceBuffer<T>> x, theta, w, c, W;

  DeviceGrads(const Inputs<T>& in, Want want, bool contract) {
    if (want.x) x.emplace("grad x", in.x.shape());
    if (want.theta) theta.emplace("grad theta", in.theta.shape());
    if (want.w && in.pass_pre) w.emplace("grad preacts_weight", in.w.shape());
    if (want.c && in.pass_pre) c.emplace("grad preacts_bias", in.c.shape());
    if (want.W && contract) W.emplace("grad weight", in.W.shape());
  }
  Grads grads() const {
    Grads g;
    if (x) g.x = x->mut();
    if (theta) g.theta = theta->mut();
    if (w) g.w = w->mut();
    if (c) g.c = c->mut();
    if (W) g.W = W->mut();
    return g;
  }
  void poison(cudaStream_t stream = nullptr) const {
    for (const auto* b : {&x, &theta, &w, &c, &W})
      if (*b) (*b)->poison(stream);
  }
  GradSet<T> download(cudaStream_t stream = nullptr) const {
    GradSet<T> g;
    if (x) g.x = x->download(stream);
    if (theta) g.theta = theta->download(stream);
    if (w) g.w = w->download(stream);
    if (c) g.c = c->download(stream);
    if (W) g.W = W->download(stream);
    return g;
  }
};

Options cuda_options(const Config& cfg, Path path, cudaStream_t stream = nullptr) {
  Options o = cfg.options(path);
  o.stream = stream;
  return o;
}

// The four calls on the device: inputs already there, outputs fresh (poisoned), results back.

template <class T> Guarded<T> cuda_solve(const Config& cfg, const DeviceInputs<T>& d, Path path) {
  const DeviceBuffer<T> out("postacts", cfg.plain_shape());
  qkan::solve_forward(cuda_options(cfg, path), d.xv(), d.thetav(), d.wv(), d.cv(), out.mut());
  return out.download();
}

template <class T> Guarded<T> cuda_contract(const Config& cfg, const DeviceInputs<T>& d, Path path) {
  const DeviceBuffer<T> y("y", {cfg.B, cfg.O});
  qkan::contract_forward(cuda_options(cfg, path), d.xv(), d.thetav(), d.wv(), d.cv(), d.Wv(), y.mut());
  return y.download();
}

template <class T>
GradSet<T> cuda_solve_backward(const Inputs<T>& in, const DeviceInputs<T>& d, Path path, const Guarded<T>& gout,
                               Want want = {}) {
  const DeviceBuffer<T> g("grad_postacts", gout.shape());
  g.upload(gout);
  const DeviceGrads<T> grads(in, want, false);
  qkan::solve_backward(cuda_options(in.cfg, path), d.xv(), d.thetav(), d.wv(), d.cv(), g.view(), grads.grads());
  return grads.download();
}

template <class T>
GradSet<T> cuda_contract_backward(const Inputs<T>& in, const DeviceInputs<T>& d, Path path, const Guarded<T>& gy,
                                  Want want = {}) {
  const DeviceBuffer<T> g("grad_y", gy.shape());
  g.upload(gy);
  const DeviceGrads<T> grads(in, want, true);
  qkan::contract_backward(cuda_options(in.cfg, path), d.xv(), d.thetav(), d.wv(), d.cv(), d.Wv(), g.view(),
                          grads.grads());
  return grads.download();
}

template <class T>::testing::AssertionResult all_nan(const std::string& what, const Guarded<T>& g) {
  for (std::size_t k = 0; k < g.size(); ++k)
    if (!std::isnan(g[k]))
      return ::testing::AssertionFailure() << what << " " << index_string(g.shape(), k) << " was written (" << g[k]
                                           << ") though it should still hold its NaN poison";
  return ::testing::AssertionSuccess();
}

template <class T>::testing::AssertionResult all_finite(const std::string& what, const Guarded<T>& g) {
  for (std::size_t k = 0; k < g.size(); ++k)
    if (!std::isfinite(g[k]))
      return ::testing::AssertionFailure() << what << " " << index_string(g.shape(), k) << " is " << g[k];
  return ::testing::AssertionSuccess();
}

/// The entries of `all` that `want` selects (for a plain solve, never W).
template <class T> GradSet<T> selected(const GradSet<T>& all, Want want) {
  GradSet<T> g;
  if (want.x) g.x = all.x;
  if (want.theta) g.theta = all.theta;
  if (want.w) g.w = all.w;
  if (want.c) g.c = all.c;
  if (want.W) g.W = all.W;
  return g;
}

// ---------------------------------------------------------------------------------------------
// CUDA graphs.

struct GraphDeleter {
  void operator()(cudaGraph_t g) const { cudaGraphDestroy(g); }
};
struct GraphExecDeleter {
  void operator()(cudaGraphExec_t g) const { cudaGraphExecDestroy(g); }
};
using Graph = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, GraphDeleter>;
using GraphExec = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, GraphExecDeleter>;

/// Captures what body() enqueues on `stream` (global mode: any unsafe CUDA call from this
/// process, e.g. a host synchronisation or cudaMalloc, invalidates the capture).
template <class F> Graph capture(cudaStream_t stream, F&& body) {
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  cudaGraph_t g = nullptr;
  try {
    body();
  } catch (...) {
    cudaStreamEndCapture(stream, &g);  // leave the stream usable; the test fails with the exception
    if (g) cudaGraphDestroy(g);
    throw;
  }
  const cudaError_t e = cudaStreamEndCapture(stream, &g);
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("cudaStreamEndCapture failed: ") + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) +
                             "): a call inside the capture was not capturable "
                             "(a host synchronisation, an allocation or work on another stream?)");
  return Graph(g);
}

GraphExec instantiate(const Graph& g) {
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&exec, g.get(), 0));
  return GraphExec(exec);
}

std::vector<cudaGraphNodeType> node_types(const Graph& g) {
  std::size_t n = 0;
  CUDA_CHECK(cudaGraphGetNodes(g.get(), nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  if (n) CUDA_CHECK(cudaGraphGetNodes(g.get(), nodes.data(), &n));
  std::vector<cudaGraphNodeType> types(n);
  for (std::size_t k = 0; k < n; ++k) CUDA_CHECK(cudaGraphNodeGetType(nodes[k], &types[k]));
  return types;
}

std::size_t count_kernels(const Graph& g) {
  std::size_t k = 0;
  for (cudaGraphNodeType t : node_types(g)) k += t == cudaGraphNodeTypeKernel;
  return k;
}

// =============================================================================================
// The grid: every configuration the CPU fused path is checked on, plus shapes that span
// several CUDA input chunks (32 lanes) and output tiles (8 per block), with tails.

std::vector<Config> cuda_tile_configs() {
  std::vector<Config> out;
  for (const AnsatzEnc& ae : all_ansatz_encodings())
    for (DType d : {DType::f32, DType::f64})
      for (auto [B, I, O, g] : {std::tuple<std::int64_t, std::int64_t, std::int64_t, Group>{70, 33, 9, Group::natural},
                                {130, 65, 17, Group::grouped}}) {
        Config c;
        c.ansatz = ae.ansatz;
        c.preacts_trainable = ae.preacts_trainable;
        c.fast = B == 70;
        c.group = g;
        c.dtype = d;
        c.B = B;
        c.I = I;
        c.O = O;
        out.push_back(c);
      }
  return out;
}

/// Multiprocessors of device 0 (132 on an H100 or H200; 132 where there is no device, whose
/// tests fail in SetUp anyway).
int device_multiprocessors() {
  int n = 0;
  return cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess ? n : 132;
}

/// Shapes whose contracted backward takes the rows kernel with `lanes` rows per lane (lanes
/// along batch rows), sized for this device (CudaBackwardPlan.RowsShapesRouteThere checks the
/// routing): 2 row blocks of 32·lanes rows (the second of one row), input warps for one block
/// per multiprocessor (the last with 5 inputs), so the next larger row block would give half a
/// block per multiprocessor; and 33 outputs (more than one edge tile in either dtype, the last
/// of one edge). The fast measure in float32, the z measure in float64, except for `real`,
/// which takes them the other way round: its state stays on the great circle n_y = 0, so the
/// fast measure's cusp at cos S = 0 (where the slope takes the sign of cos S) is met along a
/// whole family of inputs, and among these millions of float32 evaluations a row within
/// rounding of it can take the other sign than the float64 reference (it did, in one run,
/// for one edge: docs/PERFORMANCE.md). Last, pz with raw x at 16 reps in float32, whose 36 sums
/// per edge pass the 32 lanes of a warp.
std::vector<Config> cuda_rows_configs(int lanes) {
  std::vector<Config> out;
  for (const AnsatzEnc& ae : all_ansatz_encodings())
    for (DType d : {DType::f32, DType::f64}) {
      Config c;
      c.ansatz = ae.ansatz;
      c.preacts_trainable = ae.preacts_trainable;
      c.fast = (d == DType::f32) != (ae.ansatz == Ansatz::real);
      c.group = d == DType::f32 ? Group::natural : Group::grouped;
      c.dtype = d;
      c.B = qkan::detail::cuda_lanes::row_block(lanes) + 1;
      c.I = 8 * ((device_multiprocessors() + 1) / 2) - 3;
      c.O = 33;
      out.push_back(c);
    }
  // Sums longer than a warp: pz with raw x at 16 reps has 35 slots, 36 sums per edge.
  Config c = out.front();
  c.reps = 16;
  out.push_back(c);
  return out;
}
/// The rows kernel's shapes for every rows-per-lane count it is compiled for.
std::vector<Config> cuda_rows_configs() {
  std::vector<Config> out;
  for (int lanes : qkan::detail::cuda_lanes::kRowLanes) {
    const std::vector<Config> more = cuda_rows_configs(lanes);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

class CudaVsReference : public WithGpu<::testing::TestWithParam<Config>> {};

TEST_P(CudaVsReference, Forward) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t) {
    using T = decltype(tag);
    DeviceInputs<T> d(in);
    EXPECT_EQ(qkan::solve_output_shape(cuda_options(cfg, Path::automatic), d.xv(), d.thetav(), d.wv(), d.cv()),
              cfg.plain_shape());
    const Guarded<T> post_ref = run_solve(in, Path::reference);
    const Guarded<T> y_ref = run_contract(in, Path::reference);
    const Guarded<T> post = cuda_solve(cfg, d, Path::automatic);
    const Guarded<T> y = cuda_contract(cfg, d, Path::automatic);
    EXPECT_TRUE(all_close("postacts", post, post_ref, tol<T>.fwd_abs, 0));
    EXPECT_TRUE(all_close("y", y, y_ref, contract_atol(in), 0));
    // Path::fused runs the same kernels. The plain forward has no atomics (bitwise equal); the
    // contracted forward of a small layer adds its input slices atomically, in any order, so
    // repeated calls agree to the rounding of that sum.
    const double y_again = double(cfg.I) * std::numeric_limits<T>::epsilon() * contract_atol(in) / tol<T>.fwd_abs;
    EXPECT_TRUE(identical("postacts, fused vs automatic", cuda_solve(cfg, d, Path::fused), post));
    EXPECT_TRUE(all_close("y, fused vs automatic", cuda_contract(cfg, d, Path::fused), y, y_again, 0));
    if (!cfg.encoding()) {  // w and c are not read: omitting them changes nothing
      d.pass_pre = false;
      EXPECT_TRUE(identical("postacts without preacts", cuda_solve(cfg, d, Path::automatic), post));
      EXPECT_TRUE(all_close("y without preacts", cuda_contract(cfg, d, Path::automatic), y, y_again, 0));
    }
  });
}

TEST_P(CudaVsReference, Backward) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const DeviceInputs<T> d(in);
    const Guarded<T> gout = random_like<T>(cfg.plain_shape(), seed + 1);
    const Guarded<T> gy = random_like<T>({cfg.B, cfg.O}, seed + 2);
    const GradSet<T> plain_ref = run_solve_backward(in, Path::reference, gout);
    const GradSet<T> contract_ref = run_contract_backward(in, Path::reference, gy);
    for (Path path : {Path::automatic, Path::fused}) {
      SCOPED_TRACE(::testing::Message() << "path " << to_string(path));
      {
        SCOPED_TRACE("solve_backward");
        expect_grads_close(cuda_solve_backward(in, d, path, gout), plain_ref, tol<T>.grad_abs, tol<T>.grad_rel);
      }
      {
        SCOPED_TRACE("contract_backward");
        expect_grads_close(cuda_contract_backward(in, d, path, gy), contract_ref, tol<T>.grad_abs, tol<T>.grad_rel);
      }
    }
  });
}

TEST_P(CudaVsReference, GradSubsetsMatchAll) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const DeviceInputs<T> d(in);
    const std::vector<std::pair<const char*, Want>> subsets = {
        {"x", {true, false, false, false, false}},  {"theta", {false, true, false, false, false}},
        {"w,c", {false, false, true, true, false}}, {"W", {false, false, false, false, true}},
        {"x,W", {true, false, false, false, true}}, {"theta,w", {false, true, true, false, false}}};
    for (bool contract : {false, true}) {
      SCOPED_TRACE(contract ? "contract_backward" : "solve_backward");
      const Guarded<T> g = random_like<T>(contract ? Shape{cfg.B, cfg.O} : cfg.plain_shape(), seed + 1);
      auto run = [&](Want want) {
        return contract ? cuda_contract_backward(in, d, Path::automatic, g, want)
                        : cuda_solve_backward(in, d, Path::automatic, g, want);
      };
      const GradSet<T> all = run(Want::all());
      for (const auto& [name, want] : subsets) {
        Want w = want;
        w.W = w.W && contract;  // a plain solve has no weight
        if (!(w.x || w.theta || w.w || w.c || w.W)) continue;
        SCOPED_TRACE(::testing::Message() << "only " << name);
        // The parameter gradients are sums over the batch whose order of atomics changes between
        // calls (seen: 3e-6 relative in float32 on an H200, a sum of ~900 terms), so the
        // comparison takes the gradient tolerance rather than `same`.
        expect_grads_close(run(w), selected(all, w), tol<T>.grad_abs, 0);
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Qkan, CudaVsReference, ::testing::ValuesIn(fused_vs_reference_grid()),
                         [](const ::testing::TestParamInfo<Config>& info) { return info.param.name(); });
INSTANTIATE_TEST_SUITE_P(QkanTiles, CudaVsReference, ::testing::ValuesIn(cuda_tile_configs()),
                         [](const ::testing::TestParamInfo<Config>& info) { return info.param.name(); });

// The rows kernel (a contraction's backward at shapes that fill the device) against the
// reference, every gradient and the subsets of GradSubsetsMatchAll's kind.
class CudaRowsBackward : public WithGpu<::testing::TestWithParam<Config>> {};

TEST_P(CudaRowsBackward, ContractMatchesReference) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const DeviceInputs<T> d(in);
    const Guarded<T> gy = random_like<T>({cfg.B, cfg.O}, seed + 2);
    const GradSet<T> ref = run_contract_backward(in, Path::reference, gy);
    expect_grads_close(cuda_contract_backward(in, d, Path::automatic, gy), ref, tol<T>.grad_abs, tol<T>.grad_rel);
    for (Want w : {Want{true, false, false, false, false}, Want{false, true, true, true, false},
                   Want{false, false, false, false, true}}) {
      if (!cfg.encoding()) w.w = w.c = false;
      if (!(w.x || w.theta || w.w || w.c || w.W)) continue;
      SCOPED_TRACE(::testing::Message() << "subset x " << w.x << " theta " << w.theta << " W " << w.W);
      expect_grads_close(cuda_contract_backward(in, d, Path::automatic, gy, w), selected(ref, w), tol<T>.grad_abs,
                         tol<T>.grad_rel);
    }
  });
}

// The rows kernel near the poles (see CudaNearPoles), where the fast measure's slope ~1/(2r) must
// meet the transverse components inside each row's walk. Edges of even o sit on make_near_pole's
// circuit (z = cos(L·x)), and every other row's x runs over ±10^-1 .. 10^-7 and 0, so a warp's
// batch sums mix near-pole rows with ordinary ones.
class CudaRowsNearPoles : public WithGpu<::testing::TestWithParam<DType>> {};

TEST_P(CudaRowsNearPoles, NearPolesKeepTheirAccuracy) {
  for (int lanes : qkan::detail::cuda_lanes::kRowLanes) {
    SCOPED_TRACE("rows per lane " + std::to_string(lanes));
    Config cfg = cuda_rows_configs(lanes).front();
    cfg.ansatz = Ansatz::pz;
    cfg.preacts_trainable = false;
    cfg.dtype = GetParam();
    cfg.fast = true;
    cfg.group = Group::natural;
    with_inputs(cfg, [&](auto tag, auto& in, std::uint64_t seed) {
      using T = decltype(tag);
      const std::int64_t RK = cfg.R() * cfg.K();
      for (std::int64_t o = 0; o < cfg.O; o += 2)
        for (std::int64_t i = 0; i < cfg.I; ++i) {
          T* th = in.theta.data() + (o * cfg.I + i) * RK;
          for (std::int64_t k = 0; k < RK; ++k) th[k] = T(0);
          th[RK - 1] = T(-M_PI / 2);
        }
      for (std::int64_t b = 0; b < cfg.B; b += 2)
        for (std::int64_t i = 0; i < cfg.I; ++i) {
          const std::int64_t k = (b / 2 + i) % 8;
          in.x[b * cfg.I + i] = k == 7 ? T(0) : T((k % 2 ? -1 : 1) * std::pow(10.0, -1 - int(k)));
        }
      const DeviceInputs<T> d(in);
      const Guarded<T> gy = random_like<T>({cfg.B, cfg.O}, seed + 3);
      expect_grads_close(cuda_contract_backward(in, d, Path::automatic, gy),
                         run_contract_backward(in, Path::reference, gy), tol<T>.grad_abs, tol<T>.grad_rel);
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Qkan, CudaRowsNearPoles, ::testing::Values(DType::f32, DType::f64),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(short_name(info.param));
                         });
INSTANTIATE_TEST_SUITE_P(QkanRows, CudaRowsBackward, ::testing::ValuesIn(cuda_rows_configs()),
                         [](const ::testing::TestParamInfo<Config>& info) { return info.param.name(); });

class CudaBackwardPlan : public WithGpu<::testing::Test> {};

// The QkanRows shapes exercise the rows kernel on this device, with the rows per lane they are
// sized for; the tile shapes keep backward_kernel; a plain solve never takes the rows kernel.
TEST_F(CudaBackwardPlan, RowsShapesRouteThere) {
  auto split = [](const Config& c, qkan::detail::Kind kind) {
    qkan::detail::Problem p;
    p.kind = kind;
    p.B = c.B, p.I = c.I, p.O = c.O, p.O_edges = c.O;
    return qkan::detail::cuda_lanes::backward_split(p);
  };
  for (int lanes : qkan::detail::cuda_lanes::kRowLanes)
    for (const Config& c : cuda_rows_configs(lanes)) {
      EXPECT_EQ(split(c, qkan::detail::Kind::contract).row_lanes, lanes) << c.name();
      EXPECT_EQ(split(c, qkan::detail::Kind::solve).row_lanes, 0) << c.name();
    }
  for (const Config& c : cuda_tile_configs())
    EXPECT_EQ(split(c, qkan::detail::Kind::contract).row_lanes, 0) << c.name();
}

// A layer whose records and sums are too long for the rows kernel's shared memory (mix with the
// encoding at the most reps) keeps backward_kernel at any shape; at 3 reps the same shape
// takes the rows kernel with 16 rows per lane.
TEST_F(CudaBackwardPlan, LongRecordsKeepTheTileKernel) {
  qkan::detail::Problem p;
  p.kind = qkan::detail::Kind::contract;
  p.ansatz = Ansatz::mix;
  p.encoding = true;
  p.layer = true;
  p.B = 1 << 15, p.I = 1024, p.O = p.O_edges = 64;
  p.reps = qkan::detail::kFusedMaxReps;
  EXPECT_EQ(qkan::detail::cuda_lanes::backward_split(p).row_lanes, 0);
  p.reps = 3;
  EXPECT_EQ(qkan::detail::cuda_lanes::backward_split(p).row_lanes, 16);
}

// Near the poles (qkan_test_util.hpp, near_pole_config), where the fast measure's slope ~1/(2r)
// is huge and only its product with the transverse components is well conditioned: the kernels
// against the CPU reference, forward and both backwards.
class CudaNearPoles : public WithGpu<::testing::TestWithParam<PoleParam>> {};

TEST_P(CudaNearPoles, FastMeasureKeepsItsAccuracy) {
  const auto [dtype, ansatz] = GetParam();
  with_inputs(near_pole_config(dtype, ansatz), [&](auto tag, auto& in, std::uint64_t) {
    using T = decltype(tag);
    make_near_pole(in);
    const DeviceInputs<T> d(in);
    EXPECT_TRUE(all_close("postacts", cuda_solve(in.cfg, d, Path::automatic), run_solve(in, Path::reference),
                          tol<T>.fwd_abs, 0));
    const Guarded<T> gout = random_like<T>(in.cfg.plain_shape(), 7);
    expect_grads_close(cuda_solve_backward(in, d, Path::automatic, gout), run_solve_backward(in, Path::reference, gout),
                       tol<T>.grad_abs, tol<T>.grad_rel);
    const Guarded<T> gy = random_like<T>({in.cfg.B, in.cfg.O}, 8);
    expect_grads_close(cuda_contract_backward(in, d, Path::automatic, gy),
                       run_contract_backward(in, Path::reference, gy), tol<T>.grad_abs, tol<T>.grad_rel);
  });
}

INSTANTIATE_TEST_SUITE_P(Qkan, CudaNearPoles, near_pole_params(), near_pole_name);

// =============================================================================================
// Streams: the calls go on Options::stream and return without waiting for it.

/// Holds a stream at a host function until release(): nothing enqueued after it can start.
class StreamHold {
 public:
  explicit StreamHold(cudaStream_t s) : s_(s) { CUDA_CHECK(cudaLaunchHostFunc(s, &StreamHold::wait, this)); }
  ~StreamHold() {
    release();
    cudaStreamSynchronize(s_);  // the host function reads *this until it returns
  }
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;
  void release() { open_ = true; }

 private:
  static void CUDART_CB wait(void* self) {
    while (!static_cast<StreamHold*>(self)->open_.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  cudaStream_t s_;
  std::atomic<bool> open_{false};
};

class CudaStream : public WithGpu<::testing::Test> {};

TEST_F(CudaStream, RunsOnTheGivenStream) {
  Config cfg;
  cfg.ansatz = Ansatz::mix;
  cfg.preacts_trainable = true;
  cfg.fast = true;
  cfg.dtype = DType::f32;
  cfg.B = 300;
  cfg.I = 37;
  cfg.O = 5;
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const DeviceInputs<T> d(in);
    const Guarded<T> gout_h = random_like<T>(cfg.plain_shape(), seed + 1);
    const Guarded<T> gy_h = random_like<T>({cfg.B, cfg.O}, seed + 2);
    const DeviceBuffer<T> post("postacts", cfg.plain_shape()), y("y", {cfg.B, cfg.O});
    const DeviceBuffer<T> gout("grad_postacts", cfg.plain_shape()), gy("grad_y", {cfg.B, cfg.O});
    gout.upload(gout_h);
    gy.upload(gy_h);
    const DeviceGrads<T> gplain(in, Want::all(), false), gcontract(in, Want::all(), true);

    const Stream stream, reader;  // results are read back on `reader`, never on `stream`
    const Options opt = cuda_options(cfg, Path::automatic, stream);
    auto enqueue_all = [&] {
      qkan::solve_forward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), post.mut());
      qkan::solve_backward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), gout.view(), gplain.grads());
      qkan::contract_forward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), d.Wv(), y.mut());
      qkan::contract_backward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), d.Wv(), gy.view(), gcontract.grads());
    };
    // Warm-up: the first launch of a kernel loads it (lazy module loading), which may wait
    // for the device; a user's first call is not what the held stream below is about.
    enqueue_all();
    stream.sync();
    for (const DeviceBuffer<T>* b : {&post, &y}) b->poison();
    gplain.poison();
    gcontract.poison();
    {
      StreamHold hold(stream);
      // A call that waited for its stream would wait for `hold` forever (and so would a read-back
      // that waited for it): the watchdog releases the hold after a while and says when.
      enum Phase : int { kCalls, kReadBack, kNone };
      std::atomic<int> phase{kCalls}, fired_in{kNone};
      std::jthread watchdog([&](std::stop_token stop) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!stop.stop_requested() && std::chrono::steady_clock::now() < until)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (!stop.stop_requested()) {
          fired_in = phase.load();
          hold.release();
        }
      });
      enqueue_all();
      phase = kReadBack;
      ASSERT_EQ(fired_in.load(), kNone) << "the calls returned only after their stream ran: they synchronise the host";
      const cudaError_t query = cudaStreamQuery(stream);
      // Whatever went to the default streams has run by now; the work on `stream` has not.
      CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
      CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
      const Guarded<T> early_post = post.download(reader), early_y = y.download(reader);
      const GradSet<T> early_plain = gplain.download(reader), early_contract = gcontract.download(reader);
      watchdog.request_stop();
      watchdog.join();
      ASSERT_EQ(fired_in.load(), kNone) << "reading back on another stream waited for the held stream; "
                                           "this test cannot tell which stream the calls used";
      ASSERT_EQ(query, cudaErrorNotReady) << "the stream was not held: the checks below would prove nothing";
      const std::string why = " ran while Options::stream was held: it was launched on another stream";
      EXPECT_TRUE(all_nan("postacts" + why, early_post));
      EXPECT_TRUE(all_nan("y" + why, early_y));
      EXPECT_TRUE(all_nan("solve_backward grad x" + why, *early_plain.x));
      EXPECT_TRUE(all_nan("solve_backward grad theta (zeroing or sum)" + why, *early_plain.theta));
      EXPECT_TRUE(all_nan("contract_backward grad x" + why, *early_contract.x));
      EXPECT_TRUE(all_nan("contract_backward grad weight (zeroing or sum)" + why, *early_contract.W));
      hold.release();
    }
    stream.sync();  // that stream only; then read on the other one
    EXPECT_TRUE(all_close("postacts", post.download(reader), run_solve(in, Path::reference), tol<T>.fwd_abs, 0));
    EXPECT_TRUE(all_close("y", y.download(reader), run_contract(in, Path::reference), contract_atol(in), 0));
    {
      SCOPED_TRACE("solve_backward");
      expect_grads_close(gplain.download(reader), run_solve_backward(in, Path::reference, gout_h), tol<T>.grad_abs,
                         tol<T>.grad_rel);
    }
    {
      SCOPED_TRACE("contract_backward");
      expect_grads_close(gcontract.download(reader), run_contract_backward(in, Path::reference, gy_h), tol<T>.grad_abs,
                         tol<T>.grad_rel);
    }
  });
}

// =============================================================================================
// Graphs: forward and backward captured once, replayed on new inputs written into the same
// device buffers. The replays must recompute everything, gradient zeroing included.

class CudaGraph : public WithGpu<::testing::TestWithParam<Config>> {
 protected:
  /// Captures enqueue(opt) on a fresh stream, checks that nothing ran at capture time (`out`
  /// still poisoned) and replays the graph twice, each time after upload(inputs, seed) wrote new
  /// random inputs into the captured buffers and the outputs were poisoned again, checking the
  /// results with check(inputs).
  template <class T, class Enqueue, class Upload, class Check>
  void capture_and_replay(const DeviceGrads<T>& grads, const DeviceBuffer<T>& out, Enqueue&& enqueue, Upload&& upload,
                          Check&& check) {
    const Stream stream;
    const Options opt = cuda_options(GetParam(), Path::automatic, stream);
    // Warm-up outside the capture, as before any capture in practice (it loads the kernels).
    enqueue(opt);
    stream.sync();
    out.poison();
    grads.poison();
    const Graph graph = capture(stream, [&] { enqueue(opt); });
    EXPECT_GE(count_kernels(graph), 2u) << "the forward and backward kernels should be in the graph";
    EXPECT_TRUE(all_nan("output after capture (capturing must not run anything)", out.download()));
    const GraphExec exec = instantiate(graph);
    const std::uint64_t seed = seed_of(current_test_name());
    for (int round = 0; round < 2; ++round) {
      SCOPED_TRACE(::testing::Message() << "replay " << round);
      const std::uint64_t round_seed = seed + 1000 * (round + 1);
      const Inputs<T> in = make_inputs<T>(GetParam(), round_seed);
      upload(in, round_seed + 1);
      out.poison();
      grads.poison();
      CUDA_CHECK(cudaGraphLaunch(exec.get(), stream));
      stream.sync();
      check(in);
    }
  }
};

TEST_P(CudaGraph, ContractCaptureAndReplay) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto tag, const auto& in0, std::uint64_t) {
    using T = decltype(tag);
    const DeviceInputs<T> d(in0);
    const DeviceBuffer<T> y("y", {cfg.B, cfg.O}), gy("grad_y", {cfg.B, cfg.O});
    const DeviceGrads<T> grads(in0, Want::all(), true);
    Guarded<T> gy_h;
    capture_and_replay<T>(
        grads, y,
        [&](const Options& opt) {
          qkan::contract_forward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), d.Wv(), y.mut());
          qkan::contract_backward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), d.Wv(), gy.view(), grads.grads());
        },
        [&](const Inputs<T>& in, std::uint64_t seed) {
          d.upload(in);
          gy_h = random_like<T>({cfg.B, cfg.O}, seed);
          gy.upload(gy_h);
        },
        [&](const Inputs<T>& in) {
          EXPECT_TRUE(all_close("y", y.download(), run_contract(in, Path::reference), contract_atol(in), 0));
          expect_grads_close(grads.download(), run_contract_backward(in, Path::reference, gy_h), tol<T>.grad_abs,
                             tol<T>.grad_rel);
        });
  });
}

TEST_P(CudaGraph, PlainCaptureAndReplay) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto tag, const auto& in0, std::uint64_t) {
    using T = decltype(tag);
    const DeviceInputs<T> d(in0);
    const DeviceBuffer<T> post("postacts", cfg.plain_shape()), gout("grad_postacts", cfg.plain_shape());
    const DeviceGrads<T> grads(in0, Want::all(), false);
    Guarded<T> gout_h;
    capture_and_replay<T>(
        grads, post,
        [&](const Options& opt) {
          qkan::solve_forward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), post.mut());
          qkan::solve_backward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), gout.view(), grads.grads());
        },
        [&](const Inputs<T>& in, std::uint64_t seed) {
          d.upload(in);
          gout_h = random_like<T>(cfg.plain_shape(), seed);
          gout.upload(gout_h);
        },
        [&](const Inputs<T>& in) {
          EXPECT_TRUE(all_close("postacts", post.download(), run_solve(in, Path::reference), tol<T>.fwd_abs, 0));
          expect_grads_close(grads.download(), run_solve_backward(in, Path::reference, gout_h), tol<T>.grad_abs,
                             tol<T>.grad_rel);
        });
  });
}

std::vector<Config> graph_configs() {
  std::vector<Config> out;
  auto add = [&](Ansatz a, bool enc, bool fast, Group g, DType d, int reps, std::int64_t B, std::int64_t I,
                 std::int64_t O) {
    Config c;
    c.ansatz = a;
    c.preacts_trainable = enc;
    c.fast = fast;
    c.group = g;
    c.dtype = d;
    c.reps = reps;
    c.B = B;
    c.I = I;
    c.O = O;
    out.push_back(c);
  };
  add(Ansatz::pz, false, true, Group::natural, DType::f32, 3, 300, 37, 5);  // w/c grads: zeroing only
  add(Ansatz::mix, true, false, Group::grouped, DType::f64, 3, 130, 7, 3);
  add(Ansatz::real, true, true, Group::shared, DType::f32, 3, 65, 33, 9);
  add(Ansatz::rpz, true, false, Group::natural, DType::f64, 5, 77, 6, 4);  // reps != 3: the generic kernels
  return out;
}

INSTANTIATE_TEST_SUITE_P(Qkan, CudaGraph, ::testing::ValuesIn(graph_configs()),
                         [](const ::testing::TestParamInfo<Config>& info) { return info.param.name(); });

// =============================================================================================
// 64-bit indexing: B·O·I > 2^31 circuits (pz, raw x, float32). The contraction never
// materialises (B, O, I): about 300 MB of device memory. The reference runs on a few rows
// alone: block edges, the rows whose flat circuit index b·O·I first passes 2^31, the last rows.

class CudaLarge : public WithGpu<::testing::Test> {
 protected:
  static Config config() {
    Config cfg;
    cfg.ansatz = Ansatz::pz;
    cfg.preacts_trainable = false;
    cfg.fast = true;
    cfg.dtype = DType::f32;
    cfg.B = 65536 + 3;
    cfg.I = 257;
    cfg.O = 130;
    return cfg;
  }
  static std::vector<std::int64_t> rows(const Config& cfg) {
    const std::int64_t cross = ((std::int64_t(1) << 31) + cfg.O * cfg.I - 1) / (cfg.O * cfg.I);
    return {0, 1, 63, 64, 4095, 32768, cross - 1, cross, cfg.B - 3, cfg.B - 2, cfg.B - 1};
  }
  /// in restricted to the given batch rows (θ, w, c, W shared).
  static Inputs<float> rows_of(const Inputs<float>& in, const std::vector<std::int64_t>& rows) {
    Inputs<float> part;
    part.cfg = in.cfg;
    part.cfg.B = static_cast<std::int64_t>(rows.size());
    part.x = gather(in.x, rows);
    part.theta = in.theta;
    part.w = in.w;
    part.c = in.c;
    part.W = in.W;
    part.pass_pre = in.pass_pre;
    return part;
  }
  /// Rows of a (B, K) tensor.
  static Guarded<float> gather(const Guarded<float>& g, const std::vector<std::int64_t>& rows) {
    const std::int64_t K = g.shape()[1];
    Guarded<float> out({static_cast<std::int64_t>(rows.size()), K});
    for (std::size_t r = 0; r < rows.size(); ++r) std::copy_n(g.data() + rows[r] * K, K, out.data() + r * K);
    return out;
  }
  static std::string rows_string(const std::vector<std::int64_t>& rows) {
    std::string s = "rows";
    for (std::int64_t r : rows) s += " " + std::to_string(r);
    return s;
  }
};

TEST_F(CudaLarge, ContractPast2To31Circuits) {
  const Config cfg = config();
  ASSERT_GT(cfg.B * cfg.O * cfg.I, std::int64_t(1) << 31);
  const std::uint64_t seed = seed_of(current_test_name());
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const Inputs<float> in = make_inputs<float>(cfg, seed);
  const DeviceInputs<float> d(in);
  const Guarded<float> y = cuda_contract(cfg, d, Path::automatic);
  ASSERT_TRUE(all_finite("y", y));  // every element written
  const std::vector<std::int64_t> r = rows(cfg);
  SCOPED_TRACE(rows_string(r));
  EXPECT_TRUE(all_close("y", gather(y, r), run_contract(rows_of(in, r), Path::reference), contract_atol(in), 0));
}

TEST_F(CudaLarge, ContractBackwardPast2To31Circuits) {
  // Two exact checks. (1) Random grad_y: ∂x of a row depends on that row alone, so the chosen
  // rows of ∂x match the reference on those rows; ∂θ and ∂W (sums over the whole batch) must be
  // finite. (2) grad_y zero outside the chosen rows: then ∂θ and ∂W are sums over those rows
  // only, and equal the reference on them, while ∂x is exactly zero on every other row.
  const Config cfg = config();
  const std::uint64_t seed = seed_of(current_test_name());
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const Inputs<float> in = make_inputs<float>(cfg, seed);
  const DeviceInputs<float> d(in);
  const std::vector<std::int64_t> r = rows(cfg);
  SCOPED_TRACE(rows_string(r));
  const Inputs<float> part = rows_of(in, r);
  const Want want{true, true, false, false, true};  // x, theta, W (raw x: no preacts)
  {
    SCOPED_TRACE("random grad_y");
    const Guarded<float> gy = random_like<float>({cfg.B, cfg.O}, seed + 1);
    const GradSet<float> g = cuda_contract_backward(in, d, Path::automatic, gy, want);
    ASSERT_TRUE(all_finite("grad x", *g.x));
    ASSERT_TRUE(all_finite("grad theta", *g.theta));
    ASSERT_TRUE(all_finite("grad weight", *g.W));
    GradSet<float> got;
    got.x = gather(*g.x, r);
    expect_grads_close(got,
                       run_contract_backward(part, Path::reference, gather(gy, r), {true, false, false, false, false}),
                       tol<float>.grad_abs, tol<float>.grad_rel);
  }
  {
    SCOPED_TRACE("grad_y zero outside the chosen rows");
    const Guarded<float> gy_rows = random_like<float>({part.cfg.B, cfg.O}, seed + 2);
    Guarded<float> gy({cfg.B, cfg.O}, 0.0f);
    for (std::size_t k = 0; k < r.size(); ++k) std::copy_n(gy_rows.data() + k * cfg.O, cfg.O, gy.data() + r[k] * cfg.O);
    const GradSet<float> g = cuda_contract_backward(in, d, Path::automatic, gy, want);
    const GradSet<float> ref = run_contract_backward(part, Path::reference, gy_rows, want);
    GradSet<float> got;
    got.x = gather(*g.x, r);
    got.theta = g.theta;
    got.W = g.W;
    expect_grads_close(got, ref, tol<float>.grad_abs, tol<float>.grad_rel);
    std::vector<bool> chosen(cfg.B, false);
    for (std::int64_t b : r) chosen[b] = true;
    std::int64_t nonzero = 0, first = -1;
    for (std::int64_t b = 0; b < cfg.B; ++b) {
      if (chosen[b]) continue;
      for (std::int64_t i = 0; i < cfg.I; ++i)
        if ((*g.x)[b * cfg.I + i] != 0.0f && nonzero++ == 0) first = b * cfg.I + i;
    }
    EXPECT_EQ(nonzero, 0) << "grad x is not zero on rows whose grad_y is zero (or was not written), first at "
                          << index_string(g.x->shape(), first) << ": " << (first >= 0 ? (*g.x)[first] : 0.0f);
  }
}

// =============================================================================================
// Errors and dispatch.

class CudaErrors : public WithGpu<::testing::Test> {
 protected:
  static Config config() {
    Config cfg;
    cfg.ansatz = Ansatz::pz;
    cfg.preacts_trainable = true;
    cfg.dtype = DType::f64;
    cfg.B = 4;
    cfg.I = 3;
    cfg.O = 2;
    return cfg;
  }
};

/// The outputs of refused calls still hold their poison.
template <class T>
void expect_untouched(const DeviceBuffer<T>& post, const DeviceBuffer<T>& y, const DeviceGrads<T>& gplain,
                      const DeviceGrads<T>& gcontract) {
  EXPECT_TRUE(all_nan("postacts", post.download()));
  EXPECT_TRUE(all_nan("y", y.download()));
  for (const DeviceGrads<T>* grads : {&gplain, &gcontract}) {
    const GradSet<T> g = grads->download();
    for (const auto& [name, t] : {std::pair{"grad x", &g.x},
                                  {"grad theta", &g.theta},
                                  {"grad preacts_weight", &g.w},
                                  {"grad preacts_bias", &g.c},
                                  {"grad weight", &g.W}}) {
      if (*t) {
        EXPECT_TRUE(all_nan(name, **t));
      }
    }
  }
}

TEST_F(CudaErrors, MixedDevicesNameTheArgument) {
  const Config cfg = config();
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const DeviceInputs<T> d(in);
    const Options opt = cuda_options(cfg, Path::automatic);
    const DeviceBuffer<T> post("postacts", cfg.plain_shape()), y("y", {cfg.B, cfg.O});
    const DeviceBuffer<T> gout("grad_postacts", cfg.plain_shape()), gy("grad_y", {cfg.B, cfg.O});
    const DeviceGrads<T> gplain(in, Want::all(), false), gcontract(in, Want::all(), true);
    // Host-side stand-ins (poisoned) for any one argument.
    Guarded<T> h_post(cfg.plain_shape()), h_y({cfg.B, cfg.O}), h_gx(in.x.shape()), h_gtheta(in.theta.shape()),
        h_gW(in.W.shape());
    const Guarded<T> h_gout = random_like<T>(cfg.plain_shape(), seed + 1),
                     h_gy = random_like<T>({cfg.B, cfg.O}, seed + 2);
    gout.upload(h_gout);
    gy.upload(h_gy);

    struct Args {
      ConstTensor x, theta, w, c, W, gout, gy;
      MutTensor post, y;
      Grads gplain, gcontract;
    };
    const Args dev{d.xv(),    d.thetav(), d.wv(),  d.cv(),         d.Wv(),           gout.view(),
                   gy.view(), post.mut(), y.mut(), gplain.grads(), gcontract.grads()};
    // Entry points a broken argument reaches: solve, solve_backward, contract, contract_backward.
    enum : unsigned { kSolve = 1, kSolveBwd = 2, kContract = 4, kContractBwd = 8, kAll = 15 };
    auto expect_refused = [&](const char* what, auto&& change, std::initializer_list<std::string_view> needles,
                              unsigned entries) {
      SCOPED_TRACE(what);
      Args a = dev;
      change(a);
      if (entries & kSolve) {
        EXPECT_TRUE(throws_invalid([&] { qkan::solve_forward(opt, a.x, a.theta, a.w, a.c, a.post); }, needles));
      }
      if (entries & kSolveBwd) {
        EXPECT_TRUE(
            throws_invalid([&] { qkan::solve_backward(opt, a.x, a.theta, a.w, a.c, a.gout, a.gplain); }, needles));
      }
      if (entries & kContract) {
        EXPECT_TRUE(throws_invalid([&] { qkan::contract_forward(opt, a.x, a.theta, a.w, a.c, a.W, a.y); }, needles));
      }
      if (entries & kContractBwd) {
        EXPECT_TRUE(throws_invalid(
            [&] { qkan::contract_backward(opt, a.x, a.theta, a.w, a.c, a.W, a.gy, a.gcontract); }, needles));
      }
      // Nothing written, on either device.
      expect_untouched(post, y, gplain, gcontract);
      for (const Guarded<T>* h : {&h_post, &h_y, &h_gx, &h_gtheta, &h_gW}) EXPECT_TRUE(all_nan("a host output", *h));
    };
    expect_refused(
        "x on the CPU", [&](Args& a) { a.x = in.xv(); }, {"theta", "cpu", "cuda"}, kAll);
    expect_refused(
        "theta on the CPU", [&](Args& a) { a.theta = in.thetav(); }, {"theta", "cpu", "cuda"}, kAll);
    expect_refused(
        "w on the CPU", [&](Args& a) { a.w = in.wv(); }, {"preacts_weight", "cpu"}, kAll);
    expect_refused(
        "c on the CPU", [&](Args& a) { a.c = in.cv(); }, {"preacts_bias", "cpu"}, kAll);
    expect_refused(
        "weight on the CPU", [&](Args& a) { a.W = in.Wv(); }, {"weight", "cpu"}, kContract | kContractBwd);
    expect_refused(
        "postacts on the CPU", [&](Args& a) { a.post = h_post.mut(); }, {"postacts", "cpu"}, kSolve);
    expect_refused(
        "y on the CPU", [&](Args& a) { a.y = h_y.mut(); }, {"y", "cpu"}, kContract);
    expect_refused(
        "grad_postacts on the CPU", [&](Args& a) { a.gout = h_gout.view(); }, {"grad_postacts", "cpu"}, kSolveBwd);
    expect_refused(
        "grad_y on the CPU", [&](Args& a) { a.gy = h_gy.view(); }, {"grad_y", "cpu"}, kContractBwd);
    expect_refused(
        "grad x on the CPU", [&](Args& a) { a.gplain.x = a.gcontract.x = h_gx.mut(); }, {"grad x", "cpu"},
        kSolveBwd | kContractBwd);
    expect_refused(
        "grad theta on the CPU", [&](Args& a) { a.gplain.theta = a.gcontract.theta = h_gtheta.mut(); },
        {"grad theta", "cpu"}, kSolveBwd | kContractBwd);
    expect_refused(
        "grad weight on the CPU", [&](Args& a) { a.gcontract.W = h_gW.mut(); }, {"grad weight", "cpu"}, kContractBwd);
  });
}

TEST_F(CudaErrors, ReferencePathRefusesCudaTensors) {
  const Config cfg = config();
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const DeviceInputs<T> d(in);
    const Options opt = cuda_options(cfg, Path::reference);
    const DeviceBuffer<T> post("postacts", cfg.plain_shape()), y("y", {cfg.B, cfg.O});
    const DeviceBuffer<T> gout("grad_postacts", cfg.plain_shape()), gy("grad_y", {cfg.B, cfg.O});
    gout.upload(random_like<T>(cfg.plain_shape(), seed + 1));
    gy.upload(random_like<T>({cfg.B, cfg.O}, seed + 2));
    const DeviceGrads<T> gplain(in, Want::all(), false), gcontract(in, Want::all(), true);
    const std::initializer_list<std::string_view> needles = {"reference", "CPU"};
    EXPECT_TRUE(throws_invalid([&] { qkan::explain(opt, cfg.dtype, Device::cuda); }, needles));
    EXPECT_TRUE(
        throws_invalid([&] { qkan::solve_forward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), post.mut()); }, needles));
    EXPECT_TRUE(throws_invalid(
        [&] { qkan::solve_backward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), gout.view(), gplain.grads()); }, needles));
    EXPECT_TRUE(throws_invalid(
        [&] { qkan::contract_forward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), d.Wv(), y.mut()); }, needles));
    EXPECT_TRUE(throws_invalid(
        [&] { qkan::contract_backward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), d.Wv(), gy.view(), gcontract.grads()); },
        needles));
    expect_untouched(post, y, gplain, gcontract);
  });
}

TEST(CudaDispatch, ExplainSaysFused) {
  for (const AnsatzEnc& ae : all_ansatz_encodings())
    for (DType dtype : {DType::f32, DType::f64})
      for (int reps : {1, 3, qkan::detail::kFusedMaxReps})
        for (Path path : {Path::automatic, Path::fused}) {
          Options opt;
          opt.ansatz = ae.ansatz;
          opt.preacts_trainable = ae.preacts_trainable;
          opt.reps = reps;
          opt.path = path;
          const qkan::Dispatch d = qkan::explain(opt, dtype, Device::cuda);
          EXPECT_EQ(d.path, Path::fused) << short_name(ae.ansatz) << " " << short_name(dtype) << " reps " << reps << " "
                                         << to_string(path) << ": " << d.reason;
          EXPECT_NE(d.reason.find("CUDA"), std::string::npos) << d.reason;
        }
}

TEST(CudaDispatch, TooManyRepsRefused) {
  // The CUDA kernels stop at kFusedMaxReps and there is no device fallback: refused, not
  // silently run on the host.
  Options opt;
  opt.reps = qkan::detail::kFusedMaxReps + 1;
  for (Path path : {Path::automatic, Path::fused}) {
    opt.path = path;
    EXPECT_TRUE(throws_invalid([&] { qkan::explain(opt, DType::f32, Device::cuda); }, {"reps"})) << to_string(path);
  }
}

class CudaEmptyBatch : public WithGpu<::testing::TestWithParam<AnsatzEnc>> {};

TEST_P(CudaEmptyBatch, NoLaunchAndZeroParameterGrads) {
  const AnsatzEnc ae = GetParam();
  Config cfg;
  cfg.ansatz = ae.ansatz;
  cfg.preacts_trainable = ae.preacts_trainable;
  cfg.dtype = DType::f32;
  cfg.B = 0;
  cfg.I = 5;
  cfg.O = 3;
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t) {
    using T = decltype(tag);
    const DeviceInputs<T> d(in);
    const DeviceBuffer<T> post("postacts", cfg.plain_shape()), y("y", {0, cfg.O});
    const DeviceBuffer<T> gout("grad_postacts", cfg.plain_shape()), gy("grad_y", {0, cfg.O});
    const DeviceGrads<T> gplain(in, Want::all(), false), gcontract(in, Want::all(), true);
    // Empty views may also come without a pointer (as empty torch tensors do).
    const ConstTensor x_null{nullptr, cfg.dtype, {0, cfg.I}, Device::cuda};
    const MutTensor y_null{nullptr, cfg.dtype, {0, cfg.O}, Device::cuda};
    const Stream stream;
    const Options opt = cuda_options(cfg, Path::automatic, stream);

    const Graph fwd = capture(stream, [&] {
      qkan::solve_forward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), post.mut());
      qkan::contract_forward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), d.Wv(), y.mut());
      qkan::contract_forward(opt, x_null, d.thetav(), d.wv(), d.cv(), d.Wv(), y_null);
    });
    EXPECT_EQ(node_types(fwd).size(), 0u) << "a forward with B = 0 enqueued work";
    const Graph bwd = capture(stream, [&] {
      qkan::solve_backward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), gout.view(), gplain.grads());
      qkan::contract_backward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), d.Wv(), gy.view(), gcontract.grads());
    });
    EXPECT_EQ(count_kernels(bwd), 0u) << "a backward with B = 0 launched a kernel";

    // Run for real: every parameter gradient (poisoned until now) is exactly zero.
    qkan::solve_forward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), post.mut());
    qkan::contract_forward(opt, x_null, d.thetav(), d.wv(), d.cv(), d.Wv(), y_null);
    qkan::solve_backward(opt, d.xv(), d.thetav(), d.wv(), d.cv(), gout.view(), gplain.grads());
    qkan::contract_backward(opt, x_null, d.thetav(), d.wv(), d.cv(), d.Wv(), gy.view(), gcontract.grads());
    stream.sync();
    EXPECT_EQ(post.download().size(), 0u);
    for (bool contract : {false, true}) {
      SCOPED_TRACE(contract ? "contract_backward" : "solve_backward");
      const GradSet<T> g = (contract ? gcontract : gplain).download();
      EXPECT_EQ(g.x->size(), 0u);
      const std::pair<const char*, const std::optional<Guarded<T>>*> params[] = {
          {"grad theta", &g.theta}, {"grad preacts_weight", &g.w}, {"grad preacts_bias", &g.c}, {"grad weight", &g.W}};
      for (const auto& [name, t] : params) {
        if (!*t) continue;
        ASSERT_GT((*t)->size(), 0u) << name;
        for (std::size_t k = 0; k < (*t)->size(); ++k)
          ASSERT_EQ((**t)[k], T(0)) << name << " " << index_string((*t)->shape(), k);
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Qkan, CudaEmptyBatch,
                         ::testing::Values(AnsatzEnc{Ansatz::pz, true}, AnsatzEnc{Ansatz::mix, false}),
                         [](const ::testing::TestParamInfo<AnsatzEnc>& info) {
                           return std::string(short_name(info.param.ansatz)) +
                                  (qkan::encoding_active(info.param.ansatz, info.param.preacts_trainable) ? "_enc"
                                                                                                          : "_raw");
                         });

}  // namespace
}  // namespace lockstep::test
