// Error helpers: every error carries the name of the operation that raised it,
// e.g. "[qkan.contract] theta has shape (3,4,2), expected (O, I, 4, 2) or (g, 4, 2)".
#pragma once

#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace lockstep {

namespace detail {
// Messages are built without iostreams: numbers through std::to_chars (shortest round-trip
// form, independent of any locale). A host process may carry a C++ locale that its own
// libraries set up (a Python interpreter with several extension modules), and formatting a
// number through an ostream there is not something an error path can rely on.
// (C++17: CUDA units include this header too.)
template <class T> void append(std::string& out, const T& part) {
  using U = std::decay_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    out += part ? "true" : "false";
  } else if constexpr (std::is_same_v<U, char>) {
    out += part;
  } else if constexpr (std::is_arithmetic_v<U>) {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, part);
    out.append(buffer, result.ptr);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out += std::string_view(part);
  } else {
    out += part.string();  // std::filesystem::path
  }
}

template <class... Parts> std::string concat(std::string_view where, const Parts&... parts) {
  std::string out;
  out += '[';
  out += where;
  out += "] ";
  (append(out, parts), ...);
  return out;
}
}  // namespace detail

/// Throws std::invalid_argument for a caller mistake, prefixed with `[where]`.
template <class... Parts> [[noreturn]] void invalid_argument(std::string_view where, Parts&&... parts) {
  throw std::invalid_argument(detail::concat(where, std::forward<Parts>(parts)...));
}

/// Throws std::runtime_error for a backend failure, prefixed with `[where]`.
template <class... Parts> [[noreturn]] void runtime_failure(std::string_view where, Parts&&... parts) {
  throw std::runtime_error(detail::concat(where, std::forward<Parts>(parts)...));
}

/// A device's memory did not suffice for what was asked: the one failure a caller can answer by
/// asking for less (fewer members in a batch), where any other error would recur. The message
/// names what was needed and what was free.
struct DeviceMemoryExhausted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws DeviceMemoryExhausted, prefixed with `[where]`.
template <class... Parts> [[noreturn]] void device_memory_exhausted(std::string_view where, Parts&&... parts) {
  throw DeviceMemoryExhausted(detail::concat(where, std::forward<Parts>(parts)...));
}

}  // namespace lockstep
