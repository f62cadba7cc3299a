// `lockstep prop mode`: the guide calculator (include/lockstep/prop/guide.hpp) from the command
// line — a table with units, or with --json one JSON object in SI units (null for what does not
// exist: no pulse given, no zero-dispersion wavelength or RDW in the window).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "lockstep/prop/guide.hpp"
#include "lockstep/prop/guide_text.hpp"

namespace lockstep::cli {

namespace {

using namespace lockstep::prop;

/// The shortest text that reads back as `value`; null where JSON has no number.
std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

void print_json(const guide::Report& r) {
  std::string out = "{";
  for (const auto& [key, value] : guide::report_values(r)) {
    out += out.size() > 1 ? ", \"" : "\"";
    out += key;
    out += "\": " + json_number(value);
  }
  out += ", \"zdws\": [";
  for (std::size_t i = 0; i < r.zdws.size(); ++i) out += (i ? ", " : "") + json_number(r.zdws[i]);
  out += "]}\n";
  std::fputs(out.c_str(), stdout);
}

/// One aligned line: name, value (%.6g), unit and a note ("none" for NaN).
void row(const char* name, double value, const char* unit, const char* note = "") {
  char line[256];
  if (std::isnan(value)) std::snprintf(line, sizeof line, "  %-20s %14s  %-9s %s", name, "none", "", note);
  else std::snprintf(line, sizeof line, "  %-20s %14.6g  %-9s %s", name, value, unit, note);
  std::string text = line;
  text.erase(text.find_last_not_of(' ') + 1);
  std::puts(text.c_str());
}

void print_table(const guide::Query& q, const guide::Report& r) {
  const bool silica = q.capillary.cladding.kind == capillary::Cladding::Kind::silica;
  char wall[96];
  if (silica) std::snprintf(wall, sizeof wall, "fused-silica wall");
  else
    std::snprintf(wall, sizeof wall, "wall index %.6g%+.6gi", q.capillary.cladding.index.real(),
                  q.capillary.cladding.index.imag());
  std::printf(
      "HE11 of a hollow capillary (Marcatili-Schmeltzer, %s form): %s at %.6g bar, %.6g K; core radius "
      "%.6g um; %s\n",
      q.capillary.form == capillary::ModeForm::full ? "full" : "reduced",
      std::string(gas::species_name(q.species)).c_str(), q.pressure / 1e5, q.temperature, q.capillary.radius * 1e6,
      wall);
  std::printf("at %.6g nm (omega0 = %.6g rad/s); window %.6g-%.6g nm\n", q.wavelength * 1e9, r.omega0,
              r.search_min * 1e9, r.search_max * 1e9);
  row("n_gas - 1", r.n_minus_1, "");
  row("beta", r.beta, "1/m");
  static const char* const kUnits[] = {"s/m", "s^2/m", "s^3/m", "s^4/m", "s^5/m", "s^6/m"};
  for (int k = 0; k < 6; ++k) {
    const std::string name = "beta" + std::to_string(k + 1);
    row(name.c_str(), r.betas[k], kUnits[k]);
  }
  row("loss alpha", r.alpha, "1/m");
  row("loss", r.loss_db_per_m, "dB/m");
  row("A_eff", r.aeff, "m^2");
  std::string zdw_note;
  if (r.zdws.size() > 1) {
    zdw_note = "nearest lambda0 of";
    for (double z : r.zdws) zdw_note += " " + json_number(z * 1e9);
    zdw_note += " nm";
  }
  row("zero dispersion", r.zdw * 1e9, "nm", zdw_note.c_str());
  row("n2", r.n2, "m^2/W");
  row("gamma", r.gamma, "1/(W m)");
  if (q.pulse) {
    std::printf("pulse: %.6g mJ, %.6g fs FWHM, %s\n", q.pulse->energy * 1e3, q.pulse->fwhm * 1e15,
                q.pulse->shape == PulseShape::sech ? "sech" : "gaussian");
    row("T0", r.t0, "s");
    row("peak power P0", r.peak_power, "W");
    row("dispersion length", r.dispersion_length, "m", "T0^2/|beta2|");
    row("nonlinear length", r.nonlinear_length, "m", "1/(gamma P0)");
    row("soliton order N", r.soliton_order, "");
    row("fission length", r.fission_length, "m", r.betas[1] < 0 ? "L_D/N" : "(normal dispersion: no soliton)");
  }
  row("RDW", r.rdw_wavelength * 1e9, "nm",
      r.betas[1] >= 0 ? "(normal dispersion at lambda0)"
      : q.pulse       ? "beta(w) - beta(w0) - beta1 (w - w0) = gamma P0/2"
                      : "beta(w) - beta(w0) - beta1 (w - w0) = 0");
}

}  // namespace

void add_mode_command(CLI::App& prop) {
  auto* mode = prop.add_subcommand(
      "mode",
      "The guide calculator: dispersion (beta1..beta6), loss, ZDW, gamma, soliton order, fission length "
      "and RDW of HE11 in a gas-filled hollow capillary (docs/GAS.md)");
  auto text = std::make_shared<guide::QueryText>();
  auto json = std::make_shared<bool>(false);
  mode->add_option("--gas", text->gas, "He, Ne, Ar, Kr, Xe, N2 or air")->required();
  mode->add_option("--pressure", text->pressure, "Gas pressure, e.g. \"5 bar\", \"500 mbar\", \"1 atm\" (bare: Pa)")
      ->required();
  mode->add_option("--radius", text->radius, "Core radius, e.g. \"75 um\" (bare: m)")->required();
  mode->add_option("--wavelength", text->wavelength, "Centre wavelength lambda0, e.g. \"800 nm\" (bare: m)")
      ->required();
  mode->add_option("--temperature", text->temperature,
                   "Gas temperature, e.g. \"20 degC\", \"300 K\" (default 20 degC)");
  mode->add_option("--model", text->model, "HE11 effective index: full (default) or reduced (Marcatili-Schmeltzer)")
      ->check(CLI::IsMember({"full", "reduced"}));
  mode->add_option("--cladding-index", text->cladding_index,
                   "Wall index, e.g. 1.45 or \"1.45+0.001i\" (default: fused silica, Malitson, 0.21-3.71 um)");
  mode->add_option("--energy", text->energy, "Pulse energy, e.g. \"0.5 mJ\" (with --duration; bare: J)");
  mode->add_option("--duration", text->duration, "Pulse intensity FWHM, e.g. \"30 fs\" (with --energy; bare: s)");
  mode->add_option("--shape", text->shape, "Pulse shape: sech (default) or gaussian")
      ->check(CLI::IsMember({"sech", "gaussian"}));
  mode->add_option("--helium", text->helium, "Helium's Sellmeier form: ermolov (default) or borzsonyi")
      ->check(CLI::IsMember({"ermolov", "borzsonyi"}));
  mode->add_option("--search-min", text->search_min,
                   "Shortest wavelength searched for the ZDW and RDW (default 0.21 um; below it only with --model "
                   "reduced or --cladding-index)");
  mode->add_option("--search-max", text->search_max, "Longest wavelength searched (default 3.71 um)");
  mode->add_flag("--json", *json, "One JSON object in SI units instead of the table");
  mode->callback([text, json] {
    const guide::Query query = guide::parse_query(*text);
    const guide::Report report = guide::calculate(query);
    if (*json) print_json(report);
    else print_table(query, report);
  });
}

}  // namespace lockstep::cli
