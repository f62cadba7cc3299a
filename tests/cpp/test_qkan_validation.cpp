// Caller mistakes raise std::invalid_argument naming the argument, on every path, before
// anything is written. Each case starts from a valid call and breaks one thing.
#include <functional>
#include <string_view>

#include "qkan_test_util.hpp"

namespace lockstep::test {
namespace {

/// Storage for views of any shape used below (large enough that a call with a wrong shape that
/// slipped through validation stays inside it), and a valid baseline call:
/// pz, reps 3, encoding on, B = 4, I = 3, O = 2, float64.
struct Call {
  static constexpr std::size_t kPool = 1 << 14;
  static constexpr double kPoison = -7.0e30;
  std::vector<double> in64 = std::vector<double>(kPool, 0.25);
  std::vector<float> in32 = std::vector<float>(kPool, 0.25f);
  std::vector<double> out64 = std::vector<double>(kPool, kPoison);
  std::vector<float> out32 = std::vector<float>(kPool, float(kPoison));

  Options opt;
  ConstTensor x, theta, w, c, W, gpost, gy;
  MutTensor post, y;
  Grads gplain, gcontract;

  explicit Call(Path path) {
    opt.ansatz = Ansatz::pz;
    opt.reps = 3;
    opt.preacts_trainable = true;
    opt.path = path;
    x = in(DType::f64, {4, 3});
    theta = in(DType::f64, {2, 3, 4, 2});
    w = in(DType::f64, {2, 3, 3});
    c = in(DType::f64, {2, 3, 3});
    W = in(DType::f64, {2, 3});
    gpost = in(DType::f64, {4, 2, 3});
    gy = in(DType::f64, {4, 2});
    post = out(DType::f64, {4, 2, 3}, 0);
    y = out(DType::f64, {4, 2}, 1);
    gplain = {out(DType::f64, {4, 3}, 2),
              out(DType::f64, {2, 3, 4, 2}, 3),
              out(DType::f64, {2, 3, 3}, 4),
              out(DType::f64, {2, 3, 3}, 5),
              {}};
    gcontract = gplain;
    gcontract.W = out(DType::f64, {2, 3}, 6);
  }
  ConstTensor in(DType d, Shape s) const {
    return {d == DType::f64 ? static_cast<const void*>(in64.data()) : static_cast<const void*>(in32.data()), d,
            std::move(s)};
  }
  /// Output views use disjoint slices of the output pool.
  MutTensor out(DType d, Shape s, int slot) {
    const std::size_t off = static_cast<std::size_t>(slot) * 1024;
    return {d == DType::f64 ? static_cast<void*>(out64.data() + off) : static_cast<void*>(out32.data() + off), d,
            std::move(s)};
  }
  bool outputs_untouched() const {
    for (std::size_t k = 0; k < kPool; ++k)
      if (out64[k] != kPoison || out32[k] != float(kPoison)) return false;
    return true;
  }

  void solve() const { qkan::solve_forward(opt, x, theta, w, c, post); }
  void solve_bwd() const { qkan::solve_backward(opt, x, theta, w, c, gpost, gplain); }
  void contract() const { qkan::contract_forward(opt, x, theta, w, c, W, y); }
  void contract_bwd() const { qkan::contract_backward(opt, x, theta, w, c, W, gy, gcontract); }
};

enum Entry : unsigned {
  kSolve = 1,
  kSolveBwd = 2,
  kContract = 4,
  kContractBwd = 8,
  kAll = 15,
  kPlain = 3,
  kContracted = 12
};

class Validation : public ::testing::TestWithParam<Path> {
 protected:
  /// Applies `breakit` to a fresh valid call and expects each selected entry point to throw
  /// std::invalid_argument naming every needle, without writing any output.
  void expect_rejected(const std::function<void(Call&)>& breakit, std::initializer_list<std::string_view> needles,
                       unsigned entries = kAll) {
    const std::pair<Entry, const char*> names[] = {{kSolve, "solve_forward"},
                                                   {kSolveBwd, "solve_backward"},
                                                   {kContract, "contract_forward"},
                                                   {kContractBwd, "contract_backward"}};
    for (auto [e, name] : names) {
      if (!(entries & e)) continue;
      SCOPED_TRACE(name);
      Call call(GetParam());
      breakit(call);
      EXPECT_TRUE(throws_invalid(
          [&] {
            switch (e) {
              case kSolve: call.solve(); break;
              case kSolveBwd: call.solve_bwd(); break;
              case kContract: call.contract(); break;
              default: call.contract_bwd(); break;
            }
          },
          needles));
      EXPECT_TRUE(call.outputs_untouched()) << "an output was written before the error";
    }
  }
};

TEST_P(Validation, BaselineIsValid) {
  Call call(GetParam());
  EXPECT_NO_THROW(call.solve());
  EXPECT_NO_THROW(call.solve_bwd());
  EXPECT_NO_THROW(call.contract());
  EXPECT_NO_THROW(call.contract_bwd());
}

TEST_P(Validation, X) {
  expect_rejected([](Call& k) { k.x.shape = {12}; }, {"x", "(12,)"});
  expect_rejected([](Call& k) { k.x.shape = {4, 3, 1}; }, {"x"});
  expect_rejected([](Call& k) { k.x.shape = {4, 0}; }, {"x"});
  expect_rejected([](Call& k) { k.x.shape = {-1, 3}; }, {"x"});
  expect_rejected([](Call& k) { k.x.data = nullptr; }, {"x"});
  expect_rejected([](Call& k) { k.x.dtype = static_cast<DType>(7); }, {"x", "dtype"});
}

TEST_P(Validation, Theta) {
  expect_rejected([](Call& k) { k.theta.shape = {2, 3, 3, 2}; }, {"theta", "(2,3,3,2)"});  // wrong R
  expect_rejected([](Call& k) { k.theta.shape = {2, 3, 4, 1}; }, {"theta"});               // wrong k
  expect_rejected([](Call& k) { k.theta.shape = {8, 3}; }, {"theta"});                     // rank 2
  expect_rejected([](Call& k) { k.theta.shape = {1, 2, 3, 4, 2}; }, {"theta"});            // rank 5
  expect_rejected([](Call& k) { k.theta.shape = {2, 2, 4, 2}; }, {"theta"});               // (O, g), g != I
  expect_rejected([](Call& k) { k.theta.shape = {0, 4, 2}; }, {"theta"});                  // empty group
  expect_rejected([](Call& k) { k.theta.shape = {1, 0, 4, 2}; }, {"theta"});
  expect_rejected([](Call& k) { k.theta.data = nullptr; }, {"theta"});
  expect_rejected([](Call& k) { k.theta = k.in(DType::f32, k.theta.shape); }, {"theta", "float32"});
}

TEST_P(Validation, ThetaShapePerAnsatz) {
  // real: R' = reps, k = 1
  expect_rejected(
      [](Call& k) {
        k.opt.ansatz = Ansatz::real;
        k.theta.shape = {2, 3, 4, 1};
      },
      {"theta"});
  expect_rejected(
      [](Call& k) {
        k.opt.ansatz = Ansatz::real;
        k.theta.shape = {2, 3, 3, 2};
      },
      {"theta"});
  // rpz, px: k = 1
  expect_rejected([](Call& k) { k.opt.ansatz = Ansatz::rpz; }, {"theta"});
  expect_rejected([](Call& k) { k.opt.ansatz = Ansatz::px; }, {"theta"});
  // mix: like pz, R' = reps + 1
  expect_rejected(
      [](Call& k) {
        k.opt.ansatz = Ansatz::mix;
        k.theta.shape = {2, 3, 3, 2};
      },
      {"theta"});
  // reps changes R'
  expect_rejected(
      [](Call& k) {
        k.opt.reps = 2;
        k.w.shape = k.c.shape = {2, 3, 2};
      },
      {"theta"});
}

TEST_P(Validation, Preacts) {
  expect_rejected([](Call& k) { k.w.data = nullptr; }, {"preacts_weight", "missing"});
  expect_rejected([](Call& k) { k.c.data = nullptr; }, {"preacts_bias", "missing"});
  expect_rejected([](Call& k) { k.c.shape = {2, 3, 2}; }, {"preacts_weight", "preacts_bias"});
  expect_rejected([](Call& k) { k.w.shape = k.c.shape = {2, 3, 2}; }, {"preacts_weight"});  // wrong L
  expect_rejected([](Call& k) { k.w.shape = k.c.shape = {4, 3, 3}; }, {"preacts_weight"});  // O differs from θ
  expect_rejected([](Call& k) { k.w.shape = k.c.shape = {2, 2, 3}; }, {"preacts_weight"});  // (O, g), g != I
  expect_rejected([](Call& k) { k.w.shape = k.c.shape = {6}; }, {"preacts_weight"});
  expect_rejected([](Call& k) { k.w = k.in(DType::f32, k.w.shape); }, {"preacts_weight", "float32"});
  expect_rejected([](Call& k) { k.c = k.in(DType::f32, k.c.shape); }, {"preacts_bias", "float32"});
  // rpz always encodes: w and c are required even with preacts_trainable = false.
  expect_rejected(
      [](Call& k) {
        k.opt.ansatz = Ansatz::rpz;
        k.opt.preacts_trainable = false;
        k.theta.shape = {2, 3, 4, 1};
        k.gplain.theta.shape = k.gcontract.theta.shape = {2, 3, 4, 1};
        k.w.data = nullptr;
      },
      {"preacts_weight"});
}

TEST_P(Validation, MixedDtypes) {
  // x float32, everything else float64: every other input is named against x.
  expect_rejected([](Call& k) { k.x = k.in(DType::f32, k.x.shape); }, {"theta", "dtype"});
  expect_rejected(
      [](Call& k) {
        k.x = k.in(DType::f32, k.x.shape);
        k.theta = k.in(DType::f32, k.theta.shape);
      },
      {"preacts_weight", "dtype"});
  expect_rejected([](Call& k) { k.W = k.in(DType::f32, k.W.shape); }, {"weight", "dtype"}, kContracted);
}

TEST_P(Validation, Reps) {
  for (int reps : {0, -1, -100}) {
    SCOPED_TRACE(reps);
    expect_rejected([reps](Call& k) { k.opt.reps = reps; }, {"reps"});
  }
}

TEST_P(Validation, AnsatzAndPathNames) {
  for (const char* bad : {"pz_enc", "", "PZ", "rpz_encoding ", "real2"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(throws_invalid([&] { qkan::parse_ansatz(bad); }, {"ansatz", "pz_encoding"}));
  }
  for (const char* bad : {"fast", "", "Reference", "cuda"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(throws_invalid([&] { qkan::parse_path(bad); }, {"path", "reference"}));
  }
  for (Ansatz a : {Ansatz::pz, Ansatz::rpz, Ansatz::px, Ansatz::real, Ansatz::mix}) {
    EXPECT_EQ(qkan::parse_ansatz(qkan::to_string(a)), a);
    EXPECT_EQ(qkan::parse_ansatz(short_name(a)), a);
  }
  for (Path p : {Path::automatic, Path::reference, Path::fused}) EXPECT_EQ(qkan::parse_path(qkan::to_string(p)), p);
  EXPECT_EQ(qkan::parse_path("auto"), Path::automatic);
}

TEST_P(Validation, OutOfRangeEnums) {
  // Values that no parse_* returns (e.g. an int cast by a binding) are rejected, not run.
  // (θ shaped for k = 1, what theta_cols() answers for an unknown ansatz, to get past the θ check.)
  expect_rejected(
      [](Call& k) {
        k.opt.ansatz = static_cast<Ansatz>(42);
        k.theta.shape = k.gplain.theta.shape = k.gcontract.theta.shape = {2, 3, 4, 1};
      },
      {"ansatz"});
  expect_rejected([](Call& k) { k.opt.path = static_cast<Path>(9); }, {"path"});
}

TEST_P(Validation, PxNeedsEncoding) {
  expect_rejected(
      [](Call& k) {
        k.opt.ansatz = Ansatz::px;
        k.opt.preacts_trainable = false;
        k.theta.shape = {2, 3, 4, 1};
        k.gplain.theta.shape = k.gcontract.theta.shape = {2, 3, 4, 1};
      },
      {"px_encoding", "preacts_trainable"});
}

TEST_P(Validation, OutDim) {
  expect_rejected([](Call& k) { k.opt.out_dim = 5; }, {"out_dim", "weight"}, kContracted);
  expect_rejected([](Call& k) { k.opt.out_dim = 5; }, {"theta"}, kPlain);  // θ has O = 2
  expect_rejected([](Call& k) { k.opt.out_dim = 0; }, {"out_dim"}, kPlain);
  expect_rejected([](Call& k) { k.opt.out_dim = -2; }, {"out_dim"}, kPlain);
}

TEST_P(Validation, Weight) {
  expect_rejected([](Call& k) { k.W.data = nullptr; }, {"weight"}, kContracted);
  expect_rejected([](Call& k) { k.W.shape = {2, 4}; }, {"weight", "(2,4)"}, kContracted);  // wrong I
  expect_rejected([](Call& k) { k.W.shape = {6}; }, {"weight"}, kContracted);
  expect_rejected([](Call& k) { k.W.shape = {2, 3, 1}; }, {"weight"}, kContracted);
  expect_rejected([](Call& k) { k.W.shape = {3, 3}; }, {"theta"}, kContracted);  // O differs from θ's
}

TEST_P(Validation, WeightWithoutRows) {
  // A weight with no (or negative) rows is a bad weight; the message should say so.
  expect_rejected(
      [](Call& k) {
        k.W.shape = {0, 3};
        k.theta.shape = {3, 4, 2};
        k.w.shape = k.c.shape = {3, 3};
      },
      {"weight"}, kContracted);
  expect_rejected(
      [](Call& k) {
        k.W.shape = {-2, 3};
        k.theta.shape = {3, 4, 2};
        k.w.shape = k.c.shape = {3, 3};
      },
      {"weight"}, kContracted);
}

TEST_P(Validation, Outputs) {
  expect_rejected([](Call& k) { k.post.shape = {4, 3, 2}; }, {"postacts", "(4,2,3)"}, kSolve);
  expect_rejected([](Call& k) { k.post.shape = {4, 6}; }, {"postacts"}, kSolve);
  expect_rejected([](Call& k) { k.post = k.out(DType::f32, k.post.shape, 0); }, {"postacts", "float32"}, kSolve);
  expect_rejected([](Call& k) { k.post.data = nullptr; }, {"postacts"}, kSolve);
  // g == I everywhere: the output is (B, 1, I), not (B, O, I).
  expect_rejected(
      [](Call& k) {
        k.theta.shape = {3, 4, 2};
        k.w.shape = k.c.shape = {3, 3};
      },
      {"postacts", "(4,1,3)"}, kSolve);
  expect_rejected([](Call& k) { k.y.shape = {4, 3}; }, {"y", "(4,2)"}, kContract);
  expect_rejected([](Call& k) { k.y.shape = {2, 4}; }, {"y"}, kContract);
  expect_rejected([](Call& k) { k.y = k.out(DType::f32, k.y.shape, 1); }, {"y", "float32"}, kContract);
  expect_rejected([](Call& k) { k.y.data = nullptr; }, {"y"}, kContract);
}

TEST_P(Validation, Cotangents) {
  expect_rejected([](Call& k) { k.gpost.shape = {4, 3, 2}; }, {"grad_postacts"}, kSolveBwd);
  expect_rejected([](Call& k) { k.gpost = k.in(DType::f32, k.gpost.shape); }, {"grad_postacts", "float32"}, kSolveBwd);
  expect_rejected([](Call& k) { k.gpost.data = nullptr; }, {"grad_postacts"}, kSolveBwd);
  expect_rejected([](Call& k) { k.gy.shape = {4, 3}; }, {"grad_y"}, kContractBwd);
  expect_rejected([](Call& k) { k.gy = k.in(DType::f32, k.gy.shape); }, {"grad_y", "float32"}, kContractBwd);
  expect_rejected([](Call& k) { k.gy.data = nullptr; }, {"grad_y"}, kContractBwd);
}

TEST_P(Validation, GradientViews) {
  const unsigned bwd = kSolveBwd | kContractBwd;
  expect_rejected([](Call& k) { k.gplain.x.shape = k.gcontract.x.shape = {3, 4}; }, {"grad x"}, bwd);
  expect_rejected(
      [](Call& k) {
        k.gplain.x = k.gcontract.x = k.out(DType::f32, {4, 3}, 2);
      },
      {"grad x", "float32"}, bwd);
  expect_rejected([](Call& k) { k.gplain.theta.shape = k.gcontract.theta.shape = {2, 3, 8}; }, {"grad theta"}, bwd);
  expect_rejected([](Call& k) { k.gplain.w.shape = k.gcontract.w.shape = {2, 3, 2}; }, {"grad preacts_weight"}, bwd);
  expect_rejected([](Call& k) { k.gplain.c.shape = k.gcontract.c.shape = {3, 3}; }, {"grad preacts_bias"}, bwd);
  expect_rejected([](Call& k) { k.gcontract.W.shape = {3, 2}; }, {"grad weight"}, kContractBwd);
  expect_rejected(
      [](Call& k) {
        k.gcontract.W = k.out(DType::f32, {2, 3}, 6);
      },
      {"grad weight", "float32"}, kContractBwd);
  expect_rejected([](Call& k) { k.gplain.W = k.out(DType::f64, {2, 3}, 6); }, {"grad weight"}, kSolveBwd);
  // Without the encoding w and c may be omitted, but then their gradients cannot be requested.
  expect_rejected(
      [](Call& k) {
        k.opt.preacts_trainable = false;
        k.w = {};
      },
      {"preacts_weight"}, bwd);
}

TEST_P(Validation, HugeShapesAreRejectedNotRun) {
  // B·O·I past 2^63: an error, not a wrapped index. (numel documents std::overflow_error.)
  Call call(GetParam());
  call.x.shape = {std::int64_t(1) << 40, 3};
  call.theta.shape = {3, 4, 2};
  call.w.shape = call.c.shape = {3, 3};
  call.W.shape = {std::int64_t(1) << 40, 3};
  call.y.shape = {std::int64_t(1) << 40, std::int64_t(1) << 40};
  try {
    call.contract();
    ADD_FAILURE() << "did not throw";
  } catch (const std::invalid_argument& e) {
    SUCCEED() << e.what();
  } catch (const std::overflow_error& e) {
    SUCCEED() << e.what();
  }
  EXPECT_TRUE(call.outputs_untouched());
}

TEST_P(Validation, FusedLayerNeedsCudaTensors) {
  // The whole-layer entry points run on CUDA only: CPU tensors are refused by name, before any
  // output is written (on the CPU, contract and the base branch compose the layer).
  Call call(GetParam());
  const qkan::LayerTerms terms{call.in(DType::f64, {2, 3}), call.in(DType::f64, {2, 3}), {}};
  const qkan::LayerGrads lg{call.out(DType::f64, {2, 3}, 7), call.out(DType::f64, {2, 3}, 8)};
  EXPECT_TRUE(
      throws_invalid([&] { qkan::layer_forward(call.opt, call.x, call.theta, call.w, call.c, call.W, terms, call.y); },
                     {"qkan.layer", "CUDA"}));
  EXPECT_TRUE(throws_invalid(
      [&] {
        qkan::layer_backward(call.opt, call.x, call.theta, call.w, call.c, call.W, terms, call.gy, call.gcontract, lg);
      },
      {"qkan.layer_backward", "CUDA"}));
  EXPECT_TRUE(call.outputs_untouched());
}

INSTANTIATE_TEST_SUITE_P(Qkan, Validation, ::testing::Values(Path::automatic, Path::reference, Path::fused),
                         [](const ::testing::TestParamInfo<Path>& info) {
                           return std::string(qkan::to_string(info.param));
                         });

}  // namespace
}  // namespace lockstep::test
