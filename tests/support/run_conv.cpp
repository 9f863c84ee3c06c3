#include "support/run_conv.h"

#include <memory>

namespace testing_support {
namespace {

aclFormat format_for(size_t dims, bool nd) {
  if (dims == 3) return nd ? ACL_FORMAT_ND : ACL_FORMAT_NCL;
  return dims == 4 ? ACL_FORMAT_NCHW : dims == 5 ? ACL_FORMAT_NCDHW : ACL_FORMAT_ND;
}

std::unique_ptr<DeviceTensor> make(const std::vector<int64_t>& shape, aclDataType dtype, Layout layout, bool nd) {
  return std::make_unique<DeviceTensor>(shape, dtype, format_for(shape.size(), nd), layout);
}

// Runs a planned executor on `stream` and waits; returns the first failure.
aclnnStatus execute(aclnnStatus (*run)(void*, uint64_t, aclOpExecutor*, aclrtStream), uint64_t size,
                    aclOpExecutor* executor, const RunOptions& o) {
  void* workspace = nullptr;
  if (size > 0 && aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return -1;
  // Poisoned: all bytes 0xFF is NaN in every floating dtype, so scratch read before it is written
  // shows in the results.
  if (size > 0 && aclrtMemset(workspace, size, 0xFF, size) != ACL_SUCCESS) return -1;
  if (o.phase2_observer) o.phase2_observer(true);
  aclnnStatus status = run(workspace, size, executor, o.stream);
  if (status == 0) status = aclrtSynchronizeStream(o.stream);
  if (o.phase2_observer) o.phase2_observer(false);
  if (workspace != nullptr) aclrtFree(workspace);
  return status;
}

std::string take_error() {
  const char* message = aclGetRecentErrMsg();
  return message == nullptr ? std::string() : message;
}

// One value per dim when pad_lo == pad_hi, else [lo, hi] per dim.
std::vector<int64_t> padding_values(const ConvSpec& spec) {
  std::vector<int64_t> padding;
  for (size_t i = 0; i < spec.pad_lo.size(); ++i) {
    padding.push_back(spec.pad_lo[i]);
    if (spec.pad_lo != spec.pad_hi) padding.push_back(spec.pad_hi[i]);
  }
  return padding;
}

// Phase 1 (`plan` gets the workspace size and executor pointers), phase 2 on a poisoned workspace,
// then the output read back (or the error).
template <typename Plan>
ForwardResult run_forward(Plan plan, aclnnStatus (*run)(void*, uint64_t, aclOpExecutor*, aclrtStream),
                          const ForwardOptions& o, const DeviceTensor& output) {
  ForwardResult result;
  aclOpExecutor* executor = nullptr;
  result.status = plan(&result.workspace_size, &executor);
  RunOptions ro;
  ro.stream = o.stream;
  ro.phase2_observer = o.phase2_observer;
  if (result.status == 0) result.status = execute(run, result.workspace_size, executor, ro);
  if (result.status == 0) {
    result.output = output.read();
  } else {
    result.error = take_error();
  }
  return result;
}

}  // namespace

RunResult run_convolution_backward(const ConvSpec& spec, const RunOptions& o, const std::vector<double>& input,
                                   const std::vector<double>& weight, const std::vector<double>& grad_output) {
  auto gy = make(spec.grad_output_shape(), o.grad_output_dtype, o.input_layout, o.nd_format);
  auto x = make(spec.input_shape(), o.input_dtype, o.input_layout, o.nd_format);
  auto w = make(spec.weight_shape(), o.weight_dtype, o.input_layout, o.nd_format);
  gy->fill(grad_output);
  x->fill(input);
  w->fill(weight);
  auto output = [&](const std::vector<int64_t>& shape, aclDataType dtype, const std::vector<int64_t>& strides,
                    aclFormat format) {
    return strides.empty() ? std::make_unique<DeviceTensor>(shape, dtype, format, o.output_layout)
                           : std::make_unique<DeviceTensor>(shape, dtype, format, strides);
  };
  auto gx = output(spec.input_shape(), o.grad_input_dtype, o.grad_input_strides,
                   format_for(spec.input_shape().size(), o.nd_format));
  auto gw = output(spec.weight_shape(), o.grad_weight_dtype, o.grad_weight_strides,
                   format_for(spec.weight_shape().size(), o.nd_format));
  auto gb = output({spec.out_channels}, o.grad_bias_dtype, o.grad_bias_strides, ACL_FORMAT_ND);
  const std::vector<int64_t> padding = padding_values(spec);
  const std::vector<int64_t> output_padding =
      spec.transposed ? spec.output_padding : std::vector<int64_t>(spec.input_size.size(), 0);
  const int64_t bias_size = spec.out_channels;
  aclIntArray* bias_sizes = aclCreateIntArray(&bias_size, 1);
  aclIntArray* stride = aclCreateIntArray(spec.stride.data(), spec.stride.size());
  aclIntArray* pads = aclCreateIntArray(padding.data(), padding.size());
  aclIntArray* dilation = aclCreateIntArray(spec.dilation.data(), spec.dilation.size());
  aclIntArray* out_pads = aclCreateIntArray(output_padding.data(), output_padding.size());
  const bool mask[3] = {o.mask[0], o.mask[1], o.mask[2]};
  aclBoolArray* output_mask = aclCreateBoolArray(mask, 3);

  RunResult result;
  aclOpExecutor* executor = nullptr;
  result.status = aclnnConvolutionBackwardGetWorkspaceSize(
      gy->get(), x->get(), w->get(), bias_sizes, stride, pads, dilation, spec.transposed, out_pads,
      static_cast<int>(spec.groups), output_mask, o.cube_math_type, mask[0] ? gx->get() : nullptr,
      mask[1] ? gw->get() : nullptr, mask[2] ? gb->get() : nullptr, &result.workspace_size, &executor);
  if (result.status == 0) result.status = execute(aclnnConvolutionBackward, result.workspace_size, executor, o);
  result.output_offsets = {gx->element_offsets(), gw->element_offsets(), gb->element_offsets()};
  if (result.status == 0) {
    if (mask[0]) result.grads.grad_input = gx->read();
    if (mask[1]) result.grads.grad_weight = gw->read();
    if (mask[2]) result.grads.grad_bias = gb->read();
  } else {
    result.error = take_error();
  }
  aclDestroyIntArray(bias_sizes);
  aclDestroyIntArray(stride);
  aclDestroyIntArray(pads);
  aclDestroyIntArray(dilation);
  aclDestroyIntArray(out_pads);
  aclDestroyBoolArray(output_mask);
  return result;
}

RunResult run_conv_tbc_backward(const TbcSpec& s, const RunOptions& o, const std::vector<double>& input,
                                const std::vector<double>& weight, const std::vector<double>& self) {
  const aclFormat f = o.nd_format ? ACL_FORMAT_ND : ACL_FORMAT_NCL;
  DeviceTensor gy({s.out_time(), s.batch, s.out_channels}, o.grad_output_dtype, f, o.input_layout);
  DeviceTensor x({s.time, s.batch, s.in_channels}, o.input_dtype, f, o.input_layout);
  DeviceTensor w({s.kernel, s.in_channels, s.out_channels}, o.weight_dtype, f, o.input_layout);
  DeviceTensor bias({s.out_channels}, o.weight_dtype, ACL_FORMAT_ND, o.input_layout);
  gy.fill(self);
  x.fill(input);
  w.fill(weight);
  auto output = [&](const std::vector<int64_t>& shape, aclDataType dtype, const std::vector<int64_t>& strides,
                    aclFormat format) {
    return strides.empty() ? std::make_unique<DeviceTensor>(shape, dtype, format, o.output_layout)
                           : std::make_unique<DeviceTensor>(shape, dtype, format, strides);
  };
  const auto gx_owner = output({s.time, s.batch, s.in_channels}, o.grad_input_dtype, o.grad_input_strides, f);
  const auto gw_owner =
      output({s.kernel, s.in_channels, s.out_channels}, o.grad_weight_dtype, o.grad_weight_strides, f);
  const auto gb_owner = output({s.out_channels}, o.grad_bias_dtype, o.grad_bias_strides, ACL_FORMAT_ND);
  DeviceTensor &gx = *gx_owner, &gw = *gw_owner, &gb = *gb_owner;
  RunResult result;
  aclOpExecutor* executor = nullptr;
  result.status = aclnnConvTbcBackwardGetWorkspaceSize(gy.get(), x.get(), w.get(), bias.get(), s.pad, o.cube_math_type,
                                                       gx.get(), gw.get(), gb.get(), &result.workspace_size, &executor);
  if (result.status == 0) result.status = execute(aclnnConvTbcBackward, result.workspace_size, executor, o);
  result.output_offsets = {gx.element_offsets(), gw.element_offsets(), gb.element_offsets()};
  if (result.status == 0) {
    result.grads = {gx.read(), gw.read(), gb.read()};
  } else {
    result.error = take_error();
  }
  return result;
}

ForwardResult run_convolution_forward(const ConvSpec& spec, const ForwardOptions& o, const std::vector<double>& input,
                                      const std::vector<double>& weight, const std::vector<double>& bias) {
  auto x = make(spec.input_shape(), o.input_dtype, o.input_layout, false);
  auto w = make(spec.weight_shape(), o.weight_dtype, o.input_layout, false);
  auto b = std::make_unique<DeviceTensor>(std::vector<int64_t>{spec.out_channels}, o.bias_dtype, ACL_FORMAT_ND,
                                          o.input_layout);
  auto y = make(spec.grad_output_shape(), o.output_dtype, o.output_layout, false);
  x->fill(input);
  w->fill(weight);
  if (!bias.empty()) b->fill(bias);
  y->poison();
  const std::vector<int64_t> padding = padding_values(spec);
  const std::vector<int64_t> output_padding =
      spec.transposed ? spec.output_padding : std::vector<int64_t>(spec.input_size.size(), 0);
  aclIntArray* stride = aclCreateIntArray(spec.stride.data(), spec.stride.size());
  aclIntArray* pads = aclCreateIntArray(padding.data(), padding.size());
  aclIntArray* dilation = aclCreateIntArray(spec.dilation.data(), spec.dilation.size());
  aclIntArray* out_pads = aclCreateIntArray(output_padding.data(), output_padding.size());
  ForwardResult result = run_forward(
      [&](uint64_t* size, aclOpExecutor** executor) {
        return aclnnConvolutionGetWorkspaceSize(x->get(), w->get(), bias.empty() ? nullptr : b->get(), stride, pads,
                                                dilation, spec.transposed, out_pads, spec.groups, y->get(),
                                                o.cube_math_type, size, executor);
      },
      aclnnConvolution, o, *y);
  aclDestroyIntArray(stride);
  aclDestroyIntArray(pads);
  aclDestroyIntArray(dilation);
  aclDestroyIntArray(out_pads);
  return result;
}

ForwardResult run_conv_tbc_forward(const TbcSpec& s, const ForwardOptions& o, const std::vector<double>& self,
                                   const std::vector<double>& weight, const std::vector<double>& bias) {
  DeviceTensor x({s.time, s.batch, s.in_channels}, o.input_dtype, ACL_FORMAT_NCL, o.input_layout);
  DeviceTensor w({s.kernel, s.in_channels, s.out_channels}, o.weight_dtype, ACL_FORMAT_NCL, o.input_layout);
  DeviceTensor b({s.out_channels}, o.bias_dtype, ACL_FORMAT_ND, o.input_layout);
  DeviceTensor y({s.out_time(), s.batch, s.out_channels}, o.output_dtype, ACL_FORMAT_NCL, o.output_layout);
  x.fill(self);
  w.fill(weight);
  b.fill(bias);
  y.poison();
  return run_forward(
      [&](uint64_t* size, aclOpExecutor** executor) {
        return aclnnConvTbcGetWorkspaceSize(x.get(), w.get(), b.get(), s.pad, y.get(), o.cube_math_type, size,
                                            executor);
      },
      aclnnConvTbc, o, y);
}

ForwardResult run_conv_depthwise2d(const ConvSpec& spec, const ForwardOptions& o, const std::vector<double>& self,
                                   const std::vector<double>& weight, const std::vector<double>& bias) {
  auto x = make(spec.input_shape(), o.input_dtype, o.input_layout, false);
  auto w = make(spec.weight_shape(), o.weight_dtype, o.input_layout, false);
  DeviceTensor b({spec.out_channels}, o.bias_dtype, ACL_FORMAT_ND, o.input_layout);
  auto y = make(spec.grad_output_shape(), o.output_dtype, o.output_layout, false);
  x->fill(self);
  w->fill(weight);
  if (!bias.empty()) b.fill(bias);
  y->poison();
  aclIntArray* kernel = aclCreateIntArray(spec.kernel.data(), spec.kernel.size());
  aclIntArray* stride = aclCreateIntArray(spec.stride.data(), spec.stride.size());
  aclIntArray* pads = aclCreateIntArray(spec.pad_lo.data(), spec.pad_lo.size());
  aclIntArray* dilation = aclCreateIntArray(spec.dilation.data(), spec.dilation.size());
  ForwardResult result = run_forward(
      [&](uint64_t* size, aclOpExecutor** executor) {
        return aclnnConvDepthwise2dGetWorkspaceSize(x->get(), w->get(), kernel, bias.empty() ? nullptr : b.get(),
                                                    stride, pads, dilation, y->get(), o.cube_math_type, size, executor);
      },
      aclnnConvDepthwise2d, o, *y);
  aclDestroyIntArray(kernel);
  aclDestroyIntArray(stride);
  aclDestroyIntArray(pads);
  aclDestroyIntArray(dilation);
  return result;
}

ConvGrads oracle_tbc_backward(const TbcSpec& s, const std::vector<double>& x, const std::vector<double>& w,
                              const std::vector<double>& gy) {
  // y[t, b, co] = bias[co] + sum_{k, ci} x[t + k - pad, b, ci] * w[k, ci, co]
  ConvGrads g;
  g.grad_input.assign(x.size(), 0.0);
  g.grad_weight.assign(w.size(), 0.0);
  g.grad_bias.assign(static_cast<size_t>(s.out_channels), 0.0);
  for (int64_t t = 0; t < s.out_time(); ++t) {
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t co = 0; co < s.out_channels; ++co) {
        const double dy = gy[(t * s.batch + b) * s.out_channels + co];
        g.grad_bias[co] += dy;
        for (int64_t k = 0; k < s.kernel; ++k) {
          const int64_t ti = t + k - s.pad;
          if (ti < 0 || ti >= s.time) continue;
          for (int64_t ci = 0; ci < s.in_channels; ++ci) {
            const int64_t xi = (ti * s.batch + b) * s.in_channels + ci;
            const int64_t wi = (k * s.in_channels + ci) * s.out_channels + co;
            g.grad_input[xi] += dy * w[wi];
            g.grad_weight[wi] += dy * x[xi];
          }
        }
      }
    }
  }
  return g;
}

std::vector<double> rounded(const std::vector<double>& values, aclDataType dtype) {
  std::vector<double> out(values.size());
  std::vector<uint8_t> cell(8);
  for (size_t i = 0; i < values.size(); ++i) {
    store_value(cell.data(), dtype, 0, values[i]);
    out[i] = load_value(cell.data(), dtype, 0);
  }
  return out;
}

}  // namespace testing_support
