// A strict PNG reader for the tests of the figures: checks the signature, every chunk's CRC, the
// IHDR fields lockstep writes (8-bit RGB, no interlace), the filter byte of every row, and that
// the inflated data hold exactly height rows of width pixels; undoes all five PNG filters.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace lockstep::test {

struct DecodedPng {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
  std::vector<int> filters;  // the filter type of each row
};

inline std::uint32_t read_u32(const std::vector<std::uint8_t>& b, std::size_t at) {
  if (at + 4 > b.size()) throw std::runtime_error("png: truncated at byte " + std::to_string(at));
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) | b[at + 3];
}

inline DecodedPng decode_png(const std::vector<std::uint8_t>& file) {
  const std::uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (file.size() < 8 || !std::equal(signature, signature + 8, file.begin()))
    throw std::runtime_error("png: bad signature");
  DecodedPng png;
  std::vector<std::uint8_t> idat;
  bool ended = false, header = false;
  for (std::size_t at = 8; at < file.size();) {
    if (ended) throw std::runtime_error("png: data after IEND");
    const std::uint32_t length = read_u32(file, at);
    if (at + 12 + std::size_t{length} > file.size()) throw std::runtime_error("png: chunk runs past the end");
    const std::string type(file.begin() + static_cast<long>(at) + 4, file.begin() + static_cast<long>(at) + 8);
    const std::uint8_t* data = &file[at + 8];
    const std::uint32_t crc = read_u32(file, at + 8 + length);
    if (crc32(crc32(0L, Z_NULL, 0), &file[at + 4], length + 4) != crc)
      throw std::runtime_error("png: bad CRC in " + type);
    if (type == "IHDR") {
      if (length != 13) throw std::runtime_error("png: IHDR length");
      png.width = static_cast<int>(read_u32(file, at + 8));
      png.height = static_cast<int>(read_u32(file, at + 12));
      if (data[8] != 8 || data[9] != 2 || data[10] != 0 || data[11] != 0 || data[12] != 0)
        throw std::runtime_error("png: not 8-bit RGB, deflate, adaptive filtering, no interlace");
      header = true;
    } else if (type == "IDAT") {
      if (!header) throw std::runtime_error("png: IDAT before IHDR");
      idat.insert(idat.end(), data, data + length);
    } else if (type == "IEND") {
      ended = true;
    } else if (!(type[0] & 0x20)) {
      throw std::runtime_error("png: unknown critical chunk " + type);
    }
    at += 12 + std::size_t{length};
  }
  if (!ended || !header || png.width <= 0 || png.height <= 0) throw std::runtime_error("png: missing IHDR or IEND");
  const std::size_t stride = static_cast<std::size_t>(png.width) * 3;
  // One spare byte: inflating to exactly the expected size must fill the buffer, no more.
  std::vector<std::uint8_t> raw((stride + 1) * png.height + 1);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, idat.data(), idat.size()) != Z_OK)
    throw std::runtime_error("png: bad zlib data");
  if (raw_size != (stride + 1) * png.height) throw std::runtime_error("png: wrong amount of pixel data");
  png.rgb.resize(stride * png.height);
  for (int y = 0; y < png.height; ++y) {
    const int filter = raw[y * (stride + 1)];
    if (filter > 4) throw std::runtime_error("png: bad filter byte " + std::to_string(filter));
    png.filters.push_back(filter);
    const std::uint8_t* in = &raw[y * (stride + 1) + 1];
    std::uint8_t* out = &png.rgb[y * stride];
    const std::uint8_t* up = y > 0 ? out - stride : nullptr;
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= 3 ? out[i - 3] : 0, b = up ? up[i] : 0, c = (up && i >= 3) ? up[i - 3] : 0;
      int predictor = 0;
      switch (filter) {
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) / 2; break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          predictor = (pa <= pb && pa <= pc) ? a : pb <= pc ? b : c;
          break;
        }
        default: break;
      }
      out[i] = static_cast<std::uint8_t>(in[i] + predictor);
    }
  }
  return png;
}

}  // namespace lockstep::test
