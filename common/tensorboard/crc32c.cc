#include "common/tensorboard/crc32c.h"

#include <array>

namespace lmtrain::tensorboard {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78;  // 0x1EDC6F41 bit-reversed.

// The byte-at-a-time table: entry i is the CRC register after shifting byte i through.
constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

}  // namespace

uint32_t ExtendCrc32c(uint32_t crc, std::string_view more) {
  uint32_t reg = ~crc;
  for (unsigned char byte : more) reg = kTable[(reg ^ byte) & 0xFF] ^ (reg >> 8);
  return ~reg;
}

uint32_t Crc32c(std::string_view data) { return ExtendCrc32c(0, data); }

uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace lmtrain::tensorboard
