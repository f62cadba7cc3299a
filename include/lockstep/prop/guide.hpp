// The guide calculator (docs/GAS.md §7): for a gas-filled hollow capillary and a centre
// wavelength, the numbers one works out before a propagation — the gas index, β and its
// derivatives β1 … β6, loss, effective area, zero-dispersion wavelength, n2 and γ, and for a
// given pulse its peak power, soliton order, fission length and the phase-matched resonant
// dispersive wave. Built on gas.hpp (density, Sellmeier χ1, n2) and capillary.hpp (the HE11 mode
// of Marcatili and Schmeltzer). Pure host functions, no I/O; SI units; caller mistakes throw
// std::invalid_argument ("[prop.mode] …", or the prefix of gas.hpp / capillary.hpp for what
// those check: the equation of state's domain, a cladding index).
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/prop/capillary.hpp"
#include "lockstep/prop/config.hpp"  // PulseShape
#include "lockstep/prop/gas.hpp"

namespace lockstep::prop::guide {

/// A pulse at the guide's input (for the soliton quantities and the nonlinear phase matching).
struct Pulse {
  double energy = 0;                    ///< J, > 0
  double fwhm = 0;                      ///< s, intensity FWHM, > 0
  PulseShape shape = PulseShape::sech;  ///< sech or gaussian
};

/// What to compute for. Defaults: 20 °C, the default helium form, the full HE11 form with a
/// fused-silica wall, the search window of Malitson's silica form.
struct Query {
  gas::Species species = gas::Species::He;
  double pressure = 0;                            ///< Pa (0: an evacuated guide)
  double temperature = gas::kDefaultTemperature;  ///< K
  gas::HeliumForm helium = gas::kDefaultHeliumForm;
  capillary::Capillary capillary;  ///< radius (m, > 0), cladding, full or reduced form
  double wavelength = 0;           ///< λ0, m; inside the search window
  std::optional<Pulse> pulse;      ///< none: the pulse quantities are NaN, the RDW linear
  /// The window of wavelengths (m) where the zero-dispersion and RDW wavelengths are looked for
  /// and where the derivatives' bands stay. Default: 0.21–3.71 µm, the range of Malitson's silica
  /// form. The full form with a silica wall needs the wall's index for β, so its window must lie
  /// within that range; where β does not involve the wall (the reduced form with a real wall
  /// index, silica included) or the wall has a fixed index, the window may extend anywhere above
  /// the gas's longest Sellmeier resonance (gas::sellmeier_resonance) — into the vacuum
  /// ultraviolet for helium, say, where the gas's form is then extrapolated.
  double search_min = capillary::kSilicaMinWavelength;
  double search_max = capillary::kSilicaMaxWavelength;
};

/// The calculator's answer, SI units. NaN marks what does not exist (no pulse given, no
/// zero-dispersion wavelength in the window, no RDW); +∞ what diverges (the lengths when γ or β2
/// is zero).
struct Report {
  double omega0 = 0;     ///< 2πc/λ0, rad/s
  double chi1 = 0;       ///< χ1 of the gas at λ0
  double n_minus_1 = 0;  ///< n_gas − 1 at λ0
  double beta = 0;       ///< β(ω0) = (ω0/c) Re n_eff, 1/m
  /// β1 … β6 at ω0 (betas[k − 1] = d^kβ/dω^k, s^k/m).
  std::array<double, 6> betas{};
  double alpha = 0;          ///< power loss 2 (ω0/c) Im n_eff, 1/m
  double loss_db_per_m = 0;  ///< 10 α / ln 10
  double aeff = 0;           ///< HE11 effective area, m²
  double n2 = 0;             ///< m²/W
  double gamma = 0;          ///< n2 ω0 / (c A_eff), 1/(W m)
  /// The zero-dispersion wavelength nearest λ0 (NaN: none in the window), and every one found,
  /// ascending (β2 changes sign at each).
  double zdw = 0;
  std::vector<double> zdws;
  // The pulse (NaN without one):
  double t0 = 0;                 ///< s: FWHM / 1.7627 (sech) or / 1.6651 (gaussian), pulse_t0
  double peak_power = 0;         ///< P0, W: E / (2 T0) (sech), E / (√π T0) (gaussian)
  double dispersion_length = 0;  ///< L_D = T0² / |β2|, m
  double nonlinear_length = 0;   ///< L_NL = 1 / (γ P0), m
  double soliton_order = 0;      ///< N = √(γ P0 T0² / |β2|) = √(L_D / L_NL)
  double fission_length = 0;     ///< L_D / N, m; NaN unless β2 < 0 (no soliton in normal dispersion)
  /// The phase-matched resonant dispersive wave: the root of
  ///   Δβ(ω) = β(ω) − β(ω0) − β1(ω0)(ω − ω0) − γ P0 / 2   (without a pulse: no γ P0 / 2 term)
  /// nearest ω0 within the window, as a wavelength; NaN unless β2(ω0) < 0 or without a root.
  double rdw_wavelength = 0;
  double rdw_shift = 0;                   ///< the term subtracted: γ P0 / 2 with a pulse, 0 without, 1/m
  double search_min = 0, search_max = 0;  ///< the window searched, m
};

/// Validates `query` and computes its report (about a millisecond).
Report calculate(const Query& query);

/// β(ω) and its derivatives β1 … β6 at `omega` (rad/s, inside the query's window):
/// result[k] = d^kβ/dω^k, s^k/m. How: δβ(ω) = β(ω) − ω/c = (ω/c) Re(n_eff − 1) (capillary::
/// effective_index_excess, free of cancellation) times ω, g(ω) = ω δβ(ω), is interpolated at 16
/// Chebyshev points on a band around ω — half-width min(0.33 ω, (ω_r − ω)/4.5), ω_r the gas's
/// longest Sellmeier resonance, slid inside the window where it would stick out — and the
/// interpolant differentiated there; δβ^(k) follows from g by Leibniz' rule, and ω/c adds 1/c to
/// β1. Tested (tests/cpp/prop/test_guide.cpp) against the reduced form's closed form and the
/// full form's Cauchy integral, relative to |gas part| + |waveguide part| of β_k: below 1e-12
/// (β1), 1e-10 (β2), 1e-9 (β3), 1e-8 (β4), 1e-7 (β5), 1e-5 (β6); where the band has to slide
/// (λ0 within a third of itself from the window's ends) below 1e-11, 1e-9, 1e-7, 1e-5, 1e-4, 1e-3.
std::array<double, 7> betas(const Query& query, double omega);

/// The report's numbers by name, in the order the command line prints them: n_minus_1, beta,
/// beta1 … beta6, alpha, loss_db_per_m, aeff, zdw, n2, gamma, peak_power, t0, dispersion_length,
/// nonlinear_length, soliton_order, fission_length, rdw_wavelength (the JSON keys of
/// `lockstep prop mode --json` and the keys of lockstep.prop.mode's dict; zdws is apart).
std::vector<std::pair<std::string_view, double>> report_values(const Report& report);

}  // namespace lockstep::prop::guide
