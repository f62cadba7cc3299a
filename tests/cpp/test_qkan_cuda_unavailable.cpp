// Asking for CUDA where it cannot run (a build without the CUDA backend, or no visible GPU, as
// in CI) fails with a std::runtime_error saying why, never a crash. Where a GPU is visible that
// situation cannot be made: the tests are skipped, saying so (lockstep_cuda_tests covers CUDA).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "lockstep/core/backend.hpp"
#include "lockstep/qkan/cuda_model.hpp"
#include "lockstep/qkan/train.hpp"

namespace lockstep::qkan {
namespace {

template <class F> std::string runtime_error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::runtime_error";
  return "";
}

class QkanCudaUnavailable : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is visible here, so CUDA being unavailable cannot be tested";
  }
};

TEST_F(QkanCudaUnavailable, CudaModelSaysWhy) {
  const Model m = init_model({2, 3, 1}, 3, ModelOptions{}, 1);
  const std::string msg = runtime_error_of([&] { CudaModel cuda(m); });
  EXPECT_NE(msg.find("[qkan.cuda_model] cannot run the model on CUDA: "), std::string::npos) << msg;
  const bool built_with_cuda = build_summary().find("CUDA on") != std::string::npos;
  EXPECT_NE(msg.find(built_with_cuda ? "CUDA device" : "no CUDA backend"), std::string::npos) << msg;
}

TEST_F(QkanCudaUnavailable, FitOnCudaSaysWhy) {
  for (const std::string optimizer : {"adam", "lbfgs"}) {
    Model m = init_model({1, 1}, 3, ModelOptions{}, 1);
    const Model before = m;
    FitOptions o;
    o.optimizer = optimizer, o.steps = 2, o.progress = false, o.device = Device::cuda;
    const std::string msg = runtime_error_of([&] { fit(m, make_dataset("sin", -1, 1, 10, 5, 2), o); });
    EXPECT_NE(msg.find("cannot run the model on CUDA"), std::string::npos) << optimizer << ": " << msg;
    EXPECT_EQ(m.layers[0].theta, before.layers[0].theta) << "the model is untouched";
  }
}

}  // namespace
}  // namespace lockstep::qkan
