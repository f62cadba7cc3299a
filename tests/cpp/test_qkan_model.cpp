// QKAN models and their files: a model survives to_safetensors -> bytes -> from_safetensors
// exactly (float64) and its forward is unchanged; inconsistent files are refused naming the
// tensor. (The forward against qkan.QKAN itself: tests/python/test_cli_qkan.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "lockstep/qkan/model.hpp"

namespace lockstep::qkan {
namespace {

Model random_model(std::vector<std::int64_t> widths, int reps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Model m;
  m.reps = reps;
  m.widths = widths;
  const std::int64_t R = theta_rows(m.options.ansatz, reps), K = theta_cols(m.options.ansatz);
  auto fill = [&](std::int64_t n) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = u(rng);
    return v;
  };
  for (std::size_t k = 0; k + 1 < widths.size(); ++k) {
    LayerParams L;
    L.in = widths[k], L.out = widths[k + 1];
    const std::int64_t E = L.in * L.out;
    L.theta = fill(E * R * K);
    L.preacts_weight = fill(E * reps);
    L.preacts_bias = fill(E * reps);
    L.base_weight = fill(E);
    L.postact_weights = fill(E);
    L.postact_bias = fill(E);
    L.mask = fill(E);
    m.layers.push_back(std::move(L));
  }
  return m;
}

void expect_refused(const safetensors::File& f, const std::string& what) {
  try {
    from_safetensors(f, ModelOptions{});
    ADD_FAILURE() << "accepted (" << what << ")";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(QkanModel, FileRoundTripKeepsParametersAndForward) {
  const Model m = random_model({3, 4, 2}, 3, 11);
  const safetensors::File f = to_safetensors(m, DType::f64);
  EXPECT_EQ(f.tensors.size(), 14u);
  EXPECT_EQ(f.tensors.at("layers.0.theta").shape, (Shape{4, 3, 4, 2}));
  EXPECT_EQ(f.tensors.at("layers.1.preacts_weight").shape, (Shape{2, 4, 3}));
  const Model back = from_safetensors(safetensors::parse(safetensors::serialize(f), "memory"), ModelOptions{});
  EXPECT_EQ(back.widths, m.widths);
  EXPECT_EQ(back.reps, 3);
  ASSERT_EQ(back.layers.size(), 2u);
  EXPECT_EQ(back.layers[1].theta, m.layers[1].theta);
  EXPECT_EQ(back.layers[0].mask, m.layers[0].mask);
  std::vector<double> x(5 * 3);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = std::sin(double(k));
  const std::vector<double> y = forward(m, x, 5);
  EXPECT_EQ(y.size(), 10u);
  EXPECT_EQ(forward(back, x, 5), y);
  // float32 files round to float32 and stay close.
  const Model m32 = from_safetensors(to_safetensors(m, DType::f32), ModelOptions{});
  const std::vector<double> y32 = forward(m32, x, 5);
  for (std::size_t k = 0; k < y.size(); ++k) EXPECT_NEAR(y32[k], y[k], 1e-5 * (1 + std::abs(y[k])));
}

TEST(QkanModel, InconsistentFilesAreRefused) {
  const safetensors::File good = to_safetensors(random_model({3, 4, 2}, 3, 12), DType::f32);
  expect_refused(safetensors::File{}, "no 'layers.0.theta'");
  {
    auto f = good;
    f.tensors.erase("layers.1.mask");
    expect_refused(f, "no tensor 'layers.1.mask'");
  }
  {
    auto f = good;
    f.tensors["layers.0.base_weight"] = safetensors::from_values<float>(std::vector<float>(6), {2, 3});
    expect_refused(f, "'layers.0.base_weight' has shape (2,3), expected (4,3)");
  }
  {
    auto f = to_safetensors(random_model({3, 4, 2}, 2, 13), DType::f32);
    f.tensors["layers.0.preacts_weight"] = good.tensors.at("layers.0.preacts_weight");
    f.tensors["layers.0.preacts_bias"] = good.tensors.at("layers.0.preacts_bias");
    f.tensors["layers.0.theta"] = good.tensors.at("layers.0.theta");
    expect_refused(f, "has 2 reps but layer 0 has 3");
  }
  {
    auto f = good;
    for (const char* t : {"theta", "preacts_weight", "preacts_bias", "base_weight", "postact_weights", "postact_bias", "mask"})
      f.tensors[std::string("layers.1.") + t] = to_safetensors(random_model({5, 2}, 3, 14), DType::f32).tensors.at(std::string("layers.0.") + t);
    expect_refused(f, "layer 1 takes 5 inputs but layer 0 gives 4");
  }
  {
    auto f = good;
    f.tensors["layers.0.theta"] = safetensors::from_values<float>(std::vector<float>(3 * 4 * 2), {3, 4, 2});
    expect_refused(f, "grouped θ is not supported");
  }
  {
    auto f = good;
    f.tensors["layers.0.mask"].dtype = "I32";
    expect_refused(f, "'layers.0.mask' has dtype I32");
  }
}

TEST(QkanModel, ActivationsMatchTheirDefinitions) {
  EXPECT_DOUBLE_EQ(activate(Activation::silu, 1.0), 1.0 / (1 + std::exp(-1.0)));
  EXPECT_NEAR(activate(Activation::gelu, 1.0), 0.8413447460685429, 1e-15);
  EXPECT_EQ(activate(Activation::relu, -2.0), 0.0);
  EXPECT_DOUBLE_EQ(activate(Activation::tanh, 0.5), std::tanh(0.5));
  EXPECT_DOUBLE_EQ(activate(Activation::sigmoid, 0.0), 0.5);
  EXPECT_EQ(parse_activation("gelu"), Activation::gelu);
  EXPECT_THROW(parse_activation("swish"), std::invalid_argument);
}

}  // namespace
}  // namespace lockstep::qkan
