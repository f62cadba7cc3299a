// The QKAN model's backend interface (model_engine.hpp) on the host: every call gives model.hpp's
// result bit for bit, Adam's step is optim.hpp's over the flat trainable values, loads check
// what the loss will need, and CUDA without a device says why. (The CUDA sibling against the
// host one: test_qkan_model_cuda.cpp.)
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "lockstep/core/backend.hpp"
#include "lockstep/qkan/model_engine.hpp"
#include "lockstep/qkan/train.hpp"

namespace lockstep::qkan {
namespace {

struct Data {
  std::vector<double> x, mse, classes;
};

Data random_data(std::int64_t B, std::int64_t I, std::int64_t O, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> c(0, static_cast<int>(O) - 1);
  Data d;
  for (std::int64_t k = 0; k < B * I; ++k) d.x.push_back(u(rng));
  for (std::int64_t k = 0; k < B * O; ++k) d.mse.push_back(u(rng));
  for (std::int64_t k = 0; k < B; ++k) d.classes.push_back(c(rng));
  return d;
}

ModelOptions every_parameter_trains() {
  ModelOptions o;
  o.preacts_trainable = o.ba_trainable = o.postact_weight_trainable = o.postact_bias_trainable = true;
  return o;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(QkanModelEngine, HostCallsAreTheModelsBitForBit) {
  const std::int64_t B = 37;
  for (DType compute : {DType::f64, DType::f32}) {
    ModelOptions o = every_parameter_trains();
    o.compute = compute;
    Model m = init_model({3, 5, 4}, 2, o, 7);
    const Data d = random_data(B, 3, 4, 8);
    const auto engine = make_model_engine(m, Device::cpu);
    EXPECT_EQ(engine->device(), Device::cpu);
    const auto rows = engine->make_rows();
    engine->load(*rows, d.x, B, d.mse, Loss::mse);
    EXPECT_EQ(rows->rows(), B);
    EXPECT_TRUE(same_bits(engine->forward(*rows), forward(m, d.x, B)));
    EXPECT_TRUE(same_bits(engine->loss(*rows), loss(m, d.x, d.mse, B, Loss::mse)));
    std::vector<LayerParams> g;
    const double expected = loss_and_gradient(m, d.x, d.mse, B, Loss::mse, g);
    EXPECT_TRUE(same_bits(engine->loss_and_gradient(*rows), expected));
    ASSERT_EQ(engine->gradient().size(), g.size());
    EXPECT_TRUE(same_bits(trainable_gradient(m, engine->gradient()), trainable_gradient(m, g)));

    engine->load(*rows, d.x, B, d.classes, Loss::cross_entropy);
    EXPECT_TRUE(same_bits(engine->loss(*rows), loss(m, d.x, d.classes, B, Loss::cross_entropy)));
  }
}

TEST(QkanModelEngine, HostAdamIsOptimsAdamOverTheTrainableValues) {
  const std::int64_t B = 16;
  Model m = init_model({2, 3, 1}, 3, every_parameter_trains(), 3);
  Model expected = m;
  const Data d = random_data(B, 2, 1, 4);
  const AdamOptions options{.lr = 0.01};
  const auto engine = make_model_engine(m, Device::cpu);
  const auto rows = engine->make_rows();
  engine->load(*rows, d.x, B, d.mse);
  const auto adam = engine->make_adam(options);

  std::vector<double> params = trainable_values(expected);
  Adam reference(params.size(), options);
  std::vector<LayerParams> g;
  for (int step = 0; step < 4; ++step) {
    engine->loss_and_gradient(*rows);
    adam->step();
    loss_and_gradient(expected, d.x, d.mse, B, Loss::mse, g);
    reference.step(params, trainable_gradient(expected, g));
    set_trainable_values(expected, params);
    EXPECT_TRUE(same_bits(trainable_values(m), params)) << "step " << step;
  }
  engine->store();  // the host engine evaluates the model's own values: nothing to store
  EXPECT_TRUE(same_bits(trainable_values(m), params));
}

TEST(QkanModelEngine, LoadsCheckWhatTheLossNeeds) {
  Model m = init_model({2, 3}, 2, ModelOptions{}, 1);
  const auto engine = make_model_engine(m, Device::cpu);
  const auto rows = engine->make_rows();
  const Data d = random_data(4, 2, 3, 2);
  EXPECT_THROW(engine->load(*rows, d.x, 5, d.mse), std::invalid_argument);               // x's size
  EXPECT_THROW(engine->load(*rows, d.x, 4, {d.mse.data(), 11}), std::invalid_argument);  // B·O targets
  std::vector<double> bad = d.classes;
  bad[2] = 3;  // O = 3 classes: 0, 1, 2
  try {
    engine->load(*rows, d.x, 4, bad, Loss::cross_entropy);
    ADD_FAILURE() << "a class index out of range was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("of row 2 is not a class index in [0, 3)"), std::string::npos) << e.what();
  }
  engine->load(*rows, d.x, 4);  // forward only
  EXPECT_EQ(engine->forward(*rows).size(), 12u);
  EXPECT_THROW(engine->loss(*rows), std::invalid_argument);
}

TEST(QkanModelEngine, CudaWithoutADeviceSaysWhy) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is visible: test_qkan_model_cuda.cpp runs the CUDA engine";
  Model m = init_model({2, 2}, 2, ModelOptions{}, 1);
  try {
    make_model_engine(m, Device::cuda);
    ADD_FAILURE() << "a CUDA engine was made without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run the model on CUDA"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lockstep::qkan
