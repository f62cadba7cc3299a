// QKAN models on CUDA (CudaModel, CudaAdam, the CUDA model engine, fit with Device::cuda) against the CPU model in the
// same precision, on fresh random models and batches. Needs an NVIDIA GPU (CTest label "gpu");
// without one every test here fails in SetUp saying so.
//
//   CudaModelVsCpu   forward, both losses and every gradient: widths with odd sizes and sizes
//                    past the solver's 32-input chunks, every activation, several ansätze,
//                    float32 and float64 (tolerance.hpp's model_tol)
//   CudaModelParams  upload/download round trip; Adam steps on the device against Adam on the
//                    host; fit() with Adam and with L-BFGS on CUDA against the CPU
#include <cmath>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_test_util.hpp"
#include "lockstep/qkan/cuda_model.hpp"
#include "lockstep/qkan/model_engine.hpp"
#include "lockstep/qkan/train.hpp"
#include "tolerance.hpp"

namespace lockstep::test {
namespace {

using qkan::Activation;
using qkan::Ansatz;
using qkan::LayerParams;
using qkan::Loss;
using qkan::Model;

/// The parameter tensors a gradient carries, with their names.
const std::pair<const char*, std::vector<double> LayerParams::*> kTensors[] = {
    {"theta", &LayerParams::theta},
    {"preacts_weight", &LayerParams::preacts_weight},
    {"preacts_bias", &LayerParams::preacts_bias},
    {"base_weight", &LayerParams::base_weight},
    {"postact_weights", &LayerParams::postact_weights},
    {"postact_bias", &LayerParams::postact_bias},
    {"mask", &LayerParams::mask}};

struct Case {
  std::vector<std::int64_t> widths;
  int reps;
  Ansatz ansatz;
  bool encoding;
  bool fast_measure;
  Activation activation;
  DType compute;
};

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string s;
  for (std::int64_t w : c.widths) s += std::to_string(w) + "_";
  s += std::string(qkan::to_string(c.ansatz)) + (c.encoding ? "_enc_" : "_raw_") + (c.fast_measure ? "fast_" : "z_") +
       qkan::to_string(c.activation) + "_" + lockstep::to_string(c.compute) + "_reps" + std::to_string(c.reps);
  return s;
}

void PrintTo(const Case& c, std::ostream* os) { *os << name_of({c, 0}); }

std::vector<Case> cases() {
  struct Shape {
    std::vector<std::int64_t> widths;
    int reps;
    Ansatz ansatz;
    bool encoding, fast;
  };
  const Shape shapes[] = {{{1, 1}, 3, Ansatz::pz, true, true},
                          {{3, 5, 2}, 2, Ansatz::pz, false, false},
                          {{7, 33, 9}, 3, Ansatz::rpz, true, true},
                          {{2, 3, 4, 1}, 3, Ansatz::mix, true, false},
                          {{5, 3}, 4, Ansatz::real, false, true}};
  std::vector<Case> out;
  for (const Shape& s : shapes)
    for (Activation a : {Activation::silu, Activation::gelu, Activation::relu, Activation::tanh, Activation::sigmoid})
      for (DType t : {DType::f32, DType::f64}) out.push_back({s.widths, s.reps, s.ansatz, s.encoding, s.fast, a, t});
  return out;
}

/// A model with every parameter drawn fresh (mask included) and everything trainable.
Model random_model(const Case& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Model m;
  m.options.ansatz = c.ansatz;
  m.options.preacts_trainable = c.encoding;
  m.options.fast_measure = c.fast_measure;
  m.options.base_activation = c.activation;
  m.options.ba_trainable = m.options.postact_weight_trainable = m.options.postact_bias_trainable = true;
  m.options.compute = c.compute;
  m.reps = c.reps;
  m.widths = c.widths;
  const std::int64_t RK = qkan::theta_rows(c.ansatz, c.reps) * qkan::theta_cols(c.ansatz);
  for (std::size_t k = 0; k + 1 < c.widths.size(); ++k) {
    LayerParams L;
    L.in = c.widths[k], L.out = c.widths[k + 1];
    const std::int64_t E = L.in * L.out;
    const std::int64_t sizes[] = {E * RK, E * c.reps, E * c.reps, E, E, E, E};
    for (std::size_t f = 0; f < std::size(kTensors); ++f) {
      std::vector<double>& v = L.*kTensors[f].second;
      v.resize(static_cast<std::size_t>(sizes[f]));
      for (double& e : v) e = u(rng);
    }
    m.layers.push_back(std::move(L));
  }
  return m;
}

/// Inputs in [-1.5, 1.5], mse targets in [-1, 1] and class indices for B rows.
struct Rows {
  std::vector<double> x, mse, classes;
};
Rows random_rows(const Model& m, std::int64_t B, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.5, 1.5), t(-1, 1);
  std::uniform_int_distribution<std::int64_t> cls(0, m.widths.back() - 1);
  Rows r;
  r.x.resize(B * m.widths.front()), r.mse.resize(B * m.widths.back()), r.classes.resize(B);
  for (double& v : r.x) v = u(rng);
  for (double& v : r.mse) v = t(rng);
  for (double& v : r.classes) v = double(cls(rng));
  return r;
}

/// |got - ref| <= tol·max |ref| for every element, reporting the first few misses.
void expect_close(const std::vector<double>& got, const std::vector<double>& ref, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double scale = 1e-30;
  for (double v : ref) scale = std::max(scale, std::abs(v));
  int misses = 0;
  for (std::size_t k = 0; k < ref.size(); ++k)
    if (!(std::abs(got[k] - ref[k]) <= tol * scale) && ++misses <= 5)
      ADD_FAILURE() << what << "[" << k << "]: cuda " << got[k] << ", cpu " << ref[k] << " (tolerance " << tol * scale
                    << ")";
  EXPECT_EQ(misses, 0) << what << ": " << misses << " of " << ref.size() << " values differ";
}

void expect_same_gradient(const std::vector<LayerParams>& got, const std::vector<LayerParams>& ref, double tol) {
  ASSERT_EQ(got.size(), ref.size());
  for (std::size_t k = 0; k < ref.size(); ++k)
    for (const auto& [name, field] : kTensors)
      expect_close(got[k].*field, ref[k].*field, tol, "layer " + std::to_string(k) + " grad " + name);
}

ModelTolerance tolerance_of(DType t) { return t == DType::f32 ? model_tol<float> : model_tol<double>; }

class CudaModelVsCpu : public WithGpu<::testing::TestWithParam<Case>> {};

TEST_P(CudaModelVsCpu, ForwardLossAndGradients) {
  const Case& c = GetParam();
  const ModelTolerance tol = tolerance_of(c.compute);
  const Model m = random_model(c, std::hash<std::string>{}(name_of({c, 0})));
  qkan::CudaModel cuda(m);
  for (std::int64_t B : {1, 37, 300}) {
    SCOPED_TRACE(::testing::Message() << "B = " << B);
    const Rows r = random_rows(m, B, 7 * B + c.widths.size());
    qkan::CudaBatch inputs, mse, ce;
    cuda.load(inputs, r.x, B);
    cuda.load(mse, r.x, B, r.mse, Loss::mse);
    cuda.load(ce, r.x, B, r.classes, Loss::cross_entropy);
    expect_close(cuda.forward(inputs), qkan::forward(m, r.x, B), tol.value, "forward");
    for (const auto& [kind, batch, targets] :
         {std::tuple{Loss::mse, &mse, &r.mse}, std::tuple{Loss::cross_entropy, &ce, &r.classes}}) {
      SCOPED_TRACE(kind == Loss::mse ? "mse" : "cross_entropy");
      const double ref = qkan::loss(m, r.x, *targets, B, kind);
      EXPECT_NEAR(cuda.loss(*batch), ref, tol.value * std::abs(ref));
      std::vector<LayerParams> g;
      const double ref_lg = qkan::loss_and_gradient(m, r.x, *targets, B, kind, g);
      EXPECT_NEAR(cuda.loss_and_gradient(*batch), ref_lg, tol.value * std::abs(ref_lg));
      expect_same_gradient(cuda.gradient(), g, tol.grad);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Qkan, CudaModelVsCpu, ::testing::ValuesIn(cases()), name_of);

class CudaModelParams : public WithGpu<::testing::Test> {};

/// Every parameter survives the trip to the device and back bit for bit; frozen ones get zero
/// gradients, as on the CPU.
TEST_F(CudaModelParams, UploadDownloadAndFrozenGradients) {
  Model m = random_model({{4, 6, 3}, 3, Ansatz::pz, false, true, Activation::silu, DType::f64}, 5);
  m.options.ba_trainable = m.options.postact_bias_trainable = false;
  qkan::CudaModel cuda(m);
  Model back = m;
  for (LayerParams& L : back.layers)
    for (const auto& [name, field] : kTensors) std::fill((L.*field).begin(), (L.*field).end(), NAN);
  cuda.download(back);
  for (std::size_t k = 0; k < m.layers.size(); ++k)
    for (const auto& [name, field] : kTensors) EXPECT_EQ(back.layers[k].*field, m.layers[k].*field) << name;
  const Rows r = random_rows(m, 20, 3);
  qkan::CudaBatch batch;
  cuda.load(batch, r.x, 20, r.mse, Loss::mse);
  std::vector<LayerParams> g;
  EXPECT_NEAR(cuda.loss_and_gradient(batch), qkan::loss_and_gradient(m, r.x, r.mse, 20, Loss::mse, g),
              model_tol<double>.value * qkan::loss(m, r.x, r.mse, 20, Loss::mse));
  const std::vector<LayerParams> got = cuda.gradient();
  expect_same_gradient(got, g, model_tol<double>.grad);
  for (const LayerParams& L : got)
    for (const auto* v : {&L.preacts_weight, &L.preacts_bias, &L.base_weight, &L.postact_bias, &L.mask})
      for (double e : *v) EXPECT_EQ(e, 0.0);
}

/// Five Adam steps on the device against five on the host (float64: the same update per
/// parameter, gradients equal to rounding), and the float32 losses along the way.
TEST_F(CudaModelParams, AdamStepsMatchTheHost) {
  for (DType t : {DType::f64, DType::f32}) {
    SCOPED_TRACE(lockstep::to_string(t));
    Model host = random_model({{3, 7, 2}, 2, Ansatz::pz, true, true, Activation::gelu, t}, 9);
    const Rows r = random_rows(host, 50, 11);
    qkan::CudaModel cuda(host);
    qkan::CudaBatch batch;
    cuda.load(batch, r.x, 50, r.mse, Loss::mse);
    const qkan::AdamOptions options{.lr = 1e-2};
    qkan::CudaAdam device_adam(cuda, options);
    std::vector<double> params = qkan::trainable_values(host);
    qkan::Adam adam(params.size(), options);
    for (int step = 0; step < 5; ++step) {
      std::vector<LayerParams> g;
      const double ref = qkan::loss_and_gradient(host, r.x, r.mse, 50, Loss::mse, g);
      // float32 parameters drift apart by up to lr where a gradient's sign is lost to rounding
      // (see below): after the first step the losses agree to a looser 1e-3.
      const double tol = t == DType::f64 || step == 0 ? tolerance_of(t).value : 1e-3;
      EXPECT_NEAR(cuda.loss_and_gradient(batch), ref, tol * ref) << "step " << step;
      adam.step(params, qkan::trainable_gradient(host, g));
      qkan::set_trainable_values(host, params);
      device_adam.step(cuda);
    }
    Model got = host;
    cuda.download(got);
    // float64: gradients agree to ~1e-12, so each step moves the parameters alike to ~lr·1e-10
    // (Adam divides by √v, which amplifies where a gradient is near zero); float32 steps can
    // differ by up to lr where a gradient's sign is lost to rounding.
    if (t == DType::f64) expect_close(qkan::trainable_values(got), params, 1e-9, "parameters after 5 steps");
  }
}

/// fit() on CUDA against fit() on the CPU: the same loss histories (float64) with Adam and with
/// L-BFGS, mini-batches and the whole set, and the trained model in the host Model afterwards.
TEST_F(CudaModelParams, FitMatchesTheCpu) {
  const qkan::Dataset d = qkan::make_dataset("exp_sin", -1, 1, 200, 50, 4);
  for (const std::string optimizer : {"adam", "lbfgs"})
    for (std::int64_t batch : {std::int64_t{-1}, std::int64_t{64}}) {
      SCOPED_TRACE(optimizer + " batch " + std::to_string(batch));
      qkan::ModelOptions o;
      o.preacts_trainable = o.ba_trainable = o.postact_weight_trainable = o.postact_bias_trainable = true;
      const Model start = qkan::init_model({2, 5, 1}, 3, o, 8);
      qkan::FitOptions f;
      f.optimizer = optimizer, f.steps = optimizer == "adam" ? 10 : 2, f.lbfgs_max_iter = 5, f.batch = batch;
      f.progress = false;
      Model on_cpu = start, on_cuda = start;
      const qkan::History h_cpu = qkan::fit(on_cpu, d, f);
      f.device = Device::cuda;
      const qkan::History h_cuda = qkan::fit(on_cuda, d, f);
      // L-BFGS's line search can amplify rounding: looser than a single evaluation's tolerance.
      const double tol = optimizer == "adam" ? 1e-9 : 1e-6;
      expect_close(h_cuda.train_loss, h_cpu.train_loss, tol, "train loss");
      expect_close(h_cuda.test_loss, h_cpu.test_loss, tol, "test loss");
      if (optimizer == "adam") {
        EXPECT_EQ(h_cuda.evaluations, h_cpu.evaluations);
      }
      expect_close(qkan::trainable_values(on_cuda), qkan::trainable_values(on_cpu), tol * 100, "trained parameters");
    }
}

/// The model's backend interface (model_engine.hpp): the CUDA engine against the host one on the
/// same model, reload() and store() moving the values between the model and the device, and
/// rows that belong to the other engine refused.
TEST_F(CudaModelParams, CudaEngineMatchesTheHostEngine) {
  Model m = random_model({{3, 6, 4}, 2, Ansatz::pz, true, true, Activation::silu, DType::f64}, 21);
  const Rows r = random_rows(m, 40, 22);
  const auto host = qkan::make_model_engine(m, Device::cpu);
  const auto cuda = qkan::make_model_engine(m, Device::cuda);
  EXPECT_EQ(cuda->device(), Device::cuda);
  const auto host_rows = host->make_rows(), cuda_rows = cuda->make_rows();
  host->load(*host_rows, r.x, 40, r.classes, Loss::cross_entropy);
  cuda->load(*cuda_rows, r.x, 40, r.classes, Loss::cross_entropy);
  EXPECT_EQ(cuda_rows->rows(), 40);
  expect_close(cuda->forward(*cuda_rows), host->forward(*host_rows), model_tol<double>.value, "forward");
  const double ref = host->loss_and_gradient(*host_rows);
  EXPECT_NEAR(cuda->loss_and_gradient(*cuda_rows), ref, model_tol<double>.value * std::abs(ref));
  expect_same_gradient(cuda->gradient(), host->gradient(), model_tol<double>.grad);
  EXPECT_THROW(cuda->forward(*host_rows), std::invalid_argument);
  EXPECT_THROW(host->forward(*cuda_rows), std::invalid_argument);

  // New values reach the device with reload(); store() brings the device's back.
  std::vector<double> values = qkan::trainable_values(m);
  for (double& v : values) v *= 0.5;
  qkan::set_trainable_values(m, values);
  cuda->reload();
  expect_close(cuda->forward(*cuda_rows), host->forward(*host_rows), model_tol<double>.value, "forward after reload");
  const auto adam = cuda->make_adam(qkan::AdamOptions{.lr = 1e-2});
  cuda->loss_and_gradient(*cuda_rows);
  adam->step();
  cuda->store();
  EXPECT_NE(qkan::trainable_values(m), values);  // the step moved them
  expect_close(qkan::trainable_values(m), values, 0.05, "one step of lr 1e-2 from the halved values");
}

}  // namespace
}  // namespace lockstep::test
