#!/bin/sh
# Fails if the shared library exports any defined symbol that is not part of the C API (acl*).
set -eu
lib="$1"
bad=$(nm -D --defined-only "$lib" | awk '{print $NF}' | grep -v -E '^(acl|aclnn|aclrt)[A-Za-z0-9_]*$' || true)
if [ -n "$bad" ]; then
  echo "unexpected exported symbols:"; echo "$bad"; exit 1
fi
count=$(nm -D --defined-only "$lib" | grep -c ' T acl' || true)
echo "exported C API functions: $count"
[ "$count" -gt 50 ]
