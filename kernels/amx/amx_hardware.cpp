// The tile operations on the CPU's AMX tiles (x86-64; compiled with -mamx-tile -mamx-bf16 and run
// only where amx_tiles() said kHardware: cpuid, XCR0 and the process's permission checked).
#include <immintrin.h>

#include <cstdint>
#include <limits>

#include "kernels/amx/amx.h"
#include "kernels/amx/amx_tiles.h"

namespace aclnn_cpu {
namespace {

// LDTILECFG's 64 bytes: palette 1, every tile 16 rows of 64 bytes.
struct AmxTileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

struct HardwareAmxTiles : AmxTilesAsStaged {
  HardwareAmxTiles() {
    AmxTileConfig config;
    for (int t = 0; t < 8; ++t) config.bytes_per_row[t] = 64, config.rows[t] = kAmxRows;
    _tile_loadconfig(&config);
  }
  ~HardwareAmxTiles() { _tile_release(); }
  HardwareAmxTiles(const HardwareAmxTiles&) = delete;
  HardwareAmxTiles& operator=(const HardwareAmxTiles&) = delete;

  // (the intrinsics take tile numbers as literals)
  void begin_c(float* c, int64_t ldc_bytes, bool load) {
    c_block = reinterpret_cast<char*>(c), c_stride = ldc_bytes;
    if (load) {
      _tile_loadd(0, c_block, ldc_bytes);
      _tile_loadd(1, c_block + 64, ldc_bytes);
      _tile_loadd(2, c_block + kAmxRows * ldc_bytes, ldc_bytes);
      _tile_loadd(3, c_block + kAmxRows * ldc_bytes + 64, ldc_bytes);
    } else {
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
    }
  }
  void load_ab(const void* a0, const void* a1, int64_t a_stride, const void* b0, const void* b1, int64_t b_stride,
               bool /*b_prepared*/) {
    _tile_loadd(4, a0, a_stride);
    _tile_loadd(5, a1, a_stride);
    _tile_loadd(6, b0, b_stride);
    _tile_loadd(7, b1, b_stride);
  }
  void dot() {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  void end_c() {
    _tile_stored(0, c_block, c_stride);
    _tile_stored(1, c_block + 64, c_stride);
    _tile_stored(2, c_block + kAmxRows * c_stride, c_stride);
    _tile_stored(3, c_block + kAmxRows * c_stride + 64, c_stride);
  }

  char* c_block = nullptr;  // begin_c's block
  int64_t c_stride = 0;
};

}  // namespace

ACLNN_AMX_DEFINE_PRODUCTS(hardware, HardwareAmxTiles)

}  // namespace aclnn_cpu
