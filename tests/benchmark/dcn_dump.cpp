// dcn_dump: our fp32 deformable convolution of each layer of dcn_shapes.txt, forward and backward, written
// out for an outside oracle (scripts/dcn_numerics.py compares them with torchvision in float64 and fp32).
//   dcn_dump <dcn_shapes.txt> <out-dir> [batch = 2] [name-filter]
// Per layer, <out-dir>/<name>.f32 holds, as raw little-endian floats one after another, in CANN's layouts:
// x, weight, offset (dx, dy and mask blocks), bias, gradOutput (the inputs: uniform, the shifts in
// [-2, 2], the masks in [0, 1]), then out (with the bias), gradInput, gradWeight, gradOffset and gradBias
// as our library computed them (the backward taking the forward's deformOut). `batch` replaces the
// file's N (0 keeps it).
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "aclnnop/aclnn_convolution_backward.h"
#include "aclnnop/aclnn_deformable_conv2d.h"
#include "dcn_layers.h"

namespace {

std::vector<float> uniform(std::mt19937& rng, int64_t count, float low, float high) {
  std::uniform_real_distribution<float> value(low, high);
  std::vector<float> out(static_cast<size_t>(count));
  for (float& v : out) v = value(rng);
  return out;
}

// Phase 1 (`plan`), then phase 2 on a fresh workspace; false (with the message) where a phase fails.
template <typename Plan>
bool run(Plan plan, aclnnStatus (*execute)(void*, uint64_t, aclOpExecutor*, aclrtStream), aclrtStream stream) {
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  void* workspace = nullptr;
  bool ok = plan(&size, &executor) == ACL_SUCCESS;
  if (ok && size > 0) ok = aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS;
  ok = ok && execute(workspace, size, executor, stream) == ACL_SUCCESS;
  ok = ok && aclrtSynchronizeStream(stream) == ACL_SUCCESS;
  if (workspace != nullptr) aclrtFree(workspace);
  if (!ok) std::fprintf(stderr, "%s\n", aclGetRecentErrMsg());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: dcn_dump <dcn_shapes.txt> <out-dir> [batch = 2] [name-filter]\n");
    return 2;
  }
  const std::string dir = argv[2];
  const int64_t batch = argc > 3 ? std::stoll(argv[3]) : 2;
  aclInit(nullptr);
  aclrtSetDevice(0);
  aclrtStream stream = nullptr;
  aclrtCreateStream(&stream);
  int status = 0;
  for (dcn::Layer l : dcn::read_layers(argv[1], argc > 4 ? argv[4] : "")) {
    if (batch > 0) l.n = batch;
    std::mt19937 rng(7);
    const int64_t points = 9 * l.dg, plane = l.h * l.w;
    std::vector<float> offset = uniform(rng, l.n * 3 * points * plane, -2.0f, 2.0f);
    for (int64_t n = 0; n < l.n; ++n) {  // (the mask block: [0, 1])
      std::vector<float> mask = uniform(rng, points * plane, 0.0f, 1.0f);
      std::copy(mask.begin(), mask.end(), offset.begin() + (n * 3 + 2) * points * plane);
    }
    const dcn::Tensor x({l.n, l.cin, l.h, l.w}, uniform(rng, l.n * l.cin * plane, -1.0f, 1.0f));
    const dcn::Tensor weight({l.cout, l.cin, 3, 3}, uniform(rng, l.cout * l.cin * 9, -0.1f, 0.1f));
    const dcn::Tensor offsets({l.n, 3 * points, l.h, l.w}, offset);
    const dcn::Tensor bias({l.cout}, uniform(rng, l.cout, -0.1f, 0.1f));
    const dcn::Tensor grad_out({l.n, l.cout, l.h, l.w}, uniform(rng, l.n * l.cout * plane, -1.0f, 1.0f));
    const dcn::Tensor out({l.n, l.cout, l.h, l.w}, std::vector<float>(static_cast<size_t>(l.n * l.cout * plane)));
    const dcn::Tensor columns({l.n, l.cin, 3 * l.h, 3 * l.w},
                              std::vector<float>(static_cast<size_t>(l.n * l.cin * 9 * plane)));
    const dcn::Tensor grad_x({l.n, l.cin, l.h, l.w}, std::vector<float>(static_cast<size_t>(l.n * l.cin * plane)));
    const dcn::Tensor grad_w({l.cout, l.cin, 3, 3}, std::vector<float>(static_cast<size_t>(l.cout * l.cin * 9)));
    const dcn::Tensor grad_offset({l.n, 3 * points, l.h, l.w}, std::vector<float>(offset.size()));
    const dcn::Tensor grad_b({l.cout}, std::vector<float>(static_cast<size_t>(l.cout)));
    const int64_t kernel[] = {3, 3}, ones[] = {1, 1, 1, 1};
    aclIntArray *kernel_a = aclCreateIntArray(kernel, 2), *ones_a = aclCreateIntArray(ones, 4);
    bool ok = run(
        [&](uint64_t* size, aclOpExecutor** executor) {
          return aclnnDeformableConv2dGetWorkspaceSize(x.tensor, weight.tensor, offsets.tensor, bias.tensor, kernel_a,
                                                       ones_a, ones_a, ones_a, 1, l.dg, true, out.tensor,
                                                       columns.tensor, size, executor);
        },
        aclnnDeformableConv2d, stream);
    ok = ok && run(
                   [&](uint64_t* size, aclOpExecutor** executor) {
                     return aclnnDeformableConv2dBackwardGetWorkspaceSize(
                         x.tensor, grad_out.tensor, columns.tensor, weight.tensor, offsets.tensor, kernel_a, ones_a,
                         ones_a, ones_a, 1, l.dg, true, grad_x.tensor, grad_w.tensor, grad_offset.tensor, grad_b.tensor,
                         size, executor);
                   },
                   aclnnDeformableConv2dBackward, stream);
    aclDestroyIntArray(kernel_a);
    aclDestroyIntArray(ones_a);
    const std::string path = dir + "/" + l.name + ".f32";
    std::FILE* file = ok ? std::fopen(path.c_str(), "wb") : nullptr;
    ok = file != nullptr;
    for (const dcn::Tensor* t :
         {&x, &weight, &offsets, &bias, &grad_out, &out, &grad_x, &grad_w, &grad_offset, &grad_b}) {
      const std::vector<float> values = t->values();
      ok = ok && std::fwrite(values.data(), 4, values.size(), file) == values.size();
    }
    if (file != nullptr) ok = std::fclose(file) == 0 && ok;
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
