// Tests of the PNG figures (lockstep/core/plot.hpp) and of the QKAN fit figure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>

#include "lockstep/core/files.hpp"
#include "lockstep/core/plot.hpp"
#include "lockstep/qkan/plots.hpp"
#include "png_decode.hpp"
#include "src/core/plot_font.hpp"

namespace plot = lockstep::plot;
using lockstep::test::decode_png;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::filesystem::path temp_dir(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("lockstep_plot_" + name + "_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  return dir;
}

// Relative luminance (Rec. 709 weights on sRGB values; monotone enough to order colours).
double luminance(plot::Color c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b; }

bool is_white(plot::Color c) { return c == plot::Color{255, 255, 255}; }

// The step of a tick list, and whether every tick is an integer multiple of it and the step is
// 1, 2 or 5 × 10^k.
void expect_nice(const plot::Ticks& t, double lo, double hi) {
  ASSERT_GE(t.values.size(), 2u);
  ASSERT_EQ(t.values.size(), t.labels.size());
  const double step = t.values[1] - t.values[0];
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
  EXPECT_TRUE(std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 || std::abs(mantissa - 5) < 1e-9)
      << "step " << step;
  for (std::size_t i = 0; i < t.values.size(); ++i) {
    const double k = t.values[i] / step;
    EXPECT_NEAR(k, std::round(k), 1e-9) << t.values[i];
    EXPECT_GE(t.values[i], lo - 1e-9 * step);
    EXPECT_LE(t.values[i], hi + 1e-9 * step);
    if (i > 0) {
      EXPECT_NEAR(t.values[i] - t.values[i - 1], step, 1e-9 * step);
    }
  }
  // The first tick is the first multiple of the step at or after lo (none was skipped).
  EXPECT_LT(t.values.front() - step, lo);
  EXPECT_GT(t.values.back() + step, hi);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Ticks

TEST(PlotTicks, UnitInterval) {
  const plot::Ticks t = plot::linear_ticks(0, 1, 6);
  expect_nice(t, 0, 1);
  EXPECT_EQ(t.labels, (std::vector<std::string>{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}));
}

TEST(PlotTicks, NegativeToPositive) {
  const plot::Ticks t = plot::linear_ticks(-3.7, 12.2, 8);
  expect_nice(t, -3.7, 12.2);
  EXPECT_EQ(t.labels, (std::vector<std::string>{"-2", "0", "2", "4", "6", "8", "10", "12"}));
}

TEST(PlotTicks, RandomRangesAreNiceAndFew) {
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<double> exponent(-12, 12), unit(-1, 1);
  for (int trial = 0; trial < 2000; ++trial) {
    const double scale = std::pow(10.0, exponent(rng));
    double lo = unit(rng) * scale, hi = unit(rng) * scale;
    if (lo > hi) std::swap(lo, hi);
    if (!(hi - lo > 1e-6 * scale)) continue;
    const int target = 3 + trial % 8;
    const plot::Ticks t = plot::linear_ticks(lo, hi, target);
    SCOPED_TRACE(testing::Message() << "[" << lo << ", " << hi << "] target " << target);
    expect_nice(t, lo, hi);
    // The smallest nice step with at most `target` intervals gives at most target + 1 ticks;
    // where it would give fewer than 3, smaller steps are taken, the first giving 3 or more: a
    // step at least 1/2.5 of one that gave at most 2 ticks over the range, so at most 8.
    EXPECT_GE(t.values.size(), 3u);
    EXPECT_LE(static_cast<int>(t.values.size()), std::max(target + 1, 8));
    // Labels are distinct (enough digits to tell ticks apart).
    for (std::size_t i = 1; i < t.labels.size(); ++i) EXPECT_NE(t.labels[i], t.labels[i - 1]);
  }
}

TEST(PlotTicks, LogDecades) {
  const plot::Ticks t = plot::log_ticks(1e-6, 1e-1, 8);
  ASSERT_EQ(t.values.size(), 6u);
  for (std::size_t i = 0; i < t.values.size(); ++i)
    EXPECT_NEAR(std::log10(t.values[i]), -6.0 + static_cast<double>(i), 1e-12);
  EXPECT_EQ(t.labels.front(), "1e-6");
  EXPECT_EQ(t.labels.back(), "1e-1");
  // Plain numbers when every decade has a short plain form.
  EXPECT_EQ(plot::log_ticks(0.01, 100, 8).labels, (std::vector<std::string>{"0.01", "0.1", "1", "10", "100"}));
}

TEST(PlotTicks, LogManyDecadesThinned) {
  const plot::Ticks t = plot::log_ticks(1e-20, 1e4, 6);
  EXPECT_LE(t.values.size(), 7u);
  ASSERT_GE(t.values.size(), 3u);
  const double ratio = std::log10(t.values[1] / t.values[0]);
  EXPECT_NEAR(ratio, std::round(ratio), 1e-9);
  EXPECT_GE(ratio, 4.0 - 1e-9);  // 25 decades over at most 6 intervals
}

TEST(PlotTicks, LogLessThanTwoDecades) {
  const plot::Ticks t = plot::log_ticks(0.15, 1.1, 6);
  EXPECT_EQ(t.labels, (std::vector<std::string>{"0.2", "0.5", "1"}));
  const plot::Ticks narrow = plot::log_ticks(3.1, 3.9, 6);  // no 1-2-5 value inside: linear
  ASSERT_GE(narrow.values.size(), 3u);
  for (double v : narrow.values) EXPECT_TRUE(v >= 3.1 && v <= 3.9) << v;
}

TEST(PlotTicks, Formatting) {
  EXPECT_EQ(plot::format_tick(0.25, 0.05), "0.25");
  EXPECT_EQ(plot::format_tick(1500, 500), "1500");
  EXPECT_EQ(plot::format_tick(2e-6, 1e-6), "2e-6");
  EXPECT_EQ(plot::format_tick(1.5e9, 5e8), "1.5e9");
  EXPECT_EQ(plot::format_tick(-3e-7, 1e-7), "-3e-7");
  EXPECT_EQ(plot::format_tick(0, 1e-7), "0");
}

TEST(PlotTicks, BadRangesRefused) {
  EXPECT_THROW(plot::linear_ticks(1, 1), std::invalid_argument);
  EXPECT_THROW(plot::linear_ticks(2, 1), std::invalid_argument);
  EXPECT_THROW(plot::linear_ticks(kNaN, 1), std::invalid_argument);
  EXPECT_THROW(plot::linear_ticks(0, kInf), std::invalid_argument);
  EXPECT_THROW(plot::linear_ticks(1, 1 + 1e-15), std::invalid_argument);   // too narrow to label
  EXPECT_THROW(plot::linear_ticks(-1e308, 1e308), std::invalid_argument);  // span overflows
  EXPECT_THROW(plot::log_ticks(0, 1), std::invalid_argument);
  EXPECT_THROW(plot::log_ticks(-1, 1), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Font

TEST(PlotFont, GlyphTableIsWellFormed) {
  namespace font = lockstep::plot::font;
  std::vector<char32_t> seen;
  for (const font::Glyph& g : font::kGlyphs) {
    SCOPED_TRACE(testing::Message() << "glyph U+" << std::hex << static_cast<unsigned>(g.code));
    // 7 or 9 rows of 5 characters, '|' between rows.
    ASSERT_TRUE(g.rows.size() == 7 * 6 - 1 || g.rows.size() == 9 * 6 - 1) << g.rows.size();
    for (std::size_t i = 0; i < g.rows.size(); ++i) {
      if (i % 6 == 5) EXPECT_EQ(g.rows[i], '|');
      else EXPECT_TRUE(g.rows[i] == '#' || g.rows[i] == '.');
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), g.code), 0);
    seen.push_back(g.code);
  }
  // Every printable ASCII character has its own glyph.
  for (char32_t c = 32; c < 127; ++c) EXPECT_EQ(font::glyph(c).code, c);
  EXPECT_EQ(font::glyph(U'\u4e2d').code, U'?');  // a character the font lacks
}

// ---------------------------------------------------------------------------------------------
// Colour maps

TEST(PlotColormap, LightnessRisesMonotonically) {
  for (plot::Colormap map : {plot::Colormap::viridis, plot::Colormap::inferno}) {
    double previous = -1;
    for (int i = 0; i <= 512; ++i) {
      const double l = luminance(plot::colormap_color(map, i / 512.0));
      // 8-bit rounding of each channel may dip the luminance by under one level.
      EXPECT_GT(l, previous - 1.0) << "t = " << i / 512.0;
      previous = std::max(previous, l);
    }
    // The ends are far apart (a perceptual map spans dark to light).
    EXPECT_GT(luminance(plot::colormap_color(map, 1)) - luminance(plot::colormap_color(map, 0)), 150);
  }
  // Documented end colours of viridis.
  EXPECT_EQ(plot::colormap_color(plot::Colormap::viridis, 0), (plot::Color{0x44, 0x01, 0x54}));
  EXPECT_EQ(plot::colormap_color(plot::Colormap::viridis, 1), (plot::Color{0xfd, 0xe7, 0x25}));
  EXPECT_EQ(plot::colormap_color(plot::Colormap::viridis, -3), plot::colormap_color(plot::Colormap::viridis, 0));
  EXPECT_THROW(plot::colormap_color(plot::Colormap::viridis, kNaN), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// PNG encoding

TEST(PlotPng, RoundTripOfRandomAndSmoothImages) {
  std::mt19937 rng(7);
  for (auto [w, h] : {std::pair{1, 1}, std::pair{3, 2}, std::pair{64, 33}, std::pair{301, 17}}) {
    plot::Image image{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h * 3)};
    // Half noise (filter None wins), half gradients (Sub and Up win).
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w * 3; ++x)
        image.rgb[static_cast<std::size_t>(y) * w * 3 + x] =
            static_cast<std::uint8_t>(y % 2 ? rng() : (x * 7 + y * 3) & 0xff);
    const auto png = plot::encode_png(image);
    const auto decoded = decode_png(png);
    EXPECT_EQ(decoded.width, w);
    EXPECT_EQ(decoded.height, h);
    EXPECT_EQ(decoded.rgb, image.rgb);
  }
}

TEST(PlotPng, FigureFileDecodesToTheRenderedImage) {
  plot::Figure figure;
  figure.axes().add_line({0, 1, 2}, {0, 1, 0.5}, {.label = "a"}).set_title("T").set_xlabel("x").set_ylabel("y");
  const plot::Image image = figure.render();
  EXPECT_EQ(image.width, 1200);
  EXPECT_EQ(image.height, 800);
  const auto dir = temp_dir("roundtrip");
  figure.write_png(dir / "f.png");
  const auto decoded = decode_png(lockstep::read_file(dir / "f.png", "test"));
  EXPECT_EQ(decoded.width, 1200);
  EXPECT_EQ(decoded.height, 800);
  EXPECT_EQ(decoded.filters.size(), 800u);
  EXPECT_EQ(decoded.rgb, image.rgb);
  std::filesystem::remove_all(dir);
}

TEST(PlotPng, CorruptionIsDetected) {
  plot::Image image{8, 8, std::vector<std::uint8_t>(8 * 8 * 3, 100)};
  auto png = plot::encode_png(image);
  png[png.size() / 2] ^= 0x10;  // inside IDAT: its CRC no longer matches
  EXPECT_THROW(decode_png(png), std::runtime_error);
  EXPECT_THROW(plot::encode_png(plot::Image{8, 8, std::vector<std::uint8_t>(5)}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Drawing

TEST(PlotDraw, LinePassesThroughItsData) {
  plot::Figure figure(1, 1, 800, 600);
  const plot::Color red{220, 0, 0};
  std::vector<double> x, y;
  for (int i = 0; i <= 40; ++i) x.push_back(i / 40.0), y.push_back(0.2 + 0.6 * std::sin(3 * x.back()));
  figure.axes().add_line(x, y, {.color = red, .width = 3}).set_xlim(0, 1).set_ylim(0, 1);
  const plot::Image image = figure.render();
  const plot::PanelLayout box = figure.layout();
  ASSERT_LT(box.left, box.right);
  ASSERT_LT(box.top, box.bottom);
  // At each sample, the pixel nearest the curve is the line's colour exactly (a 3-px line covers
  // the pixel whose centre lies within 1.5 px of it fully), and 8 px above and below is white
  // or grid grey, not red.
  for (std::size_t i = 1; i + 1 < x.size(); i += 3) {
    const int px = static_cast<int>(box.pixel_x(x[i])), py = static_cast<int>(box.pixel_y(y[i]));
    EXPECT_EQ(image.at(px, py), red) << "sample " << i;
    for (int off : {-9, 9}) {
      const plot::Color c = image.at(px, py + off);
      EXPECT_FALSE(c.r > 150 && c.g < 100) << "sample " << i << " offset " << off;
    }
  }
  // A corner of the data area far from the curve is untouched paper.
  EXPECT_TRUE(is_white(image.at(box.right - 3, box.bottom - 3)));
}

TEST(PlotDraw, ScatterAndLogAxis) {
  plot::Figure figure(1, 1, 600, 500);
  const plot::Color blue{0, 0, 230};
  figure.axes()
      .add_scatter({1, 10, 100, 1000}, {1e-3, 1e-1, 10, 1e3}, {.color = blue, .radius = 4})
      .set_log_y()
      .set_xlim(0, 1100)
      .set_ylim(1e-4, 1e4);
  const plot::Image image = figure.render();
  const plot::PanelLayout box = figure.layout();
  // Log mapping: 1e0 sits halfway between 1e-4 and 1e4.
  EXPECT_NEAR(box.pixel_y(1.0), (box.top + box.bottom) / 2.0, 0.5 + 1e-9);
  for (auto [x, y] : {std::pair{10.0, 1e-1}, std::pair{100.0, 10.0}, std::pair{1000.0, 1e3}})
    EXPECT_EQ(image.at(static_cast<int>(box.pixel_x(x)), static_cast<int>(box.pixel_y(y))), blue) << x;
}

TEST(PlotDraw, HeatMapColoursFollowValues) {
  plot::Figure figure(1, 1, 900, 600);
  std::vector<double> x, y, v;
  for (int i = 0; i < 50; ++i) x.push_back(i);
  for (int j = 0; j < 7; ++j) y.push_back(j * 0.5);
  for (int j = 0; j < 7; ++j)
    for (int i = 0; i < 50; ++i) v.push_back(std::sqrt(i) + 0 * j);
  figure.axes().add_heat_map(x, y, v, {.map = plot::Colormap::inferno, .colorbar_label = "value"});
  const plot::Image image = figure.render();
  const plot::PanelLayout box = figure.layout();
  // Values rise with x, so does the lightness along a row (a pixel shows one cell here: 50 cells
  // over about 700 px).
  const int row = (box.top + box.bottom) / 2;
  double previous = -1;
  for (int i = 0; i < 50; ++i) {
    const plot::Color c = image.at(static_cast<int>(box.pixel_x(i)), row);
    EXPECT_GE(luminance(c), previous) << "cell " << i;
    previous = luminance(c);
    // The colour is the map's at the cell's normalised value (range = the data's by default).
    EXPECT_EQ(c, plot::colormap_color(plot::Colormap::inferno, std::sqrt(i) / std::sqrt(49.0))) << "cell " << i;
  }
}

TEST(PlotDraw, HeatMapAveragesCellsNarrowerThanAPixel) {
  plot::Figure figure(1, 1, 400, 300);
  std::vector<double> x, v;
  for (int i = 0; i < 4000; ++i) x.push_back(i), v.push_back(i % 2 ? 1.0 : 0.0);  // alternating
  figure.axes().add_heat_map(x, {0.0}, v, {.min = 0.0, .max = 1.0});
  const plot::Image image = figure.render();
  const plot::PanelLayout box = figure.layout();
  // ~15 cells per pixel: their mean is 0.5 ± 1/15, so the colour is near the map's middle.
  const plot::Color mid = plot::colormap_color(plot::Colormap::viridis, 0.5);
  const plot::Color c = image.at((box.left + box.right) / 2, (box.top + box.bottom) / 2);
  EXPECT_NEAR(luminance(c), luminance(mid), 12.0);
}

TEST(PlotDraw, NonFiniteDataAreSkipped) {
  plot::Figure figure(2, 2, 1000, 800);
  const plot::Color green{0, 160, 0};
  // A line with a gap: the segment from x = 4 to 6 through the NaN is not drawn.
  figure.axes(0, 0)
      .add_line({0, 2, 4, 5, 6, 8, 10}, {1, 1, 1, kNaN, 1, 1, 1}, {.color = green})
      .set_xlim(0, 10)
      .set_ylim(0, 2);
  figure.axes(0, 1).add_line({0, 1, kInf, 3}, {kNaN, kNaN, 1, kNaN});      // nothing finite
  figure.axes(1, 0).add_line({1, 2, 3, 4}, {-1, 0, 1e-3, 1}).set_log_y();  // non-positive on log
  std::vector<double> cells(9, 1.0);
  cells[4] = kNaN;
  cells[0] = kInf;
  figure.axes(1, 1).add_heat_map({0, 1, 2}, {0, 1, 2}, cells);
  plot::Image image;
  ASSERT_NO_THROW(image = figure.render());
  const plot::PanelLayout gap = figure.layout(0, 0);
  const int yline = static_cast<int>(gap.pixel_y(1));
  EXPECT_EQ(image.at(static_cast<int>(gap.pixel_x(3)), yline), green);
  const plot::Color in_gap = image.at(static_cast<int>(gap.pixel_x(5)), yline);  // paper or grid
  EXPECT_TRUE(in_gap.r == in_gap.g && in_gap.g == in_gap.b && in_gap.r > 200) << int(in_gap.r) << "," << int(in_gap.g);
  EXPECT_EQ(image.at(static_cast<int>(gap.pixel_x(7)), yline), green);
  // The heat map's centre cell (NaN) stays blank; its neighbours are coloured.
  const plot::PanelLayout heat = figure.layout(1, 1);
  EXPECT_TRUE(is_white(image.at(static_cast<int>(heat.pixel_x(1)), static_cast<int>(heat.pixel_y(1)))));
  EXPECT_FALSE(is_white(image.at(static_cast<int>(heat.pixel_x(2)), static_cast<int>(heat.pixel_y(1)))));
}

TEST(PlotDraw, RandomHostileDataNeverBreakRendering) {
  // Mixtures of ordinary, huge, tiny, negative, zero and non-finite values in every kind of
  // series, on linear and log axes: rendering either succeeds or (never here) throws
  // std::invalid_argument; it must not crash or hang.
  std::mt19937_64 rng(99);
  const std::vector<double> specials{kNaN, kInf, -kInf, 0.0, -0.0, 1e308, -1e308, 1e-308, 5e-324, 1e300, -1e300};
  auto draw = [&](std::size_t n) {
    std::vector<double> v(n);
    std::uniform_real_distribution<double> u(-3, 3);
    for (double& e : v) e = rng() % 3 == 0 ? specials[rng() % specials.size()] : u(rng) * std::pow(10.0, u(rng) * 4);
    return v;
  };
  for (int trial = 0; trial < 40; ++trial) {
    plot::Figure figure(1, 2, 700, 400);
    const std::size_t n = 1 + rng() % 50;
    figure.axes(0, 0).add_line(draw(n), draw(n)).add_scatter(draw(n), draw(n)).set_log_y(trial % 2 == 0);
    std::vector<double> x(1 + rng() % 6), y(1 + rng() % 6);
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<double>(i) * std::pow(10.0, static_cast<double>(trial % 7) - 3);
    for (std::size_t j = 0; j < y.size(); ++j) y[j] = static_cast<double>(j);
    figure.axes(0, 1).add_heat_map(x, y, draw(x.size() * y.size()));
    EXPECT_NO_THROW(figure.render()) << "trial " << trial;
  }
}

TEST(PlotDraw, TitleAndLegendPutInk) {
  auto dark_pixels = [](const plot::Image& image, int x0, int y0, int x1, int y1) {
    int n = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) n += luminance(image.at(x, y)) < 100;
    return n;
  };
  plot::Figure plain(1, 1, 600, 400);
  plain.axes().add_line({0, 1}, {0, 1}, {.label = "a long legend entry"});
  plot::Figure titled = plain;
  titled.set_title("A figure title");
  const plot::Image a = plain.render(), b = titled.render();
  // The title takes a band over the panels, and that band holds its text.
  EXPECT_LT(plain.layout().top, titled.layout().top);
  EXPECT_GT(dark_pixels(b, 0, 0, 600, titled.layout().top - 15), 100);
  // The legend (top left here: the line runs from bottom left to top right) holds its text.
  const plot::PanelLayout box = plain.layout();
  EXPECT_GT(dark_pixels(a, box.left + 40, box.top + 10, box.left + 300, box.top + 40), 100);
}

TEST(PlotDraw, EmptyOrInconsistentDataRefused) {
  plot::Axes axes;
  EXPECT_THROW(axes.add_line({}, {}), std::invalid_argument);
  EXPECT_THROW(axes.add_line({1, 2}, {1}), std::invalid_argument);
  EXPECT_THROW(axes.add_scatter({}, {}), std::invalid_argument);
  EXPECT_THROW(axes.add_heat_map({}, {0}, {}), std::invalid_argument);
  EXPECT_THROW(axes.add_heat_map({0, 1}, {0}, {1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(axes.add_heat_map({1, 0}, {0}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(axes.add_heat_map({0, kNaN}, {0}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(axes.set_xlim(1, 1), std::invalid_argument);
  EXPECT_THROW(plot::Figure(0, 1), std::invalid_argument);
  EXPECT_THROW(plot::Figure(1, 1, 10, 10), std::invalid_argument);
  plot::Figure figure(2, 2);
  EXPECT_THROW(figure.axes(2, 0), std::invalid_argument);
  try {
    axes.add_line({}, {});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  }
  plot::Figure log_from_zero;
  log_from_zero.axes().add_line({1, 2}, {1, 2}).set_log_y().set_ylim(0, 10);
  EXPECT_THROW(log_from_zero.render(), std::invalid_argument);
  // An empty panel is drawn as a frame with default limits.
  EXPECT_NO_THROW(plot::Figure().render());
}

// ---------------------------------------------------------------------------------------------
// The QKAN fit figure

TEST(QkanFitPlot, OneInputCurvesAndLosses) {
  lockstep::qkan::FitPlotData data;
  data.title = "sin(πx) fit";
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < 200; ++i) {
    const double x = u(rng);  // unsorted inputs: the figure sorts them
    data.x.push_back(x);
    data.target.push_back(std::sin(3.14159 * x));
    data.prediction.push_back(std::sin(3.14159 * x) + 0.05 * std::cos(9 * x));
  }
  for (int s = 0; s < 100; ++s) {
    data.train_loss.push_back(std::exp(-s / 15.0));
    data.test_loss.push_back(1.2 * std::exp(-s / 16.0));
  }
  data.loss_name = "MSE";
  const plot::Figure figure = lockstep::qkan::fit_figure(data);
  const plot::Image image = figure.render();
  // The model's line (series colour 0) passes through its prediction at a sample's x.
  const plot::PanelLayout fit = figure.layout(0, 0);
  int hits = 0;
  for (int i = 0; i < 20; ++i) {
    const int px = static_cast<int>(fit.pixel_x(data.x[i])), py = static_cast<int>(fit.pixel_y(data.prediction[i]));
    hits += image.at(px, py) == plot::series_color(0);
  }
  // The dashed target line crosses the prediction's here and there; nearly all must match.
  EXPECT_GE(hits, 17);
  // The loss panel is log-scaled and holds the history's range.
  const plot::PanelLayout loss = figure.layout(0, 1);
  EXPECT_TRUE(loss.log_y);
  EXPECT_LE(loss.y_min, std::exp(-99 / 15.0));
  EXPECT_GE(loss.y_max, 1.2);
  const auto dir = temp_dir("fit");
  lockstep::qkan::write_fit_plot(dir / "fit.png", data);
  EXPECT_EQ(decode_png(lockstep::read_file(dir / "fit.png", "test")).width, 1200);
  std::filesystem::remove_all(dir);
}

TEST(QkanFitPlot, SeveralInputsScatterAndBadData) {
  lockstep::qkan::FitPlotData data;
  std::mt19937 rng(4);
  std::normal_distribution<double> n(0, 1);
  for (int i = 0; i < 500; ++i) {
    data.target.push_back(n(rng));
    data.prediction.push_back(data.target.back() + 0.1 * n(rng));
  }
  data.prediction[7] = kNaN;
  data.train_loss = {1.0, 0.5, kNaN, 0.0, 0.2};  // NaN and 0 (not on a log axis) are skipped
  EXPECT_NO_THROW(lockstep::qkan::fit_figure(data).render());
  data.train_loss.clear();  // no history: one panel
  EXPECT_NO_THROW(lockstep::qkan::fit_figure(data).render());

  lockstep::qkan::FitPlotData bad = data;
  bad.target.clear();
  bad.prediction.clear();
  EXPECT_THROW(lockstep::qkan::fit_figure(bad), std::invalid_argument);
  bad = data;
  bad.prediction.pop_back();
  EXPECT_THROW(lockstep::qkan::fit_figure(bad), std::invalid_argument);
  bad = data;
  bad.x = {1, 2};
  EXPECT_THROW(lockstep::qkan::fit_figure(bad), std::invalid_argument);
  bad = data;
  bad.train_loss = {1, 2};
  bad.test_loss = {1};
  EXPECT_THROW(lockstep::qkan::fit_figure(bad), std::invalid_argument);
}

TEST(QkanActivationsPlot, PanelsPerLayerAndBadCurves) {
  std::vector<lockstep::qkan::ActivationCurve> curves;
  // Layer 0: 1 input → 3 outputs; layer 1: 3 → 1; sampled in decreasing x (the figure sorts).
  for (int o = 0; o < 3; ++o) {
    lockstep::qkan::ActivationCurve c{.layer = 0, .input = 0, .output = o};
    for (int i = 100; i >= 0; --i) c.x.push_back(-1 + i / 50.0), c.y.push_back(std::sin((o + 1) * c.x.back()));
    curves.push_back(c);
    lockstep::qkan::ActivationCurve d{.layer = 1, .input = o, .output = 0};
    for (int i = 0; i <= 100; ++i) d.x.push_back(-2 + i / 25.0), d.y.push_back(0.3 * o * d.x.back());
    curves.push_back(d);
  }
  const plot::Figure figure = lockstep::qkan::activations_figure(curves, "activations");
  const plot::Image image = figure.render();
  // Two panels side by side, each spanning its layer's inputs.
  const plot::PanelLayout l0 = figure.layout(0, 0), l1 = figure.layout(0, 1);
  EXPECT_LT(l0.right, l1.left);
  EXPECT_DOUBLE_EQ(l0.x_min, -1);
  EXPECT_DOUBLE_EQ(l1.x_max, 2);
  // Edge 0 → 2 of layer 0 is the third series: its colour lies on sin(3x) at x = 0.4 (away
  // from where the other curves cross it).
  EXPECT_EQ(image.at(static_cast<int>(l0.pixel_x(0.4)), static_cast<int>(l0.pixel_y(std::sin(1.2)))),
            plot::series_color(2));
  EXPECT_THROW(lockstep::qkan::activations_figure({}), std::invalid_argument);
  auto bad = curves;
  bad[1].y.pop_back();
  EXPECT_THROW(lockstep::qkan::activations_figure(bad), std::invalid_argument);
  bad = curves;
  bad[0].layer = -1;
  EXPECT_THROW(lockstep::qkan::activations_figure(bad), std::invalid_argument);
  bad = curves;
  bad[0].layer = 16;  // a 17th layer
  EXPECT_THROW(lockstep::qkan::activations_figure(bad), std::invalid_argument);
  const auto dir = temp_dir("activations");
  lockstep::qkan::write_activations_plot(dir / "act.png", curves);
  EXPECT_EQ(decode_png(lockstep::read_file(dir / "act.png", "test")).height, 800);
  std::filesystem::remove_all(dir);
}
