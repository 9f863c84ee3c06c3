#!/usr/bin/python3
"""torchvision's CPU deform_conv2d (with a mask) on the layers of tests/benchmark/dcn_shapes.txt, FLOAT,
forward and autograd backward (gradInput, gradWeight, the offsets', the mask's, the bias's), best of the
rounds, at the given thread count: the numbers tests/benchmark/dcn_bench prints ours beside.

    /usr/bin/python3 scripts/dcn_torchvision.py [threads=2] [rounds=2] [filter]
(Debian python3-torch, python3-torchvision.)
"""
import os
import sys
import time

import torch
import torchvision.ops


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    name_filter = sys.argv[3] if len(sys.argv) > 3 else ""
    torch.set_num_threads(threads)
    shapes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "benchmark", "dcn_shapes.txt")
    print("%-16s %10s %10s" % ("layer", "tv fwd ms", "tv bwd ms"))
    for line in open(shapes):
        if not line.strip() or line.startswith("#"):
            continue
        name, n, cin, cout, h, w, dg = line.split()
        if name_filter not in name:
            continue
        n, cin, cout, h, w, dg = (int(v) for v in (n, cin, cout, h, w, dg))
        x = torch.randn(n, cin, h, w, requires_grad=True)
        weight = (0.1 * torch.randn(cout, cin, 3, 3)).requires_grad_(True)
        offset = torch.randn(n, 2 * dg * 9, h, w, requires_grad=True)
        mask = torch.rand(n, dg * 9, h, w, requires_grad=True)
        bias = torch.randn(cout, requires_grad=True)
        grad = torch.randn(n, cout, h, w)
        best_fwd = best_bwd = float("inf")
        for _ in range(rounds):
            start = time.perf_counter()
            out = torchvision.ops.deform_conv2d(x, offset, weight, bias, padding=1, mask=mask)
            best_fwd = min(best_fwd, time.perf_counter() - start)
            start = time.perf_counter()
            out.backward(grad)
            best_bwd = min(best_bwd, time.perf_counter() - start)
        print("%-16s %10.1f %10.1f" % (name, 1e3 * best_fwd, 1e3 * best_bwd))


if __name__ == "__main__":
    main()
