#!/usr/bin/python3
"""Generates tests/data/quant_golden.txt: aclnnQuantConvolution's outputs computed independently with
NumPy (run once; CI never needs NumPy).

    /usr/bin/python3 tests/data/make_quant_golden.py          (Debian python3-numpy)
    /usr/bin/python3 tests/data/make_quant_golden.py --rate   (only the rate below, on random values)

Each case writes its inputs in full (CANN's layouts, row-major), its dtypes as aclDataType numbers
(FLOAT 0, FLOAT16 1, INT8 2, INT32 3, INT64 9, UINT64 10, BF16 27) and its outputs' bits:

  acc   = the convolution's sums in int64 (x padded with offsetx on Ascend 950's path: an INT64/UINT64
          scale or a 2-D input; with 0 otherwise), wrapped to int32;
  out   = round16(f32(f32(acc) * scale) + bias)   (float bias)   or   round16(f32(f32(acc + bias) * scale))
          (INT32 bias), each step in float32 rounded to nearest even (NumPy's float32 arithmetic);
  exact = round16(acc * scale + bias) (or (acc + bias) * scale) from the exact rational value, rounded once.

`out_bits` is what the library must give; `exact_bits` is there to count where the float32 order differs
from the correctly rounded value (the header line gives the count). The last case, `float_order_matters`,
is built so that it differs in every output: a depthwise 1x1 layer whose channels' values were searched for
(each output's multiply and add rounded apart gives other FLOAT16 bits than one fused multiply-add, and than
the correctly rounded value), so that a build that fuses the float steps fails the test.
"""
import fractions
import os
import random

import numpy as np

FLOAT, FLOAT16, INT8, INT32, INT64, UINT64, BF16 = 0, 1, 2, 3, 9, 10, 27

# name, N, Cin, Cout, input spatial size, kernel, stride, padding (per axis, or (before, after) per axis),
# dilation, groups, offsetx, scale dtype, bias dtype, output dtype
CASES = [
    ("a2_3d_bf16_float_bias", 2, 3, 4, (3, 5, 4), (2, 3, 3), (1, 2, 1), (1, 1, 0), (1, 2, 1), 1, 0, FLOAT, FLOAT, BF16),
    ("a2_3d_fp16_fp16_bias", 1, 5, 3, (4, 4, 6), (3, 1, 2), (2, 1, 1), (1, 0, 2), (1, 1, 1), 1, 7, FLOAT, FLOAT16,
     FLOAT16),
    ("a2_3d_bf16_bf16_bias", 1, 2, 6, (2, 6, 5), (1, 3, 3), (1, 1, 2), (0, 2, 1), (1, 2, 1), 1, 0, FLOAT, BF16, BF16),
    ("a2_3d_fp16_float_bias_groups", 2, 6, 4, (3, 4, 4), (2, 2, 3), (1, 1, 1), (0, 1, 1), (2, 1, 1), 2, 0, FLOAT,
     FLOAT, FLOAT16),
    ("v950_2d_int32_bias_int64_scale", 1, 4, 6, (7, 6), (3, 3), (1, 2), (1, 2, 0, 1), (1, 1), 2, 3, INT64, INT32,
     FLOAT16),
    ("v950_3d_uint64_scale_int32_bias", 2, 4, 4, (3, 5, 5), (2, 3, 2), (1, 1, 2), (1, 0, 2, 1, 0, 1), (1, 1, 1), 4,
     -5, UINT64, INT32, FLOAT16),
    ("v950_2d_float_scale_bf16", 1, 9, 3, (6, 8), (3, 2), (2, 1), (2, 1), (1, 3), 3, -128, FLOAT, FLOAT, BF16),
    ("v950_3d_int64_scale_float_bias", 1, 3, 5, (4, 3, 5), (1, 2, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, 127, INT64,
     FLOAT, FLOAT16),
]


def f32_bits(value):
    return int(np.array([value], dtype=np.float32).view(np.uint32)[0])


def bits_f32(bits):
    return np.array([bits], dtype=np.uint32).view(np.float32)[0]


def round16(value, dtype):
    """The bits of float32 `value` rounded to FLOAT16 or BF16, to nearest even."""
    if dtype == FLOAT16:
        return int(np.array([value], dtype=np.float32).astype(np.float16).view(np.uint16)[0])
    bits = f32_bits(value)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def exact16(value, dtype):
    """The bits of the rational `value` correctly rounded to FLOAT16 or BF16 (nearest even), finite range."""
    if value == 0:
        return 0
    mantissa_bits, min_exp = (10, -14) if dtype == FLOAT16 else (7, -126)
    sign = 0x8000 if value < 0 else 0
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    while fractions.Fraction(2) ** exponent > magnitude:
        exponent -= 1
    while fractions.Fraction(2) ** (exponent + 1) <= magnitude:
        exponent += 1
    exponent = max(exponent, min_exp)
    quantum = fractions.Fraction(2) ** (exponent - mantissa_bits)
    scaled = magnitude / quantum
    units = scaled.numerator // scaled.denominator
    rest = scaled - units
    if rest > fractions.Fraction(1, 2) or (rest == fractions.Fraction(1, 2) and units % 2 == 1):
        units += 1
    # units * quantum, re-encoded: let the float32/float16 conversion of an exactly representable value do it
    exact = float(units * quantum)
    if dtype == FLOAT16:
        return sign | int(np.array([exact], dtype=np.float16).view(np.uint16)[0])
    return sign | (f32_bits(np.float32(exact)) >> 16)


def conv_sums(x, w, spatial, kernel, stride, pads, dilation, groups, pad_value):
    """int64 sums of the convolution, x padded with pad_value."""
    n, cin = x.shape[:2]
    cout = w.shape[0]
    padded = np.pad(x.astype(np.int64), [(0, 0), (0, 0)] + list(pads), constant_values=pad_value)
    out_size = [(spatial[i] + pads[i][0] + pads[i][1] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
                for i in range(len(spatial))]
    assert min(out_size) > 0, out_size
    cg, og = cin // groups, cout // groups
    out = np.zeros([n, cout] + out_size, dtype=np.int64)
    for index in np.ndindex(*kernel):
        window = tuple(slice(index[i] * dilation[i], index[i] * dilation[i] + stride[i] * (out_size[i] - 1) + 1,
                             stride[i]) for i in range(len(spatial)))
        for g in range(groups):
            xs = padded[(slice(None), slice(g * cg, (g + 1) * cg)) + window]  # (n, cg, out...)
            ws = w[(slice(g * og, (g + 1) * og), slice(None)) + index].astype(np.int64)  # (og, cg)
            out[:, g * og:(g + 1) * og] += np.einsum("oc,nc...->no...", ws, xs)
    return out, out_size


def wrap32(value):
    return int(np.array([value], dtype=np.int64).astype(np.uint32).astype(np.int32)[0])


def packed_scale(packed):
    return bits_f32(packed & 0xFFFFE000)


def fused16(acc, s, b, dtype):
    """round16 of float32(acc * s + b) rounded once (a fused multiply-add)."""
    exact = fractions.Fraction(acc) * fractions.Fraction(float(s)) + fractions.Fraction(float(b))
    return round16(np.float32(float(exact)) if abs(float(exact)) < 3e38 else np.float32(float(exact)), dtype)


def order_sensitive_channels(count):
    """(x, w, scale, bias) per channel where the float32 steps rounded apart differ from the fused and the
    correctly rounded FLOAT16 value."""
    rng = random.Random(1993)
    found = []
    while len(found) < count:
        x, w = rng.randint(-128, 127), rng.randint(-128, 127)
        s, b = np.float32(rng.uniform(1e-3, 2e-2)), np.float32(rng.uniform(-4, 4))
        apart = round16(np.float32(np.float32(np.float32(x * w) * s) + b), FLOAT16)
        exact = exact16(fractions.Fraction(x * w) * fractions.Fraction(float(s)) + fractions.Fraction(float(b)),
                        FLOAT16)
        if apart != exact and apart != fused16(x * w, s, b, FLOAT16):
            found.append((x, w, float(s), float(b)))
    return found


def main():
    rng = random.Random(65)
    lines, mismatches, total = [], 0, 0
    channels = order_sensitive_channels(8)
    order_case = ("float_order_matters", 1, 8, 8, (1, 1), (1, 1), (1, 1), (0, 0), (1, 1), 8, 0, FLOAT, FLOAT, FLOAT16)
    for (name, n, cin, cout, spatial, kernel, stride, padding, dilation, groups, offsetx, scale_dtype, bias_dtype,
         out_dtype) in CASES + [order_case]:
        dims = len(spatial)
        pads = [(p, p) for p in padding] if len(padding) == dims else \
            [(padding[2 * i], padding[2 * i + 1]) for i in range(dims)]
        takes_950 = scale_dtype in (INT64, UINT64) or dims == 2
        x = np.array([rng.randint(-128, 127) for _ in range(n * cin * int(np.prod(spatial)))],
                     dtype=np.int8).reshape([n, cin] + list(spatial))
        w = np.array([rng.randint(-128, 127) for _ in range(cout * (cin // groups) * int(np.prod(kernel)))],
                     dtype=np.int8).reshape([cout, cin // groups] + list(kernel))
        # scales around 1e-4 .. 1e-2 (a float32's full mantissa; the packed ones carry flag bits above 31)
        scale_floats = [np.float32(rng.uniform(1e-4, 1e-2) * rng.choice([1, -1])) for _ in range(cout)]
        if name == order_case[0]:
            x = np.array([c[0] for c in channels], dtype=np.int8).reshape([1, 8, 1, 1])
            w = np.array([c[1] for c in channels], dtype=np.int8).reshape([8, 1, 1, 1])
            scale_floats = [np.float32(c[2]) for c in channels]
        if scale_dtype == FLOAT:
            scale_stored = [float(s) for s in scale_floats]
            scale_used = scale_floats
        else:
            scale_stored = [f32_bits(s) | (1 << 46) | ((rng.randint(0, 511)) << 37) for s in scale_floats]
            scale_used = [packed_scale(s) for s in scale_stored]
        if bias_dtype == INT32:
            bias = [rng.randint(-3000, 3000) for _ in range(cout)]
        elif name == order_case[0]:
            bias = [c[3] for c in channels]
        elif bias_dtype == FLOAT:
            bias = [float(np.float32(rng.uniform(-2, 2))) for _ in range(cout)]
        else:  # FLOAT16 / BF16 values exact in both: multiples of 1/64 in [-2, 2]
            bias = [rng.randint(-128, 128) / 64.0 for _ in range(cout)]
        sums, out_size = conv_sums(x, w, spatial, kernel, stride, pads, dilation, groups, offsetx if takes_950 else 0)
        out_bits, exact_bits = [], []
        for index in np.ndindex(*sums.shape):
            o = index[1]
            acc = wrap32(sums[index])
            s = scale_used[o]
            if bias_dtype == INT32:
                acc_b = wrap32(acc + bias[o])
                value = np.float32(np.float32(acc_b) * s)
                exact = fractions.Fraction(acc_b) * fractions.Fraction(float(s))
            else:
                value = np.float32(np.float32(np.float32(acc) * s) + np.float32(bias[o]))
                exact = fractions.Fraction(acc) * fractions.Fraction(float(s)) + fractions.Fraction(bias[o])
            out_bits.append(round16(value, out_dtype))
            exact_bits.append(exact16(exact, out_dtype))
        mismatches += sum(a != b for a, b in zip(out_bits, exact_bits))
        total += len(out_bits)
        lines.append(f"case {name}")
        lines.append(f"batch {n}")
        lines.append(f"in_channels {cin}")
        lines.append(f"out_channels {cout}")
        lines.append("in_size " + " ".join(map(str, spatial)))
        lines.append("kernel " + " ".join(map(str, kernel)))
        lines.append("stride " + " ".join(map(str, stride)))
        lines.append("padding " + " ".join(map(str, padding)))
        lines.append("dilation " + " ".join(map(str, dilation)))
        lines.append(f"groups {groups}")
        lines.append(f"offsetx {offsetx}")
        lines.append(f"dtypes {scale_dtype} {bias_dtype} {out_dtype}")
        lines.append("out_size " + " ".join(map(str, out_size)))
        lines.append("x " + " ".join(map(str, x.flatten().tolist())))
        lines.append("weight " + " ".join(map(str, w.flatten().tolist())))
        lines.append("scale " + " ".join(repr(v) if isinstance(v, float) else str(v) for v in scale_stored))
        lines.append("bias " + " ".join(map(repr, bias)))
        lines.append("out_bits " + " ".join(map(str, out_bits)))
        lines.append("exact_bits " + " ".join(map(str, exact_bits)))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quant_golden.txt")
    with open(path, "w") as f:
        f.write(f"# Generated by make_quant_golden.py with NumPy {np.__version__}. Do not edit.\n")
        f.write(f"# The float32 order differs from the correctly rounded output in {mismatches} of {total} outputs.\n")
        f.write("\n".join(lines) + "\n")
    print(f"{path}: {len(CASES) + 1} cases, {total} outputs, {mismatches} differ from the correctly rounded value")


def rate(samples=100000):
    """How often the float32 order differs from the correctly rounded value, on random sums (|acc| < 2^20),
    scales (1e-4 .. 1e-2) and float biases (-2 .. 2), per output dtype and bias kind."""
    rng = random.Random(7)
    for out_dtype, out_name in ((FLOAT16, "FLOAT16"), (BF16, "BF16")):
        for integer_bias in (False, True):
            differ = 0
            for _ in range(samples):
                acc = rng.randint(-(1 << 20), 1 << 20)
                s = np.float32(rng.uniform(1e-4, 1e-2))
                if integer_bias:
                    acc_b = acc + rng.randint(-3000, 3000)
                    value = np.float32(np.float32(acc_b) * s)
                    exact = fractions.Fraction(acc_b) * fractions.Fraction(float(s))
                else:
                    b = np.float32(rng.uniform(-2, 2))
                    value = np.float32(np.float32(np.float32(acc) * s) + b)
                    exact = fractions.Fraction(acc) * fractions.Fraction(float(s)) + fractions.Fraction(float(b))
                differ += round16(value, out_dtype) != exact16(exact, out_dtype)
            kind = "INT32 bias" if integer_bias else "float bias"
            print(f"{out_name} output, {kind}: {differ} of {samples} differ from the correctly rounded value")


if __name__ == "__main__":
    import sys
    if "--rate" in sys.argv:
        rate()
    else:
        main()
