// Small RAII and error helpers over the HDF5 C library for the result files. HDF5's own error
// printing is switched off; its error stack becomes the text of our exceptions. The Debian
// HDF5 library is not thread-safe: every use holds hdf5_mutex().
#pragma once

#include <hdf5.h>

#include <mutex>
#include <string>
#include <utility>

namespace lockstep::prop::io::h5 {

/// The lock every HDF5 call in lockstep holds; the first call also silences HDF5's printing
/// of error stacks to stderr (errors are reported through exceptions instead).
std::unique_lock<std::mutex> lock();

/// The messages of HDF5's current error stack, outermost first ("unable to open file: ... :
/// file signature not found"), and clears it. Empty when the stack is empty.
std::string take_error_stack();

/// An owned HDF5 identifier, closed with the matching H5?close.
class Id {
 public:
  using Closer = herr_t (*)(hid_t);
  Id() = default;
  Id(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id(Id&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Id& operator=(Id&& other) noexcept {
    std::swap(id_, other.id_);
    std::swap(closer_, other.closer_);
    return *this;
  }
  ~Id() { reset(); }
  /// Closes now; the return value of the close (negative: failure).
  herr_t reset() {
    herr_t status = 0;
    if (id_ >= 0 && closer_) status = closer_(id_);
    id_ = H5I_INVALID_HID;
    return status;
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

}  // namespace lockstep::prop::io::h5
