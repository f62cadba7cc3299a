// zero_tables (launch.hpp): the tables a backward adds into, zeroed by one kernel. Each
// memset would be a node of a captured training step, about 1 us apiece at small shapes, and
// separate allocations cannot share one memset even where they lie end to end in memory.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "src/qkan/cuda/launch.hpp"

namespace lockstep::qkan::detail::cuda_lanes {

namespace {

struct Spans {
  std::uint32_t* ptr[kMaxZeroSpans];
  std::int64_t words[kMaxZeroSpans];
  int n;
};

__global__ void zero_tables_kernel(Spans s) {
  const std::int64_t first = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (int k = 0; k < s.n; ++k)
    for (std::int64_t j = first; j < s.words[k]; j += stride) s.ptr[k][j] = 0;
}

}  // namespace

void zero_tables(const ZeroSpan* spans, int n, void* stream) {
  if (n > kMaxZeroSpans) invalid_argument("qkan.cuda", "zero_tables takes at most ", kMaxZeroSpans, " tables, got ", n);
  Spans s{};
  std::int64_t most = 0;
  for (int k = 0; k < n; ++k) {
    if (!spans[k].ptr || spans[k].bytes == 0) continue;
    // Tables hold float32 or float64 values, so their sizes and addresses are 4-byte multiples.
    s.ptr[s.n] = static_cast<std::uint32_t*>(spans[k].ptr);
    s.words[s.n] = std::int64_t(spans[k].bytes / 4);
    most = std::max(most, s.words[s.n]);
    ++s.n;
  }
  if (s.n == 0) return;
  constexpr int kBlock = 256;
  const auto blocks =
      unsigned(std::clamp<std::int64_t>((most + kBlock - 1) / kBlock, 1, 8 * std::int64_t(multiprocessors())));
  zero_tables_kernel<<<blocks, kBlock, 0, static_cast<cudaStream_t>(stream)>>>(s);
  check(cudaGetLastError(), "zeroing the gradient tables");
}

}  // namespace lockstep::qkan::detail::cuda_lanes
