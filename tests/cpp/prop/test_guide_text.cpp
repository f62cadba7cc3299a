// The guide calculator's text queries (include/lockstep/prop/guide_text.hpp): the recipes' unit
// parser reading pressures, temperatures and energies as well, complex cladding indices, the
// defaults, and every refusal with its "[prop.mode] <field>: …" message.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "lockstep/prop/guide_text.hpp"
#include "test_helpers.hpp"

namespace lockstep::prop {
namespace {

using testing::message_of;

guide::QueryText minimal() {
  guide::QueryText t;
  t.gas = "he";
  t.pressure = "5 bar";
  t.radius = "75 um";
  t.wavelength = "800 nm";
  return t;
}

TEST(GuideText, UnitsAsRecipesWriteThem) {
  guide::QueryText t = minimal();
  guide::Query q = guide::parse_query(t);
  EXPECT_EQ(q.species, gas::Species::He);
  EXPECT_EQ(q.pressure, 5e5);  // decimal-prefix units are exact
  EXPECT_EQ(q.capillary.radius, 75e-6);
  EXPECT_EQ(q.wavelength, 800e-9);
  EXPECT_EQ(q.temperature, gas::kDefaultTemperature);
  EXPECT_EQ(q.capillary.form, capillary::ModeForm::full);
  EXPECT_EQ(q.capillary.cladding.kind, capillary::Cladding::Kind::silica);
  EXPECT_EQ(q.helium, gas::kDefaultHeliumForm);
  EXPECT_EQ(q.search_min, capillary::kSilicaMinWavelength);
  EXPECT_EQ(q.search_max, capillary::kSilicaMaxWavelength);
  EXPECT_FALSE(q.pulse.has_value());

  const auto pressure = [&](const char* text) {
    guide::QueryText u = minimal();
    u.pressure = text;
    return guide::parse_query(u).pressure;
  };
  EXPECT_EQ(pressure("500 mbar"), 5e4);
  EXPECT_EQ(pressure("50 kPa"), 5e4);
  EXPECT_EQ(pressure("1.5 MPa"), 1.5e6);
  EXPECT_EQ(pressure("300 hPa"), 3e4);
  EXPECT_EQ(pressure("1 atm"), 101325.0);
  EXPECT_DOUBLE_EQ(pressure("760 Torr"), 101325.0);
  EXPECT_EQ(pressure("12345.5"), 12345.5);  // bare: Pa
  EXPECT_EQ(pressure("12345.5 Pa"), 12345.5);

  const auto temperature = [&](const char* text) {
    guide::QueryText u = minimal();
    u.temperature = text;
    return guide::parse_query(u).temperature;
  };
  EXPECT_EQ(temperature("20 degC"), 293.15);
  EXPECT_EQ(temperature("20 \xC2\xB0"
                        "C"),
            293.15);  // °C
  EXPECT_EQ(temperature("-10 degC"), 263.15);
  EXPECT_EQ(temperature("300 K"), 300.0);
  EXPECT_EQ(temperature("300"), 300.0);

  t.energy = "0.5 mJ";
  t.duration = "30 fs";
  t.shape = "gaussian";
  t.model = "reduced";
  t.helium = "borzsonyi";
  t.search_min = "0.1 um";
  t.search_max = "2000 nm";
  t.cladding_index = "1.45+0.001i";
  q = guide::parse_query(t);
  ASSERT_TRUE(q.pulse.has_value());
  EXPECT_EQ(q.pulse->energy, 0.5e-3);
  EXPECT_EQ(q.pulse->fwhm, 30e-15);
  EXPECT_EQ(q.pulse->shape, PulseShape::gaussian);
  EXPECT_EQ(q.capillary.form, capillary::ModeForm::reduced);
  EXPECT_EQ(q.helium, gas::HeliumForm::borzsonyi);
  EXPECT_EQ(q.search_min, 0.1e-6);
  EXPECT_EQ(q.search_max, 2e-6);
  EXPECT_EQ(q.capillary.cladding.kind, capillary::Cladding::Kind::fixed);
  EXPECT_EQ(q.capillary.cladding.index, capillary::Complex(1.45, 0.001));
  t.energy = "5e-4";  // bare: J and s
  t.duration = "3e-14";
  q = guide::parse_query(t);
  EXPECT_EQ(q.pulse->energy, 5e-4);
  EXPECT_EQ(q.pulse->fwhm, 3e-14);
}

TEST(GuideText, ComplexIndices) {
  using C = capillary::Complex;
  EXPECT_EQ(guide::parse_complex_index("1.45"), C(1.45, 0));
  EXPECT_EQ(guide::parse_complex_index("1.45+0.001i"), C(1.45, 0.001));
  EXPECT_EQ(guide::parse_complex_index(" 1.45 + 1e-3 j "), C(1.45, 1e-3));
  EXPECT_EQ(guide::parse_complex_index("1.45+1e+2i"), C(1.45, 100));
  EXPECT_EQ(guide::parse_complex_index("1e-1+2E-3i"), C(0.1, 2e-3));
  EXPECT_EQ(guide::parse_complex_index("0.036759+5.5698i"), C(0.036759, 5.5698));
  EXPECT_EQ(guide::parse_complex_index("5.6i"), C(0, 5.6));
  EXPECT_EQ(guide::parse_complex_index("1.5+i"), C(1.5, 1));
  for (const char* bad : {"", "abc", "1.45+", "1.45+0.001", "1.45++0.1i", "1.45+0.1ii", "i1", "1,45", "nan", "inf"}) {
    const std::string m = message_of([&] { guide::parse_complex_index(bad); });
    EXPECT_NE(m.find("[prop.mode] cladding_index:"), std::string::npos) << bad << ": " << m;
  }
  const std::string m = message_of([] { guide::parse_complex_index("1.45-0.001i"); });
  EXPECT_NE(m.find("negative imaginary part"), std::string::npos) << m;
}

TEST(GuideText, RefusalsNameTheField) {
  const auto expect = [](guide::QueryText t, const char* text) {
    const std::string m = message_of([&] { guide::parse_query(t); });
    EXPECT_NE(m.find(text), std::string::npos) << m;
  };
  guide::QueryText t = minimal();
  t.gas = "argon";
  expect(t, "[prop.mode] gas: unknown gas \"argon\": expected one of He, Ne, Ar, Kr, Xe, N2, air");
  t = minimal();
  t.gas = "";
  expect(t, "[prop.mode] gas: required");
  t = minimal();
  t.pressure = "";
  expect(t, "[prop.mode] pressure: required");
  t = minimal();
  t.pressure = "5 bars";
  expect(t, "[prop.mode] pressure: unknown unit 'bars', expected a pressure (Pa, hPa, kPa, MPa, mbar, bar, atm, Torr)");
  t = minimal();
  t.pressure = "5 nm";
  expect(t, "[prop.mode] pressure: unit 'nm' is a length (m, km, cm, mm, um, nm), expected a pressure");
  t = minimal();
  t.radius = "75 bar";
  expect(t, "[prop.mode] radius: unit 'bar' is a pressure");
  t = minimal();
  t.wavelength = "eight hundred nm";
  expect(t, "[prop.mode] wavelength: 'eight hundred nm' is not a number with a unit");
  t = minimal();
  t.temperature = "20 C";
  expect(t, "[prop.mode] temperature: unknown unit 'C', expected a temperature (K, degC)");
  t = minimal();
  t.model = "exact";
  expect(t, "[prop.mode] model: 'exact' is not full or reduced");
  t = minimal();
  t.shape = "square";
  expect(t, "[prop.mode] shape: 'square' is not sech or gaussian");
  t = minimal();
  t.helium = "peck";
  expect(t, "[prop.mode] helium: 'peck' is not ermolov or borzsonyi");
  t = minimal();
  t.energy = "1 mJ";
  expect(t, "[prop.mode] energy: a pulse needs both energy and duration");
  t = minimal();
  t.duration = "30 fs";
  expect(t, "[prop.mode] duration: a pulse needs both energy and duration");
  t = minimal();
  t.energy = "1 mW";
  t.duration = "30 fs";
  expect(t, "[prop.mode] energy: unit 'mW' is a power (W, mW, kW, MW, GW), expected an energy");
  t = minimal();
  t.search_min = "1e400";
  expect(t, "[prop.mode] search_min: '1e400' is not a number in the range of double");
}

}  // namespace
}  // namespace lockstep::prop
