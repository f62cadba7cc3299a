// Element-wise work over the members of a batch, threaded only when it pays.
#pragma once

#include <cstdint>

#include "lockstep/core/parallel.hpp"

namespace lockstep::prop {

/// Complex values (members × points) below which a pass runs on the calling thread: on a
/// loaded machine a parallel region over a few small rows costs more than the rows themselves.
inline constexpr std::int64_t kMinThreadedValues = std::int64_t{1} << 15;

/// Runs body(member, thread) for members [first, first + count), threaded across members when
/// count × points reaches kMinThreadedValues, else on the calling thread (thread 0). Each
/// member's arithmetic is the same either way.
template <class Body> void for_each_member(std::int64_t first, std::int64_t count, std::int64_t points, Body&& body) {
  if (count * points < kMinThreadedValues) {
    for (std::int64_t m = first; m < first + count; ++m) body(m, 0);
    return;
  }
  parallel_for(count, [&](std::int64_t t, int thread) { body(first + t, thread); });
}

}  // namespace lockstep::prop
