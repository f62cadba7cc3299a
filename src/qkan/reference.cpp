// The reference path: a literal double-precision spinor simulation of docs/QKAN.md §1, gate by
// gate, with reverse-mode gradients that keep every intermediate state of one circuit.
// It is slow and obviously correct: the oracle of the fused kernels and their fallback. Batch
// rows are spread over threads (each task reuses one circuit's buffers); the parameter
// gradients' sums over the batch are kept per task and added in task order, so a given thread
// count gives the same bits every time.
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <vector>

#include "lockstep/core/parallel.hpp"
#include "problem.hpp"

namespace lockstep::qkan::detail {
namespace {

using cplx = std::complex<double>;
using Spinor = std::array<cplx, 2>;

enum class Gate { RX, RY, RZ, X, Z };

/// Where a gate's angle came from, for the chain rule: θ[row][col] of the edge, or the data
/// angle of rep l (angle = e_l, or arccos(e_l) for px).
struct Step {
  Gate gate;
  double angle = 0;
  int theta_index = -1;  ///< r·K + k, or -1
  int data_rep = -1;     ///< l, or -1
  double dangle_de = 1;  ///< d angle / d e_l
  double c = 1, s = 0;   ///< cos(angle/2), sin(angle/2), set once the circuit is built
};

double load(const void* p, DType d, std::int64_t k) {
  return d == DType::f32 ? static_cast<const float*>(p)[k] : static_cast<const double*>(p)[k];
}
void store(void* p, DType d, std::int64_t k, double v) {
  if (d == DType::f32) static_cast<float*>(p)[k] = static_cast<float>(v);
  else static_cast<double*>(p)[k] = v;
}

// Complex products written out: std::complex's operator* checks for infinities on every call,
// which made it most of this path's time.
/// i·z
cplx times_i(cplx z) { return {-z.imag(), z.real()}; }
/// z·(c + i·s)
cplx times_phase(cplx z, double c, double s) { return {z.real() * c - z.imag() * s, z.real() * s + z.imag() * c}; }

/// The gate of half-angle cosine c and sine s applied to a spinor.
Spinor apply_gate(Gate g, double c, double sn, const Spinor& s) {
  switch (g) {
    case Gate::RX: return {c * s[0] - sn * times_i(s[1]), -sn * times_i(s[0]) + c * s[1]};
    case Gate::RY: return {c * s[0] - sn * s[1], sn * s[0] + c * s[1]};
    case Gate::RZ: return {times_phase(s[0], c, -sn), times_phase(s[1], c, sn)};
    case Gate::X: return {s[1], s[0]};
    case Gate::Z: return {s[0], -s[1]};
  }
  return s;
}

Spinor apply_gate(const Step& st, const Spinor& s) { return apply_gate(st.gate, st.c, st.s, s); }

/// G† applied to a spinor: the rotations are unitary (G(φ)† = G(-φ)), X and Z their own inverse.
Spinor apply_adjoint(const Step& st, const Spinor& s) { return apply_gate(st.gate, st.c, -st.s, s); }

/// σ·s for the generator of a rotation gate.
Spinor pauli(Gate g, const Spinor& s) {
  switch (g) {
    case Gate::RX: return {s[1], s[0]};
    case Gate::RY: return {-times_i(s[1]), times_i(s[0])};
    default: return {s[0], -s[1]};
  }
}

struct Circuit {
  std::vector<Step> steps;
  std::vector<double> e;  ///< data values e_l
};

/// Fills `cir` (its buffers reused) with circuit (o, i) of batch row b.
void build(const Problem& p, std::int64_t b, std::int64_t o, std::int64_t i, Circuit& cir) {
  cir.steps.clear();
  cir.e.clear();
  const double xv = load(p.x, p.dtype, b * p.I + i);
  const std::int64_t trow = p.theta_layout.row(o, i) * p.R * p.K;
  auto rot = [&](Gate g, int r, int k) { return Step{g, load(p.theta, p.dtype, trow + r * p.K + k), r * p.K + k}; };
  const std::int64_t prow = p.encoding ? p.pre_layout.row(o, i) * p.reps : 0;
  for (int l = 0; l < p.reps; ++l)
    cir.e.push_back(p.encoding ? load(p.w, p.dtype, prow + l) * xv + load(p.c, p.dtype, prow + l) : xv);
  auto data = [&](Gate g, int l) { return Step{g, cir.e[l], -1, l, 1.0}; };
  const int L = p.reps;
  auto& s = cir.steps;
  switch (p.ansatz) {
    case Ansatz::pz:
      for (int l = 0; l < L; ++l) {
        s.push_back(rot(Gate::RZ, l, 0));
        s.push_back(rot(Gate::RY, l, 1));
        s.push_back(data(Gate::RZ, l));
      }
      s.push_back(rot(Gate::RZ, L, 0));
      s.push_back(rot(Gate::RY, L, 1));
      break;
    case Ansatz::rpz:
      for (int l = 0; l < L; ++l) {
        s.push_back(rot(Gate::RY, l, 0));
        s.push_back(data(Gate::RZ, l));
      }
      s.push_back(rot(Gate::RY, L, 0));
      break;
    case Ansatz::px:
      for (int l = 0; l < L; ++l) {
        s.push_back(rot(Gate::RZ, l, 0));
        Step d = data(Gate::RX, l);
        d.angle = std::acos(cir.e[l]);  // NaN outside [-1, 1], by policy
        d.dangle_de = -1.0 / std::sqrt(1.0 - cir.e[l] * cir.e[l]);
        s.push_back(d);
      }
      s.push_back(rot(Gate::RZ, L, 0));
      break;
    case Ansatz::real:
      for (int l = 0; l < L; ++l) {
        s.push_back({Gate::X});
        s.push_back(rot(Gate::RY, l, 0));
        s.push_back({Gate::Z});
        s.push_back(data(Gate::RY, l));
      }
      break;
    case Ansatz::mix:
      for (int l = 0; l < L; ++l) {
        s.push_back(rot(Gate::RZ, l, 0));
        s.push_back(rot(Gate::RX, l, 1));
        s.push_back(data(Gate::RY, l));
      }
      s.push_back(rot(Gate::RZ, L, 0));
      s.push_back(rot(Gate::RX, L, 1));
      break;
  }
  for (Step& st : s) {
    st.c = std::cos(st.angle / 2);
    st.s = std::sin(st.angle / 2);
  }
}

/// Runs the circuit from H|0⟩; states[k] is the state after step k-1 (states[0] the start).
void run(const Circuit& cir, std::vector<Spinor>& states) {
  const double h = 1.0 / std::sqrt(2.0);
  states.assign(1, {cplx(h), cplx(h)});
  for (const Step& st : cir.steps) states.push_back(apply_gate(st, states.back()));
}

double measure(const Spinor& s, bool fast) {
  const double a = std::abs(s[0]), b = std::abs(s[1]);
  return fast ? a - b : a * a - b * b;
}

/// ∂measure/∂ψ as g = ∂/∂Re ψ + i ∂/∂Im ψ; |.| at 0 gets the subgradient 0.
Spinor measure_grad(const Spinor& s, bool fast) {
  if (!fast) return {2.0 * s[0], -2.0 * s[1]};
  const double a = std::abs(s[0]), b = std::abs(s[1]);
  return {a > 0 ? s[0] / a : cplx(0), b > 0 ? -s[1] / b : cplx(0)};
}

/// Gradient sinks of one circuit: d out / d θ[r·K + k] and d out / d e_l, scaled by `gout`.
struct CircuitGrads {
  std::vector<double> theta, e;
};

void backward(const Circuit& cir, const std::vector<Spinor>& states, bool fast, int RK, double gout, CircuitGrads& g) {
  g.theta.assign(RK, 0.0);
  g.e.assign(cir.e.size(), 0.0);
  Spinor adj = measure_grad(states.back(), fast);
  for (auto& a : adj) a *= gout;
  for (std::size_t k = cir.steps.size(); k-- > 0;) {
    const Step& st = cir.steps[k];
    if (st.gate != Gate::X && st.gate != Gate::Z) {
      const Spinor d = pauli(st.gate, states[k + 1]);  // dψ_out/dφ = (-i/2) σ ψ_out
      // dφ = Re Σ conj(adj)·(-i/2)·d = ½ Im Σ conj(adj)·d
      auto im_conj_times = [](cplx a, cplx b) { return a.real() * b.imag() - a.imag() * b.real(); };
      const double dphi = 0.5 * (im_conj_times(adj[0], d[0]) + im_conj_times(adj[1], d[1]));
      if (st.theta_index >= 0) g.theta[st.theta_index] += dphi;
      if (st.data_rep >= 0) g.e[st.data_rep] += dphi * st.dangle_de;
    }
    adj = apply_adjoint(st, adj);
  }
}

/// One circuit's buffers, reused from edge to edge.
struct Scratch {
  Circuit cir;
  std::vector<Spinor> states;
  CircuitGrads grads;
};

double edge_value(const Problem& p, std::int64_t b, std::int64_t o, std::int64_t i, Scratch& s) {
  build(p, b, o, i, s.cir);
  run(s.cir, s.states);
  return measure(s.states.back(), p.fast_measure);
}

/// Circuit (o, i) of the plain output row o_edge: the edge index into the tables.
std::int64_t edge_o(const Problem& p, std::int64_t o) { return p.O_edges == 1 ? 0 : o; }

}  // namespace

void reference_forward(const Problem& p, void* out) {
  // Each batch row writes its own outputs.
  parallel_for(p.B, [&](std::int64_t b, int) {
    Scratch s;
    if (p.kind == Kind::solve) {
      for (std::int64_t o = 0; o < p.O_edges; ++o)
        for (std::int64_t i = 0; i < p.I; ++i)
          store(out, p.dtype, (b * p.O_edges + o) * p.I + i, edge_value(p, b, o, i, s));
      return;
    }
    for (std::int64_t o = 0; o < p.O; ++o) {
      double acc = 0;
      for (std::int64_t i = 0; i < p.I; ++i)
        acc += edge_value(p, b, edge_o(p, o), i, s) * load(p.W, p.dtype, o * p.I + i);
      store(out, p.dtype, b * p.O + o, acc);
    }
  });
}

namespace {

/// The parameter gradients' sums over a slice of the batch.
struct ParamSums {
  std::vector<double> theta, w, c, W;
  explicit ParamSums(const Problem& p)
      : theta(p.theta_layout.rows() * p.R * p.K, 0.0),
        w(p.encoding ? p.pre_layout.rows() * p.reps : 0, 0.0),
        c(w.size(), 0.0),
        W(p.kind == Kind::contract ? p.O * p.I : 0, 0.0) {}
  void add(const ParamSums& o) {
    auto add_to = [](std::vector<double>& a, const std::vector<double>& b) {
      for (std::size_t k = 0; k < a.size(); ++k) a[k] += b[k];
    };
    add_to(theta, o.theta);
    add_to(w, o.w);
    add_to(c, o.c);
    add_to(W, o.W);
  }
};

/// Batch slices for the backward: one per thread, fewer where their sums would pass ~1 GiB.
std::int64_t backward_slices(const Problem& p) {
  const double bytes = 8.0 * (p.theta_layout.rows() * p.R * p.K + 2.0 * p.pre_layout.rows() * p.reps + p.O * p.I);
  const auto by_memory = static_cast<std::int64_t>(std::max(1.0, double(1 << 30) / bytes));
  return std::max<std::int64_t>(1, std::min({p.B, std::int64_t(num_threads()), by_memory}));
}

/// Rows [b0, b1) of the backward: dx of those rows, and their share of the parameter sums.
void backward_rows(const Problem& p, const void* grad_out, std::int64_t b0, std::int64_t b1, std::vector<double>& dx,
                   ParamSums& sums) {
  const int RK = p.R * p.K;
  Scratch s;
  // For a contraction, circuit (o, i) feeds y[b, o] with weight W[o, i]; for a plain solve it
  // is postacts[b, o, i] itself, over the O_edges distinct rows.
  const std::int64_t O_loop = p.kind == Kind::contract ? p.O : p.O_edges;
  for (std::int64_t b = b0; b < b1; ++b)
    for (std::int64_t o = 0; o < O_loop; ++o)
      for (std::int64_t i = 0; i < p.I; ++i) {
        double gout;
        const std::int64_t oe = edge_o(p, o);
        build(p, b, oe, i, s.cir);
        run(s.cir, s.states);
        if (p.kind == Kind::contract) {
          const double gy = load(grad_out, p.dtype, b * p.O + o);
          gout = gy * load(p.W, p.dtype, o * p.I + i);
          sums.W[o * p.I + i] += gy * measure(s.states.back(), p.fast_measure);
        } else {
          gout = load(grad_out, p.dtype, (b * p.O_edges + o) * p.I + i);
        }
        backward(s.cir, s.states, p.fast_measure, RK, gout, s.grads);
        const CircuitGrads& g = s.grads;
        const std::int64_t trow = p.theta_layout.row(oe, i) * RK;
        for (int k = 0; k < RK; ++k) sums.theta[trow + k] += g.theta[k];
        const double xv = load(p.x, p.dtype, b * p.I + i);
        const std::int64_t prow = p.encoding ? p.pre_layout.row(oe, i) * p.reps : 0;
        for (int l = 0; l < p.reps; ++l) {
          if (p.encoding) {
            dx[b * p.I + i] += load(p.w, p.dtype, prow + l) * g.e[l];
            sums.w[prow + l] += xv * g.e[l];
            sums.c[prow + l] += g.e[l];
          } else {
            dx[b * p.I + i] += g.e[l];
          }
        }
      }
}

}  // namespace

void reference_backward(const Problem& p, const void* grad_out, const GradPtrs& gp) {
  std::vector<double> dx(p.B * p.I, 0.0);
  const std::int64_t slices = backward_slices(p);
  std::vector<ParamSums> sums(slices, ParamSums(p));
  parallel_for(slices, [&](std::int64_t k, int) {
    backward_rows(p, grad_out, p.B * k / slices, p.B * (k + 1) / slices, dx, sums[k]);
  });
  for (std::int64_t k = 1; k < slices; ++k) sums[0].add(sums[k]);
  auto put = [&](void* dst, const std::vector<double>& v) {
    if (dst)
      for (std::size_t k = 0; k < v.size(); ++k) store(dst, p.dtype, static_cast<std::int64_t>(k), v[k]);
  };
  put(gp.x, dx);
  put(gp.theta, sums[0].theta);
  put(gp.w, sums[0].w);
  put(gp.c, sums[0].c);
  put(gp.W, sums[0].W);
}

}  // namespace lockstep::qkan::detail
