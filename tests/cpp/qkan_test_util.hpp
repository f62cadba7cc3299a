// Shared helpers of the QKAN tests: configurations, random inputs, guarded (poisoned) buffers,
// wrappers around the solver calls and comparisons that report the first mismatches.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "lockstep/qkan/solver.hpp"
#include "tolerance.hpp"

namespace lockstep::test {

using lockstep::to_string;
using qkan::Ansatz;
using qkan::Grads;
using qkan::Options;
using qkan::Path;
using qkan::to_string;

// ---------------------------------------------------------------------------------------------
// Seeds: distinct per parametrization (hash of its name) and per check (salt).

inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
inline std::uint64_t seed_of(std::string_view name, std::uint64_t salt = 0) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ULL;
  return splitmix64(h ^ splitmix64(salt));
}
/// Name of the running test, "Suite/Test/Param", for seeds.
inline std::string current_test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

template <class F> void for_dtype(DType d, F&& f) {
  if (d == DType::f32) f(float{});
  else f(double{});
}

// ---------------------------------------------------------------------------------------------
// Configurations.

/// How θ and the preacts are laid out (docs/QKAN.md §2). gl/gs: the largest/smallest g in [2, I)
/// that does not divide I.
enum class Group {
  natural,    ///< θ (O, I, R', k), w/c (O, I, L)
  grouped,    ///< θ (gl, R', k), w/c (gs, L)
  grouped4d,  ///< θ (1, gs, R', k), w/c (1, gl, L)
  shared,     ///< θ (I, R', k), w/c (I, L): g == I, plain output (B, 1, I)
  mixed,      ///< θ (I, R', k), w/c (O, I, L): output (B, 1, I) only without the encoding
};
inline const char* to_string(Group g) {
  switch (g) {
    case Group::natural: return "natural";
    case Group::grouped: return "grouped";
    case Group::grouped4d: return "grouped4d";
    case Group::shared: return "shared";
    case Group::mixed: return "mixed";
  }
  return "?";
}
inline const char* short_name(Ansatz a) {
  switch (a) {
    case Ansatz::pz: return "pz";
    case Ansatz::rpz: return "rpz";
    case Ansatz::px: return "px";
    case Ansatz::real: return "real";
    case Ansatz::mix: return "mix";
  }
  return "?";
}
inline const char* short_name(DType d) { return d == DType::f32 ? "f32" : "f64"; }

inline std::int64_t non_divisor(std::int64_t I, bool largest) {
  if (largest) {
    for (std::int64_t g = I - 1; g >= 2; --g)
      if (I % g) return g;
  } else {
    for (std::int64_t g = 2; g < I; ++g)
      if (I % g) return g;
  }
  return 1;
}

struct Config {
  Ansatz ansatz = Ansatz::pz;
  int reps = 3;
  bool preacts_trainable = false;
  bool fast = true;
  Group group = Group::natural;
  DType dtype = DType::f64;
  std::int64_t B = 37, I = 5, O = 3;

  bool encoding() const { return qkan::encoding_active(ansatz, preacts_trainable); }
  std::int64_t R() const { return qkan::theta_rows(ansatz, reps); }
  std::int64_t K() const { return qkan::theta_cols(ansatz); }

  Shape theta_shape() const {
    const std::int64_t gl = non_divisor(I, true), gs = non_divisor(I, false);
    switch (group) {
      case Group::natural: return {O, I, R(), K()};
      case Group::grouped: return {gl, R(), K()};
      case Group::grouped4d: return {1, gs, R(), K()};
      case Group::shared:
      case Group::mixed: return {I, R(), K()};
    }
    return {};
  }
  Shape pre_shape() const {
    const std::int64_t gl = non_divisor(I, true), gs = non_divisor(I, false);
    switch (group) {
      case Group::natural:
      case Group::mixed: return {O, I, reps};
      case Group::grouped: return {gs, reps};
      case Group::grouped4d: return {1, gl, reps};
      case Group::shared: return {I, reps};
    }
    return {};
  }
  /// Whether a table of this shape (tail of `tail_rank` dims) is shared over o with g == I.
  bool table_shared(const Shape& s, int tail_rank) const {
    if (static_cast<int>(s.size()) == tail_rank + 1) return s[0] == I;
    return s[0] == 1 && s[1] == I;
  }
  /// Rows O' of the plain output (solver.hpp: 1 when every table read has g == I).
  std::int64_t O_edges() const {
    const bool shared = table_shared(theta_shape(), 2) && (!encoding() || table_shared(pre_shape(), 1));
    return shared ? 1 : O;
  }
  Shape plain_shape() const { return {B, O_edges(), I}; }

  Options options(Path path) const {
    Options o;
    o.ansatz = ansatz;
    o.reps = reps;
    o.preacts_trainable = preacts_trainable;
    o.fast_measure = fast;
    o.out_dim = O;
    o.path = path;
    return o;
  }

  std::string name() const {
    std::ostringstream s;
    s << short_name(ansatz) << (encoding() ? "_enc" : "_raw") << (fast ? "_fast" : "_z") << "_" << to_string(group)
      << "_" << short_name(dtype) << "_B" << B << "I" << I << "O" << O << "L" << reps;
    return s.str();
  }
};

/// The ansatz × encoding combinations the library supports: rpz always encodes, px needs it.
struct AnsatzEnc {
  Ansatz ansatz;
  bool preacts_trainable;
};
inline std::vector<AnsatzEnc> all_ansatz_encodings() {
  return {{Ansatz::pz, false},   {Ansatz::pz, true},   {Ansatz::rpz, true},  {Ansatz::px, true},
          {Ansatz::real, false}, {Ansatz::real, true}, {Ansatz::mix, false}, {Ansatz::mix, true}};
}

/// The configurations every fused path (CPU and CUDA) is checked against the reference on:
/// every ansatz × encoding × measurement × table layout × precision at B in {37, 300} (past
/// the CPU chunk of 64 rows), then odd sizes (one row, exactly one chunk, one past it, wide)
/// and reps up to the fused limit.
inline std::vector<Config> fused_vs_reference_grid() {
  std::vector<Config> out;
  for (const AnsatzEnc& ae : all_ansatz_encodings())
    for (bool fast : {true, false})
      for (Group g : {Group::natural, Group::grouped, Group::grouped4d, Group::shared, Group::mixed})
        for (DType d : {DType::f32, DType::f64})
          for (std::int64_t B : {37, 300}) {
            Config c;
            c.ansatz = ae.ansatz;
            c.preacts_trainable = ae.preacts_trainable;
            c.fast = fast;
            c.group = g;
            c.dtype = d;
            c.B = B;
            c.I = 5;
            c.O = 3;
            out.push_back(c);
          }
  for (Ansatz a : {Ansatz::pz, Ansatz::real, Ansatz::mix, Ansatz::px})
    for (DType d : {DType::f32, DType::f64}) {
      for (auto [B, I, O] :
           {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1, 1, 1}, {64, 2, 1}, {65, 7, 2}, {129, 3, 4}}) {
        Config c;
        c.ansatz = a;
        c.preacts_trainable = a == Ansatz::px;
        c.dtype = d;
        c.B = B;
        c.I = I;
        c.O = O;
        out.push_back(c);
      }
      for (int reps : {1, 2, 5, 16}) {
        Config c;
        c.ansatz = a;
        c.preacts_trainable = true;
        c.fast = reps % 2 == 0;
        c.dtype = d;
        c.reps = reps;
        c.B = 37;
        out.push_back(c);
      }
    }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Guarded buffers: the interior is poisoned (NaN unless told otherwise) and flanked by canaries,
// so unwritten elements and writes outside the view are both caught. Never zero-filled.

template <class T> class Guarded {
 public:
  static constexpr std::size_t kGuard = 16;
  static constexpr T kCanary = T(-1.2345e30);

  Guarded() : Guarded(Shape{0}) {}
  explicit Guarded(Shape shape, T fill = std::numeric_limits<T>::quiet_NaN())
      : shape_(std::move(shape)), n_(static_cast<std::size_t>(numel(shape_))), buf_(n_ + 2 * kGuard, kCanary) {
    std::fill(buf_.begin() + kGuard, buf_.begin() + kGuard + n_, fill);
  }

  T* data() { return buf_.data() + kGuard; }
  const T* data() const { return buf_.data() + kGuard; }
  std::size_t size() const { return n_; }
  const Shape& shape() const { return shape_; }
  T& operator[](std::size_t k) { return data()[k]; }
  T operator[](std::size_t k) const { return data()[k]; }
  MutTensor mut() { return mut_view(data(), shape_); }
  ConstTensor view() const { return const_view(data(), shape_); }
  bool guards_intact() const {
    for (std::size_t k = 0; k < kGuard; ++k)
      if (buf_[k] != kCanary || buf_[kGuard + n_ + k] != kCanary) return false;
    return true;
  }
  double max_abs() const {
    double m = 0;
    for (std::size_t k = 0; k < n_; ++k) m = std::max(m, std::abs(static_cast<double>(data()[k])));
    return m;
  }

 private:
  Shape shape_;
  std::size_t n_;
  std::vector<T> buf_;
};

inline std::string index_string(const Shape& shape, std::size_t flat) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = static_cast<std::int64_t>(flat) % std::max<std::int64_t>(shape[d], 1);
    flat /= static_cast<std::size_t>(std::max<std::int64_t>(shape[d], 1));
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? "," : "") + std::to_string(idx[d]);
  return s + "]";
}

/// Elementwise |got - ref| <= atol + rtol·|ref|, both finite, and got's canaries intact.
template <class T>
::testing::AssertionResult all_close(const std::string& what, const Guarded<T>& got, const Guarded<T>& ref, double atol,
                                     double rtol) {
  if (got.shape() != ref.shape())
    return ::testing::AssertionFailure() << what << ": shape " << to_string(got.shape()) << " vs "
                                         << to_string(ref.shape());
  if (!got.guards_intact()) return ::testing::AssertionFailure() << what << ": written outside its view";
  if (!ref.guards_intact()) return ::testing::AssertionFailure() << what << " (ref): written outside its view";
  std::size_t bad = 0;
  double worst = 0;
  std::ostringstream first;
  first.precision(17);
  for (std::size_t k = 0; k < got.size(); ++k) {
    const double g = got[k], r = ref[k];
    const double err = std::abs(g - r);
    const bool ok = std::isfinite(g) && std::isfinite(r) && err <= atol + rtol * std::abs(r);
    if (std::isfinite(err)) worst = std::max(worst, err);
    if (!ok) {
      if (bad < 6)
        first << "\n    " << index_string(got.shape(), k) << ": got " << g << ", ref " << r << ", |diff| " << err;
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << bad << " of " << got.size() << " elements differ (atol "
                                       << atol << ", rtol " << rtol << ", max finite |diff| " << worst
                                       << "):" << first.str();
}

/// Bitwise equality (NaN == NaN when both are the same NaN pattern).
template <class T>
::testing::AssertionResult identical(const std::string& what, const Guarded<T>& got, const Guarded<T>& ref) {
  if (got.shape() != ref.shape()) return ::testing::AssertionFailure() << what << ": shapes differ";
  if (!got.guards_intact()) return ::testing::AssertionFailure() << what << ": written outside its view";
  if (std::memcmp(got.data(), ref.data(), got.size() * sizeof(T)) != 0) {
    for (std::size_t k = 0; k < got.size(); ++k)
      if (std::memcmp(&got.data()[k], &ref.data()[k], sizeof(T)) != 0)
        return ::testing::AssertionFailure() << what << ": first difference at " << index_string(got.shape(), k) << ": "
                                             << got[k] << " vs " << ref[k];
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------------
// Inputs.

template <class T> void fill_uniform(Guarded<T>& g, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  for (std::size_t k = 0; k < g.size(); ++k) g[k] = static_cast<T>(u(rng));
}

template <class T> struct Inputs {
  Config cfg;
  Guarded<T> x, theta, w, c, W;
  bool pass_pre = true;  ///< pass w and c (even when the encoding is off: they must be ignored)

  ConstTensor xv() const { return x.view(); }
  ConstTensor thetav() const { return theta.view(); }
  ConstTensor wv() const { return pass_pre ? w.view() : ConstTensor{}; }
  ConstTensor cv() const { return pass_pre ? c.view() : ConstTensor{}; }
  ConstTensor Wv() const { return W.view(); }
};

/// Fresh random inputs. px gets small values so that |w·x + c| <= 0.9 < 1.
template <class T> Inputs<T> make_inputs(const Config& cfg, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Inputs<T> in;
  in.cfg = cfg;
  in.x = Guarded<T>({cfg.B, cfg.I});
  in.theta = Guarded<T>(cfg.theta_shape());
  in.w = Guarded<T>(cfg.pre_shape());
  in.c = Guarded<T>(cfg.pre_shape());
  in.W = Guarded<T>({cfg.O, cfg.I});
  const bool px = cfg.ansatz == Ansatz::px;
  fill_uniform(in.x, rng, px ? -1.0 : -2.0, px ? 1.0 : 2.0);
  fill_uniform(in.theta, rng, -M_PI, M_PI);
  fill_uniform(in.w, rng, px ? -0.6 : -1.5, px ? 0.6 : 1.5);
  fill_uniform(in.c, rng, px ? -0.3 : -1.0, px ? 0.3 : 1.0);
  fill_uniform(in.W, rng, -1.0, 1.0);
  return in;
}

/// The common setup of a randomized test: in cfg's precision T, with the running test's seed
/// (traced on failure), calls body(T{}, in, seed) on fresh make_inputs<T>(cfg, seed) that the
/// body may modify.
template <class F> void with_inputs(const Config& cfg, F&& body) {
  for_dtype(cfg.dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::uint64_t seed = seed_of(current_test_name());
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Inputs<T> in = make_inputs<T>(cfg, seed);
    body(tag, in, seed);
  });
}

// Near the poles z = ±1 the fast measurement |α| − |β| = √((1+z)/2) − √((1−z)/2) is a smooth
// function of the circuit angles but an ill-conditioned function of z: computing it from z
// (√(1 − z²)) loses half the digits, and its slope d/dz ~ 1/(2r) is huge. The circuits of
// near_pole_config / make_near_pole approach a pole as x → 0:
//   real, L = 1, θ = π/2:           z = sin(x − π/2) = −cos x
//   pz, θ = 0 but θ[L][1] = −π/2:   z = cos(L·x)
// so 1 − |z| ≈ (Lx)²/2, with x over 10^-1 .. 10^-7 and 0 (the pole itself).
inline Config near_pole_config(DType dtype, Ansatz ansatz) {
  Config cfg;
  cfg.ansatz = ansatz;
  cfg.reps = ansatz == Ansatz::real ? 1 : 3;
  cfg.fast = true;
  cfg.dtype = dtype;
  cfg.B = 15;
  cfg.I = 1;
  cfg.O = 1;
  return cfg;
}
/// The near-pole suites' parameters, (dtype, ansatz) over f32/f64 × real/pz, and their names.
using PoleParam = std::tuple<DType, Ansatz>;
inline auto near_pole_params() {
  return ::testing::Combine(::testing::Values(DType::f32, DType::f64), ::testing::Values(Ansatz::real, Ansatz::pz));
}
inline std::string near_pole_name(const ::testing::TestParamInfo<PoleParam>& info) {
  return std::string(short_name(std::get<0>(info.param))) + "_" + short_name(std::get<1>(info.param));
}
template <class T> void make_near_pole(Inputs<T>& in) {
  const Config& cfg = in.cfg;
  for (std::int64_t b = 0; b < cfg.B; ++b)
    in.x[b] = b == cfg.B - 1 ? T(0) : T((b % 2 ? -1 : 1) * std::pow(10.0, -1 - b / 2));
  for (std::size_t k = 0; k < in.theta.size(); ++k) in.theta[k] = T(0);
  if (cfg.ansatz == Ansatz::real) in.theta[0] = T(M_PI / 2);
  else in.theta[in.theta.size() - 1] = T(-M_PI / 2);
}

template <class T> Guarded<T> random_like(const Shape& shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Guarded<T> g(shape);
  fill_uniform(g, rng, -1.0, 1.0);
  return g;
}

// ---------------------------------------------------------------------------------------------
// Calls.

template <class T> Guarded<T> run_solve(const Inputs<T>& in, Path path) {
  Guarded<T> out(in.cfg.plain_shape());
  qkan::solve_forward(in.cfg.options(path), in.xv(), in.thetav(), in.wv(), in.cv(), out.mut());
  return out;
}

template <class T> Guarded<T> run_contract(const Inputs<T>& in, Path path) {
  Guarded<T> y(Shape{in.cfg.B, in.cfg.O});
  qkan::contract_forward(in.cfg.options(path), in.xv(), in.thetav(), in.wv(), in.cv(), in.Wv(), y.mut());
  return y;
}

struct Want {
  bool x = true, theta = true, w = true, c = true, W = true;
  static Want all() { return {}; }
  static Want none() { return {false, false, false, false, false}; }
};

template <class T> struct GradSet {
  std::optional<Guarded<T>> x, theta, w, c, W;
  Grads grads() {
    Grads g;
    if (x) g.x = x->mut();
    if (theta) g.theta = theta->mut();
    if (w) g.w = w->mut();
    if (c) g.c = c->mut();
    if (W) g.W = W->mut();
    return g;
  }
};

template <class T> GradSet<T> alloc_grads(const Inputs<T>& in, Want want, bool contract) {
  GradSet<T> g;
  if (want.x) g.x.emplace(in.x.shape());
  if (want.theta) g.theta.emplace(in.theta.shape());
  if (want.w && in.pass_pre) g.w.emplace(in.w.shape());
  if (want.c && in.pass_pre) g.c.emplace(in.c.shape());
  if (want.W && contract) g.W.emplace(in.W.shape());
  return g;
}

template <class T>
GradSet<T> run_solve_backward(const Inputs<T>& in, Path path, const Guarded<T>& gout, Want want = {}) {
  GradSet<T> g = alloc_grads(in, want, false);
  qkan::solve_backward(in.cfg.options(path), in.xv(), in.thetav(), in.wv(), in.cv(), gout.view(), g.grads());
  return g;
}

template <class T>
GradSet<T> run_contract_backward(const Inputs<T>& in, Path path, const Guarded<T>& gy, Want want = {}) {
  GradSet<T> g = alloc_grads(in, want, true);
  qkan::contract_backward(in.cfg.options(path), in.xv(), in.thetav(), in.wv(), in.cv(), in.Wv(), gy.view(), g.grads());
  return g;
}

/// Tolerance of a contraction's forward: fwd_abs times max(1, max_o Σ_i |W[o, i]|).
template <class T> double contract_atol(const Inputs<T>& in) {
  double m = 1;
  for (std::int64_t o = 0; o < in.cfg.O; ++o) {
    double s = 0;
    for (std::int64_t i = 0; i < in.cfg.I; ++i) s += std::abs(static_cast<double>(in.W[o * in.cfg.I + i]));
    m = std::max(m, s);
  }
  return tol<T>.fwd_abs * m;
}

/// Compares every gradient present in `ref` (it must be present in `got` too).
template <class T> void expect_grads_close(const GradSet<T>& got, const GradSet<T>& ref, double abs_scale, double rel) {
  auto one = [&](const char* name, const std::optional<Guarded<T>>& g, const std::optional<Guarded<T>>& r) {
    ASSERT_EQ(g.has_value(), r.has_value()) << name;
    if (!r) return;
    EXPECT_TRUE(all_close(name, *g, *r, abs_scale * std::max(1.0, r->max_abs()), rel));
  };
  one("grad x", got.x, ref.x);
  one("grad theta", got.theta, ref.theta);
  one("grad preacts_weight", got.w, ref.w);
  one("grad preacts_bias", got.c, ref.c);
  one("grad weight", got.W, ref.W);
}

/// Expects f() to throw std::invalid_argument whose message contains every needle.
template <class F>::testing::AssertionResult throws_invalid(F&& f, std::initializer_list<std::string_view> needles) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (std::string_view n : needles)
      if (what.find(n) == std::string::npos)
        return ::testing::AssertionFailure() << "message does not name '" << n << "': " << what;
    return ::testing::AssertionSuccess() << what;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another exception type: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

// Readable parameter values in GoogleTest / CTest output.
inline void PrintTo(const Config& c, std::ostream* os) { *os << c.name(); }
inline void PrintTo(const AnsatzEnc& a, std::ostream* os) {
  *os << short_name(a.ansatz) << (qkan::encoding_active(a.ansatz, a.preacts_trainable) ? "/enc" : "/raw");
}
inline void PrintTo(Group g, std::ostream* os) { *os << to_string(g); }

}  // namespace lockstep::test

namespace lockstep {
inline void PrintTo(DType d, std::ostream* os) { *os << to_string(d); }
}  // namespace lockstep
namespace lockstep::qkan {
inline void PrintTo(Path p, std::ostream* os) { *os << to_string(p); }
inline void PrintTo(Ansatz a, std::ostream* os) { *os << to_string(a); }
}  // namespace lockstep::qkan
