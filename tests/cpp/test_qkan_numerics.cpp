// Number policy on both paths: NaN in gives NaN exactly in the affected outputs and finite
// values elsewhere; px gives NaN where |w·x + c| > 1; finite inputs near the poles of the Bloch
// sphere give finite values in [-1, 1] and finite gradients; an empty batch is valid.
#include "qkan_test_util.hpp"

namespace lockstep::test {
namespace {

using Param = std::tuple<Path, DType, AnsatzEnc, bool>;  // path, dtype, ansatz/encoding, fast
std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [path, dtype, ae, fast] = info.param;
  return std::string(qkan::to_string(path)) + "_" + short_name(dtype) + "_" + short_name(ae.ansatz) +
         (qkan::encoding_active(ae.ansatz, ae.preacts_trainable) ? "_enc" : "_raw") + (fast ? "_fast" : "_z");
}
Config config_of(const Param& p, std::int64_t B = 37, std::int64_t I = 5, std::int64_t O = 3) {
  const auto& [path, dtype, ae, fast] = p;
  Config cfg;
  cfg.ansatz = ae.ansatz;
  cfg.preacts_trainable = ae.preacts_trainable;
  cfg.fast = fast;
  cfg.dtype = dtype;
  cfg.B = B;
  cfg.I = I;
  cfg.O = O;
  return cfg;
}

/// NaN exactly where `expect_nan(k)` says, finite elsewhere.
template <class T, class F>
::testing::AssertionResult nan_pattern(const char* what, const Guarded<T>& out, F&& expect_nan) {
  if (!out.guards_intact()) return ::testing::AssertionFailure() << what << ": written outside its view";
  for (std::size_t k = 0; k < out.size(); ++k) {
    const bool want = expect_nan(k);
    if (want != std::isnan(out[k]) || (!want && !std::isfinite(out[k])))
      return ::testing::AssertionFailure() << what << " " << index_string(out.shape(), k) << " = " << out[k]
                                           << (want ? ", expected NaN" : ", expected a finite value");
  }
  return ::testing::AssertionSuccess();
}

class Numerics : public ::testing::TestWithParam<Param> {};

TEST_P(Numerics, NaNInXPropagatesToItsOutputsOnly) {
  const Config cfg = config_of(GetParam());
  const Path path = std::get<0>(GetParam());
  with_inputs(cfg, [&](auto tag, auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const std::int64_t b0 = 17, i0 = 2;
    in.x[b0 * cfg.I + i0] = std::numeric_limits<T>::quiet_NaN();
    const Guarded<T> post = run_solve(in, path);
    EXPECT_TRUE(nan_pattern("postacts", post, [&](std::size_t k) {
      return std::int64_t(k) / (cfg.O * cfg.I) == b0 && std::int64_t(k) % cfg.I == i0;
    }));
    const Guarded<T> y = run_contract(in, path);
    EXPECT_TRUE(nan_pattern("y", y, [&](std::size_t k) { return std::int64_t(k) / cfg.O == b0; }));
    // Backward of the plain solve: only ∂x[b0, i0] sees the NaN among the x gradients.
    const Guarded<T> g = random_like<T>(cfg.plain_shape(), seed + 1);
    const GradSet<T> gr = run_solve_backward(in, path, g, {true, false, false, false, false});
    EXPECT_TRUE(nan_pattern("grad x", *gr.x, [&](std::size_t k) { return std::int64_t(k) == b0 * cfg.I + i0; }));
  });
}

TEST_P(Numerics, NaNInThetaPropagatesToItsEdgeOnly) {
  const Config cfg = config_of(GetParam());
  const Path path = std::get<0>(GetParam());
  with_inputs(cfg, [&](auto tag, auto& in, std::uint64_t) {
    using T = decltype(tag);
    const std::int64_t o0 = 1, i0 = 3;
    in.theta[(o0 * cfg.I + i0) * cfg.R() * cfg.K()] = std::numeric_limits<T>::quiet_NaN();  // θ[o0, i0, 0, 0]
    const Guarded<T> post = run_solve(in, path);
    EXPECT_TRUE(nan_pattern("postacts", post, [&](std::size_t k) {
      return (std::int64_t(k) / cfg.I) % cfg.O == o0 && std::int64_t(k) % cfg.I == i0;
    }));
    // y[b, o] sums edges (o, i) over i: only column o0 sees the NaN.
    const Guarded<T> y = run_contract(in, path);
    EXPECT_TRUE(nan_pattern("y", y, [&](std::size_t k) { return std::int64_t(k) % cfg.O == o0; }));
  });
}

TEST_P(Numerics, NaNInWeightPropagatesToItsColumnOnly) {
  const Config cfg = config_of(GetParam());
  const Path path = std::get<0>(GetParam());
  with_inputs(cfg, [&](auto tag, auto& in, std::uint64_t) {
    using T = decltype(tag);
    const std::int64_t o0 = 2;
    in.W[o0 * cfg.I + 4] = std::numeric_limits<T>::quiet_NaN();
    const Guarded<T> y = run_contract(in, path);
    EXPECT_TRUE(nan_pattern("y", y, [&](std::size_t k) { return std::int64_t(k) % cfg.O == o0; }));
  });
}

TEST_P(Numerics, FiniteNearThePoles) {
  // Dense x grids (including 0 and ±1 exactly) with θ set so that circuits pass through the
  // poles z = ±1, where √(1 − z²) and the fast-measure slope are delicate: values stay finite
  // and within [-1, 1], gradients finite.
  const Config cfg = config_of(GetParam(), 801, 3, 2);
  const Path path = std::get<0>(GetParam());
  with_inputs(cfg, [&](auto tag, auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const bool px = cfg.ansatz == Ansatz::px;
    for (std::int64_t b = 0; b < cfg.B; ++b)
      for (std::int64_t i = 0; i < cfg.I; ++i) {
        const double t = -1.0 + 2.0 * double(b) / double(cfg.B - 1);  // exactly -1, 0, 1 included
        in.x[b * cfg.I + i] = T(px ? t : 4 * t);
      }
    const std::int64_t R = cfg.R(), K = cfg.K(), L = cfg.reps;
    for (std::int64_t o = 0; o < cfg.O; ++o)
      for (std::int64_t i = 0; i < cfg.I; ++i) {
        T* th = &in.theta[(o * cfg.I + i) * R * K];
        T* w = &in.w[(o * cfg.I + i) * L];
        T* c = &in.c[(o * cfg.I + i) * L];
        if (i == 2) continue;  // random edge
        for (std::int64_t k = 0; k < R * K; ++k) th[k] = T(0);
        for (std::int64_t l = 0; l < L; ++l) {
          w[l] = T(1);
          c[l] = T(0);
        }
        // Edge i = 0 ends on a pole for x = 0; edge i = 1 uses ±π/2 everywhere.
        const double q = (o == 0 ? -1 : 1) * M_PI / 2;
        if (i == 0) th[(R - 1) * K + (K - 1)] = T(q);
        else
          for (std::int64_t k = 0; k < R * K; ++k) th[k] = T(k % 2 ? q : -q);
        if (px && i == 0) th[0] = T(M_PI / 2);
      }
    const Guarded<T> post = run_solve(in, path);
    const double lim = 1 + 4 * std::numeric_limits<T>::epsilon();
    for (std::size_t k = 0; k < post.size(); ++k)
      ASSERT_TRUE(std::isfinite(post[k]) && std::abs(double(post[k])) <= lim)
          << "postacts " << index_string(post.shape(), k) << " = " << post[k]
          << " (x = " << in.x[k / (cfg.O * cfg.I) * cfg.I + k % cfg.I] << ")";
    // px's d arccos(e)/de = −1/√(1 − e²) is infinite at |e| = 1: keep those rows out of the backward.
    if (px)
      for (std::size_t k = 0; k < in.x.size(); ++k)
        if (std::abs(double(in.x[k])) > 0.999) in.x[k] = T(0.5);
    const Guarded<T> g = random_like<T>(cfg.plain_shape(), seed + 1);
    GradSet<T> gr = run_solve_backward(in, path, g);
    for (auto* t : {&gr.x, &gr.theta, &gr.w, &gr.c})
      for (std::size_t k = 0; k < (*t)->size(); ++k)
        ASSERT_TRUE(std::isfinite((**t)[k]))
            << "gradient " << to_string((*t)->shape()) << " " << index_string((*t)->shape(), k) << " = " << (**t)[k];
  });
}

TEST_P(Numerics, EmptyBatch) {
  const Config cfg = config_of(GetParam(), 0, 4, 3);
  const Path path = std::get<0>(GetParam());
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t) {
    using T = decltype(tag);
    EXPECT_EQ(run_solve(in, path).size(), 0u);
    EXPECT_EQ(run_contract(in, path).size(), 0u);
    // Parameter gradients are sums over an empty batch: zero, and written (not left poisoned).
    const GradSet<T> gp = run_solve_backward(in, path, Guarded<T>(cfg.plain_shape()));
    const GradSet<T> gc = run_contract_backward(in, path, Guarded<T>(Shape{0, cfg.O}));
    for (const GradSet<T>* gs : {&gp, &gc}) {
      EXPECT_TRUE(identical("grad theta", *gs->theta, Guarded<T>(in.theta.shape(), T(0))));
      EXPECT_TRUE(identical("grad preacts_weight", *gs->w, Guarded<T>(in.w.shape(), T(0))));
      EXPECT_TRUE(identical("grad preacts_bias", *gs->c, Guarded<T>(in.c.shape(), T(0))));
    }
    EXPECT_TRUE(identical("grad weight", *gc.W, Guarded<T>(in.W.shape(), T(0))));
  });
}

INSTANTIATE_TEST_SUITE_P(Qkan, Numerics,
                         ::testing::Combine(::testing::Values(Path::reference, Path::fused),
                                            ::testing::Values(DType::f32, DType::f64),
                                            ::testing::ValuesIn(all_ansatz_encodings()), ::testing::Bool()),
                         param_name);

// ---------------------------------------------------------------------------------------------
// px: arccos(w·x + c) is undefined for |w·x + c| > 1: NaN there (by policy), nowhere else.

using PxParam = std::tuple<Path, DType>;
class PxDomain : public ::testing::TestWithParam<PxParam> {};

TEST_P(PxDomain, NaNOutsideArccosDomain) {
  Config cfg;
  cfg.ansatz = Ansatz::px;
  cfg.preacts_trainable = true;
  cfg.dtype = std::get<1>(GetParam());
  const Path path = std::get<0>(GetParam());
  with_inputs(cfg, [&](auto tag, auto& in, std::uint64_t) {
    using T = decltype(tag);
    const std::int64_t b0 = 5, i0 = 1, o0 = 2;
    in.x[b0 * cfg.I + i0] = T(3);
    for (std::int64_t o = 0; o < cfg.O; ++o)  // |e| = 1.5 at (b0, o, i0) for every o
      for (int l = 0; l < cfg.reps; ++l) {
        in.w[(o * cfg.I + i0) * cfg.reps + l] = T(0.5);
        in.c[(o * cfg.I + i0) * cfg.reps + l] = T(0);
      }
    // |e| = 1 exactly is inside the domain: edge (o0, 4) has w = 0, c = 1 in rep 0.
    in.w[(o0 * cfg.I + 4) * cfg.reps] = T(0);
    in.c[(o0 * cfg.I + 4) * cfg.reps] = T(1);
    const Guarded<T> post = run_solve(in, path);
    EXPECT_TRUE(nan_pattern("postacts", post, [&](std::size_t k) {
      return std::int64_t(k) / (cfg.O * cfg.I) == b0 && std::int64_t(k) % cfg.I == i0;
    }));
    const Guarded<T> y = run_contract(in, path);
    EXPECT_TRUE(nan_pattern("y", y, [&](std::size_t k) { return std::int64_t(k) / cfg.O == b0; }));
  });
}

INSTANTIATE_TEST_SUITE_P(Qkan, PxDomain,
                         ::testing::Combine(::testing::Values(Path::reference, Path::fused),
                                            ::testing::Values(DType::f32, DType::f64)),
                         [](const ::testing::TestParamInfo<PxParam>& info) {
                           return std::string(qkan::to_string(std::get<0>(info.param))) + "_" +
                                  short_name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace lockstep::test

namespace lockstep::test {
namespace {

// The fused path's vector sin/cos are polynomials valid for |angle| <= 39000; past that it
// must still return the function's value, not garbage. The angles here are exact in both
// precisions (raw x and L·x of these values are representable), so float32 must agree with
// the reference to its rounding too.
template <class T> void large_angles(const std::vector<double>& xs, bool with_encoding, double tol) {
  for (Ansatz a : {Ansatz::pz, Ansatz::mix, Ansatz::real, Ansatz::rpz})
    for (bool enc : {false, true}) {
      if ((a == Ansatz::rpz && !enc) || (enc && !with_encoding)) continue;
      const int L = 3, R = qkan::theta_rows(a, L), K = qkan::theta_cols(a);
      const auto B = static_cast<std::int64_t>(xs.size());
      std::vector<T> theta(R * K), w(L), c(L), x(xs.begin(), xs.end()), out_f(B), out_r(B);
      std::mt19937_64 rng(static_cast<std::uint64_t>(a) * 2 + enc);
      std::uniform_real_distribution<double> U(-1, 1);
      for (auto& v : theta) v = T(U(rng));
      for (auto& v : w) v = T(1 + 0.1 * U(rng));
      for (auto& v : c) v = T(U(rng));
      for (Path path : {Path::fused, Path::reference}) {
        qkan::Options opt;
        opt.ansatz = a;
        opt.reps = L;
        opt.preacts_trainable = enc;
        opt.path = path;
        auto& out = path == Path::fused ? out_f : out_r;
        std::fill(out.begin(), out.end(), T(std::nan("")));
        qkan::solve_forward(opt, const_view(x.data(), {B, 1}), const_view(theta.data(), {1, R, K}),
                            const_view(w.data(), {1, L}), const_view(c.data(), {1, L}),
                            mut_view(out.data(), {B, 1, 1}));
      }
      for (std::int64_t b = 0; b < B; ++b)
        EXPECT_NEAR(out_f[b], out_r[b], tol) << qkan::to_string(a) << (enc ? " enc" : " raw") << " x = " << xs[b];
    }
}

TEST(LargeAngles, FusedMatchesReference) {
  const std::vector<double> xs = {4.0e4, 1.0e6, -1.0e8, 3.2e9};
  large_angles<float>(xs, /*with_encoding=*/false, 2e-5);  // w·x + c would round in float32
  large_angles<double>(xs, /*with_encoding=*/true, 1e-6);
}

}  // namespace
}  // namespace lockstep::test
