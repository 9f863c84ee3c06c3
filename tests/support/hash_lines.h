// What the bit-identity tests (test_suite_hashes, test_deform_hashes) share: FNV-1a hashes of result bytes,
// the committed lines of a hash file by their first three words ("path layer dtype"), the instruction
// sets this build and CPU run, and the dtypes' names in those lines.
#pragma once

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "acl/acl.h"

namespace testing_support {

// FNV-1a over `count` bytes, as 16 hex digits.
inline std::string fnv1a_hex(const unsigned char* bytes, size_t count) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < count; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// A hash file's lines (# comments skipped) by "path layer dtype".
inline std::map<std::string, std::string> committed_hash_lines(const char* file) {
  std::ifstream in(file);
  std::map<std::string, std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string path, layer, dtype;
    words >> path >> layer >> dtype;
    lines[path + " " + layer + " " + dtype] = line;
  }
  return lines;
}

// The instruction sets this build and CPU run (ACLNN_CONVBWD_ISA values), or the one ACLNN_CONVBWD_ISA
// names; {""} where the build has one path (aarch64).
inline std::vector<std::string> runnable_isas() {
  if (const char* isa = std::getenv("ACLNN_CONVBWD_ISA")) return {isa};
#if defined(__x86_64__)
  std::vector<std::string> out = {"generic"};
  __builtin_cpu_init();
  // (the vector kits also need F16C, as the library's detection does)
  unsigned a = 0, b = 0, c = 0, d = 0;  // (cpuid leaf 1 ECX: F16C)
  const bool f16c = __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
  const bool vectors = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  if (vectors) out.push_back("avx2");
  if (vectors && __builtin_cpu_supports("avx512f")) out.push_back("avx512");
  return out;
#else
  return {""};
#endif
}

// The path word of a line: x86-64's generic path multiplies and adds apart (its own float bits); every
// other path fuses them ("fma").
inline const char* path_word(const std::string& isa) { return isa == "generic" ? "x86-generic" : "fma"; }

inline const char* dtype_name(aclDataType dtype) {
  return dtype == ACL_FLOAT ? "float" : dtype == ACL_FLOAT16 ? "float16" : "bf16";
}

}  // namespace testing_support
