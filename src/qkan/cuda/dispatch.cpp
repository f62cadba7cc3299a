// The CUDA backend's entry points (problem.hpp) and its one dispatch point from run-time
// (ansatz, encoding, dtype, reps) to the launcher instantiations (launch.hpp).
#include <cuda_runtime.h>

#include <type_traits>

#include "src/qkan/cuda/launch.hpp"

namespace lockstep::qkan::detail {

namespace cuda_lanes {

void check(int e, const char* what) {
  const auto err = static_cast<cudaError_t>(e);
  if (err != cudaSuccess) runtime_failure("qkan.cuda", what, ": ", cudaGetErrorString(err));
}

namespace {

template <class T> struct type_tag { using type = T; };
template <Ansatz A> using ansatz_c = std::integral_constant<Ansatz, A>;
using On = std::true_type;
using Off = std::false_type;

// reps = 3 (the default) runs kernels with their loops unrolled; other reps run the loops.
template <template <Ansatz, bool, class, int> class Fn, class... Args>
void with_kernel(const Problem& p, Args&&... args) {
  auto by_reps = [&](auto ansatz, auto enc, auto t) {
    constexpr Ansatz A = decltype(ansatz)::value;
    constexpr bool E = decltype(enc)::value;
    using T = typename decltype(t)::type;
    if (p.reps == 3) Fn<A, E, T, 3>::run(p, args...);
    else Fn<A, E, T, 0>::run(p, args...);
  };
  auto by_type = [&](auto ansatz, auto enc) {
    if (p.dtype == DType::f32) by_reps(ansatz, enc, type_tag<float>{});
    else by_reps(ansatz, enc, type_tag<double>{});
  };
  switch (p.ansatz) {
    case Ansatz::pz: return p.encoding ? by_type(ansatz_c<Ansatz::pz>{}, On{}) : by_type(ansatz_c<Ansatz::pz>{}, Off{});
    case Ansatz::rpz: return by_type(ansatz_c<Ansatz::rpz>{}, On{});
    case Ansatz::px: return by_type(ansatz_c<Ansatz::px>{}, On{});
    case Ansatz::mix: return p.encoding ? by_type(ansatz_c<Ansatz::mix>{}, On{}) : by_type(ansatz_c<Ansatz::mix>{}, Off{});
    case Ansatz::real: return p.encoding ? by_type(ansatz_c<Ansatz::real>{}, On{}) : by_type(ansatz_c<Ansatz::real>{}, Off{});
  }
  invalid_argument("qkan.cuda", "unknown ansatz; supported: pz, rpz, px, mix, real");
}

template <Ansatz A, bool E, class T, int RC> struct Forward {
  static void run(const Problem& p, void* out) { launch_forward<A, E, T, RC>(p, out); }
};
template <Ansatz A, bool E, class T, int RC> struct Backward {
  static void run(const Problem& p, const void* gout, const GradPtrs& g) { launch_backward<A, E, T, RC>(p, gout, g); }
};

}  // namespace
}  // namespace cuda_lanes

void cuda_zero(void* ptr, std::size_t bytes, void* stream) {
  cuda_lanes::check(cudaMemsetAsync(ptr, 0, bytes, static_cast<cudaStream_t>(stream)), "zeroing a gradient");
}

void cuda_forward(const Problem& p, void* out) {
  if (p.B == 0) return;
  cuda_lanes::with_kernel<cuda_lanes::Forward>(p, out);
}

void cuda_backward(const Problem& p, const void* gout, const GradPtrs& g) {
  if (!g.x && !g.theta && !g.w && !g.c && !g.W && !g.pb && !g.bw) return;
  // The kernels add the parameter gradients (sums over the batch) into their tables: zero
  // them first, on the same stream. With B = 0 that is the whole answer.
  const std::size_t s = size_of(p.dtype);
  if (g.theta) cuda_zero(g.theta, p.theta_layout.rows() * p.R * p.K * s, p.stream);
  if (g.w) cuda_zero(g.w, p.pre_layout.rows() * p.reps * s, p.stream);
  if (g.c) cuda_zero(g.c, p.pre_layout.rows() * p.reps * s, p.stream);
  for (void* t : {g.W, g.pb, g.bw})
    if (t) cuda_zero(t, p.O * p.I * s, p.stream);
  if (p.B == 0) return;
  cuda_lanes::with_kernel<cuda_lanes::Backward>(p, gout, g);
}

}  // namespace lockstep::qkan::detail
