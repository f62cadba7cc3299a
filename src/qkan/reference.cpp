// The reference path: a literal double-precision spinor simulation of docs/QKAN.md §1, gate by
// gate, with reverse-mode gradients that keep every intermediate state of one circuit.
// It is slow and obviously correct: the oracle of the fused kernels and their fallback.
#include <array>
#include <cmath>
#include <complex>
#include <vector>

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
};

double load(const void* p, DType d, std::int64_t k) {
  return d == DType::f32 ? static_cast<const float*>(p)[k] : static_cast<const double*>(p)[k];
}
void store(void* p, DType d, std::int64_t k, double v) {
  if (d == DType::f32) static_cast<float*>(p)[k] = static_cast<float>(v);
  else static_cast<double*>(p)[k] = v;
}

Spinor apply(Gate g, double phi, const Spinor& s) {
  const double c = std::cos(phi / 2), sn = std::sin(phi / 2);
  const cplx i1(0, 1);
  switch (g) {
    case Gate::RX: return {c * s[0] - i1 * sn * s[1], -i1 * sn * s[0] + c * s[1]};
    case Gate::RY: return {c * s[0] - sn * s[1], sn * s[0] + c * s[1]};
    case Gate::RZ: return {std::exp(-i1 * (phi / 2)) * s[0], std::exp(i1 * (phi / 2)) * s[1]};
    case Gate::X: return {s[1], s[0]};
    case Gate::Z: return {s[0], -s[1]};
  }
  return s;
}

/// G† applied to a spinor: the gates are unitary, so this un-applies them.
Spinor apply_adjoint(Gate g, double phi, const Spinor& s) {
  if (g == Gate::X || g == Gate::Z) return apply(g, 0, s);
  return apply(g, -phi, s);
}

/// σ·s for the generator of a rotation gate.
Spinor pauli(Gate g, const Spinor& s) {
  const cplx i1(0, 1);
  switch (g) {
    case Gate::RX: return {s[1], s[0]};
    case Gate::RY: return {-i1 * s[1], i1 * s[0]};
    default: return {s[0], -s[1]};
  }
}

struct Circuit {
  std::vector<Step> steps;
  std::vector<double> e;  ///< data values e_l
};

Circuit build(const Problem& p, std::int64_t b, std::int64_t o, std::int64_t i) {
  Circuit cir;
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
  return cir;
}

/// Runs the circuit from H|0⟩; states[k] is the state after step k-1 (states[0] the start).
std::vector<Spinor> run(const Circuit& cir) {
  const double h = 1.0 / std::sqrt(2.0);
  std::vector<Spinor> states{{cplx(h), cplx(h)}};
  for (const Step& st : cir.steps) states.push_back(apply(st.gate, st.angle, states.back()));
  return states;
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

CircuitGrads backward(const Circuit& cir, const std::vector<Spinor>& states, bool fast, int RK, double gout) {
  CircuitGrads g{std::vector<double>(RK, 0.0), std::vector<double>(cir.e.size(), 0.0)};
  Spinor adj = measure_grad(states.back(), fast);
  for (auto& a : adj) a *= gout;
  for (std::size_t k = cir.steps.size(); k-- > 0;) {
    const Step& st = cir.steps[k];
    if (st.gate != Gate::X && st.gate != Gate::Z) {
      const Spinor d = pauli(st.gate, states[k + 1]);  // dψ_out/dφ = (-i/2) σ ψ_out
      const cplx i1(0, 1);
      const double dphi = std::real(std::conj(adj[0]) * (-0.5 * i1) * d[0] + std::conj(adj[1]) * (-0.5 * i1) * d[1]);
      if (st.theta_index >= 0) g.theta[st.theta_index] += dphi;
      if (st.data_rep >= 0) g.e[st.data_rep] += dphi * st.dangle_de;
    }
    adj = apply_adjoint(st.gate, st.angle, adj);
  }
  return g;
}

double edge_value(const Problem& p, std::int64_t b, std::int64_t o, std::int64_t i) {
  return measure(run(build(p, b, o, i)).back(), p.fast_measure);
}

/// Circuit (o, i) of the plain output row o_edge: the edge index into the tables.
std::int64_t edge_o(const Problem& p, std::int64_t o) { return p.O_edges == 1 ? 0 : o; }

}  // namespace

void reference_forward(const Problem& p, void* out) {
  if (p.kind == Kind::solve) {
    for (std::int64_t b = 0; b < p.B; ++b)
      for (std::int64_t o = 0; o < p.O_edges; ++o)
        for (std::int64_t i = 0; i < p.I; ++i)
          store(out, p.dtype, (b * p.O_edges + o) * p.I + i, edge_value(p, b, o, i));
    return;
  }
  for (std::int64_t b = 0; b < p.B; ++b)
    for (std::int64_t o = 0; o < p.O; ++o) {
      double acc = 0;
      for (std::int64_t i = 0; i < p.I; ++i) acc += edge_value(p, b, edge_o(p, o), i) * load(p.W, p.dtype, o * p.I + i);
      store(out, p.dtype, b * p.O + o, acc);
    }
}

void reference_backward(const Problem& p, const void* grad_out, const GradPtrs& gp) {
  const int RK = p.R * p.K;
  std::vector<double> dx(p.B * p.I, 0.0), dtheta(p.theta_layout.rows() * RK, 0.0);
  std::vector<double> dw(p.encoding ? p.pre_layout.rows() * p.reps : 0, 0.0), dc(dw.size(), 0.0);
  std::vector<double> dW(p.kind == Kind::contract ? p.O * p.I : 0, 0.0);
  // For a contraction, circuit (o, i) feeds y[b, o] with weight W[o, i]; for a plain solve it
  // is postacts[b, o, i] itself, over the O_edges distinct rows.
  const std::int64_t O_loop = p.kind == Kind::contract ? p.O : p.O_edges;
  for (std::int64_t b = 0; b < p.B; ++b)
    for (std::int64_t o = 0; o < O_loop; ++o)
      for (std::int64_t i = 0; i < p.I; ++i) {
        double gout;
        const std::int64_t oe = edge_o(p, o);
        const Circuit cir = build(p, b, oe, i);
        const auto states = run(cir);
        if (p.kind == Kind::contract) {
          const double gy = load(grad_out, p.dtype, b * p.O + o);
          gout = gy * load(p.W, p.dtype, o * p.I + i);
          dW[o * p.I + i] += gy * measure(states.back(), p.fast_measure);
        } else {
          gout = load(grad_out, p.dtype, (b * p.O_edges + o) * p.I + i);
        }
        const CircuitGrads g = backward(cir, states, p.fast_measure, RK, gout);
        const std::int64_t trow = p.theta_layout.row(oe, i) * RK;
        for (int k = 0; k < RK; ++k) dtheta[trow + k] += g.theta[k];
        const double xv = load(p.x, p.dtype, b * p.I + i);
        const std::int64_t prow = p.encoding ? p.pre_layout.row(oe, i) * p.reps : 0;
        for (int l = 0; l < p.reps; ++l) {
          if (p.encoding) {
            dx[b * p.I + i] += load(p.w, p.dtype, prow + l) * g.e[l];
            dw[prow + l] += xv * g.e[l];
            dc[prow + l] += g.e[l];
          } else {
            dx[b * p.I + i] += g.e[l];
          }
        }
      }
  auto put = [&](void* dst, const std::vector<double>& v) {
    if (dst)
      for (std::size_t k = 0; k < v.size(); ++k) store(dst, p.dtype, static_cast<std::int64_t>(k), v[k]);
  };
  put(gp.x, dx);
  put(gp.theta, dtheta);
  put(gp.w, dw);
  put(gp.c, dc);
  put(gp.W, dW);
}

}  // namespace lockstep::qkan::detail
