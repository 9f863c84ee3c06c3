// ACLNN_CONVBWD_VERBOSE=1: one line per phase 2, in the documented format (docs/architecture.md);
// =2: also how phase 1 chose each result's entry, from the list of the pass that computes it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

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

// Splits at commas.
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out(1);
  for (char ch : line) {
    if (ch == ',') {
      out.emplace_back();
    } else {
      out.back() += ch;
    }
  }
  return out;
}

// "<prefix><digits>" -> the number, or -1.
long long number_after(const std::string& text, const std::string& prefix) {
  if (text.compare(0, prefix.size(), prefix) != 0 || text.size() == prefix.size()) return -1;
  const std::string digits = text.substr(prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

TEST(Verbose, OneLinePerExecution) {
  aclInit(nullptr);
  RunResult result;
  setenv("ACLNN_CONVBWD_ISA", "generic", 1);  // every CPU runs it: a fixed expected line
  const std::string out = captured("1", nullptr, &result);
  unsetenv("ACLNN_CONVBWD_ISA");
  ASSERT_EQ(result.status, 0) << result.error;
  ASSERT_FALSE(out.empty());
  ASSERT_EQ(out.back(), '\n');
  ASSERT_EQ(out.find('\n'), out.size() - 1) << "exactly one line: " << out;
  const std::vector<std::string> f = fields(out.substr(0, out.size() - 1));
  ASSERT_EQ(f.size(), 10u) << out;
  EXPECT_EQ(f[0], "aclnn_convbwd_verbose");
  EXPECT_EQ(f[1], "exec");
  EXPECT_EQ(f[2], "aclnnConvolutionBackward");
  EXPECT_EQ(f[3], "gradOutput:FLOAT:2x6x4x8 input:FLOAT:2x4x7x8 weight:FLOAT:6x2x3x3");
  EXPECT_EQ(f[4],
            "stride=2x1 padding=1x1 dilation=1x1 transposed=0 outputPadding=0x0 groups=2 outputMask=111 "
            "cubeMathType=0");
  // gradInput (stride 2: the GEMM path; planes of 32 positions, so both samples in one GEMM): (group,
  // one of 2 channels) = 4 tasks; gradWeight (3 and 2 channels per group: the small-group kernels):
  // (group, sample) = 4; gradBias: 6 channels.
  EXPECT_EQ(
      f[5],
      "gradInput=gemm_col2im:tasks=4:isa=generic gradWeight=small_group:tasks=4:isa=generic gradBias=lanes:tasks=6");
  EXPECT_GT(number_after(f[6], "threads="), 0) << f[6];
  EXPECT_EQ(number_after(f[7], "workspace="), static_cast<long long>(result.workspace_size)) << f[7];
  EXPECT_EQ(f[8], "status=0");
  const size_t dot = f[9].find('.');
  ASSERT_NE(dot, std::string::npos) << f[9];
  EXPECT_EQ(f[9].size() - dot - 1, 3u) << "milliseconds with three decimals: " << f[9];
  EXPECT_GE(std::stod(f[9]), 0.0);
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
                      "weight:FLOAT:3x3x4,pad=1 cubeMathType=0,gradInput=small_group:",
                      0),
            0u)
      << out;
}

// ACLNN_CONVBWD_VERBOSE=2: at phase 1, one line per result naming its pass, the entry chosen and every
// entry of that pass's list tried before it with its reason, then the execution's line.
TEST(Verbose, LevelTwoSaysWhyEachEntryWasNotChosen) {
  RunResult result;
  setenv("ACLNN_CONVBWD_ISA", "generic", 1);
  const std::string out = captured("2", nullptr, &result);
  unsetenv("ACLNN_CONVBWD_ISA");
  ASSERT_EQ(result.status, 0) << result.error;
  std::vector<std::vector<std::string>> lines;
  for (size_t start = 0; start < out.size();) {
    const size_t end = out.find('\n', start);
    ASSERT_NE(end, std::string::npos) << out;
    lines.push_back(fields(out.substr(start, end - start)));
    start = end + 1;
  }
  ASSERT_EQ(lines.size(), 4u) << out;
  const char* const results[] = {"gradInput", "gradWeight", "gradBias"};
  const char* const passes[] = {"backward_data", "backward_weight", "bias"};
  const char* const chosen[] = {"gemm_col2im", "small_group", "lanes"};
  for (int i = 0; i < 3; ++i) {
    const std::vector<std::string>& f = lines[i];
    ASSERT_EQ(f.size(), 10u) << out;  // (no reason holds a comma)
    EXPECT_EQ(f[1], "plan");
    EXPECT_EQ(f[2], "aclnnConvolutionBackward");
    EXPECT_EQ(f[5], results[i]);
    EXPECT_EQ(f[6], passes[i]);
    EXPECT_EQ(f[7], chosen[i]);
  }
  // gradInput (stride 2, 2 and 3 channels per group): the backward-data entries before the GEMM's col2im,
  // each with its reason (no forward entry: they are in another list).
  EXPECT_EQ(lines[0][8],
            "small_group: not stride 1 with padding within the kernel; depthwise: not one channel per group; "
            "channels_last: not a 1-D stride-1 layer of one group in full precision; winograd: not stride 1 with "
            "padding within the kernel; gemm_flipped_windows: not BF16 pairs nor one row per plane; "
            "gemm_flipped_tiles: not BF16 pairs that col2im fits; gemm_col2im: not BF16 pairs that col2im fits; "
            "direct: fewer than 16 channels per group; gemm_flipped_windows: not stride 1 with padding within the "
            "kernel; gemm_flipped_tiles: not stride 1 with padding within the kernel");
  EXPECT_EQ(lines[1][8], "");  // the first entry took it
  EXPECT_EQ(lines[3][1], "exec");
}

// The last field says what the chosen entry decided in supports(), each choice with its reason: the GEMM
// gradWeight's variant (dY packed once; X, a dense float array, read in place), which its plan then takes.
TEST(Verbose, LevelTwoSaysWhatTheEntryDecided) {
  RunResult result;
  const std::string out = captured("2", "gemm_weight_tiles", &result);
  ASSERT_EQ(result.status, 0) << result.error;
  const size_t second = out.find('\n') + 1;
  const std::string line = out.substr(second, out.find('\n', second) - second);
  const std::vector<std::string> f = fields(line);
  ASSERT_EQ(f.size(), 10u) << out;
  EXPECT_EQ(f[5], "gradWeight");
  EXPECT_EQ(f[7], "gemm_weight_tiles");
  EXPECT_EQ(f[9], "pack_once: dY packed once for every task") << out;
  // (gemm_col2im's tasks take both samples' small planes at once)
  EXPECT_EQ(fields(out.substr(0, out.find('\n')))[9],
            "samples: several small planes' columns side by side in one GEMM; pack_once: dY packed once for every "
            "block of channels")
      << out;
}

// A named entry that refuses is asked first and once: its reason leads the line, then the list's order.
TEST(Verbose, LevelTwoAsksANamedEntryFirstAndOnce) {
  RunResult result;
  const std::string out = captured("2", "direct", &result);
  ASSERT_EQ(result.status, 0) << result.error;
  const std::string line = out.substr(0, out.find('\n'));
  const std::vector<std::string> f = fields(line);
  ASSERT_EQ(f.size(), 10u) << out;
  EXPECT_EQ(f[5], "gradInput");
  EXPECT_EQ(f[7], "gemm_col2im");
  // (the family's entries of the backward-data list, in its order)
  EXPECT_EQ(f[8].rfind("direct: fewer than 16 channels per group; small_group: ", 0), 0u) << f[8];
  EXPECT_EQ(f[8].find("direct:", 1), std::string::npos) << f[8];
}

// The forward operators speak of their output: a transposed aclnnConvolution's output is the backward-data
// pass's result, a direct one's the forward pass's, each chosen from its own list.
TEST(Verbose, LevelTwoNamesTheForwardOperatorsOutput) {
  setenv("ACLNN_CONVBWD_VERBOSE", "2", 1);
  setenv("ACLNN_CONVBWD_ISA", "generic", 1);
  for (bool transposed : {false, true}) {
    const ConvSpec spec = make_spec(2, 1, 20, 20, 1, {6, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, transposed, {});
    ::testing::internal::CaptureStdout();
    const ForwardResult result = run_convolution_forward(spec, {}, pattern(product(spec.input_shape()), 1),
                                                         pattern(product(spec.weight_shape()), 2), {});
    const std::string out = ::testing::internal::GetCapturedStdout();
    ASSERT_EQ(result.status, 0) << result.error;
    const std::vector<std::string> f = fields(out.substr(0, out.find('\n')));
    ASSERT_EQ(f.size(), 10u) << out;
    EXPECT_EQ(f[2], "aclnnConvolution");
    EXPECT_EQ(f[5], "output");
    EXPECT_EQ(f[6], transposed ? "backward_data" : "forward");
    EXPECT_EQ(f[7], transposed ? "direct" : "direct_forward") << out;
    // (the entries of the other list are not asked, and no reason speaks of a transposed layer)
    const std::vector<std::string> absent =
        transposed ? std::vector<std::string>{"direct_forward:", "gemm_forward_", "transposed"}
                   : std::vector<std::string>{"gemm_flipped_", "gemm_col2im", "transposed"};
    for (const std::string& other : absent) EXPECT_EQ(f[8].find(other), std::string::npos) << f[8];
  }
  unsetenv("ACLNN_CONVBWD_ISA");
  unsetenv("ACLNN_CONVBWD_VERBOSE");
}

TEST(Verbose, SilentByDefaultAndWithZero) {
  RunResult result;
  EXPECT_EQ(captured(nullptr, nullptr, &result), "");
  EXPECT_EQ(captured("0", nullptr, &result), "");
}

}  // namespace
}  // namespace testing_support
