#include "edge_tables.hpp"

#include <array>
#include <cmath>

#include "lockstep/core/error.hpp"

namespace lockstep::qkan::detail {
namespace {

Schedule schedule(Ansatz a) {
  switch (a) {
    case Ansatz::pz: return ScheduleOf<Ansatz::pz>::value;
    case Ansatz::rpz: return ScheduleOf<Ansatz::rpz>::value;
    case Ansatz::px: return ScheduleOf<Ansatz::px>::value;
    case Ansatz::mix: return ScheduleOf<Ansatz::mix>::value;
    case Ansatz::real: break;
  }
  invalid_argument("qkan.fused", "no generic schedule for ", to_string(a));
}

using Vec3 = std::array<double, 3>;

void rotate(Vec3& n, int axis, double phi) {
  const int u = (axis + 1) % 3, v = (axis + 2) % 3;
  const double c = std::cos(phi), s = std::sin(phi);
  const double nu = c * n[u] - s * n[v];
  n[v] = s * n[u] + c * n[v];
  n[u] = nu;
}

double load(const Problem& p, const void* t, std::int64_t k) {
  return p.dtype == DType::f32 ? static_cast<const float*>(t)[k] : static_cast<const double*>(t)[k];
}

/// The prefix gates (axis, θ column of row 0), in time order.
int prefix_gates(const Schedule& s, int axes[3], int cols[3]) {
  int n = 0;
  if (s.offset_col >= 0) { axes[n] = s.data_axis; cols[n++] = s.offset_col; }
  for (int k = 0; k < s.nconst; ++k) { axes[n] = s.const_axis[k]; cols[n++] = s.const_col[k]; }
  return n;
}

}  // namespace

int edge_record_size(const Problem& p) {
  return p.ansatz == Ansatz::real ? real_record_size() : record_size(schedule(p.ansatz), p.reps);
}
int edge_slot_count(const Problem& p) {
  return p.ansatz == Ansatz::real ? real_slot_count(p.encoding) : slot_count(schedule(p.ansatz), p.reps, p.encoding);
}

template <class T> std::vector<T> build_edge_records(const Problem& p) {
  const int KC = edge_record_size(p);
  std::vector<T> rec(static_cast<std::size_t>(p.O_edges * p.I * KC));
  for (std::int64_t o = 0; o < p.O_edges; ++o)
    for (std::int64_t i = 0; i < p.I; ++i) {
      T* r = rec.data() + (o * p.I + i) * KC;
      const std::int64_t trow = p.theta_layout.row(o, i) * p.R * p.K;
      auto th = [&](int row, int col) { return load(p, p.theta, trow + row * p.K + col); };
      const std::int64_t prow = p.encoding ? p.pre_layout.row(o, i) * p.reps : 0;
      auto w = [&](int l) { return load(p, p.w, prow + l); };
      auto c = [&](int l) { return load(p, p.c, prow + l); };
      if (p.ansatz == Ansatz::real) {
        double Theta = 0, Wsum = 0, Csum = 0;
        for (int l = 0; l < p.reps; ++l) {
          Theta += th(l, 0);
          if (p.encoding) { Wsum += w(l); Csum += c(l); }
        }
        r[0] = static_cast<T>(p.encoding ? Wsum : std::cos(Theta));
        r[1] = static_cast<T>(p.encoding ? Csum - Theta : std::sin(Theta));
        continue;
      }
      const Schedule s = schedule(p.ansatz);
      int axes[3], cols[3];
      const int np = prefix_gates(s, axes, cols);
      Vec3 n{1, 0, 0};
      for (int k = 0; k < np; ++k) rotate(n, axes[k], th(0, cols[k]));
      for (int k = 0; k < 3; ++k) r[k] = static_cast<T>(n[k]);
      T* q = r + 3;
      for (int l = 0; l < p.reps; ++l) {
        const double off = s.offset_col >= 0 ? th(l + 1, s.offset_col) : 0.0;
        if (p.encoding) { q[0] = static_cast<T>(w(l)); q[1] = static_cast<T>(c(l) + off); }
        else { q[0] = static_cast<T>(std::cos(off)); q[1] = static_cast<T>(std::sin(off)); }
        for (int k = 0; k < s.nconst; ++k) {
          const double phi = th(l + 1, s.const_col[k]);
          q[2 + 2 * k] = static_cast<T>(std::cos(phi));
          q[3 + 2 * k] = static_cast<T>(std::sin(phi));
        }
        q += 2 + 2 * s.nconst;
      }
    }
  return rec;
}

template std::vector<float> build_edge_records<float>(const Problem&);
template std::vector<double> build_edge_records<double>(const Problem&);

void fold_edge_slots(const Problem& p, const double* slots, void* dtheta, void* dw, void* dc) {
  const int NS = edge_slot_count(p);
  const int RK = p.R * p.K;
  std::vector<double> gt(dtheta ? p.theta_layout.rows() * RK : 0, 0.0);
  std::vector<double> gw(p.encoding ? p.pre_layout.rows() * p.reps : 0, 0.0), gc(gw.size(), 0.0);
  for (std::int64_t o = 0; o < p.O_edges; ++o)
    for (std::int64_t i = 0; i < p.I; ++i) {
      const double* sl = slots + (o * p.I + i) * NS;
      double* t = gt.empty() ? nullptr : gt.data() + p.theta_layout.row(o, i) * RK;
      const std::int64_t prow = p.encoding ? p.pre_layout.row(o, i) * p.reps : 0;
      if (p.ansatz == Ansatz::real) {
        for (int l = 0; l < p.reps; ++l) {
          if (t) t[l] -= sl[0];
          if (p.encoding) { gc[prow + l] += sl[0]; gw[prow + l] += sl[1]; }
        }
        continue;
      }
      const Schedule s = schedule(p.ansatz);
      if (t) {
        // Prefix gradients from G0 = Σ_b (cotangent at n0): walk the prefix gates backwards,
        // dφ = G·(a × n) with n the state after the gate, then un-rotate n and G.
        const std::int64_t trow = p.theta_layout.row(o, i) * RK;
        int axes[3], cols[3];
        const int np = prefix_gates(s, axes, cols);
        Vec3 n{1, 0, 0}, G{sl[0], sl[1], sl[2]};
        for (int k = 0; k < np; ++k) rotate(n, axes[k], load(p, p.theta, trow + cols[k]));
        for (int k = np; k-- > 0;) {
          const int u = (axes[k] + 1) % 3, v = (axes[k] + 2) % 3;
          t[cols[k]] += G[v] * n[u] - G[u] * n[v];
          const double phi = load(p, p.theta, trow + cols[k]);
          rotate(n, axes[k], -phi);
          rotate(G, axes[k], -phi);
        }
      }
      const double* q = sl + 3;
      for (int l = 0; l < p.reps; ++l) {
        if (t) {
          if (s.offset_col >= 0) t[(l + 1) * p.K + s.offset_col] += q[0];
          for (int k = 0; k < s.nconst; ++k) t[(l + 1) * p.K + s.const_col[k]] += q[1 + k];
        }
        if (p.encoding) { gc[prow + l] += q[0]; gw[prow + l] += q[1 + s.nconst]; }
        q += 1 + s.nconst + (p.encoding ? 1 : 0);
      }
    }
  auto put = [&](void* dst, const std::vector<double>& v) {
    if (!dst) return;
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (p.dtype == DType::f32) static_cast<float*>(dst)[k] = static_cast<float>(v[k]);
      else static_cast<double*>(dst)[k] = v[k];
    }
  };
  put(dtheta, gt);
  put(dw, gw);
  put(dc, gc);
}

}  // namespace lockstep::qkan::detail
