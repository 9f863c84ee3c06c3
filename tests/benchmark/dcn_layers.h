// The deformable benchmark's layers (tests/benchmark/dcn_shapes.txt: "name N Cin Cout H W deformableGroups",
// each a 3x3 convolution, stride 1, padding 1) and FLOAT tensors in device memory, for dcn_bench and dcn_dump.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "acl/acl.h"

namespace dcn {

struct Layer {
  std::string name;
  int64_t n, cin, cout, h, w, dg;
};

inline std::vector<Layer> read_layers(const char* path, const std::string& filter) {
  std::vector<Layer> layers;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Layer l;
    if (fields >> l.name >> l.n >> l.cin >> l.cout >> l.h >> l.w >> l.dg) {
      if (filter.empty() || l.name.find(filter) != std::string::npos) layers.push_back(l);
    }
  }
  return layers;
}

// A contiguous FLOAT tensor (NCHW, or ND for one dim) in device memory holding `values`.
struct Tensor {
  void* data = nullptr;
  aclTensor* tensor = nullptr;
  size_t count = 0;

  Tensor(const std::vector<int64_t>& shape, const std::vector<float>& values) : count(values.size()) {
    aclrtMalloc(&data, count * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(data, count * 4, values.data(), count * 4, ACL_MEMCPY_HOST_TO_DEVICE);
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = shape.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * shape[i];
    tensor = aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, strides.data(), 0,
                             shape.size() == 1 ? ACL_FORMAT_ND : ACL_FORMAT_NCHW, shape.data(), shape.size(), data);
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() {
    aclDestroyTensor(tensor);
    aclrtFree(data);
  }
  std::vector<float> values() const {
    std::vector<float> host(count);
    aclrtMemcpy(host.data(), count * 4, data, count * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    return host;
  }
};

inline int64_t count_of(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t s : shape) count *= s;
  return count;
}

}  // namespace dcn
