#!/usr/bin/env python3
"""A Python harness as CANN users write them: the runtime (libascendcl.so), the tensor API
(libnnopbase.so) and the operators (libopapi.so) loaded one by one with ctypes from a toolkit's
lib64, then one aclnnConvolutionBackward run through them and checked against plain loops.

usage: ctypes_backward.py <toolkit lib64 directory>
"""
import ctypes
import os
import sys
from ctypes import POINTER, byref, c_bool, c_int, c_int8, c_int64, c_size_t, c_uint64, c_void_p

ACL_FLOAT, ACL_FORMAT_NCHW, ACL_FORMAT_ND = 0, 0, 2
HOST_TO_DEVICE, DEVICE_TO_HOST = 1, 2


def load(lib64, name):
    return ctypes.CDLL(os.path.join(lib64, name), mode=ctypes.RTLD_GLOBAL)


def check(status, what):
    if status != 0:
        raise SystemExit(f"FAIL: {what} returned {status}")


def main():
    lib64 = sys.argv[1]
    ascendcl = load(lib64, "libascendcl.so")
    nnopbase = load(lib64, "libnnopbase.so")
    opapi = load(lib64, "libopapi.so")
    # One library behind the three names: one runtime state.
    address = lambda lib, name: ctypes.cast(getattr(lib, name), c_void_p).value
    if not address(ascendcl, "aclrtMalloc") == address(nnopbase, "aclrtMalloc") == address(opapi, "aclrtMalloc"):
        raise SystemExit("FAIL: the three libraries are not one library")

    for name in ("aclCreateTensor", "aclCreateIntArray", "aclCreateBoolArray"):
        getattr(nnopbase, name).restype = c_void_p
    nnopbase.aclCreateTensor.argtypes = [POINTER(c_int64), c_uint64, c_int, POINTER(c_int64), c_int64, c_int,
                                         POINTER(c_int64), c_uint64, c_void_p]
    nnopbase.aclCreateIntArray.argtypes = [POINTER(c_int64), c_uint64]
    nnopbase.aclCreateBoolArray.argtypes = [POINTER(c_bool), c_uint64]
    nnopbase.aclDestroyTensor.argtypes = [c_void_p]
    ascendcl.aclrtMalloc.argtypes = [POINTER(c_void_p), c_size_t, c_int]
    ascendcl.aclrtMemcpy.argtypes = [c_void_p, c_size_t, c_void_p, c_size_t, c_int]
    ascendcl.aclrtFree.argtypes = [c_void_p]
    ascendcl.aclrtSynchronizeStream.argtypes = [c_void_p]
    ascendcl.aclrtDestroyStream.argtypes = [c_void_p]
    opapi.aclnnConvolutionBackwardGetWorkspaceSize.argtypes = [
        c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_bool, c_void_p, c_int, c_void_p,
        c_int8, c_void_p, c_void_p, c_void_p, POINTER(c_uint64), POINTER(c_void_p)]
    opapi.aclnnConvolutionBackward.argtypes = [c_void_p, c_uint64, c_void_p, c_void_p]

    check(ascendcl.aclInit(None), "aclInit")
    check(ascendcl.aclrtSetDevice(0), "aclrtSetDevice")
    stream = c_void_p()
    check(ascendcl.aclrtCreateStream(byref(stream)), "aclrtCreateStream")

    # input (1, 2, 5, 5), weight (3, 2, 3, 3), stride 1, padding 1: gradOutput (1, 3, 5, 5).
    n, cin, cout, size, k = 1, 2, 3, 5, 3
    x = [((i * 7) % 11 - 5) / 8.0 for i in range(n * cin * size * size)]
    w = [((i * 5) % 13 - 6) / 8.0 for i in range(cout * cin * k * k)]
    dy = [((i * 3) % 7 - 3) / 8.0 for i in range(n * cout * size * size)]
    buffers = []

    def tensor(values, shape, fmt=ACL_FORMAT_NCHW):
        nbytes = 4 * max(1, len(values))
        device = c_void_p()
        check(ascendcl.aclrtMalloc(byref(device), nbytes, 0), "aclrtMalloc")
        host = (ctypes.c_float * len(values))(*values)
        check(ascendcl.aclrtMemcpy(device, nbytes, host, nbytes, HOST_TO_DEVICE), "aclrtMemcpy")
        strides = [1] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            strides[i] = strides[i + 1] * shape[i + 1]
        dims = (c_int64 * len(shape))(*shape)
        handle = nnopbase.aclCreateTensor(dims, len(shape), ACL_FLOAT, (c_int64 * len(shape))(*strides), 0, fmt,
                                          dims, len(shape), device)
        buffers.append(device)
        return handle, device, len(values)

    def int_array(values):
        return nnopbase.aclCreateIntArray((c_int64 * len(values))(*values), len(values))

    grad_output = tensor(dy, [n, cout, size, size])
    inp = tensor(x, [n, cin, size, size])
    weight = tensor(w, [cout, cin, k, k])
    grad_input = tensor([0.0] * len(x), [n, cin, size, size])
    grad_weight = tensor([0.0] * len(w), [cout, cin, k, k])
    grad_bias = tensor([0.0] * cout, [cout], ACL_FORMAT_ND)
    mask = nnopbase.aclCreateBoolArray((c_bool * 3)(True, True, True), 3)
    workspace_size, executor = c_uint64(0), c_void_p()
    check(opapi.aclnnConvolutionBackwardGetWorkspaceSize(
        grad_output[0], inp[0], weight[0], int_array([cout]), int_array([1, 1]), int_array([1, 1]),
        int_array([1, 1]), False, int_array([0, 0]), 1, mask, 0, grad_input[0], grad_weight[0], grad_bias[0],
        byref(workspace_size), byref(executor)), "aclnnConvolutionBackwardGetWorkspaceSize")
    workspace = c_void_p()
    if workspace_size.value > 0:
        check(ascendcl.aclrtMalloc(byref(workspace), workspace_size.value, 0), "aclrtMalloc(workspace)")
    check(opapi.aclnnConvolutionBackward(workspace, workspace_size, executor, stream), "aclnnConvolutionBackward")
    check(ascendcl.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")

    def read(t):
        host = (ctypes.c_float * t[2])()
        check(ascendcl.aclrtMemcpy(host, 4 * t[2], t[1], 4 * t[2], DEVICE_TO_HOST), "aclrtMemcpy")
        return list(host)

    # Plain loops: y[co, oh, ow] = sum x[ci, oh + kh - 1, ow + kw - 1] * w[co, ci, kh, kw].
    gx, gw, gb = [0.0] * len(x), [0.0] * len(w), [0.0] * cout
    for co in range(cout):
        for oh in range(size):
            for ow in range(size):
                g = dy[(co * size + oh) * size + ow]
                gb[co] += g
                for ci in range(cin):
                    for kh in range(k):
                        for kw in range(k):
                            ih, iw = oh + kh - 1, ow + kw - 1
                            if 0 <= ih < size and 0 <= iw < size:
                                xi, wi = (ci * size + ih) * size + iw, ((co * cin + ci) * k + kh) * k + kw
                                gx[xi] += g * w[wi]
                                gw[wi] += g * x[xi]
    for name, got, want in (("gradInput", read(grad_input), gx), ("gradWeight", read(grad_weight), gw),
                            ("gradBias", read(grad_bias), gb)):
        worst = max(abs(a - b) for a, b in zip(got, want))
        if worst > 1e-5:
            raise SystemExit(f"FAIL: {name} differs by {worst}")
        print(f"ok: {name} ({len(got)} values)")

    for device in buffers + ([workspace] if workspace.value else []):
        ascendcl.aclrtFree(device)
    check(ascendcl.aclrtDestroyStream(stream), "aclrtDestroyStream")
    check(ascendcl.aclrtResetDevice(0), "aclrtResetDevice")
    check(ascendcl.aclFinalize(), "aclFinalize")


if __name__ == "__main__":
    main()
