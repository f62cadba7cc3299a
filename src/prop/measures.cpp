#include "lockstep/prop/measures.hpp"

#include <algorithm>
#include <cmath>

#include "lockstep/core/error.hpp"
#include "pointwise.hpp"

namespace lockstep::prop {

namespace {

double power(const std::complex<double>& v) { return pointwise::intensity(v.real(), v.imag()); }

}  // namespace

double energy_of_field(const std::complex<double>* field, const Grid& grid) {
  double sum = 0;
  for (std::int64_t j = 0; j < grid.size(); ++j) sum += power(field[j]);
  return sum * grid.dt();
}

double energy_of_spectrum(const std::complex<double>* spectrum, const Grid& grid) {
  double sum = 0;
  for (std::int64_t k = 0; k < grid.size(); ++k) sum += power(spectrum[k]);
  return pointwise::energy_from(sum, static_cast<double>(grid.size()), grid.dt());
}

double photon_number(const std::complex<double>* spectrum, const Grid& grid) {
  double sum = 0;
  for (std::int64_t k = 0; k < grid.size(); ++k)
    sum += pointwise::photons_at(power(spectrum[k]), grid.omega0(), grid.omega()[static_cast<std::size_t>(k)]);
  return pointwise::photons_from(sum, static_cast<double>(grid.size()), grid.dt(), kHbar);
}

double peak_power(const std::complex<double>* field, const Grid& grid) {
  double peak = 0;
  for (std::int64_t j = 0; j < grid.size(); ++j) peak = std::max(peak, power(field[j]));
  return peak;
}

double spectral_centroid(const std::complex<double>* spectrum, const Grid& grid) {
  double weighted = 0, total = 0;
  for (std::int64_t k = 0; k < grid.size(); ++k) {
    const double p = power(spectrum[k]);
    weighted += p * grid.omega()[static_cast<std::size_t>(k)];
    total += p;
  }
  return pointwise::centroid_from(total, weighted, grid.omega0());
}

FieldMeasures measure(const std::complex<double>* spectrum, const Grid& grid, SpectralTransform& transform,
                      std::complex<double>* scratch) {
  transform.to_time(spectrum, scratch);
  return {energy_of_spectrum(spectrum, grid), photon_number(spectrum, grid), peak_power(scratch, grid),
          spectral_centroid(spectrum, grid)};
}

std::vector<double> coherence(std::span<const std::vector<std::complex<double>>> spectra, const Grid& grid) {
  constexpr const char* where = "prop.coherence";
  const std::size_t members = spectra.size(), n = static_cast<std::size_t>(grid.size());
  if (members < 2) invalid_argument(where, "the coherence needs at least 2 spectra, got ", members);
  for (std::size_t m = 0; m < members; ++m)
    if (spectra[m].size() != n)
      invalid_argument(where, "spectrum ", m, " has ", spectra[m].size(), " values but the grid has ", n);
  const double pairs = static_cast<double>(members) * static_cast<double>(members - 1);
  std::vector<double> g(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = static_cast<std::size_t>(grid.ascending_to_fft(static_cast<std::int64_t>(i)));
    std::complex<double> sum = 0;
    double powers = 0;
    for (const auto& s : spectra) {
      sum += s[k];
      powers += power(s[k]);
    }
    // Σ_{i≠j} conj(Ã_i) Ã_j = |Σ Ã_i|² − Σ |Ã_i|² (real: the pairs come in conjugate couples).
    const double cross = power(sum) - powers;
    const double mean_power = powers / static_cast<double>(members);
    g[i] = mean_power > 0 ? std::abs(cross / pairs) / mean_power : 0.0;
  }
  return g;
}

}  // namespace lockstep::prop
