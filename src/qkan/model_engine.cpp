// ModelEngine's two siblings (model_engine.hpp) and the one factory that chooses between them.
#include "lockstep/qkan/model_engine.hpp"

#include <algorithm>
#include <utility>

#include "lockstep/core/error.hpp"
#include "lockstep/qkan/cuda_model.hpp"
#include "lockstep/qkan/train.hpp"

namespace lockstep::qkan {

namespace {

constexpr std::string_view kWhere = "qkan.model_engine";

/// Rows of the host engine: copies of the caller's values, and the workspace their repeated
/// evaluations reuse.
struct HostRows final : ModelRows {
  std::vector<double> x, targets;
  std::int64_t count = 0;
  bool has_targets = false;
  Loss kind = Loss::mse;
  Workspace workspace;

  std::int64_t rows() const override { return count; }
};

/// Rows of the CUDA engine: in device memory.
struct CudaRows final : ModelRows {
  CudaBatch batch;
  std::int64_t count = 0;

  std::int64_t rows() const override { return count; }
};

/// `rows` as the engine's own kind, or std::invalid_argument.
template <class Rows> Rows& own(ModelRows& rows) {
  auto* r = dynamic_cast<Rows*>(&rows);
  if (r == nullptr) invalid_argument(kWhere, "these rows were made by an engine of another device");
  return *r;
}

/// The CPU model: the model's own values, evaluated by model.hpp's functions.
class HostModelEngine final : public ModelEngine {
 public:
  explicit HostModelEngine(Model& model) : model_(model) {}

  Device device() const override { return Device::cpu; }
  std::unique_ptr<ModelRows> make_rows() const override { return std::make_unique<HostRows>(); }

  void load(ModelRows& rows, std::span<const double> x, std::int64_t B, std::span<const double> targets,
            Loss kind) override {
    HostRows& r = own<HostRows>(rows);
    check_inputs(model_, x, B);
    if (!targets.empty()) check_targets(model_, targets, B, kind);
    r.x.assign(x.begin(), x.end());
    r.targets.assign(targets.begin(), targets.end());
    r.count = B, r.has_targets = !targets.empty(), r.kind = kind;
  }

  std::vector<double> forward(ModelRows& rows) override {
    HostRows& r = own<HostRows>(rows);
    return qkan::forward(model_, r.x, r.count, &r.workspace);
  }
  double loss(ModelRows& rows) override {
    HostRows& r = with_targets(rows);
    return qkan::loss(model_, r.x, r.targets, r.count, r.kind, &r.workspace);
  }
  double loss_and_gradient(ModelRows& rows) override {
    HostRows& r = with_targets(rows);
    return qkan::loss_and_gradient(model_, r.x, r.targets, r.count, r.kind, gradient_, &r.workspace);
  }
  const std::vector<LayerParams>& gradient() override { return gradient_; }

  void reload() override {}
  void store() override {}

  std::unique_ptr<ModelOptimizer> make_adam(const AdamOptions& options) override {
    return std::make_unique<HostAdam>(*this, options);
  }

 private:
  /// Adam (optim.hpp) over the model's flat trainable values.
  class HostAdam final : public ModelOptimizer {
   public:
    HostAdam(HostModelEngine& engine, const AdamOptions& options)
        : engine_(engine), adam_(trainable_values(engine.model_).size(), options) {}
    void step() override {
      std::vector<double> params = trainable_values(engine_.model_);
      adam_.step(params, trainable_gradient(engine_.model_, engine_.gradient_));
      set_trainable_values(engine_.model_, params);
    }

   private:
    HostModelEngine& engine_;
    Adam adam_;
  };

  HostRows& with_targets(ModelRows& rows) {
    HostRows& r = own<HostRows>(rows);
    if (!r.has_targets) invalid_argument(kWhere, "the rows were loaded without targets; a loss needs them");
    return r;
  }

  Model& model_;
  std::vector<LayerParams> gradient_;
};

/// The CUDA model: a copy of the model's values on the device (cuda_model.hpp).
class CudaModelEngine final : public ModelEngine {
 public:
  explicit CudaModelEngine(Model& model) : model_(model), cuda_(model) {}

  Device device() const override { return Device::cuda; }
  std::unique_ptr<ModelRows> make_rows() const override { return std::make_unique<CudaRows>(); }

  void load(ModelRows& rows, std::span<const double> x, std::int64_t B, std::span<const double> targets,
            Loss kind) override {
    CudaRows& r = own<CudaRows>(rows);
    cuda_.load(r.batch, x, B, targets, kind);
    r.count = B;
  }

  std::vector<double> forward(ModelRows& rows) override { return cuda_.forward(own<CudaRows>(rows).batch); }
  double loss(ModelRows& rows) override { return cuda_.loss(own<CudaRows>(rows).batch); }
  double loss_and_gradient(ModelRows& rows) override { return cuda_.loss_and_gradient(own<CudaRows>(rows).batch); }
  const std::vector<LayerParams>& gradient() override {
    gradient_ = cuda_.gradient();
    return gradient_;
  }

  void reload() override { cuda_.upload(model_); }
  void store() override { cuda_.download(model_); }

  std::unique_ptr<ModelOptimizer> make_adam(const AdamOptions& options) override {
    return std::make_unique<DeviceAdam>(cuda_, options);
  }

 private:
  /// CudaAdam: its moments in device memory, one kernel per step.
  class DeviceAdam final : public ModelOptimizer {
   public:
    DeviceAdam(CudaModel& model, const AdamOptions& options) : model_(model), adam_(model, options) {}
    void step() override { adam_.step(model_); }

   private:
    CudaModel& model_;
    CudaAdam adam_;
  };

  Model& model_;
  CudaModel cuda_;
  std::vector<LayerParams> gradient_;  // the last gradient() brought to the host
};

}  // namespace

std::unique_ptr<ModelEngine> make_model_engine(Model& model, Device device) {
  switch (device) {
    case Device::cpu: return std::make_unique<HostModelEngine>(model);
    case Device::cuda: return std::make_unique<CudaModelEngine>(model);
  }
  invalid_argument(kWhere, "unknown device; supported: cpu, cuda");
}

}  // namespace lockstep::qkan
