#include "lockstep/core/plot.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "lockstep/core/error.hpp"
#include "lockstep/core/files.hpp"
#include "plot_font.hpp"

namespace lockstep::plot {

namespace {

constexpr const char* kWhere = "plot";

// ---------------------------------------------------------------------------------------------
// Colours

constexpr Color kWhite{255, 255, 255};
constexpr Color kInk{34, 34, 34};           // frame, ticks, text
constexpr Color kGridColor{228, 228, 228};  // grid lines under line plots
constexpr Color kLegendBorder{170, 170, 170};

Color hex(std::uint32_t rgb) {
  return {static_cast<std::uint8_t>(rgb >> 16), static_cast<std::uint8_t>(rgb >> 8), static_cast<std::uint8_t>(rgb)};
}

// Samples at t = 0, 1/(n−1), …, 1 of matplotlib's viridis and inferno.
constexpr std::array<std::uint32_t, 9> kViridis{0x440154, 0x472d7b, 0x3b528b, 0x2c728e, 0x21918c,
                                                0x28ae80, 0x5ec962, 0xaddc30, 0xfde725};
constexpr std::array<std::uint32_t, 10> kInferno{0x000004, 0x1b0c41, 0x4a0c6b, 0x781c6d, 0xa52c60,
                                                 0xcf4446, 0xed6925, 0xfb9b06, 0xf7d13d, 0xfcffa4};

template <std::size_t N> Color interpolate(const std::array<std::uint32_t, N>& anchors, double t) {
  const double at = std::clamp(t, 0.0, 1.0) * static_cast<double>(N - 1);
  const std::size_t i = std::min(static_cast<std::size_t>(at), N - 2);
  const double f = at - static_cast<double>(i);
  const Color a = hex(anchors[i]), b = hex(anchors[i + 1]);
  auto mix = [f](std::uint8_t u, std::uint8_t v) {
    return static_cast<std::uint8_t>(std::lround(u + f * (static_cast<double>(v) - u)));
  };
  return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

// ---------------------------------------------------------------------------------------------
// Drawing on an Image

void blend(Image& image, int x, int y, Color c, double alpha) {
  if (x < 0 || y < 0 || x >= image.width || y >= image.height || alpha <= 0) return;
  std::uint8_t* p = &image.rgb[(static_cast<std::size_t>(y) * image.width + x) * 3];
  if (alpha >= 1) {
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
    return;
  }
  auto mix = [alpha](std::uint8_t dst, std::uint8_t src) {
    return static_cast<std::uint8_t>(std::lround(dst + alpha * (static_cast<double>(src) - dst)));
  };
  p[0] = mix(p[0], c.r), p[1] = mix(p[1], c.g), p[2] = mix(p[2], c.b);
}

void fill_rect(Image& image, int x0, int y0, int x1, int y1, Color c, double alpha = 1) {
  for (int y = std::max(y0, 0); y < std::min(y1, image.height); ++y)
    for (int x = std::max(x0, 0); x < std::min(x1, image.width); ++x) blend(image, x, y, c, alpha);
}

// The outline of [x0, x1) × [y0, y1), one pixel wide, drawn just outside it.
void frame_rect(Image& image, int x0, int y0, int x1, int y1, Color c) {
  fill_rect(image, x0 - 1, y0 - 1, x1 + 1, y0, c);
  fill_rect(image, x0 - 1, y1, x1 + 1, y1 + 1, c);
  fill_rect(image, x0 - 1, y0, x0, y1, c);
  fill_rect(image, x1, y0, x1 + 1, y1, c);
}

// ---------------------------------------------------------------------------------------------
// Text

std::u32string decode_utf8(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    int extra = b < 0x80 ? 0 : (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xe ? 2 : (b >> 3) == 0x1e ? 3 : -1;
    if (extra < 0 || i + extra >= s.size() + (extra == 0 ? 1 : 0)) {
      out.push_back(U'?');
      ++i;
      continue;
    }
    char32_t code = extra == 0 ? b : (b & (0x3f >> extra));
    bool valid = true;
    for (int k = 1; k <= extra; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      valid = valid && (c >> 6) == 0x2;
      code = (code << 6) | (c & 0x3f);
    }
    out.push_back(valid ? code : U'?');
    i += valid ? extra + 1 : 1;
  }
  return out;
}

int text_width(const std::string& text, int scale) {
  const auto n = static_cast<int>(decode_utf8(text).size());
  return n == 0 ? 0 : (n * font::kAdvance - 1) * scale;
}
int text_height(int scale) { return font::kGlyphHeight * scale; }
int cap_height(int scale) { return font::kAscent * scale; }

enum class Align { start, center, end };

// Draws `text` with the top of its capitals at y (start-aligned at x, or centred/ended there).
// Rotated text reads bottom to top; (x, y) is then the centre of its box.
void draw_text(Image& image, const std::string& text, int x, int y, int scale, Color c, Align align = Align::start,
               bool rotated = false, bool bold = false) {
  const std::u32string codes = decode_utf8(text);
  const int width = text_width(text, scale);
  if (rotated) {
    // Unrotated (u, v) → screen (x0 + v, y0 − u): the text box, descenders included, is
    // centred on (x, y).
    const int x0 = x - text_height(scale) / 2, y0 = y + width / 2;
    for (std::size_t k = 0; k < codes.size(); ++k) {
      const font::Glyph& g = font::glyph(codes[k]);
      for (int row = 0; row < font::kGlyphHeight; ++row)
        for (int col = 0; col < font::kGlyphWidth; ++col)
          if (font::ink(g, col, row)) {
            const int u = (static_cast<int>(k) * font::kAdvance + col) * scale;
            fill_rect(image, x0 + row * scale, y0 - u - scale - (bold ? 1 : 0), x0 + (row + 1) * scale, y0 - u, c);
          }
    }
    return;
  }
  const int x0 = align == Align::start ? x : align == Align::center ? x - width / 2 : x - width;
  for (std::size_t k = 0; k < codes.size(); ++k) {
    const font::Glyph& g = font::glyph(codes[k]);
    for (int row = 0; row < font::kGlyphHeight; ++row)
      for (int col = 0; col < font::kGlyphWidth; ++col)
        if (font::ink(g, col, row)) {
          const int px = x0 + (static_cast<int>(k) * font::kAdvance + col) * scale;
          fill_rect(image, px, y + row * scale, px + scale + (bold ? 1 : 0), y + (row + 1) * scale, c);
        }
  }
}

// ---------------------------------------------------------------------------------------------
// Anti-aliased shapes: a series is first drawn as coverage (0..1 per pixel, the maximum over its
// pieces, so overlapping segments at a joint do not darken it), then blended in its colour.

struct Coverage {
  int x0, y0, x1, y1;  // the clip rectangle [x0, x1) × [y0, y1)
  std::vector<float> alpha;

  Coverage(int left, int top, int right, int bottom)
      : x0(left),
        y0(top),
        x1(right),
        y1(bottom),
        alpha(static_cast<std::size_t>(std::max(right - left, 0)) * std::max(bottom - top, 0), 0.f) {}

  void put(int x, int y, double a) {
    float& slot = alpha[static_cast<std::size_t>(y - y0) * (x1 - x0) + (x - x0)];
    slot = std::max(slot, static_cast<float>(a));
  }

  // A segment of half-width hw with round caps; coverage falls linearly over one pixel.
  void segment(double ax, double ay, double bx, double by, double hw) {
    if (!clip(ax, ay, bx, by, hw + 2)) return;
    const double reach = hw + 1;
    const int px0 = std::max(x0, static_cast<int>(std::floor(std::min(ax, bx) - reach)));
    const int px1 = std::min(x1, static_cast<int>(std::ceil(std::max(ax, bx) + reach)));
    const int py0 = std::max(y0, static_cast<int>(std::floor(std::min(ay, by) - reach)));
    const int py1 = std::min(y1, static_cast<int>(std::ceil(std::max(ay, by) + reach)));
    const double dx = bx - ax, dy = by - ay, len2 = dx * dx + dy * dy;
    for (int y = py0; y < py1; ++y)
      for (int x = px0; x < px1; ++x) {
        const double cx = x + 0.5 - ax, cy = y + 0.5 - ay;
        const double s = len2 > 0 ? std::clamp((cx * dx + cy * dy) / len2, 0.0, 1.0) : 0.0;
        const double d = std::hypot(cx - s * dx, cy - s * dy);
        const double a = std::clamp(hw + 0.5 - d, 0.0, 1.0);
        if (a > 0) put(x, y, a);
      }
  }

  void disc(double cx, double cy, double r) {
    if (!(cx > x0 - r - 1 && cx < x1 + r + 1 && cy > y0 - r - 1 && cy < y1 + r + 1)) return;
    for (int y = std::max(y0, static_cast<int>(cy - r - 1)); y < std::min(y1, static_cast<int>(cy + r + 2)); ++y)
      for (int x = std::max(x0, static_cast<int>(cx - r - 1)); x < std::min(x1, static_cast<int>(cx + r + 2)); ++x) {
        const double a = std::clamp(r + 0.5 - std::hypot(x + 0.5 - cx, y + 0.5 - cy), 0.0, 1.0);
        if (a > 0) put(x, y, a);
      }
  }

  void composite(Image& image, Color c) const {
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x)
        blend(image, x, y, c, alpha[static_cast<std::size_t>(y - y0) * (x1 - x0) + (x - x0)]);
  }

 private:
  // Liang–Barsky: cuts the segment to the clip rectangle grown by `margin`, so that points far
  // outside (a steep log axis, a zoomed view) never make huge loops; false if nothing is left.
  bool clip(double& ax, double& ay, double& bx, double& by, double margin) const {
    const double dx = bx - ax, dy = by - ay;
    double t0 = 0, t1 = 1;
    const std::array<std::pair<double, double>, 4> edges{
        std::pair{-dx, ax - (x0 - margin)}, std::pair{dx, (x1 + margin) - ax}, std::pair{-dy, ay - (y0 - margin)},
        std::pair{dy, (y1 + margin) - ay}};
    for (const auto& [p, q] : edges) {
      if (p == 0) {
        if (q < 0) return false;
        continue;
      }
      const double r = q / p;
      if (p < 0) t0 = std::max(t0, r);
      else t1 = std::min(t1, r);
      if (t0 > t1) return false;
    }
    const double nax = ax + t0 * dx, nay = ay + t0 * dy;
    bx = ax + t1 * dx, by = ay + t1 * dy;
    ax = nax, ay = nay;
    return true;
  }
};

// Draws a polyline through pixel points (non-finite points break it) solid or dashed; the dash
// pattern continues across vertices.
void stroke(Coverage& cov, const std::vector<std::pair<double, double>>& pts, double width, bool dashed) {
  const double hw = width / 2;
  const double on = dashed ? 4 * width + 2 : 0, off = dashed ? 2.5 * width + 2 : 0;
  double phase = 0;  // arc length into the current on+off period
  for (std::size_t i = 1; i < pts.size(); ++i) {
    auto [ax, ay] = pts[i - 1];
    const auto [bx, by] = pts[i];
    if (!std::isfinite(ax) || !std::isfinite(ay) || !std::isfinite(bx) || !std::isfinite(by)) {
      phase = 0;
      continue;
    }
    if (!dashed) {
      cov.segment(ax, ay, bx, by, hw);
      continue;
    }
    const double len = std::hypot(bx - ax, by - ay);
    double s = 0;
    while (s < len) {
      const bool drawing = phase < on;
      const double step = std::min(len - s, drawing ? on - phase : on + off - phase);
      if (drawing) {
        const double t0 = s / len, t1 = (s + step) / len;
        cov.segment(ax + t0 * (bx - ax), ay + t0 * (by - ay), ax + t1 * (bx - ax), ay + t1 * (by - ay), hw);
      }
      s += step;
      phase += step;
      if (phase >= on + off) phase = 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Layout

constexpr int kTickScale = 2, kLabelScale = 2, kTitleScale = 2, kFigureTitleScale = 3, kLegendScale = 2;
constexpr int kTickLength = 6, kPad = 10;
constexpr int kColorbarGap = 18, kColorbarWidth = 22;

// Data beyond ±1e300 are left out like non-finite ones: spans and paddings of such values
// would overflow.
constexpr double kLargest = 1e300;
bool plottable(double v) { return std::abs(v) <= kLargest; }  // false for NaN and ±inf
bool usable_y(double y, bool log_y) { return plottable(y) && (!log_y || y > 0); }

struct Extent {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  bool empty() const { return !(lo <= hi); }
  void add(double v) { lo = std::min(lo, v), hi = std::max(hi, v); }
};

// Cell edges of a heat-map axis from its cell centres: midpoints inside, half a cell outside.
std::pair<double, double> cell_extent(const std::vector<double>& c) {
  if (c.size() == 1) return {c[0] - 0.5, c[0] + 0.5};
  return {c.front() - (c[1] - c[0]) / 2, c.back() + (c.back() - c[c.size() - 2]) / 2};
}

// Pads a data range by `fraction` of its span (in log10 on a log axis) and widens a single value.
std::pair<double, double> padded(Extent e, double fraction, bool log) {
  if (log) {
    double lo = std::log10(e.lo), hi = std::log10(e.hi);
    if (hi - lo < 1e-12) lo -= 0.5, hi += 0.5;
    const double pad = (hi - lo) * fraction;
    // Kept within 1e±300, where powers of ten neither underflow nor overflow.
    return {std::pow(10.0, std::max(lo - pad, -300.0)), std::pow(10.0, std::min(hi + pad, 300.0))};
  }
  double lo = e.lo, hi = e.hi;
  if (hi - lo <= 1e-12 * std::max(std::abs(lo), std::abs(hi))) {
    const double w = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
    lo -= w, hi += w;
  }
  const double pad = (hi - lo) * fraction;
  return {lo - pad, hi + pad};
}

struct ColorRange {
  double lo = 0, hi = 1;
};

ColorRange color_range(const HeatMapStyle& style, const std::vector<double>& values) {
  Extent e;
  for (double v : values)
    if (plottable(v)) e.add(v);
  ColorRange r{e.empty() ? 0.0 : e.lo, e.empty() ? 1.0 : e.hi};
  if (style.min) r.lo = *style.min;
  if (style.max) r.hi = *style.max;
  if (!(r.hi > r.lo)) {  // one value (or a one-sided style range beyond the data): widen it
    Extent one;
    one.add(r.lo);
    const auto [lo, hi] = padded(one, 0.0, false);
    r = {lo, hi};
  }
  return r;
}

// The most tick intervals that leave `spacing` px between ticks.
int tick_target(int pixels, int spacing) { return std::clamp(pixels / spacing, 3, 10); }

int max_label_width(const Ticks& t, int scale) {
  int w = 0;
  for (const std::string& s : t.labels) w = std::max(w, text_width(s, scale));
  return w;
}

// Every quantity render() needs for one panel.
struct Panel {
  PanelLayout box;
  Ticks xticks, yticks, cticks;
  std::vector<double> yminor;  // unlabelled minor ticks of a log axis
  ColorRange crange;
  int cbar_left = 0;
};

int figure_title_height(const std::string& title) {
  return title.empty() ? 0 : text_height(kFigureTitleScale) + kPad + 4;
}

}  // namespace

struct detail::AxesRenderer {
  // `at_least_left`, `at_most_right`: edges that align the data areas of a column of panels.
  static Panel lay_out(const Axes& a, int cx, int cy, int cw, int ch, int at_least_left = 0,
                       int at_most_right = std::numeric_limits<int>::max());
  static std::vector<Panel> lay_out_panels(const Figure& f);
  static void draw(Image& image, const Axes& a, const Panel& p);
  static void draw_heat_map(Image& image, const Axes::HeatMap& heat, const Panel& p);
  static void draw_colorbar(Image& image, const Axes::HeatMap& heat, const Panel& p);
  static void draw_legend(Image& image, const Axes& a, const Panel& p);
};

Panel detail::AxesRenderer::lay_out(const Axes& a, int cx, int cy, int cw, int ch, int at_least_left,
                                    int at_most_right) {
  const bool log_y = a.log_y_;
  const auto& heat = a.heat_map_;
  Panel p;
  p.box.log_y = log_y;
  // Data limits.
  Extent ex, ey_series, ex_scatter;
  for (const Axes::Series& s : a.series_)
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (plottable(s.x[i]) && usable_y(s.y[i], log_y)) {
        (s.is_line ? ex : ex_scatter).add(s.x[i]);
        ey_series.add(s.y[i]);
      }
  Extent x_all = ex;
  if (!ex_scatter.empty()) {
    const auto [lo, hi] = padded(ex_scatter, 0.04, false);
    x_all.add(lo), x_all.add(hi);
  }
  Extent y_all;
  if (!ey_series.empty()) {
    const auto [lo, hi] = padded(ey_series, 0.05, log_y);
    y_all.add(lo), y_all.add(hi);
  }
  if (heat) {
    const auto [xl, xh] = cell_extent(heat->x);
    const auto [yl, yh] = cell_extent(heat->y);
    x_all.add(xl), x_all.add(xh);
    if (!log_y || yl > 0) y_all.add(yl), y_all.add(yh);
    p.crange = color_range(heat->style, heat->values);
  }
  std::pair<double, double> xr = x_all.empty() ? std::pair{0.0, 1.0} : padded(x_all, 0.0, false);
  std::pair<double, double> yr =
      y_all.empty() ? (log_y ? std::pair{1.0, 10.0} : std::pair{0.0, 1.0}) : padded(y_all, 0.0, log_y);
  if (a.xlim_) xr = *a.xlim_;
  if (a.ylim_) yr = *a.ylim_;
  if (log_y && !(yr.first > 0))
    invalid_argument(kWhere, "a log y axis needs positive limits, got [", yr.first, ", ", yr.second, "] (set_ylim)");
  p.box.x_min = xr.first, p.box.x_max = xr.second, p.box.y_min = yr.first, p.box.y_max = yr.second;

  // The y ticks follow from the data area's height, the left margin from their labels' width,
  // the x ticks from the width that remains.
  const int title_h = a.title_.empty() ? 0 : text_height(kTitleScale) + kPad;
  const int xlabel_h = a.xlabel_.empty() ? 0 : text_height(kLabelScale) + kPad;
  const int ylabel_w = a.ylabel_.empty() ? 0 : text_height(kLabelScale) + kPad;
  const int top = cy + kPad + 6 + title_h;
  const int bottom = cy + ch - (kPad + xlabel_h + kTickLength + 6 + text_height(kTickScale));
  p.yticks = log_y ? log_ticks(yr.first, yr.second, tick_target(bottom - top, 55))
                   : linear_ticks(yr.first, yr.second, tick_target(bottom - top, 55));
  if (log_y && p.yticks.values.size() >= 2) {
    const double ratio = p.yticks.values[1] / p.yticks.values[0];
    if (std::abs(ratio - 10) < 1e-6) {  // consecutive decades: minor ticks at 2..9
      for (int k = static_cast<int>(std::floor(std::log10(yr.first))); k <= std::ceil(std::log10(yr.second)); ++k)
        for (int m = 2; m <= 9; ++m) {
          const double v = m * std::pow(10.0, k);
          if (v >= yr.first && v <= yr.second) p.yminor.push_back(v);
        }
    }
  }
  if (heat) p.cticks = linear_ticks(p.crange.lo, p.crange.hi, tick_target(bottom - top, 55));
  const int left =
      std::max(at_least_left, cx + kPad + ylabel_w + max_label_width(p.yticks, kTickScale) + 6 + kTickLength);
  int right = cx + cw - kPad - 14;
  if (heat) {
    const int clabel_w = heat->style.colorbar_label.empty() ? 0 : text_height(kLabelScale) + kPad;
    right -= kColorbarGap + kColorbarWidth + kTickLength + 6 + max_label_width(p.cticks, kTickScale) + 8 + clabel_w;
  }
  p.xticks = linear_ticks(xr.first, xr.second, tick_target(right - left, 100));
  // The last x tick's label may spill past the data area by half its width.
  const int spill = max_label_width(p.xticks, kTickScale) / 2;
  if (!heat) right = std::min(right, cx + cw - kPad - spill);
  if (right > at_most_right) {
    right = at_most_right;
    p.xticks = linear_ticks(xr.first, xr.second, tick_target(right - left, 100));
  }
  if (right - left < 40 || bottom - top < 40)
    invalid_argument(kWhere, "the figure is too small for its panels (a panel's data area would be ", right - left, "×",
                     bottom - top, " px)");
  p.box.left = left, p.box.right = right, p.box.top = top, p.box.bottom = bottom;
  p.cbar_left = right + kColorbarGap;
  return p;
}

namespace {

// ---------------------------------------------------------------------------------------------
// PNG

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

void put_chunk(std::vector<std::uint8_t>& out, const char (&type)[5], const std::vector<std::uint8_t>& data) {
  put_u32(out, static_cast<std::uint32_t>(data.size()));
  const std::size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  // The CRC covers the chunk type and data.
  const uLong crc = crc32(crc32(0L, Z_NULL, 0), out.data() + start, static_cast<uInt>(out.size() - start));
  put_u32(out, static_cast<std::uint32_t>(crc));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Colours and ticks

Color series_color(std::size_t i) {
  static constexpr std::array<std::uint32_t, 7> kCycle{0x0072b2, 0xd55e00, 0x009e73, 0xcc79a7,
                                                       0xe69f00, 0x56b4e9, 0x000000};
  return hex(kCycle[i % kCycle.size()]);
}

Color colormap_color(Colormap map, double t) {
  if (std::isnan(t)) invalid_argument(kWhere, "colormap_color: t is NaN");
  switch (map) {
    case Colormap::viridis: return interpolate(kViridis, t);
    case Colormap::inferno: return interpolate(kInferno, t);
  }
  invalid_argument(kWhere, "unknown colour map ", static_cast<int>(map), " (viridis, inferno)");
}

std::string format_tick(double value, double step) {
  if (!std::isfinite(value) || !(step > 0)) invalid_argument(kWhere, "format_tick: value ", value, ", step ", step);
  const int step_exp = static_cast<int>(std::floor(std::log10(step) + 1e-9));
  const bool zero = std::abs(value) < step * 1e-9;
  const int value_exp = zero ? step_exp : static_cast<int>(std::floor(std::log10(std::abs(value)) + 1e-9));
  char buf[64];
  if (value_exp >= 6 || step_exp <= -5) {
    if (zero) return "0";
    // Scientific: as many mantissa digits as the step resolves; exponent without padding.
    std::snprintf(buf, sizeof buf, "%.*e", std::max(0, value_exp - step_exp), value);
    std::string s = buf;
    const std::size_t e = s.find('e');
    std::string mantissa = s.substr(0, e), exponent = s.substr(e + 1);
    const bool negative = exponent[0] == '-';
    exponent = exponent.substr(1);
    exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
    return mantissa + "e" + (negative ? "-" : "") + exponent;
  }
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, -step_exp), zero ? 0.0 : value);
  return buf;
}

Ticks linear_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi) || target < 2)
    invalid_argument(kWhere, "linear_ticks: need finite lo < hi and target >= 2, got [", lo, ", ", hi, "], ", target);
  // Multiples of a step must be told apart in double precision.
  if (!std::isfinite(hi - lo) || hi - lo <= 1e-12 * std::max(std::abs(lo), std::abs(hi)))
    invalid_argument(kWhere, "linear_ticks: the range [", lo, ", ", hi, "] is too wide or too narrow to label");
  // The smallest step of 1, 2 or 5 × 10^k at least (hi − lo)/target (at most `target`
  // intervals), made smaller while it would leave fewer than three ticks.
  const double raw = (hi - lo) / target;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  int mantissa = norm <= 1 + 1e-9 ? 1 : norm <= 2 + 1e-9 ? 2 : norm <= 5 + 1e-9 ? 5 : 10;
  const double slack = 1e-9;  // of a step: keeps end points that rounding moves a hair outside
  auto first_last = [&](double step) { return std::pair{std::ceil(lo / step - slack), std::floor(hi / step + slack)}; };
  for (;;) {
    const auto [k0, k1] = first_last(mantissa * magnitude);
    if (k1 - k0 + 1 >= 3) break;
    if (mantissa == 1) mantissa = 5, magnitude /= 10;
    else mantissa = mantissa == 10 ? 5 : mantissa == 5 ? 2 : 1;
  }
  const double step = mantissa * magnitude;
  const auto [k0, k1] = first_last(step);
  Ticks t;
  // Integer multiples of the step, so no rounding accumulates.
  for (double k = k0; k <= k1; ++k) {
    const double v = k == 0 ? 0.0 : k * step;
    t.values.push_back(v);
    t.labels.push_back(format_tick(v, step));
  }
  return t;
}

Ticks log_ticks(double lo, double hi, int target) {
  if (!(lo > 0) || !std::isfinite(hi) || !(lo < hi) || target < 2)
    invalid_argument(kWhere, "log_ticks: need 0 < lo < hi and target >= 2, got [", lo, ", ", hi, "], ", target);
  const double slack = 1e-9;
  const int k0 = static_cast<int>(std::ceil(std::log10(lo) - slack));
  const int k1 = static_cast<int>(std::floor(std::log10(hi) + slack));
  const int decades = k1 - k0 + 1;
  Ticks t;
  if (decades >= 2) {
    const int stride = (decades + target - 1) / target;
    const bool plain = k0 >= -3 && k1 <= 4;  // "0.001" … "10000"; otherwise "1e-6" for all
    for (int k = static_cast<int>(std::ceil(static_cast<double>(k0) / stride)) * stride; k <= k1; k += stride) {
      t.values.push_back(std::pow(10.0, k));
      if (plain) t.labels.push_back(format_tick(std::pow(10.0, k), std::pow(10.0, std::min(k, 0))));
      else t.labels.push_back("1e" + std::to_string(k));
    }
    return t;
  }
  // Less than two decades: 1, 2 and 5 × 10^k if that gives at least three ticks, else linear.
  for (int k = k0 - 1; k <= k1; ++k)
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, k);
      if (v >= lo * (1 - slack) && v <= hi * (1 + slack)) {
        t.values.push_back(v);
        t.labels.push_back(format_tick(v, std::pow(10.0, k)));
      }
    }
  if (t.values.size() >= 3) return t;
  return linear_ticks(lo, hi, std::min(target, 5));
}

// ---------------------------------------------------------------------------------------------
// Axes

double PanelLayout::pixel_x(double x) const { return left + (x - x_min) / (x_max - x_min) * (right - left); }

double PanelLayout::pixel_y(double y) const {
  const double f = log_y ? (std::log10(y) - std::log10(y_min)) / (std::log10(y_max) - std::log10(y_min))
                         : (y - y_min) / (y_max - y_min);
  return bottom - f * (bottom - top);
}

namespace {
void check_xy(const char* what, const std::vector<double>& x, const std::vector<double>& y) {
  if (x.empty()) invalid_argument(kWhere, what, ": no data (x and y are empty)");
  if (x.size() != y.size()) invalid_argument(kWhere, what, ": x has ", x.size(), " values but y has ", y.size());
}

void check_ascending(const char* name, const std::vector<double>& c) {
  if (c.empty()) invalid_argument(kWhere, "add_heat_map: no data (", name, " is empty)");
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!plottable(c[i]))
      invalid_argument(kWhere, "add_heat_map: ", name, "[", i, "] = ", c[i], " is not finite (or beyond ±1e300)");
    if (i > 0 && !(c[i] > c[i - 1]))
      invalid_argument(kWhere, "add_heat_map: ", name, " must be strictly ascending (", name, "[", i, "] = ", c[i],
                       " after ", c[i - 1], ")");
  }
}
}  // namespace

Axes& Axes::add_line(std::vector<double> x, std::vector<double> y, LineStyle style) {
  check_xy("add_line", x, y);
  if (!(style.width > 0)) invalid_argument(kWhere, "add_line: width must be positive, got ", style.width);
  const Color c = style.color.value_or(series_color(series_.size()));
  series_.push_back({std::move(x), std::move(y), true, std::move(style), {}, c});
  return *this;
}

Axes& Axes::add_scatter(std::vector<double> x, std::vector<double> y, MarkerStyle style) {
  check_xy("add_scatter", x, y);
  if (!(style.radius > 0)) invalid_argument(kWhere, "add_scatter: radius must be positive, got ", style.radius);
  const Color c = style.color.value_or(series_color(series_.size()));
  series_.push_back({std::move(x), std::move(y), false, {}, std::move(style), c});
  return *this;
}

Axes& Axes::add_heat_map(std::vector<double> x, std::vector<double> y, std::vector<double> values, HeatMapStyle style) {
  if (heat_map_) invalid_argument(kWhere, "add_heat_map: this panel already has a heat map");
  check_ascending("x", x);
  check_ascending("y", y);
  if (values.size() != x.size() * y.size())
    invalid_argument(kWhere, "add_heat_map: values has ", values.size(),
                     " entries, expected y.size() × x.size() = ", y.size(), " × ", x.size());
  if ((style.min && !plottable(*style.min)) || (style.max && !plottable(*style.max)) ||
      (style.min && style.max && !(*style.min < *style.max)))
    invalid_argument(kWhere, "add_heat_map: the colour range must be finite with min < max");
  heat_map_ = HeatMap{std::move(x), std::move(y), std::move(values), std::move(style)};
  return *this;
}

Axes& Axes::set_title(std::string title) { return title_ = std::move(title), *this; }
Axes& Axes::set_xlabel(std::string label) { return xlabel_ = std::move(label), *this; }
Axes& Axes::set_ylabel(std::string label) { return ylabel_ = std::move(label), *this; }
Axes& Axes::set_log_y(bool on) { return log_y_ = on, *this; }

Axes& Axes::set_xlim(double lo, double hi) {
  if (!plottable(lo) || !plottable(hi) || !(lo < hi))
    invalid_argument(kWhere, "set_xlim: need finite lo < hi (within ±1e300), got [", lo, ", ", hi, "]");
  xlim_ = {lo, hi};
  return *this;
}

Axes& Axes::set_ylim(double lo, double hi) {
  if (!plottable(lo) || !plottable(hi) || !(lo < hi))
    invalid_argument(kWhere, "set_ylim: need finite lo < hi (within ±1e300), got [", lo, ", ", hi, "]");
  ylim_ = {lo, hi};
  return *this;
}

// ---------------------------------------------------------------------------------------------
// Figure

Color Image::at(int x, int y) const {
  if (x < 0 || y < 0 || x >= width || y >= height)
    invalid_argument(kWhere, "Image::at(", x, ", ", y, ") outside ", width, "×", height);
  const std::uint8_t* p = &rgb[(static_cast<std::size_t>(y) * width + x) * 3];
  return {p[0], p[1], p[2]};
}

Figure::Figure(int rows, int cols, int width, int height) : rows_(rows), cols_(cols), width_(width), height_(height) {
  if (rows < 1 || cols < 1 || rows > 16 || cols > 16)
    invalid_argument(kWhere, "Figure: rows and cols must be in 1..16, got ", rows, " × ", cols);
  if (width < 100 || height < 100 || width > 16384 || height > 16384)
    invalid_argument(kWhere, "Figure: width and height must be in 100..16384 px, got ", width, " × ", height);
  axes_.resize(static_cast<std::size_t>(rows) * cols);
}

Axes& Figure::axes(int row, int col) {
  if (row < 0 || col < 0 || row >= rows_ || col >= cols_)
    invalid_argument(kWhere, "Figure::axes(", row, ", ", col, ") outside the ", rows_, " × ", cols_, " grid");
  return axes_[static_cast<std::size_t>(row) * cols_ + col];
}

Figure& Figure::set_title(std::string title) { return title_ = std::move(title), *this; }

void detail::AxesRenderer::draw_heat_map(Image& image, const Axes::HeatMap& heat, const Panel& p) {
  const PanelLayout& b = p.box;
  const std::size_t nx = heat.x.size();
  // For each pixel column (row), the cells whose centres fall inside it; where none do (cells
  // wider than a pixel), the cell containing the pixel's centre; {0, 0} outside the map.
  auto spans = [](const std::vector<double>& centres, int n, auto to_data) {
    const auto [lo, hi] = cell_extent(centres);
    std::vector<std::pair<std::size_t, std::size_t>> out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      double a = to_data(i), z = to_data(i + 1);
      if (a > z) std::swap(a, z);
      auto first = std::lower_bound(centres.begin(), centres.end(), a);
      auto last = std::lower_bound(centres.begin(), centres.end(), z);
      if (first != last) {
        out[i] = {static_cast<std::size_t>(first - centres.begin()), static_cast<std::size_t>(last - centres.begin())};
        continue;
      }
      const double mid = to_data(i + 0.5);
      if (!(mid >= lo && mid < hi)) continue;
      auto above = std::lower_bound(centres.begin(), centres.end(), mid);
      std::size_t k = static_cast<std::size_t>(above - centres.begin());
      if (k == centres.size() || (k > 0 && mid - centres[k - 1] < centres[k] - mid)) --k;
      out[i] = {k, k + 1};
    }
    return out;
  };
  const auto cols =
      spans(heat.x, b.right - b.left, [&](double i) { return b.x_min + i / (b.right - b.left) * (b.x_max - b.x_min); });
  const auto rows = spans(heat.y, b.bottom - b.top, [&](double j) {
    const double f = 1 - j / (b.bottom - b.top);  // pixel rows run downwards
    return b.log_y ? std::pow(10.0, std::log10(b.y_min) + f * (std::log10(b.y_max) - std::log10(b.y_min)))
                   : b.y_min + f * (b.y_max - b.y_min);
  });
  for (int j = 0; j < b.bottom - b.top; ++j) {
    const auto [r0, r1] = rows[j];
    for (int i = 0; i < b.right - b.left; ++i) {
      const auto [c0, c1] = cols[i];
      double sum = 0;
      int count = 0;
      for (std::size_t r = r0; r < r1; ++r)
        for (std::size_t c = c0; c < c1; ++c) {
          const double v = heat.values[r * nx + c];
          if (plottable(v)) sum += v, ++count;
        }
      if (count == 0) continue;
      const double t = (sum / count - p.crange.lo) / (p.crange.hi - p.crange.lo);
      blend(image, b.left + i, b.top + j, colormap_color(heat.style.map, t), 1);
    }
  }
}

void detail::AxesRenderer::draw_colorbar(Image& image, const Axes::HeatMap& heat, const Panel& p) {
  const PanelLayout& b = p.box;
  const int x0 = p.cbar_left, x1 = x0 + kColorbarWidth, h = b.bottom - b.top;
  for (int j = 0; j < h; ++j) {
    const double t = (h - 1 - j + 0.5) / h;
    fill_rect(image, x0, b.top + j, x1, b.top + j + 1, colormap_color(heat.style.map, t));
  }
  frame_rect(image, x0, b.top, x1, b.bottom, kInk);
  int label_w = 0;
  for (std::size_t k = 0; k < p.cticks.values.size(); ++k) {
    const double f = (p.cticks.values[k] - p.crange.lo) / (p.crange.hi - p.crange.lo);
    const int y = std::min(b.bottom - 1, static_cast<int>(std::floor(b.bottom - f * h)));
    fill_rect(image, x1 + 1, y, x1 + 1 + kTickLength, y + 1, kInk);
    draw_text(image, p.cticks.labels[k], x1 + kTickLength + 6, y - cap_height(kTickScale) / 2, kTickScale, kInk);
    label_w = std::max(label_w, text_width(p.cticks.labels[k], kTickScale));
  }
  if (!heat.style.colorbar_label.empty())
    draw_text(image, heat.style.colorbar_label,
              x1 + kTickLength + 6 + label_w + 8 + kPad / 2 + text_height(kLabelScale) / 2, (b.top + b.bottom) / 2,
              kLabelScale, kInk, Align::center, true);
}

void detail::AxesRenderer::draw_legend(Image& image, const Axes& a, const Panel& p) {
  std::vector<const Axes::Series*> entries;
  int text_w = 0;
  for (const Axes::Series& s : a.series_) {
    const std::string& label = s.is_line ? s.line.label : s.marker.label;
    if (label.empty()) continue;
    entries.push_back(&s);
    text_w = std::max(text_w, text_width(label, kLegendScale));
  }
  if (entries.empty()) return;
  const PanelLayout& b = p.box;
  constexpr int kSample = 34, kRow = 24, kInset = 10;
  const int w = 10 + kSample + 10 + text_w + 12, h = 8 + kRow * static_cast<int>(entries.size()) + 4;
  // The corner whose box covers the fewest data points.
  const std::array<std::pair<int, int>, 4> corners{
      std::pair{b.right - kInset - w, b.top + kInset}, std::pair{b.left + kInset, b.top + kInset},
      std::pair{b.right - kInset - w, b.bottom - kInset - h}, std::pair{b.left + kInset, b.bottom - kInset - h}};
  std::array<long, 4> hits{};
  for (const Axes::Series& s : a.series_)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!plottable(s.x[i]) || !usable_y(s.y[i], b.log_y)) continue;
      const double px = b.pixel_x(s.x[i]), py = b.pixel_y(s.y[i]);
      for (std::size_t c = 0; c < corners.size(); ++c)
        hits[c] += px >= corners[c].first && px < corners[c].first + w && py >= corners[c].second &&
                   py < corners[c].second + h;
    }
  const auto [x0, y0] = corners[std::min_element(hits.begin(), hits.end()) - hits.begin()];
  fill_rect(image, x0, y0, x0 + w, y0 + h, kWhite, 0.88);
  frame_rect(image, x0, y0, x0 + w, y0 + h, kLegendBorder);
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const Axes::Series& s = *entries[k];
    const int row_mid = y0 + 8 + static_cast<int>(k) * kRow + cap_height(kLegendScale) / 2;
    Coverage cov(x0, y0, x0 + w, y0 + h);
    if (s.is_line)
      stroke(cov, {{x0 + 10.0, row_mid + 0.5}, {x0 + 10.0 + kSample, row_mid + 0.5}}, s.line.width, s.line.dashed);
    else cov.disc(x0 + 10 + kSample / 2.0, row_mid + 0.5, std::max(s.marker.radius, 3.0));
    cov.composite(image, s.color);
    draw_text(image, s.is_line ? s.line.label : s.marker.label, x0 + 10 + kSample + 10,
              row_mid - cap_height(kLegendScale) / 2, kLegendScale, kInk);
  }
}

void detail::AxesRenderer::draw(Image& image, const Axes& a, const Panel& p) {
  const PanelLayout& b = p.box;
  if (a.heat_map_) draw_heat_map(image, *a.heat_map_, p);
  else {
    for (double v : p.xticks.values) {
      const int x = static_cast<int>(std::floor(b.pixel_x(v)));
      if (x > b.left && x < b.right - 1) fill_rect(image, x, b.top, x + 1, b.bottom, kGridColor);
    }
    for (double v : p.yticks.values) {
      const int y = static_cast<int>(std::floor(b.pixel_y(v)));
      if (y > b.top && y < b.bottom - 1) fill_rect(image, b.left, y, b.right, y + 1, kGridColor);
    }
  }
  for (const Axes::Series& s : a.series_) {
    Coverage cov(b.left, b.top, b.right, b.bottom);
    std::vector<std::pair<double, double>> pts(s.x.size());
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      const bool ok = plottable(s.x[i]) && usable_y(s.y[i], b.log_y);
      pts[i] = ok ? std::pair{b.pixel_x(s.x[i]), b.pixel_y(s.y[i])}
                  : std::pair{std::numeric_limits<double>::quiet_NaN(), 0.0};
    }
    if (s.is_line) stroke(cov, pts, s.line.width, s.line.dashed);
    else
      for (const auto& [x, y] : pts)
        if (std::isfinite(x)) cov.disc(x, y, s.marker.radius);
    // A lone finite point of a line would otherwise be invisible.
    if (s.is_line)
      for (std::size_t i = 0; i < pts.size(); ++i)
        if (std::isfinite(pts[i].first) && (i == 0 || !std::isfinite(pts[i - 1].first)) &&
            (i + 1 == pts.size() || !std::isfinite(pts[i + 1].first)))
          cov.disc(pts[i].first, pts[i].second, s.line.width);
    cov.composite(image, s.color);
  }
  frame_rect(image, b.left, b.top, b.right, b.bottom, kInk);

  // Ticks outside the frame, labels beyond them.
  for (std::size_t k = 0; k < p.xticks.values.size(); ++k) {
    const int x = std::min(b.right - 1, static_cast<int>(std::floor(b.pixel_x(p.xticks.values[k]))));
    fill_rect(image, x, b.bottom + 1, x + 1, b.bottom + 1 + kTickLength, kInk);
    draw_text(image, p.xticks.labels[k], x, b.bottom + 1 + kTickLength + 6, kTickScale, kInk, Align::center);
  }
  auto y_tick = [&](double v, int length) {
    const int y = std::min(b.bottom - 1, static_cast<int>(std::floor(b.pixel_y(v))));
    fill_rect(image, b.left - 1 - length, y, b.left - 1, y + 1, kInk);
    return y;
  };
  for (double v : p.yminor) y_tick(v, kTickLength / 2);
  int ylabels_w = 0;
  for (std::size_t k = 0; k < p.yticks.values.size(); ++k) {
    const int y = y_tick(p.yticks.values[k], kTickLength);
    draw_text(image, p.yticks.labels[k], b.left - 1 - kTickLength - 6, y - cap_height(kTickScale) / 2, kTickScale, kInk,
              Align::end);
    ylabels_w = std::max(ylabels_w, text_width(p.yticks.labels[k], kTickScale));
  }
  if (!a.xlabel_.empty())
    draw_text(image, a.xlabel_, (b.left + b.right) / 2,
              b.bottom + 1 + kTickLength + 6 + text_height(kTickScale) + kPad - 2, kLabelScale, kInk, Align::center);
  if (!a.ylabel_.empty())
    draw_text(image, a.ylabel_, b.left - 1 - kTickLength - 6 - ylabels_w - kPad - text_height(kLabelScale) / 2,
              (b.top + b.bottom) / 2, kLabelScale, kInk, Align::center, true);
  if (!a.title_.empty())
    draw_text(image, a.title_, (b.left + b.right) / 2, b.top - kPad - cap_height(kTitleScale), kTitleScale, kInk,
              Align::center, false, true);
  if (a.heat_map_) draw_colorbar(image, *a.heat_map_, p);
  draw_legend(image, a, p);
}

// The panels of a column share their data area's left and right edges (so stacked panels line
// up over x): each is laid out alone first, then again within the column's common edges.
std::vector<Panel> detail::AxesRenderer::lay_out_panels(const Figure& f) {
  const int title_h = figure_title_height(f.title_);
  const int ch = (f.height_ - title_h) / f.rows_, cw = f.width_ / f.cols_;
  auto lay_out_at = [&](int r, int c, int left, int right) {
    return lay_out(f.axes_[static_cast<std::size_t>(r) * f.cols_ + c], c * cw, title_h + r * ch, cw, ch, left, right);
  };
  std::vector<Panel> panels(f.axes_.size());
  for (int c = 0; c < f.cols_; ++c) {
    int left = 0, right = std::numeric_limits<int>::max();
    for (int r = 0; r < f.rows_; ++r) {
      const PanelLayout b = lay_out_at(r, c, left, right).box;
      left = std::max(left, b.left), right = std::min(right, b.right);
    }
    for (int r = 0; r < f.rows_; ++r) panels[static_cast<std::size_t>(r) * f.cols_ + c] = lay_out_at(r, c, left, right);
  }
  return panels;
}

PanelLayout Figure::layout(int row, int col) const {
  if (row < 0 || col < 0 || row >= rows_ || col >= cols_)
    invalid_argument(kWhere, "Figure::layout(", row, ", ", col, ") outside the ", rows_, " × ", cols_, " grid");
  return detail::AxesRenderer::lay_out_panels(*this)[static_cast<std::size_t>(row) * cols_ + col].box;
}

Image Figure::render() const {
  Image image{width_, height_, std::vector<std::uint8_t>(static_cast<std::size_t>(width_) * height_ * 3, 255)};
  const std::vector<Panel> panels = detail::AxesRenderer::lay_out_panels(*this);
  for (std::size_t k = 0; k < axes_.size(); ++k) detail::AxesRenderer::draw(image, axes_[k], panels[k]);
  if (!title_.empty()) draw_text(image, title_, width_ / 2, kPad + 4, kFigureTitleScale, kInk, Align::center);
  return image;
}

void Figure::write_png(const std::filesystem::path& path) const {
  const std::vector<std::uint8_t> png = encode_png(render());
  write_file_atomically(path, png, kWhere);
}

std::vector<std::uint8_t> encode_png(const Image& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<std::size_t>(image.width) * image.height * 3)
    invalid_argument(kWhere, "encode_png: a ", image.width, "×", image.height, " image needs ",
                     static_cast<std::size_t>(std::max(image.width, 0)) * std::max(image.height, 0) * 3, " bytes, got ",
                     image.rgb.size());
  // Each row is stored after a filter byte. Per row, the filter (None, Sub or Up) with the
  // smallest sum of |signed residuals| is chosen, the usual heuristic for small zlib output.
  const std::size_t stride = static_cast<std::size_t>(image.width) * 3;
  std::vector<std::uint8_t> raw;
  raw.reserve((stride + 1) * image.height);
  std::array<std::vector<std::uint8_t>, 3> candidate;
  for (auto& c : candidate) c.resize(stride);
  for (int y = 0; y < image.height; ++y) {
    const std::uint8_t* row = &image.rgb[y * stride];
    const std::uint8_t* above = y > 0 ? row - stride : nullptr;
    std::array<long, 3> cost{};
    for (std::size_t i = 0; i < stride; ++i) {
      const std::uint8_t left = i >= 3 ? row[i - 3] : 0, up = above ? above[i] : 0;
      candidate[0][i] = row[i];
      candidate[1][i] = static_cast<std::uint8_t>(row[i] - left);
      candidate[2][i] = static_cast<std::uint8_t>(row[i] - up);
      for (int f = 0; f < 3; ++f) cost[f] += std::abs(static_cast<int>(static_cast<std::int8_t>(candidate[f][i])));
    }
    const auto best = static_cast<std::size_t>(std::min_element(cost.begin(), cost.end()) - cost.begin());
    raw.push_back(static_cast<std::uint8_t>(best));  // filter types 0, 1, 2 = None, Sub, Up
    raw.insert(raw.end(), candidate[best].begin(), candidate[best].end());
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::vector<std::uint8_t> packed(packed_size);
  if (compress2(packed.data(), &packed_size, raw.data(), static_cast<uLong>(raw.size()), 6) != Z_OK)
    runtime_failure(kWhere, "zlib could not compress the image");
  packed.resize(packed_size);

  std::vector<std::uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<std::uint8_t> header;
  put_u32(header, static_cast<std::uint32_t>(image.width));
  put_u32(header, static_cast<std::uint32_t>(image.height));
  header.insert(header.end(), {8, 2, 0, 0, 0});  // 8 bits, truecolour RGB, deflate, adaptive, no interlace
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", packed);
  put_chunk(png, "IEND", {});
  return png;
}

}  // namespace lockstep::plot
