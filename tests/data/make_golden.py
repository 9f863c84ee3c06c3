#!/usr/bin/python3
"""Generates the PyTorch golden values of tests/data/*.txt (run once; CI never needs torch).

    /usr/bin/python3 tests/data/make_golden.py   (Debian package python3-torch)

Inputs follow the formula of tests/support/device_tensor.cpp `pattern`: element i of a tensor
with seed s is ((i*37 + s*11) % 19 - 9) / 8 in row-major order; seeds: input 1, weight 2,
gradOutput (self) 3. Gradients are computed in float64 by torch.ops.aten.convolution_backward
and by autograd through torch.conv_tbc; forward results (forward_golden.txt) by torch.nn.functional's
convolutions (asymmetric padding as an explicit pad, or a crop of the transposed output) and torch.conv_tbc,
bias with seed 4.
"""
import os

import torch


def pattern(shape, seed):
    count = 1
    for s in shape:
        count *= s
    values = [((i * 37 + seed * 11) % 19 - 9) / 8.0 for i in range(count)]
    return torch.tensor(values, dtype=torch.float64).reshape(shape)


def out_size(n, k, s, p, d, transposed, op):
    span = d * (k - 1) + 1
    if transposed:
        return (n - 1) * s - 2 * p + span + op
    return (n + 2 * p - span) // s + 1


# name, N, Cin, Cout, input spatial, kernel, stride, padding, dilation, groups, transposed, outputPadding
CONV_CASES = [
    ("conv1d_basic", 2, 3, 4, [9], [3], [1], [1], [1], 1, False, [0]),
    ("conv1d_stride_gt_kernel", 1, 2, 3, [11], [2], [3], [0], [1], 1, False, [0]),
    ("conv1d_groups_dilation", 2, 4, 6, [10], [3], [2], [2], [2], 2, False, [0]),
    ("conv2d_basic", 2, 3, 5, [6, 7], [3, 3], [1, 1], [1, 1], [1, 1], 1, False, [0, 0]),
    ("conv2d_stride_dilation", 1, 4, 4, [9, 8], [3, 2], [2, 3], [1, 0], [2, 1], 2, False, [0, 0]),
    ("conv2d_depthwise", 2, 4, 4, [5, 6], [3, 3], [1, 2], [1, 1], [1, 1], 4, False, [0, 0]),
    ("conv2d_channel_multiplier", 1, 3, 6, [5, 5], [2, 3], [1, 1], [0, 1], [1, 1], 3, False, [0, 0]),
    ("conv3d_basic", 1, 2, 3, [4, 5, 4], [2, 3, 2], [1, 2, 1], [1, 1, 0], [1, 1, 2], 1, False, [0, 0, 0]),
    ("conv3d_groups", 2, 4, 2, [3, 4, 5], [1, 2, 3], [2, 1, 1], [0, 1, 1], [1, 2, 1], 2, False, [0, 0, 0]),
    ("tconv1d_output_padding", 2, 3, 4, [5], [3], [2], [1], [1], 1, True, [1]),
    ("tconv2d_groups", 1, 4, 6, [4, 3], [3, 2], [2, 1], [1, 0], [1, 2], 2, True, [1, 0]),
    ("tconv2d_dilation_stride", 2, 2, 3, [3, 4], [2, 3], [3, 2], [0, 1], [2, 1], 1, True, [2, 1]),
    ("tconv3d_basic", 1, 2, 4, [2, 3, 3], [2, 2, 3], [2, 1, 2], [0, 1, 1], [1, 1, 1], 2, True, [1, 0, 1]),
]

# name, T, B, Cin, Cout, K, pad
TBC_CASES = [
    ("tbc_k1_pad0", 5, 2, 3, 4, 1, 0),
    ("tbc_k2_pad1", 6, 1, 2, 3, 2, 1),
    ("tbc_k3_pad1", 7, 3, 4, 2, 3, 1),
    ("tbc_k4_pad2", 4, 2, 3, 3, 4, 2),
    ("tbc_k5_pad0", 9, 2, 2, 5, 5, 0),
    ("tbc_k7_pad3", 6, 2, 3, 2, 7, 3),
]


# The forward operators (tests/test_conv_forward.cpp): op, N, Cin, Cout, input spatial, kernel, stride,
# leading padding, trailing padding, dilation, groups, outputPadding, bias. op is conv (aclnnConvolution,
# transposed = False), tconv (transposed), depthwise (aclnnConvDepthwise2d: groups = Cin).
FORWARD_CASES = [
    ("conv", 2, 3, 4, [9], [3], [1], [1], [1], [1], 1, [0], True),
    ("conv", 1, 4, 6, [12], [3], [2], [2], [1], [2], 2, [0], False),
    ("conv", 2, 3, 5, [6, 7], [3, 3], [1, 1], [1, 1], [1, 1], [1, 1], 1, [0, 0], True),
    ("conv", 1, 4, 4, [9, 8], [3, 2], [2, 3], [0, 2], [1, 0], [2, 1], 2, [0, 0], True),
    ("conv", 2, 2, 3, [4, 5, 4], [2, 3, 2], [1, 2, 1], [1, 1, 0], [1, 1, 0], [1, 1, 2], 1, [0, 0, 0], True),
    ("tconv", 2, 3, 4, [5], [3], [2], [1], [1], [1], 1, [1], True),
    ("tconv", 1, 4, 6, [4, 3], [3, 2], [2, 1], [1, 0], [1, 0], [1, 2], 2, [1, 0], False),
    ("tconv", 1, 2, 3, [3, 4], [3, 2], [2, 2], [1, 0], [0, 1], [1, 1], 1, [0, 1], True),
    ("tconv", 1, 2, 2, [3, 3], [2, 2], [1, 1], [0, 0], [0, 0], [3, 2], 1, [2, 1], True),
    ("tconv", 1, 2, 4, [2, 3, 3], [2, 2, 3], [2, 1, 2], [0, 1, 1], [0, 1, 1], [1, 1, 1], 2, [1, 0, 1], True),
    ("depthwise", 2, 3, 6, [7, 6], [3, 3], [1, 2], [1, 1], [1, 1], [1, 1], 3, [0, 0], True),
    ("depthwise", 1, 4, 4, [8, 9], [5, 3], [2, 1], [2, 0], [2, 0], [1, 2], 4, [0, 0], False),
]

# name, T, B, Cin, Cout, K, pad (aclnnConvTbc)
TBC_FORWARD_CASES = [
    ("tbc_k3_pad1", 7, 3, 4, 2, 3, 1),
    ("tbc_k5_pad2", 9, 2, 3, 5, 5, 2),
]


def values_line(key, tensor):
    return key + " " + " ".join(repr(float(v)) for v in tensor.flatten().tolist())


def conv_block(case):
    name, n, cin, cout, size, k, s, p, d, g, tr, op = case
    out = [out_size(size[i], k[i], s[i], p[i], d[i], tr, op[i]) for i in range(len(size))]
    wshape = [cin, cout // g] + k if tr else [cout, cin // g] + k
    x = pattern([n, cin] + size, 1)
    w = pattern(wshape, 2)
    gy = pattern([n, cout] + out, 3)
    gx, gw, gb = torch.ops.aten.convolution_backward(gy, x, w, [cout], s, p, d, tr, op, g, [True, True, True])
    lines = [
        "case " + name,
        "spatial %d" % len(size),
        "batch %d" % n,
        "in_channels %d" % cin,
        "out_channels %d" % cout,
        "groups %d" % g,
        "transposed %d" % int(tr),
    ]
    for key, vals in (("input_size", size), ("kernel", k), ("stride", s), ("padding", p), ("dilation", d),
                      ("output_padding", op)):
        lines.append(key + " " + " ".join(str(v) for v in vals))
    lines += [values_line("grad_input", gx), values_line("grad_weight", gw), values_line("grad_bias", gb), "end"]
    return lines


def tbc_block(case):
    name, t, b, cin, cout, k, pad = case
    x = pattern([t, b, cin], 1).requires_grad_()
    w = pattern([k, cin, cout], 2).requires_grad_()
    bias = pattern([cout], 4).requires_grad_()
    y = torch.conv_tbc(x, w, bias, pad)
    gy = pattern(list(y.shape), 3)
    y.backward(gy)
    lines = ["case " + name, "tbc %d %d %d %d %d %d" % (t, b, cin, cout, k, pad)]
    lines += [values_line("grad_input", x.grad), values_line("grad_weight", w.grad),
              values_line("grad_bias", bias.grad), "end"]
    return lines


def forward_block(index, case):
    op, n, cin, cout, size, k, s, lo, hi, d, g, out_pad, with_bias = case
    dims = len(size)
    x = pattern([n, cin] + size, 1)
    w = pattern(([cin, cout // g] if op == "tconv" else [cout, cin // g]) + k, 2)
    bias = pattern([cout], 4) if with_bias else None
    functional = torch.nn.functional
    if op == "tconv":
        transpose = [functional.conv_transpose1d, functional.conv_transpose2d, functional.conv_transpose3d][dims - 1]
        y = transpose(x, w, bias, stride=s, padding=0, output_padding=out_pad, groups=g, dilation=d)
        for a in range(dims):  # the padding crops the full output
            y = y.narrow(2 + a, lo[a], y.shape[2 + a] - lo[a] - hi[a])
    else:
        pads = []
        for a in reversed(range(dims)):
            pads += [lo[a], hi[a]]
        conv = [functional.conv1d, functional.conv2d, functional.conv3d][dims - 1]
        y = conv(functional.pad(x, pads), w, bias, stride=s, padding=0, dilation=d, groups=g)
    lines = [
        "case %s_%d" % (op, index),
        "spatial %d" % dims,
        "batch %d" % n,
        "in_channels %d" % cin,
        "out_channels %d" % cout,
        "groups %d" % g,
        "transposed %d" % int(op == "tconv"),
    ]
    for key, vals in (("input_size", size), ("kernel", k), ("stride", s), ("pad_lo", lo), ("pad_hi", hi),
                      ("dilation", d), ("output_padding", out_pad)):
        lines.append(key + " " + " ".join(str(v) for v in vals))
    lines += [values_line("input", x), values_line("weight", w)]
    if with_bias:
        lines.append(values_line("bias", bias))
    return lines + [values_line("output", y), "end"]


def tbc_forward_block(case):
    name, t, b, cin, cout, k, pad = case
    x, w, bias = pattern([t, b, cin], 1), pattern([k, cin, cout], 2), pattern([cout], 4)
    lines = ["case " + name]
    for key, value in (("time", t), ("batch", b), ("in_channels", cin), ("out_channels", cout), ("kernel", k),
                       ("pad", pad)):
        lines.append("%s %d" % (key, value))
    lines += [values_line("input", x), values_line("weight", w), values_line("bias", bias),
              values_line("output", torch.conv_tbc(x, w, bias, pad)), "end"]
    return lines


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    header = ["# Generated by make_golden.py with torch %s (float64). Do not edit." % torch.__version__]
    with open(os.path.join(here, "conv_golden.txt"), "w") as f:
        f.write("\n".join(header + [line for c in CONV_CASES for line in conv_block(c)]) + "\n")
    with open(os.path.join(here, "tbc_golden.txt"), "w") as f:
        f.write("\n".join(header + [line for c in TBC_CASES for line in tbc_block(c)]) + "\n")
    forward = [line for i, c in enumerate(FORWARD_CASES) for line in forward_block(i, c)]
    forward += [line for c in TBC_FORWARD_CASES for line in tbc_forward_block(c)]
    with open(os.path.join(here, "forward_golden.txt"), "w") as f:
        f.write("\n".join(header + forward) + "\n")


if __name__ == "__main__":
    main()
