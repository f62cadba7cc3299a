// The configuration of one propagation member, in SI units throughout (s, m, W, rad/s).
//
// This is the contract between the recipe reader (TOML with lab units, src/prop/io), the
// numerics (grid, fibre, pulse, stepper, runners) and the result files (the configuration
// hash covers every field here). Lab units are converted at the edges only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/prop/capillary.hpp"
#include "lockstep/prop/gas.hpp"

namespace lockstep::prop {

/// The time grid: `points` samples over `time_window` centred on T = 0, carrier at
/// `center_wavelength`. Frequency grid: ω = ω0 + 2π·k/time_window (FFT order inside the
/// numerics; ascending in the result files).
struct GridConfig {
  std::int64_t points = 8192;         ///< number of samples (≥ 16, even)
  double time_window = 12.5e-12;      ///< s
  double center_wavelength = 835e-9;  ///< m
  bool operator==(const GridConfig&) const = default;
};

/// Raman response models of docs/PROPAGATION.md §1.
enum class RamanModel { none, blow_wood, lin_agrawal, hollenbeck_cantrell };

/// What describes the guide: its coefficients as given (Taylor β_k or a β(ω) table, loss, γ),
/// or a gas-filled hollow capillary whose β(ω), α(ω) and γ follow from the gas and the HE11
/// mode (docs/GAS.md §6).
enum class FibreType { coefficients, capillary };

/// The capillary's wall: fused silica (Malitson's index, held at its value at the edge of the
/// form's range beyond 0.21–3.71 µm) or the fixed complex index cladding_index + i·cladding_extinction.
enum class CladdingKind { silica, index };

/// The fibre: dispersion (Taylor coefficients or a table), loss, nonlinearity; or a capillary.
/// Fields marked "coefficients" apply to FibreType::coefficients only, those marked
/// "capillary" to FibreType::capillary only; the others to both.
struct FibreConfig {
  double length = 0.15;                      ///< m (> 0)
  FibreType type = FibreType::coefficients;  ///< how β, α and γ are given
  /// β2, β3, ... at ω0, in s^k/m (betas[0] is β2). Ignored when `beta_table_omega` is non-empty.
  std::vector<double> betas = {-11.830e-27, 8.1038e-41,   -9.5205e-56, 2.0737e-70,  -5.3943e-85,
                               1.3486e-99,  -2.5495e-114, 3.0524e-129, -1.7140e-144};
  /// Tabulated propagation constant: absolute angular frequencies (rad/s, ascending) and β(ω)
  /// (1/m). When given, the numerics remove β(ω0) and β1(ω0)·(ω−ω0) (the moving frame) and
  /// interpolate onto the grid.
  std::vector<double> beta_table_omega, beta_table_beta;
  double loss = 0.0;  ///< α, power attenuation, 1/m (the field decays as e^{-αz/2})
  /// Tabulated loss α(ω) (1/m) on `loss_table_omega` (rad/s, ascending); replaces `loss`.
  std::vector<double> loss_table_omega, loss_table_alpha;
  double gamma = 0.11;  ///< 1/(W·m) (coefficients)
  // Capillary: the gas at a constant pressure and temperature, the core radius, the form of
  // the HE11 effective index, the wall, and the Sellmeier form of helium.
  gas::Species gas = gas::Species::He;                         ///< capillary
  double pressure = 1e5;                                       ///< Pa (capillary; 0 … 150 bar)
  double temperature = gas::kDefaultTemperature;               ///< K (capillary; 250 … 500 K)
  double radius = 125e-6;                                      ///< m, core radius (capillary)
  capillary::ModeForm mode_model = capillary::ModeForm::full;  ///< capillary
  CladdingKind cladding = CladdingKind::silica;                ///< capillary
  double cladding_index = 1.45;                                ///< Re n of the wall (capillary, cladding = index)
  double cladding_extinction = 0.0;                            ///< Im n ≥ 0 of the wall (capillary, cladding = index)
  gas::HeliumForm helium_sellmeier = gas::kDefaultHeliumForm;  ///< capillary filled with He
  bool self_steepening = true;                                 ///< the (1 + (ω−ω0)/ω0) factor
  /// Raman response (coefficients; a capillary takes none: noble gases have no Raman response,
  /// and the rotational response of N2 and air is not modelled yet). The raman_* parameters
  /// below apply to the coefficients fibre only.
  RamanModel raman = RamanModel::blow_wood;
  double raman_fraction = 0.18;  ///< f_R; the model's usual value is the default for each model
  double raman_tau1 = 12.2e-15;  ///< s (Blow–Wood τ1)
  double raman_tau2 = 32e-15;    ///< s (Blow–Wood τ2)
  double raman_fb = 0.21;        ///< Lin–Agrawal boson-peak fraction f_b
  double raman_taub = 96e-15;    ///< s (Lin–Agrawal τ_b)
};

enum class PulseShape { sech, gaussian, user };

/// The input field A(0, T), √W.
struct PulseConfig {
  PulseShape shape = PulseShape::sech;
  double peak_power = 10e3;  ///< W; used when energy is 0
  /// J; > 0: launch by energy instead of peak power (sech: P0 = E/(2 T0); gaussian:
  /// P0 = E/(√π T0); user: the samples scaled to this energy). 0: launch by peak_power.
  double energy = 0.0;
  double fwhm = 50e-15;  ///< s, intensity FWHM (sech: T0 = fwhm / 1.7627; gaussian: fwhm / 1.6651)
  double chirp = 0.0;    ///< C in exp(−(1+iC)T²/2T0²) (gaussian) or the same quadratic phase (sech)
  double delay = 0.0;    ///< s, centre of the pulse on the time grid
  /// m, the pulse's carrier wavelength when it differs from grid.center_wavelength (the frame
  /// and the grid stay centred at ω0); 0: the carrier is ω0. Lets a grid centred on the blue
  /// side hold a near-infrared pump and the ultraviolet it generates.
  double wavelength = 0.0;
  /// User-supplied field: samples of A on `user_time` (s, ascending), real and imaginary parts
  /// (√W), interpolated onto the grid; zero outside.
  std::vector<double> user_time, user_re, user_im;
  bool shot_noise = false;       ///< add one photon per mode with random phases
  std::uint64_t noise_seed = 0;  ///< per member; an ensemble gives members consecutive seeds
};

/// Super-Gaussian windows applied to the field after every accepted step (0 disables one).
struct WindowConfig {
  double time_edge = 0.0;       ///< fraction of the time window tapered at each edge (0 … 0.5)
  double frequency_edge = 0.0;  ///< fraction of the frequency window tapered at each edge
};

enum class Scheme { rk4ip, erk43ip, dp54ip };
enum class ErrorNorm { weak, max, rms };
/// What a fixed-schedule run does when a step's error norm exceeds 1.
enum class FixedPolicy { record, fail, subdivide };

struct SteppingConfig {
  Scheme scheme = Scheme::dp54ip;
  bool adaptive = true;  ///< false: a fixed schedule
  double rtol = 1e-6;
  double atol = 1e-10;
  ErrorNorm norm = ErrorNorm::weak;
  double initial_step = 1e-5;  ///< m, the first trial dz of an adaptive run
  double min_step = 0.0;       ///< m, 0: none
  double max_step = 0.0;       ///< m, 0: the fibre length
  int max_rejections = 50;     ///< consecutive rejections that end the run with an error
  /// Fixed schedule: `fixed_steps` uniform steps, or the explicit step ends in `schedule` (m,
  /// ascending, last = length), e.g. replayed from an earlier adaptive run. Save planes are
  /// always added.
  std::int64_t fixed_steps = 1000;
  std::vector<double> schedule;
  FixedPolicy policy = FixedPolicy::record;
};

struct OutputConfig {
  int n_save = 200;            ///< evenly spaced planes, both ends included (≥ 2)
  std::vector<double> save_z;  ///< explicit planes (m) instead, when non-empty
};

/// One member's whole configuration.
struct Config {
  GridConfig grid;
  FibreConfig fibre;
  PulseConfig pulse;
  WindowConfig window;
  SteppingConfig stepping;
  OutputConfig output;
};

}  // namespace lockstep::prop
