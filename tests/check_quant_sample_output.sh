#!/bin/sh
# Runs aclnnQuantConvolution's doc sample and checks every printed result. Its call: input and weight all
# 1 ([2,2,32,32,32] and [2,2,3,3,3]), padding 1, scale 1, bias 1, BF16 output printed as raw bits. Output
# (n, c, d, h, w) is 1 + 2 * the kernel window's in-image count, 2 or 3 per axis (2 at a face): 17, 25, 37
# or 55, whose BF16 bits are 16776, 16840, 16916 and 16988.
# ACLNN_TEST_EMULATOR (cross builds) is the command that runs a target program, e.g. qemu-aarch64.
set -eu
# (the output captured first: a sample that fails, or a sanitizer's report at exit, fails the check)
# shellcheck disable=SC2086
output=$(${ACLNN_TEST_EMULATOR:-} "$1")
printf '%s\n' "$output" | awk '
  BEGIN { bits[17] = 16776; bits[25] = 16840; bits[37] = 16916; bits[55] = 16988 }
  function inside(at) { return at == 0 || at == 31 ? 2 : 3 }
  /^result\[[0-9]+\] is: / {
    i = substr($1, 8, length($1) - 8) + 0
    want = bits[1 + 2 * inside(int(i / 1024) % 32) * inside(int(i / 32) % 32) * inside(i % 32)]
    if (i != count) { print "FAIL: result index " i " out of order (expected " count ")"; bad = 1; exit }
    if ($3 != want && bad == 0) { print "FAIL: result[" i "] is " $3 " (expected " want ")"; bad = 1 }
    ++count
  }
  END {
    if (count != 131072) { print "FAIL: " count " results printed (expected 131072)"; exit 1 }
    if (bad) exit 1
    print "ok: 131072 results"
  }'
