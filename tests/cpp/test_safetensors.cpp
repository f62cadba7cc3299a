// The safetensors reader and writer: round trips, a file written by the reference
// implementation (tests/data/make_reference_safetensors.py), every truncation, each kind of
// inconsistent header, and random corruption, which must be refused with
// std::invalid_argument and never crash or read out of bounds.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "lockstep/core/safetensors.hpp"

namespace lockstep::safetensors {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

File sample(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<float> a(6);
  std::vector<double> b(4);
  for (auto& v : a) v = static_cast<float>(u(rng));
  for (auto& v : b) v = u(rng);
  File f;
  f.tensors["layers.0.theta"] = from_values<float>(a, {2, 3});
  f.tensors["layers.1.theta"] = from_values<double>(b, {4});
  f.tensors["empty"] = from_values<float>({}, {0, 5});
  f.tensors["scalar"] = from_values<float>(std::vector<float>{1.5f}, {});
  f.metadata["widths"] = "[2, 3, 1]";
  return f;
}

/// A file whose header is `header` (JSON text) followed by `data_size` bytes of data.
Bytes with_header(const std::string& header, std::size_t data_size) {
  const std::uint64_t n = header.size();
  Bytes out(8 + n + data_size, 0x5a);
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, header.data(), n);
  return out;
}

/// parse() must refuse `bytes` with std::invalid_argument whose message contains `what`.
void expect_refused(const Bytes& bytes, const std::string& what) {
  try {
    parse(bytes, "test.safetensors");
    ADD_FAILURE() << "accepted a file that should be refused (" << what << ")";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test.safetensors"), std::string::npos) << e.what();
  }
}

TEST(Safetensors, RoundTripInMemoryAndOnDisk) {
  const File f = sample(1);
  const Bytes bytes = serialize(f);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u) << "the data region starts 8-byte aligned";
  EXPECT_EQ(parse(bytes, "memory"), f);

  const fs::path dir =
      fs::temp_directory_path() / ("lockstep_st_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::create_directories(dir);
  const fs::path path = dir / "model.safetensors";
  save(path, f);
  EXPECT_EQ(load(path), f);
  save(path, sample(2));  // replaces the file
  EXPECT_EQ(load(path), sample(2));
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename(), "model.safetensors") << "a temporary file was left behind";
  fs::remove_all(dir);
}

TEST(Safetensors, ValuesConvertBetweenFloatTypes) {
  const std::vector<double> v = {0.5, -1.25, 3.0};
  const Tensor t = from_values<double>(v, {3});
  EXPECT_EQ(to_values<double>(t, "t"), v);
  EXPECT_EQ(to_values<float>(t, "t"), (std::vector<float>{0.5f, -1.25f, 3.0f}));
  Tensor ints{"I64", {1}, Bytes(8, 0)};
  EXPECT_THROW(to_values<float>(ints, "steps"), std::invalid_argument);
  EXPECT_THROW(from_values<float>(std::vector<float>(5), {2, 3}), std::invalid_argument);
}

TEST(Safetensors, ReadsTheReferenceImplementationsFile) {
  const File f = load(fs::path(LOCKSTEP_TEST_DATA) / "reference.safetensors");
  EXPECT_EQ(f.metadata.at("format"), "pt");
  EXPECT_EQ(f.metadata.at("widths"), "[2, 3, 1]");
  ASSERT_EQ(f.tensors.size(), 5u);
  auto ramp = [](std::size_t n, double scale, double offset) {
    std::vector<double> v(n);
    for (std::size_t k = 0; k < n; ++k) v[k] = double(k + 1) * scale - offset;
    return v;
  };
  const Tensor& t0 = f.tensors.at("layers.0.theta");
  EXPECT_EQ(t0.dtype, "F32");
  EXPECT_EQ(t0.shape, (Shape{3, 2, 4, 2}));
  EXPECT_EQ(to_values<double>(t0, "layers.0.theta"), ramp(48, 0.25, 3.0));
  const Tensor& bw = f.tensors.at("layers.0.base_weight");
  EXPECT_EQ(bw.shape, (Shape{3, 2}));
  EXPECT_EQ(to_values<double>(bw, "layers.0.base_weight"), ramp(6, 0.5, 1.0));
  const Tensor& t1 = f.tensors.at("layers.1.theta");
  EXPECT_EQ(t1.dtype, "F64");
  EXPECT_EQ(to_values<double>(t1, "layers.1.theta"), ramp(24, 0.125, 2.0));
  const Tensor& steps = f.tensors.at("steps");
  EXPECT_EQ(steps.dtype, "I64");
  std::int64_t s[2];
  ASSERT_EQ(steps.bytes.size(), sizeof(s));
  std::memcpy(s, steps.bytes.data(), sizeof(s));
  EXPECT_EQ(s[0], 7);
  EXPECT_EQ(s[1], -3);
  EXPECT_EQ(f.tensors.at("empty").shape, (Shape{0, 4}));
  // Our writer's bytes for the same contents parse back to the same file.
  EXPECT_EQ(parse(serialize(f), "rewritten"), f);
}

TEST(Safetensors, EveryTruncationIsRefused) {
  const Bytes bytes = serialize(sample(3));
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    SCOPED_TRACE(::testing::Message() << "first " << len << " of " << bytes.size() << " bytes");
    EXPECT_THROW(parse(std::span(bytes.data(), len), "test.safetensors"), std::invalid_argument);
  }
}

TEST(Safetensors, InconsistentHeadersAreRefused) {
  const std::string f32_2x2 = R"("t":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]})";
  expect_refused(Bytes{1, 2, 3}, "truncated");
  {
    Bytes b = with_header("{}", 0);
    const std::uint64_t huge = kMaxHeaderBytes + 1;
    std::memcpy(b.data(), &huge, 8);
    expect_refused(b, "exceeds the limit");
  }
  {
    Bytes b = with_header("{}", 0);
    const std::uint64_t past = 1000;
    std::memcpy(b.data(), &past, 8);
    expect_refused(b, "truncated");
  }
  expect_refused(with_header("{not json", 0), "not valid JSON");
  expect_refused(with_header("[1, 2]", 0), "not a JSON object");
  expect_refused(with_header(std::string(40, '[') + std::string(40, ']'), 0), "nests deeper");
  expect_refused(with_header(R"({"t":{"shape":[2],"data_offsets":[0,8]}})", 8), "'t' has no string 'dtype'");
  expect_refused(with_header(R"({"t":{"dtype":"F32","data_offsets":[0,8]}})", 8), "'t' has no array 'shape'");
  expect_refused(with_header(R"({"t":{"dtype":"F32","shape":[2]}})", 8), "'t' has no 'data_offsets'");
  expect_refused(with_header(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", 8),
                 "unknown field 'x'");
  expect_refused(with_header(R"({"t":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", 8), "unknown dtype 'Q7'");
  expect_refused(with_header(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8),
                 "not a non-negative integer");
  expect_refused(with_header(R"({"t":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", 8),
                 "not a non-negative integer");
  expect_refused(with_header(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
                 "(12 bytes) but data_offsets span 8");
  expect_refused(with_header(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8), "run backwards");
  expect_refused(with_header(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", 8), "past the data region");
  expect_refused(with_header(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,8]}})", 8),
                 "too large to address");
  expect_refused(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                             12),
                 "overlaps");
  expect_refused(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12), "hole of 4 bytes");
  expect_refused(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 12),
                 "4 bytes after the last tensor");
  expect_refused(with_header(R"({"__metadata__":{"k":3}})", 0), "'k' is not a string");
  expect_refused(with_header(R"({"__metadata__":[1]})", 0), "__metadata__ is not a JSON object");
  // A well-formed header of the same kinds is accepted.
  EXPECT_EQ(parse(with_header("{" + f32_2x2 + "}", 16), "ok").tensors.at("t").shape, (Shape{2, 2}));
}

TEST(Safetensors, WriterRefusesInconsistentTensors) {
  File f;
  f.tensors["t"] = Tensor{"F32", {2, 2}, Bytes(12)};
  EXPECT_THROW(serialize(f), std::invalid_argument);
  f.tensors["t"] = Tensor{"X9", {1}, Bytes(4)};
  EXPECT_THROW(serialize(f), std::invalid_argument);
}

// Random corruption of a valid file: byte flips anywhere, a rewritten header length, cuts and
// insertions. Each result is either refused with std::invalid_argument or parses into tensors
// whose byte counts agree with their shapes; anything else (another exception, a crash, a read
// past the buffer under the sanitizers) fails.
TEST(Safetensors, RandomCorruptionIsRefusedOrConsistent) {
  const Bytes good = serialize(sample(4));
  std::mt19937_64 rng(::testing::UnitTest::GetInstance()->random_seed() * 0x9e3779b97f4a7c15ULL + 5);
  SCOPED_TRACE(::testing::Message() << "gtest random seed " << ::testing::UnitTest::GetInstance()->random_seed());
  int refused = 0, accepted = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    Bytes b = good;
    const int edits = 1 + int(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      switch (rng() % 5) {
        case 0: b[rng() % b.size()] ^= std::uint8_t(1u << (rng() % 8)); break;
        case 1: b[8 + rng() % (b.size() - 8)] = std::uint8_t(rng()); break;
        case 2: {
          const std::uint64_t n = rng() % (b.size() + 64);
          std::memcpy(b.data(), &n, 8);
          break;
        }
        case 3: b.resize(rng() % b.size()); break;
        default: b.insert(b.begin() + std::ptrdiff_t(rng() % b.size()), std::uint8_t(rng())); break;
      }
      if (b.size() < 9) break;
    }
    try {
      const File f = parse(b, "fuzz");
      for (const auto& [name, t] : f.tensors) {
        std::int64_t n = 1;
        for (auto d : t.shape) n *= d;
        ASSERT_EQ(t.bytes.size(), std::size_t(n) * dtype_size(t.dtype)) << name;
      }
      ++accepted;
    } catch (const std::invalid_argument&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  RecordProperty("refused", refused);
  RecordProperty("accepted", accepted);
}

}  // namespace
}  // namespace lockstep::safetensors
