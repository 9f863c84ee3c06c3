#!/usr/bin/python3
"""The deformable convolution's numerics: the error of each of our fp32 results against a float64 truth,
beside torchvision's fp32 CPU error on the same inputs. Needs torchvision (Debian python3-torch,
python3-torchvision); never part of CI.

    /usr/bin/python3 scripts/dcn_numerics.py [build-dir = build/release] [batch = 2] [filter]

Runs <build-dir>/tests/benchmark/dcn_dump on tests/benchmark/dcn_shapes.txt (3x3, stride 1, padding 1),
then prints one markdown table: per layer, for the forward output (y, with the bias), gradInput, gradWeight,
the shifts' gradient (dx and dy), the mask's and gradBias, the error max|g - truth| / max|truth| of ours and
of torchvision fp32, and their ratio. docs/performance.md keeps the latest table.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torchvision.ops

from numerics_bench import error  # (scripts/: max|g - truth| / max|truth|)

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = os.path.join(HERE, "..", "tests", "benchmark", "dcn_shapes.txt")


def read_layers(path):
    layers = []
    for line in open(path):
        words = line.split("#")[0].split()
        if len(words) == 7:
            layers.append(dict(name=words[0], **dict(zip(("n", "cin", "cout", "h", "w", "dg"), map(int, words[1:])))))
    return layers


def results(x, weight, offset, bias, grad_out, dg):
    """(y, gradInput, gradWeight, gradOffset in CANN's layout, gradBias) by torchvision in x's dtype. CANN's
    offset holds the dx block, the dy block and the mask block; torchvision's channel 2j is dy_j, 2j + 1 dx_j."""
    points = 9 * dg
    dx, dy, mask = offset[:, :points], offset[:, points:2 * points], offset[:, 2 * points:]
    n, _, h, w = dx.shape
    shifts = torch.stack([dy, dx], dim=2).reshape(n, 2 * points, h, w).requires_grad_()
    mask = mask.clone().requires_grad_()
    x, weight, bias = (t.clone().requires_grad_() for t in (x, weight, bias))
    y = torchvision.ops.deform_conv2d(x, shifts, weight, bias, padding=1, mask=mask)
    y.backward(grad_out)
    g = shifts.grad.reshape(n, points, 2, h, w)
    grad_offset = torch.cat([g[:, :, 1], g[:, :, 0], mask.grad], dim=1)
    return y.detach(), x.grad, weight.grad, grad_offset, bias.grad


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    batch = sys.argv[2] if len(sys.argv) > 2 else "2"
    filt = sys.argv[3] if len(sys.argv) > 3 else ""
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    dump = os.path.join(build, "tests", "benchmark", "dcn_dump")
    names = ("y", "dx", "dw", "d shifts", "d mask", "db")
    print("| layer | " + " | ".join("%s ours | %s tv | ratio" % (v, v) for v in names) + " |")
    print("|---|" + "---:|" * (3 * len(names)))
    worst = 0.0
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([dump, SHAPES, out, batch, filt], check=True, stdout=subprocess.DEVNULL)
        for l in read_layers(SHAPES):
            if int(batch) > 0:
                l["n"] = int(batch)
            file = os.path.join(out, l["name"] + ".f32")
            if not os.path.exists(file):
                continue
            n, cin, cout, h, w, points = l["n"], l["cin"], l["cout"], l["h"], l["w"], 9 * l["dg"]
            shapes = ([n, cin, h, w], [cout, cin, 3, 3], [n, 3 * points, h, w], [cout], [n, cout, h, w],
                      [n, cout, h, w], [n, cin, h, w], [cout, cin, 3, 3], [n, 3 * points, h, w], [cout])
            data = np.fromfile(file, dtype="<f4")
            parts, at = [], 0
            for shape in shapes:
                size = int(np.prod(shape))
                parts.append(torch.from_numpy(data[at:at + size].copy()).reshape(shape))
                at += size
            inputs, ours = parts[:5], parts[5:]
            truth = results(*[t.double() for t in inputs], l["dg"])
            anchor = results(*inputs, l["dg"])
            split = lambda r: [r[0], r[1], r[2], r[3][:, :2 * points], r[3][:, 2 * points:], r[4]]
            cells = []
            for mine, theirs, exact in zip(split(ours), split(anchor), split(truth)):
                e_ours, e_tv = error(mine, exact), error(theirs, exact)
                ratio = e_ours / e_tv if e_tv > 0 else (0.0 if e_ours == 0 else float("inf"))
                worst = max(worst, ratio)
                cells += ["%.2g" % e_ours, "%.2g" % e_tv, "%.2f" % ratio]
            print("| %s | %s |" % (l["name"], " | ".join(cells)), flush=True)
    print("\nlargest ratio: %.2f" % worst)


if __name__ == "__main__":
    main()
