// Result files: round trip, the on-disk layout (ascending ω, Et = FFTW_FORWARD(Ã)/n), crash
// safety, refusal of inconsistent data and of damaged or inconsistent files, resume checks,
// and the time of a checkpoint of the Dudley size.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <fstream>
#include <functional>
#include <numbers>
#include <random>

#include "io_test_support.hpp"
#include "lockstep/core/files.hpp"
#include "lockstep/prop/config_hash.hpp"
#include "lockstep/prop/result_file.hpp"
#include "src/prop/io/record_fields.hpp"
#include "src/prop/io/result_seal.hpp"

namespace lockstep::prop {
namespace {

using Complex = std::complex<double>;
namespace fs = std::filesystem;

/// A valid configuration with `points` (≥ 32) samples: a 0.39 ps pulse in a 4 ps window.
Config small_config(std::int64_t points) {
  Config c;
  c.grid.points = points;
  c.grid.time_window = 4e-12;
  c.pulse.fwhm = 0.39e-12;
  return c;
}

/// Result data with fresh random values everywhere.
ResultData random_data(std::int64_t points, std::size_t planes, std::size_t rows, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  const auto n = static_cast<std::size_t>(points);
  ResultData d;
  d.recipe = "[fibre]\ngamma = 0.11  # ünïcode\n";
  d.label = "peak_power=5kW,member=" + std::to_string(rng() % 100);
  d.config = small_config(points);
  d.config.fibre.gamma = 0.05 + std::abs(normal(rng));
  for (const auto& [name, member] : io::kStatisticsFields) {
    (d.statistics.*member).resize(rows);
    for (auto& v : d.statistics.*member) v = normal(rng);
  }
  for (const auto& [name, member] : io::kLedgerCounters) d.ledger.*member = static_cast<std::int64_t>(rng() >> 4);
  for (const auto& [name, member] : io::kLedgerReals) d.ledger.*member = normal(rng);
  for (std::size_t p = 0; p < planes; ++p) {
    d.planes.z.push_back(0.15 * static_cast<double>(p) / static_cast<double>(std::max<std::size_t>(planes - 1, 1)));
    d.planes.field_w.emplace_back(n);
    for (auto& v : d.planes.field_w.back()) v = {normal(rng), normal(rng)};
  }
  d.field_w.resize(n);
  for (auto& v : d.field_w) v = {normal(rng), normal(rng)};
  return d;
}

void expect_equal(const ResultData& a, const ResultData& b) {
  EXPECT_EQ(a.recipe, b.recipe);
  EXPECT_EQ(a.label, b.label);
  EXPECT_TRUE(config_differences(a.config, b.config).empty());
  for (const auto& [name, member] : io::kStatisticsFields)
    EXPECT_EQ(a.statistics.*member, b.statistics.*member) << name;
  for (const auto& [name, member] : io::kLedgerCounters) EXPECT_EQ(a.ledger.*member, b.ledger.*member) << name;
  for (const auto& [name, member] : io::kLedgerReals) EXPECT_EQ(a.ledger.*member, b.ledger.*member) << name;
  EXPECT_EQ(a.planes.z, b.planes.z);
  EXPECT_EQ(a.planes.field_w, b.planes.field_w);
  EXPECT_EQ(a.field_w, b.field_w);
}

/// HDF5 access to a result file for inspection (HDF5 finds the data past the 512-byte seal).
class RawFile {
 public:
  explicit RawFile(const fs::path& path) : id_(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {}
  ~RawFile() { H5Fclose(id_); }
  hid_t id() const { return id_; }
  std::vector<double> reals(const char* path) const {
    const hid_t set = H5Dopen2(id_, path, H5P_DEFAULT);
    const hid_t space = H5Dget_space(set);
    std::vector<double> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
    H5Sclose(space);
    H5Dclose(set);
    return out;
  }
  std::vector<Complex> complexes(const char* path) const {
    const hid_t type = H5Tcreate(H5T_COMPOUND, sizeof(Complex));
    H5Tinsert(type, "r", 0, H5T_NATIVE_DOUBLE);
    H5Tinsert(type, "i", sizeof(double), H5T_NATIVE_DOUBLE);
    const hid_t set = H5Dopen2(id_, path, H5P_DEFAULT);
    const hid_t space = H5Dget_space(set);
    std::vector<Complex> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
    H5Sclose(space);
    H5Dclose(set);
    H5Tclose(type);
    return out;
  }

 private:
  hid_t id_;
};

/// The bytes of a sealed file holding `image`.
std::vector<std::uint8_t> sealed(const std::vector<std::uint8_t>& image) {
  const auto seal = io::seal(image);
  std::vector<std::uint8_t> file(seal.begin(), seal.end());
  file.insert(file.end(), image.begin(), image.end());
  return file;
}

/// Opens the HDF5 part of a sealed file in memory, lets `edit` change it, and seals it again:
/// inconsistent files that pass the checksum, for the reader's structural checks.
void edit_file(const fs::path& path, const std::function<void(hid_t)>& edit) {
  const auto bytes = read_file(path, "test");
  const auto image = io::unseal(bytes, "test");
  std::vector<std::uint8_t> copy(image.begin(), image.end());
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_core(fapl, 1 << 20, 0);
  H5Pset_file_image(fapl, copy.data(), copy.size());
  const hid_t file = H5Fopen("edit", H5F_ACC_RDWR, fapl);
  ASSERT_GE(file, 0);
  edit(file);
  H5Fflush(file, H5F_SCOPE_GLOBAL);
  const auto size = H5Fget_file_image(file, nullptr, 0);
  std::vector<std::uint8_t> edited(static_cast<std::size_t>(size));
  H5Fget_file_image(file, edited.data(), edited.size());
  H5Fclose(file);
  H5Pclose(fapl);
  write_file_atomically(path, sealed(edited), "test");
}

void replace_string(hid_t file, const char* path, const char* text) {
  H5Ldelete(file, path, H5P_DEFAULT);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t set = H5Dcreate2(file, path, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text);
  H5Dclose(set);
  H5Sclose(space);
  H5Tclose(type);
}

void replace_reals(hid_t file, const char* path, std::vector<hsize_t> dims) {
  H5Ldelete(file, path, H5P_DEFAULT);
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t set = H5Dcreate2(file, path, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<double> zeros(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)), 0.0);
  H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data());
  H5Dclose(set);
  H5Sclose(space);
}

std::string error_of(const fs::path& path) {
  try {
    read_result(path);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

TEST(ResultFile, RecordTablesCoverEveryField) {
  EXPECT_EQ(testing::member_count<Statistics>(), io::kStatisticsFields.size());
  EXPECT_EQ(testing::member_count<Ledger>(), io::kLedgerCounters.size() + io::kLedgerReals.size());
}

TEST(ResultFile, RoundTrip) {
  testing::TempDir dir;
  std::mt19937_64 rng(testing::fresh_seed());
  const auto data = random_data(64, 5, 17, rng);
  write_result(dir.path() / "member.h5", data);
  expect_equal(read_result(dir.path() / "member.h5"), data);
  // No planes and no statistics yet (a checkpoint at z = 0 before the first save).
  const auto empty = random_data(32, 0, 0, rng);
  write_result(dir.path() / "empty.h5", empty);
  expect_equal(read_result(dir.path() / "empty.h5"), empty);
}

TEST(ResultFile, LayoutAscendingOmegaAndTimeDomain) {
  testing::TempDir dir;
  std::mt19937_64 rng(testing::fresh_seed());
  const std::int64_t n = 64;
  const auto data = random_data(n, 3, 4, rng);
  write_result(dir.path() / "m.h5", data);
  const RawFile raw(dir.path() / "m.h5");

  // ω ascending, absolute: ω0 + (k − n/2)·2π/window.
  const auto omega = raw.reals("/grid/omega");
  const double omega0 = 2 * std::numbers::pi * 299792458.0 / data.config.grid.center_wavelength;
  const double domega = 2 * std::numbers::pi / data.config.grid.time_window;
  ASSERT_EQ(omega.size(), static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k)
    EXPECT_NEAR(omega[k], omega0 + static_cast<double>(k - n / 2) * domega, 1e-15 * omega0) << k;
  const auto wavelength = raw.reals("/grid/wavelength");
  EXPECT_NEAR(wavelength[n / 2], data.config.grid.center_wavelength, 1e-15);
  EXPECT_GT(wavelength.front(), wavelength.back());  // ascending ω: descending λ

  // Ew: row p, column k holds FFT-order index (k + n/2) mod n (an fftshift).
  const auto ew = raw.complexes("/planes/Ew");
  ASSERT_EQ(ew.size(), 3u * n);
  for (std::size_t p = 0; p < 3; ++p)
    for (std::int64_t k = 0; k < n; ++k)
      EXPECT_EQ(ew[p * n + k], data.planes.field_w[p][static_cast<std::size_t>((k + n / 2) % n)]);

  // Et = FFTW_FORWARD(Ã)/n, by the direct sum; the FFT's round-off is ~ log2(n)·eps·|Ã|.
  const auto et = raw.complexes("/planes/Et");
  for (std::size_t p = 0; p < 3; ++p)
    for (std::int64_t j = 0; j < n; ++j) {
      Complex sum = 0;
      for (std::int64_t k = 0; k < n; ++k)
        sum += data.planes.field_w[p][k] * std::polar(1.0, -2 * std::numbers::pi * static_cast<double>(j * k) / n);
      EXPECT_NEAR(std::abs(et[p * n + j] - sum / static_cast<double>(n)), 0.0, 1e-14) << p << "," << j;
    }

  // The resume state's ledger entries are the ledger's datasets.
  EXPECT_EQ(raw.reals("/state/z")[0], data.ledger.z);
  EXPECT_EQ(raw.reals("/state/next_dz")[0], data.ledger.next_dz);
}

TEST(ResultFile, LeftoverTemporaryFileDoesNotMatter) {
  testing::TempDir dir;
  std::mt19937_64 rng(testing::fresh_seed());
  const auto data = random_data(32, 2, 3, rng);
  write_result(dir.path() / "m.h5", data);
  { std::ofstream(dir.path() / "m.h5.tmp") << "half a file from a killed writer"; }
  expect_equal(read_result(dir.path() / "m.h5"), data);
  write_result(dir.path() / "m.h5", data);  // the next checkpoint replaces the leftover
  EXPECT_FALSE(fs::exists(dir.path() / "m.h5.tmp"));
  expect_equal(read_result(dir.path() / "m.h5"), data);
}

TEST(ResultFile, FailedWriteLeavesThePreviousFile) {
  testing::TempDir dir;
  std::mt19937_64 rng(testing::fresh_seed());
  const auto old_data = random_data(64, 2, 3, rng);
  write_result(dir.path() / "m.h5", old_data);
  // A file-size limit makes the operating system fail the write of the larger file midway
  // (EFBIG); SIGXFSZ is ignored so the write returns the error.
  const auto big = random_data(1024, 40, 3, rng);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  const auto old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit limit = saved;
  limit.rlim_cur = 256 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  try {
    write_result(dir.path() / "m.h5", big);
    ADD_FAILURE() << "the write did not fail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write"), std::string::npos) << e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(fs::exists(dir.path() / "m.h5.tmp"));
  expect_equal(read_result(dir.path() / "m.h5"), old_data);
}

TEST(ResultFile, InconsistentDataIsRefusedBeforeWriting) {
  testing::TempDir dir;
  std::mt19937_64 rng(testing::fresh_seed());
  const auto good = random_data(32, 2, 3, rng);
  const auto refuse = [&](const ResultData& d, const char* message) {
    try {
      write_result(dir.path() / "m.h5", d);
      ADD_FAILURE() << "accepted; expected " << message;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir.path() / "m.h5"));
  };
  auto d = good;
  d.statistics.energy.pop_back();
  refuse(d, "statistics.energy has 2 rows, statistics.z has 3");
  d = good;
  d.planes.field_w[1].resize(31);
  refuse(d, "planes.field_w[1] has 31 points, the grid 32");
  d = good;
  d.planes.z.push_back(0.2);
  refuse(d, "planes.z has 3 planes, planes.field_w 2");
  d = good;
  d.field_w.clear();
  refuse(d, "field_w (the resume state) has 0 points");
  d = good;
  d.config.fibre.length = -1;
  refuse(d, "fibre.length: must be > 0");
}

TEST(ResultFile, InconsistentFilesAreRefusedNamingTheProblem) {
  testing::TempDir dir;
  std::mt19937_64 rng(testing::fresh_seed());
  const auto data = random_data(32, 2, 3, rng);
  const auto path = dir.path() / "m.h5";
  const struct {
    std::function<void(hid_t)> edit;
    const char* message;
  } cases[] = {
      {[](hid_t f) { replace_string(f, "/meta/schema", "lockstep.prop/2"); },
       "schema 'lockstep.prop/2', expected 'lockstep.prop/1'"},
      {[](hid_t f) { H5Ldelete(f, "/planes/Et", H5P_DEFAULT); }, "missing dataset Et"},
      {[](hid_t f) { H5Ldelete(f, "/ledger", H5P_DEFAULT); }, "missing group /ledger"},
      {[](hid_t f) { replace_reals(f, "/stats/dz", {2}); }, "dz has shape (2,), expected (3,)"},
      {[](hid_t f) { replace_reals(f, "/grid/t", {31}); }, "t has shape (31,), expected (32,)"},
      {[](hid_t f) {
         replace_reals(f, "/planes/Ew", {2, 32});
       },
       "Ew is not a complex compound"},
      {[](hid_t f) { replace_reals(f, "/ledger/ffts", {}); }, "ffts is not int64"},
      {[](hid_t f) { replace_reals(f, "/meta/label", {}); }, "label is not a variable-length string"},
      {[](hid_t f) { replace_string(f, "/meta/config_hash", "0123"); },
       "/meta/config_hash 0123 does not match /meta/config"},
      {[](hid_t f) { replace_string(f, "/meta/config", "[fibre]\nlength = -1\n"); },
       "/meta/config is not a valid configuration: [prop.recipe] fibre.length: must be > 0"},
  };
  for (const auto& c : cases) {
    write_result(path, data);
    edit_file(path, c.edit);
    const auto message = error_of(path);
    EXPECT_NE(message.find(c.message), std::string::npos) << message << "\nexpected: " << c.message;
    EXPECT_TRUE(message.starts_with("[prop.result] " + path.string() + ": ")) << message;
  }
}

TEST(ResultFile, TruncatedOrAlteredFilesAreRefused) {
  testing::TempDir dir;
  std::mt19937_64 rng(testing::fresh_seed());
  const auto path = dir.path() / "m.h5";
  write_result(path, random_data(64, 3, 5, rng));
  const auto good = read_file(path, "test");
  const auto damaged = dir.path() / "damaged.h5";
  const auto refused = [&](const std::vector<std::uint8_t>& bytes, const std::string& what) {
    write_file_atomically(damaged, bytes, "test");
    try {
      read_result(damaged);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const std::invalid_argument&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": not std::invalid_argument: " << e.what();
    }
  };
  std::vector<std::size_t> lengths{0, 1, 100, io::kSealSize - 1, io::kSealSize, io::kSealSize + 1, good.size() - 1};
  for (int i = 0; i < 150; ++i) lengths.push_back(std::uniform_int_distribution<std::size_t>(0, good.size() - 1)(rng));
  for (const auto length : lengths)
    refused(std::vector<std::uint8_t>(good.begin(), good.begin() + length), "truncated to " + std::to_string(length));
  for (int i = 0; i < 300; ++i) {
    auto bytes = good;
    while (bytes == good) {  // two flips of one bit cancel: draw again until the file differs
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        // Half the flips in the seal, half anywhere.
        const std::size_t at = (rng() % 2) ? rng() % io::kSealSize : rng() % bytes.size();
        bytes[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      }
    }
    refused(bytes, "bytes flipped");
  }
  auto longer = good;
  longer.push_back(0);
  refused(longer, "one byte appended");
}

TEST(ResultFile, ResumeNeedsTheSameConfiguration) {
  std::mt19937_64 rng(testing::fresh_seed());
  const auto data = random_data(32, 1, 1, rng);
  EXPECT_NO_THROW(check_resumable(data.config, data));
  Config other = data.config;
  other.fibre.gamma = 0.12;
  other.output.n_save = 50;
  try {
    check_resumable(other, data);
    FAIL() << "resumed under another configuration";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cannot resume"), std::string::npos) << message;
    EXPECT_NE(message.find("fibre.gamma: "), std::string::npos) << message;
    EXPECT_NE(message.find(" vs 0.12 /W/m"), std::string::npos) << message;
    EXPECT_NE(message.find("output.n_save: 200 vs 50"), std::string::npos) << message;
  }
}

TEST(ResultFile, CheckpointOfTheDudleySize) {
  // 200 planes × 8192 points, the Dudley run's output: the time of one checkpoint.
  testing::TempDir dir;
  std::mt19937_64 rng(testing::fresh_seed());
  ResultData data = random_data(64, 0, 0, rng);
  data.config = Config{};
  std::normal_distribution<double> normal;
  data.planes.z.resize(200);
  data.planes.field_w.assign(200, std::vector<Complex>(8192));
  for (std::size_t p = 0; p < 200; ++p) {
    data.planes.z[p] = 0.15 * static_cast<double>(p) / 199;
    for (auto& v : data.planes.field_w[p]) v = {normal(rng), normal(rng)};
  }
  data.field_w = data.planes.field_w.back();
  for (const auto& [name, member] : io::kStatisticsFields) (data.statistics.*member).assign(5000, 1.0);
  const auto start = std::chrono::steady_clock::now();
  write_result(dir.path() / "dudley.h5", data);
  const auto written = std::chrono::steady_clock::now();
  const auto back = read_result(dir.path() / "dudley.h5");
  const auto read = std::chrono::steady_clock::now();
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf("checkpoint 200 planes x 8192 points: %.0f MB, write %.0f ms, read %.0f ms\n",
              static_cast<double>(fs::file_size(dir.path() / "dudley.h5")) / 1e6, ms(written - start),
              ms(read - written));
  EXPECT_EQ(back.planes.field_w, data.planes.field_w);
}

}  // namespace
}  // namespace lockstep::prop
