#include "lockstep/core/npy.hpp"

#include <bit>
#include <cctype>
#include <cstring>
#include <limits>
#include <string>

#include "lockstep/core/error.hpp"
#include "lockstep/core/files.hpp"

namespace lockstep::npy {

static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";

/// The value of `key` in the header's Python dict literal, as its source text.
std::string_view dict_value(std::string_view header, std::string_view key, std::string_view src) {
  const std::string quoted = "'" + std::string(key) + "'";
  const auto at = header.find(quoted);
  if (at == std::string_view::npos) invalid_argument("npy", src, ": the header has no ", quoted);
  auto p = header.find(':', at + quoted.size());
  if (p == std::string_view::npos) invalid_argument("npy", src, ": malformed header near ", quoted);
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  std::size_t end = p;
  if (p < header.size() && header[p] == '(') end = header.find(')', p) + 1;
  else if (p < header.size() && header[p] == '\'') end = header.find('\'', p + 1) + 1;
  else
    while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  if (end == 0 || end > header.size()) invalid_argument("npy", src, ": malformed header near ", quoted);
  return header.substr(p, end - p);
}

Shape parse_shape(std::string_view text, std::string_view src) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    invalid_argument("npy", src, ": the shape ", text, " is not a tuple");
  Shape shape;
  std::size_t i = 1;
  while (i + 1 < text.size()) {
    while (i + 1 < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i + 1 >= text.size()) break;
    std::int64_t d = 0;
    if (!std::isdigit(static_cast<unsigned char>(text[i])))
      invalid_argument("npy", src, ": the shape ", text, " is not a tuple of sizes");
    while (i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (d > (std::numeric_limits<std::int64_t>::max() - 9) / 10)
        invalid_argument("npy", src, ": a size in ", text, " is too large");
      d = d * 10 + (text[i++] - '0');
    }
    shape.push_back(d);
  }
  return shape;
}

}  // namespace

Array parse(std::span<const std::uint8_t> bytes, std::string_view src) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    invalid_argument("npy", src, ": not a .npy file (no \\x93NUMPY magic)");
  const int major = bytes[6];
  std::size_t len = 0, start = 0;
  if (major == 1) {
    len = bytes[8] | (std::size_t(bytes[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) invalid_argument("npy", src, ": truncated header");
    len = bytes[8] | (std::size_t(bytes[9]) << 8) | (std::size_t(bytes[10]) << 16) | (std::size_t(bytes[11]) << 24);
    start = 12;
  } else {
    invalid_argument("npy", src, ": format version ", major, " is not supported (1, 2 or 3)");
  }
  if (len > bytes.size() - start) invalid_argument("npy", src, ": truncated: the header needs ", len, " bytes");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + start), len);
  const std::string_view descr = dict_value(header, "descr", src);
  Array a;
  std::size_t elem = 0;
  if (descr == "'<f4'" || descr == "'=f4'") a.stored = DType::f32, elem = 4;
  else if (descr == "'<f8'" || descr == "'=f8'") a.stored = DType::f64, elem = 8;
  else invalid_argument("npy", src, ": dtype ", descr, " is not supported (float32 '<f4' or float64 '<f8')");
  if (dict_value(header, "fortran_order", src) != "False")
    invalid_argument("npy", src, ": Fortran-order arrays are not supported");
  a.shape = parse_shape(dict_value(header, "shape", src), src);
  std::uint64_t n = 1;
  for (std::int64_t d : a.shape) {
    if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / std::uint64_t(d) / elem)
      invalid_argument("npy", src, ": the shape ", to_string(a.shape), " is too large");
    n *= std::uint64_t(d);
  }
  const std::size_t data = start + len;
  if (bytes.size() - data != n * elem)
    invalid_argument("npy", src, ": shape ", to_string(a.shape), " needs ", n * elem, " bytes of data, the file has ",
                     bytes.size() - data);
  a.values.resize(n);
  for (std::uint64_t k = 0; k < n; ++k) {
    if (elem == 4) {
      float v;
      std::memcpy(&v, bytes.data() + data + 4 * k, 4);
      a.values[k] = v;
    } else {
      std::memcpy(&a.values[k], bytes.data() + data + 8 * k, 8);
    }
  }
  return a;
}

Array load(const std::filesystem::path& path) { return parse(read_file(path, "npy"), path.string()); }

void save(const std::filesystem::path& path, std::span<const double> values, const Shape& shape, DType dtype) {
  if (static_cast<std::int64_t>(values.size()) != numel(shape))
    invalid_argument("npy", values.size(), " values for shape ", to_string(shape));
  std::string dims;  // "2, 3", "5," (a 1-tuple) or ""
  for (std::size_t k = 0; k < shape.size(); ++k) dims += (k ? ", " : "") + std::to_string(shape[k]);
  if (shape.size() == 1) dims += ",";
  std::string header = std::string("{'descr': '") + (dtype == DType::f32 ? "<f4" : "<f8") +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');  // data 64-byte aligned, as NumPy pads
  header += '\n';
  std::vector<std::uint8_t> out(10);
  std::memcpy(out.data(), kMagic, 6);
  out[6] = 1, out[7] = 0, out[8] = std::uint8_t(header.size() & 0xff), out[9] = std::uint8_t(header.size() >> 8);
  out.insert(out.end(), header.begin(), header.end());
  const std::size_t elem = dtype == DType::f32 ? 4 : 8, data = out.size();
  out.resize(data + values.size() * elem);
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (elem == 4) {
      const float v = static_cast<float>(values[k]);
      std::memcpy(out.data() + data + 4 * k, &v, 4);
    } else {
      std::memcpy(out.data() + data + 8 * k, &values[k], 8);
    }
  }
  write_file_atomically(path, out, "npy");
}

}  // namespace lockstep::npy
