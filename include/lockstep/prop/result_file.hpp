// Result files: one HDF5 file per member, readable with h5py, rewritten whole at every
// checkpoint through a temporary file and a rename, so a crash or kill leaves the previous
// complete file. Layout (schema "lockstep.prop/1"; every dataset float64 unless said):
//
//   /meta/schema, /meta/recipe, /meta/config, /meta/config_hash, /meta/label   strings
//       config is serialize_config(config) (a TOML recipe), config_hash its SHA-256
//   /grid/t (n,) s · /grid/omega (n,) absolute rad/s, ascending · /grid/wavelength (n,) m
//   /planes/z (P,) m
//   /planes/Ew (P, n) complex Ã(z, ω) on the ascending ω grid (the unnormalised DFT of A, √W)
//   /planes/Et (P, n) complex A(z, T) on /grid/t, √W (A = FFTW_FORWARD(Ã)/n)
//   /stats/<field> (S,) each Statistics field, one row per accepted step
//   /ledger/<field> scalar int64 or float64, each Ledger field
//   /state/field_w (n,) complex, the current Ã in FFT order; /state/z, next_dz,
//       previous_error, schedule_position: the ledger's datasets (hard links)
//
// Complex values are the compound {r, i} of two float64 (h5py reads it as complex128). The
// first 512 bytes of the file are an HDF5 user block holding the SHA-256 and length of the
// rest: the reader refuses a truncated or altered file before HDF5 parses it.
#pragma once

#include <complex>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/prop/config.hpp"
#include "lockstep/prop/record.hpp"

namespace lockstep::prop {

inline constexpr std::string_view kResultSchema = "lockstep.prop/1";

/// Everything a result file holds (the grids and Et are derived from `config` and `planes`).
struct ResultData {
  std::string recipe;  ///< the recipe text the run came from
  std::string label;   ///< the member's label (scan point, ensemble index); may be empty
  Config config;       ///< the member's configuration (hash: config_hash(config))
  Statistics statistics;
  Ledger ledger;
  Planes planes;                              ///< Ã in FFT order, as the numerics hold it
  std::vector<std::complex<double>> field_w;  ///< the current Ã, FFT order (what resume continues)
};

/// The arrays a result file stores beside what `data` holds (the layout above): the grid's t,
/// the ascending ω and its wavelengths; each plane's Ã on the ascending grid and A(T) (planes ×
/// points, row-major). lockstep.prop's results are built from the same arrays.
struct ResultArrays {
  std::vector<double> t, omega, wavelength;
  std::vector<std::complex<double>> Ew, Et;
};
ResultArrays result_arrays(const ResultData& data);

/// Writes `data` to `path` crash-safely: "<path>.tmp" is written, flushed to disk and renamed
/// over `path`. std::invalid_argument for inconsistent data (an invalid config, statistics
/// columns of unequal length, a plane or field whose length is not grid.points, planes.z and
/// planes.field_w of unequal length); std::runtime_error when writing fails (the previous
/// file at `path` is then untouched and the temporary file removed).
void write_result(const std::filesystem::path& path, const ResultData& data);
/// write_result in two halves, so that a batch's files change together: stage_result writes
/// and flushes "<path>.tmp" (`path` untouched), commit_result renames it over `path`. A batch
/// stages every member's file, then commits them all: a kill before the first rename leaves
/// every file at the previous checkpoint, one during the renames leaves the rest staged, which
/// roll_forward_staged completes.
void stage_result(const std::filesystem::path& path, const ResultData& data);
void commit_result(const std::filesystem::path& path);

/// Completes a batch checkpoint that a kill interrupted during its renames: of `files` (a run's
/// result files, resumed together), each whose staged "<file>.tmp" is a complete result file at
/// the position (accepted steps, z) of another file of `files` that was already committed there,
/// and further on than itself, is replaced by it. Returns the files rolled forward. A staged file
/// at no committed position (a kill while staging) is left alone: its batch resumes, whole,
/// from the previous checkpoint.
std::vector<std::filesystem::path> roll_forward_staged(const std::vector<std::filesystem::path>& files);

/// Reads a result file back (planes reordered to FFT order). std::runtime_error when it cannot
/// be read; std::invalid_argument naming the file and what is wrong for a truncated, altered
/// or inconsistent one (wrong schema, a missing dataset, a wrong type or shape, a
/// configuration that does not match its hash).
ResultData read_result(const std::filesystem::path& path);

/// Throws std::invalid_argument listing the fields that differ (config_differences) unless
/// `recipe_config` has the same configuration hash as the file's.
void check_resumable(const Config& recipe_config, const ResultData& file);

}  // namespace lockstep::prop
