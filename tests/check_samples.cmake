# Fails unless the doc samples in DIR are byte-for-byte the official ones (SHA-256 recorded here).
set(expected
  "convolution_backward_sample.cpp=27a7fd9adadd3e5ac30d1d164041f6698fdefb7eee308ab098b9112c44181f5c"
  "conv_tbc_backward_sample.cpp=e83a8010c32c705f2711de0bb924a95a13c35ebea5dabb3db87d535a4bb2193a"
  # (ops-nn's pages conv/deformable_conv2d/docs/aclnnDeformableConv2d.md and
  # conv/convolution_backward/docs/aclnnDeformableConv2dBackward.md, their code blocks)
  "deformable_conv2d_sample.cpp=63c4254ce9108ce48c0b62bdbf4b747547468bd0c7c7dda2ce5b495d49d4e040"
  "deformable_conv2d_backward_sample.cpp=2b0f2542c9234d73e3d8ae0f0e424271b75338eeb2cc753c651f0795eaf6d318"
  # (ops-nn's page conv/convolution_forward/docs/aclnnQuantConvolution.md, its code block)
  "quant_convolution_sample.cpp=8d305c8ce6d638e47b0b8b251b29d3f2f9298070d9121c99dab4fdb11d853f6e")
foreach(entry IN LISTS expected)
  string(REPLACE "=" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 want)
  file(SHA256 "${DIR}/${name}" got)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${DIR}/${name} differs from the official doc sample (sha256 ${got}, expected ${want})")
  endif()
  message(STATUS "${name}: identical to the official doc sample")
endforeach()
