#!/usr/bin/python3
"""The numerics benchmark: the error of each of our fp32 gradients and forward outputs against a
float64 truth, beside PyTorch's fp32 CPU error (oneDNN inside) on the same inputs. Needs PyTorch
(Debian python3-torch); never part of CI.

    /usr/bin/python3 scripts/numerics_bench.py [build-dir = build/release] [batch = 2] [filter]

Runs <build-dir>/tests/benchmark/numerics_dump on the suite (tests/benchmark/shapes.txt) and the
long reductions (tests/benchmark/numerics_shapes.txt), then prints one markdown table: per layer, for
each gradient and the forward output (y: with the layer's bias), the products summed per output entry,
the error max|g - truth| / max|truth| of ours and of PyTorch fp32, and their ratio. docs/performance.md
keeps the latest table.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "tests", "benchmark")


def read_layers(path):
    layers = []
    for line in open(path):
        words = line.split("#")[0].split()
        if len(words) < 12:
            continue
        ints = lambda field: [int(v) for v in field.split(",")]
        name, n, cin, cout = words[0], int(words[1]), int(words[2]), int(words[3])
        layer = dict(name=name, n=n, cin=cin, cout=cout, spatial=ints(words[4]), kernel=ints(words[5]),
                     stride=ints(words[6]), pad=ints(words[7]), dil=ints(words[8]), groups=int(words[9]),
                     tbc=words[10] == "tbc", transposed=words[10] == "1", outpad=ints(words[11]))
        if len(layer["outpad"]) < len(layer["spatial"]):
            layer["outpad"] = [0] * len(layer["spatial"])
        layers.append(layer)
    return layers


def shapes(l):
    """x, weight and gradOutput shapes (bench_layers.h)."""
    out = []
    for i, s in enumerate(l["spatial"]):
        span = l["dil"][i] * (l["kernel"][i] - 1) + 1
        if l["transposed"]:
            out.append((s - 1) * l["stride"][i] - 2 * l["pad"][i] + span + l["outpad"][i])
        else:
            out.append((s + 2 * l["pad"][i] - span) // l["stride"][i] + 1)
    if l["tbc"]:
        return [l["spatial"][0], l["n"], l["cin"]], [l["kernel"][0], l["cin"], l["cout"]], [out[0], l["n"], l["cout"]]
    w = [l["cin"], l["cout"] // l["groups"]] if l["transposed"] else [l["cout"], l["cin"] // l["groups"]]
    return [l["n"], l["cin"]] + l["spatial"], w + l["kernel"], [l["n"], l["cout"]] + out


def gradients(l, x, w, gy):
    """(gradInput, gradWeight, gradBias) in x's dtype by PyTorch's CPU operators."""
    if l["tbc"]:
        x = x.clone().requires_grad_()
        w = w.clone().requires_grad_()
        b = torch.zeros(l["cout"], dtype=x.dtype, requires_grad=True)
        torch.conv_tbc(x, w, b, l["pad"][0]).backward(gy)
        return x.grad, w.grad, b.grad
    return torch.ops.aten.convolution_backward(gy, x, w, [l["cout"]], l["stride"], l["pad"], l["dil"],
                                               l["transposed"], l["outpad"], l["groups"], [True, True, True])


def forward(l, x, w, b):
    """The forward output (with bias b) in x's dtype by PyTorch's CPU operators."""
    if l["tbc"]:
        return torch.conv_tbc(x, w, b, l["pad"][0])
    return torch.ops.aten.convolution(x, w, b, l["stride"], l["pad"], l["dil"], l["transposed"], l["outpad"],
                                      l["groups"])


def products_per_output(l, x_shape, w_shape, gy_shape):
    """Products summed into one entry of gradInput, gradWeight, gradBias and the forward output (the
    longest, for gradInput and a transposed layer's output)."""
    taps = int(np.prod(l["kernel"]))
    if l["tbc"]:
        return l["cout"] * taps, gy_shape[0] * gy_shape[1], gy_shape[0] * gy_shape[1], l["cin"] * taps
    out_positions = int(np.prod(gy_shape[2:])) * l["n"]
    per_tap = max(1, taps // int(np.prod(l["stride"])))
    if l["transposed"]:  # gradInput is a forward convolution of gradOutput
        return (l["cout"] // l["groups"] * taps, int(np.prod(x_shape[2:])) * l["n"], out_positions,
                l["cin"] // l["groups"] * per_tap)
    return l["cout"] // l["groups"] * per_tap, out_positions, out_positions, l["cin"] // l["groups"] * taps


def error(value, truth):
    scale = truth.abs().max().item()
    return (value.double() - truth).abs().max().item() / scale if scale > 0 else 0.0


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    batch = sys.argv[2] if len(sys.argv) > 2 else "2"
    filt = sys.argv[3] if len(sys.argv) > 3 else ""
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    dump = os.path.join(build, "tests", "benchmark", "numerics_dump")
    print("| layer | products (dx, dw, db, y) | dx ours | dx torch | ratio | dw ours | dw torch | ratio | db ours | "
          "db torch | ratio | y ours | y torch | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for shapes_file in ("shapes.txt", "numerics_shapes.txt"):
        path = os.path.join(BENCH, shapes_file)
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([dump, path, out, batch, filt], check=True, stdout=subprocess.DEVNULL)
            for l in read_layers(path):
                if int(batch) > 0:
                    l["n"] = int(batch)
                file = os.path.join(out, l["name"] + ".f32")
                if not os.path.exists(file):
                    continue
                x_shape, w_shape, gy_shape = shapes(l)
                data = np.fromfile(file, dtype="<f4")
                parts, at = [], 0
                for shape in (x_shape, w_shape, gy_shape, x_shape, w_shape, [l["cout"]], [l["cout"]], gy_shape):
                    size = int(np.prod(shape))
                    parts.append(torch.from_numpy(data[at:at + size].copy()).reshape(shape))
                    at += size
                x, w, gy, ours, b = parts[0], parts[1], parts[2], parts[3:6] + parts[7:8], parts[6]
                truth = list(gradients(l, x.double(), w.double(), gy.double())) + [forward(l, x.double(), w.double(),
                                                                                          b.double())]
                anchor = list(gradients(l, x, w, gy)) + [forward(l, x, w, b)]
                cells = []
                for mine, theirs, exact in zip(ours, anchor, truth):
                    e_ours, e_torch = error(mine, exact), error(theirs, exact)
                    ratio = e_ours / e_torch if e_torch > 0 else (0.0 if e_ours == 0 else float("inf"))
                    worst = max(worst, ratio)
                    cells += ["%.2g" % e_ours, "%.2g" % e_torch, "%.2f" % ratio]
                counts = products_per_output(l, x_shape, w_shape, gy_shape)
                print("| %s | %s | %s |" % (l["name"], ", ".join(str(c) for c in counts), " | ".join(cells)), flush=True)
    print("\nlargest ratio: %.2f" % worst)


if __name__ == "__main__":
    main()
