// Gases of a gas-filled hollow-core guide (docs/GAS.md): number density from a real-gas
// equation of state, linear susceptibility (Sellmeier forms), third-order susceptibility and n2.
// Pure host functions; SI units throughout (pressure in Pa, temperature in K, wavelength in m,
// number density in 1/m³). Every function validates its arguments and throws
// std::invalid_argument ("[prop.gas] …") for a caller mistake.
#pragma once

#include <array>
#include <span>
#include <string_view>

namespace lockstep::prop::gas {

enum class Species { He, Ne, Ar, Kr, Xe, N2, air };

/// Every species, in declaration order.
inline constexpr std::array<Species, 7> kAllSpecies = {Species::He, Species::Ne, Species::Ar, Species::Kr,
                                                       Species::Xe, Species::N2, Species::air};

/// "He", "Ne", "Ar", "Kr", "Xe", "N2", "air".
std::string_view species_name(Species species);
/// The species whose species_name equals `name` ignoring ASCII case ("xe", "AIR", "n2");
/// std::invalid_argument listing the accepted names otherwise.
Species species_from_name(std::string_view name);

/// Boltzmann constant, J/K (exact).
inline constexpr double kBoltzmann = 1.380649e-23;
/// Vacuum permittivity, F/m (CODATA 2018).
inline constexpr double kVacuumPermittivity = 8.8541878128e-12;
/// One bar and one standard atmosphere, Pa.
inline constexpr double kBar = 1e5;
inline constexpr double kAtmosphere = 101325.0;
/// 0 °C, K: the temperature of the reference density.
inline constexpr double kZeroCelsius = 273.15;
/// The temperature every function takes when none is given, K (20 °C).
inline constexpr double kDefaultTemperature = 293.15;

// ---------------------------------------------------------------------------------------------
// Equation of state
// ---------------------------------------------------------------------------------------------

/// The (T, p) domain of the equation-of-state table: kMinTemperature ≤ T ≤ kMaxTemperature and
/// 0 ≤ p ≤ kMaxPressure; xenon below its critical temperature only as vapour, p ≤ p_sat(T).
inline constexpr double kMinTemperature = 250.0;  ///< K
inline constexpr double kMaxTemperature = 500.0;  ///< K
inline constexpr double kMaxPressure = 150e5;     ///< Pa (150 bar)

/// Number density ρ(p, T), 1/m³, of the pure gas from its real-gas equation of state (the
/// reference equations of CoolProp, tabulated by scripts/gas_tables.py as Z(T, ρ) and inverted
/// here; relative error against CoolProp below 1e-9, docs/GAS.md). std::invalid_argument for
/// a non-finite argument, T or p outside the domain above, or xenon below its critical
/// temperature at a pressure above its saturation pressure (it condenses there).
double number_density(Species species, double pressure, double temperature = kDefaultTemperature);

/// Compressibility factor Z = p / (ρ k_B T) at (p, T) (1 at p = 0 up to each equation of
/// state's own gas constant, a few 1e-6); same domain and errors as number_density.
double compressibility(Species species, double pressure, double temperature = kDefaultTemperature);

/// ρ(1 bar, 0 °C), 1/m³: the density the Börzsönyi Sellmeier forms refer to.
double reference_density(Species species);

/// The pressure, Pa, above which `species` condenses at `temperature` within the domain:
/// xenon's saturation pressure p_sat(T) for T below its critical temperature, +∞ for every
/// other (species, T) of the domain. std::invalid_argument for T outside the domain.
double condensation_pressure(Species species, double temperature);

/// Xenon's critical point (the equation of state's), K and Pa.
double xenon_critical_temperature();
double xenon_critical_pressure();

// ---------------------------------------------------------------------------------------------
// Linear susceptibility: χ1(λ) = S(λ) · ρ / ρ_S, n = √(1 + χ1)
// ---------------------------------------------------------------------------------------------

/// The two Sellmeier forms offered for helium. ermolov (the default) is the three-term fit of
/// Ermolov et al., Phys. Rev. A 92, 033821 (2015), to data from the vacuum ultraviolet to the
/// near infrared; borzsonyi is the two-term fit of Börzsönyi et al., Appl. Opt. 47, 4856 (2008),
/// made around 800 nm. The other species have the Börzsönyi form only.
enum class HeliumForm { ermolov, borzsonyi };
inline constexpr HeliumForm kDefaultHeliumForm = HeliumForm::ermolov;

/// S(λ) = Σ_i B_i λ² / (λ² − C_i) (λ in µm inside; `wavelength` in m): χ1 at the density
/// sellmeier_density. std::invalid_argument unless the wavelength is finite and longer than the
/// form's longest resonance (√C_i; 0.116 µm for N2, the longest of all, 0.113 µm for Xe).
double sellmeier(Species species, double wavelength, HeliumForm helium = kDefaultHeliumForm);

/// The longest resonance wavelength of the form, m: the largest √C_i over its terms with C_i > 0
/// (N2 0.116 µm, the longest of all; Xe 0.113 µm). sellmeier refuses wavelengths at or below
/// it; near it the form (a fit) says little.
double sellmeier_resonance(Species species, HeliumForm helium = kDefaultHeliumForm);

/// ρ_S, the density the Sellmeier form refers to, 1/m³: reference_density(species) (1 bar,
/// 0 °C) for the Börzsönyi forms, ρ(1 atm, 0 °C) for Ermolov's helium (its coefficients
/// reproduce the 1 atm data of Mansfield and Peck to 0.12 %; scaled from 1 bar they would lie
/// 1.3 % high; docs/GAS.md).
double sellmeier_density(Species species, HeliumForm helium = kDefaultHeliumForm);

/// χ1 = S(λ) · ρ(p, T) / ρ_S of the pure gas (dimensionless).
double susceptibility(Species species, double wavelength, double pressure, double temperature = kDefaultTemperature,
                      HeliumForm helium = kDefaultHeliumForm);

/// n = √(1 + χ1) of the pure gas.
double refractive_index(Species species, double wavelength, double pressure, double temperature = kDefaultTemperature,
                        HeliumForm helium = kDefaultHeliumForm);

/// One component of a mixture: its species and its partial pressure, Pa.
struct Component {
  Species species;
  double pressure;
};

/// χ1 of a mixture: Σ_i S_i(λ) ρ_i / ρ_S,i with ρ_i = ρ(p_i, T), each component at its partial
/// pressure as if alone. std::invalid_argument for an empty mixture or any invalid component.
double susceptibility(std::span<const Component> mixture, double wavelength, double temperature = kDefaultTemperature,
                      HeliumForm helium = kDefaultHeliumForm);

/// n = √(1 + χ1) of a mixture.
double refractive_index(std::span<const Component> mixture, double wavelength, double temperature = kDefaultTemperature,
                        HeliumForm helium = kDefaultHeliumForm);

// ---------------------------------------------------------------------------------------------
// Kerr nonlinearity: χ3 = γ3 ρ, n2 = ¾ χ3 / (ε0 c n0²)
// ---------------------------------------------------------------------------------------------

/// Third-order susceptibility per atom or molecule, γ3 = 4 f · 3.43e-28 m²/V² / ρ(1 atm, 0 °C)
/// (Lehmeier, Leupacher and Penzkofer, Opt. Commun. 56, 67 (1985): f = χ3 relative to helium,
/// He 1, Ne 1.8, Ar 23.5, Kr 64.0, Xe 188.2, N2 21.1); m⁵/V². Air, which that paper did not
/// measure, is the mole-fraction mean of N2, O2 and Ar (docs/GAS.md).
double gamma3(Species species);

/// χ3 = γ3 · ρ(p, T), m²/V².
double chi3(Species species, double pressure, double temperature = kDefaultTemperature);

/// χ3 of a mixture: Σ_i γ3,i ρ(p_i, T).
double chi3(std::span<const Component> mixture, double temperature = kDefaultTemperature);

/// Kerr coefficient n2 = ¾ χ3 / (ε0 c n0²), m²/W, with n0 the gas's index at `wavelength`.
double kerr_n2(Species species, double wavelength, double pressure, double temperature = kDefaultTemperature,
               HeliumForm helium = kDefaultHeliumForm);

/// n2 of a mixture (χ3 and n0 of the mixture).
double kerr_n2(std::span<const Component> mixture, double wavelength, double temperature = kDefaultTemperature,
               HeliumForm helium = kDefaultHeliumForm);

}  // namespace lockstep::prop::gas
