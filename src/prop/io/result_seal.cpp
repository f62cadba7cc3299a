#include "result_seal.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include "lockstep/core/error.hpp"
#include "lockstep/prop/config_hash.hpp"

namespace lockstep::prop::io {

namespace {

constexpr std::string_view kMagic = "lockstep.prop result file\n";

}  // namespace

std::array<std::uint8_t, kSealSize> seal(std::span<const std::uint8_t> hdf5_image) {
  const std::string header =
      std::string(kMagic) + "sha256 " + sha256_hex(hdf5_image) + "\nbytes " + std::to_string(hdf5_image.size()) + "\n";
  std::array<std::uint8_t, kSealSize> out{};
  std::copy(header.begin(), header.end(), out.begin());
  return out;
}

std::span<const std::uint8_t> unseal(std::span<const std::uint8_t> file, std::string_view source) {
  constexpr const char* where = "prop.result";
  const std::string_view text(reinterpret_cast<const char*>(file.data()), std::min(file.size(), kSealSize));
  if (!text.starts_with(kMagic))
    invalid_argument(where, source, ": not a lockstep result file (no lockstep.prop header in its first bytes)");
  std::string_view rest = text.substr(kMagic.size());
  constexpr std::string_view kSha = "sha256 ", kBytes = "\nbytes ";
  if (!rest.starts_with(kSha) || rest.size() < kSha.size() + 64 + kBytes.size() ||
      rest.substr(kSha.size() + 64, kBytes.size()) != kBytes)
    invalid_argument(where, source, ": damaged header (truncated or altered file)");
  const std::string_view digest = rest.substr(kSha.size(), 64);
  rest.remove_prefix(kSha.size() + 64 + kBytes.size());
  std::uint64_t length = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), length);
  const std::size_t header_end = static_cast<std::size_t>(end - text.data());
  if (ec != std::errc{} || header_end >= text.size() || text[header_end] != '\n' ||
      !std::all_of(text.begin() + static_cast<std::ptrdiff_t>(header_end) + 1, text.end(),
                   [](char c) { return c == 0; }))
    invalid_argument(where, source, ": damaged header (truncated or altered file)");
  if (file.size() < kSealSize || file.size() - kSealSize != length)
    invalid_argument(where, source, ": has ", file.size(), " bytes, its header says ", kSealSize + length,
                     " (truncated or extended file)");
  const auto image = file.subspan(kSealSize);
  if (sha256_hex(image) != digest)
    invalid_argument(where, source, ": checksum mismatch (the file was altered or damaged)");
  return image;
}

}  // namespace lockstep::prop::io
