// Recipes: defaults, the example recipe, unit conversions, user pulse files, every class of
// bad input (with the key named in the message), and a fuzzed parser.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numbers>
#include <random>
#include <sstream>
#include <string>

#include "io_test_support.hpp"
#include "lockstep/core/npy.hpp"
#include "lockstep/prop/config_hash.hpp"
#include "lockstep/prop/recipe.hpp"

namespace lockstep::prop {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void expect_same(const Config& a, const Config& b) {
  const auto d = config_differences(a, b);
  EXPECT_TRUE(d.empty()) << d.front();
}

TEST(Recipe, EmptyRecipeGivesTheDefaults) {
  const Recipe r = parse_recipe("", "empty.toml");
  expect_same(r.config, Config{});
  EXPECT_TRUE(r.scan.empty());
  EXPECT_EQ(r.ensemble.members, 0);
  EXPECT_EQ(r.canonical, serialize_config(Config{}));
}

TEST(Recipe, DudleyExampleIsExactlyTheDefaults) {
  const Recipe r = load_recipe(std::filesystem::path(LOCKSTEP_EXAMPLES) / "dudley.toml");
  // Bit for bit: the units are applied on the decimal text, so "15 cm" is the double 0.15.
  expect_same(r.config, Config{});
  EXPECT_EQ(config_hash(r.config), config_hash(Config{}));
}

TEST(Recipe, CanonicalTextParsesBack) {
  const Recipe r = parse_recipe(
      "[fibre]\nlength = \"7 cm\"\nloss = \"3 dB/km\"\n[pulse]\nshape = \"gaussian\"\nchirp = -2\n", "r.toml");
  const Recipe again = parse_recipe(r.canonical, "canonical.toml");
  expect_same(again.config, r.config);
  EXPECT_EQ(again.canonical, r.canonical);
}

TEST(Recipe, UnitConversions) {
  const Recipe r = parse_recipe(R"(
[grid]
time_window = "40000 fs"
center_wavelength = "1.55 um"
[fibre]
length = "2.5 mm"
betas = ["-11.830 ps^2/km", "0.081038 ps^3/km", "-2e-4 fs^4/mm"]
loss = "0.2 dB/km"
gamma = "110 /W/km"
raman_tau1 = 12.2
[pulse]
peak_power = "2.5 kW"
fwhm = "0.1 ps"
delay = "-250 fs"
[stepping]
initial_step = "10 um"
)",
                                "units.toml");
  const auto& c = r.config;
  // Decimal-prefix units are exact (the decimal text is rescaled before it is read).
  EXPECT_EQ(c.grid.time_window, 40e-12);
  EXPECT_EQ(c.grid.center_wavelength, 1.55e-6);
  EXPECT_EQ(c.fibre.length, 2.5e-3);
  ASSERT_EQ(c.fibre.betas.size(), 3u);
  EXPECT_EQ(c.fibre.betas[0], -11.830e-27);  // ps²/km = 1e-24 s² / 1e3 m
  EXPECT_EQ(c.fibre.betas[1], 8.1038e-41);   // ps³/km = 1e-36 s³ / 1e3 m
  EXPECT_EQ(c.fibre.betas[2], -2e-61);       // fs⁴/mm = 1e-60 s⁴ / 1e-3 m
  EXPECT_EQ(c.fibre.gamma, 0.11);
  EXPECT_EQ(c.fibre.raman_tau1, 12.2e-15);  // bare number: fs
  EXPECT_EQ(c.pulse.peak_power, 2500.0);
  EXPECT_EQ(c.pulse.fwhm, 100e-15);
  EXPECT_EQ(c.pulse.delay, -250e-15);
  EXPECT_EQ(c.stepping.initial_step, 1e-5);
  // dB of power per km → α in 1/m: 0.2 · ln(10)/10 / 1000. One rounding in the product.
  EXPECT_NEAR(c.fibre.loss, 0.2 * std::numbers::ln10 / 10 / 1000, 1e-15 * 4.6e-5);
}

TEST(Recipe, UnitSpellings) {
  const auto length = [](const std::string& value) {
    return parse_recipe("[fibre]\nlength = " + value + "\n[stepping]\ninitial_step = \"0.1 um\"\n", "spell.toml")
        .config.fibre.length;
  };
  EXPECT_EQ(length("\"1 \xC2\xB5m\""), 1e-6);  // micro sign
  EXPECT_EQ(length("\"1 \xCE\xBCm\""), 1e-6);  // Greek mu
  EXPECT_EQ(length("\"3e2m\""), 300.0);
  EXPECT_EQ(length("\"+0.5 km\""), 500.0);
  EXPECT_EQ(length("\"15\""), 15.0);  // a string without unit: the default unit
  EXPECT_EQ(length("15"), 15.0);
  const auto gamma = [](const std::string& value) {
    return parse_recipe("[fibre]\ngamma = \"" + value + "\"\n", "spell.toml").config.fibre.gamma;
  };
  EXPECT_EQ(gamma("0.11 1/(W m)"), 0.11);
  EXPECT_EQ(gamma("110 1/(W km)"), 0.11);
  EXPECT_EQ(gamma("0.11 W^-1 m^-1"), 0.11);
  const auto loss = parse_recipe(
                        "[fibre]\nloss = \"0.5 /km\"\nloss_table_omega = [\"2 rad/fs\", \"3 rad/fs\"]\n"
                        "loss_table_alpha = [\"1 dB/m\", 0.5]\n",
                        "spell.toml")
                        .config.fibre;
  EXPECT_EQ(loss.loss, 5e-4);
  EXPECT_EQ(loss.loss_table_omega, (std::vector<double>{2e15, 3e15}));
  EXPECT_NEAR(loss.loss_table_alpha[0], std::numbers::ln10 / 10, 1e-16);
  EXPECT_EQ(loss.loss_table_alpha[1], 0.5);
}

TEST(Recipe, PressureTemperatureEnergyUnits) {
  const auto fibre = [](const std::string& keys) {
    return parse_recipe("[fibre]\ntype = \"capillary\"\n" + keys, "units.toml").config.fibre;
  };
  // Powers of ten are exact; atm and Torr are one product; degC is one extended-precision sum.
  EXPECT_EQ(fibre("pressure = \"5 bar\"").pressure, 5e5);
  EXPECT_EQ(fibre("pressure = 1.5").pressure, 1.5e5);  // bare number: bar
  EXPECT_EQ(fibre("pressure = \"500 mbar\"").pressure, 5e4);
  EXPECT_EQ(fibre("pressure = \"0.3 MPa\"").pressure, 3e5);
  EXPECT_EQ(fibre("pressure = \"12 kPa\"").pressure, 1.2e4);
  EXPECT_EQ(fibre("pressure = \"987 hPa\"").pressure, 98700.0);
  EXPECT_EQ(fibre("pressure = \"2e4 Pa\"").pressure, 2e4);
  EXPECT_EQ(fibre("pressure = \"1 atm\"").pressure, 101325.0);
  EXPECT_NEAR(fibre("pressure = \"760 Torr\"").pressure, 101325.0, 1e-10);
  EXPECT_EQ(fibre("temperature = \"20 degC\"").temperature, 293.15);
  EXPECT_EQ(fibre("temperature = \"20 \xC2\xB0"
                  "C\"")
                .temperature,
            293.15);  // the degree sign
  EXPECT_EQ(fibre("temperature = \"-23.15 degC\"").temperature, 250.0);
  EXPECT_EQ(fibre("temperature = \"300 K\"").temperature, 300.0);
  EXPECT_EQ(fibre("temperature = 310").temperature, 310.0);  // bare number: K
  EXPECT_EQ(fibre("radius = \"75 um\"").radius, 75e-6);
  EXPECT_EQ(fibre("radius = \"75 \xC2\xB5m\"").radius, 75e-6);
  EXPECT_EQ(fibre("radius = \"0.075 mm\"").radius, 75e-6);
  EXPECT_EQ(fibre("radius = 75").radius, 75e-6);  // bare number: µm
  const auto energy = [](const std::string& value) {
    return parse_recipe("[pulse]\nenergy = " + value + "\n", "units.toml").config.pulse.energy;
  };
  EXPECT_EQ(energy("\"20 uJ\""), 20e-6);
  EXPECT_EQ(energy("\"0.2 mJ\""), 2e-4);
  EXPECT_EQ(energy("\"150 nJ\""), 150e-9);
  EXPECT_EQ(energy("\"1e-5 J\""), 1e-5);
  EXPECT_EQ(energy("20"), 20e-6);  // bare number: µJ
  EXPECT_EQ(parse_recipe("[pulse]\nwavelength = 800\n", "units.toml").config.pulse.wavelength, 800e-9);
}

TEST(Recipe, CapillaryExample) {
  const Recipe r = load_recipe(std::filesystem::path(LOCKSTEP_EXAMPLES) / "capillary_he.toml");
  const Config& c = r.config;
  EXPECT_EQ(c.fibre.type, FibreType::capillary);
  EXPECT_EQ(c.fibre.gas, gas::Species::He);
  EXPECT_EQ(c.fibre.pressure, 2e5);
  EXPECT_EQ(c.fibre.temperature, 293.15);
  EXPECT_EQ(c.fibre.radius, 125e-6);
  EXPECT_EQ(c.fibre.length, 1.45);
  EXPECT_EQ(c.pulse.energy, 5e-4);
  EXPECT_EQ(c.pulse.fwhm, 20e-15);
  EXPECT_EQ(c.pulse.wavelength, 800e-9);
  EXPECT_EQ(c.grid.center_wavelength, 300e-9);
  expect_same(parse_config(r.canonical, "canonical"), c);
}

TEST(Recipe, CapillaryKeysDefaultsAndCanonicalForm) {
  const Recipe r = parse_recipe(R"(
[grid]
points = 2048
time_window = "1.2 ps"
center_wavelength = "300 nm"
[fibre]
type = "capillary"
length = "80 cm"
gas = "Ar"
pressure = "0.4 bar"
temperature = "25 degC"
radius = "100 um"
mode_model = "reduced"
cladding_index = 1.46
[pulse]
energy = "0.1 mJ"
fwhm = "15 fs"
wavelength = "800 nm"
)",
                                "capillary.toml");
  const FibreConfig& f = r.config.fibre;
  EXPECT_EQ(f.type, FibreType::capillary);
  EXPECT_EQ(f.gas, gas::Species::Ar);
  EXPECT_EQ(f.pressure, 4e4);
  EXPECT_EQ(f.temperature, 298.15);
  EXPECT_EQ(f.radius, 100e-6);
  EXPECT_EQ(f.mode_model, capillary::ModeForm::reduced);
  EXPECT_EQ(f.cladding, CladdingKind::index);  // a wall index given alone makes the wall that index
  EXPECT_EQ(f.cladding_index, 1.46);
  EXPECT_EQ(f.cladding_extinction, 0.0);
  EXPECT_EQ(f.raman, RamanModel::none);  // a capillary's default
  EXPECT_EQ(r.config.pulse.energy, 1e-4);
  EXPECT_EQ(r.config.pulse.wavelength, 800e-9);
  // The canonical form holds what applies, and reads back bit for bit.
  for (const char* line :
       {"type = \"capillary\"", "gas = \"Ar\"", "pressure = \"40000 Pa\"", "temperature = \"298.15 K\"",
        "radius = \"1e-04 m\"", "mode_model = \"reduced\"", "cladding = \"index\"", "cladding_index = 1.46",
        "cladding_extinction = 0.0", "raman = \"none\"", "energy = \"1e-04 J\"", "wavelength = \"8e-07 m\""})
    EXPECT_NE(r.canonical.find(std::string("\n") + line + "\n"), std::string::npos) << line << "\n" << r.canonical;
  for (const char* key : {"betas", "gamma", "loss", "raman_fraction", "helium_sellmeier", "peak_power"})
    EXPECT_EQ(r.canonical.find(std::string("\n") + key + " = "), std::string::npos) << key << "\n" << r.canonical;
  const Recipe again = parse_recipe(r.canonical, "canonical.toml");
  expect_same(again.config, r.config);
  EXPECT_EQ(again.canonical, r.canonical);
  EXPECT_EQ(config_hash(again.config), config_hash(r.config));

  // Defaults of a capillary: helium at 1 bar and 20 °C in 125 µm, full mode, silica wall.
  const FibreConfig d = parse_recipe("[fibre]\ntype = \"capillary\"\n", "d.toml").config.fibre;
  EXPECT_EQ(d.gas, gas::Species::He);
  EXPECT_EQ(d.pressure, 1e5);
  EXPECT_EQ(d.temperature, 293.15);
  EXPECT_EQ(d.radius, 125e-6);
  EXPECT_EQ(d.mode_model, capillary::ModeForm::full);
  EXPECT_EQ(d.cladding, CladdingKind::silica);
  EXPECT_EQ(d.helium_sellmeier, gas::HeliumForm::ermolov);
  EXPECT_EQ(d.raman, RamanModel::none);
  EXPECT_TRUE(d.self_steepening);
  // An explicit "none" is accepted; an explicit type = "coefficients" is the default.
  EXPECT_NO_THROW(parse_recipe("[fibre]\ntype = \"capillary\"\nraman = \"none\"\n", "n.toml"));
  expect_same(parse_recipe("[fibre]\ntype = \"coefficients\"\n", "c.toml").config, Config{});
}

TEST(Recipe, RamanFractionDefaultsPerModel) {
  EXPECT_EQ(parse_recipe("[fibre]\nraman = \"lin-agrawal\"\n", "r").config.fibre.raman_fraction, 0.245);
  EXPECT_EQ(parse_recipe("[fibre]\nraman = \"none\"\n", "r").config.fibre.raman_fraction, 0.0);
  EXPECT_EQ(parse_recipe("[fibre]\nraman = \"lin-agrawal\"\nraman_fraction = 0.2\n", "r").config.fibre.raman_fraction,
            0.2);
}

TEST(Recipe, UserPulseFromCsvAndNpy) {
  testing::TempDir dir;
  {
    std::ofstream csv(dir.path() / "field.csv");
    csv << "# T (fs), Re A, Im A (sqrt(W))\nt_fs, re, im\n-100, 0.5, 0\n0, 100, -2.5\n\n100.5, 0.25, 1e-3\n";
  }
  const std::string recipe = "[pulse]\nshape = \"user\"\nuser_file = \"field.csv\"\n";
  const Recipe r = parse_recipe(recipe, (dir.path() / "r.toml").string());
  EXPECT_EQ(r.config.pulse.user_time, (std::vector<double>{-100e-15, 0.0, 100.5e-15}));
  EXPECT_EQ(r.config.pulse.user_re, (std::vector<double>{0.5, 100, 0.25}));
  EXPECT_EQ(r.config.pulse.user_im, (std::vector<double>{0, -2.5, 1e-3}));
  // The canonical form carries the samples themselves: no file needed to rebuild the config.
  expect_same(parse_config(r.canonical, "canonical"), r.config);

  const std::vector<double> values{-50, 1, 2, 50, 3, 4};
  npy::save(dir.path() / "field.npy", values, Shape{2, 3}, DType::f64);
  const Recipe n =
      parse_recipe("[pulse]\nshape = \"user\"\nuser_file = \"field.npy\"\n", (dir.path() / "r.toml").string());
  EXPECT_EQ(n.config.pulse.user_time, (std::vector<double>{-50e-15, 50e-15}));
  EXPECT_EQ(n.config.pulse.user_re, (std::vector<double>{1, 3}));
  EXPECT_EQ(n.config.pulse.user_im, (std::vector<double>{2, 4}));
}

TEST(Recipe, MessagesNameTheSourceLine) {
  try {
    parse_recipe("[grid]\npoints = 8192\n\n[fibre]\nlength = -1\n", "bad.toml");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "[prop.recipe] fibre.length: must be > 0, got -1 m");
  }
  try {
    parse_recipe("[grid]\npoints = 8192\n\n[fibre]\nlength = \"3 kg\"\n", "bad.toml");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(bad.toml:5)"), std::string::npos) << e.what();
  }
}

struct BadRecipe {
  const char* what;
  const char* text;
  const char* message;  ///< expected in the error message (after "[prop.recipe] ")
};

// One entry per class of mistake; each message names the key path.
const BadRecipe kBadRecipes[] = {
    {"toml syntax", "[grid\npoints = 1\n", "bad.toml:1:6: not valid TOML"},
    {"unknown key", "[fibre]\nlenght = 1\n", "fibre.lenght: unknown key; did you mean 'fibre.length'?"},
    {"key in the wrong section", "[pulse]\ngamma = 0.1\n", "pulse.gamma: unknown key; did you mean 'fibre.gamma'?"},
    {"unknown section", "[fiber]\nlength = 1\n", "fiber: unknown section; did you mean 'fibre'?"},
    {"top-level key", "length = 1\n", "length: unknown key; did you mean 'fibre.length'?"},
    {"section not a table", "grid = 5\n", "grid: expected a [grid] section, got an integer"},
    {"unknown unit", "[fibre]\nlength = \"15 kg\"\n", "fibre.length: unknown unit 'kg', expected a length"},
    {"unit of another dimension", "[fibre]\nlength = \"15 fs\"\n",
     "fibre.length: unit 'fs' is a time (s, ms, us, ns, ps, fs, as), expected a length (m, km, cm, mm, um, nm)"},
    {"power for a time", "[pulse]\nfwhm = \"50 kW\"\n",
     "pulse.fwhm: unit 'kW' is a power (W, mW, kW, MW, GW), expected a time"},
    {"β of the wrong order", "[fibre]\nbetas = [\"-11.83 ps^3/km\"]\n",
     "fibre.betas[0]: unit 'ps^3/km' does not fit β2"},
    {"betas_unit without k", "[fibre]\nbetas_unit = \"ps^2/km\"\n",
     "fibre.betas_unit: 'ps^2/km' must be <time>^k/<length>"},
    {"unparsable number", "[fibre]\nlength = \"1.2.3 m\"\n", "fibre.length: '1.2.3' is not a number"},
    {"no number", "[fibre]\nlength = \"abc\"\n", "fibre.length: 'abc' is not a number with a unit"},
    {"number beyond double", "[fibre]\nlength = \"1e400 m\"\n",
     "fibre.length: '1e400' is not a number in the range of double"},
    {"odd points", "[grid]\npoints = 8191\n", "grid.points: must be even, got 8191"},
    {"too few points", "[grid]\npoints = 8\n", "grid.points: too few points: 8"},
    {"frequency window past zero", "[grid]\ncenter_wavelength = \"100 um\"\n", "grid.points: the frequency window"},
    {"window too small for the pulse", "[grid]\ntime_window = \"0.4 ps\"\npoints = 64\n",
     "grid.time_window: too small for the pulse"},
    {"pulse below the resolution", "[pulse]\nfwhm = \"2 fs\"\n", "pulse.fwhm: 2e-15 s spans fewer than 3 samples"},
    {"negative length", "[fibre]\nlength = \"-15 cm\"\n", "fibre.length: must be > 0, got -0.15 m"},
    {"zero length", "[fibre]\nlength = 0\n", "fibre.length: must be > 0, got 0 m"},
    {"nan", "[fibre]\ngamma = nan\n", "fibre.gamma: must be finite"},
    {"inf ratio", "[stepping]\nrtol = inf\n", "stepping.rtol: must be finite"},
    {"inf in a list", "[output]\nsave_z = [0.0, inf]\n", "output.save_z[1]: must be finite"},
    {"fraction out of range", "[fibre]\nraman_fraction = 1.5\n", "fibre.raman_fraction: must be in [0, 1], got 1.5"},
    {"window edge out of range", "[window]\ntime_edge = 0.7\n", "window.time_edge: must be in [0, 0.5]"},
    {"rtol out of range", "[stepping]\nrtol = 2\n", "stepping.rtol: must be in (0, 1)"},
    {"negative loss", "[fibre]\nloss = \"-1 dB/km\"\n", "fibre.loss: must be ≥ 0"},
    {"negative seed", "[pulse]\nnoise_seed = -1\n", "pulse.noise_seed: must be ≥ 0, got -1"},
    {"int out of range", "[stepping]\nmax_rejections = 10000000000\n",
     "stepping.max_rejections: 10000000000 is out of range"},
    {"string for an integer", "[grid]\npoints = \"8192\"\n", "grid.points: expected an integer, got a string"},
    {"float for an integer", "[grid]\npoints = 8192.0\n", "grid.points: expected an integer, got a float"},
    {"number for a flag", "[fibre]\nself_steepening = 1\n",
     "fibre.self_steepening: expected true or false, got an integer"},
    {"number for a choice", "[stepping]\nscheme = 3\n",
     "stepping.scheme: expected one of \"rk4ip\", \"erk43ip\", \"dp54ip\""},
    {"unknown choice", "[stepping]\nscheme = \"dp45ip\"\n",
     "stepping.scheme: 'dp45ip' is not one of \"rk4ip\", \"erk43ip\", \"dp54ip\"; did you mean 'dp54ip'?"},
    {"string for a ratio", "[stepping]\nrtol = \"1e-6\"\n", "stepping.rtol: expected a plain number, got a string"},
    {"scalar for a list", "[fibre]\nbetas = 5\n", "fibre.betas: expected an array, got an integer"},
    {"table for a real", "[fibre]\nlength = { a = 1 }\n",
     "fibre.length: expected a number or a string with a unit, got a table"},
    {"table shapes", "[fibre]\nbeta_table_omega = [1e15, 2e15]\nbeta_table_beta = [1.0]\n",
     "fibre.beta_table_beta: has 1 values but fibre.beta_table_omega has 2"},
    {"unsorted table", "[fibre]\nloss_table_omega = [2e15, 1e15]\nloss_table_alpha = [0, 0]\n",
     "fibre.loss_table_omega: must be strictly ascending"},
    {"user pulse without samples", "[pulse]\nshape = \"user\"\n",
     "pulse.user_time: a user pulse needs at least 2 samples"},
    {"user pulse outside the window",
     "[pulse]\nshape = \"user\"\nuser_time = [\"-10 ps\", \"10 ps\"]\nuser_re = [1, 1]\nuser_im = [0, 0]\n",
     "pulse.user_time: the field (-1e-11 s to 1e-11 s) does not fit the time window"},
    {"user samples of unequal length",
     "[pulse]\nshape = \"user\"\nuser_time = [-100, 100]\nuser_re = [1]\nuser_im = [0, 0]\n",
     "pulse.user_re: has 1 values but pulse.user_time has 2"},
    {"user samples for a sech", "[pulse]\nuser_time = [-100, 100]\n",
     "pulse.user_time: a user field is given but pulse.shape is not \"user\""},
    {"missing user file", "[pulse]\nshape = \"user\"\nuser_file = \"no-such-file.csv\"\n",
     "pulse.user_file 'no-such-file.csv': cannot open the file"},
    {"user file and samples", "[pulse]\nshape = \"user\"\nuser_file = \"a.csv\"\nuser_time = [0, 1]\n",
     "pulse.user_file: give either the file or"},
    {"schedule end", "[stepping]\nadaptive = false\nschedule = [0.05, 0.1]\n",
     "stepping.schedule: must end at fibre.length"},
    {"initial step beyond the fibre", "[stepping]\ninitial_step = \"1 m\"\n",
     "stepping.initial_step: must be in (0, fibre.length]"},
    {"min above max", "[stepping]\nmin_step = \"1 mm\"\nmax_step = \"0.1 mm\"\n",
     "stepping.min_step: (0.001 m) exceeds stepping.max_step"},
    {"one plane", "[output]\nn_save = 1\n", "output.n_save: must be ≥ 2"},
    {"plane beyond the fibre", "[output]\nsave_z = [0, 0.2]\n", "output.save_z: planes must lie in [0, fibre.length]"},
    {"scan of an unknown key", "[scan]\n\"pulse.peak_pwr\" = [1]\n",
     "scan.pulse.peak_pwr: 'pulse.peak_pwr' is not a configuration key; did you mean 'pulse.peak_power'?"},
    {"scan of a list", "[scan]\n\"fibre.betas\" = [[1.0]]\n",
     "scan.fibre.betas: only single-valued keys can be scanned"},
    {"scan without values", "[scan]\n\"fibre.length\" = []\n",
     "scan.fibre.length: expected a non-empty array of values"},
    {"scan value out of range", "[scan]\n\"fibre.length\" = [\"1 m\", \"-1 m\"]\n",
     "scan.fibre.length[1]: with this value, fibre.length: must be > 0"},
    {"scan value of a wrong unit", "[scan]\n\"pulse.peak_power\" = [\"5 kg\"]\n",
     "pulse.peak_power: unknown unit 'kg'"},
    {"ensemble of none", "[ensemble]\nmembers = 0\n", "ensemble.members: must be in [1, 1000000], got 0"},
    // Capillaries: keys that do not apply, the gas's state, the wall, the frequency window.
    {"betas for a capillary", "[fibre]\ntype = \"capillary\"\nbetas = [-20.0]\n",
     "fibre.betas: applies to fibre.type = \"coefficients\" only"},
    {"gamma for a capillary", "[fibre]\ntype = \"capillary\"\ngamma = 0.1\n",
     "fibre.gamma: applies to fibre.type = \"coefficients\" only"},
    {"loss for a capillary", "[fibre]\ntype = \"capillary\"\nloss = \"1 dB/m\"\n",
     "fibre.loss: applies to fibre.type = \"coefficients\" only"},
    {"beta table for a capillary",
     "[fibre]\ntype = \"capillary\"\nbeta_table_omega = [1, 2, 3, 4]\nbeta_table_beta = [1, 2, 3, 4]\n",
     "fibre.beta_table_omega: applies to fibre.type = \"coefficients\" only"},
    {"loss table for a capillary",
     "[fibre]\ntype = \"capillary\"\nloss_table_omega = [1, 2]\nloss_table_alpha = [0, 0]\n",
     "fibre.loss_table_omega: applies to fibre.type = \"coefficients\" only"},
    {"Raman parameter for a capillary", "[fibre]\ntype = \"capillary\"\nraman_tau1 = 12\n",
     "fibre.raman_tau1: applies to fibre.type = \"coefficients\" only"},
    {"betas_unit for a capillary", "[fibre]\ntype = \"capillary\"\nbetas_unit = \"fs^k/mm\"\n",
     "fibre.betas_unit: applies to fibre.type = \"coefficients\" only"},
    {"Raman model for a capillary", "[fibre]\ntype = \"capillary\"\nraman = \"blow-wood\"\n",
     "fibre.raman: a gas-filled capillary has no Raman response here"},
    {"gas for a fibre of coefficients", "[fibre]\ngas = \"Ar\"\n",
     "fibre.gas: applies to fibre.type = \"capillary\" only"},
    {"pressure for a fibre of coefficients", "[fibre]\npressure = \"1 bar\"\n",
     "fibre.pressure: applies to fibre.type = \"capillary\" only"},
    {"radius for a fibre of coefficients", "[fibre]\nradius = \"75 um\"\n",
     "fibre.radius: applies to fibre.type = \"capillary\" only"},
    {"wall index for a fibre of coefficients", "[fibre]\ncladding_index = 1.5\n",
     "fibre.cladding_index: applies to a capillary with fibre.cladding = \"index\" only"},
    {"wall index for a silica wall", "[fibre]\ntype = \"capillary\"\ncladding = \"silica\"\ncladding_index = 1.5\n",
     "fibre.cladding_index: applies to a capillary with fibre.cladding = \"index\" only"},
    {"helium form for argon", "[fibre]\ntype = \"capillary\"\ngas = \"Ar\"\nhelium_sellmeier = \"borzsonyi\"\n",
     "fibre.helium_sellmeier: applies to a capillary filled with He (fibre.gas = \"He\") only"},
    {"unknown fibre type", "[fibre]\ntype = \"capilary\"\n",
     "fibre.type: 'capilary' is not one of \"coefficients\", \"capillary\"; did you mean 'capillary'?"},
    {"unknown gas", "[fibre]\ntype = \"capillary\"\ngas = \"he\"\n",
     "fibre.gas: 'he' is not one of \"He\", \"Ne\", \"Ar\", \"Kr\", \"Xe\", \"N2\", \"air\"; did you mean 'He'?"},
    {"unknown mode model", "[fibre]\ntype = \"capillary\"\nmode_model = \"exact\"\n",
     "fibre.mode_model: 'exact' is not one of \"full\", \"reduced\""},
    {"pressure in a length unit", "[fibre]\ntype = \"capillary\"\npressure = \"5 m\"\n",
     "fibre.pressure: unit 'm' is a length (m, km, cm, mm, um, nm), expected a pressure (Pa, hPa, kPa, MPa, mbar, bar"},
    {"unknown pressure unit", "[fibre]\ntype = \"capillary\"\npressure = \"5 psi\"\n",
     "fibre.pressure: unknown unit 'psi', expected a pressure"},
    {"temperature in a pressure unit", "[fibre]\ntype = \"capillary\"\ntemperature = \"5 bar\"\n",
     "fibre.temperature: unit 'bar' is a pressure"},
    {"negative pressure", "[fibre]\ntype = \"capillary\"\npressure = \"-1 bar\"\n",
     "fibre.pressure: must be in [0, 150] bar, got -1 bar"},
    {"pressure beyond the table", "[fibre]\ntype = \"capillary\"\npressure = \"200 bar\"\n",
     "fibre.pressure: must be in [0, 150] bar, got 200 bar"},
    {"temperature below the table", "[fibre]\ntype = \"capillary\"\ntemperature = \"-40 degC\"\n",
     "fibre.temperature: must be in [250, 500] K (the domain of the equations of state), got 233.15 K"},
    {"condensing xenon",
     "[fibre]\ntype = \"capillary\"\ngas = \"Xe\"\ntemperature = \"260 K\"\npressure = \"40 bar\"\n",
     "fibre.pressure: "},
    {"zero radius", "[fibre]\ntype = \"capillary\"\nradius = 0\n", "fibre.radius: must be > 0, got 0 m"},
    {"wall of vacuum", "[fibre]\ntype = \"capillary\"\ncladding_index = 1.0\n", "fibre.cladding_index: "},
    {"wall index not positive", "[fibre]\ntype = \"capillary\"\ncladding_index = -1.5\n",
     "fibre.cladding_index: must be > 0, got -1.5"},
    {"wall that amplifies", "[fibre]\ntype = \"capillary\"\ncladding_extinction = -0.1\n",
     "fibre.cladding_extinction: must be ≥ 0 (absorption), got -0.1"},
    {"grid beyond the gas's resonance",
     "[grid]\ncenter_wavelength = \"200 nm\"\npoints = 4096\ntime_window = \"1.5 ps\"\n"
     "[fibre]\ntype = \"capillary\"\ngas = \"Xe\"\n",
     "grid.points: the frequency window ["},
    {"capillary grid through zero frequency",
     "[grid]\ncenter_wavelength = \"800 nm\"\npoints = 8192\ntime_window = \"1 ps\"\n[fibre]\ntype = \"capillary\"\n",
     "grid.points: the frequency window (±"},
    // Launch by energy, carriers of their own.
    {"peak power and energy", "[pulse]\npeak_power = \"1 kW\"\nenergy = \"1 nJ\"\n",
     "pulse.peak_power: give either pulse.peak_power or pulse.energy, not both"},
    {"zero energy", "[pulse]\nenergy = 0\n", "pulse.energy: must be > 0, got 0 J"},
    {"negative energy", "[pulse]\nenergy = \"-1 uJ\"\n", "pulse.energy: must be > 0, got -1e-06 J"},
    {"energy in a power unit", "[pulse]\nenergy = \"20 W\"\n",
     "pulse.energy: unit 'W' is a power (W, mW, kW, MW, GW), expected an energy (J, kJ, mJ, uJ, nJ, pJ, fJ)"},
    {"zero carrier wavelength", "[pulse]\nwavelength = 0\n", "pulse.wavelength: must be > 0, got 0 m"},
    {"carrier outside the frequency window", "[pulse]\nwavelength = \"400 nm\"\n",
     "pulse.wavelength: the pulse's spectrum (carrier "},
    // Scans that would mix what applies.
    {"scan of the fibre type", "[scan]\n\"fibre.type\" = [\"capillary\"]\n",
     "scan.fibre.type: cannot be scanned (the keys that apply differ between fibre types)"},
    {"scan of a capillary key on a fibre of coefficients", "[scan]\n\"fibre.pressure\" = [\"1 bar\"]\n",
     "scan.fibre.pressure: applies to fibre.type = \"capillary\" only"},
    {"scan of a coefficient on a capillary", "[fibre]\ntype = \"capillary\"\n[scan]\n\"fibre.gamma\" = [0.1]\n",
     "scan.fibre.gamma: applies to fibre.type = \"coefficients\" only"},
    {"scan of energy under a peak power", "[pulse]\npeak_power = \"1 kW\"\n[scan]\n\"pulse.energy\" = [\"1 nJ\"]\n",
     "scan.pulse.energy[0]: with this value, pulse.peak_power (given in the recipe) no longer applies"},
    {"scan of peak power under an energy", "[pulse]\nenergy = \"1 nJ\"\n[scan]\n\"pulse.peak_power\" = [\"1 kW\"]\n",
     "scan.pulse.peak_power: give either pulse.peak_power or pulse.energy, not both"},
    {"scan of energy and peak power", "[scan]\n\"pulse.peak_power\" = [\"1 kW\"]\n\"pulse.energy\" = [\"1 nJ\"]\n",
     "scan.pulse.energy: pulse.peak_power is scanned as well; launch by one of them"},
    {"scan of a zero energy", "[scan]\n\"pulse.energy\" = [\"1 nJ\", 0]\n",
     "scan.pulse.energy[1]: must be > 0, got 0 J"},
    {"scan of a pressure out of range", "[fibre]\ntype = \"capillary\"\n[scan]\n\"fibre.pressure\" = [1, 500]\n",
     "scan.fibre.pressure[1]: with this value, fibre.pressure: must be in [0, 150] bar, got 500 bar"},
    {"scan of a wall that drops a key",
     "[fibre]\ntype = \"capillary\"\ncladding_index = 1.5\n[scan]\n\"fibre.cladding\" = [\"index\", \"silica\"]\n",
     "scan.fibre.cladding[1]: with this value, fibre.cladding_index (given in the recipe) no longer applies"},
    {"ensemble key typo", "[ensemble]\nmember = 3\n", "ensemble.member: unknown key; did you mean 'ensemble.members'?"},
    {"ensemble without members", "[ensemble]\nseed = 1\n", "ensemble.members: missing"},
};

TEST(Recipe, EveryBadRecipeIsRefusedNamingTheKey) {
  for (const auto& bad : kBadRecipes) {
    SCOPED_TRACE(bad.what);
    try {
      parse_recipe(bad.text, "bad.toml");
      ADD_FAILURE() << "accepted: " << bad.text;
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_TRUE(message.starts_with("[prop.recipe] ")) << message;
      EXPECT_NE(message.find(bad.message), std::string::npos)
          << "message: " << message << "\nexpected: " << bad.message;
    }
  }
}

/// Random damage to a recipe text: byte flips, truncations, insertions of TOML-significant
/// characters, and swaps of the keys or values of two lines.
std::string mutate(const std::string& text, std::mt19937_64& rng) {
  std::string s = text;
  const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  constexpr std::string_view kSignificant = "[]=\"'.,#{}\n-+e0123456789 \\\x01\xff";
  const int edits = 1 + static_cast<int>(pick(3));
  for (int e = 0; e < edits && !s.empty(); ++e) {
    switch (pick(5)) {
      case 0: s[pick(s.size())] ^= static_cast<char>(1u << pick(8)); break;
      case 1: s.resize(pick(s.size())); break;
      case 2: s.insert(pick(s.size() + 1), 1, kSignificant[pick(kSignificant.size())]); break;
      case 3:
      case 4: {  // swap the key (or the value) parts of two "key = value" lines
        std::vector<std::string> lines;
        std::stringstream in(s);
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        const std::size_t a = pick(lines.size()), b = pick(lines.size());
        const auto ea = lines[a].find('='), eb = lines[b].find('=');
        if (ea == std::string::npos || eb == std::string::npos) break;
        if (pick(2) == 0) {
          const std::string ka = lines[a].substr(0, ea), kb = lines[b].substr(0, eb);
          lines[a] = kb + lines[a].substr(ea);
          lines[b] = ka + lines[b].substr(eb);
        } else {
          const std::string va = lines[a].substr(ea), vb = lines[b].substr(eb);
          lines[a] = lines[a].substr(0, ea) + vb;
          lines[b] = lines[b].substr(0, eb) + va;
        }
        s.clear();
        for (const auto& line : lines) s += line + "\n";
        break;
      }
    }
  }
  return s;
}

TEST(Recipe, FuzzedRecipesOnlyEverThrowInvalidArgument) {
  // The examples plus a scan and an ensemble, so those readers are fuzzed as well.
  const std::string dudley = read_text(std::filesystem::path(LOCKSTEP_EXAMPLES) / "dudley.toml") +
                             "\n[scan]\n\"pulse.peak_power\" = [\"5 kW\", \"10 kW\"]\n\"fibre.gamma\" = [0.1, 0.11]\n"
                             "\n[ensemble]\nmembers = 3\nseed = 7\n";
  const std::string capillary = read_text(std::filesystem::path(LOCKSTEP_EXAMPLES) / "capillary_he.toml") +
                                "\n[scan]\n\"fibre.pressure\" = [\"1 bar\", 2]\n\"pulse.energy\" = [\"0.4 mJ\", 500]\n";
  ASSERT_NO_THROW(parse_recipe(dudley, "fuzz.toml"));
  ASSERT_NO_THROW(parse_recipe(capillary, "fuzz.toml"));
  std::mt19937_64 rng(testing::fresh_seed());
  int accepted = 0, refused = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string text = mutate(i % 3 == 2 ? capillary : dudley, rng);
    try {
      const Recipe r = parse_recipe(text, "fuzz.toml");
      // Whatever is accepted is a valid configuration whose canonical form reads back.
      const auto again = parse_config(r.canonical, "canonical");
      EXPECT_EQ(config_hash(again), config_hash(r.config)) << text;
      ++accepted;
    } catch (const std::invalid_argument& e) {
      ++refused;
      EXPECT_TRUE(std::string(e.what()).starts_with("[prop.")) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not std::invalid_argument: " << e.what() << "\nrecipe:\n" << text;
    }
  }
  // Both outcomes must occur for the fuzzing to mean anything.
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
  std::printf("fuzzed recipes: %d accepted, %d refused\n", accepted, refused);
}

}  // namespace
}  // namespace lockstep::prop
