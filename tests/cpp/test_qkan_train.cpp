// Training: data sets, upstream's initialisation, the flat parameter vector, and fits that
// reproduce bit for bit and reach known losses.
#include <gtest/gtest.h>

#include <cmath>

#include "lockstep/qkan/train.hpp"

namespace lockstep::qkan {
namespace {

ModelOptions all_trainable() {
  ModelOptions o;
  o.preacts_trainable = o.ba_trainable = o.postact_weight_trainable = o.postact_bias_trainable = true;
  return o;
}

TEST(QkanTrain, DatasetsFollowTheirFormulaAndSeed) {
  const Dataset d = make_dataset("exp_sin", -1, 1, 50, 20, 7);
  EXPECT_EQ(d.n_in, 2);
  ASSERT_EQ(d.train_x.size(), 100u);
  ASSERT_EQ(d.test_y.size(), 20u);
  for (std::int64_t r = 0; r < d.n_train; ++r) {
    const double x0 = d.train_x[2 * r], x1 = d.train_x[2 * r + 1];
    EXPECT_TRUE(x0 >= -1 && x0 <= 1 && x1 >= -1 && x1 <= 1);
    EXPECT_DOUBLE_EQ(d.train_y[r], std::exp(std::sin(M_PI * x0) + x1 * x1));
  }
  EXPECT_EQ(make_dataset("exp_sin", -1, 1, 50, 20, 7).train_x, d.train_x);
  EXPECT_NE(make_dataset("exp_sin", -1, 1, 50, 20, 8).train_x, d.train_x);
  EXPECT_EQ(make_dataset("j0like", 0, 1, 3, 0, 1).n_test, 0);
  EXPECT_THROW(make_dataset("nope", 0, 1, 3, 3, 1), std::invalid_argument);
  EXPECT_THROW(make_dataset("sin", 1, 1, 3, 3, 1), std::invalid_argument);
  EXPECT_THROW(make_dataset("sin", 0, 1, 0, 3, 1), std::invalid_argument);
}

TEST(QkanTrain, InitialisationIsUpstreams) {
  const Model m = init_model({64, 48}, 3, all_trainable(), 3);
  const LayerParams& L = m.layers[0];
  double s2 = 0, mean = 0;
  for (double v : L.theta) mean += v, s2 += v * v;
  mean /= double(L.theta.size());
  const double sd = std::sqrt(s2 / double(L.theta.size()) - mean * mean);
  const double want = std::sqrt(2.0 / ((64 + 48) * 4 * 2));  // Xavier-normal over (out, in, R', k)
  EXPECT_NEAR(sd, want, 0.02 * want);
  EXPECT_NEAR(mean, 0, 0.02 * want);
  for (double v : L.preacts_weight) EXPECT_EQ(v, 1.0);
  for (double v : L.base_weight) EXPECT_EQ(v, 0.5);
  ModelOptions frozen;
  EXPECT_EQ(init_model({2, 2}, 3, frozen, 3).layers[0].base_weight, std::vector<double>(4, 0.0));
  EXPECT_THROW(init_model({2}, 3, frozen, 3), std::invalid_argument);
  EXPECT_THROW(init_model({2, 0}, 3, frozen, 3), std::invalid_argument);
}

TEST(QkanTrain, FlatParametersFollowTheTrainableFlags) {
  Model m = init_model({3, 4, 2}, 2, all_trainable(), 5);
  const std::vector<double> p = trainable_values(m);
  // θ (4·3 + 2·4)·3·2, w and c 2·(12 + 8)·2, then three (out, in) tables of 12 + 8.
  EXPECT_EQ(p.size(), 120u + 80u + 60u);
  std::vector<double> q(p.size());
  for (std::size_t k = 0; k < q.size(); ++k) q[k] = 0.001 * double(k);
  set_trainable_values(m, q);
  EXPECT_EQ(trainable_values(m), q);
  EXPECT_THROW(set_trainable_values(m, std::vector<double>(3)), std::invalid_argument);
  ModelOptions theta_only;
  EXPECT_EQ(trainable_values(init_model({3, 4, 2}, 2, theta_only, 5)).size(), 120u);
}

TEST(QkanTrain, FitReproducesBitForBitAndReachesTheQuickStartLoss) {
  const Dataset d = make_dataset("j0like", 0, 1, 1000, 1000, 0);
  FitOptions o;
  o.progress = false;
  Model a = init_model({1, 1}, 3, all_trainable(), 0), b = a;
  const History ha = fit(a, d, o), hb = fit(b, d, o);
  EXPECT_EQ(ha.train_loss, hb.train_loss);
  EXPECT_EQ(trainable_values(a), trainable_values(b));
  // The history's training loss is L-BFGS's last value, which must be loss() at the final weights.
  EXPECT_EQ(ha.train_loss.back(), loss(a, d.train_x, d.train_y, d.n_train, Loss::mse));
  ASSERT_EQ(ha.test_loss.size(), 100u);
  // qkan's own run of this configuration (bench/qkan_fit.py, torch's L-BFGS) ends on a plateau
  // near 4e-3; runs leave that plateau or not depending on rounding, so the bound is qkan's
  // loss plus the 20% the performance target allows.
  EXPECT_LT(ha.test_loss.back(), 4.8e-3);
  EXPECT_LT(ha.test_loss.back(), 0.05 * ha.test_loss.front());
}

TEST(QkanTrain, Float32FitReachesQkansLossWithinTheEvaluationBudget) {
  // In float32 (qkan's precision) the quick start ends on or below the plateau near 4e-3 where
  // qkan's own float32 run stops (bench/qkan_fit.py): the bound is that plus 20%. L-BFGS may
  // spend 25 evaluations per step (max_iter·5/4) and overshoot that by one line search (at most
  // 25 more), plus the evaluation that opens each step.
  const Dataset d = make_dataset("j0like", 0, 1, 1000, 1000, 0);
  FitOptions o;
  o.progress = false;
  ModelOptions mo = all_trainable();
  mo.compute = DType::f32;
  Model m = init_model({1, 1}, 3, mo, 0), again = m;
  const History h = fit(m, d, o);
  EXPECT_LT(h.test_loss.back(), 4.8e-3);
  EXPECT_LE(h.evaluations, o.steps * (25 + 25 + 1));
  EXPECT_EQ(fit(again, d, o).train_loss, h.train_loss);  // reproducible in float32 too
}

TEST(QkanTrain, AdamOnMiniBatchesLowersTheLoss) {
  const Dataset d = make_dataset("sin", -1, 1, 256, 256, 1);
  FitOptions o;
  o.progress = false;
  o.optimizer = "adam";
  o.lr = 0.02;
  o.steps = 300;
  o.batch = 32;
  Model m = init_model({1, 3, 1}, 2, all_trainable(), 1);
  const double before = loss(m, d.test_x, d.test_y, d.n_test, Loss::mse);
  const History h = fit(m, d, o);
  EXPECT_LT(h.test_loss.back(), 0.1 * before);
  Model other = init_model({1, 3, 1}, 2, all_trainable(), 1);
  o.seed = 2;  // other batches
  EXPECT_NE(fit(other, d, o).train_loss, h.train_loss);
  o.optimizer = "sgd";
  EXPECT_THROW(fit(other, d, o), std::invalid_argument);
}

}  // namespace
}  // namespace lockstep::qkan
