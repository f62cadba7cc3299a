// HDF5 result files: the layout is documented in include/lockstep/prop/result_file.hpp.
#include "lockstep/prop/result_file.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <span>
#include <string>

#include "hdf5_handles.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/files.hpp"
#include "lockstep/prop/config_hash.hpp"
#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/recipe.hpp"
#include "lockstep/prop/transform.hpp"
#include "record_fields.hpp"
#include "result_seal.hpp"

namespace lockstep::prop {

namespace {

constexpr const char* kWhere = "prop.result";
using Complex = std::complex<double>;
using io::h5::Id;

// ---------------------------------------------------------------------------------------
// Types shared by writer and reader.

Id string_type() {
  Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

/// {r, i} of float64 at offsets 0 and 8: std::complex<double>'s layout, and h5py's complex128.
Id complex_type() {
  Id type(H5Tcreate(H5T_COMPOUND, sizeof(Complex)), H5Tclose);
  H5Tinsert(type.get(), "r", 0, H5T_NATIVE_DOUBLE);
  H5Tinsert(type.get(), "i", sizeof(double), H5T_NATIVE_DOUBLE);
  return type;
}

// ---------------------------------------------------------------------------------------
// Writing: an in-memory HDF5 file (core driver), sealed and written to disk in one piece.

class Writer {
 public:
  explicit Writer(std::size_t size_hint) {
    Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    check(H5Pset_fapl_core(fapl.get(), size_hint, false), "setting up the in-memory file");
    file_ = Id(H5Fcreate("lockstep-result", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
    check(file_.get(), "creating the in-memory file");
  }

  Id group(const char* name) {
    Id g(H5Gcreate2(file_.get(), name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    check(g.get(), "creating group ", name);
    return g;
  }

  void string(const Id& group, const char* name, const std::string& text) {
    if (text.find('\0') != std::string::npos) invalid_argument(kWhere, name, ": text holds a NUL character");
    const Id type = string_type();
    Id space(H5Screate(H5S_SCALAR), H5Sclose);
    Id set = dataset(group, name, type, space);
    const char* data = text.c_str();
    check(H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &data), "writing ", name);
  }

  void reals(const Id& group, const char* name, const double* data, std::vector<hsize_t> dims, const char* unit) {
    Id space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
    Id set = dataset(group, name, Id(H5Tcopy(H5T_IEEE_F64LE), H5Tclose), space);
    check(H5Dwrite(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "writing ", name);
    attribute(set, "unit", unit);
  }

  void complexes(const Id& group, const char* name, const Complex* data, std::vector<hsize_t> dims, const char* unit) {
    const Id type = complex_type();
    Id file_type(H5Tcreate(H5T_COMPOUND, 16), H5Tclose);
    H5Tinsert(file_type.get(), "r", 0, H5T_IEEE_F64LE);
    H5Tinsert(file_type.get(), "i", 8, H5T_IEEE_F64LE);
    Id space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
    Id set = dataset(group, name, file_type, space);
    check(H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "writing ", name);
    attribute(set, "unit", unit);
  }

  template <class T> void scalar(const Id& group, const char* name, T value) {
    const bool integer = std::is_integral_v<T>;
    Id space(H5Screate(H5S_SCALAR), H5Sclose);
    Id set = dataset(group, name, Id(H5Tcopy(integer ? H5T_STD_I64LE : H5T_IEEE_F64LE), H5Tclose), space);
    check(H5Dwrite(set.get(), integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value),
          "writing ", name);
  }

  void link(const char* target, const Id& group, const char* name) {
    check(H5Lcreate_hard(file_.get(), target, group.get(), name, H5P_DEFAULT, H5P_DEFAULT), "linking ", name);
  }

  /// The finished file's bytes (the file is closed).
  std::vector<std::uint8_t> image() {
    check(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL), "flushing the in-memory file");
    const ssize_t size = H5Fget_file_image(file_.get(), nullptr, 0);
    check(size, "sizing the file image");
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
    check(H5Fget_file_image(file_.get(), bytes.data(), bytes.size()), "copying the file image");
    check(file_.reset(), "closing the in-memory file");
    return bytes;
  }

 private:
  template <class... Parts> static void check(long long status, Parts&&... what) {
    if (status < 0)
      runtime_failure(kWhere, "HDF5 failed ", std::forward<Parts>(what)..., ": ", io::h5::take_error_stack());
  }

  Id dataset(const Id& group, const char* name, const Id& type, const Id& space) {
    Id set(H5Dcreate2(group.get(), name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
    check(set.get(), "creating dataset ", name);
    return set;
  }

  void attribute(const Id& set, const char* name, const char* text) {
    const Id type = string_type();
    Id space(H5Screate(H5S_SCALAR), H5Sclose);
    Id attr(H5Acreate2(set.get(), name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    check(attr.get(), "creating attribute ", name);
    check(H5Awrite(attr.get(), type.get(), &text), "writing attribute ", name);
  }

  Id file_;
};

/// A(T) of every plane (the grid's convention), planes × n.
std::vector<Complex> time_domain(const Planes& planes, std::int64_t n) {
  const std::size_t size = static_cast<std::size_t>(n);
  std::vector<Complex> out(planes.field_w.size() * size);
  if (planes.field_w.empty()) return out;
  SpectralTransform transform(n);
  for (std::size_t p = 0; p < planes.field_w.size(); ++p)
    transform.to_time(planes.field_w[p].data(), out.data() + p * size);
  return out;
}

void check_consistent(const ResultData& data, std::int64_t n) {
  const std::size_t size = static_cast<std::size_t>(n);
  const auto& stats = data.statistics;
  for (const auto& [name, member] : io::kStatisticsFields)
    if ((stats.*member).size() != stats.z.size())
      invalid_argument(kWhere, "statistics.", name, " has ", (stats.*member).size(), " rows, statistics.z has ",
                       stats.z.size());
  if (data.planes.z.size() != data.planes.field_w.size())
    invalid_argument(kWhere, "planes.z has ", data.planes.z.size(), " planes, planes.field_w ",
                     data.planes.field_w.size());
  for (std::size_t p = 0; p < data.planes.field_w.size(); ++p)
    if (data.planes.field_w[p].size() != size)
      invalid_argument(kWhere, "planes.field_w[", p, "] has ", data.planes.field_w[p].size(), " points, the grid ", n);
  if (data.field_w.size() != size)
    invalid_argument(kWhere, "field_w (the resume state) has ", data.field_w.size(), " points, the grid ", n);
}

// ---------------------------------------------------------------------------------------
// Reading: every dataset is checked for presence, type and shape before it is read.

class Reader {
 public:
  Reader(std::span<const std::uint8_t> image, std::string source) : source_(std::move(source)), limit_(image.size()) {
    Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    // HDF5 copies the image (no callbacks are set), so the const_cast below writes nothing.
    if (H5Pset_fapl_core(fapl.get(), 1 << 20, false) < 0 ||
        H5Pset_file_image(fapl.get(), const_cast<std::uint8_t*>(image.data()), image.size()) < 0)
      runtime_failure(kWhere, source_, ": HDF5 cannot take the file image: ", io::h5::take_error_stack());
    // The core driver refuses to open an image under the name of an existing file; below a
    // regular file no path exists.
    const std::string name = source_ + "/(image)";
    file_ = Id(H5Fopen(name.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
    if (!file_.valid()) bad("not a readable HDF5 file: ", io::h5::take_error_stack());
  }

  template <class... Parts> [[noreturn]] void bad(Parts&&... parts) const {
    invalid_argument(kWhere, source_, ": ", std::forward<Parts>(parts)...);
  }

  Id group(const char* name) const {
    if (H5Lexists(file_.get(), name, H5P_DEFAULT) <= 0) bad("missing group /", name);
    Id g(H5Gopen2(file_.get(), name, H5P_DEFAULT), H5Gclose);
    if (!g.valid()) bad("/", name, " is not a group: ", io::h5::take_error_stack());
    return g;
  }

  std::string string(const Id& group, const char* path) const {
    Id set = dataset(group, path);
    Id type(H5Dget_type(set.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) <= 0)
      bad(path, " is not a variable-length string");
    expect_dims(set, path, {});
    // HDF5 converts no string between character sets: read in the file's (ASCII or UTF-8).
    const Id mem = string_type();
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* text = nullptr;
    if (H5Dread(set.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) < 0)
      bad("cannot read ", path, ": ", io::h5::take_error_stack());
    std::string out = text ? text : "";
    H5free_memory(text);
    return out;
  }

  std::vector<double> reals(const Id& group, const char* path, std::vector<hsize_t> dims) const {
    Id set = dataset(group, path);
    require_class(set, path, H5T_FLOAT, "float64");
    expect_dims(set, path, dims);
    std::vector<double> out(elements(dims, sizeof(double), path));
    if (H5Dread(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
      bad("cannot read ", path, ": ", io::h5::take_error_stack());
    return out;
  }

  std::vector<Complex> complexes(const Id& group, const char* path, std::vector<hsize_t> dims) const {
    Id set = dataset(group, path);
    Id type(H5Dget_type(set.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_COMPOUND || H5Tget_nmembers(type.get()) != 2 ||
        H5Tget_member_index(type.get(), "r") < 0 || H5Tget_member_index(type.get(), "i") < 0 ||
        H5Tget_member_class(type.get(), 0) != H5T_FLOAT || H5Tget_member_class(type.get(), 1) != H5T_FLOAT)
      bad(path, " is not a complex compound {r, i} of floats");
    expect_dims(set, path, dims);
    std::vector<Complex> out(elements(dims, sizeof(Complex), path));
    if (H5Dread(set.get(), complex_type().get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
      bad("cannot read ", path, ": ", io::h5::take_error_stack());
    return out;
  }

  /// Checks type class and shape without reading the data.
  void expect_complex_shape(const Id& group, const char* path, std::vector<hsize_t> dims) const {
    Id set = dataset(group, path);
    require_class(set, path, H5T_COMPOUND, "complex compound");
    expect_dims(set, path, dims);
  }

  template <class T> T scalar(const Id& group, const char* path) const {
    constexpr bool integer = std::is_integral_v<T>;
    Id set = dataset(group, path);
    require_class(set, path, integer ? H5T_INTEGER : H5T_FLOAT, integer ? "int64" : "float64");
    expect_dims(set, path, {});
    T value{};
    if (H5Dread(set.get(), integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) < 0)
      bad("cannot read ", path, ": ", io::h5::take_error_stack());
    return value;
  }

  /// The length of a one-dimensional dataset.
  hsize_t length(const Id& group, const char* path) const {
    Id set = dataset(group, path);
    Id space(H5Dget_space(set.get()), H5Sclose);
    hsize_t dims[1] = {0};
    if (H5Sget_simple_extent_ndims(space.get()) != 1) bad(path, " is not one-dimensional");
    H5Sget_simple_extent_dims(space.get(), dims, nullptr);
    return dims[0];
  }

  Id dataset(const Id& group, const char* path) const {
    if (H5Lexists(group.get(), path, H5P_DEFAULT) <= 0) bad("missing dataset ", path);
    Id set(H5Dopen2(group.get(), path, H5P_DEFAULT), H5Dclose);
    if (!set.valid()) bad(path, " is not a dataset: ", io::h5::take_error_stack());
    return set;
  }

 private:
  void require_class(const Id& set, const char* path, H5T_class_t expected, const char* name) const {
    Id type(H5Dget_type(set.get()), H5Tclose);
    if (H5Tget_class(type.get()) != expected) bad(path, " is not ", name);
  }

  void expect_dims(const Id& set, const char* path, const std::vector<hsize_t>& expected) const {
    Id space(H5Dget_space(set.get()), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0 || rank > 8) bad(path, " has an unreadable shape");
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    if (dims != expected) bad(path, " has shape ", shape_text(dims), ", expected ", shape_text(expected));
  }

  /// The element count of `dims`, refused when the data could not fit in the file (a damaged
  /// shape must not turn into a huge allocation).
  std::size_t elements(const std::vector<hsize_t>& dims, std::size_t element_size, const char* path) const {
    std::size_t count = 1;
    for (const auto d : dims) {
      if (d != 0 && count > limit_ / d) bad(path, " is larger than the file");
      count *= d;
    }
    if (count * element_size > limit_) bad(path, " is larger than the file");
    return count;
  }

  static std::string shape_text(const std::vector<hsize_t>& dims) {
    std::string s = "(";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + (dims.size() == 1 ? ",)" : ")");
  }

  std::string source_;
  std::size_t limit_;
  Id file_;
};

}  // namespace

ResultArrays result_arrays(const ResultData& data) {
  const Grid grid(data.config.grid);
  const std::int64_t n = grid.size();
  const auto size = static_cast<std::size_t>(n);
  check_consistent(data, n);
  ResultArrays a;
  a.t = grid.t();
  a.omega = grid.omega_ascending();
  a.wavelength = grid.wavelengths();
  a.Et = time_domain(data.planes, n);
  a.Ew.resize(a.Et.size());
  for (std::size_t p = 0; p < data.planes.field_w.size(); ++p)
    for (std::int64_t k = 0; k < n; ++k)
      a.Ew[p * size + static_cast<std::size_t>(k)] =
          data.planes.field_w[p][static_cast<std::size_t>(grid.ascending_to_fft(k))];
  return a;
}

void stage_result(const std::filesystem::path& path, const ResultData& data) {
  validate_config(data.config);
  const Grid grid(data.config.grid);
  const std::int64_t n = grid.size();
  const auto size = static_cast<hsize_t>(n);
  const auto planes = static_cast<hsize_t>(data.planes.z.size());

  // Derived data first, outside the HDF5 lock (result_arrays checks the data's consistency).
  const ResultArrays arrays = result_arrays(data);
  const std::vector<Complex>& field_t = arrays.Et;
  const std::vector<Complex>& field_w_ascending = arrays.Ew;
  const std::vector<double>& omega = arrays.omega;
  const std::vector<double>& wavelength = arrays.wavelength;

  std::vector<std::uint8_t> image;
  {
    const auto guard = io::h5::lock();
    Writer w(2 * field_t.size() * sizeof(Complex) + (std::size_t{4} << 20));
    const Id meta = w.group("meta");
    w.string(meta, "schema", std::string(kResultSchema));
    w.string(meta, "recipe", data.recipe);
    const std::string config_text = serialize_config(data.config);
    w.string(meta, "config", config_text);
    w.string(meta, "config_hash", sha256_hex(config_text));
    w.string(meta, "label", data.label);

    const Id g = w.group("grid");
    w.reals(g, "t", arrays.t.data(), {size}, "s");
    w.reals(g, "omega", omega.data(), {size}, "rad/s");
    w.reals(g, "wavelength", wavelength.data(), {size}, "m");

    const Id p = w.group("planes");
    w.reals(p, "z", data.planes.z.data(), {planes}, "m");
    w.complexes(p, "Ew", field_w_ascending.data(), {planes, size}, "sqrt(W)");
    w.complexes(p, "Et", field_t.data(), {planes, size}, "sqrt(W)");

    const Id s = w.group("stats");
    const auto rows = static_cast<hsize_t>(data.statistics.z.size());
    constexpr std::array<const char*, 7> kUnits{"m", "m", "1", "J", "1", "W", "rad/s"};
    for (std::size_t i = 0; i < io::kStatisticsFields.size(); ++i) {
      const auto& [name, member] = io::kStatisticsFields[i];
      w.reals(s, std::string(name).c_str(), (data.statistics.*member).data(), {rows}, kUnits[i]);
    }

    const Id l = w.group("ledger");
    for (const auto& [name, member] : io::kLedgerCounters) w.scalar(l, std::string(name).c_str(), data.ledger.*member);
    for (const auto& [name, member] : io::kLedgerReals) w.scalar(l, std::string(name).c_str(), data.ledger.*member);

    const Id st = w.group("state");
    w.complexes(st, "field_w", data.field_w.data(), {size}, "sqrt(W)");
    for (const auto name : io::kStateLinks)
      w.link(("/ledger/" + std::string(name)).c_str(), st, std::string(name).c_str());
    image = w.image();
  }
  const auto seal = io::seal(image);
  stage_file(path, {seal, image}, kWhere);
}

void commit_result(const std::filesystem::path& path) { commit_staged_file(path, kWhere); }

void write_result(const std::filesystem::path& path, const ResultData& data) {
  stage_result(path, data);
  commit_result(path);
}

std::vector<std::filesystem::path> roll_forward_staged(const std::vector<std::filesystem::path>& files) {
  std::error_code ec;
  const auto staged_exists = [&](const std::filesystem::path& f) {
    return std::filesystem::exists(staged_path(f), ec);
  };
  if (std::none_of(files.begin(), files.end(), staged_exists)) return {};  // the usual case: nothing to read twice
  // Where a file stands (accepted steps, z) and the configuration it runs: all a decision needs
  // of a file, so that no file is read twice or held whole.
  struct Position {
    std::int64_t steps;
    double z;
    std::string config;
    bool same_place(const Position& o) const { return steps == o.steps && z == o.z; }
  };
  const auto position = [](const ResultData& d) {
    return Position{d.ledger.accepted_steps, d.ledger.z, config_hash(d.config)};
  };
  std::vector<Position> committed;
  std::vector<std::optional<Position>> staged(files.size());
  for (std::size_t k = 0; k < files.size(); ++k) {
    committed.push_back(position(read_result(files[k])));
    if (!staged_exists(files[k])) continue;
    try {
      staged[k] = position(read_result(staged_path(files[k])));
    } catch (const std::exception&) {
      continue;  // incomplete: written when the kill came
    }
  }
  std::vector<std::filesystem::path> rolled;
  for (std::size_t k = 0; k < files.size(); ++k) {
    if (!staged[k] || staged[k]->config != committed[k].config) continue;
    const Position& at = *staged[k];
    const bool ahead = std::pair(at.steps, at.z) > std::pair(committed[k].steps, committed[k].z);
    const bool committed_elsewhere =
        std::any_of(committed.begin(), committed.end(), [&](const Position& c) { return c.same_place(at); });
    if (!ahead || !committed_elsewhere) continue;
    commit_result(files[k]);
    rolled.push_back(files[k]);
  }
  return rolled;
}

ResultData read_result(const std::filesystem::path& path) {
  const std::string source = path.string();
  const auto bytes = read_file(path, kWhere);
  const auto image = io::unseal(bytes, source);

  const auto guard = io::h5::lock();
  const Reader r(image, source);
  ResultData data;
  const Id meta = r.group("meta");
  if (const auto schema = r.string(meta, "schema"); schema != kResultSchema)
    r.bad("schema '", schema, "', expected '", kResultSchema, "'");
  try {
    data.config = parse_config(r.string(meta, "config"), source + ":/meta/config");
  } catch (const std::invalid_argument& e) {
    r.bad("/meta/config is not a valid configuration: ", e.what());
  }
  if (const auto stored = r.string(meta, "config_hash"), computed = config_hash(data.config); stored != computed)
    r.bad("/meta/config_hash ", stored, " does not match /meta/config (", computed, ")");
  data.recipe = r.string(meta, "recipe");
  data.label = r.string(meta, "label");

  const Grid grid(data.config.grid);
  const auto size = static_cast<hsize_t>(grid.size());
  const Id g = r.group("grid");
  for (const char* name : {"t", "omega", "wavelength"}) r.reals(g, name, {size});

  const Id p = r.group("planes");
  const hsize_t planes = r.length(p, "z");
  data.planes.z = r.reals(p, "z", {planes});
  r.expect_complex_shape(p, "Et", {planes, size});
  const auto ascending = r.complexes(p, "Ew", {planes, size});
  data.planes.field_w.assign(planes, std::vector<Complex>(size));
  for (std::size_t i = 0; i < planes; ++i)
    for (std::int64_t k = 0; k < grid.size(); ++k)
      data.planes.field_w[i][static_cast<std::size_t>(grid.ascending_to_fft(k))] =
          ascending[i * size + static_cast<std::size_t>(k)];

  const Id s = r.group("stats");
  const hsize_t rows = r.length(s, "z");
  for (const auto& [name, member] : io::kStatisticsFields)
    data.statistics.*member = r.reals(s, std::string(name).c_str(), {rows});

  const Id l = r.group("ledger");
  for (const auto& [name, member] : io::kLedgerCounters)
    data.ledger.*member = r.scalar<std::int64_t>(l, std::string(name).c_str());
  for (const auto& [name, member] : io::kLedgerReals)
    data.ledger.*member = r.scalar<double>(l, std::string(name).c_str());

  const Id st = r.group("state");
  data.field_w = r.complexes(st, "field_w", {size});
  for (const auto name : io::kStateLinks) r.dataset(st, std::string(name).c_str());
  return data;
}

void check_resumable(const Config& recipe_config, const ResultData& file) {
  if (config_hash(recipe_config) == config_hash(file.config)) return;
  std::string list;
  for (const auto& difference : config_differences(file.config, recipe_config)) list += "\n  " + difference;
  invalid_argument(kWhere, "cannot resume: the configuration differs from the file's (file vs recipe):", list);
}

}  // namespace lockstep::prop
