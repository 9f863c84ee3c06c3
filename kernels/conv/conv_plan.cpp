#include "kernels/conv/conv_plan.h"

#include <algorithm>
#include <cstdlib>

#include "aclnn/opdev/op_errno.h"
#include "common/log.h"
#include "kernels/common/pack.h"
#include "kernels/kits/kit.h"
#include "kernels/ref/conv_ref.h"

namespace aclnn_cpu {
namespace {

const View5& input_view(const ConvProblem& p, int input) { return input == 0 ? p.src : input == 1 ? p.wei : p.dst; }

// The plan's results, in the order their steps run: grad_input (by the forward or the backward-data
// pass), grad_weight, grad_bias.
int result_index(ConvPass pass) { return pass == ConvPass::kBackwardWeight ? 1 : pass == ConvPass::kBias ? 2 : 0; }

// A pass's result view.
const View5& result_view(const ConvProblem& p, ConvPass pass) {
  const int index = result_index(pass);
  return index == 0 ? p.grad_input : index == 1 ? p.grad_weight : p.grad_bias;
}

// Whether the inputs a pass reads hold no element: its result is then a sum over nothing.
bool sums_nothing(const ConvProblem& p, ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward: return p.wei.numel() == 0 || p.src.numel() == 0;
    case ConvPass::kBackwardData: return p.wei.numel() == 0 || p.dst.numel() == 0;
    case ConvPass::kBackwardWeight: return p.src.numel() == 0 || p.dst.numel() == 0;
    default: return p.bias_source.numel() == 0;
  }
}

// Writes zeros into a gradient's result, or (the forward operators' output over empty sums) each
// channel's bias.
class ZeroResult final : public ConvStep {
 public:
  ZeroResult(const View5& result, const View5* bias, int threads, const Conversions16* conversions)
      : result_(result), threads_(threads), conversions_(conversions) {
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
          store_plane_floats(row, result_, n, c, first, std::min(kRun, plane - first), conversions_);
      }
    }
    return ACLNN_SUCCESS;
  }
  int64_t tasks() const override { return 1; }

 private:
  View5 result_, bias_;
  bool has_bias_ = false;
  int threads_;
  const Conversions16* conversions_;
};

template <ConvPass kPass>
Support zeros_supports(const ConvProblem& p, const CpuFeatures&) {
  return sums_nothing(p, kPass) ? kSupported : refuse("inputs not empty");
}
template <ConvPass kPass>
std::unique_ptr<ConvStep> zeros_plan(const ConvProblem& p, PlanBuilder& b) {
  const View5* bias = result_index(kPass) == 0 && p.add_grad_input_bias ? &p.grad_input_bias : nullptr;
  return std::make_unique<ZeroResult>(result_view(p, kPass), bias, b.threads(), b.cpu().conversions);
}
// The step of a pass whose inputs are empty, for each pass. Not in the implementation lists: the plan
// takes it before any list is looked at (ACLNN_CONVBWD_KERNELS does not apply).
template <ConvPass kPass>
constexpr ConvImpl zeros_entry() {
  ConvImpl impl{"zeros", "zeros", kPass, zeros_supports<kPass>, zeros_plan<kPass>};
  impl.multiplies_padding = false;
  return impl;
}
const ConvImpl kZeros[4] = {zeros_entry<ConvPass::kForward>(), zeros_entry<ConvPass::kBackwardData>(),
                            zeros_entry<ConvPass::kBackwardWeight>(), zeros_entry<ConvPass::kBias>()};

}  // namespace

const char* result_name(const ConvProblem& problem, ConvPass pass) {
  const int index = result_index(pass);
  return index == 0 ? problem.grad_input_name : index == 1 ? "gradWeight" : "gradBias";
}

const char* pass_name(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward: return "forward";
    case ConvPass::kBackwardData: return "backward_data";
    case ConvPass::kBackwardWeight: return "backward_weight";
    default: return "bias";
  }
}

std::unique_ptr<ConvPlan> ConvPlan::build(const ConvProblem& problem, const std::string& only, const char* api) {
  std::unique_ptr<ConvPlan> plan(new ConvPlan());
  plan->problem_ = problem;
  const ConvProblem& p = plan->problem_;
  // Empty tensors are planned here, so that no kernel sees their sizes and strides, which no check
  // bounds (a plane of 2^62 entries, a stride of 2^62): a result that is empty has nothing to write
  // and gets no step; one whose inputs are empty is a sum over nothing and gets kZeros.
  const struct {
    ConvPass pass;
    bool requested;
  } results[] = {{p.grad_input_pass(), p.input_grad != InputGrad::kNone},
                 {ConvPass::kBackwardWeight, p.want_weight_grad},
                 {ConvPass::kBias, p.want_bias_grad}};
  plan->cpu_ = cpu_features();  // (the settings read here, not at phase 2)
  // (ACLNN_CONVBWD_VARIANTS=no_pairs: no entry of this plan multiplies in pairs)
  if (named_in(p.forced_choices, "no_pairs")) plan->cpu_.pairs = AmxTiles::kNone;
  const CpuFeatures& cpu = plan->cpu_;
  const ConvImpl* chosen[3] = {nullptr, nullptr, nullptr};
  for (const auto& wanted : results) {
    if (!wanted.requested) continue;
    const ConvImpl*& entry = chosen[result_index(wanted.pass)];
    const char* result = result_name(p, wanted.pass);
    const char* pass = pass_name(wanted.pass);
    std::string log = format("%s,%s,none,an empty result,", result, pass);
    const ConvImpl& zeros = kZeros[static_cast<int>(wanted.pass)];
    if (result_view(p, wanted.pass).numel() > 0) {
      if (zeros.supports(p, cpu)) {
        entry = &zeros;
        log = format("%s,%s,zeros,a sum over empty inputs,", result, pass);
      } else {
        const ListChoice<ConvImpl> choice = choose_from(convolution_implementations(wanted.pass), p, cpu, only);
        entry = choice.entry;
        plan->decisions_[result_index(wanted.pass)] = choice.decision;
        const std::string decided = choice.decision != nullptr ? choice.decision->describe() : "";
        log = format("%s,%s,%s,%s,%s", result, pass, entry->name, choice.refusals.c_str(), decided.c_str());
      }
    }
    plan->choices_.push_back(std::move(log));
  }
  // gradInput and gradWeight in one step where the entry chosen for gradInput has one with the entry
  // chosen for gradWeight.
  const ConvImpl* input = chosen[0];
  const bool joint = input != nullptr && chosen[1] != nullptr && input->joint_weight == chosen[1];
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
  for (int index = 0; index < 3; ++index) {
    const ConvImpl* impl = chosen[index];
    if (impl == nullptr) continue;  // not requested, or an empty result
    next_step();
    builder.set_decision(decisions_[index].get());
    if (!joint || (index == 2 && !builder.joint_bias_taken)) {
      steps_.push_back({impl, impl->plan(p, builder), builder.threads()});
    } else if (index == 0) {  // the joint step, as gradInput's
      builder.joint_bias_offered = chosen[2] != nullptr && chosen[2]->bias_in_lanes;
      steps_.push_back({impl, impl->plan_joint(p, builder), builder.threads()});
    } else {  // computed by the joint step
      steps_.push_back({impl, nullptr, builder.threads()});
    }
    bytes.push_back(ledger_.step_bytes());
  }
  // The non-finite repair after each gradInput and gradWeight step of an entry that multiplies padding.
  for (int index = 0; index < 2; ++index) {
    const ConvImpl* impl = chosen[index];
    if (impl == nullptr || !impl->multiplies_padding) continue;
    next_step();
    builder.set_decision(nullptr);
    repairs_.push_back(plan_non_finite_repair(impl->pass, p, builder));
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
    probe.cpu_ = cpu_;  // (the steps' tiles and scratch depend on the CPU, and on the entries' decisions)
    for (int i = 0; i < 3; ++i) probe.decisions_[i] = decisions_[i];
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
      pack_dense(view, problem_.math, packed, threads(), cpu_.conversions);
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
      text += format("%s=%s:joint", result_name(problem_, chosen.impl->pass), chosen.impl->name);
      continue;
    }
    text += format("%s=%s:tasks=%lld", result_name(problem_, chosen.impl->pass), chosen.impl->name,
                   static_cast<long long>(chosen.step->tasks()));
    const std::string detail = chosen.step->detail();
    if (!detail.empty()) text += ":" + detail;
    if (chosen.threads < threads()) text += format(":threads=%d", chosen.threads);
  }
  return text;
}

const ConvImpl* ConvPlan::chosen(ConvPass pass) const {
  for (const Chosen& c : steps_) {
    if (c.impl->pass == pass) return c.impl;
  }
  return nullptr;
}

const std::vector<std::string>& named_choices() {
  static const std::vector<std::string> names = {
      // the GEMM gradWeight entries' (gemm_weight_split.h)
      "pack_once", "x_staged", "pairs", "transposed", "depth_major", "bf16_rows", "bands", "rounds_blocks", "narrowed",
      // gemm_col2im's, the forward GEMM entries' (gemm_forward_decision.h), channels_last's and small_group's
      "samples", "buffered", "dy_rows", "rows16", "source_staged", "flat", "source_in_place"};
  return names;
}

std::string forced_choices() {
  const char* value = std::getenv("ACLNN_CONVBWD_VARIANTS");
  const std::string forced = value == nullptr ? std::string() : std::string(value);
  const std::vector<std::string>& names = named_choices();
  for (size_t start = 0; start < forced.size();) {  // (a name no entry knows: said, and ignored)
    const size_t end = std::min(forced.find(',', start), forced.size());
    std::string name = forced.substr(start, end - start);
    const std::string choice = name.rfind("no_", 0) == 0 ? name.substr(3) : name;
    if (!choice.empty() && std::find(names.begin(), names.end(), choice) == names.end()) {
      log_message(
          LogLevel::kWarning,
          format("ACLNN_CONVBWD_VARIANTS: %s names no choice (docs/kernels.md lists them); ignored", name.c_str()));
    }
    start = end + 1;
  }
  return forced;
}

}  // namespace aclnn_cpu
