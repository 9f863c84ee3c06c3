#!/bin/sh
# Runs a doc sample and checks its printed results. Each expectation NAME=VALUExCOUNT means the
# sample printed exactly COUNT lines "NAME[i] is: VALUE", i = 0..COUNT-1, and nothing else for NAME;
# NAME=VALUExCOUNT+VALUExCOUNT+... gives the values of NAME's lines in print order, run by run, a
# VALUE of * taking any value (a sample that prints what is not a result).
# ACLNN_TEST_EMULATOR (cross builds) is the command that runs a target program, e.g. qemu-aarch64.
set -eu
exe="$1"
shift
# shellcheck disable=SC2086
output=$(${ACLNN_TEST_EMULATOR:-} "$exe")
status=0
for expectation in "$@"; do
  name=${expectation%%=*}
  runs=${expectation#*=}
  # (the values NAME's lines printed, one per line, in order)
  values=$(printf '%s\n' "$output" | sed -n "s/^${name}\[[0-9]*\] is: \(.*\)\$/\1/p")
  verdict=$(printf '%s\n' "$values" | awk -v runs="$runs" '
    BEGIN { n = split(runs, parts, "+"); total = 0
      for (i = 1; i <= n; ++i) {
        at = match(parts[i], /x[0-9]+$/); value[i] = substr(parts[i], 1, at - 1); count[i] = substr(parts[i], at + 1) + 0
        for (j = 0; j < count[i]; ++j) want[++total] = value[i]
      } }
    NF { ++got; if (got <= total && want[got] != "*" && want[got] != $0 && bad == "") bad = got ": " $0 " (expected " want[got] ")" }
    END { if (got != total) print "expected " total " values, got " got; else if (bad != "") print "value " bad; else print "ok" }')
  if [ "$verdict" != ok ]; then
    echo "FAIL: $name: $verdict"; status=1
  else
    echo "ok: $name = $runs"
  fi
done
exit $status
