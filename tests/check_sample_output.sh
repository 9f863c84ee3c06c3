#!/bin/sh
# Runs a doc sample and checks its printed results. Each expectation NAME=VALUExCOUNT means the
# sample printed exactly COUNT lines "NAME[i] is: VALUE", i = 0..COUNT-1, and nothing else for NAME.
# ACLNN_TEST_EMULATOR (cross builds) is the command that runs a target program, e.g. qemu-aarch64.
set -eu
exe="$1"
shift
# shellcheck disable=SC2086
output=$(${ACLNN_TEST_EMULATOR:-} "$exe")
status=0
for expectation in "$@"; do
  name=${expectation%%=*}
  rest=${expectation#*=}
  value=${rest%x*}
  count=${rest##*x}
  total=$(printf '%s\n' "$output" | grep -c "^${name}\[" || true)
  good=$(printf '%s\n' "$output" | grep -c "^${name}\[[0-9]*\] is: ${value}\$" || true)
  if [ "$total" -ne "$count" ] || [ "$good" -ne "$count" ]; then
    echo "FAIL: $name: expected $count values of $value, got $good of $total"; status=1
  else
    echo "ok: $name = $value ($count values)"
  fi
done
exit $status
