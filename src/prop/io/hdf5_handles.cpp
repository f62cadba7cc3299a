#include "hdf5_handles.hpp"

namespace lockstep::prop::io::h5 {

std::unique_lock<std::mutex> lock() {
  static std::mutex mutex;
  std::unique_lock guard(mutex);
  static const bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
  return guard;
}

std::string take_error_stack() {
  const hid_t stack = H5Eget_current_stack();
  if (stack < 0) return {};
  std::string text;
  H5Ewalk2(
      stack, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* entry, void* out) -> herr_t {
        auto& s = *static_cast<std::string*>(out);
        if (entry->desc && *entry->desc) s += (s.empty() ? "" : ": ") + std::string(entry->desc);
        return 0;
      },
      &text);
  H5Eclose_stack(stack);
  return text;
}

}  // namespace lockstep::prop::io::h5
