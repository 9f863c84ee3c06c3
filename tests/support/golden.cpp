#include "support/golden.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace testing_support {

std::vector<int64_t> GoldenCase::ints(const std::string& key) const {
  std::vector<int64_t> values;
  for (double v : fields.at(key)) values.push_back(static_cast<int64_t>(v));
  return values;
}

std::vector<GoldenCase> read_golden(const std::string& file_name) {
  std::ifstream file(std::string(GOLDEN_DIR) + "/" + file_name);
  if (!file) throw std::runtime_error("cannot open golden file " + file_name);
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "case") {
      cases.emplace_back();
      words >> cases.back().name;
    } else if (key != "end") {
      std::vector<double>& values = cases.back().fields[key];
      double v;
      while (words >> v) values.push_back(v);
    }
  }
  return cases;
}

}  // namespace testing_support
