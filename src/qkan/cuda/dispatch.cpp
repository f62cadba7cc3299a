// The CUDA backend's entry points (problem.hpp) and its one dispatch point from run-time
// (ansatz, encoding, dtype, reps) to the launcher instantiations (launch.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <iterator>
#include <type_traits>

#include "src/core/cuda/runtime.hpp"
#include "src/qkan/cuda/launch.hpp"
#include "src/qkan/edge_math.hpp"

namespace lockstep::qkan::detail {

namespace cuda_lanes {

void check(int e, const char* what) { cuda::check(static_cast<cudaError_t>(e), "qkan.cuda", what); }

int multiprocessors() {
  int dev = 0, n = 0;
  check(cudaGetDevice(&dev), "querying the device");
  check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev), "querying the multiprocessor count");
  return n;
}

BackwardSplit backward_split(const Problem& p) {
  // A contraction or layer (one circuit per edge) whose row blocks × input warps give at least
  // one block per multiprocessor: the rows kernel, unsplit, with the most rows per lane that
  // still do (more rows per lane share an edge's sums, record and fold over more evaluations)
  // and whose shared memory fits (long records, large reps, may not).
  const std::int64_t sm = multiprocessors();
  if (p.kind == Kind::contract && p.O_edges > 1) {
    const std::size_t vb = size_of(p.dtype);
    const int KC = edge_record_size(p.ansatz, p.reps),
              NP = edge_sum_count(edge_slot_count(p.ansatz, p.reps, p.encoding), p.layer);
    for (int k = int(std::size(kRowLanes)) - 1; k >= 0; --k) {
      const int RL = kRowLanes[k];
      const std::int64_t blocks = ((p.B + row_block(RL) - 1) / row_block(RL)) * ((p.I + kWarps - 1) / kWarps);
      if (blocks >= sm && rows_shared_values(RL, vb, KC, NP, p.layer) * vb <= std::size_t(kMaxSharedBytes))
        return {p.O_edges, 1, RL};
    }
  }
  // Otherwise all edge rows in one slice, unless the row tiles × input chunks give fewer than 2
  // blocks per multiprocessor (one circuit per (b, i), O' = 1, is never split).
  const std::int64_t tiles = ((p.B + BB - 1) / BB) * ((p.I + kChunk - 1) / kChunk);
  const std::int64_t want_blocks = 2 * sm;
  const std::int64_t slices_wanted =
      p.O_edges == 1 ? 1 : std::min<std::int64_t>((want_blocks + tiles - 1) / tiles, 65535);
  const std::int64_t eps = (p.O_edges + slices_wanted - 1) / slices_wanted;
  return {eps, (p.O_edges + eps - 1) / eps, 0};
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
    case Ansatz::mix:
      return p.encoding ? by_type(ansatz_c<Ansatz::mix>{}, On{}) : by_type(ansatz_c<Ansatz::mix>{}, Off{});
    case Ansatz::real:
      return p.encoding ? by_type(ansatz_c<Ansatz::real>{}, On{}) : by_type(ansatz_c<Ansatz::real>{}, Off{});
  }
  invalid_argument("qkan.cuda", "unknown ansatz; supported: pz, rpz, px, mix, real");
}

template <Ansatz A, bool E, class T, int RC> struct Forward {
  static void run(const Problem& p, void* out) { launch_forward<A, E, T, RC>(p, out); }
};
template <Ansatz A, bool E, class T, int RC> struct Backward {
  static void run(const Problem& p, const void* gout, const GradPtrs& g, const BackwardSplit& split) {
    launch_backward<A, E, T, RC>(p, gout, g, split);
  }
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
  // The kernels add the parameter gradients (sums over the batch), and ∂x when the edge rows
  // are split over grid.z, into their tables: zero them first, on the same stream, in one
  // launch. With B = 0 the zeroed tables are the whole answer, and no kernel runs.
  const std::size_t s = size_of(p.dtype);
  const std::size_t pre = p.pre_layout.rows() * p.reps * s, oi = std::size_t(p.O * p.I) * s;
  const cuda_lanes::BackwardSplit split = p.B > 0 ? cuda_lanes::backward_split(p) : cuda_lanes::BackwardSplit{0, 0, 0};
  const cuda_lanes::ZeroSpan spans[] = {{g.theta, p.theta_layout.rows() * p.R * p.K * s},
                                        {g.w, pre},
                                        {g.c, pre},
                                        {g.W, oi},
                                        {g.pb, oi},
                                        {g.bw, oi},
                                        {split.slices > 1 ? g.x : nullptr, std::size_t(p.B * p.I) * s}};
  static_assert(std::size(spans) <= cuda_lanes::kMaxZeroSpans);
  if (p.B == 0) {
    for (const cuda_lanes::ZeroSpan& t : spans)
      if (t.ptr) cuda_zero(t.ptr, t.bytes, p.stream);
    return;
  }
  cuda_lanes::zero_tables(spans, int(std::size(spans)), p.stream);
  cuda_lanes::with_kernel<cuda_lanes::Backward>(p, gout, g, split);
}

}  // namespace lockstep::qkan::detail
