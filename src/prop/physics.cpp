#include "lockstep/prop/physics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <string_view>

#include "lockstep/core/error.hpp"
#include "lockstep/prop/capillary.hpp"
#include "lockstep/prop/gas.hpp"
#include "lockstep/prop/transform.hpp"
#include "spline.hpp"

namespace lockstep::prop {

namespace {

constexpr const char* kWhere = "prop.physics";

void require_finite(double value, std::string_view field) {
  if (!std::isfinite(value)) invalid_argument(kWhere, field, " = ", value, " must be finite");
}

void require_positive(double value, std::string_view field, std::string_view unit) {
  if (!std::isfinite(value) || value <= 0)
    invalid_argument(kWhere, field, " = ", value, " ", unit, " must be finite and > 0");
}

void require_fraction(double value, std::string_view field) {
  if (!std::isfinite(value) || value < 0 || value > 1)
    invalid_argument(kWhere, field, " = ", value, " must be in [0, 1]");
}

/// A table (ω_i, y_i): equal lengths, at least `min_points`, finite, ω strictly ascending and
/// covering [lo, hi] (the grid's absolute frequencies).
void check_table(const std::vector<double>& omega, const std::vector<double>& y, std::string_view omega_field,
                 std::string_view y_field, std::size_t min_points, double lo, double hi) {
  if (omega.size() != y.size())
    invalid_argument(kWhere, omega_field, " has ", omega.size(), " entries but ", y_field, " has ", y.size());
  if (omega.size() < min_points)
    invalid_argument(kWhere, omega_field, " has ", omega.size(), " entries; at least ", min_points, " are needed");
  for (std::size_t i = 0; i < omega.size(); ++i) {
    if (!std::isfinite(omega[i]) || !std::isfinite(y[i]))
      invalid_argument(kWhere, omega_field, "/", y_field, " entry ", i, " is not finite");
    if (i > 0 && !(omega[i] > omega[i - 1]))
      invalid_argument(kWhere, omega_field, " must be strictly ascending: entry ", i, " (", omega[i],
                       " rad/s) does not exceed entry ", i - 1, " (", omega[i - 1], " rad/s)");
  }
  if (omega.front() > lo || omega.back() < hi)
    invalid_argument(kWhere, omega_field, " spans [", omega.front(), ", ", omega.back(), "] rad/s but the grid needs [",
                     lo, ", ", hi, "] rad/s");
}

void validate(const FibreConfig& f, double lo, double hi) {
  require_positive(f.length, "fibre.length", "m");
  if (f.type == FibreType::capillary) {
    // The gas and the mode functions validate their own arguments; what is left is the
    // frequency window and the Raman response.
    if (!(lo > 0))
      invalid_argument(kWhere, "the grid's frequency window [", lo, ", ", hi,
                       "] rad/s reaches zero or negative absolute frequency, where a capillary has no mode");
    if (f.raman != RamanModel::none)
      invalid_argument(kWhere, "fibre.raman must be none for a capillary (no Raman response of a gas is modelled)");
    return;
  }
  for (std::size_t k = 0; k < f.betas.size(); ++k)
    if (!std::isfinite(f.betas[k])) invalid_argument(kWhere, "fibre.betas[", k, "] (β", k + 2, ") must be finite");
  if (!f.beta_table_omega.empty() || !f.beta_table_beta.empty())
    check_table(f.beta_table_omega, f.beta_table_beta, "fibre.beta_table_omega", "fibre.beta_table_beta", 4, lo, hi);
  if (!std::isfinite(f.loss) || f.loss < 0)
    invalid_argument(kWhere, "fibre.loss = ", f.loss, " 1/m must be finite and ≥ 0");
  if (!f.loss_table_omega.empty() || !f.loss_table_alpha.empty()) {
    check_table(f.loss_table_omega, f.loss_table_alpha, "fibre.loss_table_omega", "fibre.loss_table_alpha", 2, lo, hi);
    for (std::size_t i = 0; i < f.loss_table_alpha.size(); ++i)
      if (f.loss_table_alpha[i] < 0)
        invalid_argument(kWhere, "fibre.loss_table_alpha[", i, "] = ", f.loss_table_alpha[i], " 1/m must be ≥ 0");
  }
  require_finite(f.gamma, "fibre.gamma");
  if (f.raman == RamanModel::none) return;
  require_fraction(f.raman_fraction, "fibre.raman_fraction");
  if (f.raman == RamanModel::blow_wood || f.raman == RamanModel::lin_agrawal) {
    require_positive(f.raman_tau1, "fibre.raman_tau1", "s");
    require_positive(f.raman_tau2, "fibre.raman_tau2", "s");
  }
  if (f.raman == RamanModel::lin_agrawal) {
    require_fraction(f.raman_fb, "fibre.raman_fb");
    require_positive(f.raman_taub, "fibre.raman_taub", "s");
  }
}

double blow_wood(double tau1, double tau2, double t) {
  return (tau1 * tau1 + tau2 * tau2) / (tau1 * tau2 * tau2) * std::exp(-t / tau2) * std::sin(t / tau1);
}

/// Hollenbeck & Cantrell, JOSA B 19, 2886 (2002), Table 1: the 13 vibrational modes of
/// silica (intermediate broadening). Positions and widths in cm⁻¹, amplitudes relative.
struct HcMode {
  double position, amplitude, gaussian_fwhm, lorentzian_fwhm;
};
constexpr std::array<HcMode, 13> kHcModes{{
    {56.25, 1.00, 52.10, 17.37},
    {100.00, 11.40, 110.42, 38.81},
    {231.25, 36.67, 175.00, 58.33},
    {362.50, 67.67, 162.50, 54.17},
    {463.00, 74.00, 135.33, 45.11},
    {497.00, 4.50, 24.50, 8.17},
    {611.50, 6.80, 41.50, 13.83},
    {691.67, 4.60, 155.00, 51.67},
    {793.67, 4.20, 59.50, 19.83},
    {835.50, 4.50, 64.30, 21.43},
    {930.00, 2.70, 150.00, 50.00},
    {1080.00, 3.10, 91.00, 30.33},
    {1215.00, 3.00, 160.00, 53.33},
}};

/// Σ_i A_i e^{−γ_i t} e^{−Γ_i² t²/4} sin(ω_i t) with ω_i = 2πc·position, Γ_i = πc·(Gaussian
/// FWHM), γ_i = πc·(Lorentzian FWHM) (wavenumbers in 1/m here), arbitrary units.
double hollenbeck_cantrell(double t) {
  double h = 0;
  for (const HcMode& m : kHcModes) {
    const double to_rate = std::numbers::pi * kSpeedOfLight * 100.0;  // cm⁻¹ → rad/s, per π
    const double omega = 2 * to_rate * m.position;
    const double gauss = to_rate * m.gaussian_fwhm;
    const double lorentz = to_rate * m.lorentzian_fwhm;
    h += m.amplitude * std::exp(-lorentz * t - gauss * gauss * t * t / 4) * std::sin(omega * t);
  }
  return h;
}

/// Σ_{k≥2} β_k Δω^k / k!
double taylor_beta(const std::vector<double>& betas, double dw) {
  double term = dw * dw / 2, sum = 0;
  for (std::size_t k = 0; k < betas.size(); ++k) {
    sum += betas[k] * term;
    term *= dw / static_cast<double>(k + 3);
  }
  return sum;
}

/// The capillary's linear operator (as β(ω) − β0 − β1Δω and α(ω)) on the grid.
void capillary_linear(const FibreConfig& f, const Grid& grid, std::vector<double>& beta, std::vector<double>& alpha) {
  const double rho = gas::number_density(f.gas, f.pressure, f.temperature);
  const double rho_s = gas::sellmeier_density(f.gas, f.helium_sellmeier);
  const double w0 = grid.omega0();
  const double lo = w0 + grid.omega()[static_cast<std::size_t>(grid.size() / 2)];
  const double hi = w0 + grid.omega()[static_cast<std::size_t>(grid.size() / 2 - 1)];
  const auto n_eff = [&](double omega) {
    const double wavelength = 2 * std::numbers::pi * kSpeedOfLight / omega;
    double chi1 = 0;
    try {
      chi1 = gas::sellmeier(f.gas, wavelength, f.helium_sellmeier) * rho / rho_s;
    } catch (const std::invalid_argument& e) {
      invalid_argument(kWhere, "the grid's frequency window [", lo, ", ", hi, "] rad/s reaches ", wavelength,
                       " m, beyond the Sellmeier form of fibre.gas: ", e.what());
    }
    const capillary::Capillary mode{f.radius, capillary::Cladding::fixed_index(capillary_wall_index(f, wavelength)),
                                    f.mode_model};
    return capillary::effective_index(mode, omega, chi1);
  };
  // β without the vacuum's ω/c, which the frame removes exactly: (ω/c)(Re n_eff − 1).
  const auto dispersive = [&](double omega) { return omega / kSpeedOfLight * (n_eff(omega).real() - 1); };
  const double h = 1e-3 * w0;
  const double beta0 = dispersive(w0);
  const double beta1 =
      (45 * (dispersive(w0 + h) - dispersive(w0 - h)) - 9 * (dispersive(w0 + 2 * h) - dispersive(w0 - 2 * h)) +
       (dispersive(w0 + 3 * h) - dispersive(w0 - 3 * h))) /
      (60 * h);
  const auto un = static_cast<std::size_t>(grid.size());
  beta.resize(un);
  alpha.resize(un);
  for (std::size_t k = 0; k < un; ++k) {
    const double dw = grid.omega()[k], omega = w0 + dw;
    const Complex n = n_eff(omega);
    beta[k] = omega / kSpeedOfLight * (n.real() - 1) - beta0 - beta1 * dw;
    alpha[k] = 2 * omega / kSpeedOfLight * n.imag();
  }
}

}  // namespace

Complex capillary_wall_index(const FibreConfig& fibre, double wavelength) {
  if (fibre.cladding == CladdingKind::index) return {fibre.cladding_index, fibre.cladding_extinction};
  if (!std::isfinite(wavelength) || wavelength <= 0)
    invalid_argument(kWhere, "wavelength = ", wavelength, " m must be finite and > 0");
  return capillary::fused_silica_index(
      std::clamp(wavelength, capillary::kSilicaMinWavelength, capillary::kSilicaMaxWavelength));
}

double capillary_gamma(const FibreConfig& fibre, double omega0) {
  require_positive(omega0, "ω0", "rad/s");
  const double wavelength = 2 * std::numbers::pi * kSpeedOfLight / omega0;
  const double n2 = gas::kerr_n2(fibre.gas, wavelength, fibre.pressure, fibre.temperature, fibre.helium_sellmeier);
  return n2 * omega0 / (kSpeedOfLight * capillary::effective_area(fibre.radius));
}

double default_raman_fraction(RamanModel model) {
  switch (model) {
    case RamanModel::none: return 0.0;
    case RamanModel::blow_wood: return 0.18;
    case RamanModel::lin_agrawal: return 0.245;
    case RamanModel::hollenbeck_cantrell: return 0.18;
  }
  return 0.0;
}

double raman_response(const FibreConfig& f, double t) {
  if (t < 0) return 0.0;
  switch (f.raman) {
    case RamanModel::none: return 0.0;
    case RamanModel::blow_wood: return blow_wood(f.raman_tau1, f.raman_tau2, t);
    case RamanModel::lin_agrawal: {
      const double tb = f.raman_taub;
      const double boson = (2 * tb - t) / (tb * tb) * std::exp(-t / tb);
      return (1 - f.raman_fb) * blow_wood(f.raman_tau1, f.raman_tau2, t) + f.raman_fb * boson;
    }
    case RamanModel::hollenbeck_cantrell: return hollenbeck_cantrell(t);
  }
  return 0.0;
}

MemberPhysics make_physics(const Config& config, const Grid& grid) {
  const FibreConfig& f = config.fibre;
  const std::int64_t n = grid.size();
  const auto un = static_cast<std::size_t>(n);
  const std::vector<double>& dw = grid.omega();
  const double w0 = grid.omega0();
  const double lo = w0 + dw[un / 2], hi = w0 + dw[un / 2 - 1];  // most negative and most positive
  validate(f, lo, hi);

  MemberPhysics p;
  p.points = n;
  const bool capillary = f.type == FibreType::capillary;
  p.gamma = capillary ? capillary_gamma(f, w0) : f.gamma;
  p.raman_fraction = f.raman == RamanModel::none ? 0.0 : f.raman_fraction;

  // Linear operator.
  std::vector<double> beta(un), capillary_alpha;
  if (capillary) {
    capillary_linear(f, grid, beta, capillary_alpha);
  } else if (!f.beta_table_omega.empty()) {
    const CubicSpline spline(f.beta_table_omega, f.beta_table_beta);
    const double beta0 = spline(w0), beta1 = spline.derivative(w0);
    for (std::size_t k = 0; k < un; ++k) beta[k] = spline(w0 + dw[k]) - beta0 - beta1 * dw[k];
  } else {
    for (std::size_t k = 0; k < un; ++k) beta[k] = taylor_beta(f.betas, dw[k]);
  }
  p.linear.resize(un);
  for (std::size_t k = 0; k < un; ++k) {
    const double alpha = capillary ? capillary_alpha[k]
                         : f.loss_table_omega.empty()
                             ? f.loss
                             : linear_interpolate(f.loss_table_omega, f.loss_table_alpha, w0 + dw[k]);
    p.linear[k] = Complex(-alpha / 2, beta[k]);
  }

  // Self-steepening and the spectral factor of N.
  p.shock.assign(un, 1.0);
  if (f.self_steepening)
    for (std::size_t k = 0; k < un; ++k) p.shock[k] = 1 + dw[k] / w0;
  p.nonlinear_factor.resize(un);
  p.gamma_shock.resize(un);
  for (std::size_t k = 0; k < un; ++k) {
    p.gamma_shock[k] = p.gamma * p.shock[k];
    p.nonlinear_factor[k] = Complex(0, p.gamma_shock[k]);
  }

  // Raman response: h sampled at the lags m·dt, m < n/2 (trapezoidal weight ½ at the lag 0,
  // where a response such as Lin–Agrawal's starts with a jump: second-order accurate),
  // normalised to a unit sum (H_R(0) = 1 exactly on the grid), then transformed with the
  // project's convention.
  if (p.has_raman()) {
    p.raman_time.assign(un, 0.0);
    double sum = 0;
    for (std::size_t m = 0; m < un / 2; ++m) {
      p.raman_time[m] = raman_response(f, static_cast<double>(m) * grid.dt()) * (m == 0 ? 0.5 : 1.0);
      sum += p.raman_time[m];
    }
    if (!(std::isfinite(sum) && sum > 0))
      invalid_argument(kWhere, "the Raman response of fibre.raman sums to ", sum, " on this grid (dt = ", grid.dt(),
                       " s): the grid cannot resolve it");
    for (double& w : p.raman_time) w /= sum;
    std::vector<Complex> h(un);
    for (std::size_t m = 0; m < un; ++m) h[m] = p.raman_time[m];
    p.raman_spectrum.resize(un);
    SpectralTransform(n).to_spectrum(h.data(), p.raman_spectrum.data());
  }
  return p;
}

}  // namespace lockstep::prop
