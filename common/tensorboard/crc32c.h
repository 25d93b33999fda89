// CRC-32C (Castagnoli: iSCSI, reflected polynomial 0x82F63B78) and the "masked" form that
// TFRecord files store next to each length and payload. Torch-free.
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace lmtrain::tensorboard {

// CRC-32C of `data` (initial value and final xor 0xFFFFFFFF): Crc32c("123456789") is
// 0xE3069283.
uint32_t Crc32c(std::string_view data);

// Continues `crc` (a Crc32c result) over `more`: Extend(Crc32c(a), b) == Crc32c(a + b).
uint32_t ExtendCrc32c(uint32_t crc, std::string_view more);

// TFRecord's masking, so that a CRC stored inside CRC'ed data does not weaken the check:
// ((crc >> 15) | (crc << 17)) + 0xa282ead8, modulo 2^32.
uint32_t MaskCrc32c(uint32_t crc);

}  // namespace lmtrain::tensorboard
