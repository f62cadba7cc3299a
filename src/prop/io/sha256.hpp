// SHA-256 (FIPS 180-4), incremental, for the configuration hash and the result files' seal.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace lockstep::prop::io {

class Sha256 {
 public:
  /// The compression function: the plain reference, or the x86 SHA extensions (chosen at run
  /// time where the processor has them; the same digests, about 5× faster).
  enum class Path { reference, best };

  explicit Sha256(Path path = Path::best);
  /// Whether Path::best uses the SHA extensions on this processor.
  static bool hardware_available();
  void update(std::span<const std::uint8_t> bytes);
  /// The digest of everything passed to update(); the object must not be updated afterwards.
  std::array<std::uint8_t, 32> finish();
  /// finish() as 64 lowercase hexadecimal digits.
  std::string finish_hex();

 private:
  void compress(const std::uint8_t* block);

  bool hardware_;
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  ///< bytes
};

}  // namespace lockstep::prop::io
