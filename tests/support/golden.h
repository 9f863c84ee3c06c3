// Reads the PyTorch golden files of tests/data (written by tests/data/make_golden.py).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace testing_support {

struct GoldenCase {
  std::string name;
  std::map<std::string, std::vector<double>> fields;  // every line: key then numbers
  std::vector<int64_t> ints(const std::string& key) const;
  int64_t integer(const std::string& key) const { return ints(key).at(0); }
};

std::vector<GoldenCase> read_golden(const std::string& file_name);

}  // namespace testing_support
