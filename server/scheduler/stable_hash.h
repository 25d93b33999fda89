// SeededHash: the scheduler's tie-break key. A 64-bit hash of a string mixed with a seed that is
// the same on every platform, build and run (FNV-1a, then splitmix64), so that ties between
// equal jobs, users or workers are broken by the seed and the names alone, never by container
// order or addresses. Not for security or hash tables.
#pragma once

#include <cstdint>
#include <string>

namespace lmtrain::scheduler::internal {

uint64_t SeededHash(uint64_t seed, const std::string& text);

}  // namespace lmtrain::scheduler::internal
