// numerics_dump: our fp32 backward and forward of each layer of a shapes file, written out for an
// outside oracle (scripts/numerics_bench.py compares them with PyTorch in float64 and in fp32).
//   numerics_dump <shapes.txt> <out-dir> [batch = 2] [name-filter]
// Per layer, <out-dir>/<name>.f32 holds, as raw little-endian floats one after another: x, weight,
// gradOutput (the inputs, from the suite's seeds), then gradInput, gradWeight and gradBias as our
// library computed them, then the bias and the forward output (aclnnConvolution or aclnnConvTbc of x,
// weight and bias). `batch` replaces the file's N (0 keeps it).
#include <cstdio>
#include <string>
#include <vector>

#include "bench_layers.h"

namespace {

bool append(std::FILE* out, const bench::AclTensor& t) {
  std::vector<unsigned char> host(t.bytes);
  aclrtMemcpy(host.data(), host.size(), t.data, t.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  return std::fwrite(host.data(), 1, host.size(), out) == host.size();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace bench;
  if (argc < 3) {
    std::fprintf(stderr, "usage: numerics_dump <shapes.txt> <out-dir> [batch = 2] [name-filter]\n");
    return 2;
  }
  const std::string dir = argv[2];
  const int64_t batch = argc > 3 ? std::stoll(argv[3]) : 2;
  const std::string filter = argc > 4 ? argv[4] : "";
  aclInit(nullptr);
  aclrtSetDevice(0);
  aclrtStream stream = nullptr;
  aclrtCreateStream(&stream);
  int status = 0;
  for (Layer l : read_layers(argv[1])) {
    if (!name_matches(l.name, filter)) continue;
    if (batch > 0) l.n = batch;
    const LayerTensors t(l, ACL_FLOAT);
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    void* workspace = nullptr;
    bool ok = t.plan(l, &size, &executor) == ACL_SUCCESS;
    if (ok && size > 0) ok = aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS;
    ok = ok && run_backward(l, workspace, size, executor, stream) == ACL_SUCCESS;
    ok = ok && aclrtSynchronizeStream(stream) == ACL_SUCCESS;
    if (workspace != nullptr) aclrtFree(workspace);
    const std::string path = dir + "/" + l.name + ".f32";
    std::FILE* out = ok ? std::fopen(path.c_str(), "wb") : nullptr;
    ok = out != nullptr;
    for (const AclTensor* tensor : {&t.x, &t.w, &t.gy, &t.gx, &t.gw, &t.gb}) ok = ok && append(out, *tensor);
    // The forward pass, into gradOutput's tensor (written out above).
    workspace = nullptr, executor = nullptr, size = 0;
    ok = ok && t.plan_forward_pass(l, &size, &executor) == ACL_SUCCESS;
    if (ok && size > 0) ok = aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS;
    ok = ok && run_forward(l, workspace, size, executor, stream) == ACL_SUCCESS;
    ok = ok && aclrtSynchronizeStream(stream) == ACL_SUCCESS;
    if (workspace != nullptr) aclrtFree(workspace);
    for (const AclTensor* tensor : {&t.b, &t.gy}) ok = ok && append(out, *tensor);
    if (out != nullptr) ok = std::fclose(out) == 0 && ok;
    if (!ok) {
      std::fprintf(stderr, "%s: failed\n", l.name.c_str());
      status = 1;
      continue;
    }
    std::printf("%s\n", path.c_str());
  }
  aclrtDestroyStream(stream);
  aclFinalize();
  return status;
}
