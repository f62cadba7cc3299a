#include "lockstep/core/csv.hpp"

#include <charconv>
#include <cstdio>

#include "lockstep/core/error.hpp"
#include "lockstep/core/files.hpp"

namespace lockstep::csv {

namespace {

constexpr std::string_view kWhere = "csv";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

/// The cells of one line, trimmed.
std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> cells;
  for (;;) {
    const auto comma = line.find(',');
    cells.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return cells;
    line.remove_prefix(comma + 1);
  }
}

/// The number a whole cell spells, or false. A leading '+' is accepted (from_chars does not).
bool to_number(std::string_view cell, double& out) {
  if (!cell.empty() && cell.front() == '+') cell.remove_prefix(1);
  if (cell.empty()) return false;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), out);
  return ec == std::errc() && end == cell.data() + cell.size();
}

}  // namespace

Table parse(std::string_view text, std::string_view source) {
  Table t;
  bool first_line = true;
  std::int64_t line_no = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (trim(line).empty()) continue;
    const std::vector<std::string_view> cells = split(line);
    if (first_line) {
      first_line = false;
      t.cols = static_cast<std::int64_t>(cells.size());
      bool any_number = false;
      double unused = 0;
      for (std::string_view c : cells) any_number = any_number || to_number(c, unused);
      if (!any_number) {
        for (std::string_view c : cells) t.header.emplace_back(c);
        continue;
      }
    }
    if (static_cast<std::int64_t>(cells.size()) != t.cols)
      invalid_argument(kWhere, source, ": line ", line_no, " has ", cells.size(), " cells, the first row has ", t.cols);
    for (std::size_t c = 0; c < cells.size(); ++c) {
      double v = 0;
      if (!to_number(cells[c], v))
        invalid_argument(
            kWhere, source, ": line ", line_no, ", column ", c + 1, ": ",
            cells[c].empty() ? std::string("the cell is empty") : "'" + std::string(cells[c]) + "' is not a number");
      t.values.push_back(v);
    }
    ++t.rows;
  }
  if (t.rows == 0)
    invalid_argument(kWhere, source, ": no data rows", t.header.empty() ? " (the file is empty)" : " after the header");
  return t;
}

Table load(const std::filesystem::path& path) {
  const std::vector<std::uint8_t> bytes = read_file(path, kWhere);
  return parse(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path.string());
}

void save(const std::filesystem::path& path, std::span<const double> values, std::int64_t rows, std::int64_t cols,
          const std::vector<std::string>& header) {
  if (rows < 0 || cols < 1 || static_cast<std::int64_t>(values.size()) != rows * cols)
    invalid_argument(kWhere, path.string(), ": ", values.size(), " values for ", rows, " rows of ", cols, " columns");
  if (!header.empty() && static_cast<std::int64_t>(header.size()) != cols)
    invalid_argument(kWhere, path.string(), ": ", header.size(), " header names for ", cols, " columns");
  std::string text;
  for (std::size_t c = 0; c < header.size(); ++c) text += (c ? "," : "") + header[c];
  if (!header.empty()) text += '\n';
  char cell[32];
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      std::snprintf(cell, sizeof cell, "%.17g", values[r * cols + c]);
      if (c) text += ',';
      text += cell;
    }
    text += '\n';
  }
  write_file_atomically(path, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), kWhere);
}

}  // namespace lockstep::csv
