// Order conditions of the interaction-picture tableaux, computed from the tableau data over
// every rooted tree up to order 5 (Butcher): Σ_i b_i Φ_i(t) = 1/γ(t).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "lockstep/prop/tableau.hpp"

namespace lp = lockstep::prop;

namespace {

// A rooted tree as its canonical bracket string: a node is "[" + sorted children + "]".
struct Tree {
  std::vector<Tree> children;
  std::string key() const {
    std::vector<std::string> keys;
    for (const auto& child : children) keys.push_back(child.key());
    std::sort(keys.begin(), keys.end());
    std::string s = "[";
    for (const auto& k : keys) s += k;
    return s + "]";
  }
  int order() const {
    int n = 1;
    for (const auto& child : children) n += child.order();
    return n;
  }
  double density() const {  // γ(t)
    double g = order();
    for (const auto& child : children) g *= child.density();
    return g;
  }
};

// Appends to `out` every tree obtained by attaching one leaf to `node` or a node below it;
// `node` lies inside `root`, which is copied with the leaf attached and then restored.
void grow(Tree& root, Tree& node, std::vector<Tree>& out) {
  node.children.push_back(Tree{});
  out.push_back(root);
  node.children.pop_back();
  for (auto& child : node.children) grow(root, child, out);
}

std::vector<Tree> trees_up_to(int max_order) {
  std::vector<Tree> all{Tree{}}, level{Tree{}};
  for (int n = 2; n <= max_order; ++n) {
    std::vector<Tree> next;
    std::set<std::string> seen;
    for (Tree t : level) {
      std::vector<Tree> grown;
      grow(t, t, grown);
      for (auto& g : grown)
        if (seen.insert(g.key()).second) next.push_back(g);
    }
    all.insert(all.end(), next.begin(), next.end());
    level = next;
  }
  return all;
}

// Φ_i(t) for every stage i: the product over children of (A Φ(child))_i.
std::vector<double> stage_weights(const lp::Tableau& tab, const Tree& t) {
  const int s = tab.stages();
  std::vector<double> phi(s, 1.0);
  for (const auto& child : t.children) {
    const auto inner = stage_weights(tab, child);
    for (int i = 0; i < s; ++i) {
      double acc = 0;
      for (int j = 0; j < s; ++j) acc += tab.a[i][j] * inner[j];
      phi[i] *= acc;
    }
  }
  return phi;
}

double weight(const std::vector<double>& b, const std::vector<double>& phi) {
  double acc = 0;
  for (std::size_t i = 0; i < b.size(); ++i) acc += b[i] * phi[i];
  return acc;
}

// The largest p such that every tree of order ≤ p satisfies the condition to `tol`.
int satisfied_order(const lp::Tableau& tab, const std::vector<double>& b, double theta = 1) {
  const auto trees = trees_up_to(6);
  int order = 6;
  for (const auto& t : trees) {
    const double expected = std::pow(theta, t.order()) / t.density();
    // The coefficients are ratios of integers up to ~1e12 rounded to double: 1e-14 is a few ulps
    // of the partial sums (they reach ~10 in magnitude for DP5).
    if (std::abs(weight(b, stage_weights(tab, t)) - expected) > 1e-13) order = std::min(order, t.order() - 1);
  }
  return order;
}

}  // namespace

TEST(Tableau, TreeCountsMatchButcher) {
  // Rooted trees per order 1..6: 1, 1, 2, 4, 9, 20.
  const auto trees = trees_up_to(6);
  std::vector<int> counts(7, 0);
  for (const auto& t : trees) ++counts[t.order()];
  EXPECT_EQ(counts, (std::vector<int>{0, 1, 1, 2, 4, 9, 20}));
}

TEST(Tableau, RowSumsAreNodesAndExplicit) {
  for (auto scheme : {lp::Scheme::rk4ip, lp::Scheme::erk43ip, lp::Scheme::dp54ip}) {
    const auto& tab = lp::tableau(scheme);
    const int s = tab.stages();
    ASSERT_EQ(static_cast<int>(tab.a.size()), s) << tab.name;
    ASSERT_EQ(static_cast<int>(tab.b.size()), s) << tab.name;
    EXPECT_EQ(tab.c[0], 0.0);
    for (int i = 0; i < s; ++i) {
      double sum = 0;
      for (int j = 0; j < s; ++j) {
        if (j >= i) {
          EXPECT_EQ(tab.a[i][j], 0.0) << tab.name << " a" << i << j;
        }
        sum += tab.a[i][j];
      }
      EXPECT_NEAR(sum, tab.c[i], 1e-15) << tab.name << " row " << i;
      if (i > 0) {
        EXPECT_GE(tab.c[i], tab.c[i - 1]) << tab.name;
      }
    }
    if (tab.fsal) {
      EXPECT_EQ(tab.c[s - 1], 1.0);
      for (int j = 0; j < s; ++j) EXPECT_EQ(tab.a[s - 1][j], tab.b[j]) << tab.name;
    }
  }
}

TEST(Tableau, OrderConditionsOfPropagatedAndEmbeddedWeights) {
  // Exactly the claimed orders: every tree up to p holds and some tree of order p + 1 fails.
  EXPECT_EQ(satisfied_order(lp::rk4ip_tableau(), lp::rk4ip_tableau().b), 4);
  EXPECT_EQ(satisfied_order(lp::erk43ip_tableau(), lp::erk43ip_tableau().b), 4);
  EXPECT_EQ(satisfied_order(lp::erk43ip_tableau(), lp::erk43ip_tableau().b_hat), 3);
  EXPECT_EQ(satisfied_order(lp::dp54ip_tableau(), lp::dp54ip_tableau().b), 5);
  EXPECT_EQ(satisfied_order(lp::dp54ip_tableau(), lp::dp54ip_tableau().b_hat), 4);
  for (auto scheme : {lp::Scheme::rk4ip, lp::Scheme::erk43ip, lp::Scheme::dp54ip}) {
    const auto& tab = lp::tableau(scheme);
    EXPECT_EQ(satisfied_order(tab, tab.b), tab.order) << tab.name;
    if (tab.has_error_estimate()) {
      EXPECT_EQ(satisfied_order(tab, tab.b_hat), tab.embedded_order) << tab.name;
    }
  }
}

TEST(Tableau, Erk43EmbeddedFamilyIsOneParameter) {
  // b_hat − b must lie in the null space of the order ≤ 3 conditions, which for RK4 + FSAL is
  // spanned by (0, 0, 0, −1, 1); the published x = 1/10.
  const auto& tab = lp::erk43ip_tableau();
  for (int j = 0; j < 3; ++j) EXPECT_EQ(tab.b_hat[j], tab.b[j]);
  EXPECT_NEAR(tab.b_hat[3] - tab.b[3], -0.1, 1e-16);
  EXPECT_NEAR(tab.b_hat[4] - tab.b[4], 0.1, 1e-16);
}

TEST(Tableau, DenseOutputOfDp5) {
  const auto& tab = lp::dp54ip_tableau();
  ASSERT_TRUE(tab.has_dense_output());
  // b(0) = 0, b(1) = b (the interpolant meets both step ends).
  const auto w0 = tab.dense_weights(0), w1 = tab.dense_weights(1);
  for (int j = 0; j < tab.stages(); ++j) {
    EXPECT_EQ(w0[j], 0.0);
    EXPECT_NEAR(w1[j], tab.b[j], 1e-14) << j;
  }
  // Order 4 at every θ: Σ b_j(θ) Φ_j(t) = θ^|t|/γ(t) for |t| ≤ 4 (and not 5 inside the step).
  for (double theta : {0.1, 0.25, 0.5, 0.77, 0.9}) {
    EXPECT_EQ(satisfied_order(tab, tab.dense_weights(theta), theta), 4) << theta;
  }
}
