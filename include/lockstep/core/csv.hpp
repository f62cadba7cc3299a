// Numeric CSV files: rows of comma-separated numbers, with or without a header row. The data
// sets of the command-line tool, beside NumPy's .npy.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::csv {

/// A table of numbers, row-major.
struct Table {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> values;       ///< rows·cols values
  std::vector<std::string> header;  ///< the column names when the file has a header row, else empty
};

/// Parses CSV text. Cells are decimal numbers (as strtod reads them: signs, exponents, "nan",
/// "inf"), separated by commas, with spaces or tabs around them allowed; lines end in LF or
/// CRLF; blank lines are skipped. The first line is a header when none of its cells is a number.
/// A malformed cell, a row with another number of cells than the first, or no data row at all
/// is a std::invalid_argument naming `source`, the line and the column (both from 1).
Table parse(std::string_view text, std::string_view source);

/// Reads and parses a file (std::runtime_error if it cannot be read).
Table load(const std::filesystem::path& path);

/// Writes rows·cols values as CSV (17 significant digits, so doubles read back exactly), with a
/// header row when `header` is not empty (it must then have cols names), atomically.
void save(const std::filesystem::path& path, std::span<const double> values, std::int64_t rows, std::int64_t cols,
          const std::vector<std::string>& header = {});

}  // namespace lockstep::csv
