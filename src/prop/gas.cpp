#include "lockstep/prop/gas.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <limits>
#include <numbers>
#include <string>

#include "lockstep/core/error.hpp"
#include "lockstep/prop/grid.hpp"  // kSpeedOfLight

namespace lockstep::prop::gas {

namespace table {
/// One species' equation-of-state table: Z(T, ρ) at the nt × nx Chebyshev–Lobatto points of
/// [kTemperatureMin, kTemperatureMax] × [0, density_top], row-major in (T point, ρ point).
struct Table {
  int nt, nx;
  double density_top;  // 1/m³
  const double* z;
};
#include "gas_tables.inc"
}  // namespace table

namespace {
constexpr const char* kWhere = "prop.gas";
constexpr int kMaxPoints = 64;

static_assert(table::kTemperatureMin == kMinTemperature && table::kTemperatureMax == kMaxTemperature &&
                  table::kPressureMax == kMaxPressure,
              "gas.hpp's domain differs from src/prop/gas_tables.inc's");
static_assert(std::size(table::kTables) == kAllSpecies.size());

std::size_t index_of(Species species) {
  const auto i = static_cast<std::size_t>(species);
  if (i >= kAllSpecies.size()) invalid_argument(kWhere, "species ", static_cast<int>(species), " is not a Species");
  return i;
}

// ---- Chebyshev–Lobatto interpolation ---------------------------------------------------------

/// The n Chebyshev–Lobatto points of [a, b], ascending (the points scripts/gas_tables.py uses).
void lobatto(double a, double b, int n, double* out) {
  for (int k = 0; k < n; ++k) out[k] = a + (b - a) * (1 - std::cos(std::numbers::pi * k / (n - 1))) / 2;
}

/// Barycentric weights of Chebyshev–Lobatto points: (−1)^k, halved at both ends.
double lobatto_weight(int k, int n) { return (k % 2 ? -1.0 : 1.0) * (k == 0 || k == n - 1 ? 0.5 : 1.0); }

/// Normalised barycentric weights at x (Σ = 1): the polynomial through (nodes, y) at x is
/// Σ_k out[k] y_k.
void interpolation_weights(const double* nodes, int n, double x, double* out) {
  for (int k = 0; k < n; ++k) {
    if (x == nodes[k]) {
      for (int j = 0; j < n; ++j) out[j] = j == k ? 1.0 : 0.0;
      return;
    }
  }
  double sum = 0;
  for (int k = 0; k < n; ++k) sum += out[k] = lobatto_weight(k, n) / (x - nodes[k]);
  for (int k = 0; k < n; ++k) out[k] /= sum;
}

/// The polynomial P through (nodes, y) and its derivative at x (barycentric form; at a node,
/// the derivative from the differentiation-matrix row of that node).
struct ValueSlope {
  double value, slope;
};
ValueSlope interpolate(const double* nodes, const double* y, int n, double x) {
  for (int k = 0; k < n; ++k) {
    if (x != nodes[k]) continue;
    double slope = 0;
    const double wk = lobatto_weight(k, n);
    for (int j = 0; j < n; ++j)
      if (j != k) slope += lobatto_weight(j, n) / wk * (y[j] - y[k]) / (nodes[k] - nodes[j]);
    return {y[k], slope};
  }
  double num = 0, den = 0;
  for (int j = 0; j < n; ++j) {
    const double c = lobatto_weight(j, n) / (x - nodes[j]);
    num += c * y[j];
    den += c;
  }
  const double value = num / den;
  double slope = 0;
  for (int j = 0; j < n; ++j) slope += lobatto_weight(j, n) / (x - nodes[j]) * (value - y[j]) / (x - nodes[j]);
  return {value, slope / den};
}

// ---- The equation of state -------------------------------------------------------------------

void check_temperature(double temperature) {
  if (!std::isfinite(temperature) || temperature < kMinTemperature || temperature > kMaxTemperature)
    invalid_argument(kWhere, "temperature ", temperature, " K is outside the equation of state's range ",
                     kMinTemperature, " K to ", kMaxTemperature, " K");
}

double xenon_saturation(double temperature) {
  const double* breaks = table::kXenonSaturationBreaks;
  const int pieces = static_cast<int>(std::size(table::kXenonSaturationBreaks)) - 1;
  const int n = table::kXenonSaturationPoints;
  int i = pieces - 1;
  while (i > 0 && temperature < breaks[i]) --i;
  double nodes[kMaxPoints];
  lobatto(breaks[i], breaks[i + 1], n, nodes);
  return std::exp(interpolate(nodes, table::kXenonSaturationLog + i * n, n, temperature).value);
}

/// Validates (species, p, T) against the domain; std::invalid_argument naming what is wrong.
void check_state(Species species, double pressure, double temperature) {
  index_of(species);
  check_temperature(temperature);
  if (!std::isfinite(pressure) || pressure < 0 || pressure > kMaxPressure)
    invalid_argument(kWhere, "pressure ", pressure, " Pa is outside the equation of state's range 0 to ", kMaxPressure,
                     " Pa (", kMaxPressure / kBar, " bar)");
  const double condensation = condensation_pressure(species, temperature);
  if (pressure > condensation)
    invalid_argument(kWhere, species_name(species), " condenses at ", temperature, " K above its saturation pressure ",
                     condensation, " Pa (", condensation / kBar, " bar); ", pressure, " Pa (", pressure / kBar,
                     " bar) given");
}

/// Z(T, ρ) as a function of ρ at one temperature: the table contracted along T.
class Isotherm {
 public:
  Isotherm(const table::Table& t, double temperature) : n_(t.nx), temperature_(temperature) {
    double t_nodes[kMaxPoints], w[kMaxPoints];
    lobatto(kMinTemperature, kMaxTemperature, t.nt, t_nodes);
    interpolation_weights(t_nodes, t.nt, temperature, w);
    lobatto(0.0, t.density_top, n_, nodes_);
    for (int k = 0; k < n_; ++k) {
      double z = 0;
      for (int i = 0; i < t.nt; ++i) z += w[i] * t.z[i * n_ + k];
      z_[k] = z;
    }
  }
  double z(double density) const { return interpolate(nodes_, z_, n_, density).value; }
  /// p(ρ) = ρ k_B T Z(T, ρ), Pa, and dp/dρ.
  ValueSlope pressure(double density) const {
    const ValueSlope z = interpolate(nodes_, z_, n_, density);
    const double kt = kBoltzmann * temperature_;
    return {kt * density * z.value, kt * (z.value + density * z.slope)};
  }

 private:
  int n_;
  double temperature_;
  double nodes_[kMaxPoints], z_[kMaxPoints];
};

/// ρ with p(ρ) = p inside [lo, hi], where p(ρ) rises and p(lo) ≤ p ≤ p(hi): Newton steps,
/// replaced by bisection wherever one would leave the bracket, which shrinks at every step.
double solve_density(const Isotherm& iso, double pressure, double lo, double hi, double guess) {
  double rho = std::clamp(guess, lo, hi);
  for (int iteration = 0; iteration < 200; ++iteration) {
    const ValueSlope p = iso.pressure(rho);
    const double residual = p.value - pressure;
    if (residual == 0) return rho;
    (residual < 0 ? lo : hi) = rho;
    double next = p.slope > 0 ? rho - residual / p.slope : lo;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::abs(next - rho) <= 1e-15 * rho || hi - lo <= 1e-15 * hi) return next;
    rho = next;
  }
  runtime_failure(kWhere, "the density at ", pressure, " Pa did not converge");
}

/// The vapour spinodal of xenon at T < T_c: where dp/dρ first falls to 0 (bisection on its
/// sign over [0, ρ_c]; dp/dρ > 0 below the spinodal and < 0 between it and ρ_c).
double vapour_spinodal(const Isotherm& iso) {
  double lo = 0, hi = table::kXenonCriticalDensity;
  for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (iso.pressure(mid).slope > 0 ? lo : hi) = mid;
  }
  return lo;
}

double density_of(Species species, double pressure, double temperature) {
  check_state(species, pressure, temperature);
  if (pressure == 0) return 0;
  const table::Table& t = table::kTables[index_of(species)];
  const Isotherm iso(t, temperature);
  // Above T_c p(ρ) rises over the whole table; below it (xenon) the vapour branch ends at the
  // spinodal, which lies above every vapour state up to p_sat.
  const double hi =
      species == Species::Xe && temperature < table::kXenonCriticalTemperature ? vapour_spinodal(iso) : t.density_top;
  const double top = iso.pressure(hi).value;
  if (top < pressure) {
    // Within the table's error of p_sat very near T_c the spinodal may fall a hair short.
    if (pressure <= top * (1 + 1e-9)) return hi;
    runtime_failure(kWhere, "the equation-of-state table of ", species_name(species), " does not reach ", pressure,
                    " Pa at ", temperature, " K");
  }
  const double ideal = pressure / (kBoltzmann * temperature);
  return solve_density(iso, pressure, 0.0, hi, ideal / iso.z(std::min(ideal, hi)));
}

// ---- Sellmeier forms ---------------------------------------------------------------------------

struct Term {
  double b, c;  // B (dimensionless), C (µm²)
};
struct SellmeierForm {
  Term terms[3];
  int count;
};

// Börzsönyi et al., Appl. Opt. 47, 4856 (2008), at 1 bar and 0 °C; Species order.
constexpr SellmeierForm kBorzsonyi[] = {
    {{{4977.77e-8, 28.54e-6}, {1856.94e-8, 7.76e-3}}, 2},        // He
    {{{9154.48e-8, 656.97e-6}, {4018.63e-8, 5.728e-3}}, 2},      // Ne
    {{{20332.29e-8, 206.12e-6}, {34458.31e-8, 8.066e-3}}, 2},    // Ar
    {{{26102.88e-8, 2.01e-6}, {56946.82e-8, 10.043e-3}}, 2},     // Kr
    {{{103701.61e-8, 12750e-6}, {31228.61e-8, 0.561e-3}}, 2},    // Xe
    {{{39209.95e-8, 1146.24e-6}, {18806.48e-8, 13.476e-3}}, 2},  // N2
    {{{14926.44e-8, 19.36e-6}, {41807.57e-8, 7.434e-3}}, 2},     // air
};
// Ermolov et al., Phys. Rev. A 92, 033821 (2015), helium at 1 atm and 0 °C.
constexpr SellmeierForm kErmolovHelium = {
    {{2.16463842e-05, -6.80769781e-04}, {2.10561127e-07, 5.13251289e-03}, {4.75092720e-05, 3.18621354e-03}}, 3};

const SellmeierForm& form_of(Species species, HeliumForm helium) {
  const std::size_t i = index_of(species);
  if (helium != HeliumForm::ermolov && helium != HeliumForm::borzsonyi)
    invalid_argument(kWhere, "helium form ", static_cast<int>(helium), " is not a HeliumForm");
  return species == Species::He && helium == HeliumForm::ermolov ? kErmolovHelium : kBorzsonyi[i];
}

void check_wavelength(double wavelength) {
  if (!std::isfinite(wavelength) || !(wavelength > 0))
    invalid_argument(kWhere, "wavelength ", wavelength, " m must be finite and > 0");
}

// ---- Kerr --------------------------------------------------------------------------------------

// χ3 of each gas at 1 atm and 0 °C relative to helium's, 3.43e-28 m²/V² (Lehmeier, Leupacher and
// Penzkofer, Opt. Commun. 56, 67 (1985), Table 1).
constexpr double kHeliumChi3 = 3.43e-28;
constexpr double kLehmeier[] = {1.0, 1.8, 23.5, 64.0, 188.2, 21.1};  // He, Ne, Ar, Kr, Xe, N2
// Air: the composition of the air equation of state the density table uses (Lemmon et al.,
// J. Phys. Chem. Ref. Data 29, 331 (2000): N2 0.7812, O2 0.2096, Ar 0.0092). O2, not in
// Lehmeier's table, as N2 scaled by the ratio of their instantaneous n2 at 800 nm measured
// together by Zahedpour, Wahlstrand and Milchberg, Opt. Lett. 40, 5794 (2015): 8.1/7.9.
constexpr double kAirN2 = 0.7812, kAirO2 = 0.2096, kAirAr = 0.0092;
constexpr double kO2OverN2 = 8.1 / 7.9;
constexpr double kLehmeierAir = kAirN2 * kLehmeier[5] + kAirO2 * kLehmeier[5] * kO2OverN2 + kAirAr * kLehmeier[2];

}  // namespace

// ---- Names -------------------------------------------------------------------------------------

std::string_view species_name(Species species) {
  static constexpr std::string_view kNames[] = {"He", "Ne", "Ar", "Kr", "Xe", "N2", "air"};
  return kNames[index_of(species)];
}

Species species_from_name(std::string_view name) {
  const auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  for (Species s : kAllSpecies)
    if (lower(species_name(s)) == lower(name)) return s;
  std::string accepted;
  for (Species s : kAllSpecies) accepted += (accepted.empty() ? "" : ", ") + std::string(species_name(s));
  invalid_argument(kWhere, "unknown gas \"", name, "\": expected one of ", accepted, " (any case)");
}

// ---- Equation of state -------------------------------------------------------------------------

double number_density(Species species, double pressure, double temperature) {
  return density_of(species, pressure, temperature);
}

double compressibility(Species species, double pressure, double temperature) {
  const double rho = density_of(species, pressure, temperature);
  if (pressure == 0) return Isotherm(table::kTables[index_of(species)], temperature).z(0.0);
  return pressure / (rho * kBoltzmann * temperature);
}

double reference_density(Species species) { return density_of(species, kBar, kZeroCelsius); }

double condensation_pressure(Species species, double temperature) {
  index_of(species);
  check_temperature(temperature);
  if (species == Species::Xe && temperature < table::kXenonCriticalTemperature) return xenon_saturation(temperature);
  return std::numeric_limits<double>::infinity();
}

double xenon_critical_temperature() { return table::kXenonCriticalTemperature; }
double xenon_critical_pressure() { return table::kXenonCriticalPressure; }

// ---- Linear susceptibility ---------------------------------------------------------------------

double sellmeier(Species species, double wavelength, HeliumForm helium) {
  const SellmeierForm& form = form_of(species, helium);
  check_wavelength(wavelength);
  const double l2 = (wavelength * 1e6) * (wavelength * 1e6);  // µm²
  double s = 0;
  for (int i = 0; i < form.count; ++i) {
    const Term& t = form.terms[i];
    if (!(l2 > t.c))
      invalid_argument(kWhere, "wavelength ", wavelength, " m is at or below a resonance of the Sellmeier form of ",
                       species_name(species), " (", std::sqrt(t.c) * 1e-6, " m)");
    s += t.b * l2 / (l2 - t.c);
  }
  return s;
}

double sellmeier_resonance(Species species, HeliumForm helium) {
  const SellmeierForm& form = form_of(species, helium);
  double longest = 0;  // µm²
  for (int i = 0; i < form.count; ++i) longest = std::max(longest, form.terms[i].c);
  return std::sqrt(longest) * 1e-6;
}

double sellmeier_density(Species species, HeliumForm helium) {
  form_of(species, helium);  // validates both
  if (species == Species::He && helium == HeliumForm::ermolov) return density_of(species, kAtmosphere, kZeroCelsius);
  return reference_density(species);
}

double susceptibility(Species species, double wavelength, double pressure, double temperature, HeliumForm helium) {
  const double s = sellmeier(species, wavelength, helium);
  return s * density_of(species, pressure, temperature) / sellmeier_density(species, helium);
}

double refractive_index(Species species, double wavelength, double pressure, double temperature, HeliumForm helium) {
  return std::sqrt(1 + susceptibility(species, wavelength, pressure, temperature, helium));
}

double susceptibility(std::span<const Component> mixture, double wavelength, double temperature, HeliumForm helium) {
  if (mixture.empty()) invalid_argument(kWhere, "a mixture needs at least one component");
  double chi = 0;
  for (const Component& c : mixture) chi += susceptibility(c.species, wavelength, c.pressure, temperature, helium);
  return chi;
}

double refractive_index(std::span<const Component> mixture, double wavelength, double temperature, HeliumForm helium) {
  return std::sqrt(1 + susceptibility(mixture, wavelength, temperature, helium));
}

// ---- Kerr --------------------------------------------------------------------------------------

double gamma3(Species species) {
  const std::size_t i = index_of(species);
  const double f = species == Species::air ? kLehmeierAir : kLehmeier[i];
  return 4 * f * kHeliumChi3 / density_of(species, kAtmosphere, kZeroCelsius);
}

double chi3(Species species, double pressure, double temperature) {
  return gamma3(species) * density_of(species, pressure, temperature);
}

double chi3(std::span<const Component> mixture, double temperature) {
  if (mixture.empty()) invalid_argument(kWhere, "a mixture needs at least one component");
  double chi = 0;
  for (const Component& c : mixture) chi += chi3(c.species, c.pressure, temperature);
  return chi;
}

double kerr_n2(Species species, double wavelength, double pressure, double temperature, HeliumForm helium) {
  const Component one[] = {{species, pressure}};
  return kerr_n2(one, wavelength, temperature, helium);
}

double kerr_n2(std::span<const Component> mixture, double wavelength, double temperature, HeliumForm helium) {
  const double n0 = refractive_index(mixture, wavelength, temperature, helium);
  return 0.75 * chi3(mixture, temperature) / (kVacuumPermittivity * kSpeedOfLight * n0 * n0);
}

}  // namespace lockstep::prop::gas
