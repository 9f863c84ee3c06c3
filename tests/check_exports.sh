#!/bin/sh
# The shared library exports exactly the functions our public headers declare: nothing more
# (no C++ internals), nothing less (no declared function missing).
set -eu
lib="$1"
include_dir="$2"
exported=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort)
declared=$(cat "$include_dir"/acl/*.h "$include_dir"/aclnn/*.h "$include_dir"/aclnnop/*.h | grep -v '#define' | tr '\n' ' ' |
  grep -o -E '(ACL_FUNC_VISIBILITY|ACLNN_API)[^;{]*\(' | grep -o -E '[A-Za-z0-9_]+ *\($' | tr -d ' (' | sort)
extra=$(printf '%s\n' "$exported" | comm -23 - "$(printf '%s\n' "$declared" > /tmp/declared.$$; echo /tmp/declared.$$)")
missing=$(printf '%s\n' "$exported" | comm -13 - /tmp/declared.$$)
rm -f /tmp/declared.$$
status=0
if [ -n "$extra" ]; then echo "exported but not declared:"; echo "$extra"; status=1; fi
if [ -n "$missing" ]; then echo "declared but not exported:"; echo "$missing"; status=1; fi
echo "exported C API functions: $(printf '%s\n' "$exported" | wc -l)"
exit $status
