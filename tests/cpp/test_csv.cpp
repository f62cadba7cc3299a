// Numeric CSV files: headers, line endings, spacing and number forms read as documented; every
// malformed file refused with its line and column; values written and read back exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <string>

#include "lockstep/core/csv.hpp"

namespace lockstep::csv {
namespace {

namespace fs = std::filesystem;

void expect_refused(std::string_view text, const std::string& what) {
  try {
    parse(text, "t.csv");
    ADD_FAILURE() << "accepted: " << what;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what() << " / wanted: " << what;
    EXPECT_NE(std::string(e.what()).find("t.csv"), std::string::npos) << e.what();
  }
}

TEST(Csv, ReadsNumbersWithOrWithoutAHeader) {
  const Table a = parse("x0, x1 ,y\n1,2,3\n-4.5e-1,+6,  7.25\n", "a");
  EXPECT_EQ(a.header, (std::vector<std::string>{"x0", "x1", "y"}));
  EXPECT_EQ(a.rows, 2);
  EXPECT_EQ(a.cols, 3);
  EXPECT_EQ(a.values, (std::vector<double>{1, 2, 3, -0.45, 6, 7.25}));

  const Table b = parse("0.5\r\n\r\n1e3\r\n  \n-2", "b");  // CRLF, blank lines, no final newline
  EXPECT_TRUE(b.header.empty());
  EXPECT_EQ(b.rows, 3);
  EXPECT_EQ(b.cols, 1);
  EXPECT_EQ(b.values, (std::vector<double>{0.5, 1000, -2}));

  const Table c = parse("nan,inf,-inf\n", "c");
  EXPECT_TRUE(std::isnan(c.values[0]));
  EXPECT_EQ(c.values[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(c.values[2], -std::numeric_limits<double>::infinity());
}

TEST(Csv, MalformedFilesNameTheLineAndColumn) {
  expect_refused("", "the file is empty");
  expect_refused("\n \n", "the file is empty");
  expect_refused("a,b\n", "no data rows after the header");
  expect_refused("1,2\n3,x\n", "line 2, column 2: 'x' is not a number");
  expect_refused("a,b\n1,2\n3,,\n", "line 3 has 3 cells, the first row has 2");
  expect_refused("1,2\n3\n", "line 2 has 1 cells, the first row has 2");
  expect_refused("1,2\n\n3, \n", "line 3, column 2: the cell is empty");
  expect_refused("1\n1.5.2\n", "line 2, column 1: '1.5.2' is not a number");
  expect_refused("h\n1\n2e\n", "line 3, column 1: '2e' is not a number");
  expect_refused("0\n1;2\n", "line 2, column 1: '1;2' is not a number");
  // A first line without a single number is a header, so a file of one such line has no data.
  expect_refused("1;2\n", "no data rows after the header");
  EXPECT_THROW(load("/nonexistent/dir/x.csv"), std::runtime_error);
}

TEST(Csv, WrittenValuesReadBackExactly) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> N(0, 1e3);
  std::vector<double> v(7 * 3);
  for (auto& e : v) e = N(rng);
  v[4] = 1e-300, v[5] = -0.0;
  const fs::path dir = fs::temp_directory_path() / ("lockstep_csv_" + std::to_string(rng()));
  fs::create_directories(dir);
  save(dir / "h.csv", v, 7, 3, {"a", "b", "c"});
  save(dir / "p.csv", v, 7, 3);
  const Table h = load(dir / "h.csv"), p = load(dir / "p.csv");
  EXPECT_EQ(h.header, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(p.header.empty());
  for (const Table* t : {&h, &p}) {
    EXPECT_EQ(t->rows, 7);
    EXPECT_EQ(t->cols, 3);
    EXPECT_EQ(t->values, v);
    EXPECT_TRUE(std::signbit(t->values[5]));
  }
  EXPECT_THROW(save(dir / "bad.csv", v, 6, 3), std::invalid_argument);
  EXPECT_THROW(save(dir / "bad.csv", v, 7, 3, {"a"}), std::invalid_argument);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lockstep::csv
