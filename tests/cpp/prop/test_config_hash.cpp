// The configuration hash: SHA-256 against FIPS 180-4 vectors, the canonical serialisation
// (exact round trip, every field covered), config_differences.
#include <gtest/gtest.h>
#include <unistd.h>

#include <random>
#include <set>
#include <string>

#include "io_test_support.hpp"
#include "lockstep/prop/config_hash.hpp"
#include "lockstep/prop/recipe.hpp"
#include "src/prop/io/config_fields.hpp"
#include "src/prop/io/sha256.hpp"

namespace lockstep::prop {
namespace {

using testing::member_count;

TEST(Sha256, Fips180Vectors) {
  // FIPS 180-4 examples (SHA-256 "one block" and "two block" messages) and the empty message.
  EXPECT_EQ(sha256_hex(std::string_view("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string_view("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string_view("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // One million 'a': many blocks, and the length field beyond 2^16 bits.
  EXPECT_EQ(sha256_hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

std::string digest(std::string_view message, io::Sha256::Path path, std::size_t split) {
  io::Sha256 hash(path);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  hash.update(std::span(bytes, split));
  hash.update(std::span(bytes + split, message.size() - split));
  return hash.finish_hex();
}

TEST(Sha256, ReferencePathVectors) {
  // The plain compression function, whatever the processor offers (the same FIPS vectors).
  const auto reference = [](std::string_view m) { return digest(m, io::Sha256::Path::reference, 0); };
  EXPECT_EQ(reference("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(reference("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::printf("SHA extensions %s\n", io::Sha256::hardware_available() ? "used" : "not available");
}

TEST(Sha256, IncrementalAndBothPathsAgree) {
  // Split points around the 64-byte block and the 56-byte padding boundary.
  std::mt19937 rng(static_cast<std::uint32_t>(testing::fresh_seed()));
  std::string message(300, '\0');
  for (auto& c : message) c = static_cast<char>(rng());
  for (std::size_t length : {0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 300}) {
    const std::string_view m(message.data(), length);
    const auto whole = digest(m, io::Sha256::Path::reference, 0);
    for (std::size_t split = 0; split <= length; split += 7) {
      EXPECT_EQ(digest(m, io::Sha256::Path::reference, split), whole) << "length " << length << " split " << split;
      EXPECT_EQ(digest(m, io::Sha256::Path::best, split), whole) << "length " << length << " split " << split;
    }
  }
}

TEST(ConfigTable, CoversEveryConfigField) {
  // A Config field missing from src/prop/io/config_fields.hpp would be neither read from
  // recipes nor hashed: count each section's members against the table.
  const auto in_table = [](std::string_view section) {
    std::size_t n = 0;
    io::for_each_config_field([&](const auto& field) { n += field.section() == section; });
    return n;
  };
  EXPECT_EQ(member_count<Config>(), 6u) << "Config gained a section: add it to the table and the recipe sections";
  EXPECT_EQ(member_count<GridConfig>(), in_table("grid"));
  EXPECT_EQ(member_count<FibreConfig>(), in_table("fibre"));
  EXPECT_EQ(member_count<PulseConfig>(), in_table("pulse"));
  EXPECT_EQ(member_count<WindowConfig>(), in_table("window"));
  EXPECT_EQ(member_count<SteppingConfig>(), in_table("stepping"));
  EXPECT_EQ(member_count<OutputConfig>(), in_table("output"));
  std::set<std::string_view> keys;
  io::for_each_config_field([&](const auto& field) { EXPECT_TRUE(keys.insert(field.key).second) << field.key; });
}

/// Changes one field to another value of its type.
template <class T> void perturb(T& value) {
  if constexpr (std::is_same_v<T, double>) value = value * 2 + 1;
  else if constexpr (std::is_same_v<T, bool>) value = !value;
  else if constexpr (std::is_enum_v<T>) {
    const auto& names = io::EnumNames<T>::values;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i].first == value) {
        value = names[(i + 1) % names.size()].first;
        return;
      }
  } else if constexpr (std::is_integral_v<T>) value += 1;
  else value.push_back(1.0);
}

/// A gas-filled capillary (no Raman response).
Config capillary_config() {
  Config c;
  c.fibre.type = FibreType::capillary;
  c.fibre.raman = RamanModel::none;
  c.fibre.raman_fraction = 0;
  return c;
}

/// A configuration in which a field of `scope` applies.
Config where_applies(io::Scope scope) {
  Config c;
  switch (scope) {
    case io::Scope::capillary:
    case io::Scope::helium: c = capillary_config(); break;
    case io::Scope::wall_index:
      c = capillary_config();
      c.fibre.cladding = CladdingKind::index;
      break;
    case io::Scope::energy: c.pulse.energy = 20e-6; break;
    default: break;
  }
  EXPECT_TRUE(io::applies(scope, c));
  return c;
}

TEST(ConfigHash, EveryFieldChangesTheHashAndIsNamed) {
  io::for_each_config_field([&](const auto& field) {
    const Config base = where_applies(field.scope);
    Config changed = base;
    perturb(field.access(changed));
    EXPECT_NE(config_hash(changed), config_hash(base)) << field.key;
    const auto differences = config_differences(base, changed);
    ASSERT_FALSE(differences.empty()) << field.key;
    EXPECT_TRUE(differences[0].starts_with(std::string(field.key))) << differences[0];
    // Only the fibre type, the gas and the wall decide whether other fields apply.
    const bool decides = field.key == "fibre.type" || field.key == "fibre.gas" || field.key == "fibre.cladding";
    if (!decides) EXPECT_EQ(differences.size(), 1u) << field.key << ": " << differences.back();
  });
}

TEST(ConfigHash, FieldsThatDoNotApplyAreNotHashed) {
  // A capillary's β, loss, γ and Raman parameters, a fibre's gas, a peak power under an energy
  // launch: none is used, none is written, none changes the hash.
  io::for_each_config_field([&](const auto& field) {
    for (const Config& base : {Config{}, capillary_config(), where_applies(io::Scope::energy)}) {
      if (io::applies(field.scope, base)) continue;
      Config changed = base;
      perturb(field.access(changed));
      if (io::applies(field.scope, changed)) continue;  // an energy given launches by energy
      EXPECT_EQ(config_hash(changed), config_hash(base)) << field.key;
      EXPECT_TRUE(config_differences(base, changed).empty()) << field.key;
      EXPECT_EQ(serialize_config(base).find("\n" + std::string(field.name()) + " = "), std::string::npos) << field.key;
    }
  });
  // Where a field applies in one configuration only, the other reads "(not used)".
  const auto d = config_differences(Config{}, capillary_config());
  ASSERT_GE(d.size(), 3u);
  EXPECT_EQ(d[0], "fibre.type: coefficients vs capillary");
  EXPECT_EQ(d[1],
            "fibre.betas: [\"-1.183e-26 s^2/m\", \"8.1038e-41 s^3/m\", \"-9.5205e-56 s^4/m\", "
            "\"2.0737e-70 s^5/m\", \"-5.3943e-85 s^6/m\", \"1.3486e-99 s^7/m\", \"-2.5495e-114 s^8/m\", "
            "\"3.0524e-129 s^9/m\", \"-1.714e-144 s^10/m\"] vs (not used)");
  Config energy = where_applies(io::Scope::energy);
  EXPECT_EQ(config_differences(Config{}, energy), (std::vector<std::string>{"pulse.peak_power: 10000 W vs (not used)",
                                                                            "pulse.energy: (not used) vs 2e-05 J"}));
}

TEST(ConfigHash, CanonicalFormOfFibresGivenByCoefficientsIsUnchanged) {
  // Files written before capillaries, energy launches and pulse carriers existed store these
  // hashes; the canonical form of such a configuration must not change, or they could no
  // longer be read or resumed. (Hashes computed by the library before those fields existed.)
  EXPECT_EQ(config_hash(Config{}), "041cdfd442d2e9137bcf63bfd312ff512a130273a2ba0f8b394b9c8cc12cda77");
  const Recipe r = parse_recipe(
      "[grid]\npoints = 1024\n[fibre]\nbetas = [-20.0]\nloss = \"3 dB/km\"\nraman = \"lin-agrawal\"\n"
      "[pulse]\nshape = \"user\"\nuser_time = [-100, 100]\nuser_re = [1, 1]\nuser_im = [0, 0]\n",
      "old.toml");
  EXPECT_EQ(config_hash(r.config), "c5f0c8843b753e35f169446a824e5a76d3e5f56270a4031cc81e57916cde82b0");
}

TEST(ConfigHash, DeterministicAndHex) {
  const Config a, b;
  EXPECT_EQ(config_hash(a), config_hash(b));
  const auto h = config_hash(a);
  ASSERT_EQ(h.size(), 64u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_TRUE(config_differences(a, b).empty());
}

TEST(ConfigHash, DifferencesNameValuesWithUnits) {
  Config a, b;
  b.fibre.gamma = 0.12;
  b.grid.points = 4096;
  b.fibre.betas[2] = 0;
  b.stepping.scheme = Scheme::rk4ip;
  const auto d = config_differences(a, b);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0], "grid.points: 8192 vs 4096");
  EXPECT_EQ(d[1], "fibre.betas[2]: -9.5205e-56 s^4/m vs 0 s^4/m");
  EXPECT_EQ(d[2], "fibre.gamma: 0.11 /W/m vs 0.12 /W/m");
  EXPECT_EQ(d[3], "stepping.scheme: dp54ip vs rk4ip");
  b = a;
  b.output.save_z = {0.0, 0.15};
  EXPECT_EQ(config_differences(a, b), std::vector<std::string>{"output.save_z: 0 values vs 2 values"});
}

TEST(ConfigSerialisation, RoundTripsExactly) {
  // Random values in every real field (within the validation ranges where one applies).
  std::mt19937_64 rng(testing::fresh_seed());
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Config c;
  c.grid.time_window = 12.5e-12 + 2e-12 * unit(rng);
  c.grid.center_wavelength = 780e-9 + 70e-9 * unit(rng);
  c.fibre.length = 0.1 + unit(rng);
  for (auto& b : c.fibre.betas) b *= 1 + unit(rng);
  c.fibre.gamma = unit(rng);
  c.fibre.loss = unit(rng) * 1e-3;
  c.fibre.raman_fraction = unit(rng);
  c.pulse.peak_power = 1e4 * unit(rng) + 1;
  c.pulse.chirp = -unit(rng);
  c.pulse.delay = -0.0;  // the sign of zero must survive too
  c.pulse.noise_seed = rng();
  c.stepping.rtol = unit(rng) * 1e-3 + 1e-12;
  c.stepping.atol = unit(rng) * 1e-9 + 1e-300;
  c.stepping.schedule = {c.fibre.length * 0.25, c.fibre.length * 0.5, c.fibre.length};
  c.pulse.noise_seed >>= 1;  // seeds are TOML integers (int64)
  const auto text = serialize_config(c);
  const Config back = parse_config(text, "round-trip");
  EXPECT_TRUE(config_differences(c, back).empty()) << text;
  EXPECT_EQ(serialize_config(back), text);
  EXPECT_TRUE(std::signbit(back.pulse.delay));
  EXPECT_EQ(back.stepping.atol, c.stepping.atol);

  // A capillary launched by energy, with a wall of given index and a pulse carrier of its own.
  Config g = capillary_config();
  g.grid.center_wavelength = 350e-9 + 50e-9 * unit(rng);
  g.grid.points = 2048;
  g.grid.time_window = 1.5e-12;
  g.fibre.length = 0.5 + unit(rng);
  g.fibre.gas = gas::Species::Ar;
  g.fibre.pressure = 1e5 * (0.1 + unit(rng));
  g.fibre.temperature = 280 + 40 * unit(rng);
  g.fibre.radius = 50e-6 + 100e-6 * unit(rng);
  g.fibre.mode_model = capillary::ModeForm::reduced;
  g.fibre.cladding = CladdingKind::index;
  g.fibre.cladding_index = 1.4 + unit(rng);
  g.fibre.cladding_extinction = unit(rng);
  g.pulse.energy = 1e-4 * unit(rng) + 1e-9;
  g.pulse.wavelength = 800e-9 + 10e-9 * unit(rng);
  g.pulse.fwhm = 20e-15 + 10e-15 * unit(rng);
  const auto capillary_text = serialize_config(g);
  const Config capillary_back = parse_config(capillary_text, "round-trip");
  EXPECT_TRUE(config_differences(g, capillary_back).empty()) << capillary_text;
  EXPECT_EQ(serialize_config(capillary_back), capillary_text);
  for (const auto& [written, key] :
       {std::pair{true, "\ntype = \"capillary\""}, std::pair{true, "\ngas = \"Ar\""}, std::pair{true, "\nenergy = "},
        std::pair{true, "\nwavelength = "}, std::pair{true, "\ncladding_extinction = "}, std::pair{false, "\nbetas = "},
        std::pair{false, "\ngamma = "}, std::pair{false, "\npeak_power = "}, std::pair{false, "\nhelium_sellmeier = "},
        std::pair{false, "\nraman_tau1 = "}})
    EXPECT_EQ(capillary_text.find(key) != std::string::npos, written) << key << "\n" << capillary_text;
}

TEST(ConfigSerialisation, IsARecipeWithSections) {
  const auto text = serialize_config(Config{});
  for (const char* section : {"[grid]", "[fibre]", "[pulse]", "[window]", "[stepping]", "[output]"})
    EXPECT_NE(text.find(section), std::string::npos) << section;
  EXPECT_NE(text.find("time_window = \"1.25e-11 s\""), std::string::npos) << text;
  EXPECT_NE(text.find("betas = [\"-1.183e-26 s^2/m\", \"8.1038e-41 s^3/m\""), std::string::npos) << text;
  EXPECT_NE(text.find("raman = \"blow-wood\""), std::string::npos) << text;
}

TEST(ConfigSerialisation, RefusesUnnamedEnumValues) {
  Config c;
  c.stepping.norm = static_cast<ErrorNorm>(17);
  EXPECT_THROW(serialize_config(c), std::invalid_argument);
  EXPECT_THROW(validate_config(c), std::invalid_argument);
}

}  // namespace
}  // namespace lockstep::prop
