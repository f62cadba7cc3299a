// .npy files: round trips through disk in both dtypes and every rank, and each malformed file
// refused with std::invalid_argument naming it (NumPy-written files are read in the Python
// tests of the command-line tool).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "lockstep/core/npy.hpp"

namespace lockstep::npy {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

/// A version 1.0 file with this header dict and `data_bytes` bytes of data.
Bytes file_with(const std::string& dict, std::size_t data_bytes) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  Bytes b(10 + header.size() + data_bytes, 0);
  std::memcpy(b.data(), "\x93NUMPY", 6);
  b[6] = 1;
  b[8] = std::uint8_t(header.size());
  std::memcpy(b.data() + 10, header.data(), header.size());
  return b;
}

void expect_refused(const Bytes& b, const std::string& what) {
  try {
    parse(b, "x.npy");
    ADD_FAILURE() << "accepted (" << what << ")";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x.npy"), std::string::npos) << e.what();
  }
}

TEST(Npy, RoundTripsBothDtypesAndRanks) {
  const fs::path dir =
      fs::temp_directory_path() / ("lockstep_npy_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::create_directories(dir);
  for (DType dt : {DType::f32, DType::f64})
    for (const Shape& shape : {Shape{}, Shape{5}, Shape{2, 3}, Shape{2, 0, 4}, Shape{1, 2, 3, 2}}) {
      std::vector<double> v(static_cast<std::size_t>(numel(shape)));
      for (std::size_t k = 0; k < v.size(); ++k) v[k] = 0.25 * double(k) - 1.5;  // exact in float32
      const fs::path p = dir / "a.npy";
      save(p, v, shape, dt);
      const Array a = load(p);
      EXPECT_EQ(a.shape, shape);
      EXPECT_EQ(a.stored, dt);
      EXPECT_EQ(a.values, v);
      const auto size = fs::file_size(p);
      EXPECT_EQ((size - v.size() * (dt == DType::f32 ? 4 : 8)) % 64, 0u) << "data 64-byte aligned";
    }
  fs::remove_all(dir);
}

TEST(Npy, MalformedFilesAreRefused) {
  expect_refused(Bytes{1, 2, 3}, "not a .npy file");
  Bytes bad_version = file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
  bad_version[6] = 7;
  expect_refused(bad_version, "format version 7");
  Bytes cut = file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
  cut.resize(20);
  expect_refused(cut, "truncated");
  expect_refused(file_with("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", 16), "dtype '<i8'");
  expect_refused(file_with("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8), "dtype '>f4'");
  expect_refused(file_with("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16), "Fortran-order");
  expect_refused(file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8), "needs 12 bytes");
  expect_refused(file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }", 8), "not a tuple of sizes");
  expect_refused(file_with("{'descr': '<f4', 'fortran_order': False, }", 8), "no 'shape'");
  expect_refused(file_with("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999,), }", 8),
                 "needs 799999999999999992 bytes");
  expect_refused(file_with("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }", 8),
                 "too large");
  // The same header, consistent, is accepted.
  EXPECT_EQ(parse(file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8), "ok").shape, Shape{2});
}

}  // namespace
}  // namespace lockstep::npy
