// lockstep._lockstep.prop: recipes, jobs (prop::Job), result files and the guide calculator
// (prop::guide) for lockstep.prop.
//
// Results cross as dicts of numpy arrays in SI units, built from the arrays a result file stores
// (result_arrays), so that a result in memory and the same result loaded from its file are equal.
// A job runs with the GIL released; its progress callback takes the GIL for the Python progress
// function and looks for a pending signal (Ctrl-C), which stops the job after the current chunk
// of steps with every file saved, and then raises KeyboardInterrupt.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cmath>
#include <complex>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/prop/config_hash.hpp"
#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/guide.hpp"
#include "lockstep/prop/guide_text.hpp"
#include "lockstep/prop/job.hpp"
#include "lockstep/prop/measures.hpp"
#include "lockstep/prop/recipe.hpp"
#include "lockstep/prop/result_file.hpp"
#include "lockstep/prop/scan.hpp"
#include "src/prop/io/record_fields.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

namespace prop = lockstep::prop;
namespace fs = std::filesystem;

/// A numpy array that owns `values` (moved in), of the given shape.
template <class T> nb::object numpy_array(std::vector<T> values, std::vector<std::size_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule release(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, T>(owned->data(), shape.size(), shape.data(), release));
}

nb::dict result_dict(const prop::ResultData& d) {
  prop::ResultArrays a = prop::result_arrays(d);
  const std::size_t n = a.t.size(), planes = d.planes.z.size();
  nb::dict r;
  r["label"] = d.label;
  r["recipe"] = d.recipe;
  r["config"] = prop::serialize_config(d.config);
  r["config_hash"] = prop::config_hash(d.config);
  r["z"] = numpy_array(d.planes.z, {planes});
  r["t"] = numpy_array(std::move(a.t), {n});
  r["omega"] = numpy_array(std::move(a.omega), {n});
  r["wavelength"] = numpy_array(std::move(a.wavelength), {n});
  r["Ew"] = numpy_array(std::move(a.Ew), {planes, n});
  r["Et"] = numpy_array(std::move(a.Et), {planes, n});
  nb::dict stats, ledger;
  for (const auto& [name, member] : prop::io::kStatisticsFields)
    stats[nb::str(name.data(), name.size())] = numpy_array(d.statistics.*member, {(d.statistics.*member).size()});
  for (const auto& [name, member] : prop::io::kLedgerCounters)
    ledger[nb::str(name.data(), name.size())] = d.ledger.*member;
  for (const auto& [name, member] : prop::io::kLedgerReals)
    ledger[nb::str(name.data(), name.size())] = d.ledger.*member;
  r["stats"] = stats;
  r["ledger"] = ledger;
  return r;
}

lockstep::Device device_of(const std::string& name) {
  if (name == "cpu") return lockstep::Device::cpu;
  if (name == "cuda") return lockstep::Device::cuda;
  throw std::invalid_argument("[prop] device must be 'cpu' or 'cuda', not '" + name + "'");
}

lockstep::DType precision_of(const std::string& name) {
  if (name == "f64") return lockstep::DType::f64;
  if (name == "f32") return lockstep::DType::f32;
  throw std::invalid_argument("[prop] precision must be 'f64' or 'f32', not '" + name + "'");
}

prop::Evaluation evaluation_of(const std::string& name) {
  if (name == "batched") return prop::Evaluation::batched;
  if (name == "reference") return prop::Evaluation::per_member;
  throw std::invalid_argument("[prop] evaluation must be 'batched' or 'reference', not '" + name + "'");
}

using ProgressFunction =
    std::function<void(std::size_t, std::size_t, std::size_t, double, double, std::int64_t, double, bool)>;

/// Runs `job` without the GIL; see the file's comment for progress and Ctrl-C.
void run_job(prop::Job& job, const std::string& device, const std::string& precision, const std::string& evaluation,
             double batch_memory_mib, double checkpoint_seconds, int threads, std::int64_t chunk_steps,
             std::optional<ProgressFunction> progress) {
  prop::JobOptions options;
  options.engine.device = device_of(device);
  options.engine.precision = precision_of(precision);
  options.engine.threads = threads;
  options.evaluation = evaluation_of(evaluation);
  options.batch_memory_mib = batch_memory_mib;
  options.checkpoint_seconds = checkpoint_seconds;
  options.chunk_steps = chunk_steps;
  std::atomic<bool> stop{false};
  std::optional<nb::python_error> raised;  // by the progress function
  options.interrupt = &stop;
  options.progress = [&](const prop::JobProgress& p) {
    nb::gil_scoped_acquire gil;
    if (stop.load()) return;
    if (PyErr_CheckSignals() != 0) {
      PyErr_Clear();  // raised again as KeyboardInterrupt once the files are saved
      stop.store(true);
      return;
    }
    if (!progress) return;
    try {
      (*progress)(p.batch, p.batches, p.members, p.z, p.length, p.steps, p.steps_per_second, p.finished);
    } catch (nb::python_error& e) {
      raised.emplace(std::move(e));
      stop.store(true);
    }
  };
  try {
    nb::gil_scoped_release release;
    job.run(options);
  } catch (const prop::JobInterrupted&) {
    // Stopped by the progress function's exception or by a signal: the files are saved.
    if (raised) throw std::move(*raised);
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw nb::python_error();
  }
  if (raised) throw std::move(*raised);  // raised in the last call, after the last chunk
}

/// The guide calculator's report as a dict (guide::report_values' keys, None for NaN and ±∞, as
/// the CLI's JSON has null; zdws a list).
nb::dict mode_dict(const prop::guide::Report& r) {
  nb::dict d;
  const auto number = [](double v) -> nb::object {
    if (std::isfinite(v)) return nb::float_(v);
    return nb::none();
  };
  for (const auto& [key, value] : prop::guide::report_values(r)) d[nb::str(key.data(), key.size())] = number(value);
  nb::list zdws;
  for (double z : r.zdws) zdws.append(nb::float_(z));
  d["zdws"] = zdws;
  return d;
}

}  // namespace

void add_prop_bindings(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("prop", "The propagation engine: recipes, jobs, result files.");
  nb::class_<prop::Recipe>(m, "Recipe")
      .def_ro("text", &prop::Recipe::text, "The recipe as given.")
      .def_ro("canonical", &prop::Recipe::canonical, "The configuration as a canonical TOML recipe (SI units).")
      .def_prop_ro(
          "config_hash", [](const prop::Recipe& r) { return prop::config_hash(r.config); },
          "SHA-256 of the canonical form.")
      .def_prop_ro(
          "labels",
          [](const prop::Recipe& r) {
            std::vector<std::string> out;
            for (const prop::MemberSpec& s : prop::expand_members(r)) out.push_back(s.label);
            return out;
          },
          "The members' labels (a scan's points, an ensemble's members; [''] for one member).")
      .def_prop_ro(
          "scan_axes",
          [](const prop::Recipe& r) {
            std::vector<std::pair<std::string, std::vector<std::string>>> out;
            for (const prop::ScanAxis& a : r.scan) out.emplace_back(a.key, a.labels);
            return out;
          },
          "The scan's axes in the order written: (key, the values' labels).")
      .def_prop_ro(
          "ensemble_members", [](const prop::Recipe& r) { return r.ensemble.members; },
          "Shot-noise members per configuration (0: no ensemble).");

  m.def("parse_recipe", &prop::parse_recipe, "text"_a, "source"_a,
        "Parses a TOML recipe; ValueError '[prop.recipe] key: ...' for a bad one.");
  m.def(
      "load_recipe", [](const std::string& path) { return prop::load_recipe(path); }, "path"_a,
      "Reads and parses a recipe file.");
  m.def(
      "default_recipe",
      [] {
        prop::Recipe r;
        r.text = prop::serialize_config(r.config);
        r.canonical = r.text;
        return r;
      },
      "The built-in Dudley supercontinuum.");
  m.def(
      "load", [](const std::string& path) { return result_dict(prop::read_result(path)); }, "path"_a,
      "A result file as a dict of numpy arrays (checked against its seal).");

  m.def(
      "coherence",
      [](const std::string& config,
         nb::ndarray<const std::complex<double>, nb::ndim<2>, nb::c_contig, nb::device::cpu> spectra) {
        // The members' spectra on the ascending grid, reordered to the numerics' FFT order.
        const prop::Grid grid(prop::parse_config(config, "<result>").grid);
        const std::int64_t n = grid.size();
        if (static_cast<std::int64_t>(spectra.shape(1)) != n)
          throw std::invalid_argument("[prop.coherence] spectra of " + std::to_string(spectra.shape(1)) +
                                      " points for a grid of " + std::to_string(n));
        std::vector<std::vector<std::complex<double>>> fft_order(spectra.shape(0),
                                                                 std::vector<std::complex<double>>(n));
        for (std::size_t m = 0; m < fft_order.size(); ++m)
          for (std::int64_t k = 0; k < n; ++k)
            fft_order[m][static_cast<std::size_t>(grid.ascending_to_fft(k))] = spectra(m, k);
        return numpy_array(prop::coherence(fft_order, grid), {static_cast<std::size_t>(n)});
      },
      "config"_a, "spectra"_a,
      "|g12| on the ascending grid of the members' spectra (M, n) on that grid (measures.hpp).");

  m.def(
      "mode",
      [](const std::string& gas, const std::string& pressure, const std::string& radius, const std::string& wavelength,
         const std::string& temperature, const std::string& model, const std::string& cladding_index,
         const std::string& energy, const std::string& duration, const std::string& shape, const std::string& helium,
         const std::string& search_min, const std::string& search_max) {
        prop::guide::QueryText t{gas,    pressure, radius, wavelength, temperature, model,     cladding_index,
                                 energy, duration, shape,  helium,     search_min,  search_max};
        const prop::guide::Query query = prop::guide::parse_query(t);
        prop::guide::Report report;
        {
          nb::gil_scoped_release release;
          report = prop::guide::calculate(query);
        }
        return mode_dict(report);
      },
      "gas"_a, "pressure"_a, "radius"_a, "wavelength"_a, "temperature"_a = "", "model"_a = "", "cladding_index"_a = "",
      "energy"_a = "", "duration"_a = "", "shape"_a = "", "helium"_a = "", "search_min"_a = "", "search_max"_a = "",
      "The guide calculator (guide.hpp) on text values ('' for a default); lockstep.prop.mode wraps it.");

  nb::class_<prop::Job>(m, "Job")
      .def_static(
          "from_recipe",
          [](const prop::Recipe& recipe, const std::string& base, const std::optional<std::string>& output_dir,
             const std::optional<std::string>& replay) {
            std::vector<double> schedule;
            if (replay) schedule = prop::accepted_step_ends(*replay);
            return prop::Job::from_recipe(recipe, base, output_dir ? fs::path(*output_dir) : fs::path(), schedule);
          },
          "recipe"_a, "base"_a, "output_dir"_a = nb::none(), "replay"_a = nb::none())
      .def_static(
          "resume",
          [](const std::vector<std::string>& files, const prop::Recipe* recipe) {
            return prop::Job::resume(std::vector<fs::path>(files.begin(), files.end()), recipe);
          },
          "files"_a, "recipe"_a = nb::none())
      .def("run", &run_job, "device"_a = "cpu", "precision"_a = "f64", "evaluation"_a = "batched",
           "batch_memory_mib"_a = 0.0, "checkpoint_seconds"_a = 30.0, "threads"_a = 0, "chunk_steps"_a = 20,
           "progress"_a = nb::none())
      .def("__len__", &prop::Job::size)
      .def_prop_ro("labels", &prop::Job::labels)
      .def_prop_ro("files",
                   [](const prop::Job& j) {
                     std::vector<std::string> out;
                     for (const fs::path& f : j.files()) out.push_back(f.string());
                     return out;
                   })
      .def_prop_ro("rolled_forward",
                   [](const prop::Job& j) {
                     std::vector<std::string> out;
                     for (const fs::path& f : j.rolled_forward()) out.push_back(f.string());
                     return out;
                   })
      .def_prop_ro("ensemble", &prop::Job::ensemble)
      .def(
          "result",
          [](const prop::Job& j, std::size_t k) {
            if (k >= j.size()) throw nb::index_error("member index out of range");
            return result_dict(j.result(k));
          },
          "k"_a);
}
