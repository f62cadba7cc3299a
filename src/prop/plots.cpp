#include "lockstep/prop/plots.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "lockstep/core/error.hpp"

namespace lockstep::prop {

namespace {

constexpr const char* kWhere = "prop.plot";
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The usable entries of a coordinate grid in ascending order: coord[c] = scale·grid[source[c]],
// finite, positive where required, without repeats.
struct Columns {
  std::vector<std::size_t> source;
  std::vector<double> coord;
};

Columns ascending_columns(const std::vector<double>& grid, double scale, bool positive_only, const char* name) {
  if (grid.empty()) invalid_argument(kWhere, name, " is empty");
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < grid.size(); ++i)
    if (std::isfinite(grid[i]) && (!positive_only || grid[i] > 0)) order.push_back(i);
  if (order.empty()) invalid_argument(kWhere, name, " has no finite", positive_only ? ", positive" : "", " value");
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return grid[a] < grid[b]; });
  Columns c;
  for (std::size_t i : order)
    if (c.coord.empty() || grid[i] * scale > c.coord.back()) {
      c.source.push_back(i);
      c.coord.push_back(grid[i] * scale);
    }
  return c;
}

Columns restrict_to(const Columns& all, std::pair<double, double> range, const char* name) {
  Columns c;
  for (std::size_t k = 0; k < all.coord.size(); ++k)
    if (all.coord[k] >= range.first && all.coord[k] <= range.second) {
      c.source.push_back(all.source[k]);
      c.coord.push_back(all.coord[k]);
    }
  if (c.coord.empty()) invalid_argument(kWhere, "no ", name, " lies inside the shown range");
  return c;
}

// The shown range: the columns whose envelope (dB, indexed by source) is within `range_db` of
// its peak, widened by 5% each side and kept inside the grid; the whole grid if none is finite.
std::pair<double, double> auto_range(const Columns& cols, const std::vector<double>& envelope_db, double range_db) {
  double peak = -std::numeric_limits<double>::infinity();
  for (std::size_t s : cols.source)
    if (std::isfinite(envelope_db[s])) peak = std::max(peak, envelope_db[s]);
  double lo = cols.coord.front(), hi = cols.coord.back();
  if (std::isfinite(peak)) {
    std::size_t first = cols.coord.size(), last = 0;
    for (std::size_t k = 0; k < cols.coord.size(); ++k)
      if (std::isfinite(envelope_db[cols.source[k]]) && envelope_db[cols.source[k]] >= peak - range_db)
        first = std::min(first, k), last = std::max(last, k);
    const double pad = 0.05 * (cols.coord[last] - cols.coord[first]);
    lo = std::max(lo, cols.coord[first] - pad);
    hi = std::min(hi, cols.coord[last] + pad);
  }
  if (!(lo < hi)) {  // one column: a cell's width around it
    lo = cols.coord.front(), hi = cols.coord.back();
    if (!(lo < hi)) lo -= 0.5 * std::abs(lo) + 1e-30, hi += 0.5 * std::abs(hi) + 1e-30;
  }
  return {lo, hi};
}

void check_range(const std::optional<std::pair<double, double>>& range, bool positive, const char* name) {
  if (range && !(std::isfinite(range->first) && std::isfinite(range->second) && range->first < range->second &&
                 (!positive || range->first > 0)))
    invalid_argument(kWhere, name, " must be finite with ", positive ? "0 < " : "", "lo < hi, got [", range->first,
                     ", ", range->second, "]");
}

void check_dynamic_range(double db) {
  if (!(std::isfinite(db) && db > 0)) invalid_argument(kWhere, "dynamic_range_db must be positive, got ", db);
}

// z grid (m) on a readable unit: mm below 1 m.
struct ZAxis {
  std::vector<double> values;
  std::string label;
};

ZAxis z_axis(const std::vector<double>& z, std::size_t planes, const char* planes_name) {
  if (z.empty()) invalid_argument(kWhere, "z is empty");
  if (planes != z.size())
    invalid_argument(kWhere, planes_name, " has ", planes, " planes but z has ", z.size(), " values");
  for (std::size_t i = 0; i < z.size(); ++i) {
    if (!std::isfinite(z[i])) invalid_argument(kWhere, "z[", i, "] is not finite");
    if (i > 0 && !(z[i] > z[i - 1])) invalid_argument(kWhere, "z must be strictly ascending (z[", i, "] = ", z[i], ")");
  }
  const bool mm = std::max(std::abs(z.front()), std::abs(z.back())) < 1;
  ZAxis axis{z, mm ? "z (mm)" : "z (m)"};
  if (mm)
    for (double& v : axis.values) v *= 1e3;
  return axis;
}

void check_plane_sizes(const std::vector<std::vector<double>>& planes, std::size_t n, const char* name,
                       const char* grid) {
  for (std::size_t i = 0; i < planes.size(); ++i)
    if (planes[i].size() != n)
      invalid_argument(kWhere, name, "[", i, "] has ", planes[i].size(), " values but ", grid, " has ", n);
}

// The largest finite value of the planes; NaN if there is none.
double peak_of(const std::vector<std::vector<double>>& planes) {
  double peak = kNaN;
  for (const auto& p : planes)
    for (double v : p)
      if (std::isfinite(v) && !(v <= peak)) peak = v;
  return peak;
}

// 10·log10(v / peak), clipped below at −range_db (zero power included); NaN where v is not a
// finite non-negative number.
double relative_db(double v, double peak, double range_db) {
  if (!std::isfinite(v) || v < 0 || !(peak > 0)) return kNaN;
  return v == 0 ? -range_db : std::max(10 * std::log10(v / peak), -range_db);
}

// The per-column envelope (maximum over planes) in dB relative to the planes' peak.
std::vector<double> envelope_db(const std::vector<std::vector<double>>& planes, std::size_t n, double peak,
                                double range_db) {
  std::vector<double> env(n, kNaN);
  for (const auto& p : planes)
    for (std::size_t k = 0; k < n; ++k) {
      const double db = relative_db(p[k], peak, range_db + 1);  // +1: a clipped column is not kept
      if (std::isfinite(db) && !(db <= env[k])) env[k] = db;
    }
  return env;
}

// Heat-map cells: plane i at row i, column c from planes[i][cols.source[c]].
std::vector<double> cells(const std::vector<std::vector<double>>& planes, const Columns& cols, auto&& transform) {
  std::vector<double> v;
  v.reserve(planes.size() * cols.source.size());
  for (const auto& p : planes)
    for (std::size_t s : cols.source) v.push_back(transform(p[s]));
  return v;
}

void finish_evolution(plot::Axes& axes, const ZAxis& z, std::pair<double, double> xrange) {
  axes.set_xlim(xrange.first, xrange.second).set_ylabel(z.label);
  // Planes are the centres of the map's rows; show z from the first plane to the last.
  if (z.values.size() > 1) axes.set_ylim(z.values.front(), z.values.back());
}

std::pair<double, double> in_nm(const std::pair<double, double>& m) { return {m.first * 1e9, m.second * 1e9}; }

}  // namespace

plot::Figure spectral_evolution_figure(const std::vector<double>& z, const std::vector<double>& wavelength,
                                       const std::vector<std::vector<double>>& spectra,
                                       const WavelengthPlotOptions& options) {
  check_dynamic_range(options.dynamic_range_db);
  check_range(options.wavelength_range_m, true, "wavelength_range_m");
  const ZAxis zaxis = z_axis(z, spectra.size(), "spectra");
  check_plane_sizes(spectra, wavelength.size(), "spectra", "wavelength");
  const Columns all = ascending_columns(wavelength, 1e9, true, "wavelength");
  const double peak = peak_of(spectra);
  const double dr = options.dynamic_range_db;
  const auto range = options.wavelength_range_m
                         ? in_nm(*options.wavelength_range_m)
                         : auto_range(all, envelope_db(spectra, wavelength.size(), peak, dr), dr);
  const Columns cols = restrict_to(all, range, "wavelength");

  plot::Figure figure;
  if (!options.title.empty()) figure.set_title(options.title);
  plot::Axes& axes = figure.axes();
  axes.add_heat_map(
          cols.coord, zaxis.values, cells(spectra, cols, [&](double v) { return relative_db(v, peak, dr); }),
          {.map = plot::Colormap::inferno, .min = -dr, .max = 0.0, .colorbar_label = "spectral intensity (dB)"})
      .set_title("Spectral evolution")
      .set_xlabel("wavelength (nm)");
  finish_evolution(axes, zaxis, range);
  return figure;
}

void write_spectral_evolution(const std::filesystem::path& path, const std::vector<double>& z,
                              const std::vector<double>& wavelength, const std::vector<std::vector<double>>& spectra,
                              const WavelengthPlotOptions& options) {
  spectral_evolution_figure(z, wavelength, spectra, options).write_png(path);
}

plot::Figure temporal_evolution_figure(const std::vector<double>& z, const std::vector<double>& t,
                                       const std::vector<std::vector<double>>& power,
                                       const TemporalPlotOptions& options) {
  check_dynamic_range(options.dynamic_range_db);
  check_range(options.time_range_s, false, "time_range_s");
  const ZAxis zaxis = z_axis(z, power.size(), "power");
  check_plane_sizes(power, t.size(), "power", "t");
  if (t.empty()) invalid_argument(kWhere, "t is empty");
  for (std::size_t j = 0; j < t.size(); ++j)
    if (!std::isfinite(t[j]) || (j > 0 && !(t[j] > t[j - 1])))
      invalid_argument(kWhere, "t must be finite and strictly ascending (t[", j, "] = ", t[j], ")");
  const Columns all = ascending_columns(t, 1e12, false, "t");
  const double peak = peak_of(power);
  const double dr = options.dynamic_range_db;
  const auto range = options.time_range_s
                         ? std::pair{options.time_range_s->first * 1e12, options.time_range_s->second * 1e12}
                         : auto_range(all, envelope_db(power, t.size(), peak, dr), options.decibels ? dr : 20.0);
  const Columns cols = restrict_to(all, range, "time");

  plot::Figure figure;
  if (!options.title.empty()) figure.set_title(options.title);
  plot::Axes& axes = figure.axes();
  if (options.decibels) {
    axes.add_heat_map(cols.coord, zaxis.values, cells(power, cols, [&](double v) { return relative_db(v, peak, dr); }),
                      {.map = plot::Colormap::viridis, .min = -dr, .max = 0.0, .colorbar_label = "power (dB)"});
  } else {
    // Linear power in W, or kW for peaks of a kilowatt and more.
    const bool kw = peak >= 1e3;
    const double unit = kw ? 1e-3 : 1.0;
    plot::HeatMapStyle style{.map = plot::Colormap::viridis, .colorbar_label = kw ? "power (kW)" : "power (W)"};
    if (peak > 0) style.min = 0.0, style.max = peak * unit;
    axes.add_heat_map(cols.coord, zaxis.values,
                      cells(power, cols, [&](double v) { return std::isfinite(v) ? v * unit : kNaN; }), style);
  }
  axes.set_title("Temporal evolution").set_xlabel("delay T (ps)");
  finish_evolution(axes, zaxis, range);
  return figure;
}

void write_temporal_evolution(const std::filesystem::path& path, const std::vector<double>& z,
                              const std::vector<double>& t, const std::vector<std::vector<double>>& power,
                              const TemporalPlotOptions& options) {
  temporal_evolution_figure(z, t, power, options).write_png(path);
}

namespace {

// Lines of dB values over wavelength (nm) in `axes`, y from range_db below their peak; returns
// the x range shown.
std::pair<double, double> draw_db_lines(plot::Axes& axes, const Columns& all,
                                        const std::vector<const std::vector<double>*>& lines,
                                        const std::vector<std::string>& labels, const WavelengthPlotOptions& options) {
  const double dr = options.dynamic_range_db;
  std::vector<double> envelope(lines.front()->size(), kNaN);
  for (const auto* l : lines)
    for (std::size_t k = 0; k < l->size(); ++k)
      if (std::isfinite((*l)[k]) && !((*l)[k] <= envelope[k])) envelope[k] = (*l)[k];
  const auto range = options.wavelength_range_m ? in_nm(*options.wavelength_range_m) : auto_range(all, envelope, dr);
  const Columns cols = restrict_to(all, range, "wavelength");
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t s : cols.source)
    if (std::isfinite(envelope[s])) top = std::max(top, envelope[s]);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::vector<double> y;
    for (std::size_t s : cols.source) y.push_back((*lines[i])[s]);
    axes.add_line(cols.coord, std::move(y), {.label = labels.empty() ? "" : labels[i]});
  }
  axes.set_xlim(range.first, range.second);
  if (std::isfinite(top)) axes.set_ylim(top - dr, top + 0.05 * dr);
  return range;
}

}  // namespace

plot::Figure spectrum_figure(const std::vector<double>& wavelength, const std::vector<std::vector<double>>& spectra_db,
                             const std::vector<std::string>& labels, const WavelengthPlotOptions& options) {
  check_dynamic_range(options.dynamic_range_db);
  check_range(options.wavelength_range_m, true, "wavelength_range_m");
  if (spectra_db.empty()) invalid_argument(kWhere, "spectra_db is empty");
  check_plane_sizes(spectra_db, wavelength.size(), "spectra_db", "wavelength");
  if (!labels.empty() && labels.size() != spectra_db.size())
    invalid_argument(kWhere, "labels has ", labels.size(), " entries but there are ", spectra_db.size(), " spectra");
  const Columns all = ascending_columns(wavelength, 1e9, true, "wavelength");
  plot::Figure figure;
  if (!options.title.empty()) figure.set_title(options.title);
  std::vector<const std::vector<double>*> lines;
  for (const auto& s : spectra_db) lines.push_back(&s);
  plot::Axes& axes = figure.axes();
  draw_db_lines(axes, all, lines, labels, options);
  axes.set_title("Spectrum").set_xlabel("wavelength (nm)").set_ylabel("spectral intensity (dB)");
  return figure;
}

void write_spectrum(const std::filesystem::path& path, const std::vector<double>& wavelength,
                    const std::vector<std::vector<double>>& spectra_db, const std::vector<std::string>& labels,
                    const WavelengthPlotOptions& options) {
  spectrum_figure(wavelength, spectra_db, labels, options).write_png(path);
}

plot::Figure coherence_figure(const std::vector<double>& wavelength, const std::vector<double>& g12,
                              const std::vector<double>& mean_spectrum_db, const WavelengthPlotOptions& options) {
  check_dynamic_range(options.dynamic_range_db);
  check_range(options.wavelength_range_m, true, "wavelength_range_m");
  if (g12.size() != wavelength.size())
    invalid_argument(kWhere, "g12 has ", g12.size(), " values but wavelength has ", wavelength.size());
  if (mean_spectrum_db.size() != wavelength.size())
    invalid_argument(kWhere, "mean_spectrum_db has ", mean_spectrum_db.size(), " values but wavelength has ",
                     wavelength.size());
  const Columns all = ascending_columns(wavelength, 1e9, true, "wavelength");
  plot::Figure figure(2, 1);
  if (!options.title.empty()) figure.set_title(options.title);
  plot::Axes& top = figure.axes(0, 0);
  const auto range = draw_db_lines(top, all, {&mean_spectrum_db}, {}, options);
  top.set_title("Mean spectrum").set_ylabel("intensity (dB)");
  const Columns cols = restrict_to(all, range, "wavelength");
  std::vector<double> g;
  for (std::size_t s : cols.source) g.push_back(g12[s]);
  figure.axes(1, 0)
      .add_line(cols.coord, std::move(g), {.color = plot::series_color(1)})
      .set_xlim(range.first, range.second)
      .set_ylim(0, 1.05)
      .set_title("Spectral coherence")
      .set_xlabel("wavelength (nm)")
      .set_ylabel("|g12|");
  return figure;
}

void write_coherence(const std::filesystem::path& path, const std::vector<double>& wavelength,
                     const std::vector<double>& g12, const std::vector<double>& mean_spectrum_db,
                     const WavelengthPlotOptions& options) {
  coherence_figure(wavelength, g12, mean_spectrum_db, options).write_png(path);
}

}  // namespace lockstep::prop
