#include "lockstep/core/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "lockstep/core/error.hpp"
#include "lockstep/core/files.hpp"

namespace lockstep::safetensors {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this build assumes a little-endian host");

namespace {

using json = nlohmann::json;

struct DTypeInfo {
  const char* name;
  std::size_t size;
};
constexpr DTypeInfo kDTypes[] = {{"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
                                 {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
                                 {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};

/// numel · element size into `out`; false when it overflows 64 bits.
bool byte_count(const Shape& shape, std::size_t elem, std::uint64_t& out) {
  std::uint64_t n = elem;
  for (std::int64_t d : shape) {
    const auto ud = static_cast<std::uint64_t>(d);
    if (ud != 0 && n > std::numeric_limits<std::uint64_t>::max() / ud) return false;
    n *= ud;
  }
  out = n;
  return true;
}

/// The tensor entry `name` of the header, checked; its byte range in `begin`, `end`.
Tensor read_entry(std::string_view src, const std::string& name, const json& e, std::uint64_t data_size,
                  std::uint64_t& begin, std::uint64_t& end) {
  auto bad = [&](auto&&... parts) { invalid_argument("safetensors", src, ": tensor '", name, "' ", parts...); };
  if (!e.is_object()) bad("is not a JSON object");
  for (auto it = e.begin(); it != e.end(); ++it)
    if (it.key() != "dtype" && it.key() != "shape" && it.key() != "data_offsets")
      bad("has an unknown field '", it.key(), "'");
  if (!e.contains("dtype") || !e["dtype"].is_string()) bad("has no string 'dtype'");
  if (!e.contains("shape") || !e["shape"].is_array()) bad("has no array 'shape'");
  if (!e.contains("data_offsets") || !e["data_offsets"].is_array() || e["data_offsets"].size() != 2)
    bad("has no 'data_offsets' pair");
  Tensor t;
  t.dtype = e["dtype"].get<std::string>();
  std::size_t elem = 0;
  for (const auto& d : kDTypes)
    if (t.dtype == d.name) elem = d.size;
  if (elem == 0) bad("has an unknown dtype '", t.dtype, "'");
  for (const json& d : e["shape"]) {
    if (!d.is_number_unsigned() || d.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      bad("has a shape entry that is not a non-negative integer: ", d.dump());
    t.shape.push_back(static_cast<std::int64_t>(d.get<std::uint64_t>()));
  }
  for (const json& o : e["data_offsets"])
    if (!o.is_number_unsigned()) bad("has a data offset that is not a non-negative integer: ", o.dump());
  begin = e["data_offsets"][0].get<std::uint64_t>();
  end = e["data_offsets"][1].get<std::uint64_t>();
  if (begin > end) bad("has data_offsets [", begin, ", ", end, "] that run backwards");
  if (end > data_size) bad("has data_offsets [", begin, ", ", end, "] past the data region of ", data_size, " bytes");
  std::uint64_t need = 0;
  if (!byte_count(t.shape, elem, need)) bad("has a shape ", to_string(t.shape), " too large to address");
  if (need != end - begin)
    bad("has shape ", to_string(t.shape), " of ", t.dtype, " (", need, " bytes) but data_offsets span ", end - begin,
        " bytes");
  return t;
}

/// Deepest nesting of brackets in a JSON text (outside strings). A safetensors header nests 3
/// deep; refusing deeper ones before parsing bounds the parser's recursion on hostile input.
int nesting_depth(const char* p, const char* end) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (; p != end; ++p) {
    if (in_string) {
      if (*p == '\\' && p + 1 != end) ++p;
      else if (*p == '"') in_string = false;
    } else if (*p == '"') {
      in_string = true;
    } else if (*p == '{' || *p == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (*p == '}' || *p == ']') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

std::size_t dtype_size(std::string_view dtype) {
  for (const auto& d : kDTypes)
    if (dtype == d.name) return d.size;
  invalid_argument("safetensors", "unknown dtype '", dtype, "'");
}

File parse(std::span<const std::uint8_t> bytes, std::string_view src) {
  auto bad = [&](auto&&... parts) { invalid_argument("safetensors", src, ": ", parts...); };
  if (bytes.size() < 8) bad("truncated: ", bytes.size(), " bytes, but a file starts with an 8-byte header length");
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > kMaxHeaderBytes) bad("header length ", n, " exceeds the limit of ", kMaxHeaderBytes, " bytes");
  if (n > bytes.size() - 8)
    bad("truncated: the header needs ", n, " bytes but ", bytes.size() - 8, " follow its length");
  const auto* h = reinterpret_cast<const char*>(bytes.data() + 8);
  if (nesting_depth(h, h + n) > 8) bad("the header nests deeper than a safetensors header can");
  json header = json::parse(h, h + n, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) bad("the header is not valid JSON");
  if (!header.is_object()) bad("the header is not a JSON object");

  File file;
  const std::uint64_t data_size = bytes.size() - 8 - n;
  const std::uint8_t* data = bytes.data() + 8 + n;
  struct Range {
    std::uint64_t begin, end;
    const std::string* name;
  };
  std::vector<Range> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) bad("__metadata__ is not a JSON object");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string()) bad("__metadata__ entry '", m.key(), "' is not a string");
        file.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    std::uint64_t begin = 0, end = 0;
    Tensor t = read_entry(src, it.key(), *it, data_size, begin, end);
    t.bytes.assign(data + begin, data + end);
    auto [pos, inserted] = file.tensors.emplace(it.key(), std::move(t));
    ranges.push_back({begin, end, &pos->first});
  }
  // The ranges must tile the data region: sorted, each starting where the previous ended.
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::uint64_t at = 0;
  for (const Range& r : ranges) {
    if (r.begin < at)
      bad("tensor '", *r.name, "' overlaps the tensor before it (its data starts at ", r.begin, ", before ", at, ")");
    if (r.begin > at) bad("the data region has a hole of ", r.begin - at, " bytes before tensor '", *r.name, "'");
    at = r.end;
  }
  if (at != data_size) bad("the data region has ", data_size - at, " bytes after the last tensor");
  return file;
}

File load(const std::filesystem::path& path) { return parse(read_file(path, "safetensors"), path.string()); }

std::vector<std::uint8_t> serialize(const File& file) {
  json header = json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  std::uint64_t at = 0;
  for (const auto& [name, t] : file.tensors) {
    std::uint64_t need = 0;
    if (!byte_count(t.shape, dtype_size(t.dtype), need) || need != t.bytes.size())
      invalid_argument("safetensors", "tensor '", name, "' has shape ", to_string(t.shape), " of ", t.dtype, " but ",
                       t.bytes.size(), " bytes");
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {at, at + need}}};
    at += need;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data region starts 8-byte aligned
  const std::uint64_t n = text.size();
  std::vector<std::uint8_t> out(8 + n + at);
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, text.data(), n);
  std::uint8_t* p = out.data() + 8 + n;
  for (const auto& [name, t] : file.tensors) {
    if (!t.bytes.empty()) std::memcpy(p, t.bytes.data(), t.bytes.size());
    p += t.bytes.size();
  }
  return out;
}

void save(const std::filesystem::path& path, const File& file) {
  write_file_atomically(path, serialize(file), "safetensors");
}

template <class T> Tensor from_values(std::span<const T> values, Shape shape) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  if (static_cast<std::int64_t>(values.size()) != numel(shape))
    invalid_argument("safetensors", values.size(), " values for shape ", to_string(shape));
  Tensor t;
  t.dtype = std::is_same_v<T, float> ? "F32" : "F64";
  t.shape = std::move(shape);
  t.bytes.resize(values.size_bytes());
  if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), values.size_bytes());
  return t;
}

template <class T> std::vector<T> to_values(const Tensor& t, std::string_view name) {
  auto convert = [&](auto tag) {
    using S = decltype(tag);
    std::vector<S> src(t.bytes.size() / sizeof(S));
    if (!src.empty()) std::memcpy(src.data(), t.bytes.data(), src.size() * sizeof(S));
    return std::vector<T>(src.begin(), src.end());
  };
  if (t.dtype == "F32") return convert(float{});
  if (t.dtype == "F64") return convert(double{});
  invalid_argument("safetensors", "tensor '", name, "' has dtype ", t.dtype, "; expected F32 or F64");
}

template Tensor from_values<float>(std::span<const float>, Shape);
template Tensor from_values<double>(std::span<const double>, Shape);
template std::vector<float> to_values<float>(const Tensor&, std::string_view);
template std::vector<double> to_values<double>(const Tensor&, std::string_view);

}  // namespace lockstep::safetensors
