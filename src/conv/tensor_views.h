// Canonical 5-D views (N, C, D, H, W) of user tensors.
#pragma once

#include "kernels/core/conv_problem.h"

struct aclTensor;

namespace aclnn_cpu {

// `dim_of[j]` names the tensor dim that plays canonical dim j, or -1 for a unit dim.
// Example: NCL -> {0, 1, -1, -1, 2}; TBC input (T, B, C) -> {1, 2, -1, -1, 0}.
View5 make_view5(const aclTensor& tensor, const int (&dim_of)[5]);

// N-C-spatial tensors of 3, 4 or 5 dims, and a 1-D tensor as channels only.
View5 make_ncs_view5(const aclTensor& tensor);

// ConvTbc's tensors: (T, B, C) seen as NCL (N = B, C, L = T), and the weight (K, Cin, Cout) as (Cout, Cin, K).
View5 tbc_as_ncl(const aclTensor& tensor);
View5 kio_as_oik(const aclTensor& tensor);

}  // namespace aclnn_cpu
