// Per-edge constants of the fused kernels (built once per call from θ, w, c) and the fold of
// per-edge gradient slots back into the θ / w / c tables, in double, over edge_math.hpp.
#pragma once

#include <vector>

#include "../problem.hpp"
#include "../schedule.hpp"

namespace lockstep::qkan::detail {

/// Values per edge record and gradient slots per edge for this problem.
int edge_record_size(const Problem& p);
int edge_slot_count(const Problem& p);

/// Records for the O_edges × I distinct circuits, edge (o, i) at (o·I + i)·edge_record_size.
template <class T> std::vector<T> build_edge_records(const Problem& p);

/// Sums per-edge slots (O_edges × I × edge_slot_count, doubles) into the gradient tables
/// (overwriting them); a nullptr destination is skipped.
void fold_edge_slots(const Problem& p, const double* slots, void* dtheta, void* dw, void* dc);

}  // namespace lockstep::qkan::detail
