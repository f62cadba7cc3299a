// Error helpers: every error carries the name of the operation that raised it,
// e.g. "[qkan.contract] theta has shape (3,4,2), expected (O, I, 4, 2) or (g, 4, 2)".
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace lockstep {

namespace detail {
template <class... Parts>
std::string concat(std::string_view where, Parts&&... parts) {
  std::ostringstream os;
  os << '[' << where << "] ";
  (os << ... << std::forward<Parts>(parts));
  return os.str();
}
}  // namespace detail

/// Throws std::invalid_argument for a caller mistake, prefixed with `[where]`.
template <class... Parts>
[[noreturn]] void invalid_argument(std::string_view where, Parts&&... parts) {
  throw std::invalid_argument(detail::concat(where, std::forward<Parts>(parts)...));
}

/// Throws std::runtime_error for a backend failure, prefixed with `[where]`.
template <class... Parts>
[[noreturn]] void runtime_failure(std::string_view where, Parts&&... parts) {
  throw std::runtime_error(detail::concat(where, std::forward<Parts>(parts)...));
}

}  // namespace lockstep
