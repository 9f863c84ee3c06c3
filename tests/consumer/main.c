/* Uses the runtime through the installed headers: init, device, stream, memory round trip. */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution_backward.h"

int main(void) {
  float host[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float back[8] = {0};
  void* dev = NULL;
  aclrtStream stream = NULL;
  if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS || aclrtCreateStream(&stream) != ACL_SUCCESS)
    return 1;
  if (aclrtMalloc(&dev, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 2;
  if (aclrtMemcpyAsync(dev, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE, stream) != ACL_SUCCESS) return 3;
  if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) return 4;
  if (aclrtMemcpy(back, sizeof back, dev, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) return 5;
  if (memcmp(host, back, sizeof host) != 0) return 6;
  aclrtFree(dev);
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  printf("consumer ok\n");
  return 0;
}
