#include "lockstep/prop/guide.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "lockstep/core/error.hpp"
#include "lockstep/prop/grid.hpp"   // kSpeedOfLight
#include "lockstep/prop/pulse.hpp"  // pulse_t0

namespace lockstep::prop::guide {

namespace {

constexpr const char* kWhere = "prop.mode";
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kC = kSpeedOfLight;

// The derivatives' interpolation: kPoints Chebyshev points (first kind) on a band of half-width
// at most kMaxHalfWidth · ω, and at most 1/kResonanceMargin of the way to the gas's longest
// Sellmeier resonance. The interpolated function g(ω) = ω δβ(ω) has no pole at ω = 0 (the
// waveguide's −c u²/(2 a² ω) becomes a constant), so its nearest singularity is a resonance of
// the gas (the full form adds terms of relative size (u/ka)⁴ that are singular at ω = 0 and at
// the silica poles, too small to matter). Fewer points or a narrower band lose to truncation,
// more points to rounding amplified by the k-th derivative. Measured against the closed form
// (test_guide.cpp, largest error over ten gases and wavelengths relative to the scale of β_k):
// 12, 14, 16, 20 points give β6 to 3e-4, 9e-6, 2e-7, 4e-6 and β2 to 1e-8, 2e-10, 2e-12, 9e-11;
// half-widths 0.25, 0.33, 0.4 give β4 to 2e-9, 1e-9, 4e-9 with 16 points.
constexpr int kPoints = 16;
constexpr double kMaxHalfWidth = 0.33;
constexpr double kResonanceMargin = 4.5;
constexpr int kOrders = 6;

// Zero-dispersion and RDW searches: sign changes on a geometric grid of the window, refined by
// Brent's method.
constexpr int kScanPoints = 240;

double omega_of(double wavelength) { return 2 * std::numbers::pi * kC / wavelength; }

bool finite_positive(double x) { return std::isfinite(x) && x > 0; }

/// Brent's root finder on [a, b] with f(a), f(b) of opposite signs; to |Δ| ≤ 4 ε |x|.
template <class F> double brent(F&& f, double a, double b, double fa, double fb) {
  double c = a, fc = fa, d = b - a, e = d;
  for (int iteration = 0; iteration < 200; ++iteration) {
    if ((fb > 0) == (fc > 0)) {
      c = a, fc = fa;
      d = e = b - a;
    }
    if (std::abs(fc) < std::abs(fb)) {
      a = b, b = c, c = a;
      fa = fb, fb = fc, fc = fa;
    }
    const double tol = 4 * std::numeric_limits<double>::epsilon() * std::abs(b);
    const double m = 0.5 * (c - b);
    if (std::abs(m) <= tol || fb == 0) return b;
    if (std::abs(e) >= tol && std::abs(fa) > std::abs(fb)) {
      // Inverse quadratic interpolation, or the secant step when only two points differ.
      double p, q;
      const double s = fb / fa;
      if (a == c) {
        p = 2 * m * s;
        q = 1 - s;
      } else {
        const double r = fb / fc, t = fa / fc;
        p = s * (2 * m * t * (t - r) - (b - a) * (r - 1));
        q = (t - 1) * (r - 1) * (s - 1);
      }
      if (p > 0) q = -q;
      else p = -p;
      if (2 * p < std::min(3 * m * q - std::abs(tol * q), std::abs(e * q))) {
        e = d;
        d = p / q;
      } else {
        d = e = m;
      }
    } else {
      d = e = m;
    }
    a = b, fa = fb;
    b += std::abs(d) > tol ? d : (m > 0 ? tol : -tol);
    fb = f(b);
  }
  return b;
}

/// The query, validated, with what every evaluation shares computed once.
class Guide {
 public:
  explicit Guide(const Query& q) : q_(q) {
    if (!finite_positive(q.capillary.radius))
      invalid_argument(kWhere, "core radius ", q.capillary.radius, " m must be finite and > 0");
    if (!std::isfinite(q.pressure) || q.pressure < 0)
      invalid_argument(kWhere, "pressure ", q.pressure, " Pa must be finite and ≥ 0");
    if (!std::isfinite(q.temperature)) invalid_argument(kWhere, "temperature ", q.temperature, " K must be finite");
    if (q.capillary.form != capillary::ModeForm::full && q.capillary.form != capillary::ModeForm::reduced)
      invalid_argument(kWhere, "mode form ", static_cast<int>(q.capillary.form), " is neither full nor reduced");
    if (!finite_positive(q.search_min) || !finite_positive(q.search_max) || !(q.search_min < q.search_max))
      invalid_argument(kWhere, "search window [", q.search_min, ", ", q.search_max,
                       "] m must be finite, positive and ascending");
    const bool silica = q.capillary.cladding.kind == capillary::Cladding::Kind::silica;
    // Re n_eff involves the wall unless the form is reduced and the wall's index real (then the
    // wall only enters Im n_eff): β can then be evaluated beyond the silica form's range.
    wall_in_beta_ =
        !(q.capillary.form == capillary::ModeForm::reduced && (silica || q.capillary.cladding.index.imag() == 0));
    if (silica && wall_in_beta_ &&
        (q.search_min < capillary::kSilicaMinWavelength || q.search_max > capillary::kSilicaMaxWavelength))
      invalid_argument(kWhere, "search window [", q.search_min, ", ", q.search_max,
                       "] m reaches outside Malitson's fused-silica range (", capillary::kSilicaMinWavelength, " m to ",
                       capillary::kSilicaMaxWavelength,
                       " m), which the full form's β needs; use the reduced form or a fixed cladding index there");
    resonance_ = gas::sellmeier_resonance(q.species, q.helium);
    if (!(q.search_min > resonance_))
      invalid_argument(kWhere, "search window [", q.search_min, ", ", q.search_max, "] m starts at or below ",
                       gas::species_name(q.species), "'s Sellmeier resonance at ", resonance_, " m");
    if (!std::isfinite(q.wavelength) || q.wavelength < q.search_min || q.wavelength > q.search_max)
      invalid_argument(kWhere, "wavelength ", q.wavelength, " m must lie inside the search window [", q.search_min,
                       ", ", q.search_max, "] m");
    if (q.pulse) {
      if (!finite_positive(q.pulse->energy))
        invalid_argument(kWhere, "pulse energy ", q.pulse->energy, " J must be finite and > 0");
      if (!finite_positive(q.pulse->fwhm))
        invalid_argument(kWhere, "pulse duration (FWHM) ", q.pulse->fwhm, " s must be finite and > 0");
      if (q.pulse->shape != PulseShape::sech && q.pulse->shape != PulseShape::gaussian)
        invalid_argument(kWhere, "pulse shape must be sech or gaussian");
    }
    rho_ = gas::number_density(q.species, q.pressure, q.temperature);
    rho_s_ = gas::sellmeier_density(q.species, q.helium);
    beta_capillary_ = q.capillary;
    // Any real index gives the reduced form's real part bit for bit (its wall term is imaginary).
    if (!wall_in_beta_ && silica) beta_capillary_.cladding = capillary::Cladding::fixed_index({1.45, 0.0});
    omega_min_ = omega_of(q.search_max);
    omega_max_ = omega_of(q.search_min);
    omega_resonance_ = resonance_ > 0 ? omega_of(resonance_) : kInf;
  }

  double omega_min() const { return omega_min_; }
  double omega_max() const { return omega_max_; }

  /// χ1 of the gas at ω (gas::susceptibility with the density computed once).
  double chi1(double omega) const {
    return gas::sellmeier(q_.species, 2 * std::numbers::pi * kC / omega, q_.helium) * rho_ / rho_s_;
  }

  /// δβ(ω) = β(ω) − ω/c = (ω/c) Re(n_eff − 1), 1/m.
  double excess(double omega) const {
    return omega / kC * capillary::effective_index_excess(beta_capillary_, omega, chi1(omega)).real();
  }

  /// δβ^(k)(ω), k = 0 … 6 (see betas() in guide.hpp).
  std::array<double, kOrders + 1> derivatives(double omega) const {
    // The band: centred on ω, slid back inside the window where it sticks out at one end (so
    // its width, which the accuracy needs, is kept), then cut to the window.
    const double half_width = std::min(kMaxHalfWidth * omega, (omega_resonance_ - omega) / kResonanceMargin);
    double lo = omega - half_width, hi = omega + half_width;
    if (lo < omega_min_) hi += omega_min_ - lo;
    if (hi > omega_max_) lo -= hi - omega_max_;
    lo = std::max(lo, omega_min_);
    hi = std::min(hi, omega_max_);
    const double mid = (lo + hi) / 2, half = (hi - lo) / 2;
    // g = ω δβ at the Chebyshev points of [lo, hi]; its Chebyshev coefficients.
    std::array<double, kPoints> g{}, coefficients{};
    for (int j = 0; j < kPoints; ++j) {
      const double w = mid + half * std::cos(std::numbers::pi * (j + 0.5) / kPoints);
      g[j] = w * excess(w);
    }
    for (int k = 0; k < kPoints; ++k) {
      double sum = 0;
      for (int j = 0; j < kPoints; ++j) sum += g[j] * std::cos(std::numbers::pi * k * (j + 0.5) / kPoints);
      coefficients[k] = 2.0 / kPoints * sum;
    }
    coefficients[0] /= 2;
    // g^(m) at ω: differentiate the series m times (b_k = b_{k+2} + 2 (k+1) a_{k+1}, the T_0
    // term halved), evaluate by Clenshaw, scale by half^−m.
    std::array<double, kOrders + 1> dg{};
    dg[0] = omega * excess(omega);
    const double t = (omega - mid) / half;
    std::array<double, kPoints> a = coefficients;
    int n = kPoints;
    double scale = 1;
    for (int m = 1; m <= kOrders; ++m) {
      std::array<double, kPoints> b{};
      for (int k = n - 2; k >= 0; --k) b[k] = (k + 2 < n - 1 ? b[k + 2] : 0.0) + 2 * (k + 1) * a[k + 1];
      b[0] /= 2;
      a = b;
      --n;
      scale /= half;
      double b1 = 0, b2 = 0;  // Clenshaw
      for (int k = n - 1; k >= 1; --k) {
        const double b0 = 2 * t * b1 - b2 + a[k];
        b2 = b1;
        b1 = b0;
      }
      dg[m] = (t * b1 - b2 + a[0]) * scale;
    }
    // δβ = g · (1/ω): Leibniz, with (1/ω)^(r) = (−1)^r r! / ω^(r+1).
    std::array<double, kOrders + 1> out{};
    for (int k = 0; k <= kOrders; ++k) {
      double sum = 0, binomial = 1;  // C(k, j)
      for (int j = k; j >= 0; --j) {
        const int r = k - j;
        double inverse = (r % 2 ? -1.0 : 1.0) / omega;  // (1/ω)^(r)
        for (int i = 1; i <= r; ++i) inverse *= i / omega;
        sum += binomial * dg[j] * inverse;
        binomial = binomial * j / (r + 1);
      }
      out[k] = sum;
    }
    return out;
  }

 private:
  Query q_;
  capillary::Capillary beta_capillary_;
  bool wall_in_beta_ = true;
  double resonance_ = 0, rho_ = 0, rho_s_ = 1;
  double omega_min_ = 0, omega_max_ = 0, omega_resonance_ = kInf;
};

/// The roots of f on the window where it changes sign between neighbours of a geometric grid
/// (skipping grid points within `exclude` of ω0, relative), refined by Brent; ascending in ω.
template <class F> std::vector<double> sign_changes(const Guide& guide, F&& f, double omega0, double exclude) {
  std::vector<double> roots;
  const double ratio = guide.omega_max() / guide.omega_min();
  double previous_omega = 0, previous_value = 0;
  bool have_previous = false;
  for (int i = 0; i < kScanPoints; ++i) {
    const double w =
        i == kScanPoints - 1 ? guide.omega_max() : guide.omega_min() * std::pow(ratio, double(i) / (kScanPoints - 1));
    if (exclude > 0 && std::abs(w / omega0 - 1) < exclude) continue;
    const double value = f(w);
    if (value == 0) {
      roots.push_back(w);
      have_previous = false;  // a root at the grid point itself
      continue;
    }
    if (have_previous && (value > 0) != (previous_value > 0))
      roots.push_back(brent(f, previous_omega, w, previous_value, value));
    previous_omega = w;
    previous_value = value;
    have_previous = true;
  }
  return roots;
}

}  // namespace

std::array<double, 7> betas(const Query& query, double omega) {
  const Guide guide(query);
  if (!std::isfinite(omega) || omega < guide.omega_min() || omega > guide.omega_max())
    invalid_argument(kWhere, "angular frequency ", omega, " rad/s is outside the search window [", guide.omega_min(),
                     ", ", guide.omega_max(), "] rad/s");
  auto d = guide.derivatives(omega);
  d[0] += omega / kC;
  d[1] += 1 / kC;
  return d;
}

Report calculate(const Query& query) {
  const Guide guide(query);
  const capillary::Capillary& cap = query.capillary;
  Report r;
  r.search_min = query.search_min;
  r.search_max = query.search_max;
  const double w0 = omega_of(query.wavelength);
  r.omega0 = w0;
  r.chi1 = guide.chi1(w0);
  r.n_minus_1 = r.chi1 / (1 + std::sqrt(1 + r.chi1));  // √(1 + χ1) − 1 without cancellation
  r.beta = capillary::propagation_constant(cap, w0, r.chi1);
  const auto d = guide.derivatives(w0);
  for (int k = 1; k <= kOrders; ++k) r.betas[k - 1] = d[k];
  r.betas[0] += 1 / kC;
  r.alpha = capillary::power_loss(cap, w0, r.chi1);
  r.loss_db_per_m = capillary::to_db_per_metre(r.alpha);
  r.aeff = capillary::effective_area(cap.radius);
  r.n2 = gas::kerr_n2(query.species, query.wavelength, query.pressure, query.temperature, query.helium);
  r.gamma = r.n2 * w0 / (kC * r.aeff);

  // Zero-dispersion wavelengths: β2 = δβ'' changes sign.
  const auto beta2 = [&](double w) { return guide.derivatives(w)[2]; };
  for (double w : sign_changes(guide, beta2, w0, 0.0)) r.zdws.push_back(omega_of(w));
  std::sort(r.zdws.begin(), r.zdws.end());
  r.zdw = kNaN;
  for (double z : r.zdws)
    if (std::isnan(r.zdw) || std::abs(z - query.wavelength) < std::abs(r.zdw - query.wavelength)) r.zdw = z;

  const double b2 = r.betas[1];
  r.t0 = r.peak_power = r.dispersion_length = r.nonlinear_length = r.soliton_order = r.fission_length = kNaN;
  r.rdw_shift = 0;
  if (query.pulse) {
    PulseConfig p;
    p.shape = query.pulse->shape;
    p.fwhm = query.pulse->fwhm;
    r.t0 = pulse_t0(p);
    // ∫ sech²(t/T0) dt = 2 T0, ∫ exp(−t²/T0²) dt = √π T0.
    r.peak_power = query.pulse->energy / (p.shape == PulseShape::sech ? 2 * r.t0 : std::sqrt(std::numbers::pi) * r.t0);
    r.dispersion_length = b2 != 0 ? r.t0 * r.t0 / std::abs(b2) : kInf;
    r.nonlinear_length = r.gamma > 0 ? 1 / (r.gamma * r.peak_power) : kInf;
    r.soliton_order = b2 != 0 ? std::sqrt(r.gamma * r.peak_power * r.t0 * r.t0 / std::abs(b2)) : kInf;
    if (b2 < 0) r.fission_length = r.soliton_order > 0 ? r.dispersion_length / r.soliton_order : kInf;
    r.rdw_shift = r.gamma * r.peak_power / 2;
  }

  // The RDW: Δβ(ω) = δβ(ω) − δβ(ω0) − δβ'(ω0)(ω − ω0) − shift (the ω/c parts of β cancel
  // exactly). For a pump in anomalous dispersion Δβ < 0 near ω0 (a double root at ω0 without
  // the shift), so the grid skips 0.1 % around ω0 and the root is where Δβ turns positive.
  r.rdw_wavelength = kNaN;
  if (b2 < 0) {
    const double e0 = guide.excess(w0), e1 = d[1];
    const auto mismatch = [&](double w) { return guide.excess(w) - e0 - e1 * (w - w0) - r.rdw_shift; };
    double best = kNaN;
    for (double w : sign_changes(guide, mismatch, w0, 1e-3))
      if (std::isnan(best) || std::abs(std::log(w / w0)) < std::abs(std::log(best / w0))) best = w;
    if (!std::isnan(best)) r.rdw_wavelength = omega_of(best);
  }
  return r;
}

std::vector<std::pair<std::string_view, double>> report_values(const Report& r) {
  return {{"n_minus_1", r.n_minus_1},
          {"beta", r.beta},
          {"beta1", r.betas[0]},
          {"beta2", r.betas[1]},
          {"beta3", r.betas[2]},
          {"beta4", r.betas[3]},
          {"beta5", r.betas[4]},
          {"beta6", r.betas[5]},
          {"alpha", r.alpha},
          {"loss_db_per_m", r.loss_db_per_m},
          {"aeff", r.aeff},
          {"zdw", r.zdw},
          {"n2", r.n2},
          {"gamma", r.gamma},
          {"peak_power", r.peak_power},
          {"t0", r.t0},
          {"dispersion_length", r.dispersion_length},
          {"nonlinear_length", r.nonlinear_length},
          {"soliton_order", r.soliton_order},
          {"fission_length", r.fission_length},
          {"rdw_wavelength", r.rdw_wavelength}};
}

}  // namespace lockstep::prop::guide
