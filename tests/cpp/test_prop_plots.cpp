// Tests of the figures of propagation results (lockstep/prop/plots.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>

#include "lockstep/core/files.hpp"
#include "lockstep/prop/plots.hpp"
#include "png_decode.hpp"

namespace plot = lockstep::plot;
namespace prop = lockstep::prop;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kC = 299792458.0;

// A frequency grid ascending in ω around 800 nm, as a result file holds it, as wavelengths (m):
// descending. Its spectra: Gaussians in λ of 1/e half-width w(z) = 10 nm·(1 + z/0.1 m), and the
// pulse in time a Gaussian of 1/e half-width 50 fs·(1 + z/0.1 m), peak power 2 kW at z = 0.
struct Propagation {
  std::vector<double> z, wavelength, t;
  std::vector<std::vector<double>> spectra, power;
};

double width_nm(double z) { return 10 * (1 + z / 0.1); }

Propagation make_run(int n = 2048, int planes = 40) {
  Propagation r;
  const double omega0 = 2 * M_PI * kC / 800e-9, domega = 2 * M_PI / 5e-12;
  for (int k = 0; k < n; ++k) r.wavelength.push_back(2 * M_PI * kC / (omega0 + (k - n / 2) * domega));
  for (int j = 0; j < n; ++j) r.t.push_back((j - n / 2) * 5e-12 / n);
  for (int i = 0; i < planes; ++i) {
    const double z = 0.15 * i / (planes - 1);
    r.z.push_back(z);
    std::vector<double> s, p;
    for (double l : r.wavelength) s.push_back(std::exp(-std::pow((l * 1e9 - 800) / width_nm(z), 2)));
    for (double t : r.t) p.push_back(2e3 / (1 + z / 0.1) * std::exp(-std::pow(t / (50e-15 * (1 + z / 0.1)), 2)));
    r.spectra.push_back(s);
    r.power.push_back(p);
  }
  return r;
}

template <class T> std::vector<T> reversed(std::vector<T> v) {
  std::reverse(v.begin(), v.end());
  return v;
}

std::filesystem::path temp_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() / ("lockstep_prop_plots_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST(PropPlots, SpectralEvolutionRangeAndColours) {
  const Propagation r = make_run();
  const plot::Figure figure = prop::spectral_evolution_figure(r.z, r.wavelength, r.spectra);
  const plot::PanelLayout box = figure.layout();
  // Automatic range: where the widest spectrum (the last) is within 40 dB of the peak,
  // |λ − 800 nm| ≤ w·sqrt(4 ln 10), plus 5% of that span each side. Tolerance: one grid step
  // (about 0.43 nm at 800 nm here: λ²·Δω/(2πc)).
  const double half = width_nm(0.15) * std::sqrt(4 * std::log(10.0)) * 1.1;
  EXPECT_NEAR(box.x_min, 800 - half, 0.6);
  EXPECT_NEAR(box.x_max, 800 + half, 0.6);
  // z from the first plane to the last, in mm.
  EXPECT_DOUBLE_EQ(box.y_min, 0);
  EXPECT_DOUBLE_EQ(box.y_max, 150);
  const plot::Image image = figure.render();
  // The peak (0 dB) is the brightest colour of inferno, a wing below −40 dB its darkest.
  const int top_row = static_cast<int>(box.pixel_y(150)) + 2;  // pixel rows run downwards
  EXPECT_EQ(image.at(static_cast<int>(box.pixel_x(800)), top_row), plot::colormap_color(plot::Colormap::inferno, 1));
  EXPECT_EQ(image.at(box.left + 1, static_cast<int>(box.pixel_y(1))), plot::colormap_color(plot::Colormap::inferno, 0));
  // At z = 0, 10·log10(e^{−(Δλ/w)²}) = −20 dB at Δλ = w·sqrt(2 ln 10): halfway up the colour map
  // (±1.5 dB for the pixel's width and the map's 8-bit steps).
  const double x20 = 800 + width_nm(0) * std::sqrt(2 * std::log(10.0));
  const plot::Color c = image.at(static_cast<int>(box.pixel_x(x20)), static_cast<int>(box.pixel_y(0)) - 2);
  const plot::Color lo = plot::colormap_color(plot::Colormap::inferno, 0.5 - 1.5 / 40);
  const plot::Color hi = plot::colormap_color(plot::Colormap::inferno, 0.5 + 1.5 / 40);
  EXPECT_TRUE(c.r >= std::min(lo.r, hi.r) && c.r <= std::max(lo.r, hi.r))
      << int(c.r) << " " << int(lo.r) << " " << int(hi.r);
}

TEST(PropPlots, WavelengthOrderDoesNotMatter) {
  const Propagation r = make_run(512, 10);
  std::vector<std::vector<double>> flipped;
  for (const auto& s : r.spectra) flipped.push_back(reversed(s));
  const auto a = prop::spectral_evolution_figure(r.z, r.wavelength, r.spectra).render();
  const auto b = prop::spectral_evolution_figure(r.z, reversed(r.wavelength), flipped).render();
  EXPECT_EQ(a.rgb, b.rgb);
  const auto sa = prop::spectrum_figure(r.wavelength, {r.spectra[3]}).render();
  const auto sb = prop::spectrum_figure(reversed(r.wavelength), {flipped[3]}).render();
  EXPECT_EQ(sa.rgb, sb.rgb);
}

TEST(PropPlots, NonPositiveWavelengthsAndNonFiniteValuesDropped) {
  Propagation r = make_run(512, 6);
  // A grid wider than ω0 reaches ω ≤ 0: those wavelengths are negative or infinite.
  r.wavelength[0] = -3e-6;
  r.wavelength[1] = std::numeric_limits<double>::infinity();
  r.spectra[2][100] = kNaN;
  r.spectra[3][200] = -1;  // not a power
  EXPECT_NO_THROW(prop::spectral_evolution_figure(r.z, r.wavelength, r.spectra).render());
  EXPECT_NO_THROW(prop::spectrum_figure(r.wavelength, {r.spectra[2]}, {"x"}).render());
  std::vector<std::vector<double>> zeros(r.z.size(), std::vector<double>(r.wavelength.size(), 0.0));
  EXPECT_NO_THROW(prop::spectral_evolution_figure(r.z, r.wavelength, zeros).render());
}

TEST(PropPlots, TemporalEvolutionLinearAndDecibels) {
  const Propagation r = make_run();
  const plot::Figure lin = prop::temporal_evolution_figure(r.z, r.t, r.power);
  const plot::PanelLayout box = lin.layout();
  // Linear: the range keeps power within 1% of the peak (20 W): the last plane reaches out
  // farthest, 0.8 kW·exp(−(T/125 fs)²) ≥ 20 W for |T| ≤ 125 fs·sqrt(ln 40), widened by 5% of
  // the span each side; tolerance one grid step (2.4 fs).
  const double half = 0.125 * std::sqrt(std::log(40.0)) * 1.1;  // ps
  EXPECT_NEAR(box.x_min, -half, 0.003);
  EXPECT_NEAR(box.x_max, half, 0.003);
  const plot::Image image = lin.render();
  EXPECT_EQ(image.at(static_cast<int>(box.pixel_x(0)), static_cast<int>(box.pixel_y(0)) - 1),
            plot::colormap_color(plot::Colormap::viridis, 1));
  // At the end the peak is 2 kW/2.5 = 0.8 kW: 40% up the linear colour map (±1%).
  const plot::Color end = image.at(static_cast<int>(box.pixel_x(0)), static_cast<int>(box.pixel_y(150)) + 1);
  const plot::Color lo = plot::colormap_color(plot::Colormap::viridis, 0.39);
  const plot::Color hi = plot::colormap_color(plot::Colormap::viridis, 0.41);
  EXPECT_TRUE(end.g >= std::min(lo.g, hi.g) && end.g <= std::max(lo.g, hi.g)) << int(end.g);

  const plot::Figure db =
      prop::temporal_evolution_figure(r.z, r.t, r.power, {.decibels = true, .time_range_s = std::pair{-1e-12, 2e-12}});
  const plot::PanelLayout dbox = db.layout();
  EXPECT_DOUBLE_EQ(dbox.x_min, -1);  // ps, as asked
  EXPECT_NEAR(dbox.x_max, 2, 1e-12);
  const plot::Image dimage = db.render();
  // 0.9 ps from the pulse is far below −40 dB: the darkest colour.
  EXPECT_EQ(dimage.at(static_cast<int>(dbox.pixel_x(-0.9)), static_cast<int>(dbox.pixel_y(75))),
            plot::colormap_color(plot::Colormap::viridis, 0));
}

TEST(PropPlots, SpectrumAndCoherencePanels) {
  const Propagation r = make_run(1024, 4);
  std::vector<std::vector<double>> db;
  for (const auto& s : {r.spectra.front(), r.spectra.back()}) {
    std::vector<double> d;
    for (double v : s) d.push_back(10 * std::log10(v) + 3);  // peak at +3 dB; −inf where v = 0
    db.push_back(d);
  }
  const plot::Figure spectrum = prop::spectrum_figure(r.wavelength, db, {"input", "output"}, {.dynamic_range_db = 50});
  const plot::PanelLayout sbox = spectrum.layout();
  EXPECT_NEAR(sbox.y_min, 3 - 50, 1e-6);
  EXPECT_NEAR(sbox.y_max, 3 + 2.5, 1e-6);

  std::vector<double> g12;
  for (double l : r.wavelength) g12.push_back(0.5 + 0.4 * std::tanh((l * 1e9 - 800) / 20));
  const plot::Figure coherence = prop::coherence_figure(r.wavelength, g12, db.back());
  const plot::PanelLayout top = coherence.layout(0, 0), bottom = coherence.layout(1, 0);
  // Stacked panels share the x axis: same limits, same pixel columns.
  EXPECT_EQ(top.left, bottom.left);
  EXPECT_EQ(top.right, bottom.right);
  EXPECT_DOUBLE_EQ(top.x_min, bottom.x_min);
  EXPECT_DOUBLE_EQ(top.x_max, bottom.x_max);
  EXPECT_DOUBLE_EQ(bottom.y_min, 0);
  EXPECT_DOUBLE_EQ(bottom.y_max, 1.05);
  const plot::Image image = coherence.render();
  // |g12| = 0.5 at 800 nm, drawn in the second series colour.
  EXPECT_EQ(image.at(static_cast<int>(bottom.pixel_x(800)), static_cast<int>(bottom.pixel_y(0.5))),
            plot::series_color(1));
}

TEST(PropPlots, BadInputsNamed) {
  const Propagation r = make_run(256, 3);
  auto expect_message = [](auto&& call, const std::string& needle) {
    try {
      call();
      ADD_FAILURE() << "no exception; expected one naming " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_message([&] { prop::spectral_evolution_figure({}, r.wavelength, {}); }, "z");
  expect_message([&] { prop::spectral_evolution_figure(r.z, r.wavelength, {r.spectra[0]}); }, "spectra");
  expect_message([&] { prop::spectral_evolution_figure(r.z, {}, r.spectra); }, "spectra");
  expect_message([&] { prop::spectral_evolution_figure({0.1, 0.0, 0.2}, r.wavelength, r.spectra); }, "z");
  expect_message(
      [&] { prop::spectral_evolution_figure(r.z, std::vector<double>(r.wavelength.size(), -1.0), r.spectra); },
      "wavelength");
  expect_message([&] { prop::spectral_evolution_figure(r.z, r.wavelength, r.spectra, {.dynamic_range_db = 0}); },
                 "dynamic_range_db");
  expect_message(
      [&] {
        prop::spectral_evolution_figure(r.z, r.wavelength, r.spectra, {.wavelength_range_m = std::pair{2e-6, 3e-6}});
      },
      "wavelength");
  expect_message([&] { prop::temporal_evolution_figure(r.z, reversed(r.t), r.power); }, "t");
  expect_message([&] { prop::spectrum_figure(r.wavelength, {}); }, "spectra_db");
  expect_message([&] { prop::spectrum_figure(r.wavelength, r.spectra, {"only one"}); }, "labels");
  expect_message([&] { prop::coherence_figure(r.wavelength, {0.5}, r.spectra[0]); }, "g12");
}

TEST(PropPlots, EveryKindWritesADecodablePng) {
  const Propagation r = make_run(1024, 20);
  const auto dir = temp_dir();
  std::vector<double> db, g12;
  for (double v : r.spectra.back()) db.push_back(10 * std::log10(v));
  for (std::size_t k = 0; k < r.wavelength.size(); ++k) g12.push_back(0.9);
  prop::write_spectral_evolution(dir / "spectral.png", r.z, r.wavelength, r.spectra);
  prop::write_temporal_evolution(dir / "temporal.png", r.z, r.t, r.power, {.title = "Temporal"});
  prop::write_spectrum(dir / "spectrum.png", r.wavelength, {db});
  prop::write_coherence(dir / "coherence.png", r.wavelength, g12, db);
  for (const char* name : {"spectral.png", "temporal.png", "spectrum.png", "coherence.png"}) {
    const auto png = lockstep::test::decode_png(lockstep::read_file(dir / name, "test"));
    EXPECT_EQ(png.width, 1200) << name;
    EXPECT_EQ(png.height, 800) << name;
  }
  std::filesystem::remove_all(dir);
}
