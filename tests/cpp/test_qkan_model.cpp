// QKAN models and their files: a model survives to_safetensors -> bytes -> from_safetensors
// exactly (float64) and its forward is unchanged; inconsistent files are refused naming the
// tensor; workspaces, row chunks on threads and float32 evaluation keep the results. (The forward against qkan.QKAN
// itself: tests/python/test_cli_qkan.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>

#include "lockstep/core/parallel.hpp"
#include "lockstep/qkan/model.hpp"

namespace lockstep::qkan {
namespace {

Model random_model(std::vector<std::int64_t> widths, int reps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Model m;
  m.reps = reps;
  m.widths = widths;
  const std::int64_t R = theta_rows(m.options.ansatz, reps), K = theta_cols(m.options.ansatz);
  auto fill = [&](std::int64_t n) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = u(rng);
    return v;
  };
  for (std::size_t k = 0; k + 1 < widths.size(); ++k) {
    LayerParams L;
    L.in = widths[k], L.out = widths[k + 1];
    const std::int64_t E = L.in * L.out;
    L.theta = fill(E * R * K);
    L.preacts_weight = fill(E * reps);
    L.preacts_bias = fill(E * reps);
    L.base_weight = fill(E);
    L.postact_weights = fill(E);
    L.postact_bias = fill(E);
    L.mask = fill(E);
    m.layers.push_back(std::move(L));
  }
  return m;
}

void expect_refused(const safetensors::File& f, const std::string& what) {
  try {
    from_safetensors(f, ModelOptions{});
    ADD_FAILURE() << "accepted (" << what << ")";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(QkanModel, FileRoundTripKeepsParametersAndForward) {
  const Model m = random_model({3, 4, 2}, 3, 11);
  const safetensors::File f = to_safetensors(m, DType::f64);
  EXPECT_EQ(f.tensors.size(), 14u);
  EXPECT_EQ(f.tensors.at("layers.0.theta").shape, (Shape{4, 3, 4, 2}));
  EXPECT_EQ(f.tensors.at("layers.1.preacts_weight").shape, (Shape{2, 4, 3}));
  const Model back = from_safetensors(safetensors::parse(safetensors::serialize(f), "memory"), ModelOptions{});
  EXPECT_EQ(back.widths, m.widths);
  EXPECT_EQ(back.reps, 3);
  ASSERT_EQ(back.layers.size(), 2u);
  EXPECT_EQ(back.layers[1].theta, m.layers[1].theta);
  EXPECT_EQ(back.layers[0].mask, m.layers[0].mask);
  std::vector<double> x(5 * 3);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = std::sin(double(k));
  const std::vector<double> y = forward(m, x, 5);
  EXPECT_EQ(y.size(), 10u);
  EXPECT_EQ(forward(back, x, 5), y);
  // float32 files round to float32 and stay close.
  const Model m32 = from_safetensors(to_safetensors(m, DType::f32), ModelOptions{});
  const std::vector<double> y32 = forward(m32, x, 5);
  for (std::size_t k = 0; k < y.size(); ++k) EXPECT_NEAR(y32[k], y[k], 1e-5 * (1 + std::abs(y[k])));
}

TEST(QkanModel, OptionsTravelInTheFilesMetadata) {
  Model m = random_model({2, 3}, 3, 15);
  m.options.ansatz = Ansatz::mix;
  m.options.preacts_trainable = true;
  m.options.fast_measure = false;
  m.options.base_activation = Activation::gelu;
  m.options.postact_bias_trainable = true;
  const safetensors::File f = to_safetensors(m, DType::f32);
  const ModelOptions o = options_from_metadata(f, ModelOptions{});
  EXPECT_EQ(o.ansatz, Ansatz::mix);
  EXPECT_TRUE(o.preacts_trainable);
  EXPECT_FALSE(o.fast_measure);
  EXPECT_EQ(o.base_activation, Activation::gelu);
  EXPECT_TRUE(o.postact_bias_trainable);
  EXPECT_FALSE(o.ba_trainable);
  safetensors::File bare = f;
  bare.metadata.clear();  // as qkan writes them: the defaults stand
  EXPECT_EQ(options_from_metadata(bare, ModelOptions{}).ansatz, Ansatz::pz);
  safetensors::File bad = f;
  bad.metadata["fast_measure"] = "maybe";
  EXPECT_THROW(options_from_metadata(bad, ModelOptions{}), std::invalid_argument);
  bad.metadata["fast_measure"] = "true";
  bad.metadata["ansatz"] = "qz";
  EXPECT_THROW(options_from_metadata(bad, ModelOptions{}), std::invalid_argument);
}

TEST(QkanModel, InconsistentFilesAreRefused) {
  const safetensors::File good = to_safetensors(random_model({3, 4, 2}, 3, 12), DType::f32);
  expect_refused(safetensors::File{}, "no 'layers.0.theta'");
  {
    auto f = good;
    f.tensors.erase("layers.1.mask");
    expect_refused(f, "no tensor 'layers.1.mask'");
  }
  {
    auto f = good;
    f.tensors["layers.0.base_weight"] = safetensors::from_values<float>(std::vector<float>(6), {2, 3});
    expect_refused(f, "'layers.0.base_weight' has shape (2,3), expected (4,3)");
  }
  {
    auto f = to_safetensors(random_model({3, 4, 2}, 2, 13), DType::f32);
    f.tensors["layers.0.preacts_weight"] = good.tensors.at("layers.0.preacts_weight");
    f.tensors["layers.0.preacts_bias"] = good.tensors.at("layers.0.preacts_bias");
    f.tensors["layers.0.theta"] = good.tensors.at("layers.0.theta");
    expect_refused(f, "has 2 reps but layer 0 has 3");
  }
  {
    auto f = good;
    for (const char* t :
         {"theta", "preacts_weight", "preacts_bias", "base_weight", "postact_weights", "postact_bias", "mask"})
      f.tensors[std::string("layers.1.") + t] =
          to_safetensors(random_model({5, 2}, 3, 14), DType::f32).tensors.at(std::string("layers.0.") + t);
    expect_refused(f, "layer 1 takes 5 inputs but layer 0 gives 4");
  }
  {
    auto f = good;
    f.tensors["layers.0.theta"] = safetensors::from_values<float>(std::vector<float>(3 * 4 * 2), {3, 4, 2});
    expect_refused(f, "grouped θ is not supported");
  }
  {
    auto f = good;
    f.tensors["layers.0.mask"].dtype = "I32";
    expect_refused(f, "'layers.0.mask' has dtype I32");
  }
}

/// Every trainable parameter's gradient against central differences of the loss (float64),
/// for both losses, every base activation and the encoding on and off.
TEST(QkanModel, GradientsMatchFiniteDifferences) {
  for (Loss kind : {Loss::mse, Loss::cross_entropy})
    for (Activation act : {Activation::silu, Activation::gelu, Activation::tanh, Activation::sigmoid})
      for (bool enc : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << (kind == Loss::mse ? "mse " : "ce ") << to_string(act) << (enc ? " enc" : " raw"));
        Model m = random_model({3, 4, 3}, 2, 21 + int(act) + 10 * enc);
        m.options.base_activation = act;
        m.options.preacts_trainable = enc;
        m.options.ba_trainable = m.options.postact_weight_trainable = m.options.postact_bias_trainable = true;
        const std::int64_t B = 7;
        std::mt19937_64 rng(99);
        std::uniform_real_distribution<double> u(-1.5, 1.5);
        std::vector<double> x(B * 3), t(kind == Loss::mse ? B * 3 : B);
        for (auto& v : x) v = u(rng);
        for (std::size_t k = 0; k < t.size(); ++k) t[k] = kind == Loss::mse ? u(rng) : double(k % 3);
        std::vector<LayerParams> g;
        const double value = loss_and_gradient(m, x, t, B, kind, g);
        EXPECT_NEAR(value, loss(m, x, t, B, kind), 1e-14 * (1 + std::abs(value)));
        for (std::size_t l = 0; l < m.layers.size(); ++l) {
          auto check = [&](const char* name, std::vector<double> LayerParams::*field) {
            std::vector<double>& p = m.layers[l].*field;
            const std::vector<double>& gp = g[l].*field;
            ASSERT_EQ(gp.size(), p.size()) << name;
            for (std::size_t k = 0; k < p.size(); ++k) {
              const double keep = p[k], h = 1e-6;
              p[k] = keep + h;
              const double up = loss(m, x, t, B, kind);
              p[k] = keep - h;
              const double down = loss(m, x, t, B, kind);
              p[k] = keep;
              EXPECT_NEAR(gp[k], (up - down) / (2 * h), 1e-7) << "layer " << l << " " << name << "[" << k << "]";
            }
          };
          check("theta", &LayerParams::theta);
          if (enc) {
            check("preacts_weight", &LayerParams::preacts_weight);
            check("preacts_bias", &LayerParams::preacts_bias);
          }
          check("base_weight", &LayerParams::base_weight);
          check("postact_weights", &LayerParams::postact_weights);
          check("postact_bias", &LayerParams::postact_bias);
        }
      }
}

TEST(QkanModel, FrozenParametersGetZeroGradients) {
  Model m = random_model({2, 3, 1}, 3, 31);  // qkan.QKAN's defaults: only θ trains
  std::vector<double> x = {0.1, -0.4, 0.7, 0.2}, t = {0.3, -0.1};
  std::vector<LayerParams> g;
  loss_and_gradient(m, x, t, 2, Loss::mse, g);
  for (const LayerParams& gl : g) {
    for (const auto* v :
         {&gl.preacts_weight, &gl.preacts_bias, &gl.base_weight, &gl.postact_weights, &gl.postact_bias, &gl.mask})
      for (double e : *v) EXPECT_EQ(e, 0.0);
    double norm = 0;
    for (double e : gl.theta) norm += std::abs(e);
    EXPECT_GT(norm, 0.0);
  }
  EXPECT_THROW(loss_and_gradient(m, x, std::vector<double>{0.5, 1.0}, 2, Loss::cross_entropy, g),
               std::invalid_argument);
}

/// Random inputs in [-1.5, 1.5] and mse targets for a model.
void random_batch(const Model& m, std::int64_t B, std::uint64_t seed, std::vector<double>& x, std::vector<double>& t) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  x.resize(B * m.widths.front()), t.resize(B * m.widths.back());
  for (auto& v : x) v = u(rng);
  for (auto& v : t) v = u(rng);
}

double max_rel_diff(const std::vector<LayerParams>& a, const std::vector<LayerParams>& b) {
  double worst = 0;
  for (std::size_t l = 0; l < a.size(); ++l)
    for (auto field : {&LayerParams::theta, &LayerParams::preacts_weight, &LayerParams::preacts_bias,
                       &LayerParams::base_weight, &LayerParams::postact_weights, &LayerParams::postact_bias}) {
      const std::vector<double>&u = a[l].*field, &v = b[l].*field;
      EXPECT_EQ(u.size(), v.size());
      double scale = 0;
      for (double e : v) scale = std::max(scale, std::abs(e));
      for (std::size_t k = 0; k < u.size(); ++k)
        worst = std::max(worst, std::abs(u[k] - v[k]) / std::max(scale, 1e-30));
    }
  return worst;
}

Model all_trainable(Model m) {
  m.options.preacts_trainable = m.options.ba_trainable = true;
  m.options.postact_weight_trainable = m.options.postact_bias_trainable = true;
  return m;
}

/// A workspace keeps buffers and the first layer's base activation between calls; reused with
/// other batches, batches changed in place and other models, it must give exactly what a fresh
/// evaluation gives.
TEST(QkanModel, AReusedWorkspaceGivesFreshResults) {
  const Model a = all_trainable(random_model({3, 4, 2}, 2, 41)), b = all_trainable(random_model({3, 2}, 2, 42));
  std::vector<double> x1, t1, x2, t2;
  random_batch(a, 9, 1, x1, t1);
  random_batch(a, 5, 2, x2, t2);
  Workspace ws;
  std::vector<LayerParams> g, fresh;
  for (int round = 0; round < 2; ++round) {
    for (auto* batch : {&x1, &x2, &x1}) {
      const std::vector<double>& t = batch == &x1 ? t1 : t2;
      const std::int64_t B = static_cast<std::int64_t>(batch->size()) / 3;
      EXPECT_EQ(loss_and_gradient(a, *batch, t, B, Loss::mse, g, &ws),
                loss_and_gradient(a, *batch, t, B, Loss::mse, fresh));
      EXPECT_EQ(max_rel_diff(g, fresh), 0.0);
      EXPECT_EQ(loss(a, *batch, t, B, Loss::mse, &ws), loss(a, *batch, t, B, Loss::mse));
      EXPECT_EQ(forward(b, *batch, B, &ws), forward(b, *batch, B));
    }
    x1[4] += 0.25;  // the same buffer with one value changed
  }
}

/// Large batches run in row chunks on several threads: every row's output is the same for any
/// split, and the gradient (chunk sums added in order) agrees to rounding.
TEST(QkanModel, RowChunksOnThreadsKeepTheResults) {
  const Model m = all_trainable(random_model({8, 16, 4}, 2, 43));
  std::vector<double> x, t;
  random_batch(m, 1500, 3, x, t);  // 1500·(128 + 64) circuits: several chunks of 2^16
  const int before = num_threads();
  set_num_threads(1);
  std::vector<LayerParams> g1, g3;
  const std::vector<double> y1 = forward(m, x, 1500);
  const double l1 = loss_and_gradient(m, x, t, 1500, Loss::mse, g1);
  set_num_threads(3);
  const std::vector<double> y3 = forward(m, x, 1500);
  const double l3 = loss_and_gradient(m, x, t, 1500, Loss::mse, g3);
  set_num_threads(before);
  EXPECT_EQ(y1, y3);
  EXPECT_EQ(l1, l3);
  // Sums of 1500 terms in two orders: a few ulp of the largest partial sums, relative 1e-12.
  EXPECT_LT(max_rel_diff(g3, g1), 1e-12);
}

/// Float32 evaluation (qkan.QKAN's precision) against float64: outputs to float32's rounding
/// through two layers, gradients to a relative 1e-4 of their largest entry (sums over B = 64
/// rows of float32 terms, each ~1e-7 relative).
TEST(QkanModel, Float32EvaluationTracksFloat64) {
  Model m = all_trainable(random_model({3, 5, 2}, 3, 44));
  std::vector<double> x, t;
  random_batch(m, 64, 4, x, t);
  std::vector<LayerParams> g64, g32;
  const std::vector<double> y64 = forward(m, x, 64);
  const double l64 = loss_and_gradient(m, x, t, 64, Loss::mse, g64);
  m.options.compute = DType::f32;
  const std::vector<double> y32 = forward(m, x, 64);
  const double l32 = loss_and_gradient(m, x, t, 64, Loss::mse, g32);
  for (std::size_t k = 0; k < y64.size(); ++k) EXPECT_NEAR(y32[k], y64[k], 2e-5 * (1 + std::abs(y64[k])));
  EXPECT_NEAR(l32, l64, 1e-5 * l64);
  EXPECT_LT(max_rel_diff(g32, g64), 1e-4);
  EXPECT_GT(max_rel_diff(g32, g64), 0.0);  // it did compute in float32
}

/// One tensor entry of a hand-written safetensors header.
struct Entry {
  std::string name, dtype;
  Shape shape;
  std::uint64_t begin, end;
};

/// A safetensors file written by hand from its parts, so that the fuzzer below can make files
/// that safetensors::serialize would refuse to write: any dtype, shape or byte range.
std::vector<std::uint8_t> hand_written(const std::vector<Entry>& entries,
                                       const std::map<std::string, std::string>& meta,
                                       const std::vector<std::uint8_t>& data) {
  std::string h = "{";
  if (!meta.empty()) {
    h += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : meta) h += (first ? "" : ",") + ("\"" + k + "\":\"" + v + "\""), first = false;
    h += "},";
  }
  for (const Entry& e : entries) {
    h += "\"" + e.name + "\":{\"dtype\":\"" + e.dtype + "\",\"shape\":[";
    for (std::size_t k = 0; k < e.shape.size(); ++k) h += (k ? "," : "") + std::to_string(e.shape[k]);
    h += "],\"data_offsets\":[" + std::to_string(e.begin) + "," + std::to_string(e.end) + "]},";
  }
  if (h.back() == ',') h.pop_back();
  h += "}";
  while (h.size() % 8) h += ' ';
  std::vector<std::uint8_t> out;
  out.reserve(8 + h.size() + data.size());
  for (int k = 0; k < 8; ++k)
    out.push_back(static_cast<std::uint8_t>(std::uint64_t(h.size()) >> (8 * k)));  // little-endian
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

/// The parts of a valid model file: its entries (name order, back to back) and data.
struct Parts {
  std::vector<Entry> entries;
  std::map<std::string, std::string> meta;
  std::vector<std::uint8_t> data;
};
Parts parts_of(const safetensors::File& f) {
  Parts p;
  p.meta = f.metadata;
  for (const auto& [name, t] : f.tensors) {
    p.entries.push_back({name, t.dtype, t.shape, p.data.size(), p.data.size() + t.bytes.size()});
    p.data.insert(p.data.end(), t.bytes.begin(), t.bytes.end());
  }
  return p;
}

/// Loads a file the way `lockstep qkan eval` does. Returns the error message, empty if it loaded.
std::string load_error(const std::vector<std::uint8_t>& bytes, Model* loaded = nullptr) {
  try {
    const safetensors::File f = safetensors::parse(bytes, "fuzz.safetensors");
    Model m = from_safetensors(f, options_from_metadata(f, ModelOptions{}));
    if (loaded) *loaded = std::move(m);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

bool same_parameters(const Model& a, const Model& b) {
  if (a.widths != b.widths || a.reps != b.reps || a.layers.size() != b.layers.size()) return false;
  for (std::size_t k = 0; k < a.layers.size(); ++k) {
    const LayerParams &x = a.layers[k], &y = b.layers[k];
    if (x.theta != y.theta || x.preacts_weight != y.preacts_weight || x.preacts_bias != y.preacts_bias ||
        x.base_weight != y.base_weight || x.postact_weights != y.postact_weights || x.postact_bias != y.postact_bias ||
        x.mask != y.mask)
      return false;
  }
  return true;
}

/// 2000 mutations of a valid model file. Structural damage (truncation; a wrong dtype or
/// shape; overlapping, reversed or out-of-range offsets; a huge header length; a missing or an
/// extra tensor; layers whose widths do not chain; bad option values; a non-finite weight) must
/// be refused with a clear error. A random byte flip must be refused too, unless it leaves a
/// valid model: then it either hit the data region, and exactly the weight holding that byte
/// changed, or it hit a part of the header that carries no tensor (a metadata key, which reads
/// as absent), and the weights are the original's.
TEST(QkanModel, FuzzedModelFilesAreRefusedClearly) {
  Model base = random_model({3, 4, 2}, 2, 51);
  base.options.preacts_trainable = true;
  const safetensors::File good = to_safetensors(base, DType::f32);
  const std::vector<std::uint8_t> bytes = safetensors::serialize(good);
  Model original;
  ASSERT_EQ(load_error(bytes, &original), "");
  const Parts parts = parts_of(good);
  Model rewritten;  // the hand writer is faithful: unchanged parts load to the same model
  ASSERT_EQ(load_error(hand_written(parts.entries, parts.meta, parts.data), &rewritten), "");
  ASSERT_TRUE(same_parameters(rewritten, original));
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  const std::size_t data_start = 8 + header_len;

  std::mt19937_64 rng(2024);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  int refused = 0, loaded_data_flip = 0, loaded_header_flip = 0;
  auto must_refuse = [&](const std::vector<std::uint8_t>& file, const std::string& what) {
    const std::string err = load_error(file);
    EXPECT_FALSE(err.empty()) << "loaded: " << what;
    EXPECT_EQ(err.rfind("[", 0), 0u) << what << ": " << err;  // "[where] reason"
    EXPECT_GT(err.size(), 20u) << what << ": " << err;
    ++refused;
  };
  for (int trial = 0; trial < 2000; ++trial) {
    Parts p = parts;
    Entry& e = p.entries[pick(p.entries.size())];
    switch (trial % 12) {
      case 0: {  // truncation
        const std::size_t len = pick(bytes.size());
        must_refuse(std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + len),
                    "truncated to " + std::to_string(len));
        break;
      }
      case 1:
      case 2:
      case 3: {  // one random byte flipped anywhere
        std::vector<std::uint8_t> file = bytes;
        const std::size_t at = pick(file.size());
        file[at] ^= static_cast<std::uint8_t>(1 + pick(255));
        Model m;
        const std::string err = load_error(file, &m);
        if (!err.empty()) {
          EXPECT_EQ(err.rfind("[", 0), 0u) << err;
          ++refused;
        } else if (at >= data_start) {
          // The weights differ from the original's in exactly one value.
          int changed = 0;
          for (std::size_t k = 0; k < m.layers.size(); ++k)
            for (auto field : {&LayerParams::theta, &LayerParams::preacts_weight, &LayerParams::preacts_bias,
                               &LayerParams::base_weight, &LayerParams::postact_weights, &LayerParams::postact_bias,
                               &LayerParams::mask})
              for (std::size_t i = 0; i < (m.layers[k].*field).size(); ++i)
                changed += (m.layers[k].*field)[i] != (original.layers[k].*field)[i];
          EXPECT_EQ(changed, 1) << "flip at byte " << at;
          ++loaded_data_flip;
        } else {
          EXPECT_TRUE(same_parameters(m, original)) << "a header flip at byte " << at << " changed the weights";
          ++loaded_header_flip;
        }
        break;
      }
      case 4: {  // a wrong or unknown dtype for the same bytes
        const char* dtypes[] = {"F16", "BF16", "I32", "F64", "I64", "U8", "X9", ""};
        e.dtype = dtypes[pick(8)];
        must_refuse(hand_written(p.entries, p.meta, p.data), e.name + " as dtype " + e.dtype);
        break;
      }
      case 5: {  // a wrong shape: one dimension off, one more, one fewer, or astronomically large
        const int how = static_cast<int>(pick(4));
        if (how == 0) e.shape[pick(e.shape.size())] += 1;
        if (how == 1) e.shape.push_back(1 + static_cast<std::int64_t>(pick(3)));
        if (how == 2) e.shape.pop_back();
        if (how == 3) e.shape[pick(e.shape.size())] = std::int64_t{1} << 62;
        if (how == 1 && e.shape.back() == 1) e.shape.back() = 2;  // (…, 1) would keep the byte count
        must_refuse(hand_written(p.entries, p.meta, p.data), e.name + " with shape " + lockstep::to_string(e.shape));
        break;
      }
      case 6: {  // offsets: overlapping a neighbour, reversed, or past the data
        const int how = static_cast<int>(pick(3));
        const std::uint64_t shift = 4 * (1 + pick(8));
        if (how == 0)
          e.begin = e.begin >= shift ? e.begin - shift : e.begin + shift, e.end = e.begin + (e.end - e.begin);
        if (how == 1) std::swap(e.begin, e.end);
        if (how == 2) e.end = p.data.size() + 4 * (1 + pick(1000)), e.begin = e.end - 4;
        if (how == 1 && e.begin == e.end) e.end = 0, e.begin = 4;
        must_refuse(hand_written(p.entries, p.meta, p.data),
                    e.name + " with offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]");
        break;
      }
      case 7: {  // a header length past the file, past the limit, or near 2^64
        std::vector<std::uint8_t> file = bytes;
        const std::uint64_t lens[] = {bytes.size(), safetensors::kMaxHeaderBytes + 1 + pick(1000),
                                      ~std::uint64_t{0} - pick(9), std::uint64_t{1} << (33 + pick(30))};
        const std::uint64_t n = lens[pick(4)];
        std::memcpy(file.data(), &n, 8);
        must_refuse(file, "header length " + std::to_string(n));
        break;
      }
      case 8: {  // a missing tensor, its bytes removed too (a valid safetensors file)
        const std::size_t gone = pick(p.entries.size());
        const std::uint64_t b = p.entries[gone].begin, len = p.entries[gone].end - b;
        p.data.erase(p.data.begin() + static_cast<std::ptrdiff_t>(b),
                     p.data.begin() + static_cast<std::ptrdiff_t>(b + len));
        const std::string name = p.entries[gone].name;
        p.entries.erase(p.entries.begin() + static_cast<std::ptrdiff_t>(gone));
        for (Entry& o : p.entries)
          if (o.begin > b) o.begin -= len, o.end -= len;
        must_refuse(hand_written(p.entries, p.meta, p.data), "without " + name);
        break;
      }
      case 9: {  // an extra tensor with valid bytes
        const char* names[] = {"layers.2.theta", "layers.0.extra", "head.weight", "layers.00.theta", "layers.1"};
        const std::string name = names[pick(5)];
        p.entries.push_back({name, "F32", {2}, p.data.size(), p.data.size() + 8});
        p.data.insert(p.data.end(), 8, 0);
        must_refuse(hand_written(p.entries, p.meta, p.data), "with an extra '" + name + "'");
        break;
      }
      case 10: {  // layers whose widths do not chain: layer 1 rebuilt for 3 or 5 inputs
        Model other = base;
        LayerParams& L = other.layers[1];
        L.in = pick(2) ? 3 : 5;
        const std::int64_t E = L.in * L.out;
        L.theta.assign(E * 3 * 2, 0.1), L.preacts_weight.assign(E * 2, 1), L.preacts_bias.assign(E * 2, 0);
        for (auto* v : {&L.base_weight, &L.postact_weights, &L.postact_bias, &L.mask}) v->assign(E, 0.5);
        must_refuse(safetensors::serialize(to_safetensors(other, DType::f32)),
                    "layer 1 with " + std::to_string(L.in) + " inputs");
        break;
      }
      case 11: {  // a bad option value in the metadata, or a non-finite weight
        if (pick(2)) {
          const char* keys[] = {"ansatz", "preacts_trainable", "fast_measure", "base_activation"};
          const std::string key = keys[pick(4)];
          p.meta[key] = key == "ansatz" || key == "base_activation" ? "unknown" : "yes";
          must_refuse(hand_written(p.entries, p.meta, p.data), "metadata " + key);
        } else {
          const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity()};
          const float v = bad[pick(3)];
          const std::size_t at = e.begin + 4 * pick((e.end - e.begin) / 4);
          std::memcpy(p.data.data() + at, &v, 4);
          must_refuse(hand_written(p.entries, p.meta, p.data), e.name + " holding " + std::to_string(v));
        }
        break;
      }
    }
  }
  // Flips that leave a valid model do occur (most data bytes); the counts show every branch ran.
  EXPECT_GT(refused, 1000);
  EXPECT_GT(loaded_data_flip, 100);
  std::printf("fuzz: %d refused, %d loaded after a data flip, %d after a header flip\n", refused, loaded_data_flip,
              loaded_header_flip);
}

/// A one-layer model's output is the sum over inputs of its edges' functions: fed the same x on
/// every input, y[s, o] = Σ_i edge_functions[s, o, i]. (The forward runs the contracted solver,
/// edge_functions the plain one: they agree to rounding, 1e-12.)
TEST(QkanModel, EdgeFunctionsSumToTheLayer) {
  for (bool enc : {false, true}) {
    Model m = all_trainable(random_model({3, 2}, 3, 45));
    m.options.preacts_trainable = enc;
    const std::vector<double> x = {-1.2, -0.3, 0.0, 0.4, 1.7};
    const std::vector<double> f = edge_functions(m, 0, x);
    ASSERT_EQ(f.size(), x.size() * 2 * 3);
    std::vector<double> X;
    for (double v : x) X.insert(X.end(), 3, v);
    const std::vector<double> y = forward(m, X, static_cast<std::int64_t>(x.size()));
    for (std::size_t s = 0; s < x.size(); ++s)
      for (int o = 0; o < 2; ++o)
        EXPECT_NEAR(y[s * 2 + o], f[(s * 2 + o) * 3] + f[(s * 2 + o) * 3 + 1] + f[(s * 2 + o) * 3 + 2], 1e-12);
  }
  EXPECT_THROW(edge_functions(random_model({3, 2}, 3, 45), 1, std::vector<double>{0.0}), std::invalid_argument);
}

TEST(QkanModel, ActivationsMatchTheirDefinitions) {
  EXPECT_DOUBLE_EQ(activate(Activation::silu, 1.0), 1.0 / (1 + std::exp(-1.0)));
  EXPECT_NEAR(activate(Activation::gelu, 1.0), 0.8413447460685429, 1e-15);
  EXPECT_EQ(activate(Activation::relu, -2.0), 0.0);
  EXPECT_DOUBLE_EQ(activate(Activation::tanh, 0.5), std::tanh(0.5));
  EXPECT_DOUBLE_EQ(activate(Activation::sigmoid, 0.0), 0.5);
  EXPECT_EQ(parse_activation("gelu"), Activation::gelu);
  EXPECT_THROW(parse_activation("swish"), std::invalid_argument);
}

}  // namespace
}  // namespace lockstep::qkan
