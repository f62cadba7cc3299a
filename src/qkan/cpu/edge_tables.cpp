#include "edge_tables.hpp"

#include "src/qkan/edge_math.hpp"

namespace lockstep::qkan::detail {
namespace {

double load(const Problem& p, const void* t, std::int64_t k) {
  return p.dtype == DType::f32 ? static_cast<const float*>(t)[k] : static_cast<const double*>(t)[k];
}

}  // namespace

int edge_record_size(const Problem& p) { return edge_record_size(p.ansatz, p.reps); }
int edge_slot_count(const Problem& p) { return edge_slot_count(p.ansatz, p.reps, p.encoding); }

template <class T> std::vector<T> build_edge_records(const Problem& p) {
  const int KC = edge_record_size(p);
  std::vector<T> rec(static_cast<std::size_t>(p.O_edges * p.I * KC));
  for (std::int64_t o = 0; o < p.O_edges; ++o)
    for (std::int64_t i = 0; i < p.I; ++i) {
      const std::int64_t trow = p.theta_layout.row(o, i) * p.R * p.K;
      const std::int64_t prow = p.encoding ? p.pre_layout.row(o, i) * p.reps : 0;
      build_record<double>(
          p.ansatz, p.reps, p.encoding, [&](int row, int col) { return load(p, p.theta, trow + row * p.K + col); },
          [&](int l) { return load(p, p.w, prow + l); }, [&](int l) { return load(p, p.c, prow + l); },
          rec.data() + (o * p.I + i) * KC);
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
      const std::int64_t trow = p.theta_layout.row(o, i) * RK;
      const std::int64_t prow = p.encoding ? p.pre_layout.row(o, i) * p.reps : 0;
      fold_edge<double>(
          p.ansatz, p.reps, p.encoding, slots + (o * p.I + i) * NS,
          [&](int row, int col) { return load(p, p.theta, trow + row * p.K + col); }, dtheta != nullptr,
          [&](int row, int col, double v) { gt[trow + row * p.K + col] += v; },
          [&](int l, double v) { gw[prow + l] += v; }, [&](int l, double v) { gc[prow + l] += v; });
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
