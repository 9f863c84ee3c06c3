#include "conv/tensor_views.h"

#include "meta/meta_objects.h"

namespace aclnn_cpu {

View5 make_view5(const aclTensor& tensor, const int (&dim_of)[5]) {
  View5 view;
  view.data = tensor.data;
  view.dtype = tensor.dtype;
  view.offset = tensor.offset;
  int placed = 0;
  for (int j = 0; j < 5; ++j) {
    if (dim_of[j] < 0) continue;
    view.shape[j] = tensor.view_shape[static_cast<size_t>(dim_of[j])];
    view.stride[j] = tensor.strides[static_cast<size_t>(dim_of[j])];
  }
  for (int user_dim = 0; user_dim < 5; ++user_dim) {  // the user's dims, outermost first
    for (int j = 0; j < 5; ++j) {
      if (dim_of[j] == user_dim) view.order[placed++] = j;
    }
  }
  for (int j = 0; j < 5; ++j) {  // then the unit dims
    if (dim_of[j] < 0) view.order[placed++] = j;
  }
  return view;
}

View5 make_ncs_view5(const aclTensor& tensor) {
  switch (tensor.view_shape.size()) {
    case 1: return make_view5(tensor, {-1, 0, -1, -1, -1});
    case 3: return make_view5(tensor, {0, 1, -1, -1, 2});
    case 4: return make_view5(tensor, {0, 1, -1, 2, 3});
    default: return make_view5(tensor, {0, 1, 2, 3, 4});
  }
}

View5 tbc_as_ncl(const aclTensor& tensor) { return make_view5(tensor, {1, 2, -1, -1, 0}); }
View5 kio_as_oik(const aclTensor& tensor) { return make_view5(tensor, {2, 1, -1, -1, 0}); }

}  // namespace aclnn_cpu
