#include "kernels/core/plan.h"

#include <algorithm>
#include <cstdlib>

#include "aclnn/opdev/op_errno.h"
#include "common/log.h"
#include "kernels/common/convert.h"
#include "kernels/common/pack.h"
#include "kernels/ref/conv_ref.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace aclnn_cpu {
namespace {

// Whether `name` is one of the comma-separated names in `list`.
bool named_in(const std::string& list, const char* name) {
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    if (list.compare(start, end - start, name) == 0) return true;
    start = end + 1;
  }
  return false;
}

// Whether `only` names the entry or its family.
bool named(const std::string& only, const ConvImpl& impl) {
  return named_in(only, impl.name) || named_in(only, impl.family);
}

// The first supporting entry named in `only`, else the first supporting entry (the reference
// supports everything). `log` gets the line ConvPlan::choices() describes.
const ConvImpl* choose(Gradient gradient, const ConvProblem& problem, const CpuFeatures& cpu, const std::string& only,
                       std::string& log) {
  const std::vector<const ConvImpl*>& list = implementations(gradient);
  std::string refusals;
  const ConvImpl* chosen = nullptr;
  for (bool named_pass : {true, false}) {
    if (named_pass && only.empty()) continue;
    for (const ConvImpl* impl : list) {
      // (the first pass asks the named entries, the second every other one: each is asked once)
      if (!only.empty() && named_pass != named(only, *impl)) continue;
      const Support support = impl->supports(problem, cpu);
      if (support) {
        chosen = impl;
        break;
      }
      refusals += format("%s%s: %s", refusals.empty() ? "" : "; ", impl->name, support.why_not);
    }
    if (chosen != nullptr) break;
  }
  if (chosen == nullptr) chosen = list.back();
  log = format("%s,%s,%s", result_name(problem, gradient), chosen->name, refusals.c_str());
  return chosen;
}

const View5& input_view(const ConvProblem& p, int input) { return input == 0 ? p.src : input == 1 ? p.wei : p.dst; }

// A gradient's result view.
const View5& result_view(const ConvProblem& p, Gradient gradient) {
  return gradient == Gradient::kInput ? p.grad_input : gradient == Gradient::kWeight ? p.grad_weight : p.grad_bias;
}

// Whether the inputs a gradient reads hold no element: its result is then a sum over nothing.
bool sums_nothing(const ConvProblem& p, Gradient gradient) {
  switch (gradient) {
    case Gradient::kInput:
      return p.wei.numel() == 0 || (p.input_grad == InputGrad::kForward ? p.src : p.dst).numel() == 0;
    case Gradient::kWeight: return p.src.numel() == 0 || p.dst.numel() == 0;
    default: return p.bias_source.numel() == 0;
  }
}

// Writes zeros into a gradient's result, or (the forward operators' output over empty sums) each
// channel's bias.
class ZeroResult final : public ConvStep {
 public:
  ZeroResult(const View5& result, const View5* bias, int threads) : result_(result), threads_(threads) {
    if (bias != nullptr) bias_ = *bias, has_bias_ = true;
  }
  int run(const Workspace&, const StepInputs&) const override {
    if (!has_bias_) {
      store_zeros(result_, threads_);
      return ACLNN_SUCCESS;
    }
    const int64_t plane = result_.shape[2] * result_.shape[3] * result_.shape[4];
    constexpr int64_t kRun = 1024;  // floats on the stack per store
    float row[kRun];
    for (int64_t n = 0; n < result_.shape[0]; ++n) {
      for (int64_t c = 0; c < result_.shape[1]; ++c) {
        std::fill(row, row + kRun, channel_bias(bias_, c));
        for (int64_t first = 0; first < plane; first += kRun)
          store_plane_floats(row, result_, n, c, first, std::min(kRun, plane - first));
      }
    }
    return ACLNN_SUCCESS;
  }
  int64_t tasks() const override { return 1; }

 private:
  View5 result_, bias_;
  bool has_bias_ = false;
  int threads_;
};

template <Gradient kGradient>
Support zeros_supports(const ConvProblem& p, const CpuFeatures&) {
  return sums_nothing(p, kGradient) ? kSupported : refuse("inputs not empty");
}
template <Gradient kGradient>
std::unique_ptr<ConvStep> zeros_plan(const ConvProblem& p, PlanBuilder& b) {
  const View5* bias = kGradient == Gradient::kInput && p.add_grad_input_bias ? &p.grad_input_bias : nullptr;
  return std::make_unique<ZeroResult>(result_view(p, kGradient), bias, b.threads());
}
// The step of a gradient whose inputs are empty, for each gradient. Not in the implementation lists:
// the plan takes it before any list is looked at (ACLNN_CONVBWD_KERNELS does not apply).
template <Gradient kGradient>
constexpr ConvImpl zeros_entry() {
  ConvImpl impl{"zeros", "zeros", kGradient, zeros_supports<kGradient>, zeros_plan<kGradient>};
  impl.multiplies_padding = false;
  return impl;
}
const ConvImpl kZeros[3] = {zeros_entry<Gradient::kInput>(), zeros_entry<Gradient::kWeight>(),
                            zeros_entry<Gradient::kBias>()};

}  // namespace

const char* result_name(const ConvProblem& problem, Gradient gradient) {
  return gradient == Gradient::kInput && problem.forward_operator ? "output" : gradient_name(gradient);
}

const char* gradient_name(Gradient gradient) {
  switch (gradient) {
    case Gradient::kInput: return "gradInput";
    case Gradient::kWeight: return "gradWeight";
    default: return "gradBias";
  }
}

void PlanBuilder::need_float_inputs(bool src, bool wei, bool dst) {
  float_wanted[0] |= src, float_wanted[1] |= wei, float_wanted[2] |= dst;
}

std::unique_ptr<ConvPlan> ConvPlan::build(const ConvProblem& problem, const std::string& only, const char* api) {
  refresh_f16c_conversions();  // ACLNN_CONVBWD_ISA is read here, not per row at phase 2
  std::unique_ptr<ConvPlan> plan(new ConvPlan());
  plan->problem_ = problem;
  const ConvProblem& p = plan->problem_;
  // Empty tensors are planned here, so that no kernel sees their sizes and strides, which no check
  // bounds (a plane of 2^62 entries, a stride of 2^62): a gradient with an empty result has nothing
  // to write and gets no step; one whose inputs are empty is a sum over nothing and gets kZeros.
  const struct {
    Gradient gradient;
    bool requested;
  } gradients[] = {{Gradient::kInput, p.input_grad != InputGrad::kNone},
                   {Gradient::kWeight, p.want_weight_grad},
                   {Gradient::kBias, p.want_bias_grad}};
  plan->cpu_ = CpuFeatures::current();
  const CpuFeatures& cpu = plan->cpu_;
  const ConvImpl* chosen[3] = {nullptr, nullptr, nullptr};
  for (const auto& wanted : gradients) {
    const int i = static_cast<int>(wanted.gradient);
    if (!wanted.requested) continue;
    std::string log = format("%s,none,an empty result", result_name(p, wanted.gradient));
    if (result_view(p, wanted.gradient).numel() > 0) {
      if (kZeros[i].supports(p, cpu)) {
        chosen[i] = &kZeros[i];
        log = format("%s,zeros,a sum over empty inputs", result_name(p, wanted.gradient));
      } else {
        chosen[i] = choose(wanted.gradient, p, cpu, only, log);
      }
    }
    plan->choices_.push_back(std::move(log));
  }
  // gradInput and gradWeight in one step where the entry chosen for gradInput has one with the entry
  // chosen for gradWeight.
  const ConvImpl* input = chosen[0];
  const bool joint =
      input != nullptr && chosen[1] != nullptr && input->joint_weight == chosen[1] && input->supports_joint(p, cpu);
  const std::vector<int> threads = plan->threads_within_budget(chosen, joint);
  plan->plan_steps(chosen, joint, [&](size_t step) { return step < threads.size() ? threads[step] : p.max_threads; });
  if (plan->ledger_.overflowed()) {
    report_error(format("%s: the workspace this problem needs exceeds 2^64 bytes", api));
    return nullptr;
  }
  return plan;
}

std::vector<uint64_t> ConvPlan::plan_steps(const ConvImpl* const chosen[3], bool joint,
                                           const std::function<int(size_t)>& threads_for) {
  const ConvProblem& p = problem_;
  PlanBuilder builder(p, cpu_, ledger_);
  std::vector<uint64_t> bytes;  // per step
  const auto next_step = [&] {
    ledger_.begin_step();
    builder.set_threads(threads_for(bytes.size()));
  };
  for (Gradient gradient : {Gradient::kInput, Gradient::kWeight, Gradient::kBias}) {
    const ConvImpl* impl = chosen[static_cast<int>(gradient)];
    if (impl == nullptr) continue;  // not requested, or an empty result
    next_step();
    if (!joint || (gradient == Gradient::kBias && !builder.joint_bias_taken)) {
      steps_.push_back({impl, impl->plan(p, builder), builder.threads()});
    } else if (gradient == Gradient::kInput) {  // the joint step, as gradInput's
      builder.joint_bias_offered = chosen[2] != nullptr && chosen[2]->bias_in_lanes;
      steps_.push_back({impl, impl->plan_joint(p, builder), builder.threads()});
    } else {  // computed by the joint step
      steps_.push_back({impl, nullptr, builder.threads()});
    }
    bytes.push_back(ledger_.step_bytes());
  }
  // The non-finite repair after each gradInput and gradWeight step of an entry that multiplies padding.
  for (Gradient gradient : {Gradient::kInput, Gradient::kWeight}) {
    const ConvImpl* impl = chosen[static_cast<int>(gradient)];
    if (impl == nullptr || !impl->multiplies_padding) continue;
    next_step();
    repairs_.push_back(plan_non_finite_repair(gradient, p, builder));
    bytes.push_back(ledger_.step_bytes());
  }
  static const char* const kNames[3] = {"src.f32", "wei.f32", "dst.f32"};
  for (int i = 0; i < 3; ++i) {
    const View5& view = input_view(p, i);
    Staging& staging = staging_[i];
    const auto count = static_cast<uint64_t>(view.numel());
    if (builder.float_wanted[i]) {
      if (float_in_place(view, p.math)) {
        staging.f32_in_place = dense_float_data(view);
      } else {
        staging.f32 = ledger_.book(kNames[i], count, sizeof(float));
      }
    }
  }
  return bytes;
}

// A step's scratch is about F + P * t bytes on t threads: its per-thread slices are sized by the
// problem (the channels-last entries cut their rows into more tiles for more threads, smaller
// slices). Planned on one thread and on all, each step gives its F and P; one that would take the
// workspace past workspace_budget() gets the threads this line says fit, then fewer while a plan on
// them still does not fit (at least one). The shared area (the inputs' copies) does not depend on threads.
std::vector<int> ConvPlan::threads_within_budget(const ConvImpl* const chosen[3], bool joint) const {
  const int threads = problem_.max_threads;
  if (threads <= 1) return {};
  struct Probe {
    std::vector<uint64_t> bytes;  // per step
    double shared;
    bool overflowed;
  };
  const auto plan_on = [&](const std::function<int(size_t)>& threads_for) {
    ConvPlan probe;
    probe.problem_ = problem_;
    std::vector<uint64_t> bytes = probe.plan_steps(chosen, joint, threads_for);
    return Probe{std::move(bytes), double(probe.ledger_.shared_bytes()), probe.ledger_.overflowed()};
  };
  const Probe one = plan_on([](size_t) { return 1; });
  const Probe all = plan_on([&](size_t) { return threads; });
  std::vector<int> out(one.bytes.size(), all.overflowed ? 1 : threads);
  if (one.overflowed || all.overflowed || out.empty()) return out;  // (refused by the caller, or one thread each)
  const double total_one = one.shared + double(*std::max_element(one.bytes.begin(), one.bytes.end()));
  const double budget = workspace_budget(total_one, threads) - one.shared;
  bool capped = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (double(all.bytes[i]) <= budget) continue;
    const double per_thread = double(all.bytes[i] - std::min(all.bytes[i], one.bytes[i])) / (threads - 1);
    const double fixed = double(one.bytes[i]) - per_thread;
    out[i] = static_cast<int>(std::clamp((budget - fixed) / std::max(per_thread, 1.0), 1.0, double(threads)));
    capped = true;
  }
  while (capped) {  // the line promises too much where slices shrink with threads: fewer until it fits
    const Probe now = plan_on([&](size_t i) { return out[i]; });
    capped = false;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] > 1 && (now.overflowed || double(now.bytes[i]) > budget)) out[i] -= 1, capped = true;
    }
  }
  return out;
}

int ConvPlan::execute(void* buffer) const {
  const Workspace workspace(ledger_, buffer);
  StepInputs inputs;
  const float** f32[3] = {&inputs.f32.src, &inputs.f32.wei, &inputs.f32.dst};
  for (int i = 0; i < 3; ++i) {
    const Staging& staging = staging_[i];
    const View5& view = input_view(problem_, i);
    *f32[i] = staging.f32_in_place;
    if (float* packed = workspace.at<float>(staging.f32)) {
      pack_dense(view, problem_.math, packed, threads());
      *f32[i] = packed;
    }
  }
  for (const Chosen& chosen : steps_) {
    const int status = chosen.step ? chosen.step->run(workspace, inputs) : ACLNN_SUCCESS;
    if (status != ACLNN_SUCCESS) return status;
  }
  for (const std::unique_ptr<ConvStep>& repair : repairs_) {
    const int status = repair->run(workspace, inputs);
    if (status != ACLNN_SUCCESS) return status;
  }
  return ACLNN_SUCCESS;
}

std::string ConvPlan::describe() const {
  std::string text;
  for (const Chosen& chosen : steps_) {
    if (!text.empty()) text += ' ';
    if (!chosen.step) {  // computed by the gradInput step
      text += format("%s=%s:joint", result_name(problem_, chosen.impl->gradient), chosen.impl->name);
      continue;
    }
    text += format("%s=%s:tasks=%lld", result_name(problem_, chosen.impl->gradient), chosen.impl->name,
                   static_cast<long long>(chosen.step->tasks()));
    const std::string detail = chosen.step->detail();
    if (!detail.empty()) text += ":" + detail;
    if (chosen.threads < threads()) text += format(":threads=%d", chosen.threads);
  }
  return text;
}

const ConvImpl* ConvPlan::chosen(Gradient gradient) const {
  for (const Chosen& c : steps_) {
    if (c.impl->gradient == gradient) return c.impl;
  }
  return nullptr;
}

std::string implementation_filter() {
  const char* value = std::getenv("ACLNN_CONVBWD_KERNELS");
  return value == nullptr ? std::string() : std::string(value);
}

int available_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace aclnn_cpu
