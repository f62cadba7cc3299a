// Scans (Cartesian products in the documented order, labels) and shot-noise ensembles.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "lockstep/prop/config_hash.hpp"
#include "lockstep/prop/recipe.hpp"
#include "lockstep/prop/scan.hpp"

namespace lockstep::prop {
namespace {

std::vector<std::string> labels(const std::vector<MemberSpec>& members) {
  std::vector<std::string> out;
  for (const auto& m : members) out.push_back(m.label);
  return out;
}

TEST(Scan, SingleRunWithoutScanOrEnsemble) {
  const auto members = expand_members(parse_recipe("[fibre]\ngamma = 0.2\n", "one.toml"));
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].label, "");
  EXPECT_EQ(members[0].config.fibre.gamma, 0.2);
}

TEST(Scan, CartesianProductInTheOrderWrittenLastAxisFastest) {
  const Recipe r = parse_recipe(R"(
[scan]
"pulse.peak_power" = ["5 kW", "10 kW"]
"fibre.gamma" = [0.1, 0.11, "120 /W/km"]
)",
                                "scan.toml");
  ASSERT_EQ(r.scan.size(), 2u);
  EXPECT_EQ(r.scan[0].key, "pulse.peak_power");  // the order written, not alphabetical
  const auto members = expand_members(r);
  EXPECT_EQ(labels(members),
            (std::vector<std::string>{"peak_power=5kW,gamma=0.1", "peak_power=5kW,gamma=0.11",
                                      "peak_power=5kW,gamma=120/W/km", "peak_power=10kW,gamma=0.1",
                                      "peak_power=10kW,gamma=0.11", "peak_power=10kW,gamma=120/W/km"}));
  const double powers[] = {5e3, 5e3, 5e3, 10e3, 10e3, 10e3};
  const double gammas[] = {0.1, 0.11, 0.12, 0.1, 0.11, 0.12};
  for (std::size_t i = 0; i < members.size(); ++i) {
    EXPECT_EQ(members[i].config.pulse.peak_power, powers[i]) << i;
    EXPECT_EQ(members[i].config.fibre.gamma, gammas[i]) << i;
    // Only the scanned fields differ from the base configuration.
    Config expected = r.config;
    expected.pulse.peak_power = powers[i];
    expected.fibre.gamma = gammas[i];
    EXPECT_TRUE(config_differences(expected, members[i].config).empty()) << i;
  }
}

TEST(Scan, OrderFollowsTheRecipeAndNestedKeysWork) {
  // Axes written as nested tables ("fibre.gamma" without quotes) are the same keys.
  const Recipe r = parse_recipe(
      "[scan]\nstepping.scheme = [\"rk4ip\", \"dp54ip\"]\nfibre.self_steepening = [true, false]\n", "scan.toml");
  const auto members = expand_members(r);
  EXPECT_EQ(labels(members),
            (std::vector<std::string>{"scheme=rk4ip,self_steepening=true", "scheme=rk4ip,self_steepening=false",
                                      "scheme=dp54ip,self_steepening=true", "scheme=dp54ip,self_steepening=false"}));
  EXPECT_EQ(members[1].config.stepping.scheme, Scheme::rk4ip);
  EXPECT_FALSE(members[1].config.fibre.self_steepening);
  EXPECT_EQ(members[2].config.stepping.scheme, Scheme::dp54ip);
}

TEST(Scan, CapillaryKeysAndEnergy) {
  const Recipe r = parse_recipe(R"(
[fibre]
type = "capillary"
[pulse]
fwhm = "30 fs"
[scan]
"fibre.gas" = ["He", "Ar"]
"fibre.radius" = ["75 um", 125]
"fibre.length" = ["10 cm", 0.2]
"pulse.energy" = ["50 uJ", "0.1 mJ"]
)",
                                "capillary.toml");
  const auto members = expand_members(r);
  ASSERT_EQ(members.size(), 16u);
  EXPECT_EQ(members[0].label, "gas=He,radius=75um,length=10cm,energy=50uJ");
  EXPECT_EQ(members[15].label, "gas=Ar,radius=125,length=0.2,energy=0.1mJ");
  EXPECT_EQ(members[15].config.fibre.gas, gas::Species::Ar);
  EXPECT_EQ(members[15].config.fibre.radius, 125e-6);
  EXPECT_EQ(members[15].config.fibre.length, 0.2);
  EXPECT_EQ(members[15].config.pulse.energy, 1e-4);
  EXPECT_EQ(members[0].config.pulse.energy, 5e-5);
  for (const auto& m : members) EXPECT_EQ(m.config.fibre.type, FibreType::capillary);
  // The canonical forms differ only in the scanned keys.
  Config expected = r.config;
  expected.fibre.gas = gas::Species::Ar;
  expected.fibre.radius = 125e-6;
  expected.fibre.length = 0.2;
  expected.pulse.energy = 1e-4;
  EXPECT_TRUE(config_differences(expected, members[15].config).empty());
  // A scan over energy on a recipe that gives no peak power launches every member by energy.
  const auto d = config_differences(Config{}, members[0].config);
  EXPECT_NE(std::find(d.begin(), d.end(), "pulse.peak_power: 10000 W vs (not used)"), d.end());
}

TEST(Scan, EnsembleSeedsConsecutively) {
  const auto members = expand_members(parse_recipe("[ensemble]\nmembers = 4\nseed = 10\n", "ens.toml"));
  ASSERT_EQ(members.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(members[i].label, "member=" + std::to_string(i));
    EXPECT_TRUE(members[i].config.pulse.shot_noise);
    EXPECT_EQ(members[i].config.pulse.noise_seed, 10 + i);
  }
}

TEST(Scan, TheEnsembleExampleIsTheDudleyCaseWithTwentyNoisyMembers) {
  const auto members = expand_members(load_recipe(std::filesystem::path(LOCKSTEP_EXAMPLES) / "dudley_ensemble.toml"));
  ASSERT_EQ(members.size(), 20u);
  Config expected;  // the Dudley case, 50 planes
  expected.output.n_save = 50;
  expected.pulse.shot_noise = true;
  for (std::size_t i = 0; i < members.size(); ++i) {
    expected.pulse.noise_seed = 1 + i;
    EXPECT_EQ(config_hash(members[i].config), config_hash(expected)) << members[i].label;
  }
}

TEST(Scan, EnsembleOfEveryScanPointMemberFastest) {
  const auto members = expand_members(
      parse_recipe("[scan]\n\"pulse.peak_power\" = [\"1 kW\", \"2 kW\"]\n[ensemble]\nmembers = 3\n", "both.toml"));
  EXPECT_EQ(labels(members), (std::vector<std::string>{"peak_power=1kW,member=0", "peak_power=1kW,member=1",
                                                       "peak_power=1kW,member=2", "peak_power=2kW,member=0",
                                                       "peak_power=2kW,member=1", "peak_power=2kW,member=2"}));
  EXPECT_EQ(members[4].config.pulse.peak_power, 2e3);
  EXPECT_EQ(members[4].config.pulse.noise_seed, 1u);  // seed defaults to 0
  EXPECT_NE(config_hash(members[0].config), config_hash(members[1].config));
}

TEST(Scan, CombinationThatDoesNotFitIsRefused) {
  // Each value fits the base configuration; the pair (2 ps window, 1 ps pulse) does not.
  const Recipe r = parse_recipe(R"(
[grid]
points = 2048
center_wavelength = "400 nm"
[scan]
"grid.time_window" = ["2 ps", "12.5 ps"]
"pulse.fwhm" = ["50 fs", "1 ps"]
)",
                                "combo.toml");
  try {
    expand_members(r);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("member 'time_window=2ps,fwhm=1ps'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("grid.time_window: too small for the pulse"), std::string::npos) << e.what();
  }
}

TEST(Scan, EnsembleSeedsStayBelow2To63) {
  // Seeds are stored as TOML integers: the last member's seed must still be one.
  const auto r = parse_recipe("[ensemble]\nmembers = 2\nseed = 9223372036854775807\n", "ens.toml");
  EXPECT_THROW(expand_members(r), std::invalid_argument);
  EXPECT_EQ(expand_members(parse_recipe("[ensemble]\nmembers = 1\nseed = 9223372036854775807\n", "ens.toml")).size(),
            1u);
}

}  // namespace
}  // namespace lockstep::prop
