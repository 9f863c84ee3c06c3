// The deformable convolution's benchmark (tests/benchmark/dcn_shapes.txt): per layer, our
// aclnnDeformableConv2d (with deformOut, which its backward takes) and aclnnDeformableConv2dBackward,
// and our plain convolution of the same layer (aclnnConvolution, aclnnConvolutionBackward), interleaved
// round by round, each the best of its rounds. FLOAT. scripts/dcn_torchvision.py times torchvision's
// deform_conv2d on the same layers.
//   dcn_bench SHAPES [rounds=3] [filter]
// GFLOP/s counts the GEMMs' multiply-adds (2 * N * Cout * Cin * 9 * H * W per product; the forward has
// one product, the backward two), not the sampling.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "aclnnop/aclnn_deformable_conv2d.h"
#include "dcn_layers.h"

namespace {

using dcn::Layer;

// A FLOAT tensor filled with small values (the offsets: shifts within +-2, masks in [0, 1]).
struct Tensor : dcn::Tensor {
  Tensor(const std::vector<int64_t>& shape, int seed, double scale) : dcn::Tensor(shape, pattern(shape, seed, scale)) {}
  static std::vector<float> pattern(const std::vector<int64_t>& shape, int seed, double scale) {
    std::vector<float> host(static_cast<size_t>(dcn::count_of(shape)));
    for (size_t i = 0; i < host.size(); ++i)
      host[i] = static_cast<float>(scale * (static_cast<double>((i * 37 + seed * 11) % 97) / 48.0 - 1.0));
    return host;
  }
};

// Phase 1 (plan: workspace size and executor), then phase 2 timed to the stream's end, in ms.
double timed(const std::function<aclnnStatus(uint64_t*, aclOpExecutor**)>& plan,
             aclnnStatus (*run)(void*, uint64_t, aclOpExecutor*, aclrtStream), aclrtStream stream) {
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  if (plan(&size, &executor) != 0) {
    std::fprintf(stderr, "planning failed: %s\n", aclGetRecentErrMsg());
    std::exit(1);
  }
  void* workspace = nullptr;
  if (size > 0) aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST);
  const auto start = std::chrono::steady_clock::now();
  const aclnnStatus status = run(workspace, size, executor, stream);
  aclrtSynchronizeStream(stream);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (workspace != nullptr) aclrtFree(workspace);
  if (status != 0) {
    std::fprintf(stderr, "run failed: %s\n", aclGetRecentErrMsg());
    std::exit(1);
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dcn_bench SHAPES [rounds=3] [filter]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::vector<Layer> layers = dcn::read_layers(argv[1], argc > 3 ? argv[3] : "");
  aclInit(nullptr);
  aclrtSetDevice(0);
  aclrtStream stream = nullptr;
  aclrtCreateStream(&stream);
  std::printf("%-16s %9s %9s %9s %9s %8s %8s %9s %9s\n", "layer", "dcn fwd", "dcn bwd", "conv fwd", "conv bwd",
              "fwd/conv", "all/conv", "fwd GF/s", "bwd GF/s");
  for (const Layer& l : layers) {
    const int64_t k = 9, points = l.dg * k;
    Tensor x({l.n, l.cin, l.h, l.w}, 1, 1.0), weight({l.cout, l.cin, 3, 3}, 2, 0.1),
        offset({l.n, 3 * points, l.h, l.w}, 3, 1.0), bias({l.cout}, 4, 0.1), out({l.n, l.cout, l.h, l.w}, 5, 0.0),
        columns({l.n, l.cin, 3 * l.h, 3 * l.w}, 6, 0.0), grad_out({l.n, l.cout, l.h, l.w}, 7, 0.1),
        grad_x({l.n, l.cin, l.h, l.w}, 8, 0.0), grad_w({l.cout, l.cin, 3, 3}, 9, 0.0),
        grad_offset({l.n, 3 * points, l.h, l.w}, 10, 0.0), grad_b({l.cout}, 11, 0.0);
    const int64_t kernel[] = {3, 3}, stride4[] = {1, 1, 1, 1}, pad4[] = {1, 1, 1, 1}, ones2[] = {1, 1},
                  zeros2[] = {0, 0}, bias_sizes[] = {l.cout};
    aclIntArray *kernel_a = aclCreateIntArray(kernel, 2), *stride4_a = aclCreateIntArray(stride4, 4),
                *pad4_a = aclCreateIntArray(pad4, 4), *ones2_a = aclCreateIntArray(ones2, 2),
                *zeros2_a = aclCreateIntArray(zeros2, 2), *bias_sizes_a = aclCreateIntArray(bias_sizes, 1);
    const bool mask[] = {true, true, true};
    aclBoolArray* mask_a = aclCreateBoolArray(mask, 3);
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (int r = 0; r < rounds; ++r) {
      best[0] = std::min(best[0], timed(
                                      [&](uint64_t* size, aclOpExecutor** e) {
                                        return aclnnDeformableConv2dGetWorkspaceSize(
                                            x.tensor, weight.tensor, offset.tensor, bias.tensor, kernel_a, stride4_a,
                                            pad4_a, stride4_a, 1, l.dg, true, out.tensor, columns.tensor, size, e);
                                      },
                                      aclnnDeformableConv2d, stream));
      best[1] = std::min(best[1], timed(
                                      [&](uint64_t* size, aclOpExecutor** e) {
                                        return aclnnDeformableConv2dBackwardGetWorkspaceSize(
                                            x.tensor, grad_out.tensor, columns.tensor, weight.tensor, offset.tensor,
                                            kernel_a, stride4_a, pad4_a, stride4_a, 1, l.dg, true, grad_x.tensor,
                                            grad_w.tensor, grad_offset.tensor, grad_b.tensor, size, e);
                                      },
                                      aclnnDeformableConv2dBackward, stream));
      best[2] = std::min(best[2], timed(
                                      [&](uint64_t* size, aclOpExecutor** e) {
                                        return aclnnConvolutionGetWorkspaceSize(x.tensor, weight.tensor, bias.tensor,
                                                                                ones2_a, ones2_a, ones2_a, false,
                                                                                zeros2_a, 1, out.tensor, 0, size, e);
                                      },
                                      aclnnConvolution, stream));
      best[3] = std::min(best[3], timed(
                                      [&](uint64_t* size, aclOpExecutor** e) {
                                        return aclnnConvolutionBackwardGetWorkspaceSize(
                                            grad_out.tensor, x.tensor, weight.tensor, bias_sizes_a, ones2_a, ones2_a,
                                            ones2_a, false, zeros2_a, 1, mask_a, 0, grad_x.tensor, grad_w.tensor,
                                            grad_b.tensor, size, e);
                                      },
                                      aclnnConvolutionBackward, stream));
    }
    const double product = 2.0 * l.n * l.cout * l.cin * k * l.h * l.w / 1e9;  // GFLOP per GEMM
    std::printf("%-16s %9.1f %9.1f %9.1f %9.1f %8.2f %8.2f %9.1f %9.1f\n", l.name.c_str(), best[0], best[1], best[2],
                best[3], best[0] / best[2], (best[0] + best[1]) / (best[2] + best[3]), product / (best[0] / 1e3),
                2 * product / (best[1] / 1e3));
    for (aclIntArray* a : {kernel_a, stride4_a, pad4_a, ones2_a, zeros2_a, bias_sizes_a}) aclDestroyIntArray(a);
    aclDestroyBoolArray(mask_a);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}
