// The reference implementations (conv_ref.cpp) serve twice: as the last entry of every
// implementation list, and as the non-finite repair of the other entries' results.
//
// Every other entry multiplies padding: its sources are staged or unrolled with zeros where the
// convolution reads outside its input, and 0 x Inf is NaN where the gradient has no such term at
// all. Which results that reaches is known from cheap tests:
//   gradInput:  a zero of the padded source times a weight; only an Inf or NaN weight turns it into
//               NaN, and it then reaches every entry of the channels that weight feeds. So the
//               weights are tested (a pass over W, or the flags of a step that tested them as it packed
//               them: PlanBuilder::weights_tested), and those channels recomputed.
//   gradWeight: a zero of the padded source times a dY value; only an Inf or NaN in dY channel co
//               turns it into NaN, and dY channel co meets every entry of gradWeight row co: that
//               row is then not all finite. So the rows of the result are tested (a pass over dW;
//               over dY where gradWeight's view overlaps itself and cannot be read back), and those
//               rows recomputed. (This also recomputes a row where float partial sums overflowed.)
// The repair computes the chosen channels or rows as the reference does, into the user's view,
// so the Inf/NaN pattern is the reference's: padding is absent, not zero.
#pragma once

#include <memory>

#include "kernels/core/conv_problem.h"
#include "kernels/core/plan.h"

namespace aclnn_cpu {

// Plans the repair of `pass`'s result (gradInput by kForward or kBackwardData, or gradWeight) after
// another entry computed it: books its scratch in the step area (the plan runs it after every step).
std::unique_ptr<ConvStep> plan_non_finite_repair(ConvPass pass, const ConvProblem& problem, PlanBuilder& builder);

}  // namespace aclnn_cpu
