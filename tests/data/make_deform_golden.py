#!/usr/bin/python3
"""Generates tests/data/deform_golden.txt: torchvision's deform_conv2d in float64 (run once; CI never
needs torch).

    /usr/bin/python3 tests/data/make_deform_golden.py   (Debian python3-torch, python3-torchvision)

Every input is written out in full, in CANN's layouts, with values exact in FLOAT16 and BF16: x and
weight multiples of 1/8 in [-9/8, 9/8], the offsets odd multiples of 1/32 (never an integer sampling
point, where the gradient of the bilinear weights jumps) in [-3, 3], the mask multiples of 1/8 in
[0, 1], bias and gradOutput multiples of 1/8. CANN's offset [N, 3*dg*K, outH, outW] holds the dx block,
then the dy block, then the mask block; torchvision takes offset [N, 2*dg*K, ...] with (dy, dx)
interleaved and the mask apart: torchvision's channel 2j is our dy block's j, 2j + 1 our dx block's j.

Golden results: out (with bias); deformOut, as torchvision's deform_conv2d with a weight that picks one
input channel and one kernel point per output channel and stride 1 in the columns' layout; and the
float64 autograd gradients of out (gradOutput given) with respect to x, weight, the offsets, the mask
and bias, gradOffset mapped back to CANN's layout. gradWeight is also what CANN computes it from:
gradOutput correlated with deformOut.
"""
import os
import random

import torch
import torchvision.ops

# name, N, inC, outC, inH, inW, KH, KW, stride (h, w), padding (top, bottom, left, right), dilation (h, w),
# groups, deformableGroups
CASES = [
    ("basic_3x3", 1, 2, 3, 5, 6, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1, 1),
    ("groups_and_deformable_groups", 2, 4, 6, 6, 5, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 2, 2),
    ("stride_dilation_rect_kernel", 1, 3, 2, 9, 8, 2, 3, (2, 1), (1, 1, 2, 2), (2, 1), 1, 3),
    ("asymmetric_padding", 2, 2, 2, 4, 7, 3, 2, (1, 2), (2, 0, 1, 3), (1, 2), 2, 1),
    ("kernel_1x1_strided", 1, 4, 4, 5, 5, 1, 1, (2, 2), (0, 0, 0, 0), (1, 1), 4, 2),
    ("doc_sample_geometry", 1, 6, 4, 2, 4, 5, 5, (1, 1), (2, 2, 2, 2), (1, 1), 2, 1),
]


def eighths(rng, count, low=-9, high=9):
    return [rng.randint(low, high) / 8.0 for _ in range(count)]


def tensor(values, shape):
    return torch.tensor(values, dtype=torch.float64).reshape(shape)


def out_size(size, pad_lo, pad_hi, kernel, stride, dilation):
    return (size + pad_lo + pad_hi - (kernel - 1) * dilation - 1) // stride + 1


def deform(x, offset_cann, weight, bias, stride, padding, dilation, dg, kernel):
    """torchvision's deform_conv2d of CANN's arguments. torchvision pads both sides alike: it is called with
    the larger padding of each axis, the sampling points moved back by the difference (an integer added to
    the shifts) and its output cropped to CANN's size, so that its borders stay the image's own, as CANN's
    do (but for the offset gradient on the line h or w = -1: docs/deformable_conv2d.md)."""
    top, bottom, left, right = padding
    ph, pw = max(top, bottom), max(left, right)
    k = kernel[0] * kernel[1]
    dx, dy, mask = offset_cann[:, : dg * k], offset_cann[:, dg * k : 2 * dg * k], offset_cann[:, 2 * dg * k :]
    n, _, oh, ow = dx.shape
    full_h = out_size(x.shape[2], ph, ph, kernel[0], stride[0], dilation[0])
    full_w = out_size(x.shape[3], pw, pw, kernel[1], stride[1], dilation[1])
    offset_tv = torch.stack([dy + (ph - top), dx + (pw - left)], dim=2).reshape(n, 2 * dg * k, oh, ow)
    grow = (0, full_w - ow, 0, full_h - oh)
    out = torchvision.ops.deform_conv2d(x, torch.nn.functional.pad(offset_tv, grow), weight, bias, stride=stride,
                                        padding=(ph, pw), dilation=dilation,
                                        mask=torch.nn.functional.pad(mask, grow))
    return out[:, :, :oh, :ow]


def columns(x, offset_cann, in_channels, stride, padding, dilation, dg, kernel):
    """deformOut [N, inC, outH*KH, outW*KW]: one torchvision output channel per (c, kh, kw)."""
    kh, kw = kernel
    picker = torch.zeros(in_channels * kh * kw, in_channels, kh, kw, dtype=torch.float64)
    for c in range(in_channels):
        for i in range(kh):
            for j in range(kw):
                picker[(c * kh + i) * kw + j, c, i, j] = 1.0
    picked = deform(x, offset_cann, picker, None, stride, padding, dilation, dg, kernel)
    n, _, oh, ow = picked.shape
    picked = picked.reshape(n, in_channels, kh, kw, oh, ow).permute(0, 1, 4, 2, 5, 3)
    return picked.reshape(n, in_channels, oh * kh, ow * kw)


def flat(t):
    return " ".join(repr(float(v)) for v in t.detach().reshape(-1).tolist())


def doc_sample_case():
    """The doc samples' call (x {1,6,2,4}, weight {4,3,5,5}, every input 1, bias 0, padding 2, groups 2): their
    printed out, gradInput, gradWeight and gradBias."""
    x, weight = torch.ones(1, 6, 2, 4, dtype=torch.float64), torch.ones(4, 3, 5, 5, dtype=torch.float64)
    offset, grad_out = torch.ones(1, 75, 2, 4, dtype=torch.float64), torch.ones(1, 4, 2, 4, dtype=torch.float64)
    leaves = [t.clone().requires_grad_(True) for t in (x, weight, offset)]
    out = deform(leaves[0], leaves[2], leaves[1], torch.zeros(4, dtype=torch.float64), (1, 1), (2, 2, 2, 2), (1, 1),
                 1, (5, 5))
    out.backward(grad_out)
    # (the backward sample passes offsetOut all ones: gradWeight from it is gradOutput's sum per channel)
    return ["case doc_sample_ones", "out %s" % flat(out), "grad_input %s" % flat(leaves[0].grad),
            "grad_offset %s" % flat(leaves[2].grad)]


def main():
    rng = random.Random(20261203)
    lines = ["# Generated by make_deform_golden.py with torch %s, torchvision %s (float64). Do not edit."
             % (torch.__version__, torchvision.__version__)]
    for name, n, cin, cout, h, w, kh, kw, stride, padding, dilation, groups, dg in CASES:
        oh = out_size(h, padding[0], padding[1], kh, stride[0], dilation[0])
        ow = out_size(w, padding[2], padding[3], kw, stride[1], dilation[1])
        k = kh * kw
        x = tensor(eighths(rng, n * cin * h * w), (n, cin, h, w))
        weight = tensor(eighths(rng, cout * (cin // groups) * k), (cout, cin // groups, kh, kw))
        shifts = [(2 * rng.randint(-48, 47) + 1) / 32.0 for _ in range(n * 2 * dg * k * oh * ow)]
        masks = [rng.randint(0, 8) / 8.0 for _ in range(n * dg * k * oh * ow)]
        offset = torch.cat([tensor(shifts, (n, 2 * dg * k, oh, ow)), tensor(masks, (n, dg * k, oh, ow))], dim=1)
        bias = tensor(eighths(rng, cout), (cout,))
        grad_out = tensor(eighths(rng, n * cout * oh * ow), (n, cout, oh, ow))

        leaves = [t.clone().requires_grad_(True) for t in (x, weight, offset, bias)]
        out = deform(leaves[0], leaves[2], leaves[1], leaves[3], stride, padding, dilation, dg, (kh, kw))
        out.backward(grad_out)
        cols = columns(x, offset, cin, stride, padding, dilation, dg, (kh, kw))
        # gradWeight as CANN forms it, from deformOut (the same as autograd's, to rounding)
        grad_w_cols = torch.nn.grad.conv2d_weight(cols, weight.shape, grad_out, stride=(kh, kw), groups=groups)
        assert torch.allclose(grad_w_cols, leaves[1].grad, atol=1e-9)

        lines.append("case %s" % name)
        for key, value in (("batch", n), ("in_channels", cin), ("out_channels", cout), ("in_size", "%d %d" % (h, w)),
                           ("kernel", "%d %d" % (kh, kw)), ("stride", "%d %d" % stride),
                           ("padding", "%d %d %d %d" % padding), ("dilation", "%d %d" % dilation),
                           ("groups", groups), ("deformable_groups", dg), ("out_size", "%d %d" % (oh, ow))):
            lines.append("%s %s" % (key, value))
        for key, value in (("x", x), ("weight", weight), ("offset", offset), ("bias", bias),
                           ("grad_output", grad_out), ("out", out), ("deform_out", cols),
                           ("grad_input", leaves[0].grad), ("grad_weight", leaves[1].grad),
                           ("grad_offset", leaves[2].grad), ("grad_bias", leaves[3].grad)):
            lines.append("%s %s" % (key, flat(value)))
    lines += doc_sample_case()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deform_golden.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
