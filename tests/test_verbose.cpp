// ACLNN_CONVBWD_VERBOSE=1: one line per phase 2, in the documented format (docs/architecture.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>

#include "support/run_conv.h"

namespace testing_support {
namespace {

// Runs a small backward with ACLNN_CONVBWD_VERBOSE and ACLNN_CONVBWD_KERNELS as given; returns stdout.
std::string captured(const char* verbose, const char* kernels, RunResult* result, bool tbc = false) {
  if (verbose != nullptr) setenv("ACLNN_CONVBWD_VERBOSE", verbose, 1);
  if (kernels != nullptr) setenv("ACLNN_CONVBWD_KERNELS", kernels, 1);
  ::testing::internal::CaptureStdout();
  if (tbc) {
    const TbcSpec spec{6, 2, 3, 4, 3, 1};
    *result = run_conv_tbc_backward(spec, {}, pattern(36, 1), pattern(36, 2), pattern(spec.out_time() * 8, 3));
  } else {
    const ConvSpec spec{2, 2, 4, 6, 2, {7, 8}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}, false, {}};
    *result = run_convolution_backward(spec, {}, pattern(2 * 4 * 56, 1), pattern(6 * 2 * 9, 2),
                                       pattern(product(spec.grad_output_shape()), 3));
  }
  std::string out = ::testing::internal::GetCapturedStdout();
  unsetenv("ACLNN_CONVBWD_VERBOSE");
  unsetenv("ACLNN_CONVBWD_KERNELS");
  return out;
}

TEST(Verbose, OneLinePerExecution) {
  aclInit(nullptr);
  RunResult result;
  const std::string out = captured("1", nullptr, &result);
  ASSERT_EQ(result.status, 0) << result.error;
  const std::regex line(
      "aclnn_convbwd_verbose,exec,aclnnConvolutionBackward,"
      "gradOutput:FLOAT:2x6x4x8 input:FLOAT:2x4x7x8 weight:FLOAT:6x2x3x3,"
      "stride=2x1 padding=1x1 dilation=1x1 transposed=0 outputPadding=0x0 groups=2 outputMask=111 cubeMathType=0,"
      "gradInput=gemm:tasks=[0-9]+ gradWeight=gemm:tasks=[0-9]+ gradBias=lanes:tasks=6,threads=[0-9]+,"
      "workspace=([0-9]+),status=0,[0-9]+\\.[0-9]{3}\n");
  std::smatch match;
  ASSERT_TRUE(std::regex_match(out, match, line)) << out;
  EXPECT_EQ(std::stoull(match[1]), result.workspace_size);
}

TEST(Verbose, NamesTheForcedImplementation) {
  RunResult result;
  const std::string out = captured("1", "ref", &result);
  ASSERT_EQ(result.status, 0) << result.error;
  EXPECT_NE(out.find("gradInput=ref:tasks="), std::string::npos) << out;
  EXPECT_NE(out.find("gradWeight=ref:tasks="), std::string::npos) << out;
  EXPECT_NE(out.find("gradBias=ref:tasks="), std::string::npos) << out;
}

TEST(Verbose, ConvTbc) {
  RunResult result;
  const std::string out = captured("1", nullptr, &result, true);
  ASSERT_EQ(result.status, 0) << result.error;
  EXPECT_EQ(out.rfind("aclnn_convbwd_verbose,exec,aclnnConvTbcBackward,self:FLOAT:6x2x4 input:FLOAT:6x2x3 "
                      "weight:FLOAT:3x3x4,pad=1 cubeMathType=0,gradInput=gemm:",
                      0),
            0u)
      << out;
}

TEST(Verbose, SilentByDefaultAndWithZero) {
  RunResult result;
  EXPECT_EQ(captured(nullptr, nullptr, &result), "");
  EXPECT_EQ(captured("0", nullptr, &result), "");
}

}  // namespace
}  // namespace testing_support
