// PNG figures without Python: a Figure holds a grid of Axes panels; each panel draws line series,
// scatter series and heat maps with round-number ticks, axis labels, a title, a legend (when a
// series has a label) and a colour bar (when it has a heat map). Text uses a built-in bitmap
// font (ASCII plus λ µ ω π β γ φ Δ ² ° × − · →). Coordinates are data units; sizes are pixels.
//
//   lockstep::plot::Figure figure(1, 2);
//   figure.axes(0, 0).add_line(x, y, {.label = "model"}).set_xlabel("x").set_ylabel("f(x)");
//   figure.axes(0, 1).add_line(step, loss).set_log_y().set_ylabel("loss");
//   figure.write_png("fit.png");
//
// Non-finite points (and magnitudes above 1e300) are skipped (a line breaks there), as are
// non-positive values on a log axis.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lockstep::plot {

namespace detail {
struct AxesRenderer;  // lays out and draws a panel (src/core/plot.cpp)
}

struct Color {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Color&, const Color&) = default;
};

/// The i-th colour of the series cycle (Okabe–Ito's colour-blind-safe palette, without its
/// yellow, which is too light on white), repeating after 7.
Color series_color(std::size_t i);

/// Perceptually ordered colour maps: piecewise-linear RGB through samples of matplotlib's
/// viridis (9 samples) and inferno (10 samples), so lightness rises monotonically with t.
enum class Colormap { viridis, inferno };

/// The colour of `t` in [0, 1] (clamped) on `map`.
Color colormap_color(Colormap map, double t);

/// Tick positions with their labels.
struct Ticks {
  std::vector<double> values;
  std::vector<std::string> labels;
};

/// Ticks inside [lo, hi] at the multiples of the smallest step of 1, 2 or 5 × 10^k that makes
/// at most `target` intervals over [lo, hi] (so at most target + 1 ticks), or of the largest
/// such step that gives three ticks if that one gives fewer. std::invalid_argument unless
/// lo < hi, both finite, hi − lo finite and above 1e-12·max(|lo|, |hi|), target >= 2.
Ticks linear_ticks(double lo, double hi, int target = 6);

/// Ticks for a log axis over [lo, hi], 0 < lo < hi: the decades 10^k inside (every m-th when
/// there are more than `target`); over less than two decades, 1-2-5 × 10^k or linear ticks.
Ticks log_ticks(double lo, double hi, int target = 6);

/// The label of a tick at `value` on an axis with tick spacing `step`: fixed notation with the
/// decimals `step` needs ("0.25", "-2", "1500"), scientific ("2e-6", "1.5e+09") for very small
/// or large numbers.
std::string format_tick(double value, double step);

struct LineStyle {
  std::string label{};           ///< legend text; empty: not in the legend
  std::optional<Color> color{};  ///< default: the next colour of the series cycle
  double width = 2.0;            ///< px
  bool dashed = false;
};

struct MarkerStyle {
  std::string label{};           ///< legend text; empty: not in the legend
  std::optional<Color> color{};  ///< default: the next colour of the series cycle
  double radius = 3.0;           ///< px
};

struct HeatMapStyle {
  Colormap map = Colormap::viridis;
  std::optional<double> min{}, max{};  ///< colour range; default: the finite values' range
  std::string colorbar_label{};
};

/// Where a panel's data area lies in the rendered image, and its axis limits.
struct PanelLayout {
  int left = 0, top = 0, right = 0, bottom = 0;  ///< data area [left, right) × [top, bottom), px
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;
  bool log_y = false;
  /// Pixel coordinates (continuous; pixel i spans [i, i+1)) of a data point.
  double pixel_x(double x) const;
  double pixel_y(double y) const;
};

/// One panel. Data are copied in; the add_ and set_ calls return *this for chaining. Styles are
/// meant for designated initialisers: add_line(x, y, {.label = "model", .dashed = true}).
class Axes {
 public:
  /// A polyline through (x[i], y[i]). std::invalid_argument if empty or of unequal sizes.
  Axes& add_line(std::vector<double> x, std::vector<double> y, LineStyle style = {});
  /// Discs at (x[i], y[i]). std::invalid_argument if empty or of unequal sizes.
  Axes& add_scatter(std::vector<double> x, std::vector<double> y, MarkerStyle style = {});
  /// A heat map of cells centred at x[i] (columns) and y[j] (rows), both strictly ascending
  /// (any spacing), values[j·x.size() + i]; non-finite cells are left blank. Where a pixel
  /// spans several cells it shows their mean. One heat map per panel; adds a colour bar.
  Axes& add_heat_map(std::vector<double> x, std::vector<double> y, std::vector<double> values, HeatMapStyle style = {});

  Axes& set_title(std::string title);
  Axes& set_xlabel(std::string label);
  Axes& set_ylabel(std::string label);
  Axes& set_log_y(bool on = true);
  /// Fixed limits (default: the data's range, padded for lines and scatter).
  Axes& set_xlim(double lo, double hi);
  Axes& set_ylim(double lo, double hi);

 private:
  friend struct detail::AxesRenderer;
  struct Series {
    std::vector<double> x, y;
    bool is_line = true;
    LineStyle line;
    MarkerStyle marker;
    Color color;
  };
  struct HeatMap {
    std::vector<double> x, y, values;
    HeatMapStyle style;
  };
  std::vector<Series> series_;
  std::optional<HeatMap> heat_map_;
  std::string title_, xlabel_, ylabel_;
  bool log_y_ = false;
  std::optional<std::pair<double, double>> xlim_, ylim_;
};

/// An RGB image, 8 bits per channel, rows top to bottom.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  ///< width·height·3 bytes
  Color at(int x, int y) const;
};

class Figure {
 public:
  /// A rows × cols grid of panels in a width × height image (px).
  explicit Figure(int rows = 1, int cols = 1, int width = 1200, int height = 800);

  /// The panel at (row, col); std::invalid_argument outside the grid.
  Axes& axes(int row = 0, int col = 0);
  /// A title over the whole figure.
  Figure& set_title(std::string title);

  /// Where panel (row, col) draws its data, as render() lays it out.
  PanelLayout layout(int row = 0, int col = 0) const;
  Image render() const;
  /// Renders and writes a PNG file (atomically).
  void write_png(const std::filesystem::path& path) const;

 private:
  friend struct detail::AxesRenderer;
  int rows_, cols_, width_, height_;
  std::vector<Axes> axes_;
  std::string title_;
};

/// The PNG file of `image` (8-bit RGB, zlib-compressed, per-row adaptive filtering).
std::vector<std::uint8_t> encode_png(const Image& image);

}  // namespace lockstep::plot
