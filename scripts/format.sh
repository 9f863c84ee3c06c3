#!/bin/sh
# Formats (or with --check, verifies) every C/C++ file of ours; examples/ holds the official
# doc samples byte for byte and is left alone.
set -eu
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.cpp' '*.h' | grep -v '^examples/')
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run -Werror $files
else
  clang-format -i $files
fi
